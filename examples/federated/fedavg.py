"""Federated averaging (FedAvg) with PyTorch, over the federation channel.

Two data holders each keep their half of a training set; an aggregator
keeps a test set. In every round each holder trains the current model on
its own data for a few epochs and sends its weights (and how many rows it
trained on) to the aggregator; the aggregator averages them, weighted by
rows, sends the average back, and measures it on the test set. Only model
weights cross parties, and only through the parties' kiln servers
(kiln.federation): no process connects to another party.

The roles come from kiln (KILN_ROLE): holder or aggregator. Run with
--central to train the same model on all the training data in one place,
the baseline FedAvg is measured against.

The data is generated from a fixed seed so that the example needs no
download: holder k keeps rows k, k+n, k+2n... of the training set, as if
each had collected its own.
"""
import argparse
import json
import os
import struct
import sys
import time

import numpy as np
import torch

SEED = 7
FEATURES, HIDDEN, CLASSES = 10, 32, 2
N_TRAIN, N_TEST = 4000, 2000
LR, BATCH = 0.05, 32


def dataset():
    """The training and test sets: a boundary no straight line draws."""
    g = np.random.default_rng(SEED)
    x = g.normal(size=(N_TRAIN + N_TEST, FEATURES)).astype(np.float32)
    w = g.normal(size=FEATURES)
    y = ((x @ w) + 2.0 * np.sin(2.0 * x[:, 0]) * x[:, 1] > 0).astype(np.int64)
    return (x[:N_TRAIN], y[:N_TRAIN]), (x[N_TRAIN:], y[N_TRAIN:])


def model():
    torch.manual_seed(SEED)
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, CLASSES))


def train(net, x, y, epochs, seed):
    """epochs of minibatch SGD on (x, y), in an order seed fixes."""
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    g = torch.Generator().manual_seed(seed)
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(epochs):
        order = torch.randperm(len(xs), generator=g)
        for i in range(0, len(xs), BATCH):
            idx = order[i:i + BATCH]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(xs[idx]), ys[idx]).backward()
            opt.step()


def accuracy(net, x, y):
    with torch.no_grad():
        return float((net(torch.from_numpy(x)).argmax(1) == torch.from_numpy(y)).float().mean())


# Weights cross parties as raw little-endian float32, never pickled: a
# party must never run what another sends it.

def pack(net, rows=0):
    flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()]).numpy().astype("<f4")
    return struct.pack("<q", rows) + flat.tobytes()


def unpack(net, data):
    rows = struct.unpack("<q", data[:8])[0]
    flat = np.frombuffer(data[8:], dtype="<f4")
    want = sum(p.numel() for p in net.parameters())
    if flat.size != want:
        sys.exit(f"a model of {flat.size} weights arrived; this model has {want}")
    return rows, torch.from_numpy(flat.copy())


def load(net, flat):
    at = 0
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(flat[at:at + p.numel()].reshape(p.shape))
            at += p.numel()


def holder(args, fed):
    (x, y), _ = dataset()
    holders = sorted(p.party for p in fed.peers() if p.role == "holder") + [os.environ["KILN_PARTY"]]
    holders.sort()
    k = holders.index(os.environ["KILN_PARTY"])
    x, y = x[k::len(holders)], y[k::len(holders)]
    agg = aggregator_of(fed)
    ch = fed.channel()
    net = model()
    moved = 0
    for r in range(1, args.rounds + 1):
        before = ch.bytes_sent + ch.bytes_received
        _, flat = unpack(net, fed.recv(agg, f"model-{r - 1}"))
        load(net, flat)
        train(net, x, y, args.epochs, seed=SEED * 1000 + r * 10 + k)
        fed.send(agg, f"update-{r}", pack(net, rows=len(x)))
        moved = ch.bytes_sent + ch.bytes_received - before
        print(f"round {r}: trained on {len(x)} rows of my own; {moved} bytes through the channel", flush=True)
    _, flat = unpack(net, fed.recv(agg, f"model-{args.rounds}"))
    load(net, flat)
    acc = accuracy(net, x, y)
    print(f"final model: accuracy on my own rows {acc:.4f}", flush=True)
    write_outputs({"accuracy": f"{acc:.4f}", "bytes-per-round": str(moved)})


def aggregator_of(fed):
    found = [p.party for p in fed.peers() if p.role == "aggregator"]
    if len(found) != 1:
        sys.exit(f"FedAvg needs one aggregator, the peers list {len(found)}")
    return found[0]


def aggregator(args, fed):
    _, (tx, ty) = dataset()
    net = model()
    holders = [p.party for p in fed.peers() if p.role == "holder"]
    ch = fed.channel()
    fed.broadcast("model-0", pack(net), holders)
    acc, per_round = 0.0, []
    for r in range(1, args.rounds + 1):
        before = ch.bytes_sent + ch.bytes_received
        updates = fed.gather(f"update-{r}", holders)
        total, avg = 0, None
        for data in updates.values():
            rows, flat = unpack(net, data)
            total += rows
            avg = flat * rows if avg is None else avg + flat * rows
        load(net, avg / total)
        fed.broadcast(f"model-{r}", pack(net), holders)
        acc = accuracy(net, tx, ty)
        moved = ch.bytes_sent + ch.bytes_received - before
        per_round.append(moved)
        print(f"round {r}: averaged {len(updates)} models of {total} rows; test accuracy {acc:.4f}; "
              f"{moved} bytes through the channel", flush=True)
    report = {"accuracy": round(acc, 4), "bytesPerRound": per_round[-1], "rounds": args.rounds}
    print("fedavg " + json.dumps(report), flush=True)
    write_outputs({"accuracy": f"{acc:.4f}", "bytes-per-round": str(per_round[-1])})


def central(args):
    (x, y), (tx, ty) = dataset()
    net = model()
    train(net, x, y, args.rounds * args.epochs, seed=SEED)
    acc = accuracy(net, tx, ty)
    print("central " + json.dumps({"accuracy": round(acc, 4)}), flush=True)
    write_outputs({"accuracy": f"{acc:.4f}"})


def write_outputs(values):
    out = os.environ.get("KILN_OUTPUTS")
    if not out:
        return
    for name, v in values.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "10")))
    ap.add_argument("--epochs", type=int, default=int(os.environ.get("EPOCHS", "2")))
    ap.add_argument("--central", action="store_true", help="train on all the data in one place instead")
    args = ap.parse_args()
    torch.set_num_threads(1)
    start = time.monotonic()
    if args.central:
        central(args)
        return
    from kiln import federation as fed

    role = os.environ.get("KILN_ROLE", "")
    if role == "holder":
        holder(args, fed)
    elif role == "aggregator":
        aggregator(args, fed)
    else:
        sys.exit(f"unknown role {role!r}: FedAvg has holder and aggregator")
    print(f"done in {time.monotonic() - start:.1f}s", flush=True)


if __name__ == "__main__":
    main()
