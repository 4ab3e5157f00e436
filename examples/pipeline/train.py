"""Fit y = w1*x1 + w2*x2 + b by full-batch gradient descent."""
import argparse
import csv
import json
import os

p = argparse.ArgumentParser()
p.add_argument("--data", required=True)
p.add_argument("--lr", type=float, required=True)
p.add_argument("--epochs", type=int, required=True)
a = p.parse_args()

with open(a.data) as f:
    rows = [tuple(map(float, (r["x1"], r["x2"], r["y"]))) for r in csv.DictReader(f)]

w1 = w2 = b = 0.0
n = len(rows)
for epoch in range(a.epochs):
    g1 = g2 = gb = loss = 0.0
    for x1, x2, y in rows:
        err = w1 * x1 + w2 * x2 + b - y
        g1, g2, gb, loss = g1 + err * x1, g2 + err * x2, gb + err, loss + err * err
    w1, w2, b = w1 - a.lr * 2 * g1 / n, w2 - a.lr * 2 * g2 / n, b - a.lr * 2 * gb / n
    if epoch % max(1, a.epochs // 5) == 0:
        print(f"epoch {epoch} loss {loss / n:.5f}", flush=True)

out = os.environ["KILN_OUTPUTS"]
with open(os.path.join(out, "model.json"), "w") as f:
    json.dump({"w1": w1, "w2": w2, "b": b, "lr": a.lr}, f)
with open(os.path.join(out, "loss"), "w") as f:
    f.write(f"{loss / n:.6f}")
print(f"final loss {loss / n:.6f} with w1={w1:.3f} w2={w2:.3f} b={b:.3f}", flush=True)
