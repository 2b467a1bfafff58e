/**
 * The messages of federated MDM inference, declared once, and how their
 * receivers check them. Clients only ever send terms of sums (each one adds
 * across clients), so a secure aggregator can stand between them and the
 * server; the server sees the aggregate alone.
 *
 *   down 'mdm/init-request'  { nComponents, nCategories, maxCount }         Algorithm 1
 *   up   'mdm/init-stats'    { e, p, q }                                   E^i (K x N), P^i, Q^i (K x C)
 *   down 'mdm/model'         { model, clip?, logLikelihood }               Algorithm 2's broadcast
 *   up   'mdm/stats'         { omega, e, u, v, logLikelihood?, unsupported? }
 *   down 'mdm/evaluate'      { models }                                    K selection's validation round
 *   up   'mdm/evaluation'    { logLikelihood, counted }
 *   aggregator -> server 'mdm/aggregate' { of, clients, noiseStddev, sums }
 *
 * Matrices travel row-major and flat. E^i is dense (K x N, a single non-zero
 * column): a sparse (n_i, omega^i) would tell the server each client's size,
 * which secure aggregation exists to hide.
 *
 * The checks a contribution gets name the failed check alone in
 * InvalidMessageError.check (what a server under privacy passes on) and the
 * client's values in the message.
 */
import { InvalidMessageError, restated } from '../../errors.js';
import { requireNumber, requireOneOf } from '../../validate.js';
import { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { digammaDiff, lgamma, lnRisingFactorial } from '../../special/gamma.js';
import { lengthIs } from '../messages/checks.js';
import { nonZeros } from '../messages/sparse.js';
import { defineMessage, f64Array, finiteNumber, flag, listOf, oneOf, optional, record, wholeNumber, type PayloadOf } from '../messages/schema.js';
import { defineProtocol } from '../runtime/roles.js';
import { sumLayout, type AdditiveField } from '../secure-aggregation/layout.js';
import type { Message } from '../messages/envelope.js';

/**
 * Largest K x C and K x N (each) a message may ask for: 1e7 cells, 80 MB per
 * matrix. The sizes come from the sender, so this bounds what one message can
 * make its receiver allocate. The core has the same limit (mdm::MAX_CELLS).
 */
export const MDM_MAX_CELLS = 10_000_000;

/** Most candidate models one evaluation request may carry. */
export const MAX_EVALUATED_MODELS = 64;

const shapeFields = { nComponents: wholeNumber(1), nCategories: wholeNumber(2), maxCount: wholeNumber(1) };

/** Model parameters on the wire: flat row-major alpha (K x C) and pi (K x N). */
export const MDM_PARAMS = record({ ...shapeFields, tau: f64Array(), alpha: f64Array(), pi: f64Array() });

export const INIT_REQUEST = defineMessage('mdm/init-request', record(shapeFields));
export const INIT_STATS = defineMessage('mdm/init-stats', record({ e: f64Array(), p: f64Array(), q: f64Array() }));
export const MODEL = defineMessage('mdm/model', record({ model: MDM_PARAMS, clip: optional(finiteNumber()), logLikelihood: flag() }));
export const STATS = defineMessage(
  'mdm/stats',
  // unsupported and counted are 0 or 1 for one user, up to the users a group's reply stands for (checked by readStats / readEvaluation)
  record({ omega: f64Array(), e: f64Array(), u: f64Array(), v: f64Array(), logLikelihood: optional(finiteNumber()), unsupported: optional(wholeNumber(0)) }),
);
export const EVALUATE = defineMessage('mdm/evaluate', record({ models: listOf(MDM_PARAMS, MAX_EVALUATED_MODELS) }));
export const EVALUATION = defineMessage('mdm/evaluation', record({ logLikelihood: f64Array(), counted: wholeNumber(0) }));
/** From the aggregator to the server: the round's sums. */
export const AGGREGATE = defineMessage(
  'mdm/aggregate',
  record({
    of: oneOf(['init', 'round', 'evaluation'] as const),
    clients: wholeNumber(0),
    noiseStddev: finiteNumber(),
    sums: record({
      e: optional(f64Array()),
      p: optional(f64Array()),
      q: optional(f64Array()),
      omega: optional(f64Array()),
      u: optional(f64Array()),
      v: optional(f64Array()),
      logLikelihood: optional(f64Array()),
      unsupported: optional(f64Array()),
      counted: optional(f64Array()),
    }),
  }),
);

/**
 * Every reply is a term of a sum over clients, so a group of simulated users
 * (MdmUserGroup) answers each request once with its users' sums; the
 * aggregator checks such a reply against the users it claims (readInitStats,
 * readStats and readEvaluation with `users` > 1).
 */
/** Each additive reply's fields under secure aggregation: sumShape's, from the request's public shapes. */
function mdmFields(of: AggregateOf): (request: Message) => AdditiveField[] {
  return (request) => {
    const p = request.payload as InitRequest & ModelBroadcast & EvaluateRequest;
    const shape = of === 'init' ? checkShape(p) : of === 'round' ? checkShape(p.model) : checkShape(p.models[0] ?? { nComponents: 1, nCategories: 2, maxCount: 1 });
    return Object.entries(sumShape(of, shape, of === 'evaluation' ? p.models.length : 0, of === 'round' ? p.logLikelihood : true)).map(([name, length]) => ({ name, length }));
  };
}

export const MDM_PROTOCOL = defineProtocol(
  'MDM',
  [
    [INIT_REQUEST, INIT_STATS],
    [MODEL, STATS],
    [EVALUATE, EVALUATION],
  ],
  {
    additive: [INIT_STATS, STATS, EVALUATION],
    layouts: [
      sumLayout(INIT_STATS, mdmFields('init')),
      sumLayout(STATS, mdmFields('round'), { integers: ['unsupported'], scalars: ['logLikelihood'] }),
      sumLayout(EVALUATION, mdmFields('evaluation'), { integers: ['counted'] }),
    ],
  },
);

export const MDM_KINDS = {
  initRequest: INIT_REQUEST.kind,
  initStats: INIT_STATS.kind,
  model: MODEL.kind,
  stats: STATS.kind,
  evaluate: EVALUATE.kind,
  evaluation: EVALUATION.kind,
  aggregate: AGGREGATE.kind,
} as const;

export type MdmParams = ModelBroadcast['model'];
export type InitRequest = PayloadOf<typeof INIT_REQUEST>;
export type InitStatsReply = PayloadOf<typeof INIT_STATS>;
export type ModelBroadcast = PayloadOf<typeof MODEL>;
export type StatsReply = PayloadOf<typeof STATS>;
export type EvaluateRequest = PayloadOf<typeof EVALUATE>;
export type EvaluationReply = PayloadOf<typeof EVALUATION>;
export type AggregatePayload = PayloadOf<typeof AGGREGATE>;
export type AggregateOf = AggregatePayload['of'];

/** The sizes of a round's statistics. */
export interface Shape {
  k: number;
  c: number;
  nMax: number;
}

export function paramsOf(m: DirichletMultinomialMixture): MdmParams {
  return { nComponents: m.nComponents, nCategories: m.nCategories, maxCount: m.maxCount, tau: m.tau, alpha: m.alpha, pi: m.pi };
}

/** Field lengths of each aggregate kind (the FieldSums shape); a round's log-likelihood fields only when asked for. */
export function sumShape(of: AggregateOf, s: Shape, models = 0, logLikelihood = true): Record<string, number> {
  switch (of) {
    case 'init':
      return { e: s.k * s.nMax, p: s.k * s.c, q: s.k * s.c };
    case 'round': {
      const fields: Record<string, number> = { omega: s.k, e: s.k * s.nMax, u: s.k * s.c, v: s.k };
      if (logLikelihood) Object.assign(fields, { logLikelihood: 1, unsupported: 1 });
      return fields;
    }
    case 'evaluation':
      return { logLikelihood: models, counted: 1 };
  }
}

/**
 * L2 sensitivity of one client's contribution (adding or removing a client):
 * Algorithm 1's E^i (a single 1), P^i (c / n: norm <= 1) and Q^i (norm <= 1)
 * give sqrt(3); Algorithm 2's omega^i and E^i have norm <= 1 each and (u^i, v^i)
 * at most `clip` after clipping: sqrt(2 + clip^2). The noise added to each sum
 * is noiseMultiplier times this.
 */
export function sensitivity(of: 'init' | 'round', clip: number): number {
  requireOneOf('of', of, ['init', 'round'] as const);
  if (of === 'round') requireNumber('clip', clip, 0);
  return of === 'init' ? Math.sqrt(3) : Math.sqrt(2 + clip * clip);
}

/**
 * A contribution that fails a check: `detail` says by how much (the client's
 * values), `check` only which check (what the server sees under privacy).
 */
function refuse(check: string, detail: string): InvalidMessageError {
  return new InvalidMessageError(detail, check);
}

function nonNegative(name: string, v: Float64Array): void {
  for (let i = 0; i < v.length; i++) {
    if (v[i]! < 0) throw refuse(`${name} has a negative entry`, `${name}[${i}] is ${v[i]}; it must be >= 0`);
  }
}

/** |a - b| within a relative tolerance of the larger (sums of rounded terms). */
export function near(a: number, b: number, tol = 1e-9): boolean {
  return Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b));
}

/** x at most `bound`, up to rounding (the client and the aggregator compute the bound in different orders). */
function within(x: number, bound: number): boolean {
  return x <= bound + 1e-9 * bound + 1e-300;
}

/**
 * near(), or within `slack`: a secure round's sum carries a quantization
 * error of up to q per entry (RoundContext.quantization), so an identity of
 * exact sums holds up to q times the entries it adds (slack); 0 otherwise.
 */
function nearSum(a: number, b: number, slack: number): boolean {
  return near(a, b) || Math.abs(a - b) <= slack;
}

/** K, C and N of a message, with K x C and K x N at most `maxCells` (MDM_MAX_CELLS or less). */
export function checkShape(p: InitRequest | MdmParams, maxCells = MDM_MAX_CELLS): Shape {
  const { nComponents: k, nCategories: c, maxCount: nMax } = p;
  if (k * Math.max(c, nMax) > maxCells) {
    throw new InvalidMessageError(`K = ${k} components of C = ${c} categories and N = ${nMax} sizes exceed the limit of ${maxCells} cells (K x C and K x N each); lower K or N`);
  }
  return { k, c, nMax };
}

// What clients (and the aggregator) check in the server's messages.

/** Model parameters as a checked model (the core validates the values). */
export function modelOf(q: MdmParams, maxCells = MDM_MAX_CELLS): DirichletMultinomialMixture {
  const { k, c, nMax } = checkShape(q, maxCells);
  lengthIs('tau', q.tau, k);
  lengthIs('alpha', q.alpha, k * c);
  lengthIs('pi', q.pi, k * nMax);
  const rows = (v: Float64Array, w: number) => Array.from({ length: k }, (_, r) => v.subarray(r * w, (r + 1) * w));
  try {
    return new DirichletMultinomialMixture({ tau: q.tau, alpha: rows(q.alpha, c), pi: rows(q.pi, nMax) });
  } catch (e) {
    throw restated(e, (x) => new InvalidMessageError(x.message));
  }
}

export function readModelBroadcast(q: ModelBroadcast, maxCells = MDM_MAX_CELLS): { model: DirichletMultinomialMixture; clip?: number; logLikelihood: boolean } {
  const model = modelOf(q.model, maxCells);
  if (q.clip !== undefined && !(q.clip > 0)) throw new InvalidMessageError(`clip is ${q.clip}; it must be a positive number`);
  return { model, clip: q.clip, logLikelihood: q.logLikelihood };
}

export function readEvaluate(q: EvaluateRequest, maxCells = MDM_MAX_CELLS): DirichletMultinomialMixture[] {
  if (q.models.length === 0) throw new InvalidMessageError('models must be a non-empty array of model parameters');
  return q.models.map((m, i) => {
    try {
      return modelOf(m, maxCells);
    } catch (e) {
      if (e instanceof InvalidMessageError) throw new InvalidMessageError(`model ${i}: ${e.message}`);
      throw e;
    }
  });
}

// What the aggregator checks in each client's contribution: the structure an
// honest client's terms have, so that one faulty client cannot move the sums.
// Honest contributions cannot fail these checks: each is an identity the
// terms satisfy by construction (E^i a single 1 or omega^i's column, P^i a
// normalized histogram, Q^i its square computed the same way) or an
// inequality they satisfy exactly (the digamma difference grows with the
// count, c_j <= n, clipping only scales down; the log-likelihood bound of
// StatsBounds), given a relative slack of 1e-9 for rounding, far above the
// few 1e-15 by which the client's and the aggregator's evaluations of the
// same digamma differences and sums can differ. On real data under every
// partition of issue 23 they exclude no one (test/honest-federations.test.ts,
// scripts/honest-federations.mjs).

/**
 * An 'mdm/init-stats' payload: E^i a single 1, P^i a normalized histogram in
 * the same row, Q^i its square; or, from a group of `users`, their sums
 * (readGroupInitStats).
 */
export function readInitStats(o: InitStatsReply, s: Shape, users = 1, quantization = 0): { e: Float64Array; p: Float64Array; q: Float64Array } {
  lengthIs('e', o.e, s.k * s.nMax);
  lengthIs('p', o.p, s.k * s.c);
  lengthIs('q', o.q, s.k * s.c);
  if (users > 1) return readGroupInitStats(o, s, users, quantization);
  const { e, p: pp, q } = o;
  // the one non-zero entry, stopping at a second
  let one = -1;
  for (let i = 0; i < e.length; i++) {
    if (e[i] === 0) continue;
    if (one >= 0) throw refuse('e does not hold a single 1', 'e must hold a single 1 (the client\'s component and size), got two or more non-zero entries');
    one = i;
  }
  if (one < 0 || e[one] !== 1) throw refuse('e does not hold a single 1', `e must hold a single 1 (the client's component and size), got ${one < 0 ? 'none' : e[one]}`);
  const row = Math.floor(one / s.nMax);
  nonNegative('p', pp);
  nonNegative('q', q);
  for (let r = 0; r < s.k; r++) {
    const pr = pp.subarray(r * s.c, (r + 1) * s.c);
    const qr = q.subarray(r * s.c, (r + 1) * s.c);
    const total = pr.reduce((a, b) => a + b, 0);
    if (r === row ? !near(total, 1) : total !== 0) {
      throw refuse(
        "p is not a normalized histogram in e's row",
        `row ${r} of p sums to ${total}; the client's row (${row}) must hold its normalized histogram (summing to 1) and the others 0`,
      );
    }
    for (let j = 0; j < s.c; j++) {
      if (!near(qr[j]!, pr[j]! * pr[j]!, 1e-12)) throw refuse('q is not the square of p', `q[${r * s.c + j}] is ${qr[j]} but p squared is ${pr[j]! * pr[j]!}`);
    }
  }
  return { e, p: pp, q };
}

/**
 * A flag of one user's reply: 0 or 1 (the schema allows a group's count of
 * users), refused as the schema would refuse it.
 */
function oneUserFlag(name: string, x: number | undefined): void {
  if (x !== undefined && x > 1) throw new InvalidMessageError(`${name} is ${x}; it must be a whole number in [0, 1]`, `${name} is malformed`);
}

/** Whether x is a whole number up to rounding (a sum of ones and of probability vectors): its nearest integer, or -1. */
function wholeCount(x: number, slack = 0): number {
  const n = Math.round(x);
  return n >= 0 && nearSum(x, n, slack) ? n : -1;
}

/**
 * The sums of `users` users' init-stats: E a count of users per (component,
 * size) summing to `users` exactly, each row of P summing to its row's users
 * (one normalized histogram each), Q between the squares' lower bound
 * (Cauchy-Schwarz: sum_i p_i^2 >= (sum_i p_i)^2 / m over a row's m users) and P
 * (a share squared is at most the share).
 */
function readGroupInitStats(o: InitStatsReply, s: Shape, users: number, quantization: number): { e: Float64Array; p: Float64Array; q: Float64Array } {
  const { e, p: pp, q } = o;
  let total = 0;
  for (let i = 0; i < e.length; i++) {
    if (!(e[i]! >= 0) || !Number.isInteger(e[i]!)) throw refuse('e is not a count of users', `e[${i}] is ${e[i]}; a group's e counts its users by component and size (whole numbers >= 0)`);
    total += e[i]!;
  }
  if (total !== users) throw refuse('e does not count the users the reply stands for', `e counts ${total} users but the reply stands for ${users}`);
  nonNegative('p', pp);
  nonNegative('q', q);
  for (let r = 0; r < s.k; r++) {
    let m = 0;
    for (let n = 0; n < s.nMax; n++) m += e[r * s.nMax + n]!;
    const pr = pp.subarray(r * s.c, (r + 1) * s.c);
    const qr = q.subarray(r * s.c, (r + 1) * s.c);
    const rowTotal = pr.reduce((a, b) => a + b, 0);
    if (m === 0 ? rowTotal !== 0 : !nearSum(rowTotal, m, s.c * quantization)) {
      throw refuse("p's rows do not sum to e's users", `row ${r} of p sums to ${rowTotal}; it must sum to the ${m} users e counts in that row (one normalized histogram each)`);
    }
    for (let j = 0; j < s.c; j++) {
      const lo = m === 0 ? 0 : Math.max(0, pr[j]! - quantization) ** 2 / m;
      if (!within(qr[j]!, pr[j]! + 2 * quantization) || !within(lo, qr[j]! + quantization)) {
        throw refuse('q is not a sum of squares of p', `q[${r * s.c + j}] is ${qr[j]}; for p = ${pr[j]} summed over ${m} users it must lie between ${lo} and ${pr[j]}`);
      }
    }
  }
  return { e, p: pp, q };
}

/** What an honest client of size n can send under one model: bounds on u, v and its log-likelihood. */
interface SizeBounds {
  /** omega_k-free bounds: psi(n + alpha_kj) - psi(alpha_kj) (K x C) */
  u: Float64Array;
  /** psi(n + alpha0_k) - psi(alpha0_k) (K) */
  v: Float64Array;
  /** some component gives size n a positive probability */
  supported: boolean;
  /** a lower bound on ln q(c, n) over every histogram of size n (when supported) */
  logLikelihood: number;
}

/**
 * Bounds on an honest client's statistics under a broadcast model, by the
 * client's size n (which its E^i column tells the aggregator), computed once
 * per size with the library's own digamma differences:
 *
 * - u_kj = s omega_k (psi(c_j + alpha_kj) - psi(alpha_kj)) <= omega_k (psi(n + alpha_kj) - psi(alpha_kj)),
 *   as c_j <= n and the clip scale s <= 1; v_k likewise with alpha0_k and n;
 * - ln q(c, n) >= ln(tau_k pi_kn) + ln n! - lrf(alpha0_k, n) + sum_j min(0, ln(alpha_kj / n))
 *   for every k: each held category adds lrf(alpha_j, c_j) - ln c_j! >= min(0, ln(alpha_j / c_j)).
 */
export class StatsBounds {
  private readonly bySize = new Map<number, SizeBounds>();
  private readonly a0: Float64Array;
  private readonly lnAlpha: Float64Array;
  private readonly k: number;
  private readonly c: number;
  private readonly nMax: number;
  /** the model's parameters, copied: what the bounds are computed from and what of() compares */
  private readonly tau: Float64Array;
  private readonly alpha: Float64Array;
  private readonly pi: Float64Array;

  constructor(model: DirichletMultinomialMixture) {
    const { nComponents: k, nCategories: c, maxCount: nMax } = model;
    [this.k, this.c, this.nMax] = [k, c, nMax];
    // copies: a caller changing the model's arrays afterwards changes neither the bounds nor what of() matches
    [this.tau, this.alpha, this.pi] = [model.tau.slice(), model.alpha.slice(), model.pi.slice()];
    this.lnAlpha = this.alpha.map(Math.log);
    // summed in the client's order (left to right), so that the bounds use its alpha0
    this.a0 = Float64Array.from({ length: k }, (_, r) => this.alpha.subarray(r * c, (r + 1) * c).reduce((a, b) => a + b, 0));
  }

  /**
   * The bounds of `model`: the last ones made here when they were made from a
   * model with the same parameters bit for bit (the same K, C, N, tau, alpha
   * and pi), new ones otherwise. A model changes every round of a run, but
   * the same one is broadcast again by servers started from the same initial
   * model or checkpoint (repeated simulations, experiments over partitions),
   * and computing every size's bounds is a large part of checking a round of
   * grouped users. One model's bounds are kept, at most BATCH_VALUES values.
   */
  static of(model: DirichletMultinomialMixture): StatsBounds {
    const last = lastBounds;
    if (last !== undefined && last.matches(model)) return last;
    const made = new StatsBounds(model);
    const { nComponents: k, nCategories: c, maxCount: nMax } = model;
    lastBounds = (k * c + k) * nMax <= BATCH_VALUES ? made : undefined;
    return made;
  }

  /** Whether these bounds were made from a model with `model`'s parameters, bit for bit. */
  matches(model: DirichletMultinomialMixture): boolean {
    return (
      model.nComponents === this.k &&
      model.nCategories === this.c &&
      model.maxCount === this.nMax &&
      sameBits(model.tau, this.tau) &&
      sameBits(model.alpha, this.alpha) &&
      sameBits(model.pi, this.pi)
    );
  }

  at(n: number): SizeBounds {
    const b = this.bySize.get(n);
    if (b) return b;
    const { k, c, nMax } = this;
    // every size at once where that is cheap (a round's clients have many sizes): three WASM calls instead of 2 + K per size
    this.compute((k * c + k) * nMax <= BATCH_VALUES && this.bySize.size === 0 ? Array.from({ length: nMax }, (_, i) => i + 1) : [n]);
    return this.bySize.get(n)!;
  }

  /** The bounds of `sizes`, computed together (elementwise: the same values as one size at a time). */
  private compute(sizes: readonly number[]): void {
    const { k, c, nMax, tau, alpha, pi } = this;
    const w = k * c + k;
    const x = new Float64Array(sizes.length * w);
    const ns = new Float64Array(sizes.length * w);
    const a0 = new Float64Array(sizes.length * k);
    const nk = new Float64Array(sizes.length * k);
    sizes.forEach((n, s) => {
      x.set(alpha, s * w);
      x.set(this.a0, s * w + k * c);
      ns.fill(n, s * w, (s + 1) * w);
      a0.set(this.a0, s * k);
      nk.fill(n, s * k, (s + 1) * k);
    });
    const d = consecutive(sizes) ? digammaDiffRuns(x.subarray(0, w), sizes.length) : (digammaDiff(x, ns) as Float64Array);
    const lnFactorial = lgamma(Float64Array.from(sizes, (n) => n + 1));
    const lrf = lnRisingFactorial(a0, nk) as Float64Array;
    // ln(alpha_kj / n) as ln alpha_kj - ln n: k C + 1 logarithms per size
    // instead of k C (the bound moves by rounding, far inside logLikelihoodIn's slack)
    const lnAlpha = this.lnAlpha;
    sizes.forEach((n, s) => {
      let floor = -Infinity;
      const lnN = Math.log(n);
      for (let r = 0; r < k; r++) {
        if (!(tau[r]! > 0 && pi[r * nMax + n - 1]! > 0)) continue;
        let l = Math.log(tau[r]!) + Math.log(pi[r * nMax + n - 1]!) + lnFactorial[s]! - lrf[s * k + r]!;
        for (let j = r * c; j < (r + 1) * c; j++) l += Math.min(0, lnAlpha[j]! - lnN);
        floor = Math.max(floor, l);
      }
      const ds = d.subarray(s * w, (s + 1) * w);
      this.bySize.set(n, { u: ds.subarray(0, k * c), v: ds.subarray(k * c), supported: floor > -Infinity, logLikelihood: floor });
    });
  }
}

/** The bounds StatsBounds.of made last (one model's, kept while small enough). */
let lastBounds: StatsBounds | undefined;

/** Whether two arrays of doubles hold the same bits (0 and -0 differ; lengths too). */
function sameBits(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  // 32-bit halves: byte offsets of Float64Arrays are multiples of 8
  const x = new Uint32Array(a.buffer, a.byteOffset, 2 * a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, 2 * b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Whether `sizes` are 1, 2, ..., sizes.length. */
function consecutive(sizes: readonly number[]): boolean {
  return sizes.every((n, i) => n === i + 1);
}

/**
 * psi(a + n) - psi(a) = sum_{i<n} 1/(a + i) for every a of `a` and n = 1..nMax,
 * size-major (n = 1 first) as StatsBounds.compute lays them out: one running
 * sum of positive terms per a, a division per value, where digammaDiff
 * evaluates each from scratch (up to 32 terms, or two asymptotic series). Its
 * rounding (at most about nMax ulps, relative) is far inside the bounds' slack.
 */
function digammaDiffRuns(a: Float64Array, nMax: number): Float64Array {
  const w = a.length;
  const out = new Float64Array(nMax * w);
  for (let i = 0; i < w; i++) {
    const ai = a[i]!;
    let sum = 0;
    for (let n = 1; n <= nMax; n++) out[(n - 1) * w + i] = sum += 1 / (ai + (n - 1));
  }
  return out;
}

/** Most values StatsBounds computes at once for every size of a model (8 MB per array). */
const BATCH_VALUES = 1 << 20;

/**
 * A lower bound on a counted client's ln q(c, n) under `model` for any size
 * n <= N: StatsBounds' bound with the smallest positive pi_k, ln n! - lrf(alpha0_k, n)
 * at n = 1 or N (it is monotone in n) and sum_j min(0, ln(alpha_kj / N)),
 * minimized over the components (which one supports the client is unknown).
 */
export function logLikelihoodFloor(model: DirichletMultinomialMixture): number {
  const { nComponents: k, nCategories: c, maxCount: nMax, tau, alpha, pi } = model;
  let floor = Infinity;
  for (let r = 0; r < k; r++) {
    if (!(tau[r]! > 0)) continue;
    let a0 = 0;
    let piMin = Infinity;
    let spread = 0;
    for (let j = 0; j < c; j++) {
      a0 += alpha[r * c + j]!;
      spread += Math.min(0, Math.log(alpha[r * c + j]! / nMax));
    }
    for (let n = 0; n < nMax; n++) if (pi[r * nMax + n]! > 0) piMin = Math.min(piMin, pi[r * nMax + n]!);
    const size = Math.min(-Math.log(a0), lgamma(nMax + 1) - lnRisingFactorial(a0, nMax));
    floor = Math.min(floor, Math.log(tau[r]!) + Math.log(piMin) + size + spread);
  }
  return floor;
}

/** A log-likelihood of a client: finite, <= 0 (up to rounding) and >= `floor` (up to rounding). */
function logLikelihoodIn(ll: number, floor: number, quantization = 0): boolean {
  return ll <= 1e-9 + quantization && ll >= floor - 1e-9 * Math.max(1, Math.abs(floor)) - quantization;
}

/**
 * An 'mdm/stats' payload: omega^i a probability vector, E^i omega^i in a
 * single column (the client's size n), u^i and v^i non-negative and within
 * the bounds an honest client of size n has under the broadcast model
 * (`bounds`; zero where omega_k is 0), their norm within `clip` when the run
 * clips, and the log-likelihood fields present exactly when asked for, with
 * the log-likelihood between its lower bound and 0.
 */
export function readStats(
  o: StatsReply,
  s: Shape,
  clip: number | undefined,
  logLikelihood: boolean,
  bounds: StatsBounds,
  users = 1,
  quantization = 0,
): Record<string, Float64Array> {
  if (users === 1) oneUserFlag('unsupported', o.unsupported);
  lengthIs('omega', o.omega, s.k);
  lengthIs('e', o.e, s.k * s.nMax);
  lengthIs('u', o.u, s.k * s.c);
  lengthIs('v', o.v, s.k);
  if (users > 1) return readGroupStats(o, s, clip, logLikelihood, bounds, users, quantization);
  const { omega, e, u, v } = o;
  nonNegative('omega', omega);
  nonNegative('u', u);
  nonNegative('v', v);
  const total = omega.reduce((a, b) => a + b, 0);
  if (!near(total, 1)) throw refuse('omega does not sum to 1', `omega sums to ${total}; a client's component probabilities sum to 1`);
  let col = -1;
  // where e arrived sparse, only its listed entries can be non-zero
  const listed = nonZeros(e);
  for (let j = 0, end = listed ? listed.length : e.length; j < end; j++) {
    const i = listed ? listed[j]! : j;
    if (e[i] === 0 || i % s.nMax === col) continue;
    if (col >= 0) throw refuse('e has non-zero entries in more than one column', 'e has non-zero entries in two or more columns; a client has one size');
    col = i % s.nMax;
  }
  for (let r = 0; r < s.k; r++) {
    const x = col < 0 ? 0 : e[r * s.nMax + col]!;
    if (x !== omega[r]) throw refuse("e's column does not equal omega", `e's column must equal omega; row ${r} holds ${x}, omega ${omega[r]}`);
  }
  // omega sums to 1, so e has its column: the client's size
  const n = col + 1;
  const b = bounds.at(n);
  for (let r = 0; r < s.k; r++) {
    const w = omega[r]!;
    if (!within(v[r]!, w * b.v[r]!)) {
      throw refuse('v is above the bound of its size', `v[${r}] is ${v[r]}, above omega x (psi(n + alpha0) - psi(alpha0)) = ${w * b.v[r]!} for its size n = ${n}`);
    }
    for (let j = r * s.c; j < (r + 1) * s.c; j++) {
      if (!within(u[j]!, w * b.u[j]!)) {
        throw refuse('u is above the bound of its size', `u[${j}] is ${u[j]}, above omega x (psi(n + alpha) - psi(alpha)) = ${w * b.u[j]!} for its size n = ${n}`);
      }
    }
    if (w === 0 && (v[r] !== 0 || u.subarray(r * s.c, (r + 1) * s.c).some((x) => x !== 0))) {
      throw refuse('u or v is non-zero where omega is 0', `omega[${r}] is 0 but u or v of component ${r} is not`);
    }
  }
  if (clip !== undefined) {
    const norm = Math.sqrt(u.reduce((a, x) => a + x * x, 0) + v.reduce((a, x) => a + x * x, 0));
    if (norm > clip * (1 + 1e-9)) throw refuse('(u, v) is above the clip bound', `(u, v) has norm ${norm}, above the clip bound ${clip}`);
  }
  const out: Record<string, Float64Array> = { omega, e, u, v };
  if (logLikelihood) {
    const ll = o.logLikelihood;
    const unsupported = o.unsupported;
    if (unsupported === undefined) throw refuse('unsupported is missing', 'unsupported must be 0 or 1');
    if (unsupported !== (b.supported ? 0 : 1)) {
      throw refuse('unsupported does not match the model', `unsupported is ${unsupported} but the model gives size n = ${n} probability ${b.supported ? '> 0' : '0'}`);
    }
    if (ll === undefined || (b.supported ? !logLikelihoodIn(ll, b.logLikelihood) : ll !== 0)) {
      throw refuse(
        'logLikelihood is out of range',
        b.supported
          ? `logLikelihood is ${String(ll)}; it must be a finite log-probability between ${b.logLikelihood} (the least the model gives size n = ${n}) and 0`
          : `logLikelihood is ${String(ll)}; an unsupported client's logLikelihood must be 0`,
      );
    }
    out.logLikelihood = Float64Array.of(ll);
    out.unsupported = Float64Array.of(unsupported);
  } else if (o.logLikelihood !== undefined || o.unsupported !== undefined) {
    throw refuse('sends a log-likelihood that was not asked for', 'sends a log-likelihood that was not asked for');
  }
  return out;
}

/**
 * The sums of `users` users' 'mdm/stats': omega summing to the users (one
 * probability vector each), E's rows summing to omega and each column of E
 * counting the users of that size (summed over components, a whole number;
 * the columns together exactly `users`), u and v within the bounds their
 * users' sizes give (sum over sizes n of E[k, n] x the bound of size n), their
 * norm within users x clip when the run clips (each user is clipped to clip),
 * and the log-likelihood fields: unsupported the users of sizes the model
 * gives probability 0, the log-likelihood between the sum of the supported
 * users' lower bounds and 0.
 */
function readGroupStats(o: StatsReply, s: Shape, clip: number | undefined, logLikelihood: boolean, bounds: StatsBounds, users: number, quantization: number): Record<string, Float64Array> {
  const q = quantization;
  const { omega, e, u, v } = o;
  nonNegative('omega', omega);
  nonNegative('e', e);
  nonNegative('u', u);
  nonNegative('v', v);
  const total = omega.reduce((a, b) => a + b, 0);
  if (!nearSum(total, users, s.k * q)) throw refuse('omega does not sum to the users the reply stands for', `omega sums to ${total}; the reply stands for ${users} users, whose probabilities sum to 1 each`);
  for (let r = 0; r < s.k; r++) {
    const row = e.subarray(r * s.nMax, (r + 1) * s.nMax).reduce((a, b) => a + b, 0);
    if (!nearSum(row, omega[r]!, (s.nMax + 1) * q)) throw refuse("e's rows do not sum to omega", `row ${r} of e sums to ${row} but omega[${r}] is ${omega[r]}`);
  }
  // users by size: the columns of E summed over components
  const uBound = new Float64Array(s.k * s.c);
  const vBound = new Float64Array(s.k);
  // what the bounds can be off by when E is (q per entry), and the entry itself (q)
  const uSlack = new Float64Array(s.k * s.c).fill(q);
  const vSlack = new Float64Array(s.k).fill(q);
  let counted = 0;
  let unsupported = 0;
  let floor = 0;
  for (let n = 1; n <= s.nMax; n++) {
    let column = 0;
    for (let r = 0; r < s.k; r++) column += e[r * s.nMax + n - 1]!;
    if (column === 0) continue;
    const m = wholeCount(column, s.k * q);
    if (m < 0) throw refuse("e's columns do not count users", `column ${n - 1} of e sums to ${column} over the components; each user of size ${n} adds 1 to it`);
    counted += m;
    const b = bounds.at(n);
    if (b.supported) floor += m * b.logLikelihood;
    else unsupported += m;
    const { u: bu, v: bv } = b;
    for (let r = 0; r < s.k; r++) {
      const w = e[r * s.nMax + n - 1]!;
      if (w === 0) continue;
      vBound[r]! += w * bv[r]!;
      // the loop every size of every group's reply goes through: bound arrays
      // hoisted, and no slack to add when the sums are exact (q = 0)
      for (let j = r * s.c, end = j + s.c; j < end; j++) uBound[j]! += w * bu[j]!;
      if (q === 0) continue;
      vSlack[r]! += q * bv[r]!;
      for (let j = r * s.c, end = j + s.c; j < end; j++) uSlack[j]! += q * bu[j]!;
    }
  }
  if (counted !== users) throw refuse('e does not count the users the reply stands for', `e's columns count ${counted} users but the reply stands for ${users}`);
  for (let r = 0; r < s.k; r++) {
    if (!within(v[r]!, vBound[r]! + vSlack[r]!)) throw refuse('v is above the bound of its sizes', `v[${r}] is ${v[r]}, above ${vBound[r]}, the most its users' sizes allow`);
    for (let j = r * s.c; j < (r + 1) * s.c; j++) {
      if (!within(u[j]!, uBound[j]! + uSlack[j]!)) throw refuse('u is above the bound of its sizes', `u[${j}] is ${u[j]}, above ${uBound[j]}, the most its users' sizes allow`);
    }
  }
  if (clip !== undefined) {
    const norm = Math.sqrt(u.reduce((a, x) => a + x * x, 0) + v.reduce((a, x) => a + x * x, 0));
    if (norm > users * clip * (1 + 1e-9) + Math.sqrt(u.length + v.length) * q) throw refuse('(u, v) is above the clip bound', `(u, v) has norm ${norm}, above ${users} users x the clip bound ${clip}`);
  }
  const out: Record<string, Float64Array> = { omega, e, u, v };
  if (logLikelihood) {
    const ll = o.logLikelihood;
    if (o.unsupported === undefined) throw refuse('unsupported is missing', 'unsupported must count the users whose size the model gives probability 0');
    if (o.unsupported !== unsupported) {
      throw refuse('unsupported does not match the model', `unsupported is ${o.unsupported} but the model gives ${unsupported} of the group's users' sizes probability 0`);
    }
    if (ll === undefined || !logLikelihoodIn(ll, floor, q)) {
      throw refuse('logLikelihood is out of range', `logLikelihood is ${String(ll)}; the sum over the group's supported users must lie between ${floor} and 0`);
    }
    out.logLikelihood = Float64Array.of(ll);
    out.unsupported = Float64Array.of(o.unsupported);
  } else if (o.logLikelihood !== undefined || o.unsupported !== undefined) {
    throw refuse('sends a log-likelihood that was not asked for', 'sends a log-likelihood that was not asked for');
  }
  return out;
}

/**
 * An 'mdm/evaluation' payload: each log-likelihood between its model's floor
 * (`floors`) and 0, all 0 when not counted; from a group of `users`, `counted`
 * is how many of them every candidate counts (at most `users`) and each
 * log-likelihood their sum, between counted x floor and 0.
 */
export function readEvaluation(o: EvaluationReply, floors: readonly number[], users = 1, quantization = 0): Record<string, Float64Array> {
  if (users === 1) oneUserFlag('counted', o.counted);
  lengthIs('logLikelihood', o.logLikelihood, floors.length);
  const ll = o.logLikelihood;
  const counted = o.counted;
  if (counted > users) throw refuse('counted is above the users the reply stands for', `counted is ${counted}; the reply stands for ${users} user${users === 1 ? '' : 's'}`);
  const i = ll.findIndex((x, m) => (counted === 0 ? !(Math.abs(x) <= quantization) : !logLikelihoodIn(x, counted * floors[m]!, quantization)));
  if (i >= 0) {
    throw refuse(
      'logLikelihood is out of range',
      `logLikelihood[${i}] is ${ll[i]}; it must be between ${counted * floors[i]!} (the least model ${i} gives ${counted > 1 ? `${counted} clients` : 'any client'}) and 0, and 0 when not counted`,
    );
  }
  return { logLikelihood: ll, counted: Float64Array.of(counted) };
}

// What the server checks in the aggregate (exact sums of honest contributions
// are consistent by construction: every omega^i sums to 1, E^i's row to
// omega^i, nothing negative; up to the same rounding slack).

/**
 * An 'mdm/aggregate' payload of kind `of` for the shape `s` (and `models`
 * candidates in an evaluation). Exact sums (no noise) must also be
 * consistent: omega adds up to the clients, E's rows to omega, nothing is
 * negative; noisy sums need only be finite.
 */
export function readAggregate(o: AggregatePayload, who: string, of: AggregateOf, s: Shape, models = 0, quantization = 0): AggregatePayload & { sums: Record<string, Float64Array> } {
  const fail = (detail: string) => new InvalidMessageError(`${who}: ${detail}`);
  if (o.of !== of) throw fail(`expected an aggregate of ${of} statistics, got ${JSON.stringify(o.of)}`);
  const clients = o.clients;
  if (!(o.noiseStddev >= 0)) throw fail('noiseStddev must be a finite number >= 0');
  const noisy = o.noiseStddev > 0;
  const raw = o.sums as Record<string, Float64Array | undefined>;
  const sums: Record<string, Float64Array> = {};
  const shape = sumShape(of, s, models, raw.logLikelihood !== undefined);
  for (const name of Object.keys(raw)) if (raw[name] !== undefined && !(name in shape)) throw fail(`sums.${name} does not belong to an aggregate of ${of} statistics`);
  for (const [name, len] of Object.entries(shape)) {
    const v = raw[name];
    if (v === undefined) throw fail(`sums.${name} is missing`);
    if (v.length !== len) throw fail(`sums.${name} has ${v.length} values; expected ${len}`);
    sums[name] = v;
  }
  if (!noisy && clients > 0) {
    for (const [name, v] of Object.entries(sums)) {
      const i = name === 'logLikelihood' ? -1 : v.findIndex((x) => x < 0);
      if (i >= 0) throw fail(`sums.${name}[${i}] is ${v[i]}; it must be >= 0`);
    }
    if (of === 'round') {
      const total = sums.omega!.reduce((a, b) => a + b, 0);
      if (!nearSum(total, clients, s.k * quantization)) throw fail(`omega sums to ${total} over ${clients} clients; each client's omega sums to 1`);
      for (let r = 0; r < s.k; r++) {
        const row = sums.e!.subarray(r * s.nMax, (r + 1) * s.nMax).reduce((a, b) => a + b, 0);
        if (!nearSum(row, sums.omega![r]!, (s.nMax + 1) * quantization)) throw fail(`row ${r} of E sums to ${row} but omega[${r}] is ${sums.omega![r]}`);
      }
    } else if (of === 'init') {
      const total = sums.e!.reduce((a, b) => a + b, 0);
      if (total !== clients) throw fail(`E counts ${total} clients but ${clients} contributed`);
    }
  }
  return { of, clients, noiseStddev: o.noiseStddev, sums };
}
