"""Write a synthetic regression data set: y = 3*x1 - 2*x2 + 0.5 + noise."""
import argparse
import csv
import os
import random

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, required=True)
p.add_argument("--seed", type=int, required=True)
p.add_argument("--out", required=True)
a = p.parse_args()

rng = random.Random(a.seed)
with open(a.out, "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["x1", "x2", "y"])
    for _ in range(a.rows):
        x1, x2 = rng.uniform(-1, 1), rng.uniform(-1, 1)
        w.writerow([f"{x1:.6f}", f"{x2:.6f}", f"{3 * x1 - 2 * x2 + 0.5 + rng.gauss(0, 0.05):.6f}"])

with open(os.path.join(os.environ["KILN_OUTPUTS"], "rows"), "w") as f:
    f.write(str(a.rows))
print(f"wrote {a.rows} rows to {a.out}", flush=True)
