#!/usr/bin/python3
"""Reference reductions for fedmix's hierarchical EM
(crates/fedmix-core/src/hem.rs, ts/federated/fedgengmm/hierarchical.ts),
written independently from the formulas of Vasconcelos & Lippman (1999).

Run with Debian's interpreter (python3-scipy, python3-numpy):
    /usr/bin/python3 scripts/gen-hem.py
Writes test/fixtures/hem.json: cases, each a lower mixture (n weights summing
to one, n x d means, n full d x d covariances, row-major) reduced to k
components of one covariance type from given starting means, with N virtual
samples, reg_covar, tol 0 (so exactly max_iter iterations) and the result:
weights, means, covariances shaped as scikit-learn's GaussianMixture, and the
objective per virtual sample of the returned parameters and the bound
sum_i w_i sum_j h_ij (ln pi_j + l_ij - ln h_ij) on the virtual samples' mean
log-likelihood (l_ij the expected log-density below) that BIC takes.

  E-step  ln h_ij = ln pi_j + N w_i (ln N(mu_i | mu_j, S_j) - 1/2 tr(S_j^-1 S_i)) - lse_i
          (scipy.stats.multivariate_normal.logpdf, numpy.linalg.solve, scipy.special.logsumexp)
  M-step  pi_j = sum_i w_i h_ij; mu_j and S_j = weighted means of mu_i and of
          S_i + (mu_i - mu_j)(mu_i - mu_j)' (+ reg I); diag keeps the
          diagonal, spherical its mean, tied pools the components by pi_j.
          A component whose share is below 1e-12 keeps its mean and
          covariance; weights are share + 10 eps, normalized.
  start   each lower component wholly to its nearest starting mean (first on
          ties), one M-step; a component nobody chose starts at its mean with
          the covariance of the whole lower mixture (+ reg I).
For diag and spherical types the lower covariances enter through their
diagonals only (the fixture gives them full; the kernel takes diagonals).
"""
import json
import os

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

EMPTY_SHARE = 1e-12
EPS = np.finfo(float).eps


def spd(rng, d, scale):
    A = rng.normal(size=(d, d))
    S = A @ A.T / d * scale + np.eye(d) * 0.05 * scale
    return (S + S.T) / 2


def project(S, ctype):
    # the upper type's view of a lower covariance: diagonal types see the diagonal
    return np.diag(np.diag(S)) if ctype in ('diag', 'spherical') else S


def m_step(w, mus, Ss, h, state, ctype, reg):
    k, d = state['means'].shape
    shares = (w[:, None] * h).sum(0)
    weights = shares + 10 * EPS
    means = state['means'].copy()
    covs = state['covs'].copy()
    for j in range(k):
        if shares[j] < EMPTY_SHARE:
            continue
        a = w * h[:, j] / shares[j]
        means[j] = (a[:, None] * mus).sum(0)
        C = np.zeros((d, d))
        for i in range(len(w)):
            dm = mus[i] - means[j]
            C += a[i] * (Ss[i] + np.outer(dm, dm))
        C += reg * np.eye(d)
        if ctype in ('diag', 'spherical'):
            C = np.diag(np.diag(C))
        covs[j] = C
    weights = weights / weights.sum()
    if ctype == 'tied':
        pooled = sum(weights[j] * covs[j] for j in range(k))
        covs = np.array([pooled] * k)
    if ctype == 'spherical':
        covs = np.array([np.eye(d) * np.mean(np.diag(covs[j])) for j in range(k)])
    return {'weights': weights, 'means': means, 'covs': covs}


def e_step(w, mus, Ss, state, N):
    n, k = len(w), len(state['weights'])
    d = mus.shape[1]
    L = np.zeros((n, k))
    LL = np.zeros((n, k))
    for j in range(k):
        Sj = state['covs'][j]
        for i in range(n):
            ll = multivariate_normal.logpdf(mus[i], mean=state['means'][j], cov=Sj) - 0.5 * np.trace(np.linalg.solve(Sj, Ss[i]))
            LL[i, j] = ll
            L[i, j] = np.log(state['weights'][j]) + N * w[i] * ll
    lse = logsumexp(L, axis=1)
    h = np.exp(L - lse[:, None])
    with np.errstate(divide='ignore', invalid='ignore'):
        terms = np.where(h > 0, h * (np.log(state['weights'])[None, :] + LL - np.log(h)), 0.0)
    return h, lse.sum() / N, float((w * terms.sum(1)).sum())


def reduce(w, mus, Ss, k, ctype, N, reg, max_iter, means_init):
    n, d = mus.shape
    Ss = np.array([project(S, ctype) for S in Ss])
    h = np.zeros((n, k))
    for i in range(n):
        dist = ((means_init - mus[i]) ** 2).sum(1)
        h[i, int(np.argmin(dist))] = 1.0
    m = (w[:, None] * mus).sum(0)
    pooled = sum(w[i] * (Ss[i] + np.outer(mus[i] - m, mus[i] - m)) for i in range(n)) + reg * np.eye(d)
    pooled = project(pooled, ctype)
    state = {'weights': np.zeros(k), 'means': means_init.copy(), 'covs': np.array([pooled] * k)}
    state = m_step(w, mus, Ss, h, state, ctype, reg)
    for _ in range(max_iter):
        h, _lb, _ll = e_step(w, mus, Ss, state, N)
        state = m_step(w, mus, Ss, h, state, ctype, reg)
    _, lb, ll = e_step(w, mus, Ss, state, N)
    covs = state['covs']
    if ctype == 'full':
        out = covs.reshape(-1)
    elif ctype == 'tied':
        out = covs[0].reshape(-1)
    elif ctype == 'diag':
        out = np.array([np.diag(c) for c in covs]).reshape(-1)
    else:
        out = np.array([c[0, 0] for c in covs])
    return state['weights'], state['means'], out, lb, ll


def case(name, seed, n, d, k, ctype, N, reg, max_iter, spread):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d)) * spread
    mus = centres[rng.integers(0, k, size=n)] + rng.normal(size=(n, d)) * 0.7
    Ss = np.array([spd(rng, d, rng.uniform(0.3, 2.0)) for _ in range(n)])
    w = rng.uniform(0.2, 1.0, size=n)
    w = w / w.sum()
    init = mus[rng.choice(n, size=k, replace=False)] + rng.normal(size=(k, d)) * 0.1
    weights, means, covs, lb, ll = reduce(w, mus, Ss, k, ctype, N, reg, max_iter, init)
    return {
        'name': name, 'd': d, 'n': n, 'k': k, 'covarianceType': ctype, 'virtualSamples': N, 'regCovar': reg,
        'maxIter': max_iter, 'weights': w.tolist(), 'means': mus.reshape(-1).tolist(),
        'covariances': Ss.reshape(-1).tolist(), 'meansInit': init.reshape(-1).tolist(),
        'result': {'weights': weights.tolist(), 'means': means.reshape(-1).tolist(), 'covariances': covs.tolist(), 'lowerBound': float(lb), 'logLikelihood': ll},
    }


def main():
    cases = [
        case('full, soft (N = 40)', 1, 12, 3, 3, 'full', 40.0, 1e-6, 25, 2.0),
        case('full, nearly hard (N = 5000)', 2, 20, 4, 4, 'full', 5000.0, 1e-6, 25, 3.0),
        case('diag, soft', 3, 15, 5, 3, 'diag', 60.0, 1e-6, 25, 2.0),
        case('diag, odd d, nearly hard', 4, 18, 3, 5, 'diag', 2000.0, 1e-4, 25, 3.0),
        case('tied', 5, 14, 3, 3, 'tied', 80.0, 1e-6, 25, 2.0),
        case('spherical', 6, 14, 4, 3, 'spherical', 80.0, 1e-6, 25, 2.0),
        case('full, d = 1', 7, 9, 1, 2, 'full', 30.0, 1e-6, 25, 2.0),
    ]
    out = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'hem.json')
    with open(out, 'w') as f:
        json.dump({'generator': 'scripts/gen-hem.py', 'cases': cases}, f, indent=None)
        f.write('\n')


if __name__ == '__main__':
    main()
