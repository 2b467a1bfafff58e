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
import { epsilonFromRdp, RdpAccountant, rdpSampledGaussian, type PrivacySpent, type RdpAccountantJSON } from '../../privacy/accountant.js';
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
  /** the steps composed: each kind of step and how many times, in order */
  steps: { noiseMultiplier: number; samplingRate: number; steps: number }[];
}

/**
 * The Skellam mechanism's RDP, for the steps distributed DP declares under
 * secure aggregation: not available in this build, so such a step cannot be
 * accounted and the round is not sent.
 */
function skellamNotAvailable(step: Extract<PrivacyStep, { mechanism: 'skellam' }>): never {
  throw new InvalidParameterError(`the skellam mechanism's accounting is not available in this build: a round declaring ${formatValue(step)} cannot be accounted`);
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

export class RunLedger {
  readonly delta: number;
  readonly epsilonBudget: number | undefined;
  private readonly accountant: RdpAccountant;

  constructor(privacy: { delta: number; epsilonBudget: number | undefined }, saved?: RdpAccountantJSON) {
    this.delta = privacy.delta;
    this.epsilonBudget = privacy.epsilonBudget;
    this.accountant = saved === undefined ? new RdpAccountant() : RdpAccountant.fromJSON(saved);
  }

  /** epsilon spent so far. */
  spent(): PrivacySpent {
    return this.accountant.epsilon(this.delta);
  }

  /** epsilon the run would have spent after one more round of `step` (nothing is recorded). */
  wouldSpend(step: PrivacyStep): PrivacySpent {
    if (step.mechanism !== 'gaussian') return skellamNotAvailable(step);
    const once = rdpSampledGaussian(step, this.accountant.orders);
    const total = this.accountant.rdp;
    for (let i = 0; i < total.length; i++) total[i] += once[i]!;
    return epsilonFromRdp(total, this.delta, this.accountant.orders);
  }

  /** Records one round of `step`; epsilon spent after it. */
  spend(step: PrivacyStep): PrivacySpent {
    if (step.mechanism !== 'gaussian') return skellamNotAvailable(step);
    this.accountant.step({ noiseMultiplier: step.noiseMultiplier, samplingRate: step.samplingRate });
    return this.spent();
  }

  /**
   * The reason to stop before a round of `step` (undefined: within the
   * budget). A budget that allows not even the run's first round is an error:
   * there is no model to return.
   */
  stopBefore(step: PrivacyStep, round: number, completed: number): string | undefined {
    if (this.epsilonBudget === undefined) return undefined;
    const would = this.wouldSpend(step);
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
    return { ...this.spent(), ...(this.epsilonBudget === undefined ? {} : { epsilonBudget: this.epsilonBudget }), steps: this.accountant.history };
  }

  toJSON(): RdpAccountantJSON {
    return this.accountant.toJSON();
  }
}

/** epsilon as a log shows it: four significant digits. */
function fmt(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(4))) : String(x);
}
