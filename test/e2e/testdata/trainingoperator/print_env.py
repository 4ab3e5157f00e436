"""Prints each named variable as NAME=VALUE on one line; fails if one is
unset. With --barrier N it then waits until N processes have printed
(each leaves a file printed-PID here), so that a leader whose exit ends
the job cannot stop the others before they print."""
import glob
import os
import sys
import time

args = sys.argv[1:]
barrier = 0
if args[:1] == ["--barrier"]:
    barrier, args = int(args[1]), args[2:]
missing = [n for n in args if n not in os.environ]
print(" ".join(f"{n}={os.environ.get(n)}" for n in args), flush=True)
if barrier:
    open(f"printed-{os.getpid()}", "w").close()
    deadline = time.time() + 60
    while len(glob.glob("printed-*")) < barrier and time.time() < deadline:
        time.sleep(0.05)
if missing:
    raise SystemExit(f"unset: {missing}")
