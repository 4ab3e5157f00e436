#!/usr/bin/env bash
# Start a real Kubernetes control plane on this machine, without Docker:
# etcd (Debian's etcd-server), kube-apiserver, kube-scheduler and
# kube-controller-manager built from the Go module k8s.io/kubernetes (cached
# in .k8s/bin), kwok faking 4 nodes of 8 CPUs and 32Gi, and a second
# scheduler, scheduler-plugins' coscheduling (gangs all or nothing, named
# scheduler-plugins-scheduler), built from sigs.k8s.io/scheduler-plugins,
# and Kueue's controller manager (admits Workloads of queue-named jobs),
# built from sigs.k8s.io/kueue.
# Writes .k8s/kubeconfig; hack/k8s-down.sh stops everything. KILN_K8S_DIR
# names another state folder than .k8s (a worktree adding Kueue to the
# cluster of another checkout: on a running cluster only the missing
# schedulers and Kueue are started).
set -euo pipefail
cd "$(dirname "$0")/.."
K8S_VERSION=v1.33.4 STAGING_VERSION=v0.33.4 KWOK_VERSION=v0.7.0
# The scheduler-plugins release of Kubernetes 1.33 (it asks for 1.33.5; the
# replace lines below hold it to the control plane's 1.33.4, so the two
# builds share the Go build cache).
SCHED_PLUGINS_VERSION=v0.33.5
# Kueue's last release on k8s.io 0.33 (the control plane's line).
KUEUE_VERSION=v0.13.10
DIR=${KILN_K8S_DIR:-$PWD/.k8s}
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
  staging_replaces >> "$mod/go.mod"
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy && go build -o "$BIN/" k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
}

# staging_replaces: a replace line for every staging module of
# k8s.io/kubernetes (required at v0.0.0), pinning it to its release.
staging_replaces() {
  local gomod; gomod="$(go env GOMODCACHE)/k8s.io/kubernetes@$K8S_VERSION/go.mod"
  for m in $(grep -E '^\s+k8s.io/[a-z-]+ v0.0.0$' "$gomod" | awk '{print $1}' | sort -u); do
    echo "replace $m => $m $STAGING_VERSION"
  done
}

# build_coscheduling builds scheduler-plugins' scheduler (kube-scheduler with
# the Coscheduling plugin and the PodGroup controller compiled in) and keeps
# its PodGroup CRD next to it.
build_coscheduling() {
  [ -x "$BIN/scheduler-plugins" ] && [ -f "$BIN/podgroups-crd.yaml" ] && return
  local mod=$DIR/build-coscheduling start=$SECONDS
  mkdir -p "$mod"
  printf 'module kilncosched\n\ngo 1.26\n\nrequire sigs.k8s.io/scheduler-plugins %s\n\nreplace k8s.io/kubernetes => k8s.io/kubernetes %s\n' \
    "$SCHED_PLUGINS_VERSION" "$K8S_VERSION" > "$mod/go.mod"
  staging_replaces >> "$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/scheduler-plugins/cmd/scheduler"\n' > "$mod/tools.go"
  # -mod=mod resolves what the build needs; go mod tidy would also fetch
  # every test dependency of the module graph (ten minutes here).
  (cd "$mod" && GOFLAGS=-mod=mod go build -o "$BIN/scheduler-plugins" sigs.k8s.io/scheduler-plugins/cmd/scheduler)
  cp "$(go env GOMODCACHE)/sigs.k8s.io/scheduler-plugins@$SCHED_PLUGINS_VERSION/manifests/coscheduling/crd.yaml" "$BIN/podgroups-crd.yaml"
  chmod u+w "$BIN/podgroups-crd.yaml"
  echo "k8s-up: built scheduler-plugins $SCHED_PLUGINS_VERSION in $((SECONDS - start))s"
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

# apply_crd creates the CustomResourceDefinition of file, named name, or
# replaces the one there (the schema-less stub of an older k8s-up), and
# waits until its group is served.
apply_crd() { # file name group/version
  local url=https://127.0.0.1:6443/apis/apiextensions.k8s.io/v1/customresourcedefinitions rv
  rv=$(curl -fsk -H "Authorization: Bearer $TOKEN" "$url/$2" 2> /dev/null |
    grep -o '"resourceVersion": *"[0-9]*"' | head -1 | grep -o '[0-9][0-9]*' || true)
  if [ -z "$rv" ]; then
    curl -fsk -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/yaml' -X POST --data-binary @"$1" "$url" > /dev/null
  else
    sed "s/^  name: $2\$/&\n  resourceVersion: \"$rv\"/" "$1" |
      curl -fsk -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/yaml' -X PUT --data-binary @- "$url/$2" > /dev/null
  fi
  wait_for "the $2 CRD" "https://127.0.0.1:6443/apis/$3"
}

# start_coscheduling runs scheduler-plugins' scheduler as a second
# scheduler, scheduler-plugins-scheduler, with the Coscheduling plugin as
# the project's manifests configure it (manifests/coscheduling), on the
# admin kubeconfig, after the real PodGroup CRD. Kept if it runs already.
start_coscheduling() {
  if [ -f "$DIR/scheduler-plugins.pid" ] && kill -0 "$(cat "$DIR/scheduler-plugins.pid")" 2> /dev/null; then
    return
  fi
  build_coscheduling
  apply_crd "$BIN/podgroups-crd.yaml" podgroups.scheduling.x-k8s.io scheduling.x-k8s.io/v1alpha1
  cat > "$DIR/scheduler-plugins.yaml" <<CFG
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {kubeconfig: "$DIR/kubeconfig"}
profiles:
- schedulerName: scheduler-plugins-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
    queueSort:
      enabled: [{name: Coscheduling}]
      disabled: [{name: "*"}]
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 10}
CFG
  start scheduler-plugins "$BIN/scheduler-plugins" --config "$DIR/scheduler-plugins.yaml" \
    --bind-address 127.0.0.1 --secure-port 10359
  wait_for scheduler-plugins https://127.0.0.1:10359/healthz
}

# build_kueue builds Kueue's controller manager from its Go module, with
# cmd/kueue/main.go copied in and its one hard-coded path (the metrics
# certificates, /etc/kueue/metrics/certs) read from KUEUE_METRICS_CERTS, so
# that it runs as a process without root; keeps its CRDs next to it. The
# binary is named after the version, so a cached one of another is rebuilt.
build_kueue() {
  [ -x "$BIN/kueue-$KUEUE_VERSION" ] && [ -f "$BIN/kueue-crds/kueue.x-k8s.io_workloads.yaml" ] && return
  local mod=$DIR/build-kueue start=$SECONDS src
  src="$(go env GOMODCACHE)/sigs.k8s.io/kueue@$KUEUE_VERSION"
  mkdir -p "$mod" "$BIN/kueue-crds"
  printf 'module kilnkueue\n\ngo 1.26\n\nrequire sigs.k8s.io/kueue %s\n' "$KUEUE_VERSION" > "$mod/go.mod"
  (cd "$mod" && go mod download "sigs.k8s.io/kueue@$KUEUE_VERSION")
  # The control plane built above reports no release ("v0.0.0-master"),
  # which Kueue cannot parse: it then runs without the server's version
  # (only its job integrations' webhooks read it; none is registered here).
  sed -e 's|metricsCertPath := "/etc/kueue/metrics/certs"|metricsCertPath := os.Getenv("KUEUE_METRICS_CERTS")|' \
    -e 's|return nil, fmt.Errorf("failed to fetch kubernetes server version: %w", err)|setupLog.Error(err, "running without the server version")|' \
    "$src/cmd/kueue/main.go" > "$mod/main.go"
  [ "$(grep -c 'KUEUE_METRICS_CERTS\|running without the server version' "$mod/main.go")" = 2 ] ||
    { echo "k8s-up: cannot patch Kueue's main.go" >&2; exit 1; }
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy && nice go build -o "$BIN/kueue-$KUEUE_VERSION" .)
  cp "$src"/config/components/crd/bases/*.yaml "$BIN/kueue-crds/"
  chmod u+w "$BIN"/kueue-crds/*.yaml
  echo "k8s-up: built kueue $KUEUE_VERSION in $((SECONDS - start))s"
}

# start_kueue runs Kueue's controller manager on the admin kubeconfig, after
# its CRDs and namespace, with one self-signed certificate for its metrics
# and webhook servers (no webhook is registered: kiln creates Workloads
# itself), no leader election and no visibility API server (it would write
# certificates to /visibility). Kept if it runs already.
start_kueue() {
  if [ -f "$DIR/kueue.pid" ] && kill -0 "$(cat "$DIR/kueue.pid")" 2> /dev/null; then
    return
  fi
  build_kueue
  local start=$SECONDS crd
  for crd in workloads clusterqueues localqueues resourceflavors cohorts admissionchecks \
    workloadpriorityclasses topologies provisioningrequestconfigs multikueueclusters multikueueconfigs; do
    apply_crd "$BIN/kueue-crds/kueue.x-k8s.io_$crd.yaml" "$crd.kueue.x-k8s.io" kueue.x-k8s.io/v1beta1
  done
  curl -fsk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:6443/api/v1/namespaces/kueue-system > /dev/null 2>&1 ||
    echo '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}}' | post /api/v1/namespaces
  mkdir -p "$DIR/kueue-certs"
  [ -f "$DIR/kueue-certs/tls.key" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=kueue \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$DIR/kueue-certs/tls.key" -out "$DIR/kueue-certs/tls.crt" 2> /dev/null
  cat > "$DIR/kueue.yaml" <<CFG
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
namespace: kueue-system
leaderElection: {leaderElect: false}
health: {healthProbeBindAddress: "127.0.0.1:8091"}
metrics: {bindAddress: "127.0.0.1:8453"}
webhook: {port: 9444, host: 127.0.0.1, certDir: "$DIR/kueue-certs"}
internalCertManagement: {enable: false}
manageJobsWithoutQueueName: false
integrations: {frameworks: ["batch/job"]}
CFG
  KUEUE_METRICS_CERTS=$DIR/kueue-certs start kueue "$BIN/kueue-$KUEUE_VERSION" --config "$DIR/kueue.yaml" \
    --kubeconfig "$DIR/kubeconfig" --feature-gates VisibilityOnDemand=false
  wait_for kueue http://127.0.0.1:8091/readyz
  echo "k8s-up: kueue $KUEUE_VERSION up in $((SECONDS - start))s"
}

post() { # path: POST stdin as JSON
  curl -fsk -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -X POST \
    "https://127.0.0.1:6443$1" -d @- > /dev/null
}

# Already up (a developer's cluster, or CI's): keep it, adding the
# coscheduling scheduler and Kueue if they do not run.
if [ -f "$DIR/kubeconfig" ] && [ -f "$DIR/pki/tokens.csv" ] &&
  curl -fsk -H "Authorization: Bearer $(cut -d, -f1 "$DIR/pki/tokens.csv")" https://127.0.0.1:6443/readyz > /dev/null 2>&1; then
  TOKEN=$(cut -d, -f1 "$DIR/pki/tokens.csv")
  start_coscheduling
  start_kueue
  echo "k8s-up: already running; KUBECONFIG=$DIR/kubeconfig"
  exit 0
fi

build
build_coscheduling
build_kueue
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

# Volcano's PodGroup kind, so that the API accepts kiln's PodGroups for
# it; no Volcano scheduler runs here (the module proxy does not serve
# volcano.sh/volcano to this machine, and Volcano needs its controllers
# and queues beside its scheduler). scheduler-plugins' real CRD and
# scheduler come with start_coscheduling.
for crd in "scheduling.volcano.sh v1beta1"; do
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
start_coscheduling
start_kueue

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
