/**
 * The privacy accountant (ts/privacy/accountant.ts, crates/fedmix-core/src/privacy/)
 * against RDP integrated numerically with mpmath (scripts/gen-privacy-fixtures.py:
 * the integral of the sampled Gaussian's Rényi divergence at 40 digits, not the
 * series the core sums), and `fedmix privacy` as a user runs it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import { DEFAULT_RDP_ORDERS, epsilonFromRdp, privacyEpsilon, RdpAccountant, rdpSampledGaussian } from '../ts/privacy/accountant.js';
import { init } from '../ts/wasm/loader.js';
import { withScope } from '../ts/wasm/memory.js';

interface Fixture {
  delta: number;
  orders: number[];
  steps: number[];
  cases: { q: number; sigma: number; rdp: number[]; epsilon: Record<string, { epsilon: number; order: number }> }[];
  erfc: { x: number; lnErfc: number }[];
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/privacy_rdp.json', import.meta.url), 'utf8')) as Fixture;
const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));

beforeAll(async () => {
  await init();
});

const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

describe('the RDP accountant against mpmath', () => {
  test("the default orders are Opacus' and the fixture's", () => {
    expect(DEFAULT_RDP_ORDERS.length).toBe(151);
    expect([...DEFAULT_RDP_ORDERS]).toEqual(fixture.orders.map((a) => expect.closeTo(a, 12)));
  });

  test('ln erfc, where erfc underflows too', () => {
    const xs = Float64Array.from(fixture.erfc, (e) => e.x);
    const got = withScope((s) => {
      const p = s.f64From(xs);
      s.w.fm_ln_erfc(p, xs.length);
      return s.readF64(p, xs.length);
    });
    fixture.erfc.forEach((e, i) => expect(Math.abs(got[i]! - e.lnErfc), `x = ${e.x}`).toBeLessThanOrEqual(1e-13 * Math.max(1, Math.abs(e.lnErfc))));
  });

  test('RDP of one step at every order within 1e-6, epsilon within 0.1% with the same order, for 16 (q, sigma) and 1, 100, 10,000 steps', () => {
    let worstRdp = 0;
    let worstEps = 0;
    expect(fixture.cases.length).toBe(16);
    for (const c of fixture.cases) {
      const rdp = rdpSampledGaussian({ samplingRate: c.q, noiseMultiplier: c.sigma });
      c.rdp.forEach((r, i) => {
        // RDP values below 1e-12 are compared absolutely: they no longer move any epsilon
        const err = r < 1e-12 ? Math.abs(rdp[i]! - r) : relative(rdp[i]!, r);
        worstRdp = Math.max(worstRdp, err);
        expect(err, `q ${c.q} sigma ${c.sigma} order ${fixture.orders[i]}: ${rdp[i]} vs ${r}`).toBeLessThanOrEqual(1e-6);
      });
      for (const t of fixture.steps) {
        const want = c.epsilon[String(t)]!;
        const got = privacyEpsilon({ samplingRate: c.q, noiseMultiplier: c.sigma, steps: t, delta: fixture.delta });
        const err = relative(got.epsilon, want.epsilon);
        worstEps = Math.max(worstEps, err);
        expect(err, `q ${c.q} sigma ${c.sigma} steps ${t}: ${got.epsilon} vs ${want.epsilon}`).toBeLessThanOrEqual(1e-3);
        expect(got.order, `q ${c.q} sigma ${c.sigma} steps ${t}`).toBeCloseTo(want.order, 9);
      }
    }
    console.log(`worst relative error against mpmath: RDP ${worstRdp.toExponential(1)}, epsilon ${worstEps.toExponential(1)}`);
  });
});

describe('RdpAccountant', () => {
  test('steps compose by adding RDP: an accountant equals the one-call epsilon, and saves and loads', () => {
    const a = new RdpAccountant();
    for (let i = 0; i < 50; i++) a.step({ noiseMultiplier: 1.1, samplingRate: 0.01 });
    a.step({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 50 });
    a.step({ noiseMultiplier: 2, samplingRate: 0.1, steps: 10 });
    expect(a.history).toEqual([
      { noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100 },
      { noiseMultiplier: 2, samplingRate: 0.1, steps: 10 },
    ]);
    const once = rdpSampledGaussian({ noiseMultiplier: 1.1, samplingRate: 0.01 });
    const other = rdpSampledGaussian({ noiseMultiplier: 2, samplingRate: 0.1 });
    const total = once.map((r, i) => 100 * r + 10 * other[i]!);
    a.rdp.forEach((r, i) => expect(relative(r, total[i]!)).toBeLessThan(1e-12));
    expect(a.epsilon(1e-5).epsilon).toBeCloseTo(epsilonFromRdp(total, 1e-5).epsilon, 10);
    // one kind of step: the accountant and privacyEpsilon agree
    const b = new RdpAccountant().step({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100 });
    expect(b.epsilon(1e-5)).toEqual(privacyEpsilon({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100, delta: 1e-5 }));
    const loaded = RdpAccountant.fromJSON(JSON.parse(JSON.stringify(a)));
    expect(loaded.epsilon(1e-5)).toEqual(a.epsilon(1e-5));
    expect(loaded.history).toEqual(a.history);
  });

  test('more noise spends less, more sampling and more steps spend more; no noise is infinite, no sampling is free', () => {
    const eps = (noiseMultiplier: number, samplingRate: number, steps: number) => privacyEpsilon({ noiseMultiplier, samplingRate, steps, delta: 1e-5 }).epsilon;
    expect(eps(2, 0.01, 100)).toBeLessThan(eps(1, 0.01, 100));
    expect(eps(1, 0.02, 100)).toBeGreaterThan(eps(1, 0.01, 100));
    expect(eps(1, 0.01, 200)).toBeGreaterThan(eps(1, 0.01, 100));
    expect(privacyEpsilon({ noiseMultiplier: 0, samplingRate: 0.01, steps: 1, delta: 1e-5 })).toEqual({ epsilon: Infinity, delta: 1e-5, order: undefined });
    // no loss at any order is (0, 0)-DP, not the conversion's slack (0.10 at order 63 for delta 1e-5)
    expect(privacyEpsilon({ noiseMultiplier: 1, samplingRate: 0, steps: 100, delta: 1e-5 })).toEqual({ epsilon: 0, delta: 1e-5, order: undefined });
    expect(eps(1, 0.01, 0)).toBe(0);
    expect(new RdpAccountant().epsilon(1e-5).epsilon).toBe(0);
  });

  test('bad arguments are typed errors that say what to change; honest ones at the edges pass', () => {
    const bad: [string, () => unknown][] = [
      ['samplingRate must be a number in [0, 1]', () => privacyEpsilon({ noiseMultiplier: 1, samplingRate: 1.5, steps: 1, delta: 1e-5 })],
      ['noiseMultiplier must be a finite number >= 0', () => privacyEpsilon({ noiseMultiplier: -1, samplingRate: 0.1, steps: 1, delta: 1e-5 })],
      ['noiseMultiplier must be a finite number >= 0', () => privacyEpsilon({ noiseMultiplier: NaN, samplingRate: 0.1, steps: 1, delta: 1e-5 })],
      ['delta must be a number in (0, 1)', () => privacyEpsilon({ noiseMultiplier: 1, samplingRate: 0.1, steps: 1, delta: 0 })],
      ['steps must be', () => privacyEpsilon({ noiseMultiplier: 1, samplingRate: 0.1, steps: -1, delta: 1e-5 })],
      ['steps must be', () => privacyEpsilon({ noiseMultiplier: 1, samplingRate: 0.1, steps: 1.5, delta: 1e-5 })],
      ['every order must be a number in (1, 1024]', () => new RdpAccountant({ orders: [1, 2] })],
      // the core sums about alpha terms per order: a huge order (a tampered file's) is refused, not summed for minutes
      ['every order must be a number in (1, 1024]', () => RdpAccountant.fromJSON({ kind: 'RdpAccountant', orders: [2, 1e300], history: [] })],
      ['orders must hold 1 to 1000 orders', () => new RdpAccountant({ orders: Array.from({ length: 1001 }, (_, i) => 2 + i / 1000) })],
      ['at most 10000 kinds of step', () => RdpAccountant.fromJSON({ kind: 'RdpAccountant', orders: [2], history: Array.from({ length: 10_001 }, (_, i) => ({ noiseMultiplier: 1 + i, samplingRate: 0.1, steps: 1 })) })],
      ['orders must hold 1 to', () => new RdpAccountant({ orders: [] })],
      ['unknown', () => privacyEpsilon({ noiseMultiplier: 1, samplingRate: 0.1, steps: 1, delta: 1e-5, sigma: 2 } as never)],
      ['not a saved RdpAccountant', () => RdpAccountant.fromJSON({ orders: [2], history: [] })],
      ['samplingRate must be a number in [0, 1]', () => RdpAccountant.fromJSON({ kind: 'RdpAccountant', orders: [2], history: [{ noiseMultiplier: 1, samplingRate: 7, steps: 1 }] })],
      ['rdp has 1 values for 2 orders', () => epsilonFromRdp([1], 1e-5, [2, 3])],
    ];
    for (const [message, call] of bad) {
      let thrown: unknown;
      try {
        call();
      } catch (e) {
        thrown = e;
      }
      expect(thrown, message).toBeInstanceOf(InvalidParameterError);
      expect((thrown as Error).message, message).toContain(message);
    }
    for (const [q, s] of [[0, 1], [1, 1], [1e-9, 50], [0.5, 0.3]] as const) {
      expect(Number.isFinite(privacyEpsilon({ noiseMultiplier: s, samplingRate: q, steps: 1000, delta: 1e-9 }).epsilon), `${q} ${s}`).toBe(true);
    }
  });
});

describe('fedmix privacy', () => {
  const fedmix = (...args: string[]) => spawnSync(process.execPath, [cli, 'privacy', ...args], { encoding: 'utf8' });

  test('prints epsilon, and its JSON has a top-level epsilon and the best order', () => {
    const want = fixture.cases.find((c) => c.q === 0.01 && c.sigma === 1.1)!.epsilon['10000']!;
    const r = fedmix('--noise-multiplier', '1.1', '--sampling-rate', '0.01', '--steps', '10000', '--delta', '1e-5', '--json', '-');
    expect(r.status, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { epsilon: number; order: number; delta: number };
    expect(relative(json.epsilon, want.epsilon)).toBeLessThanOrEqual(1e-3);
    expect(json.order).toBe(want.order);
    expect(json.delta).toBe(1e-5);
    const text = fedmix('--noise-multiplier', '1.1', '--sampling-rate', '0.01', '--steps', '10000');
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^epsilon \d+\.\d+ at delta 0.00001 after 10000 steps/);
  });

  test('a missing or bad flag is status 2 with one line saying what to change', () => {
    const missing = fedmix('--noise-multiplier', '1.1', '--steps', '10');
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim()).toBe('fedmix privacy: --sampling-rate is required');
    const bad = fedmix('--noise-multiplier', '1.1', '--sampling-rate', '2', '--steps', '10');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('samplingRate must be a number in [0, 1], got 2');
  });
});
