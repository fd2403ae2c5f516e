#!/usr/bin/env bash
# Fails when any Go file is not gofmt-formatted.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bad=$(cd "$root" && gofmt -l $(git ls-files -co --exclude-standard '*.go'))
if [ -n "$bad" ]; then
  echo "gofmt would change these files (run gofmt -w):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "gofmt: clean"
