#!/usr/bin/python3
"""FedDistr written again with scikit-learn and scipy: the peer of
scripts/experiments-feddistr-digits.mjs (run as a script) and of
bench/feddistr.mjs (bench/peers/feddistr.py imports client_upload and
consolidate from here).

    /usr/bin/python3 scripts/feddistr_peer.py runs.json

runs.json (written by the digits driver): {"kMin", "kMax", "runs": [{"seed",
"train", "test", "clients": [[train-row positions], ...]}]} over
scikit-learn's 8x8 digits (sklearn.datasets.load_digits: the rows of its
digits.csv.gz, in file order), the task class of digit s being s // 2.
Prints one JSON object per method with the accuracy of each run's generative
classifier (Bayes' rule over the consolidated Gaussians, scipy logsumexp) on
its test rows.

Every client clusters each task label's rows and uploads one Gaussian per
part; the server matches every pair of clients by
scipy.optimize.linear_sum_assignment on the 2-Wasserstein cost
(scipy.linalg.sqrtm), different task labels forbidden, one "unmatched" column
per row. Methods:

  defaults   fedmix's defaults: each part's covariance shrunk by
             sklearn.covariance.oas, plus 1e-6 times the client's average
             variance on the diagonal; k in kMin..kMax by BIC of the uploaded
             Gaussians (their mixture's log-likelihood on the label's rows over
             the features that vary among them; parameters: weights, means, and
             1 + (1 - rho)(a(a+1)/2 - 1) per shrunk covariance, a the features
             kept), the parts from sklearn's GaussianMixture (reg_covar the same
             ridge), parts of one row not allowed; a matched pair parallel when
             its W2^2 is at most 2 (1/n_a + 1/n_b) times the mean over the two
             of tr S + sum_ij l_i l_j (1 + [i = j]) / (2 (l_i + l_j)) (l: S's
             eigenvalues); sets by complete linkage, one base per client, most
             parallel pairs (W2 / bound) first; each set its members'
             count-weighted merge.
  ml         the method as fedmix had it before issue 23: maximum-likelihood
             covariances plus sklearn's default reg_covar 1e-6, k by
             GaussianMixture.bic, parallel below 3 times the median RMS
             standard deviation sqrt(tr S / d), union-find over the parallel
             matched pairs, each set its member fitted on the most rows.
"""
import json
import sys
import warnings

import numpy as np
from scipy.linalg import sqrtm
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp
from sklearn.covariance import oas
from sklearn.mixture import GaussianMixture

warnings.filterwarnings("ignore")
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
    """Each part's row positions, k chosen by BIC."""
    n, d = Z.shape
    kmax = min(kmax, n)
    kmin = min(kmin, kmax)
    if kmax <= 1:
        return [np.arange(n)]
    active = np.flatnonzero(Z.max(0) > Z.min(0))
    best = None
    for k in range(kmin, kmax + 1):
        gm = None
        if k > 1 or method == "ml":
            try:
                gm = GaussianMixture(k, covariance_type="full", reg_covar=ridge if method == "defaults" else 1e-6, random_state=seed).fit(Z)
            except ValueError:
                continue  # a candidate that cannot be fitted is skipped, as fedmix's are
        labels = np.zeros(n, int) if k == 1 else gm.predict(Z)
        parts = [np.flatnonzero(labels == c) for c in np.unique(labels)]
        if method == "ml":
            score = gm.bic(Z)
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


def client_upload(Xc, tasks, kmin, kmax, seed, method="defaults"):
    """One client's base distributions {label, count, mean, cov}, and each row's base."""
    ridge = 1e-6 * (np.mean(Xc.var(0)) or 1.0)
    bases, assigned = [], np.zeros(len(Xc), dtype=int)
    for label in np.unique(tasks):
        rows = np.flatnonzero(tasks == label)
        for p in split(Xc[rows], kmin, kmax, seed, method, ridge):
            m, S, _ = estimate(Xc[rows[p]], method, ridge)
            assigned[rows[p]] = len(bases)
            bases.append({"label": int(label), "count": len(p), "mean": m, "cov": S})
    return bases, assigned


def noise_of(S):
    lam = np.maximum(np.linalg.eigvalsh(S), 0)
    L = lam[:, None] + lam[None, :]
    P = np.outer(lam, lam) * (1 + np.eye(len(lam)))
    return np.trace(S) + np.sum(np.divide(P, 2 * L, out=np.zeros_like(P), where=L > 0))


def w2(a, b, root_b):
    cross = np.real(sqrtm(root_b @ a["cov"] @ root_b))
    return np.sqrt(max(np.sum((a["mean"] - b["mean"]) ** 2) + np.trace(a["cov"]) + np.trace(b["cov"]) - 2 * np.trace(cross), 0))


def consolidate(uploads, method="defaults"):
    """The consolidated bases {label, count, mean, cov}, and each uploaded base's set (uploads in order)."""
    allb = [dict(b, client=c) for c, u in enumerate(uploads) for b in u]
    d = len(allb[0]["mean"])
    roots = [np.real(sqrtm(b["cov"])) for b in allb]
    noise = [noise_of(b["cov"]) for b in allb] if method == "defaults" else None
    start = np.cumsum([0] + [len(u) for u in uploads])
    rms = np.median([np.sqrt(np.trace(b["cov"]) / d) for b in allb])

    def bound(x, y):
        if method == "ml":
            return 3 * rms
        return np.sqrt(NOISE_FACTOR * (1 / allb[x]["count"] + 1 / allb[y]["count"]) * (noise[x] + noise[y]) / 2)

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
                    limit = bound(start[A] + i, start[B] + j)
                    # parallel: within the bound (ml: below the threshold)
                    if C[i, j] <= limit if method == "defaults" else C[i, j] < limit:
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
    roots_seen = {}
    set_of = [roots_seen.setdefault(find(i), len(roots_seen)) for i in range(len(allb))]
    bases = []
    for r in roots_seen:
        group = [allb[i] for i in members[r]]
        n = sum(b["count"] for b in group)
        if method == "ml":
            rep = max(group, key=lambda b: b["count"])
            mean, cov = rep["mean"], rep["cov"]
        else:
            mean = sum(b["count"] * b["mean"] for b in group) / n
            cov = sum(b["count"] * (b["cov"] + np.outer(b["mean"] - mean, b["mean"] - mean)) for b in group) / n
        bases.append({"label": group[0]["label"], "count": n, "mean": mean, "cov": cov})
    return bases, set_of, start


def classify(bases, X):
    labels = sorted({b["label"] for b in bases})
    total = sum(b["count"] for b in bases)
    joint = np.stack([logsumexp(np.stack([np.log(b["count"] / total) + log_density(X, b["mean"], b["cov"]) for b in bases if b["label"] == c]), 0) for c in labels], 1)
    return np.array(labels)[joint.argmax(1)]


def run(X, tasks, r, kmin, kmax, method):
    train = np.array(r["train"])
    uploads = [client_upload(X[train[rows]], tasks[train[rows]], kmin, kmax, r["seed"] + 3, method)[0] for rows in r["clients"]]
    bases, _, _ = consolidate(uploads, method)
    accuracy = float(np.mean(classify(bases, X[r["test"]]) == tasks[r["test"]]))
    return {"seed": r["seed"], "accuracy": accuracy, "uploaded": sum(len(u) for u in uploads), "consolidated": len(bases)}


def main():
    from sklearn.datasets import load_digits

    spec = json.load(open(sys.argv[1]))
    digits = load_digits()
    X, tasks = digits.data.astype(float), digits.target // 2
    for method in ["defaults", "ml"]:
        runs = [run(X, tasks, r, spec["kMin"], spec["kMax"], method) for r in spec["runs"]]
        acc = [x["accuracy"] for x in runs]
        print(json.dumps({"method": method, "mean": float(np.mean(acc)), "std": float(np.std(acc, ddof=1)) if len(acc) > 1 else 0.0, "runs": runs}))


if __name__ == "__main__":
    main()
