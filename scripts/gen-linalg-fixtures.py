#!/usr/bin/python3
"""Writes test/fixtures/linalg.json: scipy's matrix square root, Cholesky factor
and eigenvalues of symmetric matrices (the peer of crates/fedmix-core/src/linalg.rs's
sqrtm, cholesky_lower and symmetric_eigen, which FedDistr and the Gaussian noise
of the detectors call through the WASM core).

    /usr/bin/python3 scripts/gen-linalg-fixtures.py
"""
import json
import pathlib

import numpy as np
import scipy.linalg

rng = np.random.default_rng(24)
cases = []


def add(name, a):
    a = np.asarray(a, dtype=float)
    d = a.shape[0]
    w = np.linalg.eigvalsh(a)
    case = {"name": name, "d": d, "a": a.ravel().tolist(), "eigvalsh_descending": w[::-1].tolist()}
    # the PSD square root: scipy's where the matrix is well inside the cone; for a singular or
    # indefinite one (eigenvalues below 0, rounding noise, count as 0) from numpy's eigh, since
    # scipy's Schur method then gives the square roots of the noise (1e-8 for a zero eigenvalue)
    s = scipy.linalg.sqrtm(a) if w.min() > 1e-9 * w.max() else None
    if s is None:
        v, q = np.linalg.eigh(a)
        s = (q * np.sqrt(np.maximum(v, 0))) @ q.T
    case["sqrtm"] = np.real(s).ravel().tolist()
    if w.min() > 0:
        case["cholesky"] = np.linalg.cholesky(a).ravel().tolist()
    cases.append(case)


for d in (1, 2, 3, 5, 8, 16):
    b = rng.normal(size=(d, d))
    add(f"spd-{d}", b @ b.T + 0.1 * np.eye(d))
b = rng.normal(size=(4, 2))
add("rank-2-of-4", b @ b.T)
add("ill-conditioned", np.diag([1e6, 1.0, 1e-6]) + 1e-7)
add("indefinite", [[1.0, 2.0], [2.0, 1.0]])
add("diagonal", np.diag([3.0, 0.5, 2.0]))

out = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "linalg.json"
out.write_text(json.dumps({"generator": "scripts/gen-linalg-fixtures.py", "cases": cases}, indent=1) + "\n")
print(f"wrote {out} ({len(cases)} cases)")
