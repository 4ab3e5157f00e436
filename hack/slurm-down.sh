#!/usr/bin/env bash
# Stop what hack/slurm-up.sh started, and forget the cluster's state. Each
# daemon gets SIGTERM and ten seconds, then SIGKILL.
cd "$(dirname "$0")/.."
DIR=${KILN_SLURM_DIR:-$PWD/.slurm}
for f in "$DIR"/slurmd-*.pid "$DIR/slurmctld.pid" "$DIR/munged.pid"; do
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2> /dev/null
  for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2> /dev/null
  rm -f "$f"
done
rm -rf "$DIR/state" "$DIR"/spool-* "$DIR/env" "$DIR/jobcomp.log"
