#!/usr/bin/env bash
# Start a real Slurm cluster on this machine, from Debian's slurm-wlm and
# munge: one munged on a private socket, one slurmctld and NODES slurmd
# (KILN_SLURM_NODES, default 4), each a node of its own (slurmd -N, NodeName
# kiln-<i>, its own port from KILN_SLURM_PORT+1; slurmctld on
# KILN_SLURM_PORT, default 17099), all on localhost, with state, spool and
# logs under .slurm/ (KILN_SLURM_DIR). Accounting is off (no slurmdbd):
# finished jobs stay in squeue for MinJobAge (a day here), which is what
# the Slurm backend reads; the job completion log (jobcomp/filetxt,
# .slurm/jobcomp.log) is for people. .slurm/env exports SLURM_CONF.
# Needs root (slurmd starts jobs as their user).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${KILN_SLURM_DIR:-$PWD/.slurm}
NODES=${KILN_SLURM_NODES:-4}
CPUS=${KILN_SLURM_CPUS:-8}
mkdir -p "$DIR/state" "$DIR/logs" "$DIR/munge" "$DIR/shared"
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF

for cmd in munged slurmctld slurmd sbatch; do
  command -v "$cmd" > /dev/null || { echo "slurm-up: $cmd is missing (apt-get install slurm-wlm munge)" >&2; exit 1; }
done

alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2> /dev/null; }

# Already up (a developer's cluster, or CI's): keep it.
if alive slurmctld && scontrol ping 2> /dev/null | grep -q UP; then
  echo "slurm-up: already running; SLURM_CONF=$CONF"
  exit 0
fi

# munged on a socket of its own, with a key of its own; as root, --force.
if ! alive munged; then
  [ -f "$DIR/munge/munge.key" ] || { head -c 1024 /dev/urandom > "$DIR/munge/munge.key"; chmod 600 "$DIR/munge/munge.key"; }
  munged --force --socket="$DIR/munge/munge.sock" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/logs/munged.log" --seed-file="$DIR/munge/seed"
fi

# Ports: slurmctld on KILN_SLURM_PORT (default 17099), slurmd i on the next ones.
port=$((${KILN_SLURM_PORT:-17099} + 1))
nodes=""
for i in $(seq 0 $((NODES - 1))); do
  nodes+="NodeName=kiln-$i NodeHostname=$(hostname) NodeAddr=127.0.0.1 Port=$((port + i)) CPUs=$CPUS RealMemory=4096 State=UNKNOWN"$'\n'
done
cat > "$CONF" <<CONF
# Written by hack/slurm-up.sh: a test cluster of $NODES nodes on localhost.
ClusterName=kiln
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$((port - 1))
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.sock
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool-%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/logs/slurmctld.log
SlurmdLogFile=$DIR/logs/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/jobcomp.log
MinJobAge=86400
KillWait=5
# sbatch refuses a job no node or partition can ever hold, as it does on
# most production clusters, rather than leaving it pending.
EnforcePartLimits=ALL
${nodes}PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

start=$SECONDS
slurmctld -f "$CONF" -i
for i in $(seq 0 $((NODES - 1))); do
  mkdir -p "$DIR/spool-kiln-$i"
  slurmd -f "$CONF" -N "kiln-$i"
done
echo "export SLURM_CONF=$CONF" > "$DIR/env"

# Up once every node is idle.
for _ in $(seq 1 240); do
  [ "$(sinfo -h -N -t idle -o %N 2> /dev/null | sort -u | wc -l)" = "$NODES" ] && {
    echo "slurm-up: $NODES nodes up in $((SECONDS - start))s; SLURM_CONF=$CONF (. $DIR/env)"
    exit 0
  }
  sleep 0.5
done
echo "slurm-up: the nodes did not come up; see $DIR/logs" >&2
sinfo -N >&2 || true
exit 1
