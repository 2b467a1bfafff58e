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

/** What an accountant has composed: each kind of step and how many times, in the order taken. */
export interface AccountantHistory {
  noiseMultiplier: number;
  samplingRate: number;
  steps: number;
}

/** An accountant's state as plain JSON (a checkpoint's part). */
export interface RdpAccountantJSON {
  kind: 'RdpAccountant';
  orders: number[];
  history: AccountantHistory[];
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
  private readonly taken: AccountantHistory[] = [];

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
  get history(): AccountantHistory[] {
    return this.taken.map((h) => ({ ...h }));
  }

  /** Records `steps` (default 1) steps of the sampled Gaussian mechanism. */
  step(mechanism: MechanismSteps): this {
    const m = stepsOptions.check(readMechanism(mechanism), 'mechanism');
    this.#add(m.noiseMultiplier, m.samplingRate, m.steps, rdpOf(m.noiseMultiplier, m.samplingRate, this.orderList));
    return this;
  }

  #add(noiseMultiplier: number, samplingRate: number, steps: number, once: Float64Array): void {
    if (steps === 0) return;
    const last = this.taken[this.taken.length - 1];
    const same = last !== undefined && last.noiseMultiplier === noiseMultiplier && last.samplingRate === samplingRate;
    if (!same && this.taken.length >= MAX_HISTORY) throw new InvalidParameterError(`an accountant keeps at most ${MAX_HISTORY} kinds of step; compose steps of one kind with { steps }`);
    for (let i = 0; i < once.length; i++) this.total[i] += steps * once[i]!;
    if (same) last.steps += steps;
    else this.taken.push({ noiseMultiplier, samplingRate, steps });
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
    if (json === null || typeof json !== 'object' || (json as { kind?: unknown }).kind !== 'RdpAccountant') {
      throw new InvalidParameterError(`not a saved RdpAccountant: expected { kind: 'RdpAccountant', orders, history }, got ${formatValue(json)}`);
    }
    const j = json as RdpAccountantJSON;
    const a = new RdpAccountant({ orders: j.orders });
    const history = guardRead('history', () => j.history);
    if (!Array.isArray(history) || history.length > MAX_HISTORY) throw new InvalidParameterError(`a saved RdpAccountant's history must be an array of at most ${MAX_HISTORY} kinds of step`);
    // each kind of step's RDP once, however often the history names it
    const known = new Map<string, Float64Array>();
    for (const h of history as unknown[]) {
      const m = stepsOptions.check(readMechanism(h), 'a saved step');
      const key = `${m.noiseMultiplier} ${m.samplingRate}`;
      let once = known.get(key);
      if (!once) known.set(key, (once = rdpOf(m.noiseMultiplier, m.samplingRate, a.orderList)));
      a.#add(m.noiseMultiplier, m.samplingRate, m.steps, once);
    }
    return a;
  }
}

const accountantOptions = defineOptions<{ orders?: ArrayLike<number> }>()({ orders: orders() });

/** The options of privacyEpsilon: one kind of step taken `steps` times, and delta. */
export interface PrivacyEpsilonOptions extends MechanismSteps {
  delta: number;
  orders?: ArrayLike<number>;
}

const epsilonOptions = defineOptions<PrivacyEpsilonOptions>()({ ...stepsOptions.entries, delta: delta(), orders: orders() });

/**
 * epsilon after `steps` steps of the sampled Gaussian mechanism at `delta`
 * (what `fedmix privacy` prints): Opacus' `get_noise_multiplier`'s inverse.
 *
 * ```ts
 * const { epsilon, order } = privacyEpsilon({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 10_000, delta: 1e-5 });
 * ```
 */
export function privacyEpsilon(options: PrivacyEpsilonOptions): PrivacySpent {
  const o = epsilonOptions.check(options);
  const once = rdpOf(o.noiseMultiplier, o.samplingRate, o.orders);
  for (let i = 0; i < once.length; i++) once[i] *= o.steps;
  return epsilonFromRdp(once, o.delta, o.orders);
}
