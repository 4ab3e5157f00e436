# An elastic trainer (torchrun-elastic.yaml; the e2e tests run it too):
# every step all-reduces a one, so a step only passes when every rank of
# the current world takes it. Rank 0 checkpoints the step to
# $KILN_OUTPUTS, so the workers torchrun restarts after a node was lost, or
# to let one join, resume where the job was, in the new world.
import os
import sys
import time

import torch
import torch.distributed as dist

STEPS = int(os.environ.get("STEPS", "50"))
out = os.environ["KILN_OUTPUTS"]
ckpt = os.path.join(out, "step.txt")

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
step = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
restart = os.environ.get("TORCHELASTIC_RESTART_COUNT")
nodes = os.environ.get("KILN_NODES")  # the job's nodes when this one started
print(f"rank {rank} world {world} restart {restart} from step {step} (KILN_NODES={nodes})", flush=True)
while step < STEPS:
    t = torch.ones(1)
    dist.all_reduce(t)
    if int(t.item()) != world:
        sys.exit(f"all_reduce gave {t.item()}, want {world}")
    step += 1
    if rank == 0:
        with open(ckpt + ".tmp", "w") as f:
            f.write(str(step))
        os.replace(ckpt + ".tmp", ckpt)
    time.sleep(0.2)
if rank == 0:
    with open(os.path.join(out, "world.txt"), "w") as f:
        f.write(str(world))
print(f"rank {rank} done in world {world}", flush=True)
