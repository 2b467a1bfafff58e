#!/usr/bin/python3
"""scikit-learn / scipy peer of bench/feddistr.mjs: FedDistr's one-shot
pipeline at fedmix's defaults, on the same client splits. The pipeline is
scripts/feddistr_peer.py's (client_upload, consolidate: its docstring says
what each step does, as ts/federated/feddistr/client.ts and server.ts do it);
this file times its two phases:

clients   per client and task label: GaussianMixture candidates for k in
          kMin..kMax, each scored by BIC as the OAS-shrunk Gaussians it would
          upload; per part its row count, mean and shrunk covariance
server    for every pair of clients the 2-Wasserstein cost (scipy.linalg.sqrtm)
          between their base distributions of equal task label,
          scipy.optimize.linear_sum_assignment; a matched pair parallel
          within twice its sampling-noise bound; sets by complete linkage,
          one base per client; each set the members' count-weighted merge

Timed per phase (clients, server) over `repeats` runs; the last run's
consolidated count and adjusted Rand index against the true subclasses are
reported for the agreement check. Run with OMP_NUM_THREADS=1 (bench/common.mjs).
"""
import json
import os
import sys
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from feddistr_peer import client_upload, consolidate  # noqa: E402

job = json.load(open(sys.argv[1]))
d = job["d"]


def load(c):
    X = np.ascontiguousarray(np.fromfile(c["path"], dtype="<f8").reshape(d, c["n"]).T)
    labels = np.fromfile(c["labels"], dtype="<i4")
    return X, labels


clients = [load(c) for c in job["clients"]]
subclasses = [np.fromfile(c["subclasses"], dtype="<i4") for c in job["clients"]]
times = {"clients": [], "server": []}
for r in range(job["repeats"]):
    t0 = time.perf_counter()
    results = [client_upload(X, labels, job["kMin"], job["kMax"], job["seed"]) for X, labels in clients]
    t1 = time.perf_counter()
    bases, set_of, start = consolidate([u for u, _ in results])
    t2 = time.perf_counter()
    times["clients"].append((t1 - t0) * 1000)
    times["server"].append((t2 - t1) * 1000)

predicted = np.concatenate([np.array(set_of)[start[c] + assigned] for c, (_, assigned) in enumerate(results)])
truth = np.concatenate(subclasses)
print(json.dumps({
    "ms": times,
    "consolidated": len(bases),
    "uploaded": int(start[-1]),
    "ari": float(adjusted_rand_score(truth, predicted)),
}))
