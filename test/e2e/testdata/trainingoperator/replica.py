"""A replica of a job whose replica types run different args and restart
policies: prints its attempt, rank and args. Given --fail CODE it exits
CODE on the job's first attempt; given --wait N (the Master, whose exit
ends the job) it waits until N replicas of its attempt printed."""
import glob
import os
import sys
import time

args = sys.argv[1:]
attempt = os.environ["KILN_ATTEMPT"]
print(f"attempt {attempt} rank {os.environ['RANK']}: args {' '.join(args)}", flush=True)
if "--fail" in args and attempt == "1":
    raise SystemExit(int(args[args.index("--fail") + 1]))
open(f"done-{attempt}-{os.getpid()}", "w").close()
if "--wait" in args:
    n = int(args[args.index("--wait") + 1])
    deadline = time.time() + 60
    while len(glob.glob(f"done-{attempt}-*")) < n and time.time() < deadline:
        time.sleep(0.05)
