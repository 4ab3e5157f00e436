#!/usr/bin/env bash
# Stop what hack/slurm-up.sh started, and forget the cluster's state: its
# jobs are cancelled, then each daemon gets SIGTERM and ten seconds, then
# SIGKILL.
cd "$(dirname "$0")/.."
DIR=${KILN_SLURM_DIR:-$PWD/.slurm}
# Jobs still running are cancelled first, so that no job step outlives
# its slurmd; up to ten seconds for them to end.
if [ -f "$DIR/slurm.conf" ] && [ -f "$DIR/slurmctld.pid" ]; then
  export SLURM_CONF=$DIR/slurm.conf
  jobs=$(squeue -h -t pending,running,suspended,completing -o %i 2> /dev/null)
  if [ -n "$jobs" ]; then
    scancel $jobs 2> /dev/null
    for _ in $(seq 1 100); do
      [ -z "$(squeue -h -t running,completing -o %i 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
fi
for f in "$DIR"/slurmd-*.pid "$DIR/slurmctld.pid" "$DIR/munged.pid"; do
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  kill "$pid" 2> /dev/null
  for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2> /dev/null
  rm -f "$f"
done
rm -rf "$DIR/state" "$DIR"/spool-* "$DIR/env" "$DIR/jobcomp.log" "$DIR/slurm.conf"
