"""Score each model on the data and report the best; fail if none is good."""
import argparse
import csv
import json
import os
import sys

p = argparse.ArgumentParser()
p.add_argument("--data", required=True)
p.add_argument("--model", action="append", required=True)
a = p.parse_args()

with open(a.data) as f:
    rows = [tuple(map(float, (r["x1"], r["x2"], r["y"]))) for r in csv.DictReader(f)]
if len(rows) != int(os.environ["EXPECTED_ROWS"]):
    sys.exit(f"expected {os.environ['EXPECTED_ROWS']} rows, read {len(rows)}")

best = None
for path in a.model:
    with open(path) as f:
        m = json.load(f)
    mse = sum((m["w1"] * x1 + m["w2"] * x2 + m["b"] - y) ** 2 for x1, x2, y in rows) / len(rows)
    # flush: a task's stdout is a pipe, which Python buffers; this keeps the
    # log's lines in the order written, the error (stderr) after them.
    print(f"model lr={m['lr']}: mse {mse:.5f}", flush=True)
    if best is None or mse < best[0]:
        best = (mse, m)

mse, m = best
with open(os.path.join(os.environ["KILN_OUTPUTS"], "best"), "w") as f:
    f.write(f"lr={m['lr']} mse={mse:.5f}")
if mse > 0.05:
    sys.exit(f"best model is too weak: mse {mse:.5f}")
print(f"best: lr={m['lr']} mse={mse:.5f}", flush=True)
