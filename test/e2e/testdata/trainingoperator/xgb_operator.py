"""Distributed XGBoost with only the XGBoostJob controller's variables:
the Master (RANK 0) starts the rabit tracker on MASTER_ADDR:MASTER_PORT
for WORLD_SIZE workers; every replica trains on its shard and joins."""
import os
import threading

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker

rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
tracker_done = None
if rank == 0:
    tracker = RabitTracker(host_ip=addr, n_workers=n, port=port)
    tracker.start(n)
    tracker_done = threading.Thread(target=tracker.join)
    tracker_done.start()

rng = np.random.default_rng(7)
x = rng.normal(size=(2000, 4))
y = (x[:, 0] - x[:, 1] > 0).astype(int)
with collective.CommunicatorContext(DMLC_TRACKER_URI=addr, DMLC_TRACKER_PORT=port, DMLC_TASK_ID=str(rank)):
    world = collective.get_world_size()
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 2}, xgb.DMatrix(x[rank::n], label=y[rank::n]), num_boost_round=5)
    total = collective.allreduce(np.array([float(rank + 1)]), collective.Op.SUM)[0]
    # Printed before leaving: the Master's exit, once every worker left, ends the job.
    print(f"rank {rank}/{world}: allreduce = {total:.0f} workers={os.environ.get('WORKER_ADDRS')} port={os.environ.get('WORKER_PORT')}", flush=True)
if tracker_done is not None:
    tracker_done.join()
if world != n or total != n * (n + 1) / 2:
    raise SystemExit(f"world {world} or allreduce {total} is wrong")
