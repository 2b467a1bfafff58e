/**
 * Mixtures of Dirichlet-multinomials: the model (log-pmf, sampling, JSON), the
 * client and server statistics against the plain numpy reference, the
 * federated roles on the federation runtime (client, secure aggregator,
 * server; by hand and through runFederationSync), what the aggregator and the
 * server check, the pinned recovery case, K selection, bad input.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  ClientHost,
  decodeMessage,
  DirichletMultinomialMixture,
  encodeMessage,
  FederationError,
  fitMdm,
  init,
  InProcessTransport,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  Matrix,
  MDM_MAX_CELLS,
  MDM_PROTOCOL,
  MdmAggregator,
  MdmClient,
  MdmServer,
  mdmRecoveryError,
  mdmSensitivity,
  message,
  normalizedError,
  runFederationSync,
  selectMdm,
  type ClientRole,
  type Encoding,
  type Exchange,
  type ExchangeOptions,
  type Failure,
  type MdmParams,
  type Message,
  type Protocol,
  type RoundContext,
  type ServerRole,
} from '../ts/index.js';
import { FieldSums } from '../ts/federated/aggregate.js';
import { histogramRows } from '../ts/models/dirichlet-multinomial-mixture.js';
import { parseOptions } from '../ts/cli/args.js';
import { clientOptions, clientRoleOptions } from '../ts/cli/federation.js';
import { makeClient, matrixData } from '../ts/federated/algorithms.js';
import { MDM_INIT_STATS_OPTIONS, MDM_INITIALIZE_OPTIONS, MDM_ROUND_STATS_OPTIONS, MDM_UPDATE_OPTIONS } from '../ts/wasm/abi.generated.js';
import { Scope, withScope } from '../ts/wasm/memory.js';
import { wasm } from '../ts/wasm/loader.js';
import { Recording, expectClean, fixture, maxRelativeError } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** Rows of a flat row-major K x W array. */
const rows = (v: ArrayLike<number>, w: number) => Array.from({ length: v.length / w }, (_, r) => Array.from(v).slice(r * w, (r + 1) * w));

/** pi rows putting all mass on one size n (1-based) out of N. */
const fixedSize = (k: number, n: number, nMax = n) => Array.from({ length: k }, () => Array.from({ length: nMax }, (_, i) => (i === n - 1 ? 1 : 0)));

/** Table 1 (Appendix C.3), medium heterogeneity, 2 components; clients of 100 points. */
const MEDIUM2 = {
  tau: [0.4, 0.6],
  alpha: [
    [0.1, 0.2, 0.6, 1.0, 2.0, 0.1, 1.0, 2.0, 0.5, 0.5],
    [2.5, 2.6, 2.7, 2.8, 3.0, 2.5, 2.0, 3.0, 1.0, 0.9],
  ],
  pi: fixedSize(2, 100),
};

/** Every histogram of size n over c categories. */
function compositions(n: number, c: number): number[][] {
  if (c === 1) return [[n]];
  const out: number[][] = [];
  for (let a = 0; a <= n; a++) for (const rest of compositions(n - a, c - 1)) out.push([a, ...rest]);
  return out;
}

describe('DirichletMultinomialMixture', () => {
  const small = () =>
    new DirichletMultinomialMixture({
      tau: [0.3, 0.7],
      alpha: [
        [0.5, 1.5, 2.0],
        [0.05, 0.2, 4.0],
      ],
      pi: [
        [0.2, 0.3, 0.5],
        [0.6, 0.0, 0.4],
      ],
    });

  test('q(c, n) sums to 1 over every histogram and size (equations 1-3)', () => {
    const m = small();
    let total = 0;
    for (let n = 1; n <= 3; n++) total += m.logPmf(compositions(n, 3)).reduce((a, l) => a + Math.exp(l), 0);
    expect(Math.abs(total - 1)).toBeLessThan(1e-13);
    // a size with probability 0 in every component
    const zero = new DirichletMultinomialMixture({ tau: [1], alpha: [[1, 1]], pi: [[0, 1]] });
    expect(zero.logPmf([[1, 0]])[0]).toBe(-Infinity);
  });

  test('responsibilities are eq 12 and sum to 1', () => {
    const m = small();
    const h = [
      [2, 0, 1],
      [0, 0, 3],
      [1, 0, 0],
    ];
    const p = m.predictProba(h);
    const ll = m.logPmf(h);
    for (let i = 0; i < 3; i++) {
      const n = h[i]!.reduce((a, b) => a + b, 0);
      // omega_k = tau_k pi_{k,n} p(c | n, alpha_k) / q(c, n), with the one-component models as p(c | n, alpha_k) pi_{k,n}
      for (let k = 0; k < 2; k++) {
        const one = new DirichletMultinomialMixture({ tau: [1], alpha: [Array.from(m.alphaOf(k))], pi: [Array.from(m.piOf(k))] });
        const joint = m.tau[k]! * Math.exp(one.logPmf([h[i]!])[0]!);
        expect(Math.abs(p.get(i, k) - joint / Math.exp(ll[i]!))).toBeLessThan(1e-13);
      }
      expect(Math.abs(p.get(i, 0) + p.get(i, 1) - 1)).toBeLessThan(1e-15);
      expect(n).toBeGreaterThan(0);
    }
    expect(Array.from(m.predict(h))).toEqual([0, 1, 1].map((_, i) => (p.get(i, 0) > p.get(i, 1) ? 0 : 1)));
  });

  test('sampling: reproducible, sizes from pi, proportions with mean alpha / alpha_0', () => {
    const m = new DirichletMultinomialMixture({
      tau: [0.25, 0.75],
      alpha: [
        [1, 2, 7],
        [5, 4, 1],
      ],
      pi: [
        [0, 0, 1, 0],
        [0.5, 0, 0, 0.5],
      ],
    });
    const s = m.sample(20000, { seed: 4 });
    expect(m.sample(50, { seed: 9 })).toEqual(m.sample(50, { seed: 9 }));
    const share0 = s.components.filter((k) => k === 0).length / 20000;
    expect(Math.abs(share0 - 0.25)).toBeLessThan(0.015);
    for (let i = 0; i < 20000; i++) {
      const n = s.sizes[i]!;
      expect(s.components[i] === 0 ? n === 3 : n === 1 || n === 4).toBe(true);
      expect(s.histograms.row(i).reduce((a, b) => a + b, 0)).toBe(n);
    }
    for (const k of [0, 1]) {
      const idx = Array.from(s.components.keys()).filter((i) => s.components[i] === k);
      const a = m.alphaOf(k);
      const a0 = a.reduce((x, y) => x + y, 0);
      for (let j = 0; j < 3; j++) {
        const mean = idx.reduce((acc, i) => acc + s.histograms.get(i, j) / s.sizes[i]!, 0) / idx.length;
        expect(Math.abs(mean - a[j]! / a0)).toBeLessThan(0.02);
      }
    }
  });

  test('toJSON / fromJSON round trip; plain { tau, alpha, pi } is accepted', () => {
    const m = new DirichletMultinomialMixture({ ...MEDIUM2, categories: Array.from({ length: 10 }, (_, j) => `class ${j}`) });
    const back = DirichletMultinomialMixture.fromJSON(JSON.stringify(m.toJSON()));
    expect(back.tau).toEqual(m.tau);
    expect(back.alpha).toEqual(m.alpha);
    expect(back.pi).toEqual(m.pi);
    expect(back.categories).toEqual(m.categories);
    const plain = DirichletMultinomialMixture.fromJSON({ tau: MEDIUM2.tau, alpha: MEDIUM2.alpha, pi: MEDIUM2.pi });
    expect(plain.alpha).toEqual(m.alpha);
    expect(plain.maxCount).toBe(100);
    expect(m.toJSON().alpha).toEqual(MEDIUM2.alpha);
    expect(m.toJSON().pi[1]).toHaveLength(100);
  });

  test('bad parameters are InvalidParameterErrors that say what to change', () => {
    const ok = { tau: [0.5, 0.5], alpha: [[1, 1], [2, 2]], pi: [[1], [1]] };
    expectClean(() => new DirichletMultinomialMixture({ ...ok, tau: [0.5, 0.6] }), InvalidParameterError, /tau must sum to 1/);
    expectClean(() => new DirichletMultinomialMixture({ ...ok, alpha: [[1, 0], [2, 2]] }), InvalidParameterError, /row 0, category 1 is 0; it must be positive/);
    expectClean(() => new DirichletMultinomialMixture({ ...ok, alpha: [[1, NaN], [2, 2]] }), InvalidParameterError, /category 1 is NaN/);
    // finite parameters whose sum is not (NaN log-pmfs otherwise), and subnormal ones (psi overflows)
    expectClean(() => new DirichletMultinomialMixture({ ...ok, alpha: [[1e308, 1e308], [2, 2]] }), InvalidParameterError, /row 0 sum to Infinity; their sum alpha_0 must be finite/);
    expectClean(() => DirichletMultinomialMixture.fromJSON(JSON.stringify({ ...ok, alpha: [[2, 2], [1e308, 1e308]] })), InvalidParameterError, /row 1 sum to Infinity/);
    expectClean(() => new DirichletMultinomialMixture({ ...ok, alpha: [[5e-324, 1], [2, 2]] }), InvalidParameterError, /row 0, category 0 is 5e-324, a subnormal number; it must be at least 2\.2250738585072014e-308/);
    const least = new DirichletMultinomialMixture({ tau: [1], alpha: [[2.2250738585072014e-308, 1]], pi: [[1]] });
    expect(least.logPmf([[1, 0]])[0]).toBeCloseTo(Math.log(2.2250738585072014e-308), 10);
    expectClean(() => new DirichletMultinomialMixture({ ...ok, pi: [[1], [0.5]] }), InvalidParameterError, /pi\[1\] must sum to 1/);
    expectClean(() => new DirichletMultinomialMixture({ ...ok, alpha: [[1, 1]] }), InvalidParameterError, /alpha has 1 rows but tau has 2/);
    expectClean(() => new DirichletMultinomialMixture({ tau: [1], alpha: [[1]], pi: [[1]] }), InvalidDataError, /at least 2/);
    expectClean(() => DirichletMultinomialMixture.fromJSON('{"tau": [1]}'), InvalidParameterError, /needs "alpha"/);
    expectClean(() => DirichletMultinomialMixture.fromJSON({ ...ok, format: 'fedmix.GaussianMixture' } as never), InvalidParameterError, /not a DirichletMultinomialMixture/);
    const m = new DirichletMultinomialMixture(ok);
    expectClean(() => m.logPmf([[1, 1, 1]]), InvalidDataError, /3 categories but the model has 2/);
    expectClean(() => m.logPmf([[1, 1]]), InvalidDataError, /n = 2 exceeds N = 1/);
    expectClean(() => m.logPmf([[1, -1]]), InvalidDataError, /non-negative integers/);
    expectClean(() => m.logPmf([[0.5, 0.5]]), InvalidDataError, /non-negative integers/);
    expectClean(() => m.logPmf([[1, 0]], { sizes: [2] }), InvalidDataError, /sums to 1 but its size n is 2/);
    expectClean(() => m.logPmf([[0, 0]]), InvalidDataError, /whole number >= 1/);
    expectClean(() => m.sample(-1), InvalidParameterError, /m must be an integer/);
  });
});

describe('against the plain numpy reference (scripts/mdm_reference.py)', () => {
  interface Fx {
    k: number;
    c: number;
    nMax: number;
    counts: number[];
    components: number[];
    init: Record<'e' | 'p' | 'q' | 'tau' | 'alpha' | 'pi', number[]>;
    round: Record<'omega' | 'e' | 'u' | 'v' | 'tau' | 'alpha' | 'pi', number[]>;
  }
  const fx = fixture<Fx>('mdm.json');
  const m = fx.counts.length / fx.c;
  const sizes = rows(fx.counts, fx.c).map((r) => r.reduce((a, b) => a + b, 0));

  test("Algorithm 1: the clients' sums and the moment-matching initialization (eqs 5, 6, 9)", () => {
    const { k, c, nMax } = fx;
    const out = withScope((s) => {
      const [e, p, q] = [s.f64(k * nMax), s.f64(k * c), s.f64(k * c)];
      const comps = s.u32(m);
      new Uint32Array(s.w.memory.buffer, comps, m).set(fx.components);
      s.check(s.w.fm_mdm_init_stats(s.struct(MDM_INIT_STATS_OPTIONS, { k, c, nMax, m }), s.f64From(fx.counts), s.f64From(sizes), comps, e, p, q));
      const [tau, alpha, pi, flags] = [s.f64(k), s.f64(k * c), s.f64(k * nMax), s.f64(1)];
      s.check(s.w.fm_mdm_initialize(s.struct(MDM_INITIALIZE_OPTIONS, { k, c, nMax, clients: m, noisy: 0 }), e, p, q, tau, alpha, pi, flags));
      return { e: s.readF64(e, k * nMax), p: s.readF64(p, k * c), q: s.readF64(q, k * c), tau: s.readF64(tau, k), alpha: s.readF64(alpha, k * c), pi: s.readF64(pi, k * nMax), flags: s.readF64(flags, 1)[0] };
    });
    expect(Array.from(out.e)).toEqual(fx.init.e);
    expect(maxRelativeError(out.p, fx.init.p, 1e-300)).toBeLessThan(1e-14);
    expect(maxRelativeError(out.q, fx.init.q, 1e-300)).toBeLessThan(1e-14);
    expect(out.flags).toBe(0);
    expect(maxRelativeError(out.tau, fx.init.tau)).toBeLessThan(1e-15);
    expect(maxRelativeError(out.alpha, fx.init.alpha)).toBeLessThan(1e-12);
    expect(maxRelativeError(out.pi, fx.init.pi, 1e-300)).toBeLessThan(1e-15);
  });

  test("Algorithm 2: the clients' statistics (eqs 12-14) and the update (eqs 17-19), through the client role", () => {
    const { k, c, nMax } = fx;
    const model = new DirichletMultinomialMixture({ tau: fx.init.tau, alpha: rows(fx.init.alpha, c), pi: rows(fx.init.pi, nMax) });
    const payload = { model: { nComponents: k, nCategories: c, maxCount: nMax, tau: model.tau, alpha: model.alpha, pi: model.pi }, logLikelihood: true };
    // every client answers as a client role; the sums are what an aggregator releases
    const sum = { omega: new Float64Array(k), e: new Float64Array(k * nMax), u: new Float64Array(k * c), v: new Float64Array(k) };
    for (const [i, h] of rows(fx.counts, c).entries()) {
      const client = new MdmClient(`c${i}`, h, { seed: i });
      const reply = client.respond(readRequest(message('mdm/model', 'server', 1, payload))).payload as Record<keyof typeof sum, Float64Array>;
      for (const key of Object.keys(sum) as (keyof typeof sum)[]) reply[key].forEach((x, j) => (sum[key][j]! += x));
      client.dispose();
    }
    expect(maxRelativeError(sum.omega, fx.round.omega)).toBeLessThan(1e-12);
    expect(maxRelativeError(sum.e, fx.round.e, 1e-12)).toBeLessThan(1e-12);
    expect(maxRelativeError(sum.u, fx.round.u, 1e-12)).toBeLessThan(1e-12);
    expect(maxRelativeError(sum.v, fx.round.v)).toBeLessThan(1e-12);
    // the batch kernel gives the same sums, and the update matches numpy's
    const next = withScope((s) => {
      const [omega, e, u, v, extra] = [s.f64(k), s.f64(k * nMax), s.f64(k * c), s.f64(k), s.f64(3)];
      const handle = s.u32(1);
      s.check(s.w.fm_mdm_prepare(k, c, nMax, ...model.pointers(s), handle));
      const prepared = s.readU32(handle, 1)[0]!;
      try {
        s.check(s.w.fm_mdm_round_stats(prepared, s.f64From(fx.counts), s.f64From(sizes), s.struct(MDM_ROUND_STATS_OPTIONS, { m, clip: Infinity }), omega, e, u, v, extra));
      } finally {
        s.w.fm_mdm_prepared_free(prepared);
      }
      expect(maxRelativeError(s.readF64(u, k * c), sum.u, 1e-12)).toBeLessThan(1e-13);
      expect(s.readF64(extra, 3)[2]).toBe(m);
      const [tau, alpha, pi, flags] = [s.f64(k), s.f64(k * c), s.f64(k * nMax), s.f64(1)];
      s.check(s.w.fm_mdm_update(s.struct(MDM_UPDATE_OPTIONS, { k, c, nMax, clients: m, noisy: 0 }), ...model.pointers(s), omega, e, u, v, tau, alpha, pi, flags));
      return { tau: s.readF64(tau, k), alpha: s.readF64(alpha, k * c), pi: s.readF64(pi, k * nMax), flags: s.readF64(flags, 1)[0] };
    });
    expect(next.flags).toBe(0);
    expect(maxRelativeError(next.tau, fx.round.tau)).toBeLessThan(1e-12);
    expect(maxRelativeError(next.alpha, fx.round.alpha)).toBeLessThan(1e-11);
    expect(maxRelativeError(next.pi, fx.round.pi, 1e-12)).toBeLessThan(1e-12);
  });
});


/** A request read through its declared type, as the runtime's ClientHost reads it before respond(). */
function readRequest(m: Message, p: Protocol = MDM_PROTOCOL): Message {
  return p.exchanges.get(m.kind)!.request.read(m);
}

/** A reply read through the type its request pairs with, as the runtime reads it before accept(). */
function readReply(request: Message, reply: Message, p: Protocol = MDM_PROTOCOL): Message {
  return p.exchanges.get(request.kind)!.reply!.read(reply);
}

/** A server's aggregate() as the runtime calls it (the round, the accepted replies, the round's failures). */
function aggregate<A>(server: ServerRole<A>, round: RoundContext, accepted: ReadonlyMap<string, A>, failures: Failure[]): unknown {
  return server.aggregate(round, accepted, failures);
}

/** A server's accept() as the runtime calls it (the role contract: the reply, the request it answers, the round). */
function accept<A>(server: ServerRole<A>, reply: Message, request: Message, round: RoundContext): A {
  return server.accept(reply, request, round);
}

/** A message as its receiver gets it off the wire. */
function wire(m: Message, encoding: Encoding = 'binary'): Message {
  return decodeMessage(encodeMessage(m, encoding));
}

/** An aggregator that records what it releases; `edit` may change it on the way to the server. */
class Watched extends MdmAggregator {
  readonly released: Message[] = [];
  edit: ((m: Message) => Message) | undefined;
  override release() {
    let m: Message = super.release();
    if (this.edit) m = this.edit(m);
    this.released.push(m);
    return m as ReturnType<MdmAggregator['release']>;
  }
}

interface RunOptions {
  k: number;
  rounds: number;
  cohort?: number;
  seed?: number;
  onInvalidClient?: 'exclude' | 'throw';
  privacy?: { noiseMultiplier: number; clip: number };
  skip?: number;
  /** initial parameters instead of Algorithm 1: the first round is then one of Algorithm 2 */
  init?: DirichletMultinomialMixture;
  encoding?: Encoding;
  /** a transport of its own for the (wrapped) clients */
  transport?: (clients: ClientRole[]) => InProcessTransport;
}

/** Server, aggregator and clients through runFederationSync; `wrap` may replace client i. Everything but the model is disposed. */
function run(h: number[][], options: RunOptions, wrap?: (c: MdmClient, i: number) => ClientRole) {
  // ids and seeds follow the row, so that a run without one client is the same run otherwise
  const clients = h.flatMap((r, i) => (i === options.skip ? [] : [new MdmClient(`client-${i}`, r, { seed: 100 + i })]));
  const aggregator = new Watched({ noiseMultiplier: options.privacy?.noiseMultiplier, seed: 5 });
  let server: MdmServer | undefined;
  try {
    server = new MdmServer(
      {
        nComponents: options.k,
        nCategories: h[0]!.length,
        maxCount: Math.max(...h.map((r) => r.reduce((a, b) => a + b, 0))),
        rounds: options.rounds,
        cohort: options.cohort,
        seed: options.seed ?? 1,
        onInvalidClient: options.onInvalidClient,
        privacy: options.privacy,
        init: options.init,
      },
      aggregator,
    );
    const roles = clients.map((c) => {
      const i = Number(c.id.slice('client-'.length));
      return wrap ? wrap(c, i) : c;
    });
    const transport = options.transport ? options.transport(roles) : new InProcessTransport(roles, { encoding: options.encoding });
    const result = runFederationSync(server, transport, { onInvalid: options.onInvalidClient === 'throw' ? 'fail' : 'exclude' });
    return { result, model: result.model, history: server.history, released: aggregator.released, roles };
  } finally {
    server?.dispose();
    aggregator.dispose();
    for (const c of clients) c.dispose();
  }
}

/** Created on first use: the WASM core loads in beforeAll. */
function lazy<T>(make: () => T): () => T {
  let v: T | undefined;
  return () => (v ??= make());
}

const fedTruth = lazy(
  () =>
    new DirichletMultinomialMixture({
      tau: [0.4, 0.6],
      alpha: [
        [0.2, 0.5, 1.0, 2.0],
        [3.0, 2.0, 1.0, 0.5],
      ],
      pi: [Array.from({ length: 30 }, (_, i) => (i >= 9 && i < 20 ? 1 / 11 : 0)), Array.from({ length: 30 }, (_, i) => (i >= 19 ? 1 / 11 : 0))],
    }),
);
const fedData = lazy(() => fedTruth().sample(400, { seed: 8 }).histograms.toRows());

const ctx = (round: number, clients: string[]): RoundContext => ({ round, clients, available: clients });

describe('federated inference', () => {
  test("full batch (Theorem 3.1): every round's log-likelihood is at least the last", () => {
    const { history, result } = run(fedData(), { k: 2, rounds: 25 });
    const ll = history.map((r) => r.meanLogLikelihood!);
    expect(ll).toHaveLength(25);
    for (let t = 1; t < ll.length; t++) expect(ll[t]!).toBeGreaterThanOrEqual(ll[t - 1]! - 1e-12 * Math.abs(ll[t - 1]!));
    expect(ll[24]! - ll[0]!).toBeGreaterThan(0.05);
    expect(history.every((r) => r.clients === 400 && r.unsupported === 0)).toBe(true);
    // the runtime's round records carry the server's: the init round reports nothing, then each Algorithm 2 round
    expect(result.history[0]!.metrics).toBeUndefined();
    expect(result.history.slice(1).map((r) => r.metrics)).toEqual(history);
  });

  test('fitMdm is the same run: same seed, same model; cohorts sample clients each round', () => {
    const a = fitMdm(fedData(), { nComponents: 2, rounds: 10, cohort: 100, seed: 3 });
    const b = fitMdm(fedData(), { nComponents: 2, rounds: 10, cohort: 100, seed: 3 });
    expect(a.model.alpha).toEqual(b.model.alpha);
    expect(a.history.every((r) => r.clients === 100)).toBe(true);
    // traffic: the init round and 10 rounds, one message each way per cohort client
    expect(a.traffic.rounds).toBe(11);
    expect(a.traffic.messagesUp).toBe(1100);
    expect(a.traffic.messagesDown).toBe(1100);
    expect(a.federation.history.every((r) => r.asked === 100 && r.accepted === 100)).toBe(true);
    const c = fitMdm(fedData(), { nComponents: 2, rounds: 10, cohort: 100, seed: 4 });
    expect(c.model.alpha).not.toEqual(a.model.alpha);
    // the encoding changes the bytes, not the model
    const json = fitMdm(fedData(), { nComponents: 2, rounds: 10, cohort: 100, seed: 3, encoding: 'json' });
    expect(json.model.alpha).toEqual(a.model.alpha);
    expect(json.history).toEqual(a.history);
    expect(json.traffic.messagesUp).toBe(1100);
    expect(json.traffic.bytesUp).not.toBe(a.traffic.bytesUp);
  });

  test.each(['binary', 'json'] as const)('%s: the counted bytes are those of the messages sent and received', (encoding) => {
    const r = run(checkData(), { k: 2, rounds: 3, encoding }, (c) => new Recording(c));
    const recs = r.roles as Recording[];
    // as they travel: every message carries the run's id (the client's host stamps its replies)
    const bytes = (ms: Message[]) => ms.reduce((a, m) => a + encodeMessage({ ...m, run: r.result.run }, encoding).length, 0);
    expect(r.result.traffic.bytesUp).toBe(bytes(recs.flatMap((c) => c.sent)));
    expect(r.result.traffic.bytesDown).toBe(bytes(recs.flatMap((c) => c.received)));
    for (const c of recs) expect(r.result.clientTraffic.get(c.id)).toEqual({ bytesUp: bytes(c.sent), bytesDown: bytes(c.received), messagesUp: 4, messagesDown: 4 });
    expect(r.result.traffic.rounds).toBe(4);
  });

  test('a broadcast whose alpha sums to Infinity is an InvalidMessageError for the client, not NaN statistics', () => {
    const client = new MdmClient('x', [1, 2, 0], { seed: 1 });
    const model = { nComponents: 2, nCategories: 3, maxCount: 3, tau: [0.5, 0.5], alpha: [1e308, 1e308, 1, 1, 1, 1], pi: [0, 0, 1, 0, 0, 1] };
    const broadcast = message('mdm/model', 'server', 1, { model, logLikelihood: true });
    expectClean(() => client.respond(readRequest(broadcast)), InvalidMessageError, /^the Dirichlet parameters of row 0 sum to Infinity/);
    expectClean(() => client.respond(readRequest(message('mdm/evaluate', 'server', 1, { models: [model] }))), InvalidMessageError, /sum to Infinity/);
    // through its host the server learns why: a refusal naming the client once
    const refusal = new ClientHost(client).answerSync(wire(broadcast))!;
    expect(refusal.kind).toBe('fedmix/refusal');
    expect(refusal.payload).toEqual({ reason: expect.stringMatching(/^x: the Dirichlet parameters of row 0 sum to Infinity/), code: 'INVALID_MESSAGE' });
    client.dispose();
  });

  test('with noise, a u_kj <= 0 keeps alpha_kj instead of flooring it (alpha-kept); exact sums floor it', () => {
    const start = new DirichletMultinomialMixture({ tau: [1], alpha: [[0.5, 2, 1]], pi: [[0, 0, 1]] });
    const step = (privacy: { noiseMultiplier: number; clip: number } | undefined, u0: number) => {
      // the aggregate the server gets is given here: an aggregator that releases it
      const noiseStddev = privacy ? privacy.noiseMultiplier * mdmSensitivity('round', privacy.clip) : 0;
      const sums = { omega: [2], e: [0, 0, 2], u: [u0, 1.5, 1], v: [1.2] };
      const aggregator = new Watched({ noiseMultiplier: privacy?.noiseMultiplier });
      aggregator.edit = (m) => message('mdm/aggregate', 'aggregator', m.round, { of: 'round', clients: 2, noiseStddev, sums });
      const server = new MdmServer({ nComponents: 1, nCategories: 3, maxCount: 3, rounds: 1, init: start, privacy }, aggregator);
      const c = ctx(1, ['a', 'b']);
      expect(server.configure(c).size).toBe(2);
      aggregate(server, c, new Map(), []);
      const out = { alpha: Array.from(server.model!.alpha), guards: server.history[0]!.guards, done: server.done };
      server.dispose();
      aggregator.dispose();
      return out;
    };
    const noisy = step({ noiseMultiplier: 1, clip: 5 }, -0.3);
    expect(noisy.alpha[0]).toBe(0.5);
    expect(noisy.alpha[1]).toBeCloseTo((2 * 1.5) / 1.2, 14);
    expect(noisy.guards).toEqual(['clamped', 'alpha-kept']);
    expect(noisy.done).toBe(true);
    const exact = step(undefined, 0);
    expect(exact.alpha[0]).toBe(1e-6);
    expect(exact.guards).toEqual(['alpha-floored']);
  });

  test("the server checks the aggregate's noise against its own privacy options", () => {
    const cases: Array<[{ noiseMultiplier: number; clip: number } | undefined, number]> = [
      [{ noiseMultiplier: 5, clip: 2 }, 1],
      [{ noiseMultiplier: 0, clip: 2 }, 1],
      [{ noiseMultiplier: 2, clip: 2 }, 0],
    ];
    for (const [privacy, z] of cases) {
      let model: DirichletMultinomialMixture | undefined;
      expectClean(
        () => {
          const clients = checkData().slice(0, 20).map((r, i) => new MdmClient(`client-${i}`, r, { seed: i }));
          const aggregator = new MdmAggregator({ noiseMultiplier: z, seed: 1 });
          const server = new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 12, rounds: 2, privacy, seed: 1 }, aggregator);
          try {
            runFederationSync(server, clients);
          } finally {
            model = server.model;
            server.dispose();
            aggregator.dispose();
            for (const c of clients) c.dispose();
          }
        },
        InvalidMessageError,
        /^the aggregate of round 1 has noise of standard deviation [\d.]+, but this server's privacy options give [\d.]+ .*give the aggregator the server's noiseMultiplier/,
      );
      expect(model).toBeUndefined();
    }
  });

  test('`fedmix client` MDM clients of one run draw their own Algorithm 1 components: each seed derives from --seed and --id', () => {
    // one seed for all (the command line's --seed 0 before) had every client pick the same component: the others empty, the run stuck
    const request = readRequest(message('mdm/init-request', 'server', 1, { nComponents: 3, nCategories: 2, maxCount: 5 }));
    const picked = Array.from({ length: 30 }, (_, i) => {
      const options = clientRoleOptions('mdm', parseOptions(['--algorithm', 'mdm', '--id', `c${i}`, '--counts', '1,2'], clientOptions));
      const client = makeClient({ algorithm: 'mdm', id: `c${i}`, data: matrixData(Matrix.fromRows([[1, 2]])), options });
      const e = ((client.respond(request) as Message).payload as { e: Float64Array }).e;
      client.dispose();
      return Math.floor(e.indexOf(1) / 5);
    });
    expect(new Set(picked).size).toBe(3);
    for (const k of [0, 1, 2]) expect(picked.filter((x) => x === k).length).toBeLessThan(20);
  });

  test('what leaves a client is its terms of the sums: E^i dense with a single column, omega^i summing to 1', () => {
    const client = new MdmClient('x', [3, 0, 2, 1], { seed: 1 });
    const init = client.respond(readRequest(message('mdm/init-request', 'server', 1, { nComponents: 2, nCategories: 4, maxCount: 30 }))).payload as { e: Float64Array; p: Float64Array; q: Float64Array };
    expect(init.e).toHaveLength(60);
    expect(Array.from(init.e).filter((x) => x !== 0)).toEqual([1]);
    expect(init.e.indexOf(1) % 30).toBe(5); // size 6
    const payload = { model: { nComponents: 2, nCategories: 4, maxCount: 30, tau: fedTruth().tau, alpha: fedTruth().alpha, pi: fedTruth().pi }, logLikelihood: false };
    const stats = client.respond(readRequest(message('mdm/model', 'server', 2, payload))).payload as Record<string, Float64Array | number>;
    expect(Object.keys(stats).sort()).toEqual(['e', 'omega', 'u', 'v']);
    const omega = stats.omega as Float64Array;
    expect(Math.abs(omega[0]! + omega[1]! - 1)).toBeLessThan(1e-15);
    const e = stats.e as Float64Array;
    expect([e[5], e[35]]).toEqual([omega[0], omega[1]]);
    expect(e.filter((x) => x !== 0)).toHaveLength(2);
    // u is 0 for a class the client does not hold (psi(0 + alpha) - psi(alpha))
    expect((stats.u as Float64Array)[1]).toBe(0);
    client.dispose();
  });

  test('central DP: noise of noiseMultiplier x sensitivity on the sums, clipped (u, v), never a NaN parameter', () => {
    expect(mdmSensitivity('init', 0)).toBeCloseTo(Math.sqrt(3), 15);
    expect(mdmSensitivity('round', 2)).toBeCloseTo(Math.sqrt(6), 15);
    // clip 2, not 1: sqrt(2 + 1^2) would equal Algorithm 1's sqrt(3) and hide a mix-up
    const inner = fedData().map((r, i) => new MdmClient(`client-${i}`, r, { seed: i }));
    const clients = inner.map((c) => new Recording(c));
    const aggregator = new Watched({ noiseMultiplier: 5, seed: 3 });
    const server = new MdmServer({ nComponents: 2, nCategories: 4, maxCount: 30, rounds: 8, privacy: { noiseMultiplier: 5, clip: 2 }, seed: 2 }, aggregator);
    const r = runFederationSync(server, clients);
    for (const c of clients) {
      for (const m of c.sent) {
        const p = m.payload as { u?: Float64Array; v?: Float64Array };
        if (m.kind === 'mdm/stats') expect(Math.hypot(...p.u!, ...p.v!)).toBeLessThanOrEqual(2 + 1e-12);
      }
    }
    const std = aggregator.released.map((a) => (a.payload as { noiseStddev: number }).noiseStddev);
    expect(std[0]).toBeCloseTo(5 * Math.sqrt(3), 12);
    expect(std).toHaveLength(9);
    expect(std.slice(1).every((s) => Math.abs(s - 5 * Math.sqrt(6)) < 1e-12)).toBe(true);
    // the broadcast carries the clip bound and asks for no log-likelihood
    const broadcasts = clients.flatMap((c) => c.received).filter((m) => m.kind === 'mdm/model');
    expect(broadcasts).toHaveLength(8 * 400);
    expect(broadcasts.every((m) => (m.payload as { clip?: number; logLikelihood: boolean }).clip === 2 && (m.payload as { logLikelihood: boolean }).logLikelihood === false)).toBe(true);
    expect(server.history.every((h) => h.meanLogLikelihood === undefined)).toBe(true);
    const m = r.model;
    for (const v of [...m.tau, ...m.alpha, ...m.pi]) expect(Number.isFinite(v) && v >= 0).toBe(true);
    expect(server.history.some((h) => h.guards.includes('clamped'))).toBe(true);
    server.dispose();
    aggregator.dispose();
    for (const c of inner) c.dispose();
  });

  test('given initial parameters replace Algorithm 1; rounds 0 returns them', () => {
    const start = new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [[1, 1, 1, 1], [2, 1, 1, 1]], pi: [Array(30).fill(1 / 30), Array(30).fill(1 / 30)] });
    const r = fitMdm(fedData(), { nComponents: 2, rounds: 0, init: start });
    expect(r.model).toBe(start);
    expect(r.traffic.rounds).toBe(0);
    const seen: number[] = [];
    const three = fitMdm(fedData(), { nComponents: 2, rounds: 3, init: start, onRound: (t) => seen.push(t) });
    expect(seen).toEqual([0, 1, 2, 3]);
    expect(three.traffic.rounds).toBe(3);
  });
});

const checkData = lazy(() => new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [[0.5, 1, 2], [2, 1, 0.5]], pi: fixedSize(2, 12) }).sample(60, { seed: 2 }).histograms.toRows());

describe('validation of what clients send', () => {
  const edit = (f: (p: Record<string, number[] | number>) => void) => (m: Message): Message => {
    const p = JSON.parse(encodeMessage(m)).payload;
    f(p);
    return message(m.kind, m.from, m.round, p);
  };
  const onStats = (f: (p: Record<string, number[] | number>) => void) => (m: Message) => (m.kind === 'mdm/stats' ? edit(f)(m) : m);
  const cases: Array<[string, (m: Message) => Message, RegExp]> = [
    ['NaN statistics', (m) => (m.kind === 'mdm/stats' ? { ...m, payload: { ...(m.payload as object), u: [NaN, 0, 0, 0, 0, 0] } } : m), /cannot send NaN/],
    ['omega not summing to 1', onStats((p) => ((p.omega as number[])[0]! += 0.5)), /omega sums to 1\.5/],
    ['a negative u', onStats((p) => ((p.u as number[])[0] = -1)), /u\[0\] is -1; it must be >= 0/],
    ['E in two columns', onStats((p) => ((p.e as number[])[0] = 0.25)), /e has non-zero entries in two or more columns|e's column must equal omega/],
    ['a wrong shape', onStats((p) => (p.v as number[]).pop()), /v has 1 values; expected 2/],
    ['a positive log-likelihood', onStats((p) => (p.logLikelihood = 3)), /logLikelihood is 3/],
    ['a log-likelihood below any the model gives', onStats((p) => (p.logLikelihood = -1e300)), /logLikelihood is -1e\+300; it must be a finite log-probability between -\d/],
    ['u far above its bound', onStats((p) => (p.u = (p.u as number[]).map((x) => x * 1e6))), /u\[\d+\] is [\d.e+]+, above omega x \(psi\(n \+ alpha\) - psi\(alpha\)\) = [\d.e+-]+ for its size n = 12/],
    ['v far above its bound', onStats((p) => (p.v = (p.v as number[]).map((x) => x * 1e6))), /v\[\d\] is [\d.e+]+, above omega x \(psi\(n \+ alpha0\) - psi\(alpha0\)\)/],
    ['a spoiled initialization', (m) => (m.kind === 'mdm/init-stats' ? edit((p) => ((p.e as number[])[3] = 1))(m) : m), /e must hold a single 1/],
    ['an unsupported flag out of range', onStats((p) => (p.unsupported = 2)), /unsupported is 2; it must be a whole number in \[0, 1\]/],
  ];

  test.each(cases)('%s: the aggregator excludes the client with its reason; the model is the one without it', (_, spoil, reason) => {
    const bad = run(checkData(), { k: 2, rounds: 4 }, (c, i) => (i === 7 ? new Recording(c, spoil) : c));
    expect(bad.result.excluded).toHaveLength(1);
    const e = bad.result.excluded[0]!;
    expect(e.client).toBe('client-7');
    expect(e.reason).toMatch(/^client-7: /);
    expect(e.reason).not.toMatch(/^client-7: client-7/);
    expect(e.reason).toMatch(reason);
    // it is asked nothing more, and none of its statistics reached the sums
    expect(bad.result.history.slice(e.round).every((h) => h.asked === 59)).toBe(true);
    expect(bad.history.map((r) => r.clients)).toEqual([59, 59, 59, 59]);
    expect(bad.released.map((a) => (a.payload as { clients: number }).clients)).toEqual([e.round === 1 ? 59 : 60, 59, 59, 59, 59]);
    if (e.round === 1) {
      // refused at Algorithm 1: the same model, bit for bit, as a run that never had it
      const without = run(checkData(), { k: 2, rounds: 4, skip: 7 });
      expect(bad.model.alpha).toEqual(without.model.alpha);
      expect(bad.model.tau).toEqual(without.model.tau);
      expect(bad.history).toEqual(without.history);
    }
  });

  test.each(cases)("%s with onInvalidClient 'throw': the run fails naming the client, nothing leaks", (_, spoil, reason) => {
    const before = wasm().fm_heap_in_use();
    let thrown: unknown;
    try {
      run(checkData(), { k: 2, rounds: 4, onInvalidClient: 'throw' }, (c, i) => (i === 7 ? new Recording(c, spoil) : c));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidMessageError);
    expect((thrown as Error).message).toMatch(/^client-7: /);
    expect((thrown as Error).message).toMatch(reason);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });

  test('one client far outside its bounds (u x 1e6) is excluded: the model is bit for bit the one without it', () => {
    // given initial parameters: the first round is Algorithm 2's, so "without it" is the same run otherwise
    const start = new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [[1, 2, 1], [2, 1, 1]], pi: fixedSize(2, 12) });
    const spoil = onStats((p) => (p.u = (p.u as number[]).map((x) => x * 1e6)));
    const bad = run(checkData(), { k: 2, rounds: 4, init: start }, (c, i) => (i === 7 ? new Recording(c, spoil) : c));
    const without = run(checkData(), { k: 2, rounds: 4, init: start, skip: 7 });
    expect(bad.result.excluded.map((e) => [e.client, e.round])).toEqual([['client-7', 1]]);
    expect(bad.model.alpha).toEqual(without.model.alpha);
    expect(bad.model.tau).toEqual(without.model.tau);
    expect(bad.model.pi).toEqual(without.model.pi);
    expect(bad.history).toEqual(without.history);
  });

  test('the bounds never refuse an honest client: random models (alpha 1e-6 to 1e11), sizes, single-class clients, clipping', () => {
    let s = 7;
    const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
    const refused: string[] = [];
    for (let trial = 0; trial < 60; trial++) {
      const [k, c, nMax] = [1 + Math.floor(rnd() * 3), 2 + Math.floor(rnd() * 5), 1 + Math.floor(rnd() * (trial % 2 ? 60 : 600))];
      const scale = [1e-6, 1e-3, 0.1, 1, 10, 1e3, 1e6, 1e11][trial % 8]!;
      const alpha = Array.from({ length: k }, () => Array.from({ length: c }, () => Math.max(1e-6, scale * (0.05 + 3 * rnd()))));
      const tau = Array.from({ length: k }, (_, r) => (r > 0 && rnd() < 0.2 ? 0 : rnd()));
      const pi = Array.from({ length: k }, () => Array.from({ length: nMax }, (_, n) => (n === nMax - 1 || rnd() < 0.7 ? rnd() : 0)));
      const norm = (v: number[]) => v.map((x) => x / v.reduce((a, b) => a + b, 0));
      const model = new DirichletMultinomialMixture({ tau: norm(tau), alpha, pi: pi.map(norm) });
      const params = { nComponents: k, nCategories: c, maxCount: nMax, tau: model.tau, alpha: model.alpha, pi: model.pi };
      const clip = trial % 3 === 0 ? 0.5 : undefined;
      const requests = [
        message('mdm/model', 'server', 1, clip ? { model: params, clip, logLikelihood: false } : { model: params, logLikelihood: true }),
        message('mdm/evaluate', 'server', 1, { models: [params] }),
      ];
      for (const request of requests) {
        const clients = Array.from({ length: 8 }, (_, i) => {
          const n = 1 + Math.floor(rnd() * nMax);
          const h = new Array<number>(c).fill(0);
          if (i % 3 === 0) h[Math.floor(rnd() * c)] = n;
          else for (let t = 0; t < n; t++) h[Math.floor(rnd() * c)]! += 1;
          return new MdmClient(`c${i}`, h, { seed: i });
        });
        // with noise, evaluation rounds are exact only when asked for; 8 clients suffice here
        const aggregator = new MdmAggregator({ noiseMultiplier: clip ? 1 : 0, exactEvaluation: true, minExactClients: 1 });
        // each message as it arrives off the wire, read through its declared type
        const received = readRequest(wire(request));
        aggregator.begin(received);
        for (const cl of clients) {
          try {
            aggregator.add(readReply(received, wire(cl.respond(received))));
          } catch (e) {
            refused.push(`trial ${trial}: ${cl.id}: ${(e as Error).message}`);
          }
        }
        expect((aggregator.release().payload as { clients: number }).clients).toBe(8 - refused.length);
        aggregator.dispose();
        for (const cl of clients) cl.dispose();
      }
    }
    expect(refused).toEqual([]);
  });

  test('u = 1e308 from two clients: both excluded, the run completes', () => {
    const spoil = onStats((p) => (p.u = (p.u as number[]).map(() => 1e308)));
    const r = run(checkData(), { k: 2, rounds: 4 }, (c, i) => (i === 3 || i === 7 ? new Recording(c, spoil) : c));
    expect(r.result.excluded.map((e) => e.client).sort()).toEqual(['client-3', 'client-7']);
    for (const e of r.result.excluded) expect(e.reason).toMatch(/u\[\d+\] is 1e\+308, above omega/);
    expect(r.history.map((h) => h.clients)).toEqual([58, 58, 58, 58]);
    for (const v of [...r.model.tau, ...r.model.alpha, ...r.model.pi]) expect(Number.isFinite(v)).toBe(true);
  });

  test('FieldSums refuses a contribution that would make a total non-finite and keeps the totals', () => {
    const s = new FieldSums({ x: 2 });
    s.add({ x: [1e308, 1] });
    expect(() => s.add({ x: [1e308, 1] })).toThrow(InvalidMessageError);
    expect(() => s.add({ x: [0, NaN] })).toThrow(/would make the total of x\[1\] non-finite/);
    expect(s.count).toBe(1);
    expect(Array.from(s.release().x!)).toEqual([1e308, 1]);
  });

  test("the aggregator: begin(request), add(reply) refusing without adding, release() the sums and their count", () => {
    const aggregator = new MdmAggregator();
    expect(() => aggregator.add(message('mdm/init-stats', 'a', 1, {}))).toThrow(/no round has begun; call begin\(request\) first/);
    expect(() => aggregator.release()).toThrow(/no round has begun/);
    const request = readRequest(message('mdm/init-request', 'server', 1, { nComponents: 1, nCategories: 2, maxCount: 3 }));
    aggregator.begin(request);
    const one = readReply(request, message('mdm/init-stats', 'a', 1, { e: [0, 1, 0], p: [0.5, 0.5], q: [0.25, 0.25] }));
    aggregator.add(one);
    // a reply of another kind, one whose q is not p squared: refused, nothing added
    expect(() => aggregator.add(message('mdm/stats', 'b', 1, {}))).toThrow(/expected a mdm\/init-stats message, got mdm\/stats/);
    expect(() => aggregator.add(readReply(request, message('mdm/init-stats', 'b', 1, { e: [1, 0, 0], p: [1, 0], q: [0.5, 0] })))).toThrow(/q\[0\] is 0\.5 but p squared is 1/);
    aggregator.add(readReply(request, message('mdm/init-stats', 'c', 1, { e: [1, 0, 0], p: [1, 0], q: [1, 0] })));
    const out = aggregator.release();
    expect(out).toMatchObject({ kind: 'mdm/aggregate', from: 'aggregator', round: 1, payload: { of: 'init', clients: 2, noiseStddev: 0 } });
    const sums = (out.payload as { sums: Record<string, Float64Array> }).sums;
    expect([Array.from(sums.e!), Array.from(sums.p!), Array.from(sums.q!)]).toEqual([[1, 1, 0], [1.5, 0.5], [1.25, 0.25]]);
    // released once: the next round begins anew
    expect(() => aggregator.release()).toThrow(/no round has begun/);
    expect(() => aggregator.begin(message('mdm/stats', 'server', 2, {}))).toThrow(/does not sum answers to mdm\/stats/);
    aggregator.dispose();
    // with noise it needs the clip bound of the broadcast
    const noisy = new MdmAggregator({ noiseMultiplier: 1 });
    const model = { nComponents: 1, nCategories: 2, maxCount: 3, tau: [1], alpha: [1, 1], pi: [0, 0, 1] };
    expect(() => noisy.begin(readRequest(message('mdm/model', 'server', 1, { model, logLikelihood: false })))).toThrow(/the aggregator adds noise but the broadcast has no clip bound/);
    noisy.dispose();
  });

  test("Algorithm 1's single 1 is found in one pass: a dense e of 100,000 ones is refused at its second entry", () => {
    const n = 100_000;
    const aggregator = new MdmAggregator();
    const request = readRequest(message('mdm/init-request', 'server', 1, { nComponents: 1, nCategories: 2, maxCount: n }));
    aggregator.begin(request);
    const reply = readReply(request, wire(message('mdm/init-stats', 'a', 1, { e: new Float64Array(n).fill(1), p: [0.5, 0.5], q: [0.25, 0.25] })));
    let thrown: unknown;
    try {
      aggregator.add(reply);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidMessageError);
    expect((thrown as InvalidMessageError).message).toBe("e must hold a single 1 (the client's component and size), got two or more non-zero entries");
    expect((thrown as InvalidMessageError).check).toBe('e does not hold a single 1');
    expect((aggregator.release().payload as { clients: number }).clients).toBe(0);
    aggregator.dispose();
  });

  /** An in-process transport (JSON on the wire) that edits client-7's 'mdm/stats' text after the client's own encoding (which refuses NaN and Infinity). */
  class EditingTransport extends InProcessTransport {
    constructor(
      clients: ClientRole[],
      private readonly edit: (text: string) => string,
    ) {
      super(clients, { encoding: 'json' });
    }
    override exchangeSync(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Exchange {
      const ex = super.exchangeSync(round, messages, options);
      const got = ex.received.get('client-7');
      if (got) {
        const text = new TextDecoder().decode(got[0] as Uint8Array);
        if (text.includes('"kind":"mdm/stats"')) ex.received.set('client-7', [new TextEncoder().encode(this.edit(text))]);
      }
      return ex;
    }
  }

  const onWire = (replacement: string) => (clients: ClientRole[]) =>
    new EditingTransport(clients, (t) => {
      const out = t.replace(/"u":\[[^,\]]+/, replacement);
      expect(out).not.toBe(t);
      return out;
    });

  test.each([
    ['null', '"u":[null', /^client-7: u\[0\] is null; values must be finite numbers$/],
    ['1e308', '"u":[1e308', /^client-7: u\[0\] is 1e\+308, above omega x \(psi\(n \+ alpha\) - psi\(alpha\)\)/],
    ['a string', '"u":["1"', /^client-7: u\[0\] is "1"; values must be finite numbers$/],
  ])('%s in u on the wire: refused with the reason, before the aggregator sums anything', (_, replacement, reason) => {
    const r = run(checkData(), { k: 2, rounds: 2, transport: onWire(replacement) });
    expect(r.result.excluded).toHaveLength(1);
    expect(r.result.excluded[0]!.reason).toMatch(reason);
    expect(r.result.excluded[0]!.round).toBe(2);
    expect(r.history.map((h) => h.clients)).toEqual([59, 59]);
  });

  test('with noise, a reason names the failed check, never a client value nor its own error text', () => {
    const privacy = { noiseMultiplier: 1, clip: 5 };
    const reasons = (wrap?: (c: MdmClient, i: number) => ClientRole, transport?: RunOptions['transport']) =>
      run(checkData(), { k: 2, rounds: 2, privacy, transport }, wrap).result.excluded.map((e) => e.reason);
    const spoiled = (spoil: (m: Message) => Message) => (c: MdmClient, i: number) => (i === 7 ? new Recording(c, spoil) : c);
    // q[0] not the square of p[0] (the detailed reason gives both and the client's row)
    const q = (m: Message) => (m.kind === 'mdm/init-stats' ? edit((p) => ((p.q as number[])[0] = 0.123))(m) : m);
    expect(reasons(spoiled(q))).toEqual(['client-7: q is not the square of p']);
    expect(reasons(spoiled(onStats((p) => ((p.u as number[])[0] = -1))))).toEqual(['client-7: u has a negative entry']);
    expect(reasons(spoiled(onStats((p) => (p.u = (p.u as number[]).map((x) => x * 1e6)))))).toEqual(['client-7: u is above the bound of its size']);
    // what the schema refuses: the field, not its value
    expect(reasons(undefined, onWire('"u":[null'))).toEqual(['client-7: u is malformed']);
    const failing = (c: MdmClient, i: number): ClientRole =>
      i === 7
        ? {
            id: c.id,
            protocol: c.protocol,
            respond: () => {
              throw new InvalidDataError('client-7: n = 27 exceeds N = 12');
            },
          }
        : c;
    expect(reasons(failing)).toEqual(['client-7: reported an error instead of answering']);
    // without noise the reason says by how much (for whoever debugs a client)
    expect(run(checkData(), { k: 2, rounds: 1 }, spoiled(q)).result.excluded[0]!.reason).toMatch(/^client-7: q\[0\] is 0\.123 but p squared is/);
  });

  test('the server checks the aggregate too: inconsistent or mis-addressed sums change nothing and fail the run', () => {
    const spoil: Array<[string, (m: Message) => Message, RegExp]> = [
      ['omega', (m) => JSON.parse(encodeMessage(m).replace(/"omega":\[([-\d.e]+)/, '"omega":[1000')), /omega sums to/],
      ['round', (m) => ({ ...m, round: 77 }), /aggregate is for round 77/],
      ['of', (m) => JSON.parse(encodeMessage(m).replace('"of":"round"', '"of":"init"')), /expected an aggregate of round statistics/],
      ['v', (m) => JSON.parse(encodeMessage(m).replace(/"v":\[[-\d.e]+/, '"v":[-1')), /sums\.v\[0\] is -1/],
      // the aggregator no longer reports exclusions (the runtime does): a field the aggregate does not declare
      ['excluded', (m) => ({ ...m, payload: { ...(m.payload as object), excluded: [] } }), /excluded/],
      ['a wrong kind', (m) => ({ ...m, kind: 'mdm/stats' }), /expected a mdm\/aggregate message, got mdm\/stats/],
    ];
    const clients = checkData().map((r, i) => new MdmClient(`client-${i}`, r, { seed: i }));
    const ids = clients.map((c) => c.id);
    const aggregator = new Watched();
    const server = new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 12, rounds: 5, seed: 1 }, aggregator);
    let round = 0;
    // one round by hand: configure, every reply read and accepted, aggregate
    const exchange = () => {
      const c = ctx(++round, ids);
      const reqs = server.configure(c);
      const accepted = new Map<string, true>();
      for (const [id, req] of reqs) accepted.set(id, accept(server, readReply(req, wire(clients[ids.indexOf(id)]!.respond(readRequest(wire(req))))), req, c));
      return aggregate(server, c, accepted, []);
    };
    expect(exchange()).toBeUndefined(); // Algorithm 1
    expect(server.model).toBeDefined();
    const before = Array.from(server.model!.alpha);
    for (const [, f, hint] of spoil) {
      aggregator.edit = f;
      let thrown: unknown;
      try {
        exchange();
      } catch (e) {
        thrown = e;
      }
      expect(thrown, hint.source).toBeInstanceOf(InvalidMessageError);
      expect((thrown as Error).message).toMatch(hint);
      expect(Array.from(server.model!.alpha)).toEqual(before);
      expect(server.history).toEqual([]);
    }
    aggregator.edit = undefined;
    expect(exchange()).toMatchObject({ round: 1, clients: 60 });
    expect(server.history).toHaveLength(1);
    server.dispose();
    aggregator.dispose();
    // through the runtime an aggregate the server refuses fails the run: it is not a client's fault
    const before2 = wasm().fm_heap_in_use();
    const bad = new Watched();
    bad.edit = spoil[3]![1];
    const s2 = new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 12, rounds: 2, init: new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [[1, 2, 1], [2, 1, 1]], pi: fixedSize(2, 12) }) }, bad);
    expect(() => runFederationSync(s2, clients)).toThrow(/sums\.v\[0\] is -1/);
    s2.dispose();
    bad.dispose();
    expect(wasm().fm_heap_in_use()).toBe(before2);
    for (const c of clients) c.dispose();
  });

  test('a client refused by the aggregator changes nothing: accept throws and the sums stay as they were', () => {
    const run1 = (refuse: boolean) => {
      // fresh clients: each draws its Algorithm 1 component from its own seed
      const clients = checkData().slice(0, 10).map((r, i) => new MdmClient(`client-${i}`, r, { seed: i }));
      const ids = clients.map((c) => c.id);
      const aggregator = new Watched();
      const server = new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 12, rounds: 1, seed: 1 }, aggregator);
      const c = ctx(1, ids);
      const reqs = server.configure(c);
      const accepted = new Map<string, true>();
      for (const [id, req] of reqs) {
        const reply = readReply(req, clients[ids.indexOf(id)]!.respond(readRequest(req)));
        if (refuse && id === 'client-4') {
          const p = reply.payload as { p: Float64Array };
          const spoiled = { ...reply, payload: { ...(reply.payload as object), p: p.p.map((x) => x * 2) } };
          expect(() => accept(server, spoiled, req, c)).toThrow(/row \d of p sums to 2/);
        }
        accepted.set(id, accept(server, reply, req, c));
      }
      aggregate(server, c, accepted, []);
      const out = { released: aggregator.released[0]!, alpha: Array.from(server.model!.alpha) };
      server.dispose();
      aggregator.dispose();
      for (const cl of clients) cl.dispose();
      return out;
    };
    const clean = run1(false);
    const refused = run1(true);
    expect(refused.released).toEqual(clean.released);
    expect(refused.alpha).toEqual(clean.alpha);
  });
});

describe('the pinned recovery case (Table 1, medium heterogeneity, K = 2)', () => {
  test('2,000 clients of 100 points, cohorts of 400: per-entry relative RMS error of A and tau below 0.1', () => {
    const truth = new DirichletMultinomialMixture(MEDIUM2);
    const { histograms } = truth.sample(2000, { seed: 11 });
    const errors: number[] = [];
    const fit = fitMdm(histograms, { nComponents: 2, rounds: 40, cohort: 400, seed: 12, onRound: (_, m) => errors.push(mdmRecoveryError(m, truth).alphaPerEntry) });
    const e = mdmRecoveryError(fit.model, truth);
    expect(e.alphaPerEntry).toBeLessThan(0.1);
    expect(e.tauPerEntry).toBeLessThan(0.1);
    // it converges: far from the truth after Algorithm 1, close after the rounds
    expect(errors[0]!).toBeGreaterThan(0.5);
    expect(Math.max(...errors.slice(30))).toBeLessThan(0.1);
  });
});

describe('choosing K (Appendix A.1)', () => {
  test('Appendix A.2 truth (K = 3): validation likelihood picks 3 among 2..4', () => {
    const truth = new DirichletMultinomialMixture({
      tau: [0.2, 0.5, 0.3],
      alpha: [
        [0.1, 0.2, 0.1, 0.3, 0.1],
        [1, 4, 1, 2, 0.5],
        [10, 5, 3, 2, 30],
      ],
      pi: fixedSize(3, 100),
    });
    const { histograms } = truth.sample(500, { seed: 21 });
    const r = selectMdm(histograms, { kValues: [2, 3, 4], rounds: 25, validationCohort: 150, seed: 22 });
    expect(r.k).toBe(3);
    expect(r.candidates.map((c) => c.k)).toEqual([2, 3, 4]);
    const score = Object.fromEntries(r.candidates.map((c) => [c.k, c.meanLogLikelihood]));
    expect(score[3]!).toBeGreaterThan(score[2]! + 0.5);
    expect(r.scoredClients).toBe(150);
    expect(r.traffic.rounds).toBe(3 * 26 + 1);
  });

  test('with privacy and exactValidation: true, K selection runs (noisy fits, exact validation sums)', () => {
    const r = selectMdm(fedData(), { kValues: [1, 2], rounds: 3, validationCohort: 100, privacy: { noiseMultiplier: 0.5, clip: 5 }, exactValidation: true, seed: 1 });
    expect([1, 2]).toContain(r.k);
    expect(r.validationClients).toBe(100);
    expect(r.scoredClients).toBeGreaterThan(50);
    expect(r.candidates.every((c) => c.fit.history.every((h) => h.meanLogLikelihood === undefined))).toBe(true);
  });
});

describe('privacy that does not rest on a public seed', () => {
  const noisy = (options: { seed: number; noiseSeed?: number }) =>
    fitMdm(fedData().slice(0, 120), { nComponents: 2, rounds: 3, privacy: { noiseMultiplier: 1, clip: 5 }, ...options }).model;

  test('the same public seed gives different noise; an explicit noise seed (for tests) repeats it; without privacy the seed still fixes the run', () => {
    const [a, b] = [noisy({ seed: 0 }), noisy({ seed: 0 })];
    expect(Array.from(a.alpha)).not.toEqual(Array.from(b.alpha));
    expect(Array.from(noisy({ seed: 0, noiseSeed: 9 }).alpha)).toEqual(Array.from(noisy({ seed: 0, noiseSeed: 9 }).alpha));
    const exact = () => fitMdm(fedData().slice(0, 120), { nComponents: 2, rounds: 3, seed: 0 }).model;
    expect(Array.from(exact().alpha)).toEqual(Array.from(exact().alpha));
  });

  /** The audit's attack: candidate models crafted so that the evaluation sums reveal one client's histogram. */
  const probe = (aggregator: MdmAggregator, clients: MdmClient[], models: MdmParams[]) => {
    const request = readRequest(wire(message('mdm/evaluate', 'server', 1, { models })));
    aggregator.begin(request);
    for (const c of clients) aggregator.add(readReply(request, wire(c.respond(request))));
    return aggregator.release();
  };
  const crafted = (c: number): MdmParams[] =>
    Array.from({ length: 4 }, (_, q) => {
      const alpha = Float64Array.from({ length: c }, (_, j) => (j === q % c ? 50 : 0.5));
      return { nComponents: 1, nCategories: c, maxCount: 20, tau: Float64Array.of(1), alpha, pi: Float64Array.from({ length: 20 }, () => 1 / 20) };
    });

  test('a noising aggregator refuses evaluation requests and log-likelihood broadcasts, whatever the server asks', () => {
    const victim = new MdmClient('victim', [7, 2, 11], { seed: 1 });
    const aggregator = new MdmAggregator({ noiseMultiplier: 1 });
    expect(() => probe(aggregator, [victim], crafted(3))).toThrow(FederationError);
    expect(() => probe(aggregator, [victim], crafted(3))).toThrow(/does not answer evaluation requests/);
    const model = { nComponents: 1, nCategories: 3, maxCount: 20, tau: Float64Array.of(1), alpha: Float64Array.of(1, 1, 1), pi: Float64Array.from({ length: 20 }, () => 1 / 20) };
    expect(() => aggregator.begin(readRequest(wire(message('mdm/model', 'server', 1, { model, clip: 5, logLikelihood: true }))))).toThrow(/does not release the clients' log-likelihoods/);
    aggregator.dispose();
    victim.dispose();
  });

  test('with exact evaluation accepted, nothing is released over fewer than minExactClients clients, counted ones included', () => {
    const victim = new MdmClient('victim', [7, 2, 11], { seed: 1 });
    const aggregator = new MdmAggregator({ noiseMultiplier: 1, exactEvaluation: true });
    expect(aggregator.minExactClients).toBe(10);
    expect(() => probe(aggregator, [victim], crafted(3))).toThrow(/at least 10 clients under privacy; this one would hold 1/);
    // ten more clients, each of a size the crafted models give probability 0: only the victim would be counted
    const others = Array.from({ length: 10 }, (_, i) => new MdmClient(`o${i}`, [10, 10, 10], { seed: i }));
    const zeroAt30 = crafted(3).map((m) => ({ ...m, maxCount: 30, pi: Float64Array.from({ length: 30 }, (_, n) => (n < 20 ? 1 / 20 : 0)) }));
    expect(() => probe(aggregator, [victim, ...others], zeroAt30)).toThrow(/this one would hold 1/);
    // enough scored clients: the exact sums go out, as accepted
    const many = Array.from({ length: 10 }, (_, i) => new MdmClient(`m${i}`, [5, 5, 5], { seed: i }));
    const released = probe(aggregator, [victim, ...many], crafted(3)).payload as { clients: number; noiseStddev: number };
    expect([released.clients, released.noiseStddev]).toEqual([11, 0]);
    for (const c of [victim, ...others, ...many]) c.dispose();
    aggregator.dispose();
  });

  test("a noising aggregator's round sums over a single client are noised: never the client's own values", () => {
    const victim = new MdmClient('victim', [7, 2, 11], { seed: 1 });
    const model = { nComponents: 1, nCategories: 3, maxCount: 20, tau: Float64Array.of(1), alpha: Float64Array.of(1, 1, 1), pi: Float64Array.from({ length: 20 }, () => 1 / 20) };
    const request = readRequest(wire(message('mdm/model', 'server', 1, { model, clip: 5, logLikelihood: false })));
    const exact = victim.respond(request).payload as { u: Float64Array };
    const aggregator = new MdmAggregator({ noiseMultiplier: 1 });
    aggregator.begin(request);
    aggregator.add(readReply(request, wire(victim.respond(request))));
    const out = aggregator.release().payload as { noiseStddev: number; sums: { u: Float64Array } };
    expect(out.noiseStddev).toBeCloseTo(Math.sqrt(2 + 25), 12);
    expect(Array.from(out.sums.u).some((x, j) => x === exact.u[j])).toBe(false);
    aggregator.dispose();
    victim.dispose();
  });

  test('selectMdm under privacy: a validation cohort below the minimum is refused up front', () => {
    expect(() => selectMdm(fedData(), { kValues: [1, 2], rounds: 1, validationCohort: 5, privacy: { noiseMultiplier: 0.5, clip: 5 }, exactValidation: true, seed: 1 })).toThrow(
      /sums of at least 10 clients; the validation cohort has 5/,
    );
  });
});

describe('bad input (the issue list)', () => {
  const h = [
    [3, 1, 0],
    [0, 2, 2],
    [1, 1, 1],
    [2, 0, 2],
  ];
  test('negative or non-integer counts, sums that are not n, n above N: InvalidDataError naming the client', () => {
    expectClean(() => fitMdm([[3, -1, 0], ...h], { nComponents: 2 }), InvalidDataError, /row 0, category 1 is -1; counts must be non-negative integers/);
    expectClean(() => fitMdm([[3, 0.5, 0], ...h], { nComponents: 2 }), InvalidDataError, /row 0, category 1 is 0\.5/);
    expectClean(() => fitMdm(h, { nComponents: 2, sizes: [4, 4, 3, 5] }), InvalidDataError, /client 3: its histogram sums to 4 but its size n is 5/);
    expectClean(() => fitMdm(h, { nComponents: 2, maxCount: 3 }), InvalidDataError, /client 0: n = 4 exceeds N = 3.*raise N \(maxCount\) to at least 4/);
    expectClean(() => new MdmClient('a', [1, -2]), InvalidDataError, /a: count 1 is -2/);
    expectClean(() => new MdmClient('a', [1, 2], { size: 4 }), InvalidDataError, /sums to 3 but its size n is 4/);
    expectClean(() => fitMdm([[0, 0, 0], ...h], { nComponents: 2 }), InvalidDataError, /client 0: its size n is 0/);
    expectClean(() => fitMdm([[1, NaN, 0], ...h], { nComponents: 2 }), InvalidDataError, /row 0, category 1 is NaN/);
    expectClean(() => fitMdm([...h, [1, Infinity, 0]], { nComponents: 2 }), InvalidDataError, /row 4, category 1 is Infinity/);
    expectClean(() => fitMdm([[1, 2], [1, 2, 3]], { nComponents: 1 }), InvalidDataError, /row 1 has 3 values|all rows/);
    expectClean(() => fitMdm([[4], [3]], { nComponents: 1 }), InvalidDataError, /at least 2/);
    expectClean(() => selectMdm(h, { kValues: [1], validation: [[1, 2]] }), InvalidDataError, /validation histograms have 2 categories but the clients' have 3/);
    // kRange and kValues are read once, under guard: a revoked Proxy or a huge sparse array is an InvalidParameterError
    const { proxy, revoke } = Proxy.revocable([1, 2], {});
    revoke();
    expectClean(() => selectMdm(h, { kRange: proxy as never }), InvalidParameterError, /kRange could not be read/);
    expectClean(() => selectMdm(h, { kValues: proxy as never }), InvalidParameterError, /kValues could not be read/);
    const sparse: number[] = [];
    sparse.length = 2 ** 31 - 1;
    expectClean(() => selectMdm(h, { kValues: sparse }), InvalidParameterError, /kValues must hold at most 1024 values/);
  });

  test('a client whose n exceeds N in a federation is excluded with the reason', () => {
    const r = run([...h, [5, 5, 5]], { k: 2, rounds: 2 });
    expect(r.result.excluded).toHaveLength(0); // N is the largest size here
    const clients = [...h, [9, 9, 9]].map((x, i) => new MdmClient(`client-${i}`, x, { seed: i }));
    const server = new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 5, rounds: 2, seed: 1 });
    const out = runFederationSync(server, clients);
    // its own error, a refusal: named once, kind 'refused'
    expect(out.excluded).toEqual([{ client: 'client-4', round: 1, reason: expect.stringMatching(/^client-4: n = 27 exceeds N = 5, the largest client size the model covers/) }]);
    expect(out.failures[0]!.kind).toBe('refused');
    expect(server.history.map((x) => x.clients)).toEqual([4, 4]);
    server.dispose();
    for (const c of clients) c.dispose();
  });

  test('K larger than the cohort, and empty cohorts: typed errors that say what to change', () => {
    expectClean(() => fitMdm(h, { nComponents: 5 }), InvalidParameterError, /K = 5 components is larger than the cohort of 4 clients \(all there are\)/);
    expectClean(() => fitMdm(h, { nComponents: 3, cohort: 2 }), InvalidParameterError, /K = 3 components is larger than the cohort of 2 clients; lower K or use a larger cohort/);
    expectClean(() => fitMdm(h, { nComponents: 2, cohort: 4, initCohort: 1 }), InvalidParameterError, /larger than the initCohort of 1 client/);
    expectClean(() => fitMdm(h, { nComponents: 1, cohort: 0 }), InvalidParameterError, /cohort must be an integer in \[1, 2147483647\], got 0/);
    expectClean(() => fitMdm([], { nComponents: 1 }), InvalidDataError, /no histograms/);
    // every client of a round refused: too few usable replies, a FederationError naming each reason
    expectClean(
      () => run(h, { k: 1, rounds: 1 }, (c) => new Recording(c, (m) => ({ ...m, payload: {} }))),
      FederationError,
      // (the wording for a missing field is the subject of a test in federated-messages.test.ts)
      /^round 1: 0 usable replies of 4, fewer than the 1 required \(client-0: e [^;]*; client-1: e [^;]*; client-2: e [^;]*; client-3: e [^;]*\)$/,
    );
  });

  test('single-class clients only: no maximum-likelihood estimate, an InvalidDataError; among others they are fine', () => {
    const single = [
      [4, 0, 0],
      [0, 3, 0],
      [0, 0, 5],
      [2, 0, 0],
    ];
    expectClean(() => fitMdm(single, { nComponents: 1 }), InvalidDataError, /every client in the initialization cohort holds a single class/);
    const mixed = fitMdm([...single, ...h], { nComponents: 2, rounds: 30, seed: 1 });
    for (const v of [...mixed.model.tau, ...mixed.model.alpha, ...mixed.model.pi]) expect(Number.isFinite(v)).toBe(true);
  });

  test('degenerate moments (a class never seen, identical histograms) take the documented guards, never NaN', () => {
    const unseen = fitMdm(
      [
        [0, 3, 1],
        [0, 1, 3],
        [0, 2, 2],
      ],
      { nComponents: 1, rounds: 5 },
    );
    expect(unseen.initGuards).toEqual(expect.arrayContaining(['degenerate-moments', 'alpha-floored']));
    expect(unseen.model.alpha[0]).toBe(1e-6);
    const same = fitMdm(
      [
        [1, 3],
        [1, 3],
        [1, 3],
      ],
      { nComponents: 1, rounds: 3 },
    );
    expect(same.initGuards).toContain('degenerate-moments');
    for (const v of same.model.alpha) expect(Number.isFinite(v) && v > 0).toBe(true);
  });

  test('sizes a message asks for are capped (K x C and K x N at most MDM_MAX_CELLS): a refusal before any allocation', () => {
    expect(MDM_MAX_CELLS).toBe(1e7);
    const client = new MdmClient('a', [1, 2, 0], { seed: 1 });
    // 2e7 cells: 160 MB of E^i had the client allocated it
    const huge = readRequest(message('mdm/init-request', 'server', 1, { nComponents: 10, nCategories: 3, maxCount: 2e6 }));
    expectClean(() => client.respond(huge), InvalidMessageError, /^K = 10 components of C = 3 categories and N = 2000000 sizes exceed the limit of 10000000 cells/);
    // through its host, a refusal naming the client
    expect(new ClientHost(client).answerSync(huge)!.payload).toEqual({ reason: expect.stringMatching(/^a: K = 10 components .* exceed the limit of 10000000 cells/), code: 'INVALID_MESSAGE' });
    expect((client.respond(readRequest(message('mdm/init-request', 'server', 2, { nComponents: 1, nCategories: 3, maxCount: 3 }))).payload as { e: number[] }).e).toHaveLength(3);
    // a client may set a lower limit of its own
    const small = new MdmClient('b', [1, 2, 0], { seed: 1, maxCells: 100 });
    expectClean(() => small.respond(readRequest(message('mdm/init-request', 'server', 1, { nComponents: 2, nCategories: 3, maxCount: 51 }))), InvalidMessageError, /limit of 100 cells/);
    expectClean(() => new MdmClient('c', [1, 1], { maxCells: 2e7 }), InvalidParameterError, /maxCells must be an integer in \[1, 10000000\]/);
    // and the server refuses such sizes up front
    expectClean(() => new MdmServer({ nComponents: 1, nCategories: 2, maxCount: 1e7 + 1 }), InvalidParameterError, /exceed the limit of 10000000 cells/);
    client.dispose();
    small.dispose();
  });

  test('pointers from 2 GiB on are read unsigned', () => {
    const w = wasm();
    const [alloc, free] = [w.fm_alloc, w.fm_free];
    const freed: number[] = [];
    try {
      w.fm_alloc = () => -(2 ** 31) + 8; // address 2^31 + 8 as the i32 WASM returns it
      w.fm_free = (p: number) => void freed.push(p);
      const s = new Scope();
      expect(s.alloc(16)).toBe(2 ** 31 + 8);
      s.free();
    } finally {
      w.fm_alloc = alloc;
      w.fm_free = free;
    }
    expect(freed).toEqual([2 ** 31 + 8]);
  });

  test("a client that cannot allocate a request's memory refuses it: excluded, the run goes on as without it", () => {
    const w = wasm();
    const alloc = w.fm_alloc;
    // client 7 finds no memory for its K x N statistics (192 bytes here); everyone else does
    const starved = (c: MdmClient): ClientRole => ({
      id: c.id,
      protocol: c.protocol,
      respond: (m) => {
        w.fm_alloc = (bytes: number) => (bytes >= 192 ? 0 : alloc(bytes));
        try {
          return c.respond(m);
        } finally {
          w.fm_alloc = alloc;
        }
      },
    });
    const bad = run(checkData(), { k: 2, rounds: 2 }, (c, i) => (i === 7 ? starved(c) : c));
    expect(bad.result.excluded.map((e) => [e.client, e.round])).toEqual([['client-7', 1]]);
    expect(bad.result.excluded[0]!.reason).toMatch(/^client-7: the client cannot allocate the memory this mdm\/init-request request needs \(out of WASM memory allocating 192 bytes/);
    expect(bad.result.failures[0]!.kind).toBe('refused');
    const without = run(checkData(), { k: 2, rounds: 2, skip: 7 });
    expect(bad.model.alpha).toEqual(without.model.alpha);
    expect(bad.model.pi).toEqual(without.model.pi);
    // and a client's own error reaches its host as a refusal, not a throw
    const c = new MdmClient('x', [1, 2, 0], { seed: 1 });
    const request = message('mdm/init-request', 'server', 1, { nComponents: 2, nCategories: 3, maxCount: 12 });
    const refusal = new ClientHost(starved(c)).answerSync(wire(request))!;
    expect(refusal).toMatchObject({ kind: 'fedmix/refusal', from: 'x', round: 1, payload: { reason: expect.stringMatching(/^x: the client cannot allocate/), code: 'INVALID_MESSAGE' } });
    // the client is intact: it answers the same request once memory is there
    expect(new ClientHost(c).answerSync(wire(request))!.kind).toBe('mdm/init-stats');
    c.dispose();
  });

  test('options: wrong types and ranges are InvalidParameterErrors', () => {
    expectClean(() => fitMdm(h, { nComponents: 0 }), InvalidParameterError, /nComponents must be an integer in \[1, 2147483647\]/);
    expectClean(() => fitMdm(h, { nComponents: 1, rounds: -1 }), InvalidParameterError, /rounds must be an integer in \[0, 1000000\]/);
    expectClean(() => fitMdm(h, { nComponents: 1, privacy: { noiseMultiplier: 1, clip: 0 } }), InvalidParameterError, /privacy.clip must be a finite number > 0/);
    expectClean(() => selectMdm(h, { kValues: [1, 2], validationCohort: 3 }), InvalidDataError, /leave 1 for fitting/);
    expectClean(() => selectMdm(h, { kRange: [3, 2] }), InvalidParameterError, /kRange \[3, 2\] is empty/);
    // the validation round releases exact log-likelihood sums: privacy needs the explicit opt-in
    expectClean(() => selectMdm(h, { kValues: [1, 2], privacy: { noiseMultiplier: 1, clip: 5 } }), InvalidParameterError, /exact \(noise-free\) sums .* pass exactValidation: true/);
  });
});

describe('recovery metrics', () => {
  test('equation 50 and the alignment by Hungarian matching', () => {
    expect(normalizedError([1.1, 1.8], [1, 2])).toBeCloseTo(Math.sqrt(0.01 + 0.01), 14);
    const truth = new DirichletMultinomialMixture(MEDIUM2);
    const swapped = new DirichletMultinomialMixture({ tau: [0.6, 0.4], alpha: [MEDIUM2.alpha[1]!, MEDIUM2.alpha[0]!], pi: MEDIUM2.pi });
    const e = mdmRecoveryError(swapped, truth);
    expect(Array.from(e.permutation)).toEqual([1, 0]);
    expect(e.alpha).toBe(0);
    expect(e.tau).toBe(0);
    expect(() => normalizedError([1], [0])).toThrow(InvalidParameterError);
  });

  test('histogramRows keeps sizes apart from the counts only when asked', () => {
    const r = histogramRows([[1, 2], [3, 4]]);
    expect(Array.from(r.sizes)).toEqual([3, 7]);
    expect(() => histogramRows([[1, 2]], 2, [1, 2])).toThrow(/2 sizes for 1 histograms/);
    expect(Matrix.from([[1, 2]]).nCols).toBe(2);
  });
});
