#!/usr/bin/python3
"""scikit-learn peer of bench/gmm-em.mjs: time per EM iteration of GaussianMixture.

Reads a job JSON (data file of column-major float64, shape, parameters to start
from), runs fit with tol=0 for two iteration counts and reports the difference
per iteration, so initialization and the final E-step cancel out. With
"dtype": "float32" the rows are fitted as float32 (bench/gmm-em.mjs's
float32 table). One thread:
the caller sets OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1.
"""
import json
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

warnings.simplefilter("ignore", ConvergenceWarning)
job = json.load(open(sys.argv[1]))
n, d, k = job["n"], job["d"], job["k"]
X = np.ascontiguousarray(np.fromfile(job["data"], dtype="<f8").reshape(d, n).T)
# "float32": scikit-learn then fits in single precision (it keeps X's dtype)
if job.get("dtype") == "float32":
    X = X.astype(np.float32)
init = {
    "weights_init": np.array(job["weightsInit"]),
    "means_init": np.array(job["meansInit"]).reshape(k, d),
    "precisions_init": np.array(job["precisionsInit"]).reshape(k, d, d) if job["covarianceType"] == "full" else np.array(job["precisionsInit"]).reshape(k, d),
}


def run(iters):
    gm = GaussianMixture(k, covariance_type=job["covarianceType"], tol=0.0, max_iter=iters, **init)
    t0 = time.perf_counter()
    gm.fit(X)
    return (time.perf_counter() - t0) * 1000


run(job["lo"])  # warm-up
per_iter = []
for _ in range(job["repeats"]):
    a = run(job["lo"])
    b = run(job["hi"])
    per_iter.append((b - a) / (job["hi"] - job["lo"]))
print(json.dumps({"msPerIter": per_iter}))
