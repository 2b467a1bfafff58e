#!/usr/bin/python3
"""scikit-learn peer of bench/ocsvm.mjs: OneClassSVM on Fashion-MNIST clients.

Reads a job JSON (the clients' training-row indices in the Fashion-MNIST train
split, the settings, repeats) and reports, as medians of `repeats` runs after a
warm-up: the fit of client 0, decision_function of client 1's rows by client
0's model, and the association phase in small: every client's model fitted,
then every client's rows scored by every other client's model. One thread: the
caller sets OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1.
"""
import gzip
import json
import sys
import time

import numpy as np
from sklearn.svm import OneClassSVM

job = json.load(open(sys.argv[1]))
with gzip.open(job["images"], "rb") as f:
    images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 784)
clients = [(images[np.asarray(ix)].astype(np.float32) / np.float32(255)).astype(np.float64) for ix in job["clients"]]
opts = job["options"]


def ms(fn):
    fn()
    out = []
    for _ in range(job["repeats"]):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return float(np.median(out))


model = OneClassSVM(**opts).fit(clients[0])
fit_ms = ms(lambda: OneClassSVM(**opts).fit(clients[0]))
decision_ms = ms(lambda: model.decision_function(clients[1]))


def association():
    models = [OneClassSVM(**opts).fit(x) for x in clients]
    for i, x in enumerate(clients):
        for j, m in enumerate(models):
            if i != j:
                m.predict(x)


t0 = time.perf_counter()
association()
association_ms = (time.perf_counter() - t0) * 1000
print(json.dumps({"fitMs": fit_ms, "decisionMs": decision_ms, "associationMs": association_ms,
                  "nIter": int(model.n_iter_), "nSupport": int(model.n_support_[0])}))
