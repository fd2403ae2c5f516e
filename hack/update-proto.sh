#!/usr/bin/env bash
# Regenerates karmada-scheduler-estimator's gRPC code from
# internal/estimator/{pb,service}/*.proto with buf (which compiles protos in
# Go: no protoc needed) and the Go plugins, all built from the module proxy
# at pinned versions. The generated files are committed: building the
# project does not need these tools.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GOBIN="$root/bin" go install github.com/bufbuild/buf/cmd/buf@v1.75.0
# The same version as google.golang.org/protobuf in go.mod.
GOBIN="$root/bin" go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.5
GOBIN="$root/bin" go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
bin/buf generate --template hack/buf.gen.yaml --path internal/estimator/pb --path internal/estimator/service .
