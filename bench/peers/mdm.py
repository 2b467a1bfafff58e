#!/usr/bin/python3
"""numpy/scipy peer of bench/mdm.mjs: one Algorithm 2 round of the MDM paper
(the clients' statistics, eqs 12-14, summed over every client, then the
server's update, eqs 17-19) written with numpy and scipy.special, from
scripts/mdm_reference.py. Reads a job JSON (a file of row-major float64
counts, the model), runs once to warm up, then times `repeats` rounds; reports
the times and the updated alpha, which the caller compares with its own. One
thread (the caller sets OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1)."""
import json
import os
import sys
import time

import numpy as np
import scipy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import mdm_reference as ref  # noqa: E402

job = json.load(open(sys.argv[1]))
k, c, n_max = job["k"], job["c"], job["nMax"]
counts = np.fromfile(job["counts"], dtype="<f8").reshape(-1, c)
tau = np.array(job["tau"])
alpha = np.array(job["alpha"]).reshape(k, c)
pi = np.array(job["pi"]).reshape(k, n_max)


def one_round():
    omega, E, u, v = ref.round_stats(counts, tau, alpha, pi)
    return ref.update(alpha, omega, E, u, v, len(counts))


one_round()
ms = []
for _ in range(job["repeats"]):
    t0 = time.perf_counter()
    _, new_alpha, _ = one_round()
    ms.append((time.perf_counter() - t0) * 1000)
print(json.dumps({"ms": ms, "alpha": new_alpha.ravel().tolist(), "numpy": np.__version__, "scipy": scipy.__version__}))
