#!/usr/bin/python3
"""scikit-learn / scipy peer of bench/feddistr.mjs: FedDistr's one-shot
pipeline, written as fedmix's client and server roles do it
(ts/federated/feddistr/client.ts and server.ts), on the same client splits.

clients   per client and task label: GaussianMixture (full covariances,
          reg_covar 1e-6) for k in kMin..min(kMax, rows), the lowest BIC kept
          (one component when a label has a single row); per cluster its row
          count, mean and maximum-likelihood covariance plus 1e-6 on the diagonal
server    threshold 3 x the median over the uploads of sqrt(tr S / d); for every
          pair of clients the 2-Wasserstein cost (scipy.linalg.sqrtm) between
          their base distributions of equal task label (+inf otherwise), one
          "unmatched" column per row, scipy.optimize.linear_sum_assignment;
          matched pairs below the threshold joined by union-find; each set
          represented by its member fitted on the most rows

Timed per phase (clients, server) over `repeats` runs; the last run's
consolidated count and adjusted Rand index against the true subclasses are
reported for the agreement check. Run with OMP_NUM_THREADS=1 (bench/common.mjs).
"""
import json
import sys
import time
import warnings

import numpy as np
from scipy.linalg import sqrtm
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

warnings.filterwarnings("ignore")
job = json.load(open(sys.argv[1]))
d = job["d"]
REG = 1e-6


def load(c):
    X = np.ascontiguousarray(np.fromfile(c["path"], dtype="<f8").reshape(d, c["n"]).T)
    labels = np.fromfile(c["labels"], dtype="<i4")
    return X, labels


def cluster(Z, seed):
    m = len(Z)
    kmax = min(job["kMax"], m)
    kmin = min(job["kMin"], kmax)
    if kmax <= 1:
        return np.zeros(m, dtype=int)
    best, best_bic = None, np.inf
    for k in range(kmin, kmax + 1):
        try:
            g = GaussianMixture(k, covariance_type="full", reg_covar=REG, random_state=seed).fit(Z)
        except ValueError:
            continue  # a candidate that cannot be fitted is skipped, as fedmix's selection does
        b = g.bic(Z)
        if b < best_bic:
            best, best_bic = g, b
    return best.predict(Z) if best is not None else np.zeros(m, dtype=int)


def client(X, labels, seed):
    bases = []
    assigned = np.zeros(len(X), dtype=int)
    for label in np.unique(labels):
        rows = np.flatnonzero(labels == label)
        Z = X[rows]
        clusters = cluster(Z, seed)
        for c in range(clusters.max() + 1):
            members = clusters == c
            if not members.any():
                continue
            z = Z[members]
            mean = z.mean(axis=0)
            cov = (z - mean).T @ (z - mean) / len(z) + REG * np.eye(d)
            assigned[rows[members]] = len(bases)
            bases.append((int(label), len(z), mean, cov))
    return bases, assigned


def w2(a, b):
    _, _, ma, Sa = a
    _, _, mb, Sb = b
    rb = sqrtm(Sb).real
    cross = sqrtm(rb @ Sa @ rb).real
    v = np.sum((ma - mb) ** 2) + np.trace(Sa) + np.trace(Sb) - 2 * np.trace(cross)
    return float(np.sqrt(max(v, 0.0)))


def server(uploads):
    allb = [b for u in uploads for b in u]
    start = np.cumsum([0] + [len(u) for u in uploads])
    threshold = 3 * float(np.median([np.sqrt(np.trace(b[3]) / d) for b in allb]))
    parent = list(range(len(allb)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for A in range(len(uploads)):
        for B in range(A + 1, len(uploads)):
            a, b = uploads[A], uploads[B]
            na, nb = len(a), len(b)
            cost = np.full((na, nb + na), np.inf)
            most = 0.0
            for i in range(na):
                for j in range(nb):
                    if a[i][0] == b[j][0]:
                        c = w2(a[i], b[j])
                        cost[i, j] = c
                        most = max(most, c)
            for i in range(na):
                cost[i, nb + i] = (most + 1) * (na + nb + 1)
            rows, cols = linear_sum_assignment(cost)
            for i, j in zip(rows, cols):
                if j < nb and cost[i, j] < threshold:
                    ra, rb = find(start[A] + i), find(start[B] + j)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
    roots = {}
    set_of = [roots.setdefault(find(i), len(roots)) for i in range(len(allb))]
    # the dominant member of each set stands for it
    reps = {}
    for i, b in enumerate(allb):
        s = set_of[i]
        if s not in reps or b[1] > allb[reps[s]][1]:
            reps[s] = i
    return set_of, start, len(roots)


clients = [load(c) for c in job["clients"]]
subclasses = [np.fromfile(c["subclasses"], dtype="<i4") for c in job["clients"]]
times = {"clients": [], "server": []}
for r in range(job["repeats"]):
    t0 = time.perf_counter()
    results = [client(X, labels, job["seed"]) for X, labels in clients]
    t1 = time.perf_counter()
    set_of, start, count = server([u for u, _ in results])
    t2 = time.perf_counter()
    times["clients"].append((t1 - t0) * 1000)
    times["server"].append((t2 - t1) * 1000)

predicted = np.concatenate([np.array(set_of)[start[c] + assigned] for c, (_, assigned) in enumerate(results)])
truth = np.concatenate(subclasses)
print(json.dumps({
    "ms": times,
    "consolidated": count,
    "uploaded": int(start[-1]),
    "ari": float(adjusted_rand_score(truth, predicted)),
}))
