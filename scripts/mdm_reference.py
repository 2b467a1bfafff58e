"""Algorithms 1 and 2 of Scott & Cahill's MDM paper in plain numpy/scipy,
written as a numpy user would (dense arrays over all clients at once, the
four-lgamma DM pmf, plain digamma differences). The reference that the
fixtures (scripts/gen-fixtures.py mdm), the benchmark peer (bench/peers/mdm.py)
and the experiments (scripts/experiments-mdm.py) compare fedmix with.

Shapes: counts (m, C) integer histograms, tau (K,), alpha (K, C), pi (K, N)
with pi[k, n - 1] = P(size n | component k)."""
import numpy as np
from scipy.special import digamma, gammaln


def sample(rng, tau, alpha, pi, m):
    """m clients: component ~ tau, n ~ pi_k, p ~ Dir(alpha_k), counts ~ Mult(n, p)."""
    k = rng.choice(len(tau), size=m, p=tau)
    n = np.array([rng.choice(pi.shape[1], p=pi[q]) + 1 for q in k])
    counts = np.array([rng.multinomial(ni, rng.dirichlet(alpha[q])) for q, ni in zip(k, n)], dtype=np.float64)
    return counts, k


def init_stats(counts, components, k, n_max):
    """Algorithm 1, summed over clients: E (K, N), P and Q (K, C)."""
    n = counts.sum(1)
    p = counts / n[:, None]
    E = np.zeros((k, n_max))
    P = np.zeros((k, counts.shape[1]))
    Q = np.zeros_like(P)
    np.add.at(E, (components, n.astype(int) - 1), 1.0)
    np.add.at(P, components, p)
    np.add.at(Q, components, p * p)
    return E, P, Q


def initialize(E, P, Q):
    """Equations 5, 6, 8 and 9 (category 1; no guards: the caller avoids degenerate cases)."""
    m = E.sum(1)
    pbar = P / m[:, None]
    qbar = Q / m[:, None]
    a0 = (pbar[:, 0] - qbar[:, 0]) / (qbar[:, 0] - pbar[:, 0] ** 2)
    k = E.shape[0]
    return np.full(k, 1.0 / k), a0[:, None] * pbar, E / m[:, None]


def log_dm(counts, alpha):
    """ln p(c | n, alpha_k) without the multinomial coefficient: (m, K)."""
    n = counts.sum(1)
    a0 = alpha.sum(1)
    return (gammaln(a0)[None, :] - gammaln(n[:, None] + a0[None, :])
            + (gammaln(counts[:, None, :] + alpha[None, :, :]) - gammaln(alpha)[None, :, :]).sum(2))


def round_stats(counts, tau, alpha, pi):
    """Algorithm 2's client statistics, summed: omega (K,), E (K, N), u (K, C), v (K,)."""
    n = counts.sum(1)
    idx = n.astype(int) - 1
    with np.errstate(divide="ignore"):
        lj = np.log(tau)[None, :] + np.log(pi[:, idx]).T + log_dm(counts, alpha)
    lj -= lj.max(1, keepdims=True)
    w = np.exp(lj)
    w /= w.sum(1, keepdims=True)
    E = np.zeros_like(pi)
    np.add.at(E.T, idx, w)
    u = (w[:, :, None] * (digamma(counts[:, None, :] + alpha[None, :, :]) - digamma(alpha)[None, :, :])).sum(0)
    a0 = alpha.sum(1)
    v = (w * (digamma(n[:, None] + a0[None, :]) - digamma(a0)[None, :])).sum(0)
    return w.sum(0), E, u, v


def update(alpha, omega, E, u, v, clients):
    """Equations 17-19."""
    return omega / clients, alpha * u / v[:, None], E / omega[:, None]


def fit(counts, k, n_max, rounds, cohort, rng, init_cohort=None, on_round=None):
    """Algorithm 1 on a cohort, then `rounds` rounds of Algorithm 2 on fresh cohorts."""
    m = len(counts)
    s0 = rng.choice(m, size=min(init_cohort or cohort, m), replace=False)
    E, P, Q = init_stats(counts[s0], rng.integers(0, k, size=len(s0)), k, n_max)
    tau, alpha, pi = initialize(E, P, Q)
    if on_round:
        on_round(0, tau, alpha, pi)
    for t in range(rounds):
        s = rng.choice(m, size=min(cohort, m), replace=False)
        omega, E, u, v = round_stats(counts[s], tau, alpha, pi)
        tau, alpha, pi = update(alpha, omega, E, u, v, len(s))
        if on_round:
            on_round(t + 1, tau, alpha, pi)
    return tau, alpha, pi
