"""PyTorch DDP over gloo on synthetic data.

Works both when kiln starts every process (RANK, WORLD_SIZE, MASTER_ADDR...
set by kiln) and under torchrun (kiln sets PET_*, torchrun the rest). Each
rank fits the same linear model to its own shard; DDP averages gradients,
so every rank must end with identical weights. Checks that, and that the
loss fell, and exits non-zero otherwise. Rank 0 saves the model.
"""
import argparse
import os
import socket
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=60)
p.add_argument("--data", default="", help="a tensor file from prepare.py; synthetic if empty")
p.add_argument("--model-out", default="")
a = p.parse_args()


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
            time.sleep(0.01)


if int(os.environ["RANK"]) != 0:
    wait_for_master()
dist.init_process_group("gloo")  # env:// rendezvous: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
true_w = torch.tensor([[2.0], [-3.0], [0.5], [1.0]])

if a.data:
    x_all, y_all = torch.load(a.data)
else:
    g = torch.Generator().manual_seed(1234)
    x_all = torch.randn(4096, 4, generator=g)
    y_all = x_all @ true_w + 0.01 * torch.randn(4096, 1, generator=g)
x, y = x_all[rank::world], y_all[rank::world]

model = DDP(torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(a.steps):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())

flat = torch.cat([t.detach().flatten() for t in model.module.parameters()])
gathered = [torch.zeros_like(flat) for _ in range(world)]
dist.all_gather(gathered, flat)
identical = all(torch.equal(gathered[0], t) for t in gathered)
print(f"rank {rank}/{world} local_rank {os.environ.get('LOCAL_RANK')} loss {losses[0]:.4f} -> {losses[-1]:.6f} "
      f"identical_weights={identical}", flush=True)
dist.barrier()
dist.destroy_process_group()

if not identical:
    raise SystemExit("ranks ended with different weights")
if not losses[-1] < 0.1 * losses[0]:
    raise SystemExit(f"loss did not fall enough: {losses[0]} -> {losses[-1]}")
if rank == 0:
    out = os.environ["KILN_OUTPUTS"]
    torch.save(model.module.state_dict(), a.model_out or os.path.join(out, "model.pt"))
    with open(os.path.join(out, "loss"), "w") as f:
        f.write(f"{losses[-1]:.6f}")
