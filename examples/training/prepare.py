"""Make a synthetic regression set and save it as a tensor file."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--rows", type=int, default=4096)
a = p.parse_args()
g = torch.Generator().manual_seed(99)
x = torch.randn(a.rows, 4, generator=g)
y = x @ torch.tensor([[2.0], [-3.0], [0.5], [1.0]]) + 0.01 * torch.randn(a.rows, 1, generator=g)
torch.save((x, y), a.out)
print(f"wrote {a.rows} rows to {a.out}")
