#!/usr/bin/env bash
# FedAvg across three kiln servers on this machine (make fedavg): alice and
# bob hold the data, carol aggregates. It starts the three servers, has
# them register each other with a policy that lets each run fedavg.py
# and nothing else, runs examples/federated/fedavg.yaml from alice,
# prints the accuracy per round and the bytes moved, then the same
# model trained on all the data in one place. Everything lives under
# $FEDAVG_DIR (default: a new temporary directory) and the servers stop
# when it ends.
#
# Needs bin/kiln (make build) and a Python with PyTorch and NumPy
# ($PYTHON, default /usr/bin/python3: Debian's python3-torch).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
kiln=$root/bin/kiln
python=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-10}
dir=${FEDAVG_DIR:-$(mktemp -d /tmp/kiln-fedavg.XXXXXX)}
mkdir -p "$dir"
chmod 711 "$dir" # tasks run as project accounts, which reach their attempts through it

if ! "$python" -c 'import torch, numpy' 2> /dev/null; then
	echo "fedavg: $python has no PyTorch or NumPy: apt-get install python3-torch (or set PYTHON)" >&2
	exit 1
fi
[ -x "$kiln" ] || { echo "fedavg: $kiln is missing: run make build" >&2; exit 1; }

parties=(alice bob carol)
declare -A url pid
port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cleanup() {
	for p in "${parties[@]}"; do
		[ -n "${pid[$p]:-}" ] && kill "${pid[$p]}" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	pkill -f "supervise --home $dir/" 2> /dev/null || true
}
trap cleanup EXIT

for p in "${parties[@]}"; do
	url[$p]=http://127.0.0.1:$(port)
	mkdir -p "$dir/$p"
	KILN_HOME=$dir/$p "$kiln" serve --party "$p" --addr "${url[$p]#http://}" > "$dir/$p.log" 2>&1 &
	pid[$p]=$!
done
k() { # k PARTY ARGS...: kiln as PARTY's admin
	local p=$1
	shift
	KILN_HOME=$dir/$p KILN_SERVER=${url[$p]} KILN_TOKEN=$(cat "$dir/$p/admin.token") "$kiln" "$@"
}
for p in "${parties[@]}"; do
	for _ in $(seq 100); do
		[ -s "$dir/$p/admin.token" ] && k "$p" version > /dev/null 2>&1 && break
		sleep 0.1
	done
	k "$p" version > /dev/null || { echo "fedavg: $p's server did not start; see $dir/$p.log" >&2; exit 1; }
done

# What each party lets the others run here: fedavg.py, with this Python.
policy=$dir/policy.yaml
printf 'commands: ["%s %s"]\nmaxResources: {cpu: "1", memory: 2Gi}\n' "$python" "$root/examples/federated/fedavg.py" > "$policy"
for pair in "alice bob" "alice carol" "bob carol"; do
	set -- $pair
	toB=$(k "$1" party add "$2" --url "${url[$2]}" --policy "$policy" 2> /dev/null)
	toA=$(k "$2" party add "$1" --url "${url[$1]}" --credential "$toB" --policy "$policy" 2> /dev/null)
	k "$1" party add "$2" --credential "$toA" 2> /dev/null
done
echo "three parties registered with each other: alice ${url[alice]}, bob ${url[bob]}, carol ${url[carol]}"

out=$(k alice run examples/federated/fedavg.yaml -p script="$root/examples/federated/fedavg.py" \
	-p sdk="$root/sdk/python/src" -p python="$python" -p rounds="$rounds" | tee /dev/stderr)
run=$(sed -n 's/^Run \([a-z0-9-]*\) Succeeded.*/\1/p' <<< "$out")
echo
echo "the aggregator, carol ($run-carol):"
k carol logs "$run-carol" fedavg | grep -E '^(round|fedavg)'
echo
echo "the same model trained on all the data in one place:"
"$python" examples/federated/fedavg.py --central --rounds "$rounds"
echo
echo "what crossed parties, as carol's channel logged it:"
k carol messages "$run-carol" | awk "NR <= 5"
echo "... (kiln messages $run-carol at carol; each party logs its own end)"
