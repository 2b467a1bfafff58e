#!/usr/bin/python3
"""Reference values from scikit-learn / scipy for the fedmix tests.

Run with Debian's interpreter (python3-sklearn 1.2.1, python3-scipy 1.10.1; fashion_mnist also needs
python3-torch 1.13 and dataset-fashion-mnist, the communities group python3-igraph 0.10.2):
    /usr/bin/python3 scripts/gen-fixtures.py [gmm kmeans ranking lsa pca ...]
Writes test/fixtures/*.json (all of them, or the named ones). Floats are written with repr, so they round-trip
exactly. Deterministic: re-running gives identical files.
"""
import csv
import json
import os
import sys
import warnings

from fractions import Fraction

import mpmath
import numpy as np
import scipy
import scipy.special as sps
import sklearn
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score, average_precision_score, roc_auc_score, silhouette_samples
from sklearn.mixture import GaussianMixture

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "fixtures")
DATASETS = os.path.join(ROOT, "..", "shared", "datasets")
COV_TYPES = ["full", "tied", "diag", "spherical"]


def flat(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def write(name, payload):
    payload = {"generator": "scripts/gen-fixtures.py", "sklearn": sklearn.__version__, "numpy": np.__version__, **payload}
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(payload, f, separators=(",", ":"), allow_nan=False)  # JSON has no NaN/Infinity
        f.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)} ({os.path.getsize(path)} bytes)")


def blobs(rng, n_per, centers, scales):
    parts = []
    for c, s in zip(centers, scales):
        d = len(c)
        a = rng.normal(size=(d, d)) * s
        parts.append(rng.normal(size=(n_per, d)) @ a + np.asarray(c))
    x = np.vstack(parts)
    return x[rng.permutation(len(x))]


def load_csv(name, rows, label_col="label"):
    with open(os.path.join(DATASETS, name)) as f:
        reader = csv.DictReader(f)
        cols = [c for c in reader.fieldnames if c != label_col]
        data = [[float(r[c]) for c in cols] for _, r in zip(range(rows), reader)]
    return np.asarray(data)


def datasets():
    rng = np.random.default_rng(20261121)
    b = blobs(rng, 200, [[0, 0, 0], [4, 4, 0], [0, 5, 3]], [0.8, 1.2, 0.6])
    yield "blobs3", b, 3
    # a zero-variance feature: regCovar alone keeps the covariances positive definite.
    # Its value is 0: at a non-zero constant, scikit-learn's expanded variance
    # E[x^2] - mu^2 cancels to ~1e-9 relative of regCovar, while fedmix's centered
    # form is exact, so the two would differ by scikit-learn's rounding error.
    yield "constant-feature", np.hstack([b[:300], np.zeros((300, 1))]), 2
    yield "thyroid", load_csv("anomaly_thyroid.csv", 1200), 4
    yield "letter", load_csv("letter.csv", 1500) / 15.0, 5


def lower_bound_path(x, k, t, init, max_iter):
    """The lower bound after each EM iteration, via single-iteration warm starts
    (identical to one long fit: warm starts continue from the same parameters)."""
    gm = GaussianMixture(k, covariance_type=t, max_iter=1, tol=0.0, warm_start=True, **init)
    path = []
    for _ in range(max_iter):
        gm.fit(x)
        path.append(gm.lower_bound_)
    return path


def pick_tol(path, candidates=(1e-3, 3e-4, 1e-4, 3e-5, 1e-5)):
    """A tol whose stopping iteration is unambiguous: every |change| up to the
    stop differs from tol by more than 2%, so rounding cannot move nIter."""
    changes = [np.inf] + [abs(b - a) for a, b in zip(path, path[1:])]
    for tol in candidates:
        stop = next((i for i, c in enumerate(changes) if c < tol), None)
        if stop is None or stop < 3:
            continue
        if all(abs(c - tol) > 0.02 * tol for c in changes[: stop + 1]):
            return tol
    return None


def gmm_fixtures():
    cases = []
    data = {}
    for name, x, k in datasets():
        rng = np.random.default_rng(7)
        test = np.vstack([x[rng.choice(len(x), 50, replace=False)] + rng.normal(scale=0.3, size=(50, x.shape[1])),
                          x.mean(0) + 6 * x.std(0) * rng.normal(size=(10, x.shape[1]))])
        data[name] = {"n": int(x.shape[0]), "d": int(x.shape[1]), "X": flat(x), "nTest": int(test.shape[0]), "Xtest": flat(test)}
        for t in COV_TYPES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                gm0 = GaussianMixture(k, covariance_type=t, max_iter=0, random_state=0).fit(x)
            if t in ("full", "tied"):
                prec0 = gm0.precisions_cholesky_ @ np.swapaxes(gm0.precisions_cholesky_, -1, -2)
            else:
                prec0 = gm0.precisions_cholesky_ ** 2
            init = dict(weights_init=gm0.weights_, means_init=gm0.means_, precisions_init=prec0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                path = lower_bound_path(x, k, t, init, 400)
            tol = pick_tol(path)
            if tol is None:
                sys.exit(f"no unambiguous tol for {name}/{t}")
            gm = GaussianMixture(k, covariance_type=t, tol=tol, max_iter=400, **init).fit(x)
            assert gm.converged_
            cases.append({
                "dataset": name, "covarianceType": t, "nComponents": k, "tol": tol, "maxIter": 400,
                "weightsInit": flat(gm0.weights_), "meansInit": flat(gm0.means_), "precisionsInit": flat(prec0),
                "weights": flat(gm.weights_), "means": flat(gm.means_), "covariances": flat(gm.covariances_),
                "precisionsCholesky": flat(gm.precisions_cholesky_), "precisions": flat(gm.precisions_),
                "nIter": int(gm.n_iter_), "lowerBound": float(gm.lower_bound_), "converged": bool(gm.converged_),
                # at the fitted parameters, on held-out rows
                "scoreSamples": flat(gm.score_samples(test)), "predictProba": flat(gm.predict_proba(test)),
                "predict": [int(v) for v in gm.predict(test)],
                "bic": float(gm.bic(test)), "aic": float(gm.aic(test)),
                "bicTrain": float(gm.bic(x)), "aicTrain": float(gm.aic(x)),
            })
            print(f"  gmm {name}/{t}: tol {tol}, n_iter {gm.n_iter_}, lower bound {gm.lower_bound_:.6f}")
    write("gmm.json", {"datasets": data, "cases": cases})


def kmeans_fixtures():
    """Row-major X here: the datasets are those of gmm.json (same generator)."""
    cases = []
    for name, x, k in datasets():
        rng = np.random.default_rng(11)
        # jittered rows: starting exactly on rows of integer-valued data (letter)
        # makes exact distance ties, which any two summation orders break differently
        centers = x[rng.choice(len(x), k, replace=False)] + rng.normal(scale=0.05, size=(k, x.shape[1])) * x.std(0)
        km = KMeans(n_clusters=k, init=centers, n_init=1, max_iter=300, tol=1e-4, algorithm="lloyd").fit(x)
        cases.append({
            "dataset": name, "nClusters": k,
            "init": flat(centers), "centers": flat(km.cluster_centers_), "labels": [int(v) for v in km.labels_],
            "inertia": float(km.inertia_), "nIter": int(km.n_iter_),
        })
        print(f"  kmeans {name}: n_iter {km.n_iter_}, inertia {km.inertia_:.6f}")
    write("kmeans.json", {"cases": cases})


def ranking_fixtures():
    rng = np.random.default_rng(3)
    cases = []
    for n, p, decimals in [(20, 0.3, 1), (500, 0.05, 2), (1000, 0.5, 6), (7, 0.5, 0)]:
        y = (rng.random(n) < p).astype(int)
        y[0], y[1] = 1, 0  # both classes present
        s = np.round(rng.normal(size=n) + y, decimals)
        cases.append({"y": [int(v) for v in y], "scores": flat(s),
                      "averagePrecision": float(average_precision_score(y, s)), "rocAuc": float(roc_auc_score(y, s))})
    write("ranking.json", {"cases": cases})


def special_fixtures():
    """scipy.special digamma / gammaln / polygamma(1, .) on a log grid over
    [1e-6, 1e8], around digamma's root and lgamma's roots, on negative
    non-integers and at the special values; mpmath (40 digits) for the true
    values and for the two differences scipy lacks."""
    rng = np.random.default_rng(5)
    root = 1.4616321449683622
    grid = np.concatenate([
        np.geomspace(1e-6, 1e8, 3001),
        root + np.linspace(-0.5, 0.5, 401), root + np.geomspace(1e-9, 1e-3, 40), root - np.geomspace(1e-9, 1e-3, 40),
        1 + np.linspace(-0.01, 0.01, 81), 2 + np.linspace(-0.01, 0.01, 81),
        rng.uniform(0, 10, 500), np.arange(1, 30) + 0.5,
    ])
    negative = -np.concatenate([rng.uniform(0, 20, 300), np.arange(0, 20) + 0.5, np.arange(0, 20) + 1e-6, np.arange(1, 20) - 1e-6])
    special = [0.0, -0.0, -1.0, -2.0, -50.0, np.inf, -np.inf, np.nan, 1e-300, 1e300, 5e-324]
    mpmath.mp.dps = 40

    def table(xs, truth=False):
        xs = np.asarray(xs, dtype=np.float64)
        t = {"x": [float(v) for v in xs], "digamma": [float(v) for v in sps.digamma(xs)],
             "lgamma": [float(v) for v in sps.gammaln(xs)], "trigamma": [float(v) for v in sps.polygamma(1, xs)]}
        if truth:
            # 40-digit values: scipy's gammaln itself errs by up to ~6e-13 next to its roots
            X = [mpmath.mpf(float(v)) for v in xs]
            t["truth"] = {"digamma": [float(mpmath.digamma(v)) for v in X], "lgamma": [float(mpmath.loggamma(v)) for v in X],
                          "trigamma": [float(mpmath.psi(1, v)) for v in X]}
        return t
    pairs = []
    for x in [1e-9, 1e-6, 1e-3, 0.05, 0.5, 1.0, 1.4616, 3.3, 9.99, 10.0, 57.5, 1e3, 1e6, 1e9]:
        for n in [1, 2, 5, 31, 32, 33, 100, 1000, 1e6, 0.5, 2.75]:
            X, N = mpmath.mpf(x), mpmath.mpf(n)
            pairs.append({"x": x, "n": float(n),
                          "digammaDiff": float(mpmath.digamma(X + N) - mpmath.digamma(X)),
                          "lnRisingFactorial": float(mpmath.loggamma(X + N) - mpmath.loggamma(X))})
    positive = table(grid, truth=True)
    write("special.json", {"scipy": scipy.__version__, "positive": positive, "negative": table(negative),
                           "special": {"x": [repr(float(v)) for v in special],
                                       "digamma": [repr(float(v)) for v in sps.digamma(special)],
                                       "lgamma": [repr(float(v)) for v in sps.gammaln(special)],
                                       "trigamma": [repr(float(v)) for v in sps.polygamma(1, special)]},
                           "differences": pairs})


def dirichlet_multinomial_fixtures():
    """Dirichlet-multinomial log-pmf, equation (1) of the MDM paper: exactly, with
    rational arithmetic, for small counts and rational alphas (Gamma ratios are
    then products of rationals); and with scipy's gammaln for large counts."""
    mpmath.mp.dps = 60  # set here: running groups alone or together must give the same file

    def exact(c, a):
        a0, n = sum(a), sum(c)
        p = Fraction(1)
        for k in range(n):  # Gamma(a0) / Gamma(n + a0)
            p /= a0 + k
        for k in range(1, n + 1):  # n!
            p *= k
        for cj, aj in zip(c, a):
            for k in range(cj):  # Gamma(cj + aj) / Gamma(aj)
                p *= aj + k
            for k in range(1, cj + 1):
                p /= k
        return float(mpmath.log(mpmath.mpf(p.numerator)) - mpmath.log(mpmath.mpf(p.denominator)))
    rng = np.random.default_rng(8)
    alphas = [[Fraction(1, 2), Fraction(3, 2), Fraction(5, 4), Fraction(1, 20)],
              [Fraction(1, 20)] * 4,
              [Fraction(7), Fraction(1, 3), Fraction(100), Fraction(2, 5)]]
    counts = [[int(v) for v in rng.integers(0, 6, 4)] for _ in range(30)] + [[0, 0, 0, 9], [5, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]]
    small = {"counts": counts, "alphas": [[float(v) for v in a] for a in alphas],
             "logPmf": [[exact(c, a) for a in alphas] for c in counts]}
    big_counts = rng.integers(0, 5000, (20, 6)).astype(float)
    big_counts[:, 0] = 0
    big_alphas = np.array([[0.05, 0.2, 1.5, 30.0, 1e4, 2.0], [1e6, 1e6, 1e6, 1e6, 1e6, 1e6]])
    def direct(c, a):
        n, a0 = c.sum(), a.sum()
        return float(sps.gammaln(a0) + sps.gammaln(n + 1) - sps.gammaln(n + a0)
                     + np.sum(sps.gammaln(c + a) - sps.gammaln(a) - sps.gammaln(c + 1)))
    def precise(c, a):  # the same formula at 60 digits: scipy's form cancels for alpha = 1e6
        M = mpmath.mpf
        n, a0 = M(float(c.sum())), M(float(a.sum()))
        v = mpmath.loggamma(a0) + mpmath.loggamma(n + 1) - mpmath.loggamma(n + a0)
        for cj, aj in zip(c, a):
            v += mpmath.loggamma(M(float(cj)) + M(float(aj))) - mpmath.loggamma(M(float(aj))) - mpmath.loggamma(M(float(cj)) + 1)
        return float(v)
    large = {"counts": big_counts.tolist(), "alphas": big_alphas.tolist(),
             "logPmfScipy": [[direct(c, a) for a in big_alphas] for c in big_counts],
             "logPmfPrecise": [[precise(c, a) for a in big_alphas] for c in big_counts]}
    write("dirichlet_multinomial.json", {"small": small, "large": large})

def random_fixtures():
    """Exact bin probabilities (scipy.stats) for the chi-square tests of the
    samplers in crates/fedmix-core/src/distributions.rs and test/random.test.ts.

    Bins are given by their interior edges e_0 < ... < e_{B-2}: bin b holds the
    values x with e_{b-1} <= x < e_b (bin 0 everything below e_0, the last bin
    everything from e_{B-2} on), so a value's bin is the number of edges <= it.
    Continuous edges are quantiles at 1/20, ..., 19/20. For gamma and beta they
    are natural logs ("logEdges"), because at tiny shapes most of the mass lies
    below the smallest f64 (Gamma(0.001) is below 1e-308 with probability 0.49);
    there the CDF is x^a / Gamma(a + 1) (gamma) or x^a / (a B(a, b)) (beta) to
    double precision, which scipy cannot evaluate at x = exp(-2000).
    Discrete edges are integers from the binomial quantiles."""
    from scipy import special, stats

    q = np.arange(1, 20) / 20
    tiny = -700.0  # below this log, the closed-form CDF; above it, scipy's

    def log_space(log_cdf_tiny, ppf, cdf, upper=np.inf):
        edges = []
        for qi in q:
            t = log_cdf_tiny(np.log(qi))  # the quantile's log if it is tiny
            edges.append(float(t) if t < tiny else float(np.log(ppf(qi))))
        # the upper quantiles of beta(0.001, 0.009) round to 1 (log 0): no edge there,
        # the last bin ends at the top of the support
        edges = sorted({t for t in edges if t < upper})
        def cdf_at(t):
            if t < tiny:
                return float(np.exp(log_cdf_tiny(None, t)))
            return float(cdf(np.exp(t)))
        c = [0.0] + [cdf_at(t) for t in edges] + [1.0]
        return edges, [b - a for a, b in zip(c, c[1:])]

    def gamma_case(a):
        lg = special.gammaln(a + 1)
        # log CDF a t - lgamma(a + 1) at log x = t, inverted when given a log probability
        def f(log_q, t=None):
            return (log_q + lg) / a if t is None else a * t - lg
        edges, probs = log_space(f, lambda x: stats.gamma.ppf(x, a), lambda x: stats.gamma.cdf(x, a))
        return {"distribution": "gamma", "shape": a, "logEdges": edges, "probs": probs}

    def beta_case(a, b):
        lb = np.log(a) + special.betaln(a, b)
        def f(log_q, t=None):
            return (log_q + lb) / a if t is None else a * t - lb
        edges, probs = log_space(f, lambda x: stats.beta.ppf(x, a, b), lambda x: stats.beta.cdf(x, a, b), upper=0.0)
        return {"distribution": "beta", "a": a, "b": b, "logEdges": edges, "probs": probs}

    continuous = [gamma_case(a) for a in (0.001, 0.05, 0.5, 1.0, 2.5, 100.0)]
    # marginals of Dirichlet components: alpha_i against the sum of the others
    continuous += [beta_case(2.5, 1.5), beta_case(0.05, 0.45), beta_case(0.001, 0.009)]
    edges = [float(v) for v in stats.norm.ppf(q)]
    c = [0.0] + [float(stats.norm.cdf(e)) for e in edges] + [1.0]
    continuous.append({"distribution": "normal", "edges": edges, "probs": [b - a for a, b in zip(c, c[1:])]})

    discrete = []
    # inversion (n p < 10 after taking p <= 1/2) and BTRS (n p >= 10), both sides
    # of p = 1/2, the switch itself (n p = 10), and counts far beyond 2^31
    for n, p in [(10, 0.5), (20, 0.3), (50, 0.95), (25, 0.4), (100, 0.9), (200, 0.8), (1000, 0.3),
                 (1000000, 0.5), (1000000, 0.25), (1000000, 0.05), (1000000, 0.2), (10**12, 0.2)]:
        e = sorted({int(v) + 1 for v in stats.binom.ppf(q, n, p)} - {n + 1})
        c = [0.0] + [float(stats.binom.cdf(v - 1, n, p)) for v in e] + [1.0]
        discrete.append({"distribution": "binomial", "n": n, "p": p, "edges": e, "probs": [b - a for a, b in zip(c, c[1:])]})

    dofs = list(range(1, 101)) + [999]
    critical = {str(d): float(stats.chi2.ppf(0.999, d)) for d in dofs}
    write("random.json", {"scipy": scipy.__version__, "chi2Level": 0.001, "chi2Critical": critical,
                          "continuous": continuous, "discrete": discrete})


def lsa_matrix(rng, kind, nr, nc):
    """A cost matrix of a kind: 'random' (4-decimal uniform values: the optimum
    is unique unless the gap check below says otherwise), 'integer' (0..9: many
    optimal assignments) or 'forbidden' (0..99 with about a third +inf)."""
    if kind == "random":
        return np.round(rng.random((nr, nc)), 4)
    if kind == "integer":
        return rng.integers(0, 10, (nr, nc)).astype(float)
    c = rng.integers(0, 100, (nr, nc)).astype(float)
    c[rng.random((nr, nc)) < 0.35] = np.inf
    return c


def lsa_gap(c, rows, cols, maximize):
    """How much worse the best assignment that differs from (rows, cols) is:
    any other assignment lacks one of its cells, so forbid each in turn. A
    positive gap means the optimum is unique; inf when no other assignment exists."""
    forbidden = -np.inf if maximize else np.inf
    best = c[rows, cols].sum()
    gap = np.inf
    for r, k in zip(rows, cols):
        d = c.copy()
        d[r, k] = forbidden
        try:
            rr, kk = linear_sum_assignment(d, maximize=maximize)
        except ValueError:  # infeasible without this cell
            continue
        other = d[rr, kk].sum()
        gap = min(gap, other - best if not maximize else best - other)
    return float(gap)


def lsa_fixtures():
    """scipy.optimize.linear_sum_assignment on square, wide and tall matrices.
    Each case stores its matrix once (row-major; a forbidden entry is written as
    null, JSON having no infinities, and `forbidden` says which infinity it is)
    and scipy's answer for one or both directions."""
    rng = np.random.default_rng(2016)
    cases = []

    def solve(c, maximize):
        try:
            rows, cols = linear_sum_assignment(c, maximize=maximize)
        except ValueError as e:
            assert "infeasible" in str(e)
            return {"maximize": maximize, "infeasible": True}
        total = c[rows, cols].sum()
        assert np.isfinite(total)
        gap = lsa_gap(c, rows, cols, maximize)
        return {"maximize": maximize, "rowInd": [int(v) for v in rows], "colInd": [int(v) for v in cols],
                "total": float(total), "unique": bool(gap > 1e-9 * max(1.0, abs(total))),
                "gap": None if np.isinf(gap) else gap}  # None: no other assignment exists

    def add(kind, c, directions=(False,)):
        forbidden = "-Infinity" if np.isneginf(c).any() else "+Infinity"
        cases.append({"kind": kind, "shape": [int(c.shape[0]), int(c.shape[1])], "forbidden": forbidden,
                      "cost": [None if np.isinf(v) else (float(v) if kind == "random" else int(v)) for v in c.ravel()],
                      "solves": [solve(c, m) for m in directions]})

    for n in [1, 2, 3, 10, 100]:
        k = max(1, n // 4)
        for nr, nc in [(n, n), (n, n + k), (n + k, n)]:
            for kind in ["random", "integer"]:
                add(kind, lsa_matrix(rng, kind, nr, nc), (False, True))
            for maximize in [False, True]:
                c = lsa_matrix(rng, "forbidden", nr, nc)
                for _ in range(20):  # mostly feasible ones (the 1 x 1 case may not be)
                    try:
                        linear_sum_assignment(c)
                        break
                    except ValueError:
                        c = lsa_matrix(rng, "forbidden", nr, nc)
                if maximize:
                    c[c == np.inf] = -np.inf  # a maximizer's forbidden mark
                add("forbidden", c, (maximize,))
    # infeasible: a row (of the smaller side) with nothing allowed, and three rows
    # sharing one allowed column
    c = lsa_matrix(rng, "integer", 4, 6)
    c[2, :] = np.inf
    add("forbidden", c)
    c = lsa_matrix(rng, "integer", 5, 3)
    c[:, 1:] = np.inf
    add("forbidden", c)
    # the largest: one random square and one integer-valued wide matrix
    add("random", np.round(rng.random((500, 500)), 4), (False, True))
    add("integer", lsa_matrix(rng, "integer", 500, 520))
    solves = [s for c in cases for s in c["solves"]]
    print(f"  lsa: {len(cases)} matrices, {len(solves)} solves, {sum(s.get('unique', False) for s in solves)} with a unique optimum, "
          f"{sum(s.get('infeasible', False) for s in solves)} infeasible")
    write("lsa.json", {"scipy": scipy.__version__, "cases": cases})


def pca_fixtures():
    """PCA(svd_solver='full'), the exact solver (the default 'auto' picks the
    randomized one for these shapes), fitted on a block of rows of a real
    dataset and applied to the rows after it. The data stays in
    ../shared/datasets: the tests read the same CSV rows."""
    cases = []
    for file, train, test, k in [("satellite.csv", (0, 5000), (5000, 5200), 8),
                                 ("letter.csv", (0, 15000), (15000, 15200), 6),
                                 ("letter.csv", (0, 2000), (2000, 2100), 16),  # every component
                                 ("satellite.csv", (0, 20), (20, 60), 10)]:   # fewer rows than features
        x = load_csv(file, test[1])
        xtrain, xtest = x[train[0]:train[1]], x[test[0]:test[1]]
        pca = PCA(n_components=k, svd_solver="full").fit(xtrain)
        cases.append({
            "file": file, "trainRows": list(train), "testRows": list(test), "nComponents": k, "d": int(x.shape[1]),
            "mean": flat(pca.mean_), "components": flat(pca.components_),
            "explainedVariance": flat(pca.explained_variance_), "explainedVarianceRatio": flat(pca.explained_variance_ratio_),
            "noiseVariance": float(pca.noise_variance_), "singularValues": flat(pca.singular_values_),
            "transformTest": flat(pca.transform(xtest)), "transformTrainHead": flat(pca.transform(xtrain[:50])),
        })
        print(f"  pca {file} rows {train} k={k}: explained variance {pca.explained_variance_ratio_.sum():.4f}")
    write("pca.json", {"cases": cases})


def mdm_fixtures():
    """Algorithms 1 and 2 of the MDM paper by the plain numpy reference
    (scripts/mdm_reference.py): Algorithm 1's sums for given component choices
    and the initial parameters of eq 9, then one Algorithm 2 round's sums under
    those parameters and the updated parameters of eqs 17-19. Sizes vary per
    component (some sizes never occur: pi has zeros)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import mdm_reference as ref
    rng = np.random.default_rng(20240605)
    k, c, n_max = 3, 6, 40
    tau = np.array([0.2, 0.5, 0.3])
    alpha = np.array([[0.1, 0.2, 0.1, 0.3, 0.1, 0.4], [1.0, 4.0, 1.0, 2.0, 0.5, 3.0], [10.0, 5.0, 3.0, 2.0, 30.0, 1.0]])
    pi = np.zeros((k, n_max))
    pi[0, 4:15] = 1.0 / 11
    pi[1, 19:40] = 1.0 / 21
    pi[2, 9:30] = 1.0 / 21
    counts, _ = ref.sample(rng, tau, alpha, pi, 300)
    comps = rng.integers(0, k, size=len(counts))
    E, P, Q = ref.init_stats(counts, comps, k, n_max)
    t0, a0, p0 = ref.initialize(E, P, Q)
    omega, E1, u, v = ref.round_stats(counts, t0, a0, p0)
    t1, a1, p1 = ref.update(a0, omega, E1, u, v, len(counts))
    write("mdm.json", {"scipy": scipy.__version__, "k": k, "c": c, "nMax": n_max, "counts": flat(counts),
                       "components": [int(q) for q in comps],
                       "init": {"e": flat(E), "p": flat(P), "q": flat(Q), "tau": flat(t0), "alpha": flat(a0), "pi": flat(p0)},
                       "round": {"omega": flat(omega), "e": flat(E1), "u": flat(u), "v": flat(v),
                                 "tau": flat(t1), "alpha": flat(a1), "pi": flat(p1)}})
def clustering_fixtures():
    """adjusted_rand_score on label pairs (random, permuted, nested, the one-cluster
    and all-singleton edge cases, and a large n where the pair counts exceed 2^53),
    silhouette_samples on blobs labelled by k-means, with a singleton cluster."""
    rng = np.random.default_rng(11)
    ari = []
    for n, kt, kp in [(10, 3, 3), (100, 5, 4), (1000, 10, 12), (50, 1, 1), (30, 30, 30), (40, 1, 5), (20000, 7, 9)]:
        t = rng.integers(0, kt, n)
        p = np.where(rng.random(n) < 0.6, t, rng.integers(0, kp, n)) if kt == kp or kp > 1 else np.zeros(n, int)
        if kt == n:
            t, p = np.arange(n), rng.permutation(n)
        ari.append({"true": [int(v) for v in t], "pred": [int(v) for v in p], "ari": float(adjusted_rand_score(t, p))})
    t = rng.integers(0, 4, 60)
    ari.append({"true": [int(v) for v in t], "pred": [int((v + 1) % 4) for v in t], "ari": float(adjusted_rand_score(t, (t + 1) % 4))})
    sil = []
    for n_per, d, k in [(20, 2, 3), (60, 5, 4), (150, 3, 6)]:
        x = blobs(rng, n_per, rng.normal(size=(k, d)) * 4, [1.0] * k)
        labels = KMeans(n_clusters=k, n_init=3, random_state=0).fit_predict(x)
        sil.append({"x": flat(x), "n": len(x), "d": d, "labels": [int(v) for v in labels],
                    "samples": flat(silhouette_samples(x, labels))})
    x = rng.normal(size=(12, 2))
    labels = np.array([0] * 6 + [1] * 5 + [2])  # a singleton cluster scores 0
    sil.append({"x": flat(x), "n": 12, "d": 2, "labels": [int(v) for v in labels], "samples": flat(silhouette_samples(x, labels))})
    write("clustering.json", {"ari": ari, "silhouette": sil})


def robust_fixtures():
    """Coordinate-wise median (numpy.median, axis 0) and trimmed mean (scipy.stats.trim_mean,
    axis 0) of client vectors: odd and even counts, ties, one outlier client, proportions
    from 0 to just below 0.5."""
    from scipy.stats import trim_mean
    rng = np.random.default_rng(5)
    cases = []
    for m, d in [(1, 3), (2, 4), (5, 3), (8, 6), (25, 10)]:
        x = rng.normal(size=(m, d))
        if m >= 5:
            x[m // 2] *= 1e6  # one client far off
            x[:, 0] = np.round(x[:, 0])  # ties
        cases.append({"m": m, "d": d, "x": flat(x), "median": flat(np.median(x, axis=0)),
                      "trimmed": [{"proportion": p, "mean": flat(trim_mean(x, p, axis=0))} for p in [0.0, 0.1, 0.2, 0.25, 0.49]]})
    write("robust.json", {"scipy": scipy.__version__, "cases": cases})


FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def fashion_mnist_files(split):
    """The decompressed bytes of a Fashion-MNIST split's two IDX files (images, labels), from Debian's
    dataset-fashion-mnist."""
    import gzip
    prefix = {"train": "train", "test": "t10k"}[split]
    with gzip.open(os.path.join(FASHION_MNIST, f"{prefix}-images-idx3-ubyte.gz"), "rb") as f:
        images = f.read()
    with gzip.open(os.path.join(FASHION_MNIST, f"{prefix}-labels-idx1-ubyte.gz"), "rb") as f:
        labels = f.read()
    return images, labels


def fashion_mnist_split(split):
    """Images (n x 784, byte / 255 in float32 as torchvision's ToTensor gives them, as float64) and labels
    of a Fashion-MNIST split."""
    images, labels = fashion_mnist_files(split)
    x = np.frombuffer(images, dtype=np.uint8, offset=16).reshape(-1, 784)
    y = np.frombuffer(labels, dtype=np.uint8, offset=8)
    return (x.astype(np.float32) / np.float32(255)).astype(np.float64), y


def ocsvm_fixtures():
    """OneClassSVM (scikit-learn 1.2.1, its libsvm) on real data: the thyroid anomaly set, letter.csv
    (raw integer features) and Fashion-MNIST clients as the community paper builds them (a share 1 - d
    of the rows from an inlier class, d from an outlier class; d = 0.1), gamma 'scale' and 'auto', nu 0.1
    and 0.5, plus a linear kernel, a numeric gamma without shrinking, and an iteration limit. Rows are
    named, not copied: a dataset is a file and row indices (train rows, and held-out rows to score).

    scikit-learn does not expose the dual objective; it is computed here from dual_coef_ a (the
    support vectors' alphas in libsvm's scaling, 0 <= a_i <= 1, sum a_i = nu n) and the kernel matrix
    of the support vectors in float64: 1/2 a'Ka, what libsvm reports as obj (its solver keeps kernel
    values in float32, so its own figure differs from this one by about 1e-8 relative)."""
    from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
    from sklearn.svm import OneClassSVM

    fx, fy = fashion_mnist_split("train")
    tx, ty = fashion_mnist_split("test")

    def client(inlier, outlier, n, d=0.1):
        """The first round(n (1 - d)) training rows of class `inlier` and the first round(n d) of
        `outlier`, in file order; 100 held-out test rows of the same classes in the same ratio."""
        k = int(round(n * d))
        train = np.sort(np.concatenate([np.flatnonzero(fy == inlier)[:n - k], np.flatnonzero(fy == outlier)[:k]]))
        test = np.sort(np.concatenate([np.flatnonzero(ty == inlier)[:90], np.flatnonzero(ty == outlier)[:10]]))
        return train, test

    thyroid = load_csv("anomaly_thyroid.csv", 400)
    letter = load_csv("letter.csv", 400)
    fa_train, fa_test = client(0, 5, 600)
    fb_train, fb_test = client(7, 3, 300)
    datasets = {
        "thyroid": {"source": "csv", "file": "anomaly_thyroid.csv", "train": list(range(300)), "test": list(range(300, 400)),
                    "X": thyroid[:300], "Xtest": thyroid[300:]},
        "letter": {"source": "csv", "file": "letter.csv", "train": list(range(300)), "test": list(range(300, 400)),
                   "X": letter[:300], "Xtest": letter[300:]},
        "fashion-0-5": {"source": "fashion-mnist", "inlier": 0, "outlier": 5, "train": [int(i) for i in fa_train],
                        "test": [int(i) for i in fa_test], "X": fx[fa_train], "Xtest": tx[fa_test]},
        "fashion-7-3": {"source": "fashion-mnist", "inlier": 7, "outlier": 3, "train": [int(i) for i in fb_train],
                        "test": [int(i) for i in fb_test], "X": fx[fb_train], "Xtest": tx[fb_test]},
    }
    settings = [{"kernel": "rbf", "gamma": g, "nu": nu} for g in ["scale", "auto"] for nu in [0.1, 0.5]]
    runs = [(name, dict(s)) for name in datasets for s in settings]
    runs += [("thyroid", {"kernel": "linear", "gamma": "scale", "nu": 0.5}),
             ("letter", {"kernel": "rbf", "gamma": 0.05, "nu": 0.3, "shrinking": False}),
             ("letter", {"kernel": "rbf", "gamma": "auto", "nu": 0.5, "maxIter": 60}),
             ("fashion-7-3", {"kernel": "rbf", "gamma": 0.01, "nu": 0.2, "tol": 1e-5, "cacheSize": 0.5})]
    cases = []
    for name, o in runs:
        ds = datasets[name]
        x, xt = ds["X"], ds["Xtest"]
        m = OneClassSVM(kernel=o["kernel"], gamma=o["gamma"], nu=o["nu"], shrinking=o.get("shrinking", True),
                        max_iter=o.get("maxIter", -1), tol=o.get("tol", 1e-3), cache_size=o.get("cacheSize", 200))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m.fit(x)
        a = m.dual_coef_.ravel()
        sv = m.support_vectors_
        k = rbf_kernel(sv, sv, gamma=m._gamma) if o["kernel"] == "rbf" else linear_kernel(sv, sv)
        dec, dec_test = m.decision_function(x), m.decision_function(xt)
        cases.append({
            "dataset": name, "options": o, "gamma": float(m._gamma), "nIter": int(m.n_iter_),
            "converged": bool(m.fit_status_ == 0), "offset": float(m.offset_[0]), "objective": float(0.5 * a @ k @ a),
            "support": [int(i) for i in m.support_], "dualCoef": flat(a),
            "decision": flat(dec), "decisionTest": flat(dec_test), "scoreSamplesTest": flat(m.score_samples(xt)),
            "predict": [int(v) for v in m.predict(x)], "predictTest": [int(v) for v in m.predict(xt)],
        })
    meta = {k: {kk: vv for kk, vv in v.items() if kk not in ("X", "Xtest")} for k, v in datasets.items()}
    write("ocsvm.json", {"datasets": meta, "cases": cases})
def fashion_mnist_fixtures():
    """Fashion-MNIST as Debian's dataset-fashion-mnist ships it (/usr/share/datasets/fashion-mnist),
    read with gzip and numpy, scaled with torch as torchvision's ToTensor() does (uint8 -> float32,
    divided by 255): per split the IDX headers, row count, label counts, the first labels, the sum of
    all bytes, the mean scaled pixel, the byte sums of a few rows and the scaled values of pixels
    at seeded positions; and byte / 255 in float32 for every byte value. Needs python3-torch."""
    import torch
    folder = FASHION_MNIST
    rng = np.random.default_rng(12)
    splits = {}
    for split in ["train", "test"]:
        images, labels = fashion_mnist_files(split)
        x = np.frombuffer(images, dtype=np.uint8, offset=16).reshape(-1, 784)
        y = np.frombuffer(labels, dtype=np.uint8, offset=8)
        scaled = torch.from_numpy(x.copy()).float().div(255)
        n = x.shape[0]
        rows = rng.integers(0, n, size=24)
        cols = np.concatenate([rng.integers(0, 784, size=12), rng.integers(300, 500, size=12)])  # the middle is rarely 0
        pick = [0, 1, 2, n // 2, n - 1]
        splits[split] = {
            "imagesHeader": images[:16].hex(), "labelsHeader": labels[:8].hex(), "n": int(n),
            "labelCounts": [int(c) for c in np.bincount(y, minlength=10)], "firstLabels": [int(v) for v in y[:20]],
            "byteSum": int(x.sum(dtype=np.int64)), "mean": float(scaled.double().mean()),
            "rowByteSums": [{"row": int(i), "sum": int(x[i].sum(dtype=np.int64))} for i in pick],
            "pixels": [{"row": int(i), "col": int(j), "byte": int(x[i, j]), "value": float(scaled[i, j])} for i, j in zip(rows, cols)],
        }
    table = torch.arange(256, dtype=torch.uint8).float().div(255)
    write("fashion_mnist.json", {"torch": torch.__version__, "folder": folder, "splits": splits,
                                  "scale": [float(v) for v in table]})


def graph_families():
    """The graphs of communities.json: (name, n, edges as (u, v) with u < v, weights or None).
    Zachary's karate club; random graphs of several families; graphs shaped like the
    anomaly-communities paper's mutual-association graphs (near-cliques of 9 clients, a
    few edges between them, isolated clients)."""
    import igraph
    rng = np.random.default_rng(20261124)

    def simple(n, pairs):
        return sorted({(min(u, v), max(u, v)) for u, v in pairs if u != v})

    def gnp(n, p):
        return [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]

    def blocks(sizes, p_in, p_out):
        group = np.repeat(np.arange(len(sizes)), sizes)
        n = int(sum(sizes))
        return n, [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < (p_in if group[u] == group[v] else p_out)]

    def association(groups, per, p_in, bridges, isolated, merged=()):
        # near-cliques of `per` clients; `bridges` random edges between groups; each pair of
        # groups in `merged` linked densely (the paper's merged classes); then isolated clients
        n = groups * per + isolated
        edges = [(g * per + i, g * per + j) for g in range(groups) for i in range(per) for j in range(i + 1, per) if rng.random() < p_in]
        for _ in range(bridges):
            a, b = rng.choice(groups, 2, replace=False)
            edges.append((int(a * per + rng.integers(per)), int(b * per + rng.integers(per))))
        for a, b in merged:
            edges += [(a * per + i, b * per + j) for i in range(per) for j in range(per) if rng.random() < 0.5]
        order = rng.permutation(n)  # clients are not numbered by group
        return n, [(int(order[u]), int(order[v])) for u, v in edges]

    def barabasi(n, m):
        edges, targets, repeated = [], list(range(m)), []
        for v in range(m, n):
            edges += [(t, v) for t in set(targets)]
            repeated += list(set(targets)) + [v] * m
            targets = [repeated[i] for i in rng.integers(len(repeated), size=m)]
        return edges

    def geometric(n, r):
        xy = rng.random((n, 2))
        return [(u, v) for u in range(n) for v in range(u + 1, n) if np.hypot(*(xy[u] - xy[v])) < r]

    def weights(edges, low=0.5, high=2.0):
        return [float(round(w, 6)) for w in rng.uniform(low, high, len(edges))]

    karate = igraph.Graph.Famous("Zachary")
    k_edges = simple(34, karate.get_edgelist())
    yield "karate", "Zachary's karate club", 34, k_edges, None
    yield "karate-weighted", "karate club, weights uniform in [0.5, 2]", 34, k_edges, weights(k_edges)
    e = simple(40, gnp(40, 0.12))
    yield "gnp-40", "G(n, p), n 40, p 0.12", 40, e, None
    n, e = blocks([30, 30, 30, 30], 0.3, 0.02)
    yield "sbm-120", "4 planted blocks of 30, p_in 0.3, p_out 0.02", n, simple(n, e), None
    n, e = blocks([25, 40, 15, 50, 30, 40], 0.25, 0.03)
    e = simple(n, e)
    yield "sbm-200-weighted", "6 planted blocks (200 nodes), p_in 0.25, p_out 0.03, weights in [0.5, 2]", n, e, weights(e)
    e = simple(150, barabasi(150, 2))
    yield "ba-150", "Barabasi-Albert, n 150, m 2", 150, e, None
    e = simple(100, geometric(100, 0.16))
    yield "geometric-100", "random geometric, n 100, r 0.16", 100, e, None
    e = simple(60, gnp(60, 0.08))
    yield "gnp-60-weighted", "G(n, p), n 60, p 0.08, weights in [0.1, 5]", 60, e, weights(e, 0.1, 5.0)
    n, e = association(10, 9, 0.9, 6, 3)
    yield "association-p9", "10 near-cliques of 9 (p 0.9), 6 bridges, 3 isolated", n, simple(n, e), None
    n, e = association(10, 9, 0.8, 10, 0, merged=[(1, 3), (2, 4), (4, 6)])
    yield "association-merged", "10 near-cliques of 9 (p 0.8), 10 bridges, groups 1+3 and 2+4+6 densely linked", n, simple(n, e), None
    n, e = association(5, 18, 0.7, 8, 5)
    yield "association-p18", "5 near-cliques of 18 (p 0.7), 8 bridges, 5 isolated", n, simple(n, e), None
    n, e = association(10, 9, 0.85, 8, 2)
    e = simple(n, e)
    yield "association-weighted", "10 near-cliques of 9 (p 0.85), 8 bridges, 2 isolated, weights in [0.5, 2]", n, e, weights(e)
    n, e = association(4, 5, 1.0, 0, 4)
    yield "components-24", "4 disjoint 5-cliques and 4 isolated clients", n, simple(n, e), None


def count_non_greedy(n, edges, w, merges):
    """Merges of a fast-greedy dendrogram (igraph's merges matrix: community ids, n + t made
    by merge t) at which some linked pair of communities had a larger modularity gain, by more
    than 1e-12, than the pair merged. Recomputes every gain from scratch at each step."""
    w = w or [1.0] * len(edges)
    s = 2 * sum(w)
    degree, between = {}, {}
    for (u, v), x in zip(edges, w):
        degree[u] = degree.get(u, 0.0) + x
        degree[v] = degree.get(v, 0.0) + x
        between[(min(u, v), max(u, v))] = between.get((min(u, v), max(u, v)), 0.0) + x
    gain = lambda k: 2 * between[k] / s - 2 * degree[k[0]] * degree[k[1]] / (s * s)
    count = 0
    for t, (i, j) in enumerate(merges):
        if gain((min(i, j), max(i, j))) < max(gain(k) for k in between) - 1e-12:
            count += 1
        new = n + t
        degree[new] = degree.pop(i, 0.0) + degree.pop(j, 0.0)
        merged = {}
        for (a, b), x in between.items():
            a, b = (new if a in (i, j) else a), (new if b in (i, j) else b)
            if a != b:
                merged[(min(a, b), max(a, b))] = merged.get((min(a, b), max(a, b)), 0.0) + x
        between = merged
    return count


def communities_fixtures():
    """python-igraph's community_multilevel and community_fastgreedy (cut by as_clustering()
    at its maximum modularity) on the graphs of graph_families(), with igraph's modularity of
    each partition and of a random partition. Multilevel visits vertices in a random order
    (Python's random): its modularity is recorded for random.seed(0..9), the partition for
    seed 0. For fast greedy, `stable` says whether its partition is the same under 6 random
    relabellings of the vertices (where it is not, ties decided it, or igraph's heap: see
    nonGreedy); `cutTie` whether another cut of its dendrogram comes within 1e-12 of the best
    modularity; `nonGreedy` at how many of its merges a linked pair of communities would have
    gained more than the pair merged (by more than 1e-12), replayed here from its merges."""
    import random
    import igraph
    graphs = []
    for name, about, n, edges, w in graph_families():
        g = igraph.Graph(n=n, edges=edges)
        runs = []
        for seed in range(10):
            random.seed(seed)
            runs.append(g.community_multilevel(weights=w))
        ml = runs[0]
        dendrogram = g.community_fastgreedy(weights=w)
        fg = dendrogram.as_clustering()

        def canonical(membership):
            groups = {}
            for v, c in enumerate(membership):
                groups.setdefault(c, []).append(v)
            return sorted(groups.values())

        stable = True
        for seed in range(6):
            perm = np.random.default_rng(seed).permutation(n)  # vertex v becomes perm[v]
            order = np.random.default_rng(100 + seed).permutation(len(edges))
            pe = [(int(perm[edges[i][0]]), int(perm[edges[i][1]])) for i in order]
            pw = None if w is None else [w[i] for i in order]
            pm = igraph.Graph(n=n, edges=pe).community_fastgreedy(weights=pw).as_clustering().membership
            if canonical([pm[perm[v]] for v in range(n)]) != canonical(fg.membership):
                stable = False
        merges, qs = igraph.GraphBase.community_fastgreedy(g, w)
        non_greedy = count_non_greedy(n, edges, w, merges)
        best = max(qs)
        cut_tie = sum(1 for q in qs if abs(q - best) <= 1e-12) > 1
        random_membership = [int(v) for v in np.random.default_rng(len(graphs)).integers(0, 5, n)]
        graphs.append({
            "name": name, "about": about, "n": n, "edges": [list(e) for e in edges], "weights": w,
            "multilevel": {"membership": list(ml.membership), "modularity": float(ml.modularity),
                           "modularities": [float(r.modularity) for r in runs]},
            "fastgreedy": {"membership": list(fg.membership), "modularity": float(fg.modularity),
                           "merges": len(merges), "stable": stable, "cutTie": cut_tie, "nonGreedy": non_greedy},
            "random": {"membership": random_membership, "modularity": float(g.modularity(random_membership, weights=w))},
        })
        print(f"  communities {name}: n {n}, m {len(edges)}, multilevel {len(ml)} Q {ml.modularity:.6f} "
              f"(median of 10 {float(np.median([r.modularity for r in runs])):.6f}), fastgreedy {len(fg)} Q {fg.modularity:.6f}"
              f"{'' if stable else ' (order-dependent)'}{' (cut tie)' if cut_tie else ''}{f' ({non_greedy} non-greedy merges)' if non_greedy else ''}")
    write("communities.json", {"igraph": igraph.__version__, "graphs": graphs})


GENERATORS = {"gmm": gmm_fixtures, "kmeans": kmeans_fixtures, "ranking": ranking_fixtures, "special": special_fixtures,
              "dirichlet_multinomial": dirichlet_multinomial_fixtures, "random": random_fixtures, "lsa": lsa_fixtures,
              "pca": pca_fixtures, "mdm": mdm_fixtures, "clustering": clustering_fixtures, "robust": robust_fixtures,
              "fashion_mnist": fashion_mnist_fixtures,
              "communities": communities_fixtures,
              "ocsvm": ocsvm_fixtures}

if __name__ == "__main__":
    # `gen-fixtures.py random` regenerates one file; no argument, all of them
    os.makedirs(OUT, exist_ok=True)
    wanted = sys.argv[1:] or list(GENERATORS)
    for name in wanted:
        if name not in GENERATORS:
            sys.exit(f"unknown fixture group {name!r}; choose from {', '.join(GENERATORS)}")
        GENERATORS[name]()
