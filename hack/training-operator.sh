#!/usr/bin/env bash
# Build Kubeflow training-operator (v1) from its Go module, for the
# benchmark only: `make bench` times its PyTorchJob beside kiln's TrainJob
# on the same cluster. Nothing of it is committed or vendored: the binary
# goes to .k8s/bin (ignored) and its CRDs are read from the module cache.
# Prints the directory holding the CRDs. The bench itself applies the
# PyTorchJob CRD and starts and stops the operator (test/bench/operator.go).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v1.9.3
MOD=github.com/kubeflow/training-operator
BIN=$PWD/.k8s/bin
mkdir -p "$BIN"
if [ ! -x "$BIN/training-operator.v1" ] || [ "$(cat "$BIN/training-operator.version" 2>/dev/null)" != "$VERSION" ]; then
  # Outside the repository: its go.mod is the operator's own, not kiln's.
  (cd / && GOBIN=$BIN GOFLAGS= go install "$MOD/cmd/training-operator.v1@$VERSION") >&2
  echo "$VERSION" > "$BIN/training-operator.version"
fi
(cd / && GOFLAGS= go mod download "$MOD@$VERSION") >&2
echo "$(go env GOMODCACHE)/$MOD@$VERSION/manifests/base/crds"
