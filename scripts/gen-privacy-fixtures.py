#!/usr/bin/python3
"""Reference values for fedmix's privacy accountant (crates/fedmix-core/src/privacy/,
ts/privacy/accountant.ts), computed independently of its series: the Rényi
divergence of the sampled Gaussian mechanism integrated numerically with mpmath
(Debian's python3-mpmath), at 40 digits.

Run with Debian's interpreter:
    /usr/bin/python3 scripts/gen-privacy-fixtures.py
Writes test/fixtures/privacy_rdp.json:

  orders      the accountant's default orders (Opacus' defaults: 1.1, 1.2, ..., 10.9, 12, ..., 63)
  cases       for q in {0.001, 0.01, 0.1, 1} and sigma in {0.5, 0.8, 1.1, 2}: the RDP of one
              step at every order,
                  rdp(alpha) = ln A / (alpha - 1),
                  A = integral of N(z; 0, s^2)^(1 - alpha) ((1 - q) N(z; 0, s^2) + q N(z; 1, s^2))^alpha dz,
              and epsilon at delta = 1e-5 after 1, 100 and 10,000 steps (RDP times steps,
              then Balle et al. 2020's conversion, the least over the orders, with its order)
  erfc        ln erfc(x) at points from -30 to 40 (mpmath's erfc)

The integral is split at the points where the integrand changes shape: the
crossing z0 = s^2 ln(1/q - 1) + 1/2 of the two mixture parts, and around the
integrand's peak (found on a grid, then by mpmath.findroot), so that tanh-sinh
quadrature sees smooth pieces. Each integer order is also checked against the
finite binomial sum (to 1e-25 relative) before anything is written.
"""
import json
import os

import mpmath as mp

mp.mp.dps = 40

ORDERS = [1 + x / 10 for x in range(1, 100)] + list(range(12, 64))
QS = [0.001, 0.01, 0.1, 1.0]
SIGMAS = [0.5, 0.8, 1.1, 2.0]
STEPS = [1, 100, 10_000]
DELTA = 1e-5


def ln_integrand(z, q, s, a):
    ln0 = -z * z / (2 * s * s)
    ln1 = -(z - 1) * (z - 1) / (2 * s * s)
    # the common factor 1/(sqrt(2 pi) s) appears with total power (1 - a) + a = 1
    ln_mix = ln0 + mp.log((1 - q) + q * mp.exp(ln1 - ln0)) if q < 1 else ln1
    return (1 - a) * ln0 + a * ln_mix - mp.log(mp.sqrt(2 * mp.pi) * s)


def ln_a(q, s, a):
    q, s, a = mp.mpf(q), mp.mpf(s), mp.mpf(a)
    f = lambda z: ln_integrand(z, q, s, a)
    # the peak: a grid from -10 s to a + 10 s, then refined
    lo, hi = -10 * s, a + 10 * s
    grid = [lo + (hi - lo) * i / 400 for i in range(401)]
    peak = max(grid, key=f)
    try:
        peak = mp.findroot(lambda z: mp.diff(f, z), peak)
    except Exception:
        pass
    fpeak = f(peak)
    points = sorted({peak + k * s for k in (-8, -4, -2, -1, 0, 1, 2, 4, 8)})
    if q < 1:
        points = sorted(set(points) | {s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2})
    points = [mp.ninf] + points + [mp.inf]
    total = mp.quad(lambda z: mp.exp(f(z) - fpeak), points)
    return fpeak + mp.log(total)


def ln_a_binomial(q, s, a):
    q, s = mp.mpf(q), mp.mpf(s)
    return mp.log(mp.fsum(mp.binomial(a, k) * (1 - q) ** (a - k) * q ** k * mp.exp((k * k - k) / (2 * s * s)) for k in range(a + 1)))


def epsilon(rdp, delta):
    best = (mp.inf, None)
    for a, r in zip(ORDERS, rdp):
        a = mp.mpf(a)
        eps = r + mp.log((a - 1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)
        if eps < best[0]:
            best = (eps, float(a))
    return max(best[0], 0), best[1]


def main():
    cases = []
    for q in QS:
        for s in SIGMAS:
            rdp = []
            for a in ORDERS:
                la = ln_a(q, s, a)
                if float(a).is_integer():
                    exact = ln_a_binomial(q, s, int(a))
                    if abs(la - exact) > mp.mpf('1e-25') * max(1, abs(exact)):
                        raise SystemExit(f'q {q} sigma {s} alpha {a}: the integral gives {la}, the binomial sum {exact}')
                rdp.append(max(la, 0) / (mp.mpf(a) - 1))
            eps = {}
            for t in STEPS:
                e, order = epsilon([r * t for r in rdp], mp.mpf(DELTA))
                eps[str(t)] = {'epsilon': float(e), 'order': order}
            cases.append({'q': q, 'sigma': s, 'rdp': [float(r) for r in rdp], 'epsilon': eps})
            print(f'q {q} sigma {s}: epsilon {[eps[str(t)]["epsilon"] for t in STEPS]}', flush=True)
    erfc = [{'x': x, 'lnErfc': float(mp.log(mp.erfc(x)))} for x in [-30, -5, -1.5, -0.5, 0, 0.3, 1, 1.49, 1.5, 1.51, 2, 3, 5, 10, 26, 40]]
    out = {'generator': 'scripts/gen-privacy-fixtures.py', 'delta': DELTA, 'orders': ORDERS, 'steps': STEPS, 'cases': cases, 'erfc': erfc}
    path = os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'privacy_rdp.json')
    with open(path, 'w') as f:
        json.dump(out, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
