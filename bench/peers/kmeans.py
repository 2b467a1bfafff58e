#!/usr/bin/python3
"""scikit-learn peer of bench/threads.mjs's KMeans: time per Lloyd iteration.

Reads a job JSON (data file of column-major float64, shape, the starting
centers), runs fit (one start, tol=0, Lloyd) for two iteration counts and
reports the difference per iteration, so the start and the final assignment
cancel out, with the iterations run (a fit that converged early would
undercount). Threads: the caller sets OMP_NUM_THREADS (scikit-learn's Lloyd
runs on OpenMP threads).
"""
import json
import sys
import time

import numpy as np
from sklearn.cluster import KMeans

job = json.load(open(sys.argv[1]))
n, d, k = job["n"], job["d"], job["k"]
X = np.ascontiguousarray(np.fromfile(job["data"], dtype="<f8").reshape(d, n).T)
centers = np.array(job["centers"]).reshape(k, d)


def run(iters):
    km = KMeans(k, init=centers, n_init=1, tol=0.0, max_iter=iters, algorithm="lloyd")
    t0 = time.perf_counter()
    km.fit(X)
    return (time.perf_counter() - t0) * 1000, km.n_iter_


run(job["lo"])  # warm-up
per_iter = []
n_iter = []
for _ in range(job["repeats"]):
    a, _ = run(job["lo"])
    b, it = run(job["hi"])
    per_iter.append((b - a) / (job["hi"] - job["lo"]))
    n_iter.append(int(it))
print(json.dumps({"msPerIter": per_iter, "nIter": n_iter}))
