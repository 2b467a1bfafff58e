#!/usr/bin/python3
"""scikit-learn + python3-igraph + PyTorch peer of bench/communities.mjs: the
community-based federated anomaly detection pipeline (Nardi, Valerio,
Passarella) as the paper's public code writes it, on the Fashion-MNIST clients
bench/communities.mjs dealt (the same rows per client, read from the job).

1. Local detectors: per client sklearn's OneClassSVM(nu, gamma) fitted on its
   rows; as pyod does, anomaly score = -decision_function and threshold =
   numpy.percentile(training scores, 100 (1 - contamination)); a row is an
   inlier when its score is at most the threshold. in_ii = the share of the
   client's own rows its detector calls inliers.
2. Association, all pairs: client i scores every other client's detector j on
   its own rows (in_ji) and accepts j when |in_ji - in_ii| <= q; i and j link
   when both accept.
3. Communities: igraph Graph.community_fastgreedy().as_clustering().
4. Per community: FedAvg of a PyTorch autoencoder d-64-32-64-d (ReLU, sigmoid
   output, MSE, Adam), `rounds` rounds of `epochs` local epochs in minibatches
   of `batch`; each round every member starts from the global weights with a
   fresh Adam (as fedmix's FedAvg client), the server averages weighted by
   rows. A community of one trains alone for rounds x epochs epochs (one Adam
   run), as fedmix's trainCommunities. Score: per-row reconstruction MSE;
   per-client test ROC-AUC (sklearn), outliers the positive class.

Timed with time.perf_counter (wall) and time.process_time (CPU), data loading
excluded: the fits (all clients, with their thresholds and in_ii), the
association phase (the fits, the n (n - 1) scorings and the decisions),
community detection, the training and scoring, and the whole pipeline. One thread: the caller sets
OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1, and torch.set_num_threads(1) here.

Job (JSON, path as the argument): {"folder", "train": [[row, ...] per client],
"test": [[row, ...] per client], "inlierClass": [...], "nu", "gamma",
"contamination", "q", "rounds", "epochs", "batch", "lr", "hidden", "seed"}.
Prints one JSON line: timings (ms), the edges, the communities (lists of client
positions), per-client AUCs, versions and thread counts.
"""
import gzip
import json
import os
import sys
import time

import igraph
import numpy as np
import sklearn
import torch
from sklearn.metrics import roc_auc_score
from sklearn.svm import OneClassSVM
from torch import nn

torch.set_num_threads(1)
torch.set_num_interop_threads(1)

job = json.load(open(sys.argv[1]))
folder = job["folder"]


def read_idx(name, header):
    with gzip.open(os.path.join(folder, name), "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header)


def scaled(images, rows):
    # fedmix's loader: uint8 / 255 in float32 (ToTensor()), widened to float64
    return (images[np.asarray(rows, dtype=np.int64)].astype(np.float32) / np.float32(255)).astype(np.float64)


train_images = read_idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 784)
test_images = read_idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)
test_labels = read_idx("t10k-labels-idx1-ubyte.gz", 8)
clients = [scaled(train_images, rows) for rows in job["train"]]
tests = [scaled(test_images, rows) for rows in job["test"]]
outlier = [(test_labels[np.asarray(rows)] != c).astype(np.int64) for rows, c in zip(job["test"], job["inlierClass"])]
n = len(clients)
nu, gamma, contamination, q = job["nu"], job["gamma"], job["contamination"], job["q"]

t_start = time.perf_counter()
c_start = time.process_time()

# 1. local detectors, thresholded as pyod
detectors = []
own = []
for x in clients:
    model = OneClassSVM(nu=nu, gamma=gamma).fit(x)
    scores = -model.decision_function(x)
    threshold = np.percentile(scores, 100 * (1 - contamination))
    detectors.append((model, threshold))
    own.append(float(np.mean(scores <= threshold)))
t_fits = time.perf_counter()
c_fits = time.process_time()

# 2. all pairs: client i applies every partner's detector to its own rows
accept = np.zeros((n, n), dtype=bool)
for i, x in enumerate(clients):
    for j, (model, threshold) in enumerate(detectors):
        if i == j:
            continue
        share = float(np.mean(-model.decision_function(x) <= threshold))
        accept[i, j] = abs(share - own[i]) <= q
edges = [(i, j) for i in range(n) for j in range(i + 1, n) if accept[i, j] and accept[j, i]]
t_assoc = time.perf_counter()
c_assoc = time.process_time()

# 3. communities
graph = igraph.Graph(n=n, edges=edges)
clustering = graph.community_fastgreedy().as_clustering()
membership = list(clustering.membership)
t_comm = time.perf_counter()
c_comm = time.process_time()

# 4. per-community FedAvg of the autoencoder, then every client's test AUC
d = clients[0].shape[1]
sizes = [d, *job["hidden"], d]


def autoencoder():
    torch.manual_seed(job["seed"])
    layers = []
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        layers.append(nn.ReLU() if k < len(sizes) - 2 else nn.Sigmoid())
    return nn.Sequential(*layers)


loss_fn = nn.MSELoss()
gen = torch.Generator().manual_seed(job["seed"])


def train(model, x, epochs):
    opt = torch.optim.Adam(model.parameters(), lr=job["lr"])
    for _ in range(epochs):
        order = torch.randperm(x.shape[0], generator=gen)
        for start in range(0, x.shape[0], job["batch"]):
            xb = x[order[start:start + job["batch"]]]
            loss = loss_fn(model(xb), xb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()


data = [torch.from_numpy(x).float() for x in clients]
groups = {}
for i, g in enumerate(membership):
    groups.setdefault(g, []).append(i)
auc = [None] * n
for members in groups.values():
    model = autoencoder()
    if len(members) == 1:
        train(model, data[members[0]], job["rounds"] * job["epochs"])
    else:
        weights = np.array([data[i].shape[0] for i in members], dtype=np.float64)
        weights /= weights.sum()
        for _ in range(job["rounds"]):
            start = {k: v.clone() for k, v in model.state_dict().items()}
            total = {k: torch.zeros_like(v) for k, v in start.items()}
            for i, w in zip(members, weights):
                model.load_state_dict(start)
                train(model, data[i], job["epochs"])
                for k, v in model.state_dict().items():
                    total[k] += float(w) * v
            model.load_state_dict(total)
    with torch.no_grad():
        for i in members:
            t = torch.from_numpy(tests[i]).float()
            err = ((model(t) - t) ** 2).mean(dim=1).double().numpy()
            auc[i] = float(roc_auc_score(outlier[i], err))
t_end = time.perf_counter()
c_end = time.process_time()

ms = lambda a, b: (b - a) * 1000  # noqa: E731
print(json.dumps({
    "fitMs": ms(t_start, t_fits),
    "associationMs": ms(t_start, t_assoc),
    "communityMs": ms(t_assoc, t_comm),
    "trainingMs": ms(t_comm, t_end),
    "totalMs": ms(t_start, t_end),
    # CPU time of this process (all its threads: one here), robust to other programs' load
    "cpu": {"fitMs": ms(c_start, c_fits), "associationMs": ms(c_start, c_assoc), "communityMs": ms(c_assoc, c_comm),
            "trainingMs": ms(c_comm, c_end), "totalMs": ms(c_start, c_end)},
    "edges": edges,
    "ownInlierShare": own,
    "nSupport": [int(m.n_support_[0]) for m, _ in detectors],
    "membership": membership,
    "modularity": float(clustering.modularity) if edges else float("nan"),
    "auc": auc,
    "versions": {"sklearn": sklearn.__version__, "igraph": igraph.__version__, "torch": torch.__version__, "numpy": np.__version__},
    "threads": torch.get_num_threads(),
}).replace("NaN", "null"))
