/**
 * A group's histograms are checked once in WASM (fm_mdm_histograms) and read
 * by every later call without checking them again (the `_held` exports):
 * the replies are bit for bit those of the raw exports, which still check
 * whatever counts they are given; the group's copy is its own (mutating the
 * arrays it was given changes nothing); dispose() frees it.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { DirichletMultinomialMixture, init, InvalidDataError, Matrix, MdmClient, MdmUserGroup, message, type Message, type Protocol } from '../ts/index.js';
import { MDM_PROTOCOL } from '../ts/federated/mdm/messages.js';
import { Rng } from '../ts/random.js';
import { MDM_INIT_STATS_OPTIONS, MDM_LOG_PMF_OPTIONS, MDM_ROUND_STATS_OPTIONS } from '../ts/wasm/abi.generated.js';
import { wasm } from '../ts/wasm/loader.js';
import { heapInUse, withScope } from '../ts/wasm/memory.js';

beforeAll(async () => {
  await init();
});

const K = 2;
const C = 5;
const N = 40;

const truth = () =>
  new DirichletMultinomialMixture({
    tau: [0.4, 0.6],
    alpha: [
      [0.2, 0.3, 2, 1, 0.5],
      [2, 2, 0.3, 0.4, 1],
    ],
    pi: Array.from({ length: K }, () => Array.from({ length: N }, (_, i) => (i >= 2 ? 1 / (N - 2) : 0))),
  });

/** m users' histograms (row-major) and sizes, drawn from the truth. */
function draw(m: number, seed: number): { counts: Float64Array; sizes: Float64Array; rows: Float64Array[] } {
  const t = truth();
  const { histograms, sizes } = t.sample(m, { seed });
  const counts = new Float64Array(m * C);
  for (let i = 0; i < m; i++) for (let j = 0; j < C; j++) counts[i * C + j] = histograms.get(i, j);
  return { counts, sizes: Float64Array.from(sizes), rows: Array.from({ length: m }, (_, i) => counts.slice(i * C, (i + 1) * C)) };
}

/** A request read through its declared type, as the runtime's ClientHost reads it before respond(). */
function readRequest(m: Message, p: Protocol = MDM_PROTOCOL): Message {
  return p.exchanges.get(m.kind)!.request.read(m);
}

/** The truth with its Dirichlet parameters moved by up to `blur` (relative), its size distribution kept. */
function blurred(blur: number): DirichletMultinomialMixture {
  const t = truth();
  const alpha = Array.from({ length: K }, (_, k) => Array.from({ length: C }, (_, j) => t.alpha[k * C + j]! * (1 + blur * Math.sin(j + 1 + k))));
  const pi = Array.from({ length: K }, (_, k) => Array.from(t.pi.subarray(k * N, (k + 1) * N)));
  return new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha, pi });
}

const modelOf = (d: DirichletMultinomialMixture) => ({ nComponents: d.nComponents, nCategories: d.nCategories, maxCount: d.maxCount, tau: d.tau, alpha: d.alpha, pi: d.pi });

/** A round's request for a model (blurred from the truth by `blur`) and its use by a role: the reply's payload, the request released. */
function round(role: MdmUserGroup, blur: number, clip?: number): Record<string, Float64Array | number> {
  const model = blurred(blur);
  const request = readRequest(message('mdm/model', 'server', 1, { model: modelOf(model), clip, logLikelihood: true }));
  try {
    return role.respond(request).payload as Record<string, Float64Array | number>;
  } finally {
    role.requestDone(request);
  }
}

/** The raw export's statistics of the same counts under the same model (checked by the core on this call). */
function rawRound(counts: Float64Array, sizes: Float64Array, blur: number, clip = Infinity): { omega: Float64Array; e: Float64Array; u: Float64Array; v: Float64Array; extra: Float64Array } {
  const model = blurred(blur);
  const m = sizes.length;
  return withScope((s) => {
    const out = s.u32(1);
    s.check(s.w.fm_mdm_prepare(K, C, N, ...model.pointers(s), out));
    const h = s.readU32(out, 1)[0]!;
    try {
      const [omega, e, u, v, extra] = [s.f64(K), s.f64(K * N), s.f64(K * C), s.f64(K), s.f64(3)];
      s.check(s.w.fm_mdm_round_stats(h, s.f64From(counts), s.f64From(sizes), s.struct(MDM_ROUND_STATS_OPTIONS, { m, clip }), omega, e, u, v, extra));
      return { omega: s.readF64(omega, K), e: s.readF64(e, K * N), u: s.readF64(u, K * C), v: s.readF64(v, K), extra: s.readF64(extra, 3) };
    } finally {
      s.w.fm_mdm_prepared_free(h);
    }
  });
}

/** The bits of a vector, so that equality is bit for bit (signed zeros, NaN payloads). */
const bits = (a: Float64Array | number) => Array.from(new Uint32Array((typeof a === 'number' ? Float64Array.of(a) : Float64Array.from(a)).buffer));

describe('the once-checked path gives the raw path, bit for bit', () => {
  test.each([
    ['80 users of different sizes (tabulated terms)', 80],
    ['3 users (direct terms)', 3],
  ])('Algorithm 2 statistics over rounds, %s, with and without clipping', (_, m) => {
    const { counts, sizes, rows } = draw(m, 7);
    const group = new MdmUserGroup('g', rows, { seeds: Array.from({ length: m }, (_, i) => i) });
    try {
      for (const [blur, clip] of [
        [0.3, undefined],
        [0.1, 0.5],
        [0.3, undefined],
      ] as const) {
        const held = round(group, blur, clip);
        const raw = rawRound(counts, sizes, blur, clip);
        expect(bits(held.omega!)).toEqual(bits(raw.omega));
        expect(bits(held.e!)).toEqual(bits(raw.e));
        expect(bits(held.u!)).toEqual(bits(raw.u));
        expect(bits(held.v!)).toEqual(bits(raw.v));
        expect(bits(held.logLikelihood!)).toEqual(bits(raw.extra[0]!));
        expect(held.unsupported).toBe(raw.extra[1]);
      }
    } finally {
      group.dispose();
    }
  });

  test("Algorithm 1 sums and the evaluation's log-likelihoods", () => {
    const m = 70;
    const { counts, sizes, rows } = draw(m, 8);
    const seeds = Array.from({ length: m }, (_, i) => 1000 + i);
    const group = new MdmUserGroup('g', rows, { seeds });
    try {
      const reply = group.respond(readRequest(message('mdm/init-request', 'server', 1, { nComponents: K, nCategories: C, maxCount: N }))).payload as Record<'e' | 'p' | 'q', Float64Array>;
      // each user's own draw, as the group makes it
      const components = Uint32Array.from(seeds, (seed) => {
        const r = new Rng(seed);
        try {
          return r.choice(K, 1)[0]!;
        } finally {
          r.dispose();
        }
      });
      const raw = withScope((s) => {
        const [e, p, q] = [s.f64(K * N), s.f64(K * C), s.f64(K * C)];
        s.check(s.w.fm_mdm_init_stats(s.struct(MDM_INIT_STATS_OPTIONS, { k: K, c: C, nMax: N, m }), s.f64From(counts), s.f64From(sizes), s.u32From(components), e, p, q));
        return { e: s.readF64(e, K * N), p: s.readF64(p, K * C), q: s.readF64(q, K * C) };
      });
      expect(bits(reply.e)).toEqual(bits(raw.e));
      expect(bits(reply.p)).toEqual(bits(raw.p));
      expect(bits(reply.q)).toEqual(bits(raw.q));

      const t = truth();
      const evaluation = group.respond(readRequest(message('mdm/evaluate', 'server', 1, { models: [modelOf(t)] }))).payload as { logLikelihood: Float64Array; counted: number };
      const ll = t.logPmf(Matrix.fromRows(rows.map((r) => Array.from(r))), { sizes });
      let sum = 0;
      for (const x of ll) sum += x;
      expect(evaluation.counted).toBe(m);
      expect(bits(evaluation.logLikelihood[0]!)).toEqual(bits(sum));
    } finally {
      group.dispose();
    }
  });
});

describe('the raw exports still check what they are given', () => {
  // drawn lazily: describe's body runs before beforeAll's init()
  const data = () => draw(4, 9);
  /** counts and sizes with one user's data spoiled */
  const tampered: [string, (c: Float64Array, n: Float64Array) => void, RegExp][] = [
    ['a NaN count', (c) => (c[C + 1] = NaN), /^count at row 1, category 1 is NaN; counts must be non-negative integers/],
    ['a negative count', (c) => (c[2] = -1), /^count at row 0, category 2 is -1/],
    ['a non-integer count', (c) => (c[3 * C] = c[3 * C]! + 0.5), /^count at row 3, category 0 is \d+\.5/],
    ['counts not summing to the size', (_, n) => (n[2] = n[2]! + 1), /^client 2: its histogram sums to \d+ but its size n is \d+/],
    ['a size above N', (c, n) => ((c[C] = c[C]! + N), (n[1] = n[1]! + N)), new RegExp(`^client 1: n = \\d+ exceeds N = ${N}`)],
    ['an infinite size', (_, n) => (n[0] = Infinity), /^client 0: its size n is Infinity/],
  ];

  test.each(tampered)('%s: fm_mdm_round_stats, fm_mdm_init_stats and fm_mdm_log_pmf refuse it with an InvalidDataError, and free what they took', (_, spoil, message) => {
    const { counts: c, sizes: n } = data();
    spoil(c, n);
    const t = truth();
    const w = wasm();
    const heap = heapInUse(w);
    const m = n.length;
    const refused = (call: () => void) => {
      let error: unknown;
      try {
        call();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(InvalidDataError);
      expect((error as Error).message).toMatch(message);
    };
    refused(() =>
      withScope((s) => {
        const out = s.u32(1);
        s.check(s.w.fm_mdm_prepare(K, C, N, ...t.pointers(s), out));
        const h = s.readU32(out, 1)[0]!;
        try {
          s.check(s.w.fm_mdm_round_stats(h, s.f64From(c), s.f64From(n), s.struct(MDM_ROUND_STATS_OPTIONS, { m, clip: Infinity }), s.f64(K), s.f64(K * N), s.f64(K * C), s.f64(K), s.f64(3)));
        } finally {
          s.w.fm_mdm_prepared_free(h);
        }
      }),
    );
    refused(() => withScope((s) => s.check(s.w.fm_mdm_init_stats(s.struct(MDM_INIT_STATS_OPTIONS, { k: K, c: C, nMax: N, m }), s.f64From(c), s.f64From(n), s.u32From(new Uint32Array(m)), s.f64(K * N), s.f64(K * C), s.f64(K * C)))));
    refused(() => withScope((s) => s.check(s.w.fm_mdm_log_pmf(s.struct(MDM_LOG_PMF_OPTIONS, { k: K, c: C, nMax: N, m }), ...t.pointers(s), s.f64From(c), s.f64From(n), s.f64(m), 0))));
    expect(heapInUse(w)).toBe(heap);
  });

  test.each(tampered.filter(([what]) => what !== 'a size above N'))('%s: fm_mdm_histograms refuses to keep it', (_, spoil, message) => {
    const { counts: c, sizes: n } = data();
    spoil(c, n);
    const heap = heapInUse(wasm());
    expect(() => withScope((s) => s.check(s.w.fm_mdm_histograms(s.f64From(c), s.f64From(n), n.length, C, s.u32(1))))).toThrow(message);
    expect(() => withScope((s) => s.check(s.w.fm_mdm_histograms(s.f64From(c), s.f64From(n), n.length, C, s.u32(1))))).toThrow(InvalidDataError);
    expect(heapInUse(wasm())).toBe(heap);
  });

  test('a kept copy is checked against each model: a size above its N, other categories', () => {
    const big = draw(3, 10);
    const group = new MdmUserGroup('g', big.rows);
    try {
      round(group, 0.2);
      const small = new DirichletMultinomialMixture({ tau: [1], alpha: [[1, 1, 1, 1, 1]], pi: [Array.from({ length: 2 }, () => 0.5)] });
      const request = readRequest(message('mdm/model', 'server', 1, { model: modelOf(small), logLikelihood: false }));
      expect(() => group.respond(request)).toThrow(InvalidDataError);
      group.requestDone(request);
      // the core's own check of the kept copy, reached directly
      // named as the raw path names it: the first client too large, with its n
      const first = big.sizes.findIndex((n) => n > 2);
      withScope((s) => {
        const out = s.u32(1);
        s.check(s.w.fm_mdm_histograms(s.f64From(big.counts), s.f64From(big.sizes), 3, C, out));
        const held = s.readU32(out, 1)[0]!;
        try {
          s.check(s.w.fm_mdm_prepare(1, C, 2, ...small.pointers(s), out));
          const h = s.readU32(out, 1)[0]!;
          try {
            expect(() => s.check(s.w.fm_mdm_round_stats_held(h, held, Infinity, s.f64(1), s.f64(2), s.f64(C), s.f64(1), s.f64(3)))).toThrow(new RegExp(`^client ${first}: n = ${big.sizes[first]} exceeds N = 2, .* at least ${big.sizes[first]}$`));
            expect(() => s.check(s.w.fm_mdm_log_pmf_held(h, held, s.f64(3), 0))).toThrow(InvalidDataError);
          } finally {
            s.w.fm_mdm_prepared_free(h);
          }
          expect(() => s.check(s.w.fm_mdm_init_stats_held(held, 1, N, s.u32From(new Uint32Array(3)), s.f64(N), s.f64(C), s.f64(C)))).not.toThrow();
          const four = new DirichletMultinomialMixture({ tau: [1], alpha: [[1, 1, 1, 1]], pi: [Array.from({ length: N }, () => 1 / N)] });
          s.check(s.w.fm_mdm_prepare(1, 4, N, ...four.pointers(s), out));
          const h4 = s.readU32(out, 1)[0]!;
          try {
            expect(() => s.check(s.w.fm_mdm_round_stats_held(h4, held, Infinity, s.f64(1), s.f64(N), s.f64(4), s.f64(1), s.f64(3)))).toThrow(/^the histograms have 5 categories but the model has 4$/);
          } finally {
            s.w.fm_mdm_prepared_free(h4);
          }
        } finally {
          s.w.fm_mdm_histograms_free(held);
        }
      });
    } finally {
      group.dispose();
    }
  });
});

describe("the group's copy is its own", () => {
  test("mutating the arrays it was given, before or after its first round, changes no reply; its counts and sizes are copies", () => {
    const m = 20;
    const { counts, sizes, rows } = draw(m, 11);
    const expected = rawRound(counts, sizes, 0.3);
    const given = { rows: rows.map((r) => r.slice()), sizes: sizes.slice() };
    const group = new MdmUserGroup('g', given.rows, { sizes: given.sizes });
    try {
      // after construction, before the copy reaches WASM
      given.rows[0]![0] = NaN;
      given.sizes[1] = -3;
      const first = round(group, 0.3);
      expect(bits(first.u!)).toEqual(bits(expected.u));
      // after: the caller's arrays and the group's public ones, spoiled
      given.rows[2]![1] = 1e9;
      given.sizes.fill(0.5);
      group.counts.fill(NaN);
      group.sizes.fill(-1);
      const second = round(group, 0.3);
      for (const key of ['omega', 'e', 'u', 'v'] as const) expect(bits(second[key]!)).toEqual(bits(expected[key]));
      expect(Array.from(group.sizes)).toEqual(Array.from(sizes));
      expect(Array.from(group.counts)).toEqual(Array.from(counts));
    } finally {
      group.dispose();
    }
  });

  test("a single client's histogram as well", () => {
    const { counts, sizes } = draw(1, 12);
    const own = counts.slice();
    const client = new MdmClient('c', own);
    try {
      own[0] = -1;
      const reply = round(client, 0.3);
      expect(bits(reply.u!)).toEqual(bits(rawRound(counts, sizes, 0.3).u));
      expect(client.size).toBe(sizes[0]);
    } finally {
      client.dispose();
    }
  });
});

describe('disposal frees the copy', () => {
  test('many groups made, used and disposed leave the heap as it was; undisposed, their copies stay', () => {
    const w = wasm();
    const { rows } = draw(50, 13);
    const before = heapInUse(w);
    const groups = Array.from({ length: 100 }, (_, g) => new MdmUserGroup(`g${g}`, rows.slice(0, 10 + (g % 40))));
    for (const g of groups) round(g, 0.2);
    // every group's copy is held: at least its counts and sizes
    const held = groups.reduce((a, g) => a + 8 * g.users * (C + 1), 0);
    expect(heapInUse(w) - before).toBeGreaterThanOrEqual(held);
    for (const g of groups) g.dispose();
    expect(heapInUse(w)).toBe(before);
  });

  test('a disposed group copies its histograms in again at its next request, and dispose() twice is harmless', () => {
    const w = wasm();
    const { counts, sizes, rows } = draw(30, 14);
    const before = heapInUse(w);
    const group = new MdmUserGroup('g', rows);
    const first = round(group, 0.2);
    group.dispose();
    expect(heapInUse(w)).toBe(before);
    const again = round(group, 0.2);
    expect(bits(again.u!)).toEqual(bits(first.u!));
    expect(bits(again.u!)).toEqual(bits(rawRound(counts, sizes, 0.2).u));
    group.dispose();
    group.dispose();
    expect(heapInUse(w)).toBe(before);
  });

  test('after the instance is replaced (init({ fresh: true })), the group copies its histograms into the new one', async () => {
    const { counts, sizes, rows } = draw(30, 15);
    const group = new MdmUserGroup('g', rows);
    try {
      round(group, 0.2);
      await init({ fresh: true });
      const after = round(group, 0.2);
      expect(bits(after.u!)).toEqual(bits(rawRound(counts, sizes, 0.2).u));
    } finally {
      group.dispose();
    }
  });
});

describe('the central fit (DirichletMultinomialMixture.fit)', () => {
  test('checks its histograms once, for the initialization and every round, and fits what the raw exports fit', () => {
    const { rows: histograms } = draw(60, 21);
    const rows = histograms.map((r) => Array.from(r));
    const w = wasm() as unknown as Record<string, (...a: number[]) => number>;
    const calls: Record<string, number> = { fm_mdm_histograms: 0, fm_mdm_init_stats: 0, fm_mdm_init_stats_held: 0, fm_mdm_round_stats: 0, fm_mdm_round_stats_held: 0 };
    const originals = Object.fromEntries(Object.keys(calls).map((name) => [name, w[name]!]));
    for (const name of Object.keys(calls)) {
      w[name] = (...a: number[]) => {
        calls[name]!++;
        return originals[name]!(...a);
      };
    }
    let model: DirichletMultinomialMixture;
    try {
      model = DirichletMultinomialMixture.fit(rows, { nComponents: K, rounds: 4, seed: 3, maxCount: N });
    } finally {
      Object.assign(w, originals);
    }
    expect(calls).toEqual({ fm_mdm_histograms: 1, fm_mdm_init_stats: 0, fm_mdm_init_stats_held: 1, fm_mdm_round_stats: 0, fm_mdm_round_stats_held: 4 });
    // a warm start from that model: no initialization, one check
    const again = DirichletMultinomialMixture.fit(rows, { rounds: 0, maxCount: N, init: model });
    expect(again.toJSON()).toEqual(model.toJSON());
    // a tampered count is refused by the one check, with nothing left on the heap
    const heap = heapInUse(wasm());
    const bad = rows.map((r) => r.slice());
    bad[7]![2] = 0.5;
    expect(() => DirichletMultinomialMixture.fit(bad, { nComponents: K, rounds: 2, seed: 3, maxCount: N })).toThrow(InvalidDataError);
    expect(heapInUse(wasm())).toBe(heap);
  });
});
