# The two commands a new user needs are `make up` and `make test`.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

BIN        := $(CURDIR)/bin
GO         ?= go
GOFLAGS    ?=
# Our own binaries: every cmd/<name> (pause, the image's sandbox, is built beside them).
# Derived from the folder so that a new command cannot be left out of the build.
BINARIES   := $(filter-out pause,$(notdir $(wildcard $(CURDIR)/cmd/*)))
# Arguments passed to `karmada-local up` by `make up`, e.g. UP_ARGS="--members 5".
UP_ARGS    ?=
# Tests to run (go test -run), e.g. `make test-e2e RUN=TestSeedsExample`; empty: all.
RUN        ?=
# Images (make images): name, tag and the labels they carry. The default tag
# is the chart's appVersion, the one the chart installs by default.
IMAGE_REGISTRY    ?= docker.io/karmada-go
IMAGE_TAG         ?= $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$$/\1/p' charts/karmada/Chart.yaml)
IMAGE_DIR         ?= $(CURDIR)/_output/images
GIT_REVISION      := $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# The version our binaries report (--version) and their images carry.
VERSION           ?= $(IMAGE_TAG)
VERSION_PKG       := github.com/karmada-go/karmada/internal/version
LDFLAGS           := -s -w -X $(VERSION_PKG).gitVersion=$(VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_REVISION) \
	-X $(VERSION_PKG).buildDate=$(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)

.PHONY: help
help: ## Show this help
	@echo "Usage: make <target>"
	@echo
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: upstream ## Build every binary into bin/ (upstream ones only when their pins changed)
	@# Static binaries: the same file runs here and in an image (make images).
	CGO_ENABLED=0 $(GO) build $(GOFLAGS) -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ $(addprefix ./cmd/,$(BINARIES) pause)
	@# The same binary is the kubectl plugin: `kubectl karmada join ...`.
	ln -sf karmadactl $(BIN)/kubectl-karmada

.PHONY: images
images: build upstream-host ## Build an OCI image of every binary we ship (and of the upstream ones the chart runs) into _output/images, without Docker
	$(GO) run ./hack/images --bin-dir $(BIN) --upstream-bin-dir $(CURDIR)/bin --output $(IMAGE_DIR) --registry $(IMAGE_REGISTRY) --tag $(IMAGE_TAG) \
		--version $(VERSION) --revision $(GIT_REVISION) --source-date-epoch $(SOURCE_DATE_EPOCH)

.PHONY: upstream
upstream: ## Build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd, kwok and metrics-server from their pinned Go modules
	@hack/build-kube.sh fleet

.PHONY: upstream-host
upstream-host: ## Build what the host cluster and the images add: kubelet, kube-proxy and CoreDNS, from their pinned Go modules
	@hack/build-kube.sh host

$(BIN)/controller-gen: hack/tools/go.mod
	cd hack/tools && $(GO) build -o $(BIN)/controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen

# The helm CLI, from the Helm module the project pins (the host lane installs
# the chart with it).
$(BIN)/helm: hack/tools/go.mod
	cd hack/tools && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$$($(GO) list -m -f '{{.Version}}' helm.sh/helm/v3)" -o $(BIN)/helm helm.sh/helm/v3/cmd/helm

$(BIN)/openapi-gen: hack/tools/go.mod
	cd hack/tools && $(GO) build -o $(BIN)/openapi-gen k8s.io/kube-openapi/cmd/openapi-gen

$(BIN)/staticcheck: hack/tools/go.mod
	cd hack/tools && $(GO) build -o $(BIN)/staticcheck honnef.co/go/tools/cmd/staticcheck

.PHONY: generate
generate: $(BIN)/controller-gen $(BIN)/openapi-gen ## Generate deepcopy functions, CRDs and the aggregated API server's OpenAPI from api/
	@hack/update-codegen.sh

.PHONY: verify
verify: $(BIN)/controller-gen $(BIN)/staticcheck ## Fail when generated files, gofmt, go vet or staticcheck are not clean
	@hack/verify-codegen.sh
	@hack/verify-gofmt.sh
	@# One pass over everything: each lane's tag only adds its own package's files.
	$(GO) vet -tags e2e,hoste2e,hae2e ./...
	$(BIN)/staticcheck -tags e2e,hoste2e,hae2e ./...

.PHONY: lint
lint: verify ## Alias of verify

.PHONY: test
test: build verify test-unit test-e2e test-ha test-host ## Run every test: unit and integration (real apiserver), e2e (a real fleet), the HA lane (chaos on an HA fleet), then the host lane (a real host cluster)

.PHONY: test-unit
# -parallel 4: the integration tests mostly wait on their API servers and
# controllers; four at a time on 2 cores took 243 s where two took 322 s.
test-unit: build ha-deps ## Unit and integration tests (integration tests use bin/ as envtest assets; the --ha plan's test needs haproxy)
	KUBEBUILDER_ASSETS=$(BIN) $(GO) test $(GOFLAGS) -count=1 -parallel 4 $(if $(RUN),-run '$(RUN)') ./...

# The build TestUpgradeInPlace upgrades a fleet from: the last commit before
# issue 42 (in-place upgrades).
UPGRADE_FROM     ?= 94c0e3ee0a9a3f6784b8adbd92fd2d203b997c5a
UPGRADE_FROM_BIN ?= $(CURDIR)/_output/upgrade-from/bin

.PHONY: upgrade-from
upgrade-from: ## Build our binaries at $(UPGRADE_FROM) into _output/upgrade-from/bin (the e2e upgrade test's starting point)
	@hack/build-upgrade-from.sh $(UPGRADE_FROM) $(UPGRADE_FROM_BIN) $(BIN)

.PHONY: test-e2e
# -parallel 4: the tests marked quiet (see test/e2e) mostly wait; they run
# together after the others.
test-e2e: build upgrade-from ## End-to-end tests against one fleet started for the run
	KARMADA_BIN_DIR=$(BIN) KARMADA_UPGRADE_FROM_BIN_DIR=$(UPGRADE_FROM_BIN) $(GO) test $(GOFLAGS) -count=1 -tags e2e -timeout 30m -parallel 4 -v $(if $(RUN),-run '$(RUN)') ./test/e2e/...

.PHONY: test-ha
test-ha: build ha-deps ## HA lane: chaos tests on one highly available fleet (karmada-local up --ha)
	KARMADA_BIN_DIR=$(BIN) $(GO) test $(GOFLAGS) -count=1 -tags hae2e -timeout 30m -v $(if $(RUN),-run '$(RUN)') ./test/hae2e/...

.PHONY: ha-deps
ha-deps: ## Install the Debian package karmada-local up --ha needs (haproxy)
	@hack/install-ha-deps.sh

# The host lane's own directories, apart from a developer's host cluster.
HOST_E2E_DIR ?= $(CURDIR)/_output/e2e-host

.PHONY: test-host
test-host: build host-deps images $(BIN)/helm ## Host lane (root): a real host cluster, the chart installed with helm, members joined, the example, helm upgrade, helm uninstall
	KARMADA_BIN_DIR=$(BIN) KARMADA_IMAGE_DIR=$(IMAGE_DIR) KARMADA_E2E_HOST_DIR=$(HOST_E2E_DIR) \
		$(GO) test $(GOFLAGS) -count=1 -tags hoste2e -timeout 40m -v $(if $(RUN),-run '$(RUN)') ./test/hoste2e/...

.PHONY: host-deps
host-deps: ## Install the Debian packages the host cluster needs (containerd, runc, CNI plugins, iptables)
	@hack/install-host-deps.sh

.PHONY: host-up
host-up: build host-deps images ## Start a real single-node host cluster (karmada-local host up; root)
	$(BIN)/karmada-local host up --images $(IMAGE_DIR)

.PHONY: host-down
host-down: ## Stop the host cluster (karmada-local host down)
	@if [ -x $(BIN)/karmada-local ]; then $(BIN)/karmada-local host down; else echo "bin/karmada-local is not built: nothing to stop"; fi

.PHONY: bench
bench: ## Benchmarks
	$(GO) test $(GOFLAGS) -run '^$$' -bench . -benchmem ./...

.PHONY: up
up: build ## Build what is missing, then start the local fleet (karmada-local up)
	$(BIN)/karmada-local up $(UP_ARGS)

.PHONY: down
down: ## Stop the local fleet (karmada-local down)
	@if [ -x $(BIN)/karmada-local ]; then $(BIN)/karmada-local down; else echo "bin/karmada-local is not built: nothing to stop"; fi

.PHONY: status
status: ## Show the local fleet's components (karmada-local status)
	$(BIN)/karmada-local status

.PHONY: clean
clean: ## Remove our binaries (keeps the upstream ones, which are slow to build)
	rm -f $(addprefix $(BIN)/,$(BINARIES)) $(BIN)/kubectl-karmada
