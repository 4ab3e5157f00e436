#!/usr/bin/env bash
# Build dagu, the closest single-binary workflow engine, from its public
# source, for the benchmark only: `make bench` runs the same DAGs through
# kiln and dagu side by side (test/bench/dagu.go). Nothing of it is
# committed or vendored: its source is taken at a pinned release into
# .bench/dagu (ignored) and built there; its dependencies come from the Go
# module proxy. Its releases are not installable with `go install` (their
# module path lacks the major version), so the source comes from git:
#
#   DAGU_SRC=/path/to/a/clone/of/dagu hack/dagu.sh   # a clone (or bare repository) you have
#   hack/dagu.sh                                     # clones the release from GitHub
#
# Only the Go sources are built: the web UI's assets are left out (the UI
# is not used by `dagu start`, and its embedded directory holds a
# placeholder in the release). Prints the binary's path; a second run
# finds it built and prints it at once.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v2.6.5
REPO=https://github.com/dagu-org/dagu
DIR=$PWD/.bench/dagu
BIN=$DIR/dagu-$VERSION
if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi
mkdir -p "$DIR"
SRC=$DIR/src-$VERSION
trap 'rm -rf "$SRC" "$DIR/clone" "$BIN.part"' EXIT
rm -rf "$SRC" "$DIR/clone"
mkdir -p "$SRC"
git_dir=${DAGU_SRC:-}
if [ -z "$git_dir" ]; then
  git clone -q --bare --depth 1 --branch "$VERSION" "$REPO" "$DIR/clone" >&2 ||
    { echo "hack/dagu.sh: cannot clone $REPO; set DAGU_SRC to a clone of it" >&2; exit 1; }
  git_dir=$DIR/clone
fi
# The Go module: its root package, the command and what it imports.
git -C "$git_dir" archive "$VERSION" -- go.mod go.sum LICENSE ':(glob)*.go' cmd internal api proto skills |
  tar -x -C "$SRC"
start=$(date +%s)
(cd "$SRC" && GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
  go build -trimpath -ldflags "-X main.version=$VERSION" -o "$BIN.part" ./cmd) >&2
mv "$BIN.part" "$BIN"
echo "hack/dagu.sh: built dagu $VERSION in $(($(date +%s) - start)) s" >&2
echo "$BIN"
