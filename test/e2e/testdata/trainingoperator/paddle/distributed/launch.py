"""Stands in for paddle.distributed.launch (python3 -m
paddle.distributed.launch run_check), which the PaddleJob's image holds:
it reads the collective-mode variables the operator sets, as the real
launcher does to find its peers, and prints them with the command."""
import os
import sys

need = ["PADDLE_JOB_ID", "PADDLE_NNODES", "PADDLE_MASTER"]
missing = [n for n in need if n not in os.environ]
if missing:
    raise SystemExit(f"paddle launch: unset {missing}")
print(f"paddle launch {' '.join(sys.argv[1:])}: " + " ".join(f"{n}={os.environ[n]}" for n in need), flush=True)
