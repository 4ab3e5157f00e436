#!/usr/bin/env bash
# Stop what hack/k8s-up.sh started, and forget the cluster's state. Each
# process gets SIGTERM and ten seconds, then SIGKILL.
cd "$(dirname "$0")/.."
DIR=${KILN_K8S_DIR:-$PWD/.k8s}
for name in kueue scheduler-plugins kwok kube-controller-manager kube-scheduler kube-apiserver etcd; do
  f=$DIR/$name.pid
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2> /dev/null
  for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2> /dev/null
  rm -f "$f"
done
rm -rf "$DIR/etcd" "$DIR/kubeconfig"
