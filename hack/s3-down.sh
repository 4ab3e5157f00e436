#!/usr/bin/env bash
# Stop what hack/s3-up.sh started, and forget its objects and credentials.
cd "$(dirname "$0")/.."
DIR=$PWD/.k8s
f=$DIR/s3.pid
if [ -f "$f" ]; then
  pid=$(cat "$f")
  kill "$pid" 2> /dev/null
  for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2> /dev/null
  rm -f "$f"
fi
rm -rf "$DIR/s3" "$DIR/s3.env"
