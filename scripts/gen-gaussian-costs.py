#!/usr/bin/python3
"""Reference costs between Gaussians for fedmix's batched Gaussian costs
(crates/fedmix-core/src/gaussian_costs.rs, ts/federated/feddistr/gaussian.ts).

Run with Debian's interpreter (python3-scipy, python3-numpy):
    /usr/bin/python3 scripts/gen-gaussian-costs.py
Writes test/fixtures/gaussian_costs.json: cases, each two sets of Gaussians
(a: na, b: nb; means row after row, covariances full d x d row-major or d
variances) and the na x nb matrices, row-major, of

  wasserstein    W2 = sqrt(|ma - mb|^2 + tr(Sa + Sb - 2 sqrtm(sqrtm(Sb) Sa sqrtm(Sb))))
                 with scipy.linalg.sqrtm (the real part; the diagonal form is
                 the same formula on diagonal matrices)
  bhattacharyya  1/8 dm' S^-1 dm + 1/2 ln(det S / sqrt(det Sa det Sb)),
                 S = (Sa + Sb) / 2, by numpy.linalg.solve and slogdet

Covariances are random SPD matrices (A A' / d + a ridge) at scales from 0.1 to
10, means spread so that most pairs are well apart and some share a mean (the
trace term alone). One full case has a rank-deficient covariance in b (a
semi-definite S_b: W2 is defined, Bhattacharyya is not and is left out).
"""
import json
import os

import numpy as np
from scipy.linalg import sqrtm


def spd(rng, d, scale, rank=None):
    r = d if rank is None else rank
    A = rng.normal(size=(d, r))
    S = A @ A.T / r * scale
    if rank is None:
        S += np.eye(d) * 0.05 * scale
    return (S + S.T) / 2


def w2(ma, Sa, mb, Sb):
    rb = sqrtm(Sb).real
    cross = sqrtm(rb @ Sa @ rb).real
    v = np.sum((ma - mb) ** 2) + np.trace(Sa) + np.trace(Sb) - 2 * np.trace(cross)
    return float(np.sqrt(max(v, 0.0)))


def bhattacharyya(ma, Sa, mb, Sb):
    S = (Sa + Sb) / 2
    dm = ma - mb
    quad = dm @ np.linalg.solve(S, dm)
    _, ld = np.linalg.slogdet(S)
    _, la = np.linalg.slogdet(Sa)
    _, lb = np.linalg.slogdet(Sb)
    return float(quad / 8 + (ld - 0.5 * (la + lb)) / 2)


def case(rng, name, d, na, nb, form, singular=False):
    def make(n, shared=None):
        means, covs = [], []
        for i in range(n):
            scale = 10 ** rng.uniform(-1, 1)
            m = rng.normal(size=d) * 3 if shared is None or i % 2 else shared[i % len(shared)].copy()
            S = spd(rng, d, scale)
            if form == "diagonal":
                S = np.diag(np.diag(S))
            means.append(m)
            covs.append(S)
        return means, covs

    ma, Sa = make(na)
    mb, Sb = make(nb, shared=ma)
    if singular:
        Sb[0] = spd(rng, d, 2.0, rank=max(1, d // 2))
    out = {"name": name, "d": d, "form": form, "na": na, "nb": nb}
    flat = (lambda S: np.diag(S)) if form == "diagonal" else (lambda S: S.reshape(-1))
    out["a"] = {"means": np.concatenate(ma).tolist(), "covariances": np.concatenate([flat(S) for S in Sa]).tolist()}
    out["b"] = {"means": np.concatenate(mb).tolist(), "covariances": np.concatenate([flat(S) for S in Sb]).tolist()}
    out["wasserstein"] = [w2(ma[i], Sa[i], mb[j], Sb[j]) for i in range(na) for j in range(nb)]
    if not singular:
        out["bhattacharyya"] = [bhattacharyya(ma[i], Sa[i], mb[j], Sb[j]) for i in range(na) for j in range(nb)]
    return out


def main():
    rng = np.random.default_rng(20261124)
    cases = [
        case(rng, "full d=1", 1, 3, 2, "full"),
        case(rng, "full d=2", 2, 4, 3, "full"),
        case(rng, "full d=5", 5, 3, 4, "full"),
        case(rng, "full d=16", 16, 3, 3, "full"),
        case(rng, "full d=7 semi-definite", 7, 2, 3, "full", singular=True),
        case(rng, "diagonal d=1", 1, 2, 3, "diagonal"),
        case(rng, "diagonal d=6", 6, 3, 4, "diagonal"),
        case(rng, "diagonal d=16", 16, 4, 3, "diagonal"),
    ]
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "gaussian_costs.json")
    with open(path, "w") as f:
        json.dump({"generator": "scripts/gen-gaussian-costs.py", "cases": cases}, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")


if __name__ == "__main__":
    main()
