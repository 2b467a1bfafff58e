#!/usr/bin/python3
"""FedDistr written again with scikit-learn and scipy: the peer of
scripts/experiments-feddistr-digits.mjs, which runs fedmix on the same rows,
splits and partitions and prints both.

    /usr/bin/python3 scripts/feddistr-peer.py runs.json

runs.json (written by the driver): {"kMin", "kMax", "runs": [{"seed", "train",
"test", "clients": [[train-row positions], ...]}]} over scikit-learn's 8x8
digits (sklearn.datasets.load_digits: the rows of its digits.csv.gz, in file
order), the task class of digit s being s // 2. Prints one JSON object per
method with the accuracy of each run's generative classifier on its test rows.

Methods, every client clustering each task label's rows and uploading one
Gaussian per part, the server matching every pair of clients by
scipy.optimize.linear_sum_assignment on the 2-Wasserstein cost
(scipy.linalg.sqrtm), keeping the largest member of each parallel set, the
global model Bayes' rule over the consolidated Gaussians (scipy logsumexp):

  defaults   fedmix's defaults: each part's covariance shrunk by
             sklearn.covariance.oas, plus 1e-6 times the client's average
             variance on the diagonal; k in kMin..kMax by BIC of the uploaded
             Gaussians (their mixture's log-likelihood on the label's rows over
             the features that vary among them, parameters: weights, means, and
             1 + (1 - rho)(d(d+1)/2 - 1) per shrunk covariance), the parts from
             sklearn's GaussianMixture (reg_covar the same ridge), parts of one
             row not allowed; a matched pair parallel when its W2^2 is at most
             2 (1/n_a + 1/n_b) times the mean over the two of tr S +
             sum_ij l_i l_j (1 + [i = j]) / (2 (l_i + l_j)); sets by complete
             linkage, one base per client, most parallel pairs first.
  ml         the same method as fedmix had it before: maximum-likelihood
             covariances plus sklearn's default reg_covar 1e-6, k by
             GaussianMixture.bic, parallel below 3 times the median RMS
             standard deviation sqrt(tr S / d), union-find over parallel pairs.
"""
import json
import sys

import numpy as np
from scipy.linalg import sqrtm
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from sklearn.covariance import oas
from sklearn.datasets import load_digits
from sklearn.mixture import GaussianMixture

NOISE_FACTOR = 2
MIN_PART_ROWS = 2


def log_density(Z, mean, S):
    w, V = np.linalg.eigh(S)
    y = (Z - mean) @ V
    return -0.5 * (len(mean) * np.log(2 * np.pi) + np.sum(np.log(w)) + np.sum(y**2 / w, 1))


def estimate(Z, method, ridge):
    """A part's mean, covariance and shrinkage intensity."""
    n, d = Z.shape
    mean = Z.mean(0)
    if method == "ml":
        return mean, np.cov(Z.T, bias=True).reshape(d, d) + 1e-6 * np.eye(d), 0.0
    if n == 1:
        return mean, ridge * np.eye(d), 0.0
    S, rho = oas(Z)
    return mean, S + ridge * np.eye(d), rho


def split(Z, kmin, kmax, seed, method, ridge):
    """Each part's rows, k chosen by BIC."""
    n, d = Z.shape
    kmax = min(kmax, n)
    kmin = min(kmin, kmax)
    if kmax <= 1:
        return [np.arange(n)]
    active = np.flatnonzero(Z.max(0) > Z.min(0))
    best = None
    for k in range(kmin, kmax + 1):
        if k == 1:
            labels = np.zeros(n, int)
        else:
            try:
                gm = GaussianMixture(k, covariance_type="full", reg_covar=ridge if method == "defaults" else 1e-6, random_state=seed).fit(Z)
            except ValueError:
                continue
            labels = gm.predict(Z)
        parts = [np.flatnonzero(labels == c) for c in np.unique(labels)]
        if method == "ml":
            score = gm.bic(Z) if k > 1 else GaussianMixture(1, covariance_type="full", random_state=seed).fit(Z).bic(Z)
        else:
            if len(parts) > 1 and min(len(p) for p in parts) < MIN_PART_ROWS:
                continue
            a = len(active)
            D = a * (a + 1) / 2
            terms, params = [], len(parts) - 1
            for p in parts:
                m, S, rho = estimate(Z[p], method, ridge)
                terms.append(np.log(len(p) / n) + log_density(Z[:, active], m[active], S[np.ix_(active, active)]))
                params += a + 1 + (1 - rho) * (D - 1)
            score = -2 * np.sum(logsumexp(np.stack(terms), 0)) + params * np.log(n)
        if best is None or score < best[0]:
            best = (score, parts)
    return best[1] if best else [np.arange(n)]


def noise_of(S):
    lam = np.maximum(np.linalg.eigvalsh(S), 0)
    L = lam[:, None] + lam[None, :]
    P = np.outer(lam, lam) * (1 + np.eye(len(lam)))
    return np.trace(S) + np.sum(np.divide(P, 2 * L, out=np.zeros_like(P), where=L > 0))


def w2(a, b, root_b):
    cross = np.real(sqrtm(root_b @ a["cov"] @ root_b))
    return np.sqrt(max(np.sum((a["mean"] - b["mean"]) ** 2) + np.trace(a["cov"]) + np.trace(b["cov"]) - 2 * np.trace(cross), 0))


def run(X, tasks, r, kmin, kmax, method):
    d = X.shape[1]
    train = np.array(r["train"])
    uploads = []
    for c, rows in enumerate(r["clients"]):
        Xc, tc = X[train[rows]], tasks[train[rows]]
        ridge = 1e-6 * (np.mean(Xc.var(0)) or 1.0)
        ups = []
        for label in np.unique(tc):
            Z = Xc[tc == label]
            for p in split(Z, kmin, kmax, r["seed"] + 3, method, ridge):
                m, S, _ = estimate(Z[p], method, ridge)
                ups.append({"client": c, "label": label, "count": len(p), "mean": m, "cov": S})
        uploads.append(ups)
    allb = [b for u in uploads for b in u]
    roots = [np.real(sqrtm(b["cov"])) for b in allb]
    for b in allb:
        b["noise"] = noise_of(b["cov"])
    start = np.cumsum([0] + [len(u) for u in uploads])
    rms = np.median([np.sqrt(np.trace(b["cov"]) / d) for b in allb])

    def bound(x, y):
        if method == "ml":
            return 3 * rms
        return np.sqrt(NOISE_FACTOR * (1 / allb[x]["count"] + 1 / allb[y]["count"]) * (allb[x]["noise"] + allb[y]["noise"]) / 2)

    parallel, matched = set(), []
    for A in range(len(uploads)):
        for B in range(A + 1, len(uploads)):
            a, b = uploads[A], uploads[B]
            if not a or not b:
                continue
            C = np.full((len(a), len(b) + len(a)), np.inf)
            most = 0.0
            for i, x in enumerate(a):
                for j, y in enumerate(b):
                    if x["label"] != y["label"]:
                        continue
                    C[i, j] = w2(x, y, roots[start[B] + j])
                    most = max(most, C[i, j])
                    if C[i, j] <= bound(start[A] + i, start[B] + j):
                        parallel.add((start[A] + i, start[B] + j))
            for i in range(len(a)):
                C[i, len(b) + i] = (most + 1) * (len(a) + len(b) + 1)
            C[np.isinf(C)] = 1e300
            for i, j in zip(*linear_sum_assignment(C)):
                x, y = start[A] + i, start[B] + j
                if j < len(b) and (x, y) in parallel:
                    matched.append((C[i, j] / bound(x, y), x, y))
    parent = list(range(len(allb)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    members = {i: [i] for i in range(len(allb))}
    for _, x, y in sorted(matched):
        rx, ry = find(x), find(y)
        if rx == ry:
            continue
        if method == "defaults":
            if {allb[i]["client"] for i in members[rx]} & {allb[j]["client"] for j in members[ry]}:
                continue
            if not all((min(i, j), max(i, j)) in parallel for i in members[rx] for j in members[ry]):
                continue
        lo, hi = min(rx, ry), max(rx, ry)
        parent[hi] = lo
        members[lo] += members.pop(hi)
    sets = {}
    for i in range(len(allb)):
        sets.setdefault(find(i), []).append(allb[i])
    bases = [dict(max(g, key=lambda b: b["count"]), count=sum(b["count"] for b in g)) for g in sets.values()]
    labels = sorted({b["label"] for b in bases})
    total = sum(b["count"] for b in bases)
    Xt = X[r["test"]]
    joint = np.stack([logsumexp(np.stack([np.log(b["count"] / total) + log_density(Xt, b["mean"], b["cov"]) for b in bases if b["label"] == c]), 0) for c in labels], 1)
    accuracy = float(np.mean(np.array(labels)[joint.argmax(1)] == tasks[r["test"]]))
    return {"seed": r["seed"], "accuracy": accuracy, "uploaded": len(allb), "consolidated": len(bases)}


def main():
    spec = json.load(open(sys.argv[1]))
    digits = load_digits()
    X, tasks = digits.data.astype(float), digits.target // 2
    for method in ["defaults", "ml"]:
        runs = [run(X, tasks, r, spec["kMin"], spec["kMax"], method) for r in spec["runs"]]
        acc = [x["accuracy"] for x in runs]
        print(json.dumps({"method": method, "mean": float(np.mean(acc)), "std": float(np.std(acc, ddof=1)) if len(acc) > 1 else 0.0, "runs": runs}))


if __name__ == "__main__":
    main()
