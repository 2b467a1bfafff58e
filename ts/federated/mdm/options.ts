/**
 * The MDM federation's options, declared once (valibot schemas of the shared
 * atoms, ts/options/): the server's, a client's, a user group's, the secure
 * aggregator's and fitMdm's. Each is checked once, where it comes in (the
 * one-call function, the runtime's spec, a constructor given plain options);
 * the roles hold what checking resolves, and a role handed resolved options
 * takes them as they are. What must meet the data (a client's size against
 * its counts, a group's seeds against its users) is checked with the data.
 */
import * as v from 'valibot';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { guardRead, isArray, LIMITS, readArray, readOptions, requireInteger, requireNumber, requireVector } from '../../validate.js';
import type { MatrixLike } from '../../data/matrix.js';
import type { Encoding } from '../messages/codec.js';
import type { RunHooks } from '../runtime/run.js';
import { MDM_MAX_CELLS } from './messages.js';
import type { SelectMdmOptions } from './select.js';

/** Noise for central differential privacy: see `sensitivity` in messages.ts and the README. */
export interface MdmPrivacy {
  /** standard deviation of the noise on each summed entry, in units of one client's L2 sensitivity */
  noiseMultiplier: number;
  /** bound on each client's (u, v) L2 norm in Algorithm 2 (clients scale theirs down to it) */
  clip: number;
}

export interface MdmOptions {
  /** K (default 1) */
  nComponents?: number;
  /** Algorithm 2's rounds T (default 100) */
  rounds?: number;
  /** clients per round (default: every client, the full-batch iteration) */
  cohort?: number;
  /** Algorithm 1's cohort S_0 (default: `cohort`) */
  initCohort?: number;
  /** initial parameters instead of Algorithm 1 (same K, C, N) */
  init?: DirichletMultinomialMixture;
  /** Gaussian noise on the aggregates (central DP); without it, exact sums */
  privacy?: MdmPrivacy;
  /** seed of the cohort draws */
  seed?: number;
  /**
   * seed of the aggregator's noise (with privacy), for tests only: whoever
   * knows it can subtract the noise. Default: fresh from crypto.getRandomValues,
   * never derived from `seed`.
   */
  noiseSeed?: number;
  /** a client whose contribution fails validation: excluded with its reason (default), or the run throws (the runtime's onInvalid policy) */
  onInvalidClient?: 'exclude' | 'throw';
  /** called with the initial model (round 0) and after every round */
  onRound?: (round: number, model: DirichletMultinomialMixture) => void;
}

export interface MdmServerOptions extends MdmOptions {
  /** C, the categories of every client's histogram */
  nCategories: number;
  /** N, the largest client size the model covers */
  maxCount: number;
}

export interface MdmClientOptions {
  /** the client's size n, when known apart from its counts: it must equal their sum */
  size?: number;
  /** seed of the client's own random choice (its Algorithm 1 component) */
  seed?: number;
  /** the largest K x C and K x N (each) it accepts in a request (default and at most MDM_MAX_CELLS, 1e7) */
  maxCells?: number;
}

export interface MdmUserGroupOptions {
  /** each user's n, when known apart from the histograms: each must equal its row's sum */
  sizes?: ArrayLike<number>;
  /**
   * seeds of the users' own random choices (Algorithm 1's component), one per
   * user: user i draws as an MdmClient of seed seeds[i] would
   */
  seeds?: ArrayLike<number>;
  /** the seeds' seed when `seeds` is not given (each user's seed is drawn from it) */
  seed?: number;
  /** the largest K x C and K x N (each) it accepts in a request (default and at most MDM_MAX_CELLS, 1e7) */
  maxCells?: number;
}

/** The fewest clients whose scores a noising aggregator releases as an exact sum, by default. */
export const MIN_EXACT_CLIENTS = 10;

export interface MdmAggregatorOptions {
  /** Gaussian noise of this many sensitivities on every summed entry (default 0: exact sums) */
  noiseMultiplier?: number;
  /**
   * seed of the noise, for tests only: whoever knows it can subtract the
   * noise. Default: 64 bits from crypto.getRandomValues (Rng.unpredictable).
   */
  seed?: number;
  /**
   * With noise: answer evaluation requests (K selection's validation scores)
   * with exact sums, which the privacy guarantee does not cover (a
   * log-likelihood has no bounded sensitivity). Default false: a noising
   * aggregator refuses them.
   */
  exactEvaluation?: boolean;
  /** With noise and exactEvaluation: the fewest clients an exact sum may hold (default MIN_EXACT_CLIENTS, 10); fewer, and it is not released. */
  minExactClients?: number;
  /**
   * Exclusion reasons with the client's values (which check failed and by how
   * much). Default: only without noise; with noise a reason names the failed
   * check alone, and a client's own error text is not passed on.
   */
  detailedReasons?: boolean;
}

export interface MdmFitOptions extends MdmOptions {
  /** N, the largest client size the model covers (default: the largest n among the clients) */
  maxCount?: number;
  /** each client's n, when given apart from the histograms (each must equal its row's sum) */
  sizes?: ArrayLike<number>;
  /** names of the C categories, kept in the model */
  categories?: readonly string[];
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /**
   * Simulate the users in this many groups (MdmUserGroup: one runtime client
   * and one message per group and round, its users' statistics summed in one
   * WASM call) instead of one client per user. The same model, up to the order
   * of the additions; each group is asked as a whole, so `cohort` and
   * `initCohort` must then cover every user (omit them).
   */
  groups?: number;
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** A model given as `init`: asked whether it is one under guard (a Proxy would throw from init.nComponents). */
function readInit(x: unknown): DirichletMultinomialMixture {
  if (!guardRead('init', () => x instanceof DirichletMultinomialMixture)) throw new InvalidParameterError(`init must be a DirichletMultinomialMixture, got ${formatValue(x)}`);
  return x as DirichletMultinomialMixture;
}

/** The noise's settings, read once (strict) and checked. */
function readPrivacy(x: unknown): MdmPrivacy {
  if (x === null || typeof x !== 'object') throw new InvalidParameterError('privacy must be { noiseMultiplier, clip }');
  const p = readOptions(x as MdmPrivacy, ['noiseMultiplier', 'clip'], 'privacy');
  const noiseMultiplier = requireNumber('privacy.noiseMultiplier', p.noiseMultiplier, 0);
  if (typeof p.clip !== 'number' || !(p.clip > 0) || !Number.isFinite(p.clip)) throw new InvalidParameterError(`privacy.clip must be a finite number > 0, got ${formatValue(p.clip)}`);
  return Object.freeze({ noiseMultiplier, clip: p.clip });
}

/** The message of a cohort smaller than K. */
export function cohortTooSmall(k: number, name: string, size: number, all: boolean): string {
  return `K = ${k} components is larger than the ${name} of ${size} client${size === 1 ? '' : 's'}${all ? ' (all there are)' : ''}; lower K or use a larger ${name}`;
}

/** The server's options but C and N (fitMdm takes those from the histograms), in the order the server has always checked them. */
const modelEntries = {
  init: atoms.optional(atoms.checkedBy(readInit)),
  privacy: atoms.optional(atoms.checkedBy(readPrivacy)),
  onRound: atoms.optional(atoms.callback<NonNullable<MdmOptions['onRound']>>()),
  // default: the given model's K, else 1 (the rule)
  nComponents: atoms.optional(atoms.federatedComponents()),
};
const runEntries = {
  rounds: atoms.optional(atoms.rounds(0), 100),
  cohort: atoms.optional(atoms.integer(1, LIMITS.count)),
  initCohort: atoms.optional(atoms.integer(1, LIMITS.count)),
  onInvalidClient: atoms.optional(atoms.onInvalidClient()),
  seed: atoms.optional(atoms.seed()),
  noiseSeed: atoms.optional(atoms.seed()),
};

/**
 * The MDM server's options. Resolved: nComponents filled in. The rules: K x C
 * and K x N within what clients accept, cohorts of at least K clients, a
 * given model of this run's K, C and N.
 */
export const serverOptions = defineOptions<MdmServerOptions>()(
  { ...modelEntries, nCategories: atoms.integer(2, LIMITS.count), maxCount: atoms.integer(1, LIMITS.count), ...runEntries },
  (o) => {
    const k = o.nComponents ?? o.init?.nComponents ?? 1;
    const { nCategories: c, maxCount: nMax } = o;
    if (k * Math.max(c, nMax) > MDM_MAX_CELLS) {
      throw new InvalidParameterError(`K = ${k} components of C = ${c} categories and N = ${nMax} sizes exceed the limit of ${MDM_MAX_CELLS} cells (K x C and K x N each) that clients accept; lower K or N`);
    }
    // sizes given outright are checked now; the defaults (every client) when the clients are known
    for (const [name, size] of [['cohort', o.cohort], ['initCohort', o.initCohort ?? o.cohort]] as const) {
      if (size !== undefined && size < k) throw new InvalidParameterError(cohortTooSmall(k, name, size, false));
    }
    if (o.init !== undefined && (o.init.nComponents !== k || o.init.nCategories !== c || o.init.maxCount !== nMax)) {
      throw new InvalidParameterError(`init has K = ${o.init.nComponents}, C = ${o.init.nCategories}, N = ${o.init.maxCount}; this run has K = ${k}, C = ${c}, N = ${nMax}`);
    }
    return { ...o, nComponents: k };
  },
);

export type ResolvedMdmServerOptions = ReturnType<typeof serverOptions.check>;

const maxCells = () => atoms.optional(atoms.integer(1, MDM_MAX_CELLS), MDM_MAX_CELLS);

/** An MdmClient's options (its size is checked against its counts). */
export const clientOptions = defineOptions<MdmClientOptions>()({
  size: atoms.optional(atoms.unchecked<number>()),
  maxCells: maxCells(),
  seed: atoms.optional(atoms.seed()),
});

export type ResolvedMdmClientOptions = ReturnType<typeof clientOptions.check>;

/** The users' seeds, read once: each a seed (their number is checked against the users). */
function readSeeds(x: unknown): Float64Array {
  const seeds = requireVector('seeds', x);
  seeds.forEach((s, i) => requireInteger(`seeds[${i}]`, s, 0));
  return seeds;
}

/** An MdmUserGroup's options (sizes and the number of seeds are checked against its users). */
export const userGroupOptions = defineOptions<MdmUserGroupOptions>()({
  sizes: atoms.optional(atoms.unchecked<ArrayLike<number>>()),
  seeds: atoms.optional(atoms.checkedBy(readSeeds)),
  seed: atoms.optional(atoms.seed()),
  maxCells: maxCells(),
});

export type ResolvedMdmUserGroupOptions = ReturnType<typeof userGroupOptions.check>;

/** The secure aggregator's options. */
export const aggregatorOptions = defineOptions<MdmAggregatorOptions>()({
  noiseMultiplier: atoms.optional(atoms.number(0), 0),
  // default: only without noise (the aggregator's rule)
  detailedReasons: atoms.optional(atoms.flag()),
  exactEvaluation: atoms.optional(atoms.flag(), false),
  minExactClients: atoms.optional(atoms.integer(1, LIMITS.count), MIN_EXACT_CLIENTS),
  seed: atoms.optional(atoms.seed()),
});

export type ResolvedMdmAggregatorOptions = ReturnType<typeof aggregatorOptions.check>;

/**
 * fitMdm's options, read once: its seed checked here (the clients' and the
 * server's seeds are drawn from it), the server's options by the server's
 * declaration once the histograms give C and N, groups against the clients.
 */
export const fitMdmOptions = defineOptions<MdmFitOptions>()({
  seed: atoms.optional(atoms.seed()),
  init: atoms.optional(v.unknown()),
  privacy: atoms.optional(v.unknown()),
  onRound: atoms.optional(v.unknown()),
  nComponents: atoms.optional(v.unknown()),
  rounds: atoms.optional(v.unknown()),
  cohort: atoms.optional(v.unknown()),
  initCohort: atoms.optional(v.unknown()),
  onInvalidClient: atoms.optional(v.unknown()),
  noiseSeed: atoms.optional(v.unknown()),
  maxCount: atoms.optional(v.unknown()),
  sizes: atoms.optional(v.unknown()),
  categories: atoms.optional(v.unknown()),
  encoding: atoms.optional(v.unknown()),
  groups: atoms.optional(v.unknown()),
  maxExcludedShare: atoms.optional(v.unknown()),
  // read by the runtime (readRunHooks)
  hooks: atoms.optional(v.unknown()),
});

/** The candidate K values: kValues (default 1..6) or kRange, read once under guard, each an integer >= 1; sorted, without repeats. */
function candidates(o: { kValues?: unknown; kRange?: unknown }): number[] {
  if (o.kValues !== undefined && o.kRange !== undefined) throw new InvalidParameterError('give kValues or kRange, not both');
  let ks: number[];
  if (o.kRange !== undefined) {
    // read once, under guard: a Proxy's traps run here, not later
    const r = isArray('kRange', o.kRange) ? readArray('kRange', o.kRange, 3) : [];
    if (r.length !== 2) throw new InvalidParameterError('kRange must be [first, last]');
    const [a, b] = [requireInteger('kRange[0]', r[0], 1, LIMITS.count), requireInteger('kRange[1]', r[1], 1, LIMITS.count)];
    if (b < a) throw new InvalidParameterError(`kRange [${a}, ${b}] is empty`);
    ks = Array.from({ length: b - a + 1 }, (_, i) => a + i);
  } else {
    const given = o.kValues ?? [1, 2, 3, 4, 5, 6];
    ks = (isArray('kValues', given) ? readArray('kValues', given, LIMITS.candidates) : []) as number[];
    if (ks.length === 0) throw new InvalidParameterError('kValues must be a non-empty array of integers >= 1');
    ks.forEach((k, i) => requireInteger(`kValues[${i}]`, k, 1, LIMITS.count));
  }
  return [...new Set(ks)].sort((a, b) => a - b);
}

/**
 * selectMdm's options: its own checked here (resolved: `candidates`, the K
 * values to fit), the fits' read once and handed to fitMdm, which checks them.
 */
export const selectMdmOptions = defineOptions<SelectMdmOptions>()(
  {
    kValues: atoms.optional(v.unknown()),
    kRange: atoms.optional(v.unknown()),
    exactValidation: atoms.optional(atoms.flag()),
    tolerance: atoms.optional(atoms.number(0), 0.01),
    validation: atoms.optional(atoms.unchecked<MatrixLike>()),
    // at most the clients less K (checked against them)
    validationCohort: atoms.optional(atoms.integer(1, LIMITS.count)),
    onCandidate: atoms.optional(atoms.callback<NonNullable<SelectMdmOptions['onCandidate']>>()),
    seed: atoms.optional(atoms.seed()),
    maxCount: atoms.optional(v.unknown()),
    sizes: atoms.optional(v.unknown()),
    categories: atoms.optional(v.unknown()),
    encoding: atoms.optional(v.unknown()),
    groups: atoms.optional(v.unknown()),
    rounds: atoms.optional(v.unknown()),
    cohort: atoms.optional(v.unknown()),
    initCohort: atoms.optional(v.unknown()),
    privacy: atoms.optional(v.unknown()),
    noiseSeed: atoms.optional(v.unknown()),
    onInvalidClient: atoms.optional(v.unknown()),
    maxExcludedShare: atoms.optional(v.unknown()),
  },
  (o) => {
    const ks = candidates(o);
    if (o.privacy !== undefined && o.exactValidation !== true) {
      throw new InvalidParameterError(
        "with privacy, choosing K releases exact (noise-free) sums of the validation clients' log-likelihoods, which the privacy guarantee does not cover; " +
          'pass exactValidation: true to accept that, or fit a fixed K with fitMdm',
      );
    }
    if (o.validation !== undefined && o.validationCohort !== undefined) throw new InvalidParameterError('give validation or validationCohort, not both');
    return { ...o, candidates: ks };
  },
);
