#!/usr/bin/python3
"""The central reference of EXPERIMENTS.md's FedGEM part d: scikit-learn's
GaussianMixture on the pooled rows, its number of components chosen by BIC,
against which FedGEM's estimated K (which nobody gives it) is compared.

usage: /usr/bin/python3 scripts/experiments-fedgem-central-bic.py OUT.json CSV [options]
  --label COL            class column (default label)
  --label-groups SPEC    numeric labels grouped as `fedmix fedgem` does ("0-5,6,7,8,9,10,11-12,13-")
  --one-hot COLS         text columns one-hot encoded (comma-separated)
  --repeats N            seeds 0, 1000, ... (default 5), as `fedmix fedgem --repeats`
  --max-k K              largest K tried (default 3 x the classes)
  --covariance T,...     covariance types (default full,spherical)

Per seed: 80% of the rows drawn at random train (FedGEM's clients hold out
20% each), features standardized on them (as `fedmix fedgem --data`), K in
1..max-k fitted (k-means init, best of 2, random_state = seed), the K of the
lowest BIC kept, and its ARI on the held-out rows. Writes the chosen K and ARI
of every seed, their mean and standard deviation, per covariance type.
"""
import argparse
import json
import math
import sys
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture


def groups(spec):
    out = []
    for part in spec.split(","):
        part = part.strip()
        if "-" in part[1:] or part.endswith("-") or part.startswith("-"):
            lo, hi = part.split("-", 1)
            out.append((float(lo) if lo else -math.inf, float(hi) if hi else math.inf))
        else:
            out.append((float(part), float(part)))
    return out


def load(path, label, label_groups, one_hot):
    df = pd.read_csv(path)
    y = df[label]
    if label_groups:
        spec = groups(label_groups)
        y = y.astype(float).map(lambda v: next(i for i, (lo, hi) in enumerate(spec) if lo <= v <= hi))
    y = pd.factorize(y.astype(str))[0]
    X = df.drop(columns=[label])
    for col in one_hot:
        X = pd.concat([X.drop(columns=[col]), pd.get_dummies(X[col], prefix=col).astype(float)], axis=1)
    return X.to_numpy(dtype=float), y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("csv")
    p.add_argument("--label", default="label")
    p.add_argument("--label-groups")
    p.add_argument("--one-hot", default="")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--max-k", type=int)
    p.add_argument("--covariance", default="full,spherical")
    a = p.parse_args()
    X, y = load(a.csv, a.label, a.label_groups, [c for c in a.one_hot.split(",") if c])
    classes = len(set(y))
    max_k = a.max_k or 3 * classes
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    result = {"data": a.csv, "rows": len(y), "features": X.shape[1], "classes": classes, "maxK": max_k, "covariance": {}}
    t0 = time.time()
    for cov in a.covariance.split(","):
        runs = []
        for r in range(a.repeats):
            seed = 1000 * r
            rng = np.random.default_rng(seed)
            order = rng.permutation(len(y))
            test, train = order[: round(0.2 * len(y))], order[round(0.2 * len(y)) :]
            mean, sd = X[train].mean(0), X[train].std(0)
            sd[sd == 0] = 1
            Z = (X - mean) / sd
            fits = []
            for k in range(1, max_k + 1):
                g = GaussianMixture(k, covariance_type=cov, n_init=2, random_state=seed, reg_covar=1e-6).fit(Z[train])
                fits.append((g.bic(Z[train]), k, g))
            bic, k, g = min(fits, key=lambda f: f[0])
            runs.append({"seed": seed, "k": k, "bic": bic, "ari": adjusted_rand_score(y[test], g.predict(Z[test]))})
            print(f"{a.csv} {cov} seed {seed}: K {k} ARI {runs[-1]['ari']:.3f}", file=sys.stderr, flush=True)
        ks = np.array([x["k"] for x in runs], dtype=float)
        aris = np.array([x["ari"] for x in runs])
        result["covariance"][cov] = {
            "runs": runs,
            "meanK": ks.mean(),
            "stdK": ks.std(ddof=1) if len(ks) > 1 else 0.0,
            "meanAri": aris.mean(),
            "stdAri": aris.std(ddof=1) if len(aris) > 1 else 0.0,
            "hitMaxK": int((ks == max_k).sum()),
        }
    result["seconds"] = time.time() - t0
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
