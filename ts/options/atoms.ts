/**
 * The building blocks of option schemas (check.ts): the kinds of value an
 * option may be (an integer in a range, a finite number, one of some strings)
 * and the options many calls share, each with its one bound: a seed, a
 * number of components, a covariance type, a tolerance, iterations, starts,
 * rounds, a learning rate. Each atom's message says what the value must be;
 * issueMessage (check.ts) puts the option's name before it and what it got
 * after, as requireInteger and its siblings (validate.ts) word theirs, from
 * the same phrases (integerNeed, oneOfNeed, ...).
 */
import * as v from 'valibot';
import { formatValue } from '../errors.js';
import { COVARIANCE_TYPES } from '../models/covariance-types.js';
import { integerNeed, isIntegerIn, isNumberAtLeast, isPositive, isSeconds, LIMITS, oneOfNeed, secondsNeed } from '../validate.js';

/**
 * A schema of values `accepts` takes; the issue of one it refuses says `need`
 * of it. Written out rather than v.custom alone: valibot describes a refused
 * value by reading its prototype, which a hostile Proxy (a caller's value
 * read once, not yet looked into) makes throw; here it is described by
 * formatValue, which runs none of the value's code.
 */
export function atom<T>(accepts: (x: unknown) => boolean, need: string | ((input: unknown) => string)): v.CustomSchema<T, undefined> {
  const schema = v.custom<T>(accepts);
  return {
    ...schema,
    '~run'(dataset, config) {
      // valibot's dataset protocol: `typed` says whether the value passed, `issues` what failed
      const out = dataset as unknown as { value: unknown; typed: boolean; issues?: v.BaseIssue<unknown>[] };
      const input = out.value;
      if (accepts(input)) {
        out.typed = true;
        return out as unknown as v.OutputDataset<T, v.CustomIssue>;
      }
      const issue: v.CustomIssue = {
        kind: 'schema', type: 'custom', input, expected: 'unknown', received: formatValue(input), message: typeof need === 'string' ? need : need(input),
        requirement: undefined, path: undefined, issues: undefined, lang: config.lang, abortEarly: config.abortEarly, abortPipeEarly: config.abortPipeEarly,
      };
      out.typed = false;
      out.issues = [...(out.issues ?? []), issue];
      return out as unknown as v.OutputDataset<T, v.CustomIssue>;
    },
  };
}

/** An integer in [min, max] (max 2^53 - 1 unless given). */
export const integer = (min: number, max = Number.MAX_SAFE_INTEGER) => atom<number>((x) => isIntegerIn(x, min, max), (input) => `must be ${integerNeed(min, max, input)}`);

/** A finite number >= min. */
export const number = (min: number) => atom<number>((x) => isNumberAtLeast(x, min), `must be a finite number >= ${min}`);

/** A finite number > 0. */
export const positive = () => atom<number>(isPositive, 'must be a finite number > 0');

/** A timeout in seconds, in (0, LIMITS.timeoutSeconds] (or from 0 with min 0). */
export const seconds = (min = Number.MIN_VALUE) => atom<number>((x) => isSeconds(x, min), `must be ${secondsNeed(min)}`);

export const flag = () => atom<boolean>((x) => typeof x === 'boolean', 'must be true or false');

/** One of the given strings. */
export const oneOf = <const T extends readonly string[]>(allowed: T) =>
  atom<T[number]>((x) => typeof x === 'string' && (allowed as readonly string[]).includes(x), `must be ${oneOfNeed(allowed)}`);

/**
 * A seed: an integer in [0, 2^53 - 1], every whole number a double holds
 * exactly (seedParts gives the core its two 32-bit halves). The bound the
 * tests and README state ("seed must be an integer >= 0"); the FedAvg
 * one-call function (2^31 - 1), FedDistr (2^32 - 1) and the FedGenGMM
 * experiment (2^31) had narrower ones.
 */
export const seed = () => integer(0);

/** Components of one Gaussian mixture (or clusters of one k-means): [1, LIMITS.components]. */
export const nComponents = () => integer(1, LIMITS.components);

/**
 * Components a federated server is asked for: a count, [1, 2^31 - 1]; its
 * model's size is capped by LIMITS.modelValues (requireModelSize), and the
 * global GaussianMixture by LIMITS.components when it is fitted.
 */
export const federatedComponents = () => integer(1, LIMITS.count);

export const covarianceType = () => oneOf(COVARIANCE_TYPES);

/** The information criterion that chooses K. */
export const criterion = () => oneOf(['bic', 'aic'] as const);

/** A convergence threshold: a finite number >= 0 (0 runs every iteration). */
export const tolerance = () => number(0);

/** Added to covariance diagonals: a finite number >= 0. */
export const regCovar = () => number(0);

/** Iterations of one fit, [min, LIMITS.maxIter]: GaussianMixture allows 0 (scikit-learn's max_iter >= 0), a federated client's fit at least 1. */
export const maxIterations = (min: 0 | 1 = 1) => integer(min, LIMITS.maxIter);

/** Initializations (starts) of one fit, the best kept: [1, LIMITS.nInit]. */
export const nInit = () => integer(1, LIMITS.nInit);

/** Communication or EM rounds: [min, LIMITS.rounds]. */
export const rounds = (min: 0 | 1 = 0) => integer(min, LIMITS.rounds);

/** A learning rate: a finite number > 0. */
export const learningRate = () => positive();

/** The share of the clients sampled in a round: (0, 1]. */
export const clientFraction = () => atom<number>((x) => typeof x === 'number' && x > 0 && x <= 1, 'must be in (0, 1]');

/** The number of features (columns) of a federated model: [1, LIMITS.features]. */
export const nFeatures = () => integer(1, LIMITS.features);

/** `atom`, optional: `fallback` when not given (no default: absent from the resolved options). */
export function optional<S extends v.GenericSchema<unknown, unknown>>(atom: S): v.OptionalSchema<S, undefined>;
export function optional<S extends v.GenericSchema<unknown, unknown>, const D extends v.InferOutput<S>>(atom: S, fallback: D): v.OptionalSchema<S, D>;
export function optional<S extends v.GenericSchema<unknown, unknown>>(atom: S, fallback?: unknown) {
  return v.optional(atom, fallback as never);
}

// --- shared by community association and FedDistr (session 2, item 3) ---

/** What a client that fails does to a one-call run: excluded with its reason, or the run throws (the runtime's onInvalid policy). */
export const onInvalidClient = () => oneOf(['exclude', 'throw'] as const);
