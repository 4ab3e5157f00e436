#!/usr/bin/env bash
# Start a real Kubernetes control plane on this machine, without Docker:
# etcd (Debian's etcd-server), kube-apiserver, kube-scheduler and
# kube-controller-manager built from the Go module k8s.io/kubernetes (cached
# in .k8s/bin), and kwok faking 4 nodes of 8 CPUs and 32Gi. Writes
# .k8s/kubeconfig; hack/k8s-down.sh stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION=v1.33.4 STAGING_VERSION=v0.33.4 KWOK_VERSION=v0.7.0
DIR=$PWD/.k8s
BIN=$DIR/bin
mkdir -p "$BIN" "$DIR/logs" "$DIR/pki"

build() {
  [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-scheduler" ] && [ -x "$BIN/kube-controller-manager" ] && return
  local mod=$DIR/build
  mkdir -p "$mod"
  printf 'module kilnk8s\n\ngo 1.26\n' > "$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n\t_ "k8s.io/kubernetes/cmd/kube-scheduler"\n)\n' > "$mod/tools.go"
  (cd "$mod" && GOFLAGS=-mod=mod go get "k8s.io/kubernetes@$K8S_VERSION")
  # k8s.io/kubernetes requires its staging modules at v0.0.0: pin each to its release.
  local gomod; gomod="$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/go.mod"
  for m in $(grep -E '^\s+k8s.io/[a-z-]+ v0.0.0$' "$gomod" | awk '{print $1}' | sort -u); do
    echo "replace $m => $m $STAGING_VERSION" >> "$mod/go.mod"
  done
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy && go build -o "$BIN/" k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
}

start() { # name command...
  local name=$1; shift
  "$@" > "$DIR/logs/$name.log" 2>&1 &
  echo $! > "$DIR/$name.pid"
}

wait_for() { # what url
  for _ in $(seq 1 240); do
    curl -fsk -H "Authorization: Bearer $TOKEN" "$2" > /dev/null 2>&1 && return
    sleep 0.5
  done
  echo "k8s-up: $1 did not come up; see $DIR/logs" >&2
  exit 1
}

# Already up (a developer's cluster, or CI's): keep it.
if [ -f "$DIR/kubeconfig" ] && [ -f "$DIR/pki/tokens.csv" ] &&
  curl -fsk -H "Authorization: Bearer $(cut -d, -f1 "$DIR/pki/tokens.csv")" https://127.0.0.1:6443/readyz > /dev/null 2>&1; then
  echo "k8s-up: already running; KUBECONFIG=$DIR/kubeconfig"
  exit 0
fi

build
[ -x "$BIN/kwok" ] || GOBIN=$BIN go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
command -v etcd > /dev/null || { echo "k8s-up: etcd is missing (apt-get install etcd-server)" >&2; exit 1; }

TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$TOKEN,admin,admin,system:masters" > "$DIR/pki/tokens.csv"
[ -f "$DIR/pki/sa.key" ] || openssl genrsa -out "$DIR/pki/sa.key" 2048 2> /dev/null
openssl rsa -in "$DIR/pki/sa.key" -pubout -out "$DIR/pki/sa.pub" 2> /dev/null

start etcd etcd --data-dir "$DIR/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380
start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 --bind-address 127.0.0.1 \
  --secure-port 6443 --cert-dir "$DIR/pki" --token-auth-file "$DIR/pki/tokens.csv" --authorization-mode RBAC \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$DIR/pki/sa.pub" \
  --service-account-signing-key-file "$DIR/pki/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
  --disable-admission-plugins ServiceAccount,TaintNodesByCondition --kubelet-preferred-address-types InternalIP
cat > "$DIR/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: kiln, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$TOKEN"}}]
contexts: [{name: kiln, context: {cluster: kiln, user: admin}}]
current-context: kiln
KC
wait_for kube-apiserver https://127.0.0.1:6443/readyz
start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$DIR/kubeconfig" --leader-elect=false \
  --bind-address 127.0.0.1 --secure-port 10259
start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$DIR/kubeconfig" --leader-elect=false \
  --controllers '*,-nodelifecycle' --service-account-private-key-file "$DIR/pki/sa.key" \
  --bind-address 127.0.0.1 --secure-port 10257
# kwok also plays the nodes' kubelet API on 127.0.0.1:10250, so the pod log
# API works: every container's log is the file pod.log (ClusterLogs), in
# the CRI log format a kubelet reads.
printf '2026-01-01T00:00:00.000000000Z stdout F kwok: line 1 of a container log\n2026-01-01T00:00:01.000000000Z stdout F kwok: line 2 of a container log\n' > "$DIR/pod.log"
cat > "$DIR/kwok-logs.yaml" <<LOGS
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: every-container}
spec:
  logs: [{logsFile: "$DIR/pod.log"}]
LOGS
start_kwok() {
  start kwok "$BIN/kwok" --kubeconfig "$DIR/kubeconfig" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --cidr 10.0.0.1/16 --node-ip 127.0.0.1 \
    --node-port 10250 --server-address 127.0.0.1:10250 \
    --tls-cert-file "$DIR/pki/apiserver.crt" --tls-private-key-file "$DIR/pki/apiserver.key" \
    --config hack/kwok-stages.yaml --config "$DIR/kwok-logs.yaml"
}
start_kwok

post() { # path: POST stdin as JSON
  curl -fsk -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST \
    "https://127.0.0.1:6443$1" -d @- > /dev/null
}

# The PodGroup kinds of the two gang schedulers kiln can use, so that the
# API accepts kiln's PodGroups (no gang scheduler runs here).
for crd in "scheduling.x-k8s.io v1alpha1" "scheduling.volcano.sh v1beta1"; do
  set -- $crd
  post /apis/apiextensions.k8s.io/v1/customresourcedefinitions <<CRD
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "podgroups.$1"},
 "spec": {"group": "$1", "scope": "Namespaced",
          "names": {"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup"},
          "versions": [{"name": "$2", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}
CRD
done

for i in 0 1 2 3; do
  post /api/v1/nodes <<NODE
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "kwok-node-$i", "annotations": {"kwok.x-k8s.io/node": "fake"},
              "labels": {"type": "kwok", "kubernetes.io/hostname": "kwok-node-$i",
                         "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
 "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
NODE
done
# kwok 0.7.0 sometimes dies as it starts, on a data race of its own
# ("concurrent map writes"): wait until it has made the nodes Ready, and
# start it again if it is gone.
node_ready() {
  curl -fsk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:6443/api/v1/nodes/kwok-node-3 2>/dev/null |
    tr -d ' \n' | grep -q '"type":"Ready","status":"True"'
}
for try in 1 2 3 4; do
  for _ in $(seq 1 60); do
    node_ready && break 2
    kill -0 "$(cat "$DIR/kwok.pid")" 2>/dev/null || break
    sleep 0.5
  done
  if [ "$try" = 4 ]; then
    echo "k8s-up: kwok did not make the nodes Ready; see $DIR/logs/kwok.log" >&2
    exit 1
  fi
  echo "k8s-up: kwok is not up (try $try); starting it again" >&2
  kill "$(cat "$DIR/kwok.pid")" 2>/dev/null || true
  start_kwok
done
echo "k8s-up: control plane with 4 fake nodes; KUBECONFIG=$DIR/kubeconfig"
