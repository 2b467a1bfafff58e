#!/usr/bin/python3
"""The exp of log_normalize (crates/fedmix-core/src/kernels/scalar.rs, exp_lse):
`--fit` derives its polynomial, a Remez fit in mpmath of
e^r ~ 1 + r + r^2 q(r), q of degree 9, minimizing the relative error on
|r| <= ln2/2 + 0.001; without it, the kernel is replayed operation for
operation in IEEE double (numpy float64 scalars) and its error measured
against mpmath's exp over the range log-sum-exp uses, [-708.39, 0], in ulps
of the correctly rounded value.

    /usr/bin/python3 scripts/exp-lse-error.py [--fit] [points]
"""
import sys

import mpmath as mp
import numpy as np

mp.mp.dps = 50
F = np.float64
# the kernel's constants (scalar.rs)
INV_LN2 = 1.44269504088896338700e00
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
ROUND_MAGIC = 6755399441055744.0
LO = -708.39
C = [0.5000000000000011, 0.16666666666666405, 0.04166666666652714, 0.008333333333498082, 0.0013888888944539647,
     0.0001984126950093998, 2.4801492055793116e-05, 2.755758937945233e-06, 2.7630651830480813e-07, 2.4999763365861458e-08]


def remez(degree, a, b, iterations=20, grid=4000):
    m = degree + 2
    err_of = lambda c: (lambda r: (mp.exp(r) - 1 - r - r**2 * mp.polyval(c[::-1], r)) / mp.exp(r))
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (m - 1 - i) / (m - 1)) for i in range(m)]
    xs = [x + mp.mpf('0.02') if abs(x) < mp.mpf('0.01') else x for x in xs]  # the error is 0 at r = 0
    points = [a + (b - a) * k / grid for k in range(grid + 1)]
    for _ in range(iterations):
        rows = [[x ** (j + 2) for j in range(degree + 1)] + [(-1) ** i * mp.exp(x)] for i, x in enumerate(xs)]
        sol = mp.lu_solve(mp.matrix(rows), mp.matrix([mp.exp(x) - 1 - x for x in xs]))
        c = [sol[j] for j in range(degree + 1)]
        err = err_of(c)
        vals = [err(x) for x in points]
        ext = [points[k] for k in range(grid + 1)
               if (k == 0 or abs(vals[k]) >= abs(vals[k - 1])) and (k == grid or abs(vals[k]) >= abs(vals[k + 1]))]
        alt = []
        for x in ext:
            if alt and mp.sign(err(x)) == mp.sign(err(alt[-1])):
                if abs(err(x)) > abs(err(alt[-1])):
                    alt[-1] = x
            else:
                alt.append(x)
        while len(alt) > m:
            alt.pop(0 if abs(err(alt[0])) < abs(err(alt[-1])) else -1)
        if len(alt) < m:
            break
        xs = alt
    return c, max(abs(v) for v in vals)


def exp_lse(x):
    x = F(x)
    t = x * F(INV_LN2) + F(ROUND_MAGIC)
    kf = t - F(ROUND_MAGIC)
    r = (x - kf * F(LN2_HI)) - kf * F(LN2_LO)
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    p = [F(C[2 * i]) + F(C[2 * i + 1]) * r for i in range(5)]
    q = ((p[0] + p[1] * r2) + (p[2] + p[3] * r2) * r4) + p[4] * r8
    y = F(1.0) + (r + r2 * q)
    return 0.0 if x < LO else float(np.ldexp(y, int(kf)))


def main():
    args = [a for a in sys.argv[1:] if a != '--fit']
    if '--fit' in sys.argv:
        half = mp.log(2) / 2 + mp.mpf('0.001')
        c, e = remez(9, -half, half)
        print('max relative error', mp.nstr(e, 3))
        print([float(v) for v in c])
        return
    n = int(args[0]) if args else 500_000
    rng = np.random.default_rng(1)
    xs = np.concatenate([-rng.random(n * 2 // 5) * -LO, -rng.random(n * 2 // 5), -rng.random(n - 4 * (n // 5)) * 40])
    worst, at = 0.0, None
    for x in xs:
        e = mp.exp(mp.mpf(float(x)))
        u = np.spacing(F(float(e)))
        err = float(abs(mp.mpf(exp_lse(x)) - e) / u)
        if err > worst:
            worst, at = err, float(x)
    print(f'exp_lse over {len(xs)} points of [{LO}, 0]: max error {worst:.3f} ulp (at x = {at!r}), against mpmath')


main()
