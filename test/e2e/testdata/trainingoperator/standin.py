"""Stands in for the program an example's image holds: prints one line
with its arguments and the rendezvous variables the operator set (those
that are set), then, with --barrier N, waits until N replicas printed
(each leaves a file printed-PID here), so that a leader whose exit ends
the job cannot stop the others before they print."""
import glob
import os
import sys
import time

NAMES = [
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "PET_NNODES", "PET_NODE_RANK", "PET_NPROC_PER_NODE",
    "TF_CONFIG", "WORKER_ADDRS", "COORDINATOR_ADDRESS", "NUM_PROCESSES", "PROCESS_ID",
    "PADDLE_JOB_ID", "PADDLE_NNODES", "PADDLE_MASTER", "OMPI_COMM_WORLD_RANK",
]
args = sys.argv[1:]
barrier = 0
if args[:1] == ["--barrier"]:
    barrier, args = int(args[1]), args[2:]
env = " ".join(f"{n}={os.environ[n]}" for n in NAMES if n in os.environ)
print(f"standin argv={' '.join(args)} {env}", flush=True)
if barrier:
    open(f"printed-{os.getpid()}", "w").close()
    deadline = time.time() + 60
    while len(glob.glob("printed-*")) < barrier and time.time() < deadline:
        time.sleep(0.05)
