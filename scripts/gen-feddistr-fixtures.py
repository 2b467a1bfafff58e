#!/usr/bin/python3
"""Reference posteriors for FedDistr's generative classifier
(BaseDistributionClassifier, test/feddistr-global.test.ts), and reference
shrunk covariances for its clients (test/feddistr-defaults.test.ts).

Run with Debian's interpreter (scikit-learn 1.2, scipy):
    /usr/bin/python3 scripts/gen-feddistr-fixtures.py
Writes test/fixtures/feddistr_bayes.json. Three cases, each with its base
distributions (task label, count, mean, covariance), test rows and the
posterior p(class | row) over the classes in ascending order:

1. "gaussianNB": three classes in 4 dimensions, one diagonal Gaussian each.
   sklearn's GaussianNB(var_smoothing=1e-9) is fitted on the rows; its theta_,
   var_ (the smoothing already added), class_count_ make the bases, and its
   predict_proba is the reference.
2. "qda": three classes in 3 dimensions, one full-covariance Gaussian each.
   QuadraticDiscriminantAnalysis(store_covariance=True) is fitted; its means_,
   covariance_ and the class counts make the bases, predict_proba the reference
   (QDA's priors are the class shares, as the classifier's from counts).
3. "mixture": two classes of two and three full-covariance Gaussians in 2
   dimensions with given counts, no fitting: the posterior computed with
   scipy.stats.multivariate_normal.logpdf and logsumexp,
   p(c | z) = sum_{b in c} w_b N(z; m_b, S_b) / sum_b w_b N(z; m_b, S_b),
   w_b = count_b / total.

Writes test/fixtures/feddistr_shrinkage.json too: row sets (fewer rows than
features with a constant feature, many rows, three rows), each with the
maximum-likelihood covariance and its shrunk forms: full by
sklearn.covariance.oas and sklearn.covariance.ledoit_wolf (covariance and
intensity), diagonal by the rules of ts/federated/feddistr/covariance.ts
written in numpy (scikit-learn has no diagonal shrinkage): Ledoit-Wolf's on the
variances, beta = (1/n^2) sum_i sum_j (x_ij^2 - s_jj)^2, delta = sum_j (s_jj -
mu)^2, and the Gaussian one, (2 / (n + 1)) sum_j s_jj^2 / delta.
"""
import json
import os

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.covariance import ledoit_wolf, oas
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
from sklearn.naive_bayes import GaussianNB

rng = np.random.default_rng(14)


def rows_of(means, scales, counts, full=False):
    X, y = [], []
    for k, (m, s, n) in enumerate(zip(means, scales, counts)):
        d = len(m)
        if full:
            A = rng.normal(size=(d, d)) * s
            X.append(rng.normal(size=(n, d)) @ A.T + m)
        else:
            X.append(rng.normal(size=(n, d)) * s + m)
        y += [k] * n
    return np.vstack(X), np.array(y)


def listify(a):
    return [float(v) for v in np.ravel(a)]


out = {}

# 1. GaussianNB
means = [np.array([0.0, 0, 0, 0]), np.array([1.5, -1, 0.5, 2]), np.array([-1, 2, 1, -1.5])]
X, y = rows_of(means, [np.array([1, 0.5, 2, 1]), np.array([0.7, 1.2, 1, 0.4]), np.array([1.5, 1, 0.6, 0.9])], [60, 90, 45])
nb = GaussianNB(var_smoothing=1e-9).fit(X, y)
test = rng.normal(size=(25, 4)) * 1.5 + 0.3
out["gaussianNB"] = {
    "covariance": "diagonal",
    "bases": [{"label": int(k), "count": int(nb.class_count_[k]), "mean": listify(nb.theta_[k]), "covariance": listify(nb.var_[k])} for k in range(3)],
    "test": [listify(r) for r in test],
    "proba": [listify(r) for r in nb.predict_proba(test)],
}

# 2. QDA
means = [np.array([0.0, 0, 0]), np.array([2.0, 1, -1]), np.array([-1.0, 2, 1])]
X, y = rows_of(means, [0.8, 1.0, 0.6], [70, 50, 80], full=True)
qda = QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
counts = np.bincount(y)
test = rng.normal(size=(25, 3)) * 1.5 + 0.4
out["qda"] = {
    "covariance": "full",
    "bases": [{"label": int(k), "count": int(counts[k]), "mean": listify(qda.means_[k]), "covariance": listify(qda.covariance_[k])} for k in range(3)],
    "test": [listify(r) for r in test],
    "proba": [listify(r) for r in qda.predict_proba(test)],
}

# 3. class-conditional mixtures, computed directly
bases = []
for label, count, mean in [(3, 40, [0, 0]), (3, 10, [3, 3]), (7, 25, [1.5, 0]), (7, 25, [-2, 2]), (7, 5, [0, -3])]:
    A = rng.normal(size=(2, 2)) * 0.7
    S = A @ A.T + 0.2 * np.eye(2)
    bases.append({"label": label, "count": count, "mean": [float(v) for v in mean], "covariance": listify(S)})
test = rng.normal(size=(30, 2)) * 2.5
total = sum(b["count"] for b in bases)
labels = sorted({b["label"] for b in bases})
proba = []
for z in test:
    terms = {c: [] for c in labels}
    for b in bases:
        lw = np.log(b["count"] / total) + multivariate_normal(mean=b["mean"], cov=np.reshape(b["covariance"], (2, 2))).logpdf(z)
        terms[b["label"]].append(lw)
    lj = np.array([logsumexp(terms[c]) for c in labels])
    proba.append(listify(np.exp(lj - logsumexp(lj))))
out["mixture"] = {"covariance": "full", "bases": bases, "test": [listify(r) for r in test], "proba": proba}

path = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "feddistr_bayes.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print("wrote", path)


# shrunk covariances
def diagonal_shrinkage(X, rule):
    n, d = X.shape
    Xc = X - X.mean(0)
    s = (Xc**2).mean(0)
    mu = s.mean()
    delta = np.sum((s - mu) ** 2)
    if delta <= 0:
        return s, 0.0
    if rule == "oas":
        rho = min(1.0, 2 / (n + 1) * np.sum(s**2) / delta)
    else:
        beta = np.sum((Xc**2 - s) ** 2) / n**2
        rho = min(beta, delta) / delta
    return (1 - rho) * s + rho * mu, rho


cases = {}
wide = rng.normal(size=(12, 20)) * rng.uniform(0.2, 3, size=20) + rng.normal(size=20)
wide[:, 3] = 5.0
A = rng.normal(size=(6, 6))
tall = rng.normal(size=(200, 6)) @ A.T + 1.0
tiny = rng.normal(size=(3, 5)) * 2
for name, X in [("wide", wide), ("tall", tall), ("tiny", tiny)]:
    S_oas, r_oas = oas(X)
    S_lw, r_lw = ledoit_wolf(X)
    d_oas, rd_oas = diagonal_shrinkage(X, "oas")
    d_lw, rd_lw = diagonal_shrinkage(X, "ledoit-wolf")
    cases[name] = {
        "rows": [listify(r) for r in X],
        "ml": listify(np.cov(X.T, bias=True)),
        "full": {"oas": {"covariance": listify(S_oas), "rho": float(r_oas)}, "ledoit-wolf": {"covariance": listify(S_lw), "rho": float(r_lw)}},
        "diagonal": {"oas": {"covariance": listify(d_oas), "rho": float(rd_oas)}, "ledoit-wolf": {"covariance": listify(d_lw), "rho": float(rd_lw)}},
    }
path = os.path.join(os.path.dirname(__file__), "..", "test", "fixtures", "feddistr_shrinkage.json")
with open(path, "w") as f:
    json.dump(cases, f, indent=1)
print("wrote", path)
