#!/usr/bin/env bash
# Stop what hack/k8s-up.sh started, and forget the cluster's state.
cd "$(dirname "$0")/.."
DIR=$PWD/.k8s
for name in kwok kube-controller-manager kube-scheduler kube-apiserver etcd; do
  [ -f "$DIR/$name.pid" ] && kill "$(cat "$DIR/$name.pid")" 2> /dev/null
  rm -f "$DIR/$name.pid"
done
sleep 1
rm -rf "$DIR/etcd" "$DIR/kubeconfig"
