/**
 * Caps on what a federation's options may ask for: each well beyond any real
 * use, each keeping one option from implying work or memory no machine has
 * (a count of 2^32 + 2 would otherwise wrap at the WASM boundary, a model of
 * 2^31 features allocate 16 GB). README's table of limits lists them.
 */
import { InvalidParameterError } from '../errors.js';
import type { CovarianceType } from '../models/gaussian-mixture.js';

export const LIMITS = {
  /** features of a model (as the wire's GMM parameters allow) */
  features: 1 << 20,
  /** communication rounds, EM rounds */
  rounds: 1_000_000,
  /** local steps per round, restarts, iterations of a local fit */
  localSteps: 10_000,
  restarts: 1_000,
  iterations: 1_000_000,
  /** anything counted in rows or clients (a signed 32-bit count) */
  count: 2 ** 31 - 1,
  /** values in one model's parameters (weights, means, covariances): 2^27 doubles, 1 GiB */
  modelValues: 2 ** 27,
} as const;

/** The values of a K-component mixture over d features; an InvalidParameterError when they pass LIMITS.modelValues. */
export function requireModelSize(k: number, d: number, t: CovarianceType): void {
  const covariances = t === 'full' ? k * d * d : t === 'tied' ? d * d : t === 'diag' ? k * d : k;
  const values = k + k * d + covariances;
  if (values > LIMITS.modelValues) {
    throw new InvalidParameterError(`a ${t} mixture of ${k} components over ${d} features holds ${values} values, more than the ${LIMITS.modelValues} (1 GiB) a model may; lower nComponents or nFeatures, or use diagonal covariances`);
  }
}
