/**
 * Distributed DP with Skellam noise shares: the sampler against scipy's
 * Skellam pmf (scripts/gen-skellam-fixtures.py), the Skellam mechanism's RDP
 * bound against the exact Rényi divergence summed with mpmath, the accountant
 * composing both kinds of step (and loading what it saved before Skellam steps
 * existed), the calibration, and the variance of the released sum of shares
 * with every client and with dropouts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import { privacyEpsilon, RdpAccountant, rdpSampledGaussian, rdpSkellam } from '../ts/privacy/accountant.js';
import { distributedNoise, skellamTail } from '../ts/privacy/distributed-noise.js';
import { secureSum } from '../ts/privacy/secure-aggregation/secure-sum.js';
import { addSkellamNoise, MAX_SKELLAM_MU, skellamNoise } from '../ts/privacy/skellam.js';
import { init } from '../ts/wasm/loader.js';

interface Fixture {
  pmf: { mu: number; edges: number[]; probabilities: number[]; critical999: number; points: { k: number; pmf: number }[] }[];
  renyi: { mu: number; delta: number; alpha: number; exact: number; bound: number; directBound: number }[];
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/skellam.json', import.meta.url), 'utf8')) as Fixture;
const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));

beforeAll(async () => {
  await init();
});

const seed = (tag: number) => Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + tag) & 255);

/** Pearson's statistic of draws against the fixture's bins (the end bins hold the tails). */
function chiSquare(draws: BigInt64Array, edges: number[], probabilities: number[]): number {
  const counts = new Float64Array(probabilities.length);
  for (const x of draws) {
    const v = Number(x);
    let i = 0;
    // bin i holds [edges[i], edges[i+1]); below edges[1] is bin 0, from edges[last] on the last bin
    let lo = 0;
    let hi = edges.length - 1;
    if (v < edges[1]!) i = 0;
    else if (v >= edges[hi]!) i = probabilities.length - 1;
    else {
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (v >= edges[mid]!) lo = mid;
        else hi = mid;
      }
      i = lo;
    }
    counts[i]! += 1;
  }
  let stat = 0;
  for (let i = 0; i < counts.length; i++) {
    const e = draws.length * probabilities[i]!;
    stat += (counts[i]! - e) ** 2 / e;
  }
  return stat;
}

/** The two-sided 99.9% interval of a sample variance of n draws of variance v (Wilson-Hilferty's chi-square quantiles). */
function varianceInterval(n: number, v: number, z = 3.2905 /* the normal's 0.9995 quantile */): [number, number] {
  const k = n - 1;
  const q = (s: number) => k * (1 - 2 / (9 * k) + s * z * Math.sqrt(2 / (9 * k))) ** 3;
  return [(v * q(-1)) / k, (v * q(1)) / k];
}

function sampleVariance(xs: ArrayLike<number>): number {
  let mean = 0;
  for (let i = 0; i < xs.length; i++) mean += xs[i]!;
  mean /= xs.length;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += (xs[i]! - mean) ** 2;
  return s / (xs.length - 1);
}

describe('the Skellam sampler against scipy', () => {
  for (const c of fixture.pmf) test(`mu ${c.mu}: chi-square at 99.9% over 100,000 draws`, () => {
    const mu = c.mu;
    const draws = skellamNoise(100_000, mu, { seed: seed(Math.round(Math.log(mu) * 10) & 255) });
    const stat = chiSquare(draws, c.edges, c.probabilities);
    expect(stat).toBeLessThan(c.critical999);
    // the same test refuses draws of a mu 5% off (both sides of the check): the bins see the difference
    if (mu >= 30) {
      const off = skellamNoise(100_000, mu * 1.05, { seed: seed(3) });
      expect(chiSquare(off, c.edges, c.probabilities)).toBeGreaterThan(c.critical999);
    }
  });


  test('point frequencies near the mode match the pmf', () => {
    const c = fixture.pmf.find((p) => p.mu === 4)!;
    const draws = skellamNoise(200_000, 4, { seed: seed(11) });
    for (const { k, pmf } of c.points) {
      let n = 0;
      for (const x of draws) if (Number(x) === k) n++;
      const se = Math.sqrt((pmf * (1 - pmf)) / draws.length);
      expect(Math.abs(n / draws.length - pmf)).toBeLessThan(5 * se);
    }
  });

  test('fresh keys from crypto.getRandomValues unless a seed is given; a seed reproduces', () => {
    const a = skellamNoise(64, 1e6);
    const b = skellamNoise(64, 1e6);
    expect(a).not.toEqual(b);
    expect(skellamNoise(64, 1e6, { seed: seed(1) })).toEqual(skellamNoise(64, 1e6, { seed: seed(1) }));
    expect(skellamNoise(64, 0)).toEqual(new BigInt64Array(64));
  });

  test('noise is added mod 2^64 to u64 words, negative values in two\'s complement', () => {
    const words = new Uint8Array(8 * 1000);
    new BigInt64Array(words.buffer).fill(-3n);
    addSkellamNoise(words, 2.5, { seed: seed(5) });
    const noise = skellamNoise(1000, 2.5, { seed: seed(5) });
    const got = new BigInt64Array(words.buffer);
    for (let i = 0; i < 1000; i++) expect(got[i]).toBe(noise[i]! - 3n);
    // wrapping at the top: 2^64 - 1 plus noise
    const top = new Uint8Array(8 * 100).fill(255);
    addSkellamNoise(top, 50, { seed: seed(6) });
    const n2 = skellamNoise(100, 50, { seed: seed(6) });
    const u = new BigUint64Array(top.buffer);
    for (let i = 0; i < 100; i++) expect(u[i]).toBe(BigInt.asUintN(64, 2n ** 64n - 1n + n2[i]!));
  });

  test('bad input is refused typed and leaves the vector as it was', () => {
    const v = new Uint8Array(16).fill(9);
    for (const mu of [-1, Number.NaN, MAX_SKELLAM_MU * 2, '3' as unknown as number]) {
      expect(() => addSkellamNoise(v, mu)).toThrow(InvalidParameterError);
    }
    expect(() => addSkellamNoise(new Uint8Array(12), 1)).toThrow(/multiple of 8 bytes/);
    expect(() => addSkellamNoise(v, 1, { seed: new Uint8Array(16) })).toThrow(/32 bytes/);
    expect(v).toEqual(new Uint8Array(16).fill(9));
    expect(() => skellamNoise(-1, 1)).toThrow(InvalidParameterError);
  });
});

describe('the Skellam mechanism\'s RDP bound against the exact Rényi divergence (mpmath)', () => {
  test('the bound is never below the exact divergence, and within 2% of it at integer orders once mu >= 400', () => {
    for (const r of fixture.renyi) {
      const [bound] = rdpSkellam({ mu: r.mu, l1: r.delta, l2: r.delta }, [r.alpha]);
      expect(bound).toBeCloseTo(r.bound, 12);
      expect(bound! / r.exact).toBeGreaterThanOrEqual(1 - 1e-9);
      if (r.mu >= 400 && Number.isInteger(r.alpha)) expect(bound! / r.exact).toBeLessThan(1.02);
    }
  });

  test("at large mu the bound is the Gaussian mechanism's at the same variance plus a term of order 1/mu^2", () => {
    const mu = 1e6;
    const gauss = rdpSampledGaussian({ noiseMultiplier: Math.sqrt(2 * mu) / 100, samplingRate: 1 }, [2, 8, 32]);
    const sk = rdpSkellam({ mu, l1: 100 * 100, l2: 100 }, [2, 8, 32]);
    for (let i = 0; i < 3; i++) {
      expect(sk[i]!).toBeGreaterThan(gauss[i]!);
      expect(sk[i]! / gauss[i]!).toBeLessThan(1.001);
    }
  });
});

describe('the accountant composes Skellam steps with sampled Gaussian ones', () => {
  test('composition, JSON round trip, and an accountant saved before Skellam steps existed', () => {
    const a = new RdpAccountant();
    a.step({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100 });
    a.step({ mechanism: 'skellam', mu: 5e5, l1: 1e4, l2: 1000, steps: 10 });
    a.step({ mechanism: 'skellam', mu: 5e5, l1: 1e4, l2: 1000, steps: 5 });
    expect(a.history).toEqual([
      { noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100 },
      { mechanism: 'skellam', mu: 5e5, l1: 1e4, l2: 1000, steps: 15 },
    ]);
    const sk = rdpSkellam({ mu: 5e5, l1: 1e4, l2: 1000 });
    const g = rdpSampledGaussian({ noiseMultiplier: 1.1, samplingRate: 0.01 });
    const rdp = a.rdp;
    for (let i = 0; i < rdp.length; i++) expect(rdp[i]).toBeCloseTo(100 * g[i]! + 15 * sk[i]!, 12);
    // reloaded: the steps composed again, merged (sums in another order: equal to rounding)
    const back = RdpAccountant.fromJSON(JSON.stringify(a));
    expect(back.history).toEqual(a.history);
    for (let i = 0; i < rdp.length; i++) expect(back.rdp[i]! / rdp[i]!).toBeCloseTo(1, 12);
    expect(back.epsilon(1e-5).epsilon / a.epsilon(1e-5).epsilon).toBeCloseTo(1, 12);
    // saved by the accountant as it was (no `mechanism` in its steps): loads, and spends the same
    const old = { kind: 'RdpAccountant', orders: [2, 4, 8, 16, 32], history: [{ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100 }, { noiseMultiplier: 0.8, samplingRate: 0.1, steps: 3 }] };
    const loaded = RdpAccountant.fromJSON(JSON.stringify(old));
    const fresh = new RdpAccountant({ orders: old.orders }).step(old.history[0]!).step(old.history[1]!);
    expect(loaded.epsilon(1e-5)).toEqual(fresh.epsilon(1e-5));
    expect(loaded.toJSON()).toEqual(old);
  });

  test('privacyEpsilon takes Skellam steps; hostile steps are refused typed', () => {
    const one = new RdpAccountant().step({ mechanism: 'skellam', mu: 2e5, l1: 1e4, l2: 100, steps: 50 }).epsilon(1e-5);
    expect(privacyEpsilon({ mechanism: 'skellam', mu: 2e5, l1: 1e4, l2: 100, steps: 50, delta: 1e-5 })).toEqual(one);
    const a = new RdpAccountant();
    expect(() => a.step({ mechanism: 'skellam', mu: -1, l1: 1, l2: 1 })).toThrow(InvalidParameterError);
    expect(() => a.step({ mechanism: 'skellam', mu: 10, l1: 1, l2: 5 })).toThrow(/above the L1 sensitivity/);
    expect(() => a.step({ mechanism: 'skellam', mu: Number.POSITIVE_INFINITY, l1: 1, l2: 1 })).toThrow(InvalidParameterError);
    expect(() => RdpAccountant.fromJSON({ kind: 'RdpAccountant', orders: [2], history: [{ mechanism: 'skellam', mu: 1, l1: 1 }] })).toThrow(InvalidParameterError);
    expect(a.history).toEqual([]);
  });
});

describe('calibration', () => {
  test('the shares of the threshold carry the central Gaussian variance at the rounded sensitivity', () => {
    const o = { clip: 2, noiseMultiplier: 1.3, length: 10_000, clients: 50, threshold: 30 };
    const n = distributedNoise(o);
    expect(Math.log2(n.fixedPoint.scale) % 1).toBe(0);
    expect(n.l2).toBe(o.clip * n.fixedPoint.scale + Math.sqrt(o.length) / 2);
    expect(n.l1).toBe(Math.min(n.l2 ** 2, Math.sqrt(o.length) * n.l2));
    expect(2 * o.threshold * n.skellamMu).toBeGreaterThanOrEqual((o.noiseMultiplier * n.l2) ** 2);
    expect(2 * o.threshold * n.skellamMu).toBeLessThan((o.noiseMultiplier * n.l2) ** 2 * (1 + 1e-12));
    expect(n.skellamMu).toBeLessThanOrEqual(MAX_SKELLAM_MU);
    // the largest scale with room: 50 contributions and all their noise stay below 2^63, and the next scale up does not fit
    expect(o.clients * (o.clip * n.fixedPoint.scale + 1) + skellamTail(o.clients * n.skellamMu, o.length)).toBeLessThan(2 ** 63);
    expect(() => distributedNoise({ ...o, scale: 2 * n.fixedPoint.scale })).toThrow(InvalidParameterError);
    // epsilon of a few releases: the Gaussian mechanism's at z (q = 1), a hair above (best order 4 to 8: integer orders cost little there)
    for (const steps of [1, 5]) {
      const sk = privacyEpsilon({ ...n.step, steps, delta: 1e-5 }).epsilon;
      const g = privacyEpsilon({ noiseMultiplier: o.noiseMultiplier, samplingRate: 1, steps, delta: 1e-5 }).epsilon;
      expect(sk).toBeGreaterThanOrEqual(g);
      expect(sk / g).toBeLessThan(1.01);
    }
  });

  test('settings that cannot fit are refused typed', () => {
    expect(() => distributedNoise({ clip: 1e30, noiseMultiplier: 1, length: 10, clients: 10 })).toThrow(/no fixed-point scale/);
    expect(() => distributedNoise({ clip: 1, noiseMultiplier: 1, length: 10, clients: 10, threshold: 11 })).toThrow(/above clients/);
    expect(() => distributedNoise({ clip: 1, noiseMultiplier: 0, length: 10, clients: 10 })).toThrow(InvalidParameterError);
    expect(() => distributedNoise({ clip: 1, noiseMultiplier: 1, length: 10, clients: 10, sigma: 3 } as never)).toThrow(/sigma/);
  });
});

describe('the released sum of shares', () => {
  const d = 10_000;
  const clients = 20;
  const threshold = 14;
  const noise = distributedNoise;

  /** The sum mod 2^64 of `count` clients' shares added to zero vectors, as numbers. */
  function sumOfShares(count: number, mu: number, tag: number): Float64Array {
    const acc = new BigUint64Array(d);
    for (let c = 0; c < count; c++) {
      const v = new Uint8Array(8 * d);
      addSkellamNoise(v, mu, tag < 0 ? undefined : { seed: seed(tag + c) });
      const w = new BigUint64Array(v.buffer);
      for (let i = 0; i < d; i++) acc[i] = BigInt.asUintN(64, acc[i]! + w[i]!);
    }
    return Float64Array.from(new BigInt64Array(acc.buffer), Number);
  }

  test('with every client, its variance is the target within a 99.9% chi-square interval', () => {
    const n = noise({ clip: 1, noiseMultiplier: 1, length: d, clients, threshold });
    const target = (1 * n.l2) ** 2;
    const s = sampleVariance(sumOfShares(clients, n.skellamMu, 40));
    const [lo, hi] = varianceInterval(d, 2 * clients * n.skellamMu);
    expect(s).toBeGreaterThan(lo);
    expect(s).toBeLessThan(hi);
    expect(s).toBeGreaterThan(target);
  });

  test('with 30% dropped (the threshold left), the variance is still at least the target', () => {
    const n = noise({ clip: 1, noiseMultiplier: 1, length: d, clients, threshold });
    const target = (1 * n.l2) ** 2;
    const s = sampleVariance(sumOfShares(threshold, n.skellamMu, 55));
    const [lo, hi] = varianceInterval(d, target);
    expect(s).toBeGreaterThan(lo);
    expect(s).toBeLessThan(hi);
    // fewer than the threshold would fall short: what the protocol's threshold rules out
    const below = sampleVariance(sumOfShares(threshold - 4, n.skellamMu, 70));
    expect(below).toBeLessThan(varianceInterval(d, target)[0]);
  });
});

describe('secure aggregation with distributed noise (secureSum)', () => {
  const n = 10;
  const d = 4000;
  const clip = 1;
  // the protocol's threshold: a dropped client's secrets need that many shares from the other survivors,
  // so a released sum holds at least threshold + 1 clients; calibrating for threshold is on the safe side
  const threshold = 6;
  const ids = Array.from({ length: n }, (_, i) => `c${i}`);
  // each contribution of L2 norm below clip: entries of at most 1/sqrt(d)
  const contributions = new Map(ids.map((id, i) => [id, Float64Array.from({ length: d }, (_, j) => (((i + j) % 7) - 3) / (3 * Math.sqrt(d)))]));
  const noise = distributedNoise({ clip, noiseMultiplier: 1, length: d, clients: n, threshold });

  /** The released sum less the survivors' plain sum: the noise, in real units. */
  function residual(sum: Float64Array, survivors: string[]): Float64Array {
    const out = Float64Array.from(sum);
    for (const id of survivors) {
      const v = contributions.get(id)!;
      for (let j = 0; j < d; j++) out[j]! -= v[j]!;
    }
    return out;
  }

  // fresh keys every run (no seed reaches the protocol): a 99.99% interval keeps the chance of a false failure at 1e-4
  test('every client: the noise of the released sum has the shares\' variance; 30% dropped after sharing keys: still at least the target', async () => {
    const all = await secureSum(contributions, { clip, noise, neighbours: n - 1, threshold });
    expect(all.survivors).toEqual(ids);
    const scale = noise.fixedPoint.scale;
    const target = (noise.l2 / scale) ** 2; // (z x rounded sensitivity)^2 in real units, z = 1
    const [lo, hi] = varianceInterval(d, (2 * n * noise.skellamMu) / scale ** 2, 3.8906);
    const s = sampleVariance(residual(all.sum, all.survivors));
    expect(s).toBeGreaterThan(lo);
    expect(s).toBeLessThan(hi);
    const dropped = await secureSum(contributions, { clip, noise, neighbours: n - 1, threshold, drop: { masked: ['c7', 'c8', 'c9'] } });
    expect(dropped.survivors).toEqual(ids.slice(0, 7));
    const [lo2, hi2] = varianceInterval(d, (2 * 7 * noise.skellamMu) / scale ** 2, 3.8906);
    const s2 = sampleVariance(residual(dropped.sum, dropped.survivors));
    expect(s2).toBeGreaterThan(lo2);
    expect(s2).toBeLessThan(hi2);
    expect(lo2).toBeGreaterThan(target);
    // a share the sampler cannot draw exactly is refused, typed, before anything runs
    await expect(secureSum(contributions, { clip, noise: { ...noise, skellamMu: 2 ** 49 }, neighbours: n - 1, threshold })).rejects.toThrow(/no room for the noise: each share's mu/);
  });
});

describe('fedmix privacy --mechanism skellam', () => {
  const fedmix = (...args: string[]) => spawnSync(process.execPath, [cli, 'privacy', ...args], { encoding: 'utf8' });

  test('prints epsilon and the best order as JSON, as privacyEpsilon computes them', () => {
    const r = fedmix('--mechanism', 'skellam', '--mu', '5e5', '--l1', '1e6', '--l2', '1000', '--steps', '100', '--delta', '1e-5', '--json', '-');
    expect(r.status, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { epsilon: number; order: number; mechanism: string };
    const want = privacyEpsilon({ mechanism: 'skellam', mu: 5e5, l1: 1e6, l2: 1000, steps: 100, delta: 1e-5 });
    expect(json.epsilon).toBe(want.epsilon);
    expect(json.order).toBe(want.order);
    expect(json.mechanism).toBe('skellam');
    const missing = fedmix('--mechanism', 'skellam', '--mu', '5', '--l1', '1', '--steps', '3');
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toBe('fedmix privacy: --l2 is required');
  });
});
