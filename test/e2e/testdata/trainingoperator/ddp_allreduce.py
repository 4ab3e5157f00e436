"""All-reduce over gloo with only what training-operator's PyTorchJob
controller sets: MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (env://)."""
import os
import socket
import time

import torch
import torch.distributed as dist


def wait_for_master(timeout=120.0):
    """Wait until rank 0's store listens: torch 1.13's store client backs
    off a whole second when it connects too early."""
    addr = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(addr, timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)


rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
if rank > 0:
    wait_for_master()
dist.init_process_group("gloo", init_method="env://")
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"rank {rank}/{world}: all_reduce = {t.item():.0f} nnodes={os.environ['PET_NNODES']} "
      f"nproc={os.environ['PET_NPROC_PER_NODE']} node_rank={os.environ['PET_NODE_RANK']}", flush=True)
dist.barrier()  # the Master's exit ends the job: every rank prints first
dist.destroy_process_group()
if t.item() != world * (world + 1) / 2:
    raise SystemExit(f"all_reduce gave {t.item()}, want {world * (world + 1) / 2}")
