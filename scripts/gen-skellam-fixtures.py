#!/usr/bin/python3
"""Reference values for fedmix's Skellam mechanism (crates/fedmix-core/src/privacy/skellam.rs,
ts/privacy/skellam.ts, the Skellam steps of ts/privacy/accountant.ts), computed
independently of the core:

  pmf       for each mu: scipy.stats.skellam's pmf at chosen points, and the probability of
            each bin of a partition of the integers (cdf differences; the two tails lumped
            into the end bins), with the chi-square critical value at 99.9% for its bins
            (for the sampler's goodness-of-fit test, test/distributed-noise.test.ts)
  renyi     the exact Renyi divergence D_alpha(Sk(mu) + delta || Sk(mu)) of the 1-D Skellam
            mechanism of sensitivity delta, summed with mpmath (Debian's python3-mpmath) at
            30 digits over the integers from the pmf e^(-2 mu) I_|k|(2 mu), the terms past the
            summed range checked negligible; integer and fractional orders

Run with Debian's interpreter (about a minute):
    /usr/bin/python3 scripts/gen-skellam-fixtures.py
Writes test/fixtures/skellam.json.
"""
import json
import math
import os

import mpmath as mp
from scipy import stats

mp.mp.dps = 30

PMF_MUS = [0.7, 4.0, 30.0, 1000.0, 1.0e6]
RENYI_MUS = [2.0, 10.0, 50.0, 400.0]
RENYI_DELTAS = [1, 3]
RENYI_ORDERS = [1.5, 2, 3, 4.5, 8, 16, 32, 64]


def bins_for(mu):
    """Integer edges: one bin per integer within 3 sd for small mu, else 40 equal bins over +-3 sd
    (every bin expects dozens of draws out of 100,000)."""
    sd = math.sqrt(2 * mu)
    if sd < 8:
        lo, hi = -int(math.ceil(3 * sd)), int(math.ceil(3 * sd)) + 1
        return list(range(lo, hi + 1))
    width = max(1, int(round(6 * sd / 40)))
    edges = [-20 * width + i * width for i in range(41)]
    return edges


def pmf_case(mu):
    dist = stats.skellam(mu, mu)
    edges = bins_for(mu)
    # bin i holds the integers in [edges[i], edges[i+1]); the first also everything below, the last everything from edges[-1] on
    cdf = [float(dist.cdf(e - 1)) for e in edges]
    probs = [cdf[1]] + [cdf[i + 1] - cdf[i] for i in range(1, len(edges) - 1)] + [float(dist.sf(edges[-1] - 1))]
    sd = math.sqrt(2 * mu)
    points = sorted({0, 1, -1, 2, int(sd), -int(sd), int(3 * sd)})
    return {
        'mu': mu,
        'edges': edges,
        'probabilities': probs,
        'critical999': float(stats.chi2.ppf(0.999, len(probs) - 1)),
        'points': [{'k': k, 'pmf': float(dist.pmf(k))} for k in points],
    }


def skellam_ln_pmf_table(mu, lo, hi):
    mu = mp.mpf(mu)
    return {k: -2 * mu + mp.log(mp.besseli(abs(k), 2 * mu)) for k in range(lo, hi + 1)}


def renyi(mu, delta, alpha, table, lo, hi):
    """ln sum_k P(k - delta)^alpha P(k)^(1 - alpha) / (alpha - 1), with the edge terms' size."""
    a = mp.mpf(alpha)
    terms = [a * table[k - delta] + (1 - a) * table[k] for k in range(lo + delta, hi + 1)]
    peak = max(terms)
    total = mp.fsum(mp.exp(t - peak) for t in terms)
    edge = max(terms[0], terms[-1]) - peak
    return (peak + mp.log(total)) / (a - 1), edge


def bound_integer(mu, l1, l2, a):
    return a * l2 * l2 / (4 * mu) + min(((2 * a - 1) * l2 * l2 + 6 * l1) / (16 * mu * mu), 3 * l1 / (4 * mu))


def bound(mu, l1, l2, alpha):
    """The paper's bound at integer orders; a fractional order on the chord of (alpha - 1) eps."""
    if alpha == int(alpha):
        return bound_integer(mu, l1, l2, alpha)
    a0, a1 = math.floor(alpha), math.floor(alpha) + 1
    f0 = 0 if a0 <= 1 else (a0 - 1) * bound_integer(mu, l1, l2, a0)
    f1 = (a1 - 1) * bound_integer(mu, l1, l2, a1)
    return ((a1 - alpha) * f0 + (alpha - a0) * f1) / (alpha - 1)


def main():
    out = {'pmf': [pmf_case(mu) for mu in PMF_MUS], 'renyi': []}
    for mu in RENYI_MUS:
        sd = math.sqrt(2 * mu)
        reach = max(RENYI_ORDERS) * max(RENYI_DELTAS) + int(60 * sd) + 60
        table = skellam_ln_pmf_table(mu, -reach, reach)
        for delta in RENYI_DELTAS:
            for alpha in RENYI_ORDERS:
                exact, edge = renyi(mu, delta, alpha, table, -reach, reach)
                # the summed range holds the sum to far below 1e-20 of it
                assert edge < -50, (mu, delta, alpha, edge)
                b = bound(mu, delta, delta, alpha)
                # the direct bound at a fractional order (not what the core uses), for the record
                direct = alpha * delta * delta / (4 * mu) + min(((2 * alpha - 1) * delta * delta + 6 * delta) / (16 * mu * mu), 3 * delta / (4 * mu))
                out['renyi'].append({'mu': mu, 'delta': delta, 'alpha': alpha, 'exact': float(exact), 'bound': b, 'directBound': direct})
                print(f"mu {mu:7g} delta {delta} alpha {alpha:5g}: exact {float(exact):.6g} bound {b:.6g} ratio {b / float(exact):.4f}")
    path = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'skellam.json')
    with open(path, 'w') as f:
        json.dump(out, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
