#!/usr/bin/python3
"""scipy peer of bench/special.mjs: scipy.special.digamma over the same arrays,
allocating its result and into a preallocated out=."""
import json
import sys
import time

import numpy as np
import scipy
import scipy.special as sps

job = json.load(open(sys.argv[1]))
out = {"scipy": scipy.__version__}
for name, path in job["inputs"].items():
    x = np.fromfile(path, dtype="<f8")
    buf = np.empty_like(x)
    for label, call in (("alloc", lambda: sps.digamma(x)), ("out", lambda: sps.digamma(x, out=buf))):
        call()
        times = []
        for _ in range(job["repeats"]):
            t0 = time.perf_counter()
            call()
            times.append((time.perf_counter() - t0) * 1000)
        out[f"{name}/{label}"] = times
print(json.dumps(out))
