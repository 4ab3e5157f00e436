#!/usr/bin/env bash
# Puts Prometheus's promtool at .tools/bin/promtool and prints its path.
# It is taken out of Debian's prometheus package without installing the
# package, whose scripts would start a Prometheus server.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.tools/bin/promtool
if [ ! -x "$out" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && { apt-get download prometheus >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get download prometheus >/dev/null; }; })
  dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
  mkdir -p "$(dirname "$out")"
  cp "$work/x/usr/bin/promtool" "$out"
fi
echo "$PWD/$out"
