#!/usr/bin/python3
"""scikit-learn peer of bench/fedgem.mjs: a centralized GaussianMixture with the
true K on the pooled blobs (full covariance, k-means init, one thread), timed,
with the ARI of its predictions against the true clusters."""
import json
import sys
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

job = json.load(open(sys.argv[1]))
n, d, k = job["n"], job["d"], job["k"]
X = np.ascontiguousarray(np.fromfile(job["data"], dtype="<f8").reshape(d, n).T)
ms = []
ari = None
for r in range(job["repeats"] + 1):
    t0 = time.perf_counter()
    gm = GaussianMixture(k, covariance_type="full", random_state=r).fit(X)
    elapsed = (time.perf_counter() - t0) * 1000
    if r > 0:  # the first is a warm-up
        ms.append(elapsed)
    ari = float(adjusted_rand_score(job["labels"], gm.predict(X)))
print(json.dumps({"ms": ms, "ari": ari}))
