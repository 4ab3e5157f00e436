"""Score the trained model on fresh data from the same distribution."""
import argparse
import os

import torch

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
a = p.parse_args()
model = torch.nn.Linear(4, 1)
model.load_state_dict(torch.load(a.model))
g = torch.Generator().manual_seed(4242)
x = torch.randn(1000, 4, generator=g)
y = x @ torch.tensor([[2.0], [-3.0], [0.5], [1.0]])
mse = torch.nn.functional.mse_loss(model(x), y).item()
print(f"held-out mse {mse:.6f}")
with open(os.path.join(os.environ["KILN_OUTPUTS"], "mse"), "w") as f:
    f.write(f"{mse:.6f}")
if mse > 0.01:
    raise SystemExit(f"model too weak: mse {mse}")
