#!/usr/bin/env bash
# Start a real S3-compatible server for the tests: versitygw (its posix
# backend, objects as plain files under .k8s/s3/data), built from the Go
# module proxy into .k8s/bin (cached), listening on 127.0.0.1 with
# generated credentials. Creates the bucket and writes .k8s/s3.env (mode
# 0600) with KILN_S3_ENDPOINT, KILN_S3_ACCESS_KEY, KILN_S3_SECRET_KEY,
# KILN_S3_BUCKET and KILN_S3_REGION. hack/s3-down.sh stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSITYGW_VERSION=v1.8.0
PORT=${KILN_S3_PORT:-9555}
DIR=$PWD/.k8s
BIN=$DIR/bin
ENV=$DIR/s3.env
mkdir -p "$BIN" "$DIR/logs"

up() { # endpoint: any HTTP answer (403 without a signature) means it serves
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/" 2>/dev/null)" != 000 ]
}

# Already up (a developer's, or CI's): keep it.
if [ -f "$ENV" ] && [ -f "$DIR/s3.pid" ] && kill -0 "$(cat "$DIR/s3.pid")" 2>/dev/null &&
  up "$(sed -n 's/^KILN_S3_ENDPOINT=//p' "$ENV")"; then
  echo "s3-up: already running; $ENV"
  exit 0
fi

[ -x "$BIN/versitygw" ] || GOBIN=$BIN go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"

# A server of an earlier try that did not finish: stop it first.
[ -f "$DIR/s3.pid" ] && hack/s3-down.sh
mkdir -p "$DIR/s3/data"

ACCESS=kiln$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
SECRET=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Another checkout's server (or anything else) on the port: take the next
# free one, unless the port was asked for.
if [ -z "${KILN_S3_PORT:-}" ]; then
  while up "http://127.0.0.1:$PORT" && [ "$PORT" -lt 9655 ]; do PORT=$((PORT + 1)); done
fi
ENDPOINT=http://127.0.0.1:$PORT
# The credentials reach versitygw through its environment, never its
# command line (which any user of the machine can read).
ROOT_ACCESS_KEY=$ACCESS ROOT_SECRET_KEY=$SECRET VGW_PORT=127.0.0.1:$PORT VGW_REGION=us-east-1 VGW_QUIET=true \
  "$BIN/versitygw" posix "$DIR/s3/data" > "$DIR/logs/s3.log" 2>&1 &
echo $! > "$DIR/s3.pid"
for _ in $(seq 1 120); do
  up "$ENDPOINT" && break
  kill -0 "$(cat "$DIR/s3.pid")" 2>/dev/null || { echo "s3-up: versitygw exited; see $DIR/logs/s3.log" >&2; exit 1; }
  sleep 0.5
done
up "$ENDPOINT" || { echo "s3-up: versitygw did not answer on $ENDPOINT; see $DIR/logs/s3.log" >&2; exit 1; }

# Create the bucket with a signed request; curl reads the key from stdin.
code=$(printf 'user = "%s:%s"\n' "$ACCESS" "$SECRET" | curl -s --config - --aws-sigv4 "aws:amz:us-east-1:s3" \
  -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" \
  -o "$DIR/logs/s3-bucket.log" -w '%{http_code}' -X PUT "$ENDPOINT/kiln")
case $code in
  200|409) ;;
  *) echo "s3-up: creating bucket kiln answered HTTP $code; see $DIR/logs/s3-bucket.log" >&2; exit 1 ;;
esac

umask 077
cat > "$ENV" <<S3
KILN_S3_ENDPOINT=$ENDPOINT
KILN_S3_ACCESS_KEY=$ACCESS
KILN_S3_SECRET_KEY=$SECRET
KILN_S3_BUCKET=kiln
KILN_S3_REGION=us-east-1
S3
echo "s3-up: versitygw on $ENDPOINT, bucket kiln; $ENV"
