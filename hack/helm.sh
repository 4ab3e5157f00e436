#!/usr/bin/env bash
# Build Helm from its Go module (pinned), for the chart's tests and for
# anyone who wants to render deploy/helm/kiln without installing Helm:
# the binary goes to .k8s/bin (ignored; cached), built outside the
# repository so that Helm's dependencies never enter kiln's go.mod.
# Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v3.22.0
BIN=$PWD/.k8s/bin
mkdir -p "$BIN"
if [ ! -x "$BIN/helm" ] || [ "$(cat "$BIN/helm.version" 2>/dev/null)" != "$VERSION" ]; then
  (cd / && GOBIN=$BIN GOFLAGS= CGO_ENABLED=0 go install "helm.sh/helm/v3/cmd/helm@$VERSION") >&2
  echo "$VERSION" > "$BIN/helm.version"
fi
echo "$BIN/helm"
