/**
 * A privacy accountant: the Rényi differential privacy (RDP) of the sampled
 * Gaussian mechanism, composed over steps and converted to (epsilon, delta),
 * as Opacus' RDP accountant and Google's dp_accounting do.
 *
 * A step samples each record (or client) with probability `samplingRate` and
 * adds Gaussian noise of standard deviation noiseMultiplier x sensitivity to
 * the sum of the sample. Its RDP at each order (Mironov, Talwar and Zhang
 * 2019), the conversion (Balle et al. 2020, the one Opacus uses) and the
 * error function it needs are the core's (crates/fedmix-core/src/privacy/).
 * Composition over steps is addition of RDP at each order; epsilon is the
 * least over the orders. The default orders are Opacus': 1.1, 1.2, ..., 10.9
 * and 12, 13, ..., 63.
 *
 * A second kind of step, the Skellam mechanism (distributed DP under secure
 * aggregation, ts/privacy/distributed-noise.ts): integer noise Sk(mu) on an
 * integer vector of sensitivities l1 and l2, its RDP the bound of Agarwal,
 * Kairouz and Liu 2021 (crates/fedmix-core/src/privacy/skellam.rs), checked
 * against the exact Rényi divergence summed with mpmath in one dimension
 * (scripts/gen-skellam-fixtures.py). Steps of both kinds compose.
 *
 * Agreement: within 1e-6 relative of RDP integrated numerically with mpmath
 * at 40 digits, and epsilon within 0.1%, for q in {0.001, 0.01, 0.1, 1},
 * sigma in {0.5, 0.8, 1.1, 2} and 1, 100 and 10,000 steps
 * (scripts/gen-privacy-fixtures.py, test/privacy-accountant.test.ts).
 */
import { keepClassName } from '../class-name.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';
import { guardRead } from '../read-guard.js';
import { flattenNumeric } from '../validate.js';
import { withScope } from '../wasm/memory.js';

/** Opacus' default orders: 1.1 to 10.9 by 0.1, then 12 to 63. */
export const DEFAULT_RDP_ORDERS: readonly number[] = Object.freeze([
  ...Array.from({ length: 99 }, (_, i) => 1 + (i + 1) / 10),
  ...Array.from({ length: 52 }, (_, i) => 12 + i),
]);

/** At most this many orders (each is one RDP value per kind of step). */
const MAX_ORDERS = 1000;
/**
 * The largest order: the core sums about alpha terms per order, and orders past
 * a few hundred never give the least epsilon at any delta a user sets (Opacus'
 * defaults stop at 63, dp_accounting's extended ones at 1024).
 */
const MAX_ORDER = 1024;
/** At most this many kinds of step in an accountant's history (consecutive equal steps are one). */
const MAX_HISTORY = 10_000;

/** Orders read and checked: numbers in (1, MAX_ORDER], at least one. */
function readOrders(given: unknown): Float64Array {
  const orders = flattenNumeric('orders', given as ArrayLike<number>);
  if (orders.length === 0 || orders.length > MAX_ORDERS) throw new InvalidParameterError(`orders must hold 1 to ${MAX_ORDERS} orders, got ${orders.length}`);
  for (const a of orders) if (!(a > 1 && a <= MAX_ORDER)) throw new InvalidParameterError(`every order must be a number in (1, ${MAX_ORDER}], got ${formatValue(a)}`);
  return orders;
}

const samplingRate = () => atoms.atom<number>((x) => typeof x === 'number' && x >= 0 && x <= 1, 'must be a number in [0, 1]');
const delta = () => atoms.atom<number>((x) => typeof x === 'number' && x > 0 && x < 1, 'must be a number in (0, 1)');
const orders = () => atoms.checkedBy((x) => (x === undefined ? Float64Array.from(DEFAULT_RDP_ORDERS) : readOrders(x)));

/** One kind of step: its noise and sampling rate, taken `steps` times. */
export interface MechanismSteps {
  /** noise standard deviation over the sensitivity (the clipping bound): sigma */
  noiseMultiplier: number;
  /** the probability that a record (or client) is in a step's sample: q, in [0, 1] */
  samplingRate: number;
  /** how many times (default 1) */
  steps?: number;
}

const stepsOptions = defineOptions<MechanismSteps>()({
  noiseMultiplier: atoms.number(0),
  samplingRate: samplingRate(),
  steps: atoms.optional(atoms.integer(0), 1),
});

/**
 * One kind of Skellam step: Sk(mu) noise per coordinate of an integer vector
 * whose neighbours differ by at most l1 (L1 norm) and l2 (L2 norm), taken
 * `steps` times. No subsampling: every release counts in full.
 */
export interface SkellamSteps {
  mechanism: 'skellam';
  /** the total Poisson mean of the released noise (the sum of the clients' shares' mus) */
  mu: number;
  /** L1 sensitivity, in the noise's integer units */
  l1: number;
  /** L2 sensitivity, in the noise's integer units */
  l2: number;
  /** how many times (default 1) */
  steps?: number;
}

const skellamOptions = defineOptions<SkellamSteps>()({
  mechanism: atoms.atom<'skellam'>((x) => x === 'skellam', "must be 'skellam'"),
  mu: atoms.number(0),
  l1: atoms.number(0),
  l2: atoms.number(0),
  steps: atoms.optional(atoms.integer(0), 1),
});

/** A Skellam step read and checked (l2 <= l1: a vector's L2 norm never passes its L1 norm). */
function readSkellam(given: unknown, name: string): Required<SkellamSteps> {
  const m = skellamOptions.check(readMechanism(given) as unknown as SkellamSteps, name) as Required<SkellamSteps>;
  for (const k of ['mu', 'l1', 'l2'] as const) if (!Number.isFinite(m[k])) throw new InvalidParameterError(`${name}.${k} must be finite, got ${formatValue(m[k])}`);
  if (m.l2 > m.l1 * (1 + 1e-12)) throw new InvalidParameterError(`${name}: the L2 sensitivity ${m.l2} is above the L1 sensitivity ${m.l1}; no vector's L2 norm passes its L1 norm`);
  return m;
}

/**
 * The RDP of one step of the Skellam mechanism at each order (orders default
 * to DEFAULT_RDP_ORDERS): alpha l2^2 / (4 mu) + min(((2 alpha - 1) l2^2 + 6 l1) / (16 mu^2), 3 l1 / (4 mu))
 * at integer orders, a fractional order on the chord of (alpha - 1) eps between its integer neighbours.
 */
export function rdpSkellam(mechanism: { mu: number; l1: number; l2: number }, ordersGiven?: ArrayLike<number>): Float64Array {
  const m = guardRead('mechanism', () => readSkellam({ ...readMechanism(mechanism), mechanism: 'skellam', steps: 1 }, 'mechanism'));
  const list = ordersGiven === undefined ? Float64Array.from(DEFAULT_RDP_ORDERS) : readOrders(ordersGiven);
  return rdpSkellamOf(m.mu, m.l1, m.l2, list);
}

function rdpSkellamOf(mu: number, l1: number, l2: number, list: Float64Array): Float64Array {
  return withScope((s) => {
    const out = s.f64(list.length);
    s.w.fm_rdp_skellam(mu, l1, l2, s.f64From(list), list.length, out);
    return s.readF64(out, list.length);
  });
}

const isSkellam = (m: unknown): boolean => guardRead('mechanism', () => m !== null && typeof m === 'object' && (m as { mechanism?: unknown }).mechanism === 'skellam');

/** The RDP of one step of the sampled Gaussian mechanism at each order (orders default to DEFAULT_RDP_ORDERS). */
export function rdpSampledGaussian(mechanism: { noiseMultiplier: number; samplingRate: number }, ordersGiven?: ArrayLike<number>): Float64Array {
  const { noiseMultiplier, samplingRate } = stepsOptions.check({ ...readMechanism(mechanism), steps: 1 }, 'mechanism');
  const list = ordersGiven === undefined ? Float64Array.from(DEFAULT_RDP_ORDERS) : readOrders(ordersGiven);
  return rdpOf(noiseMultiplier, samplingRate, list);
}

function readMechanism(m: unknown): Record<string, unknown> {
  if (m === null || typeof m !== 'object') throw new InvalidParameterError(`the mechanism must be { noiseMultiplier, samplingRate }, got ${formatValue(m)}`);
  return m as Record<string, unknown>;
}

function rdpOf(sigma: number, q: number, list: Float64Array): Float64Array {
  return withScope((s) => {
    const out = s.f64(list.length);
    s.w.fm_rdp_sampled_gaussian(q, sigma, s.f64From(list), list.length, out);
    return s.readF64(out, list.length);
  });
}

/** epsilon at delta for a total RDP at each order, the least over the orders, and the order that gives it. */
export interface PrivacySpent {
  epsilon: number;
  delta: number;
  /** the order of the least epsilon (undefined when every order's RDP is infinite, or when none has any loss: epsilon 0) */
  order: number | undefined;
}

/** epsilon at `delta` for the total RDP `rdp[i]` at `orders[i]` (Balle et al. 2020): the least over the orders. */
export function epsilonFromRdp(rdp: ArrayLike<number>, deltaGiven: number, ordersGiven?: ArrayLike<number>): PrivacySpent {
  const list = ordersGiven === undefined ? Float64Array.from(DEFAULT_RDP_ORDERS) : readOrders(ordersGiven);
  const values = flattenNumeric('rdp', rdp);
  if (values.length !== list.length) throw new InvalidParameterError(`rdp has ${values.length} values for ${list.length} orders`);
  for (const r of values) if (!(r >= 0)) throw new InvalidParameterError(`every RDP value must be >= 0 (or Infinity), got ${formatValue(r)}`);
  const d = deltaCheck(deltaGiven);
  return withScope((s) => {
    // a usize on wasm32: one u32
    const at = s.u32(1);
    const epsilon = s.w.fm_epsilon_from_rdp(s.f64From(list), s.f64From(values), list.length, d, at);
    const i = s.readU32(at, 1)[0]!;
    return { epsilon, delta: d, order: i < list.length ? list[i] : undefined };
  });
}

function deltaCheck(d: unknown): number {
  if (!(typeof d === 'number' && d > 0 && d < 1)) throw new InvalidParameterError(`delta must be a number in (0, 1), got ${formatValue(d)}`);
  return d;
}

/** What an accountant has composed: each kind of step and how many times, in the order taken (sampled Gaussian steps carry no `mechanism`, as saved before Skellam steps existed). */
export interface AccountantHistory {
  noiseMultiplier: number;
  samplingRate: number;
  steps: number;
}

/** A Skellam kind of step in an accountant's history. */
export interface SkellamHistory {
  mechanism: 'skellam';
  mu: number;
  l1: number;
  l2: number;
  steps: number;
}

type HistoryEntry = AccountantHistory | SkellamHistory;

/** The key of a kind of step: equal keys are the same mechanism with the same parameters. */
function keyOf(h: HistoryEntry): string {
  return 'mechanism' in h ? `skellam ${h.mu} ${h.l1} ${h.l2}` : `${h.noiseMultiplier} ${h.samplingRate}`;
}

/** An accountant's state as plain JSON (a checkpoint's part). */
export interface RdpAccountantJSON {
  kind: 'RdpAccountant';
  orders: number[];
  history: (AccountantHistory | SkellamHistory)[];
}

/**
 * Composes steps of the sampled Gaussian mechanism and says what they spent,
 * as Opacus' RDPAccountant: `step()` after each noisy release, `epsilon(delta)`
 * at any time. Its state (the orders and the steps taken) saves to JSON.
 */
export class RdpAccountant {
  static {
    keepClassName(this, 'RdpAccountant');
  }

  private readonly orderList: Float64Array;
  private readonly total: Float64Array;
  private readonly taken: HistoryEntry[] = [];

  constructor(options: { orders?: ArrayLike<number> } = {}) {
    if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be { orders? }, got ${formatValue(options)}`);
    const o = accountantOptions.check(options);
    this.orderList = o.orders;
    this.total = new Float64Array(this.orderList.length);
  }

  /** The orders RDP is tracked at. */
  get orders(): Float64Array {
    return this.orderList.slice();
  }

  /** The total RDP at each order. */
  get rdp(): Float64Array {
    return this.total.slice();
  }

  /** Every kind of step taken, with its count (consecutive identical steps merged). */
  get history(): (AccountantHistory | SkellamHistory)[] {
    return this.taken.map((h) => ({ ...h }));
  }

  /**
   * Records `steps` (default 1) steps of the sampled Gaussian mechanism
   * ({ noiseMultiplier, samplingRate }) or of the Skellam mechanism
   * ({ mechanism: 'skellam', mu, l1, l2 }, as distributedNoise(...).step gives).
   */
  step(mechanism: MechanismSteps | SkellamSteps): this {
    const h = guardRead('mechanism', () => readStep(mechanism, 'mechanism'));
    this.#add(h, this.#rdpOnce(h));
    return this;
  }

  #rdpOnce(h: HistoryEntry): Float64Array {
    return 'mechanism' in h ? rdpSkellamOf(h.mu, h.l1, h.l2, this.orderList) : rdpOf(h.noiseMultiplier, h.samplingRate, this.orderList);
  }

  #add(h: HistoryEntry, once: Float64Array): void {
    if (h.steps === 0) return;
    const last = this.taken[this.taken.length - 1];
    const same = last !== undefined && keyOf(last) === keyOf(h);
    if (!same && this.taken.length >= MAX_HISTORY) throw new InvalidParameterError(`an accountant keeps at most ${MAX_HISTORY} kinds of step; compose steps of one kind with { steps }`);
    for (let i = 0; i < once.length; i++) this.total[i] += h.steps * once[i]!;
    if (same) last.steps += h.steps;
    else this.taken.push({ ...h });
  }

  /** epsilon at `delta` for everything recorded so far, and the order that gives it. */
  epsilon(deltaGiven: number): PrivacySpent {
    return epsilonFromRdp(this.total, deltaGiven, this.orderList);
  }

  toJSON(): RdpAccountantJSON {
    return { kind: 'RdpAccountant', orders: Array.from(this.orderList), history: this.history };
  }

  /** An accountant from its JSON (text or parsed): the steps are composed again (so a tampered total cannot be loaded). */
  static fromJSON(given: unknown): RdpAccountant {
    let json = given;
    if (typeof given === 'string') {
      try {
        json = JSON.parse(given) as unknown;
      } catch (e) {
        throw new InvalidParameterError(`a saved RdpAccountant must be JSON: ${(e as Error).message}`);
      }
    }
    // a getter that throws is the caller's bad input, refused typed like any other
    if (json === null || typeof json !== 'object' || guardRead('kind', () => (json as { kind?: unknown }).kind) !== 'RdpAccountant') {
      throw new InvalidParameterError(`not a saved RdpAccountant: expected { kind: 'RdpAccountant', orders, history }, got ${formatValue(json)}`);
    }
    const j = json as RdpAccountantJSON;
    const a = new RdpAccountant({ orders: guardRead('orders', () => j.orders) as RdpAccountantJSON['orders'] });
    const history = guardRead('history', () => j.history);
    if (!Array.isArray(history) || history.length > MAX_HISTORY) throw new InvalidParameterError(`a saved RdpAccountant's history must be an array of at most ${MAX_HISTORY} kinds of step`);
    // each kind of step's RDP once, however often the history names it
    const known = new Map<string, Float64Array>();
    for (const h of history as unknown[]) {
      const m = readStep(h, 'a saved step');
      const key = keyOf(m);
      let once = known.get(key);
      if (!once) known.set(key, (once = a.#rdpOnce(m)));
      a.#add(m, once);
    }
    return a;
  }
}

/** A step of either kind read and checked, as a history entry. */
function readStep(given: unknown, name: string): HistoryEntry {
  if (isSkellam(given)) {
    const m = readSkellam(given, name);
    return { mechanism: 'skellam', mu: m.mu, l1: m.l1, l2: m.l2, steps: m.steps };
  }
  const m = stepsOptions.check(readMechanism(given), name);
  return { noiseMultiplier: m.noiseMultiplier, samplingRate: m.samplingRate, steps: m.steps };
}

const accountantOptions = defineOptions<{ orders?: ArrayLike<number> }>()({ orders: orders() });

/** The options of privacyEpsilon: one kind of step taken `steps` times, and delta. */
export interface PrivacyEpsilonOptions extends MechanismSteps {
  delta: number;
  orders?: ArrayLike<number>;
}

/** The options of privacyEpsilon for Skellam steps: one kind taken `steps` times, and delta. */
export interface SkellamEpsilonOptions extends SkellamSteps {
  delta: number;
  orders?: ArrayLike<number>;
}

const epsilonOptions = defineOptions<PrivacyEpsilonOptions>()({ ...stepsOptions.entries, delta: delta(), orders: orders() });

/**
 * epsilon after `steps` steps of the sampled Gaussian mechanism at `delta`
 * (what `fedmix privacy` prints): Opacus' `get_noise_multiplier`'s inverse;
 * or of the Skellam mechanism, given `{ mechanism: 'skellam', mu, l1, l2 }`.
 *
 * ```ts
 * const { epsilon, order } = privacyEpsilon({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 10_000, delta: 1e-5 });
 * ```
 */
export function privacyEpsilon(options: PrivacyEpsilonOptions | SkellamEpsilonOptions): PrivacySpent {
  if (isSkellam(options)) {
    const { d, given, m } = guardRead('options', () => {
      const { delta: d, orders: given, ...step } = options as SkellamEpsilonOptions;
      return { d, given, m: readSkellam(step, 'options') };
    });
    const list = given === undefined ? Float64Array.from(DEFAULT_RDP_ORDERS) : readOrders(given);
    const once = rdpSkellamOf(m.mu, m.l1, m.l2, list);
    for (let i = 0; i < once.length; i++) once[i] *= m.steps;
    return epsilonFromRdp(once, deltaCheck(d), list);
  }
  const o = epsilonOptions.check(options as PrivacyEpsilonOptions);
  const once = rdpOf(o.noiseMultiplier, o.samplingRate, o.orders);
  for (let i = 0; i < once.length; i++) once[i] *= o.steps;
  return epsilonFromRdp(once, o.delta, o.orders);
}
