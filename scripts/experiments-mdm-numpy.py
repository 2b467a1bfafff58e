#!/usr/bin/python3
"""The numpy side of scripts/experiments-mdm.mjs: Algorithms 1 and 2 by the
plain numpy reference (scripts/mdm_reference.py) on the same clients, with the
same schedule (an initialization cohort, then cohorts per round), reporting
after every round the per-entry relative RMS errors of A and tau (equation 50
divided by sqrt(entries)) after aligning learned to true components with
scipy's linear_sum_assignment. Job JSON in argv[1]; result JSON on stdout."""
import json
import os
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mdm_reference as ref  # noqa: E402

job = json.load(open(sys.argv[1]))
k, c, n_max = job["k"], job["c"], job["nMax"]
counts = np.fromfile(job["counts"], dtype="<f8").reshape(-1, c)
tau_true = np.array(job["tau"])
alpha_true = np.array(job["alpha"]).reshape(k, c)


def errors(tau, alpha):
    cost = (((alpha[None, :, :] - alpha_true[:, None, :]) / alpha_true[:, None, :]) ** 2).sum(2)  # [true, learned]
    _, learned = linear_sum_assignment(cost)
    ea = np.sqrt((((alpha[learned] - alpha_true) / alpha_true) ** 2).sum()) / np.sqrt(k * c)
    et = np.sqrt((((tau[learned] - tau_true) / tau_true) ** 2).sum()) / np.sqrt(k)
    return float(ea), float(et)


curve = []
ref.fit(counts, k, n_max, job["rounds"], job["cohort"], np.random.default_rng(job["seed"]), init_cohort=job["initCohort"],
        on_round=lambda t, tau, alpha, pi: curve.append(errors(tau, alpha)))
print(json.dumps({"alpha": [a for a, _ in curve], "tau": [t for _, t in curve]}))
