# kiln's tasks. `make help` lists them.
GOLANGCI_LINT_VERSION := v2.12.1
GOBIN := $(shell go env GOPATH)/bin
GOLANGCI_LINT := $(GOBIN)/golangci-lint

.DEFAULT_GOAL := help
# What the tests run for real, from Debian: the training frameworks, the
# browser the web UI is tested in, and what pip needs to install the
# Python SDK offline (venv, pip, setuptools, wheel), the container runtime
# kiln's image is run with (runc; umoci unpacks the image into its bundle),
# and the type checker the SDK's examples are checked with (mypy; npm
# installs pyright). Node.js and npm are the machine's own, installed from
# Debian only where missing (NODE_PACKAGES), so that a newer Node.js the
# machine has is never replaced.
DEB_PACKAGES := python3 python3-pytest python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-torch openmpi-bin python3-mpi4py python3-xgboost chromium wrk strace iproute2 postgresql runc umoci mypy python3-yaml
NODE_PACKAGES := nodejs npm
# The Slurm test cluster (make slurm-up): controller, node daemon, commands
# and their authentication.
SLURM_PACKAGES := slurm-wlm munge

.PHONY: help build release image helm example fedavg test pytest bench chaos lint fmt generate verify tools deps clients k8s-up k8s-down slurm-up slurm-down fuzz

help: ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

# kiln is built without cgo: one static executable that runs on any Linux and
# in an image from an empty base (SQLite is modernc's, in pure Go; user and DNS
# look-ups read /etc as Go's own code does). Only the race detector's test
# builds link cgo. OUT: where release and image write (default bin);
# VERSION: the release's version, stamped into the binary and the image.
OUT ?= bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
RELEASE_LDFLAGS = -s -w -X kiln.dev/kiln/internal/buildinfo.version=$(VERSION)

build: ## build bin/kiln (static: CGO_ENABLED=0)
	CGO_ENABLED=0 go build -o bin/kiln ./cmd/kiln

release: ## build $(OUT)/kiln as released: static, -trimpath, stripped, stamped with VERSION
	CGO_ENABLED=0 go build -trimpath -ldflags "$(RELEASE_LDFLAGS)" -o $(OUT)/kiln ./cmd/kiln

# The image is written with go-containerregistry, without a network or a
# container engine: $(OUT)/kiln-oci is an OCI image layout tagged VERSION,
# $(OUT)/kiln-oci.tar the same as an OCI archive (skopeo copy
# oci-archive:$(OUT)/kiln-oci.tar docker://registry.example/kiln:VERSION,
# or podman load). docs/server.md says what is in it.
image: release ## build the container image from an empty base: $(OUT)/kiln-oci (OCI layout) and $(OUT)/kiln-oci.tar
	go run ./hack/image -kiln $(OUT)/kiln -version $(VERSION) -o $(OUT)/kiln-oci
	tar -C $(OUT)/kiln-oci -cf $(OUT)/kiln-oci.tar .

helm: ## build Helm from its Go module into .k8s/bin/helm (for deploy/helm/kiln and its tests)
	hack/helm.sh

example: build ## run the example pipeline locally, on the embedded defaults
	bin/kiln run examples/pipeline.yaml

fedavg: build ## federated averaging with PyTorch across three kiln servers it starts on this machine
	examples/federated/fedavg-demo.sh

# make test fuzzes for a number of executions, not a time: Go 1.26's fuzz
# coordinator can fail a target with "context deadline exceeded" when a
# -fuzztime duration ends while a worker is busy (go.dev/issue/75804,
# fixed in Go 1.27); a count has no deadline to race.
test: deps clients k8s-up slurm-up helm ## run every test, race detector on (starts the test clusters if they are not up), the Python SDK's, then each fuzz target briefly
	KILN_KUBECONFIG=$(CURDIR)/.k8s/kubeconfig KILN_REQUIRE_K8S=1 KILN_SLURM_CONF=$(CURDIR)/.slurm/slurm.conf KILN_REQUIRE_SLURM=1 \
		go test -race -shuffle=on -timeout 45m ./...
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
# The before group runs the same shapes with the build of BENCH_BEFORE (the
# commit before the per-task path's redesign, issue 37), alternating.
BENCH_KUBECONFIG = $(or $(KILN_KUBECONFIG),$(CURDIR)/.k8s/kubeconfig)
BENCH_BEFORE ?= 7cae851
bench: build deps .bench/kiln-$(BENCH_BEFORE) $(if $(KILN_KUBECONFIG),,k8s-up) ## print the benchmark table (kiln against raw process starts, same run)
	crds=$$(hack/training-operator.sh) && \
	{ dagu=$$(hack/dagu.sh) || { echo "bench: dagu not built (see above): no dagu rows" >&2; dagu=; }; } && \
	go run ./test/bench -kiln bin/kiln -kubeconfig $(BENCH_KUBECONFIG) -before .bench/kiln-$(BENCH_BEFORE) \
		-training-operator .k8s/bin/training-operator.v1 -training-operator-crds "$$crds" -dagu "$$dagu" $(BENCH)

.bench/kiln-%: ## the kiln of an older commit, for the bench's before group
	rm -rf .bench/src-$* && mkdir -p .bench/src-$* && git archive $* | tar -x -C .bench/src-$*
	cd .bench/src-$* && CGO_ENABLED=0 go build -o ../kiln-$* ./cmd/kiln && cd .. && rm -rf src-$*

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

k8s-up: ## start a real control plane with 4 fake nodes (etcd, kube-* built from k8s.io/kubernetes, kwok, coscheduling, Kueue); .k8s/kubeconfig
	@command -v etcd > /dev/null && command -v openssl > /dev/null && command -v curl > /dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends etcd-server openssl curl ca-certificates; }
	hack/k8s-up.sh
	hack/s3-up.sh

k8s-down: ## stop the control plane k8s-up started
	hack/k8s-down.sh
	hack/s3-down.sh

# The Slurm test cluster runs as root (slurmd starts jobs as their user).
slurm-up: ## start a real Slurm cluster on this machine (munge, slurmctld, 4 slurmd from Debian); .slurm/slurm.conf, .slurm/env
	@command -v slurmctld > /dev/null && command -v slurmd > /dev/null && command -v munged > /dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(SLURM_PACKAGES); }
	hack/slurm-up.sh

slurm-down: ## stop the Slurm cluster slurm-up started
	hack/slurm-down.sh

deps: ## install the Debian packages the tests run (frameworks, chromium, postgresql, runc, mypy, slurm-wlm, munge) if missing, promtool (.tools/bin) and pyright (npm)
	@/usr/bin/python3 -c "import torch, mpi4py, xgboost, pytest, setuptools, wheel, mypy, yaml" 2>/dev/null && dpkg-query -W python3-venv python3-pip >/dev/null 2>&1 && command -v mpirun >/dev/null && command -v chromium >/dev/null && command -v wrk >/dev/null && command -v strace >/dev/null && command -v ip >/dev/null && command -v runc >/dev/null && command -v umoci >/dev/null && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v slurmctld >/dev/null && command -v munged >/dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(DEB_PACKAGES) $(SLURM_PACKAGES); }
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(NODE_PACKAGES); }
	@hack/promtool.sh >/dev/null
	@test -x sdk/python/typecheck/node_modules/.bin/pyright || (cd sdk/python/typecheck && npm ci --no-audit --no-fund)

# The client tests (test/e2e/clients_test.go) run node and the npm tools
# pinned by test/clients/package-lock.json: redocly lint, and
# openapi-typescript, openapi-fetch and tsc for a generated TypeScript client.
CLIENTS_STAMP := test/clients/node_modules/.installed
clients: $(CLIENTS_STAMP) ## install node (Debian) and the pinned npm tools the client tests run, if missing

$(CLIENTS_STAMP): test/clients/package.json test/clients/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(NODE_PACKAGES); }
	npm ci --prefix test/clients --no-audit --no-fund
	touch $@

tools: ## install the pinned Go tools
	@$(GOLANGCI_LINT) version 2>/dev/null | grep -q "version $(GOLANGCI_LINT_VERSION:v%=%) " || \
		go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
