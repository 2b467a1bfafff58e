#!/usr/bin/python3
"""PyTorch reference values for fedmix's dense networks (test/nn-parity.test.ts).

Run with Debian's interpreter and python3-torch 1.13 (one thread, so the
numbers do not depend on the machine's core count):
    /usr/bin/python3 scripts/gen-nn-fixtures.py
Writes test/fixtures/nn.json. Every computation runs twice and must give the
same bits (checked here), so the file is reproducible. What it holds:

1. "gradients": small networks (6-5-4-6 relu/sigmoid MSE, 5-8-3 relu softmax
   cross-entropy, 4-3-4 tanh/sigmoid BCE, 7-6-2 sigmoid/identity MSE and a
   33-17-9 tanh/identity MSE whose widths fill whole SIMD tiles), each with
   its initial flat parameters (nn.Linear's default init, torch.manual_seed),
   one batch (inputs and targets or labels), every layer's outputs after its
   activation (the last after softmax for the cross-entropy network), the
   loss, and the gradient of every weight and bias, flat in PyTorch's order;
   and the same outputs and gradient computed in f64 from the same values
   ("outputs64", "gradient64"), the exact results both f32 computations round.
2. "epochs": one epoch of Adam (lr 1e-2, with and without weight decay) and of
   SGD (lr 0.05, momentum 0.9 and weight decay 1e-3; and Nesterov) from given
   parameters with a GIVEN batch order (the permutation is in the file, so
   shuffling is out of the comparison): 100 rows in batches of 16 (the last
   one 4 rows). Recorded: the mean of the batch losses weighted by rows (each
   taken before its step), the loss over all rows after the epoch, and the
   parameters after it.
3. "fashionMnist": a 784-128-10 MLP (ReLU, softmax cross-entropy, Adam lr
   1e-3, batch 128, 5 epochs) trained on the first 20,000 rows of Fashion-MNIST's
   training set (pixels / 255) and scored on the first 2,000 rows of its test
   set. (a) With PyTorch's own initialization and shuffling (torch.randperm)
   for seeds 0..4: their accuracies and mean, the reference for the mean
   accuracy of fedmix's MLPClassifier over seeds of its own (one seed's
   accuracy varies by about 0.6 points after this much training, so means
   are compared). (b) "identical": initial parameters and
   per-epoch orders both computed from an integer hash (fmix32, below; the
   test computes the same ones), so that the only difference left is f32
   rounding: its accuracy and final training loss.
"""
import gzip
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "fixtures", "nn.json")
FASHION = "/usr/share/datasets/fashion-mnist"
TRAIN_ROWS = 20_000
TEST_ROWS = 2_000

torch.set_num_threads(1)
torch.use_deterministic_algorithms(True)


def f32list(t):
    return [float(v) for v in np.asarray(t.detach().numpy() if torch.is_tensor(t) else t, dtype=np.float32).ravel()]


def f64list(t):
    return [float(v) for v in t.detach().double().numpy().ravel()]


def set_flat64(net, flat):
    at = 0
    with torch.no_grad():
        for p in net.parameters():
            n = p.numel()
            p.copy_(flat[at:at + n].reshape(p.shape))
            at += n


def activation(name):
    return {"relu": nn.ReLU(), "sigmoid": nn.Sigmoid(), "tanh": nn.Tanh(), "identity": nn.Identity()}[name]


class Net(nn.Module):
    """nn.Linear layers with `hidden` between them and `output` after the last (not softmax: logits)."""

    def __init__(self, sizes, hidden, output):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])
        self.hidden = hidden
        self.output = output

    def forward(self, x):
        outs = []
        for i, lin in enumerate(self.linears):
            x = lin(x)
            last = i == len(self.linears) - 1
            name = self.output if last else self.hidden
            if name != "softmax":
                x = activation(name)(x)
            outs.append(x)
        return x, outs


def flat_params(net):
    return torch.cat([p.detach().reshape(-1) for p in net.parameters()])


def set_flat(net, flat):
    at = 0
    with torch.no_grad():
        for p in net.parameters():
            n = p.numel()
            p.copy_(torch.as_tensor(flat[at:at + n], dtype=torch.float32).reshape(p.shape))
            at += n


def loss_fn(name):
    return {"mse": nn.MSELoss(), "bce": nn.BCELoss(), "softmax-cross-entropy": nn.CrossEntropyLoss()}[name]


def batch_data(gen, rows, sizes, loss):
    x = torch.rand(rows, sizes[0], generator=gen, dtype=torch.float32) * 2 - 1
    if loss == "softmax-cross-entropy":
        t = torch.randint(0, sizes[-1], (rows,), generator=gen, dtype=torch.int64)
    else:
        t = torch.rand(rows, sizes[-1], generator=gen, dtype=torch.float32) * 0.8 + 0.1
    return x, t


def twice(fn):
    """fn() twice; the results must be bitwise equal (determinism of the reference)."""
    a, b = fn(), fn()
    assert json.dumps(a) == json.dumps(b), "PyTorch gave different results on the same input"
    return a


GRADIENT_CASES = [
    ("relu-sigmoid-mse", [6, 5, 4, 6], "relu", "sigmoid", "mse", 8),
    ("relu-softmax-ce", [5, 8, 3], "relu", "softmax", "softmax-cross-entropy", 9),
    ("tanh-sigmoid-bce", [4, 3, 4], "tanh", "sigmoid", "bce", 5),
    ("sigmoid-identity-mse", [7, 6, 2], "sigmoid", "identity", "mse", 3),
    ("tanh-identity-mse-wide", [33, 17, 9], "tanh", "identity", "mse", 13),
]


def gradient_case(seed, name, sizes, hidden, output, loss, rows):
    def run():
        torch.manual_seed(seed)
        net = Net(sizes, hidden, output)
        gen = torch.Generator().manual_seed(1000 + seed)
        x, t = batch_data(gen, rows, sizes, loss)
        net.zero_grad()
        y, outs = net(x)
        value = loss_fn(loss)(y, t)
        value.backward()
        outputs = [f32list(o) for o in outs]
        if output == "softmax":
            outputs[-1] = f32list(torch.softmax(outs[-1], dim=1))
        case = {
            "name": name, "sizes": sizes, "activation": hidden, "outputActivation": output, "loss": loss, "rows": rows,
            "parameters": f32list(flat_params(net)),
            "x": f32list(x),
            "outputs": outputs,
            "lossValue": float(value.item()),
            "gradient": f32list(torch.cat([p.grad.reshape(-1) for p in net.parameters()])),
        }
        if loss == "softmax-cross-entropy":
            case["labels"] = [int(v) for v in t]
        else:
            case["targets"] = f32list(t)
        # the same computation in f64 from the same f32 values: the exact result both f32 computations round
        net64 = Net(sizes, hidden, output).double()
        set_flat64(net64, flat_params(net).double())
        net64.zero_grad()
        y64, outs64 = net64(x.double())
        loss_fn(loss)(y64, t if loss == "softmax-cross-entropy" else t.double()).backward()
        case["outputs64"] = [f64list(o) for o in outs64]
        if output == "softmax":
            case["outputs64"][-1] = f64list(torch.softmax(outs64[-1], dim=1))
        case["gradient64"] = f64list(torch.cat([p.grad.reshape(-1) for p in net64.parameters()]))
        return case
    return twice(run)


EPOCH_CASES = [
    ("adam", {"name": "adam", "learningRate": 1e-2}),
    ("adam-weight-decay", {"name": "adam", "learningRate": 1e-2, "beta1": 0.8, "beta2": 0.99, "eps": 1e-6, "weightDecay": 1e-2}),
    ("sgd-momentum-weight-decay", {"name": "sgd", "learningRate": 0.05, "momentum": 0.9, "weightDecay": 1e-3}),
    ("sgd-nesterov-dampening0", {"name": "sgd", "learningRate": 0.05, "momentum": 0.5, "nesterov": True}),
]


def torch_optimizer(params, spec):
    if spec["name"] == "adam":
        return torch.optim.Adam(params, lr=spec["learningRate"], betas=(spec.get("beta1", 0.9), spec.get("beta2", 0.999)),
                                eps=spec.get("eps", 1e-8), weight_decay=spec.get("weightDecay", 0.0))
    return torch.optim.SGD(params, lr=spec["learningRate"], momentum=spec.get("momentum", 0.0), dampening=spec.get("dampening", 0.0),
                           nesterov=spec.get("nesterov", False), weight_decay=spec.get("weightDecay", 0.0))


def epoch_case(seed, name, spec, sizes=(6, 5, 4, 6), hidden="relu", output="sigmoid", loss="mse", rows=100, batch=16):
    sizes = list(sizes)

    def run():
        torch.manual_seed(seed)
        net = Net(sizes, hidden, output)
        start = f32list(flat_params(net))
        gen = torch.Generator().manual_seed(2000 + seed)
        x = torch.rand(rows, sizes[0], generator=gen)
        t = torch.rand(rows, sizes[-1], generator=gen)
        order = torch.randperm(rows, generator=gen)
        opt = torch_optimizer(net.parameters(), spec)
        f = loss_fn(loss)
        total = 0.0
        for b in range(0, rows, batch):
            idx = order[b:b + batch]
            opt.zero_grad()
            value = f(net(x[idx])[0], t[idx])
            value.backward()
            opt.step()
            total += float(value.item()) * len(idx)
        with torch.no_grad():
            after = float(f(net(x)[0], t).item())
        return {
            "name": name, "sizes": sizes, "activation": hidden, "outputActivation": output, "loss": loss, "optimizer": spec,
            "batchSize": batch, "parameters": start, "x": f32list(x), "targets": f32list(t), "order": [int(i) for i in order],
            "epochLoss": total / rows, "lossAfter": after, "parametersAfter": f32list(flat_params(net)),
        }
    return twice(run)


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = data[3]
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    assert magic >> 8 == 0x08, "unsigned byte idx file"
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion():
    xtr = idx(os.path.join(FASHION, "train-images-idx3-ubyte.gz"))[:TRAIN_ROWS].reshape(TRAIN_ROWS, -1)
    ytr = idx(os.path.join(FASHION, "train-labels-idx1-ubyte.gz"))[:TRAIN_ROWS]
    xte = idx(os.path.join(FASHION, "t10k-images-idx3-ubyte.gz"))[:TEST_ROWS].reshape(TEST_ROWS, -1)
    yte = idx(os.path.join(FASHION, "t10k-labels-idx1-ubyte.gz"))[:TEST_ROWS]
    # as the loader scales: pixel / 255 in f64, then rounded to f32 when copied into the network
    scale = lambda a: torch.from_numpy((a.astype(np.float64) / 255.0).astype(np.float32))
    return scale(xtr), torch.from_numpy(ytr.astype(np.int64)), scale(xte), torch.from_numpy(yte.astype(np.int64))


MASK = 0xFFFFFFFF


def fmix32(h):
    """MurmurHash3's finalizer on a 32-bit integer (the test computes the same with Math.imul)."""
    h &= MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    h ^= h >> 16
    return h


def hash_uniform(i):
    """In [0, 1): fmix32 of i * 0x9E3779B1 + 1 (mod 2^32), over 2^32."""
    return fmix32((i * 0x9E3779B1 + 1) & MASK) / 2.0**32


def hash_parameters(sizes):
    """Every parameter i (flat, PyTorch's order) is (2 u_i - 1) / sqrt(fan_in) in f64, then f32: nn.Linear's bounds."""
    out, i = [], 0
    for a, b in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(a)
        for _ in range(a * b + b):
            out.append((2.0 * hash_uniform(i) - 1.0) * bound)
            i += 1
    return np.asarray(out, dtype=np.float32)


def hash_order(epoch, n):
    """The rows sorted by fmix32(epoch * 1000003 + row), ties by row."""
    keys = [fmix32(epoch * 1000003 + r) for r in range(n)]
    return sorted(range(n), key=lambda r: (keys[r], r))


FASHION_SPEC = {"sizes": [784, 128, 10], "activation": "relu", "optimizer": {"name": "adam", "learningRate": 1e-3}, "batchSize": 128, "epochs": 5}


def train_fashion(xtr, ytr, xte, yte, start=None, orders=None, seed=0):
    sizes = FASHION_SPEC["sizes"]
    torch.manual_seed(seed)
    net = Net(sizes, "relu", "softmax")
    if start is not None:
        set_flat(net, start)
    opt = torch_optimizer(net.parameters(), FASHION_SPEC["optimizer"])
    f = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(seed)
    b = FASHION_SPEC["batchSize"]
    losses = []
    for e in range(FASHION_SPEC["epochs"]):
        order = torch.as_tensor(orders[e]) if orders is not None else torch.randperm(len(xtr), generator=gen)
        total = 0.0
        for s in range(0, len(xtr), b):
            i = order[s:s + b]
            opt.zero_grad()
            value = f(net(xtr[i])[0], ytr[i])
            value.backward()
            opt.step()
            total += float(value.item()) * len(i)
        losses.append(total / len(xtr))
    with torch.no_grad():
        accuracy = float((net(xte)[0].argmax(1) == yte).float().mean().item())
    return {"accuracy": accuracy, "epochLosses": losses}


def fashion_case():
    xtr, ytr, xte, yte = fashion()
    seeds = list(range(5))
    runs = [twice(lambda s=s: train_fashion(xtr, ytr, xte, yte, seed=s)) for s in seeds]
    start = hash_parameters(FASHION_SPEC["sizes"])
    orders = [hash_order(e, TRAIN_ROWS) for e in range(FASHION_SPEC["epochs"])]
    identical = twice(lambda: train_fashion(xtr, ytr, xte, yte, start=start, orders=orders))
    accs = [r["accuracy"] for r in runs]
    return {
        **FASHION_SPEC, "trainRows": TRAIN_ROWS, "testRows": TEST_ROWS,
        "seeds": seeds, "accuracies": accs, "meanAccuracy": float(np.mean(accs)), "spread": float(np.max(accs) - np.min(accs)),
        "epochLosses": [r["epochLosses"] for r in runs],
        "identical": identical,
        # checks that the test's hash functions are the generator's
        "hashCheck": {"parameters0to4": f32list(start[:5]), "order0first5": orders[0][:5], "order4last": orders[4][-1]},
    }


def main():
    assert torch.__version__.startswith("1.13"), f"expected PyTorch 1.13, got {torch.__version__}"
    payload = {
        "generator": "scripts/gen-nn-fixtures.py", "torch": torch.__version__, "numpy": np.__version__,
        "gradients": [gradient_case(i, *c) for i, c in enumerate(GRADIENT_CASES)],
        "epochs": [epoch_case(10 + i, *c) for i, c in enumerate(EPOCH_CASES)],
    }
    if "--no-fashion" not in sys.argv:
        payload["fashionMnist"] = fashion_case()
    with open(OUT, "w") as f:
        json.dump(payload, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(OUT, ROOT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
