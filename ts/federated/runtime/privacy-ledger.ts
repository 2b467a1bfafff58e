/**
 * The run's privacy ledger: the server's side of the accounting (the clients
 * keep their own: runtime/client-budget.ts). Every round whose requests
 * declare a privacy step (Message.privacy: the noise the server adds to that
 * round's release) is composed into one RdpAccountant for the run; each
 * round's record carries the epsilon spent so far at the policy's delta, and
 * with a budget the round loop asks `wouldSpend` before it sends a round's
 * requests, so that a round past the budget is never sent (run.ts).
 *
 * A round is one step: its requests must all declare the same step (or none),
 * and its sampling rate cannot be below the share of the clients it asked.
 */
import { FederationError, formatValue, InvalidParameterError } from '../../errors.js';
import { epsilonFromRdp, RdpAccountant, rdpSampledGaussian, rdpSkellam, type AccountantHistory, type PrivacySpent, type RdpAccountantJSON, type SkellamHistory } from '../../privacy/accountant.js';
import type { Message, PrivacyStep } from '../messages/envelope.js';

/** What a round's record says about privacy. */
export interface RoundPrivacy {
  /** the step the round's requests declared (absent: a round without noise) */
  step?: PrivacyStep;
  /** with the policy's privacy accounting: epsilon spent by the run after this round, at `delta` */
  epsilon?: number;
  delta?: number;
  /** the RDP order that gives `epsilon` (absent while nothing is spent) */
  order?: number;
}

/** What a run spent over all its rounds (FederationResult.privacy). */
export interface RunPrivacy extends PrivacySpent {
  /** the budget the run was given (absent: none) */
  epsilonBudget?: number;
  /** the steps composed: each kind of step and how many times, in order (Skellam steps name their mechanism) */
  steps: (AccountantHistory | SkellamHistory)[];
}

/**
 * The one step of a round's requests, checked: the same on every request (or
 * on none), its sampling rate at least `askedShare`, the probability that a
 * client that could be asked was (0 for a round of notifications).
 */
export function roundStep(requests: ReadonlyMap<string, Message>, askedShare: number, round: number): PrivacyStep | undefined {
  let step: PrivacyStep | undefined;
  let first = true;
  for (const m of requests.values()) {
    const s = m.privacy;
    if (first) {
      step = s;
      first = false;
    } else if (JSON.stringify(s) !== JSON.stringify(step)) {
      throw new InvalidParameterError(`round ${round}: the server's requests declare different privacy steps (${formatValue(step)} and ${formatValue(s)}); a round is one release, one step`);
    }
  }
  // a smaller declared rate than the share asked would understate what the round spends
  if (step?.mechanism === 'gaussian' && step.samplingRate < askedShare * (1 - 1e-9)) {
    throw new InvalidParameterError(`round ${round}: the server declares a sampling rate of ${step.samplingRate}, but it asked ${formatValue(askedShare)} of the clients that could be asked`);
  }
  return step;
}

/**
 * An RdpAccountant's composition, with each kind of step's RDP computed once
 * for the run (a sampled Gaussian's at q = 0.5 takes the core a third of a
 * second): the budget's look-ahead and the step after it share it. Its state
 * is an RdpAccountant's JSON, read back by RdpAccountant.fromJSON.
 */
export class RunLedger {
  readonly delta: number;
  readonly epsilonBudget: number | undefined;
  private readonly orders: Float64Array;
  private readonly rdp: Float64Array;
  private readonly steps: (AccountantHistory | SkellamHistory)[];
  private readonly known = new Map<string, Float64Array>();

  constructor(privacy: { delta: number; epsilonBudget: number | undefined }, saved?: RdpAccountantJSON) {
    this.delta = privacy.delta;
    this.epsilonBudget = privacy.epsilonBudget;
    // a saved ledger's steps composed again (and checked) by the accountant
    const a = saved === undefined ? new RdpAccountant() : RdpAccountant.fromJSON(saved);
    this.orders = a.orders;
    this.rdp = a.rdp;
    this.steps = a.history;
  }

  /** One round of a step's RDP at each order (computed once per kind of step). */
  private once(step: PrivacyStep): Float64Array {
    const key = kindOf(step.mechanism === 'gaussian' ? { ...step, steps: 1 } : { ...step, steps: 1 });
    let rdp = this.known.get(key);
    if (!rdp) {
      rdp = step.mechanism === 'gaussian'
        ? rdpSampledGaussian({ noiseMultiplier: step.noiseMultiplier, samplingRate: step.samplingRate }, this.orders)
        : rdpSkellam({ mu: step.mu, l1: step.l1, l2: step.l2 }, this.orders);
      this.known.set(key, rdp);
    }
    return rdp;
  }

  /** epsilon spent so far. */
  spent(): PrivacySpent {
    return epsilonFromRdp(this.rdp, this.delta, this.orders);
  }

  /** epsilon the run would have spent after one more round of `step` (nothing is recorded). */
  wouldSpend(step: PrivacyStep): PrivacySpent {
    const once = this.once(step);
    return epsilonFromRdp(this.rdp.map((r, i) => r + once[i]!), this.delta, this.orders);
  }

  /** Records one round of `step`; epsilon spent after it. */
  spend(step: PrivacyStep): PrivacySpent {
    const once = this.once(step);
    for (let i = 0; i < this.rdp.length; i++) this.rdp[i] += once[i]!;
    // consecutive rounds of one kind of step are one entry, as the accountant keeps them (a Gaussian one without a mechanism, as saved before Skellam steps)
    const entry: AccountantHistory | SkellamHistory = step.mechanism === 'gaussian'
      ? { noiseMultiplier: step.noiseMultiplier, samplingRate: step.samplingRate, steps: 1 }
      : { mechanism: 'skellam', mu: step.mu, l1: step.l1, l2: step.l2, steps: 1 };
    const last = this.steps[this.steps.length - 1];
    if (last && kindOf(last) === kindOf(entry)) last.steps += 1;
    else this.steps.push(entry);
    return this.spent();
  }

  /**
   * The reason to stop before a round of `step` (undefined: within the
   * budget, or none). A budget that allows not even the run's first round is an error:
   * there is no model to return.
   */
  stopBefore(step: PrivacyStep, round: number, completed: number): string | undefined {
    // a step that cannot be accounted fails here, before the round is sent
    const would = this.wouldSpend(step);
    if (this.epsilonBudget === undefined) return undefined;
    if (!(would.epsilon > this.epsilonBudget)) return undefined;
    const now = this.spent().epsilon;
    const why = `round ${round} would take the privacy spent to epsilon ${fmt(would.epsilon)} at delta ${this.delta}, past the budget of ${this.epsilonBudget} (spent so far: ${fmt(now)})`;
    if (completed === 0) throw new FederationError(`the privacy budget allows not even the first round: ${why}`);
    return `privacy budget: ${why}; the round was not sent`;
  }

  /** What a round's record says after it (with `step` when it declared one). */
  record(step: PrivacyStep | undefined): RoundPrivacy {
    const s = this.spent();
    return { ...(step ? { step } : {}), epsilon: s.epsilon, delta: s.delta, ...(s.order === undefined ? {} : { order: s.order }) };
  }

  /** The run's total (FederationResult.privacy). */
  total(): RunPrivacy {
    return { ...this.spent(), ...(this.epsilonBudget === undefined ? {} : { epsilonBudget: this.epsilonBudget }), steps: this.steps.map((h) => ({ ...h })) };
  }

  /** The ledger as an RdpAccountant's JSON (what RdpAccountant.fromJSON reads). */
  toJSON(): RdpAccountantJSON {
    return { kind: 'RdpAccountant', orders: Array.from(this.orders), history: this.steps.map((h) => ({ ...h })) };
  }
}

/** A kind of step as a key: equal keys are the same mechanism with the same parameters. */
function kindOf(h: AccountantHistory | SkellamHistory): string {
  return 'mechanism' in h ? `skellam ${h.mu} ${h.l1} ${h.l2}` : `${h.noiseMultiplier} ${h.samplingRate}`;
}

/** epsilon as a log shows it: four significant digits. */
function fmt(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(4))) : String(x);
}
