# kiln's tasks. `make help` lists them.
GOLANGCI_LINT_VERSION := v2.12.1
GOBIN := $(shell go env GOPATH)/bin
GOLANGCI_LINT := $(GOBIN)/golangci-lint

.DEFAULT_GOAL := help
.PHONY: help build example test bench lint fmt generate verify tools

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

build: ## build bin/kiln
	go build -o bin/kiln ./cmd/kiln

example: build ## run the example pipeline locally, on the embedded defaults
	bin/kiln run examples/pipeline.yaml

test: ## run every test, race detector on
	go test -race -shuffle=on ./...

bench: build ## print the benchmark table (kiln against raw process starts, same run)
	go run ./test/bench -kiln bin/kiln

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

tools: ## install the pinned Go tools
	@$(GOLANGCI_LINT) version 2>/dev/null | grep -q "version $(GOLANGCI_LINT_VERSION:v%=%) " || \
		go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
