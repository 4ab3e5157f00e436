"""Distributed XGBoost over rabit: rank 0 starts the tracker, as in Kubeflow
Trainer's XGBoost runtime; every worker trains on its shard and the
collective makes their models identical."""
import os
import threading

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker

rank, n = int(os.environ["DMLC_TASK_ID"]), int(os.environ["DMLC_NUM_WORKER"])
uri, port = os.environ["DMLC_TRACKER_URI"], int(os.environ["DMLC_TRACKER_PORT"])
tracker_done = None
if rank == 0:
    tracker = RabitTracker(host_ip=uri, n_workers=n, port=port)
    tracker.start(n)
    tracker_done = threading.Thread(target=tracker.join)
    tracker_done.start()

rng = np.random.default_rng(7)
x = rng.normal(size=(4000, 5))
y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype(int)
xs, ys = x[rank::n], y[rank::n]

with collective.CommunicatorContext(DMLC_TRACKER_URI=uri, DMLC_TRACKER_PORT=port, DMLC_TASK_ID=str(rank)):
    world = collective.get_world_size()
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 3, "eta": 0.3},
                        xgb.DMatrix(xs, label=ys), num_boost_round=20)
    acc = float(((booster.predict(xgb.DMatrix(x)) > 0.5) == y).mean())
    digest = np.array([float(booster.predict(xgb.DMatrix(x[:50])).sum())])
    spread = float(collective.allreduce(digest, collective.Op.MAX)[0] + collective.allreduce(-digest, collective.Op.MAX)[0])

if tracker_done is not None:
    tracker_done.join()  # the tracker ends once every worker has left
print(f"rank {rank}/{world}: accuracy {acc:.3f}, model spread across ranks {spread:.2e}", flush=True)
if world != n or acc < 0.9 or abs(spread) > 1e-6:
    raise SystemExit(f"world {world}, accuracy {acc} or model spread {spread} out of bounds")
