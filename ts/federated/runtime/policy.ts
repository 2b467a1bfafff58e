/**
 * The one failure and participation policy of every federation, checked once
 * into a resolved form before the first round (Flower's min_fit_clients /
 * min_available_clients and fraction_fit, pfl-research's cohort sampling).
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { readOptions, requireInteger, requireOneOf, requireSeconds } from '../../validate.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../messages/codec.js';
import { LIMITS } from '../../validate.js';
import { DEFAULT_MAX_MISSED_ROUNDS } from './missed-rounds.js';

/** The share of a run's clients the policy may exclude before the run fails (FederationPolicy.maxExcludedShare). */
export const DEFAULT_MAX_EXCLUDED_SHARE = 0.5;

export interface FederationPolicy {
  /**
   * A client whose reply fails a check, or that refuses a request: 'exclude'
   * it from the rest of the run and go on (default), or 'fail' the run.
   * Timeouts and dropouts only cost the client that round: it is asked again
   * next round if it is back.
   */
  onInvalid?: 'exclude' | 'fail';
  /**
   * clients that must be there before the first round (default 1); the
   * runtime waits up to joinTimeout for them. Later rounds go on with the
   * clients that are there (a dropped client is asked again once it is back).
   */
  minClients?: number;
  /**
   * accepted replies a round needs (default 1); fewer fail the run with a
   * FederationError. 0 only for a server whose aggregate handles an empty round.
   */
  minReplies?: number;
  /** the share of available clients asked each round, drawn with `sampleSeed` (default 1: every client) */
  fraction?: number;
  /** seed of the per-round client sampling */
  sampleSeed?: number;
  /** seconds a round waits for replies (default: no deadline in process, 60 over a network) */
  roundTimeout?: number;
  /** seconds the runtime waits for minClients to be available (default 60) */
  joinTimeout?: number;
  /** the largest message accepted, in bytes, checked before decoding (default 64 MiB) */
  maxMessageBytes?: number;
  /**
   * the largest share of the run's clients the policy may exclude, in [0, 1]
   * (default 0.5): once more are excluded the run fails with a
   * FederationError naming every exclusion's reason, as a Flower strategy
   * stops below min_available_clients. The share is of every client the run
   * has seen (available in some round) and those excluded before it started
   * (RunOptions.excludedBefore, e.g. a simulation's clients that could not be
   * created). A client that never joins is minClients' business, and a
   * timeout or a dropout only costs a round: neither is an exclusion. 1 never
   * fails on exclusions; 0 fails on the first (after the round it happened in,
   * with every exclusion of that round, where onInvalid 'fail' throws the
   * first client's own error at once).
   */
  maxExcludedShare?: number;
  /**
   * a client that misses this many rounds in a row (timeouts or dropouts)
   * leaves the quorum: it is not asked, and rounds do not wait for it, until
   * it answers again (a late reply) or comes back after being away; back, one
   * more missed round takes it out again (default 3; 0: never). Not an
   * exclusion: each round's record lists who left (`sidelined`) and who came
   * back (`reinstated`). Clients that are slow once, or reconnect, stay.
   */
  maxMissedRounds?: number;
  /**
   * Privacy accounting (runtime/privacy-ledger.ts): every round whose
   * requests declare a privacy step (the noise the server adds) is composed
   * into one RDP accountant for the run, and each round's record says the
   * epsilon spent so far at `delta`. With `epsilonBudget`, a round that would
   * take the run past it is not sent: the run stops before it (stoppedEarly).
   */
  privacy?: { delta: number; epsilonBudget?: number };
  /**
   * Secure aggregation (SecAgg+): every round whose reply kind the protocol
   * lays out as additive runs as four stages, and the server sees only the
   * sum of the survivors' replies (secure-aggregation/). `threshold`: shares
   * that rebuild a dropped client's mask (default from the neighbours);
   * `neighbours`: each client's degree in the masking graph (default
   * O(log n); n - 1: all pairs); `clip`: the largest magnitude of any value a
   * reply lays out (default 2^36; a client with a larger one refuses).
   * `noiseMultiplier`: distributed DP (docs/privacy.md): each client adds
   * its Skellam share so that every released sum holds at least the noise of
   * a central Gaussian of standard deviation noiseMultiplier x clip, `clip`
   * (required then) bounding the L2 norm of a client's whole contribution.
   */
  secureAggregation?: SecureAggregationPolicy;
}

export interface SecureAggregationPolicy {
  threshold?: number;
  neighbours?: number;
  clip?: number;
  noiseMultiplier?: number;
}

/** The default clipping range of secure aggregation: values in [-2^36, 2^36] (sums of honest statistics on the parity datasets stay far inside). */
export const DEFAULT_SECURE_CLIP = 2 ** 36;

export interface ResolvedPolicy {
  onInvalid: 'exclude' | 'fail';
  minClients: number;
  minReplies: number;
  fraction: number;
  sampleSeed: number | undefined;
  roundTimeoutMs: number | undefined;
  joinTimeoutMs: number;
  maxMessageBytes: number;
  maxExcludedShare: number;
  maxMissedRounds: number;
  /** the run's privacy accounting (absent: rounds' privacy steps are recorded, not composed) */
  privacy?: { delta: number; epsilonBudget: number | undefined };
  /** secure aggregation, when on: threshold and neighbours as given (undefined: per round, from the clients asked) */
  secureAggregation?: { threshold?: number; neighbours?: number; clip: number; noiseMultiplier?: number };
}

function resolveSecure(given: unknown): ResolvedPolicy['secureAggregation'] {
  if (given === undefined || given === false) return undefined;
  if (given === true) given = {};
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`secureAggregation must be { threshold?, neighbours?, clip?, noiseMultiplier? }, got ${formatValue(given)}`);
  const s = readOptions(given as SecureAggregationPolicy, ['threshold', 'neighbours', 'clip', 'noiseMultiplier'], 'secureAggregation');
  const clip = s.clip ?? DEFAULT_SECURE_CLIP;
  if (typeof clip !== 'number' || !(clip > 0) || clip > 2 ** 52) throw new InvalidParameterError(`secureAggregation.clip must be in (0, 2^52], got ${formatValue(clip)}`);
  const z = s.noiseMultiplier;
  if (z !== undefined) {
    if (!(typeof z === 'number' && z > 0 && Number.isFinite(z))) throw new InvalidParameterError(`secureAggregation.noiseMultiplier must be a finite number > 0, got ${formatValue(z)}`);
    // the noise scales with clip: the default range (2^36) would drown every sum
    if (s.clip === undefined) throw new InvalidParameterError('secureAggregation.noiseMultiplier needs clip: the L2 bound of one client\'s contribution, which the noise is calibrated to (docs/privacy.md)');
  }
  return {
    ...(s.threshold === undefined ? {} : { threshold: requireInteger('secureAggregation.threshold', s.threshold, 1, 65_535) }),
    ...(s.neighbours === undefined ? {} : { neighbours: requireInteger('secureAggregation.neighbours', s.neighbours, 1, 65_534) }),
    clip,
    ...(z === undefined ? {} : { noiseMultiplier: z }),
  };
}

export function resolvePolicy(given: FederationPolicy = {}): ResolvedPolicy {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`the federation policy must be an object, got ${formatValue(given)}`);
  const p = readOptions(given, ['onInvalid', 'minClients', 'minReplies', 'fraction', 'sampleSeed', 'roundTimeout', 'joinTimeout', 'maxMessageBytes', 'maxExcludedShare', 'maxMissedRounds', 'privacy', 'secureAggregation']);
  const fraction = p.fraction ?? 1;
  if (typeof fraction !== 'number' || !(fraction > 0 && fraction <= 1)) throw new InvalidParameterError(`fraction must be in (0, 1], got ${formatValue(fraction)}`);
  const maxExcludedShare = p.maxExcludedShare ?? DEFAULT_MAX_EXCLUDED_SHARE;
  if (typeof maxExcludedShare !== 'number' || !(maxExcludedShare >= 0 && maxExcludedShare <= 1)) {
    throw new InvalidParameterError(`maxExcludedShare must be in [0, 1], got ${formatValue(maxExcludedShare)}`);
  }
  const secure = resolveSecure(p.secureAggregation);
  return {
    onInvalid: requireOneOf('onInvalid', p.onInvalid ?? 'exclude', ['exclude', 'fail'] as const),
    minClients: requireInteger('minClients', p.minClients ?? 1, 1, LIMITS.count),
    minReplies: requireInteger('minReplies', p.minReplies ?? 1, 0, LIMITS.count),
    fraction,
    sampleSeed: p.sampleSeed === undefined ? undefined : requireInteger('sampleSeed', p.sampleSeed, 0),
    // timers take at most 2^31 - 1 ms (and fire at once past it): seconds are capped at LIMITS.timeoutSeconds
    roundTimeoutMs: p.roundTimeout === undefined ? undefined : requireSeconds('roundTimeout', p.roundTimeout) * 1000,
    joinTimeoutMs: requireSeconds('joinTimeout', p.joinTimeout ?? 60) * 1000,
    maxMessageBytes: requireInteger('maxMessageBytes', p.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 1024),
    maxExcludedShare,
    maxMissedRounds: requireInteger('maxMissedRounds', p.maxMissedRounds ?? DEFAULT_MAX_MISSED_ROUNDS, 0, LIMITS.count),
    ...(p.privacy === undefined ? {} : { privacy: resolvePrivacy(p.privacy) }),
    ...(secure === undefined ? {} : { secureAggregation: secure }),
  };
}

/** The privacy accounting option read and checked: delta in (0, 1), a budget > 0 when given. */
function resolvePrivacy(given: unknown): { delta: number; epsilonBudget: number | undefined } {
  const p = readOptions(given as { delta: number; epsilonBudget?: number }, ['delta', 'epsilonBudget'], 'privacy');
  if (!(typeof p.delta === 'number' && p.delta > 0 && p.delta < 1)) throw new InvalidParameterError(`privacy.delta must be a number in (0, 1), got ${formatValue(p.delta)}`);
  if (p.epsilonBudget !== undefined && !(typeof p.epsilonBudget === 'number' && p.epsilonBudget > 0 && Number.isFinite(p.epsilonBudget))) {
    throw new InvalidParameterError(`privacy.epsilonBudget must be a finite number > 0, got ${formatValue(p.epsilonBudget)}`);
  }
  return { delta: p.delta, epsilonBudget: p.epsilonBudget };
}
