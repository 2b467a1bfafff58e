#!/usr/bin/python3
"""PyTorch peer of bench/nn.mjs: one epoch over the 60,000 Fashion-MNIST training
rows of (a) the 784-64-32-64-784 autoencoder (ReLU hidden layers, sigmoid output,
mean squared error, Adam lr 1e-3) at batch 32 and at batch 128, and (b) a 784-128-10
classifier (ReLU, softmax cross-entropy, Adam lr 1e-3) at batch 128. Debian's
python3-torch 1.13, one thread, float32.

Reads the same files as fedmix (Debian's dataset-fashion-mnist; the job names the
folder), scaled as torchvision's ToTensor() (uint8 -> float32, / 255), which is what
fedmix's loader gives (test/fashion-mnist.test.ts). An epoch is what a PyTorch user
writes without a DataLoader: a seeded permutation, then per minibatch a gather of its
rows, forward, loss, zero_grad, backward and Adam's step; the last batch is partial
(60,000 / 128 = 468.75), as DataLoader's default drop_last=False. One epoch warms up,
then each of `repeats` epochs is timed (the network keeps training).

FLOPs per epoch: forward multiply-adds per row (the sum of in x out over the layers)
x 2 flops x 3 (forward + backward ~ 3 x forward) x rows, so that GFLOP/s can be
reported; bench/nn.mjs divides the same figure by fedmix's time.

Prints one JSON line: {"torch", "threads", "rows", "cases": [{"name", "sizes",
"batchSize", "macsPerRow", "flopsPerEpoch", "seconds": [...], "loss": [...]}]}.
Job (JSON, path as the argument): {"folder", "repeats", "cases"?: names to run, "rows"?: the
first rows only (bench/nn.mjs's quick mode)}."""
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn

torch.set_num_threads(1)
torch.set_num_interop_threads(1)
torch.set_default_dtype(torch.float32)

job = json.load(open(sys.argv[1]))
folder = job.get("folder", "/usr/share/datasets/fashion-mnist")
repeats = int(job.get("repeats", 3))


def read_idx(name, header):
    with gzip.open(os.path.join(folder, name), "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header)


limit = job.get("rows")
images = read_idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 784)[:limit]
labels = read_idx("train-labels-idx1-ubyte.gz", 8)[:limit]
X = torch.from_numpy(images.copy()).float().div(255)  # ToTensor()
y = torch.from_numpy(labels.astype(np.int64))
rows = X.shape[0]


def dense(sizes, output):
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    if output is not None:
        layers.append(output)
    return nn.Sequential(*layers)


CASES = {
    "autoencoder-32": dict(sizes=[784, 64, 32, 64, 784], output=nn.Sigmoid, loss=nn.MSELoss, target="x", batch=32),
    "autoencoder-128": dict(sizes=[784, 64, 32, 64, 784], output=nn.Sigmoid, loss=nn.MSELoss, target="x", batch=128),
    # softmax cross-entropy: CrossEntropyLoss takes the logits (log-softmax + NLL in one)
    "classifier-128": dict(sizes=[784, 128, 10], output=None, loss=nn.CrossEntropyLoss, target="y", batch=128),
}


def run_case(name, spec):
    torch.manual_seed(1)
    model = dense(spec["sizes"], spec["output"]() if spec["output"] else None)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = spec["loss"]()
    batch = spec["batch"]
    gen = torch.Generator().manual_seed(1)

    def epoch():
        order = torch.randperm(rows, generator=gen)
        total = 0.0
        for start in range(0, rows, batch):
            idx = order[start:start + batch]
            xb = X[idx]
            target = xb if spec["target"] == "x" else y[idx]
            loss = loss_fn(model(xb), target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        return total / rows

    epoch()  # warm-up
    seconds, losses = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        losses.append(epoch())
        seconds.append(time.perf_counter() - t0)
    sizes = spec["sizes"]
    macs = sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    return {"name": name, "sizes": sizes, "batchSize": batch, "macsPerRow": macs,
            "flopsPerEpoch": 3 * 2 * macs * rows, "seconds": seconds, "loss": losses}


wanted = job.get("cases") or list(CASES)
for name in wanted:
    if name not in CASES:
        sys.exit(f"unknown case {name!r}; choose from {', '.join(CASES)}")
cases = [run_case(name, CASES[name]) for name in wanted]
print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "rows": rows, "cases": cases}))
