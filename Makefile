# kiln's tasks. `make help` lists them.
GOLANGCI_LINT_VERSION := v2.12.1
GOBIN := $(shell go env GOPATH)/bin
GOLANGCI_LINT := $(GOBIN)/golangci-lint

.DEFAULT_GOAL := help
# What the tests run for real, from Debian: the training frameworks, the
# browser the web UI is tested in, and what pip needs to install the
# Python SDK offline (venv, pip, setuptools, wheel), and the type checkers
# the SDK's examples are checked with (mypy; npm installs pyright).
DEB_PACKAGES := python3 python3-pytest python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-torch openmpi-bin python3-mpi4py python3-xgboost chromium wrk strace iproute2 postgresql mypy python3-yaml nodejs npm

.PHONY: help build example fedavg test pytest bench chaos lint fmt generate verify tools deps k8s-up k8s-down fuzz

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/kiln
	go build -o bin/kiln ./cmd/kiln

example: build ## run the example pipeline locally, on the embedded defaults
	bin/kiln run examples/pipeline.yaml

fedavg: build ## federated averaging with PyTorch across three kiln servers it starts on this machine
	examples/federated/fedavg-demo.sh

# make test fuzzes for a number of executions, not a time: Go 1.26's fuzz
# coordinator can fail a target with "context deadline exceeded" when a
# -fuzztime duration ends while a worker is busy (go.dev/issue/75804,
# fixed in Go 1.27); a count has no deadline to race.
test: deps k8s-up ## run every test, race detector on (starts the test cluster if it is not up), the Python SDK's, then each fuzz target briefly
	KILN_KUBECONFIG=$(CURDIR)/.k8s/kubeconfig KILN_REQUIRE_K8S=1 go test -race -shuffle=on -timeout 30m ./...
	$(MAKE) pytest
	$(MAKE) fuzz FUZZTIME=5000x

# Debian's Python, which has the frameworks the training tests run.
pytest: build deps ## run the Python SDK's tests (sdk/python) against bin/kiln
	cd sdk/python && KILN_BIN=$(CURDIR)/bin/kiln /usr/bin/python3 -m pytest -q -p no:cacheprovider tests

FUZZTIME ?= 10m
fuzz: ## run each fuzz target for FUZZTIME (default 10m, or a count such as 20000x): the spec reader, the quantity parser, the submit handler
	go test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) ./internal/workflow
	go test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/resource
	go test -run '^$$' -fuzz '^FuzzSubmit$$' -fuzztime $(FUZZTIME) ./internal/server

# KILN_KUBECONFIG: a cluster already up (k8s-up is then skipped); BENCH: the
# bench's flags (BENCH="-only kube"). The kube group also times Kubeflow
# training-operator, built from its module by hack/training-operator.sh.
# The dagu group runs the same DAGs through dagu, built from its source by
# hack/dagu.sh (DAGU_SRC: a clone of it, where GitHub cannot be reached);
# where it cannot be built, the table has no dagu rows and says why above.
BENCH_KUBECONFIG = $(or $(KILN_KUBECONFIG),$(CURDIR)/.k8s/kubeconfig)
bench: build deps $(if $(KILN_KUBECONFIG),,k8s-up) ## print the benchmark table (kiln against raw process starts, same run)
	crds=$$(hack/training-operator.sh) && \
	{ dagu=$$(hack/dagu.sh) || { echo "bench: dagu not built (see above): no dagu rows" >&2; dagu=; }; } && \
	go run ./test/bench -kiln bin/kiln -kubeconfig $(BENCH_KUBECONFIG) \
		-training-operator .k8s/bin/training-operator.v1 -training-operator-crds "$$crds" -dagu "$$dagu" $(BENCH)

# CHAOS_SCENARIOS: how many scenarios the lifecycle model test plays
# (about 4 s each); CHAOS_SEED: the first seed (a new one each time by default).
CHAOS_SCENARIOS ?= 2000
CHAOS_SEED ?= $(shell date +%s)
chaos: deps ## the lifecycle model test over CHAOS_SCENARIOS generated scenarios, then the full replica chaos test: 3 replicas on one PostgreSQL, 200 runs, the leader killed 50 times and paused past its lease 3 times
	KILN_MODEL_SCENARIOS=$(CHAOS_SCENARIOS) KILN_MODEL_BASE=$(CHAOS_SEED) KILN_MODEL_KEEPGOING=1 \
		go test -count=1 -run 'TestLifecycleModel$$' -timeout 0 ./test/e2e/
	KILN_REQUIRE_PG=1 KILN_CHAOS_RUNS=200 KILN_CHAOS_KILLS=50 KILN_CHAOS_STOPS=3 KILN_CHAOS_REPORT=$(CURDIR)/chaos.txt \
		go test -count=1 -v -run 'TestReplicasChaos$$' -timeout 90m ./test/e2e/
	@cat chaos.txt

lint: tools ## golangci-lint run
	$(GOLANGCI_LINT) run ./...

fmt: tools ## golangci-lint fmt (gofumpt + gci)
	$(GOLANGCI_LINT) fmt ./...

generate: ## go generate ./... (docs/errors.md from the code registry)
	go generate ./...

# -e: a test-only dependency of modernc.org/sqlite is not on the module proxy.
verify: tools generate ## go mod tidy, generate and fmt; fail if anything changed
	go mod tidy -e
	$(GOLANGCI_LINT) fmt ./...
	git diff --exit-code

k8s-up: ## start a real control plane with 4 fake nodes (etcd, kube-* built from k8s.io/kubernetes, kwok); .k8s/kubeconfig
	@command -v etcd > /dev/null && command -v openssl > /dev/null && command -v curl > /dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends etcd-server openssl curl ca-certificates; }
	hack/k8s-up.sh
	hack/s3-up.sh

k8s-down: ## stop the control plane k8s-up started
	hack/k8s-down.sh
	hack/s3-down.sh

deps: ## install the Debian packages the tests run (frameworks, chromium, postgresql), if missing
	@/usr/bin/python3 -c "import torch, mpi4py, xgboost, pytest, setuptools, wheel, mypy, yaml" 2>/dev/null && command -v npm >/dev/null && dpkg-query -W python3-venv python3-pip >/dev/null 2>&1 && command -v mpirun >/dev/null && command -v chromium >/dev/null && command -v wrk >/dev/null && command -v strace >/dev/null && command -v ip >/dev/null && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PACKAGES); }
	@test -x sdk/python/typecheck/node_modules/.bin/pyright || (cd sdk/python/typecheck && npm ci --no-audit --no-fund)

tools: ## install the pinned Go tools
	@$(GOLANGCI_LINT) version 2>/dev/null | grep -q "version $(GOLANGCI_LINT_VERSION:v%=%) " || \
		go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
