/**
 * The size of a federated model, checked against LIMITS.modelValues before a
 * server or client allocates one (a model of 2^31 features would ask 16 GB).
 */
import { InvalidParameterError } from '../errors.js';
import { LIMITS } from '../validate.js';
import { covarianceLength, type CovarianceType } from '../models/gaussian-mixture.js';

/** The values of a K-component mixture over d features: weights, means and covariances. */
function modelValues(k: number, d: number, t: CovarianceType): number {
  return k + k * d + covarianceLength(t, k, d);
}

/**
 * The values of a K-component mixture over d features; an InvalidParameterError when they pass
 * LIMITS.modelValues, whose advice is only what would fit: the most components that do (at most
 * LIMITS.components, what a GaussianMixture holds), and diagonal covariances only for a full or
 * tied mixture that they would bring under the cap.
 */
export function requireModelSize(k: number, d: number, t: CovarianceType): void {
  const values = modelValues(k, d, t);
  if (values <= LIMITS.modelValues) return;
  // the most components that fit: the values grow linearly in k (a tied mixture's d^2 is shared)
  const shared = modelValues(0, d, t);
  const each = modelValues(1, d, t) - shared;
  const kFit = Math.max(0, Math.floor((LIMITS.modelValues - shared) / each));
  const advice = [
    kFit >= LIMITS.components
      ? `lower nComponents to at most ${LIMITS.components} (LIMITS.components)`
      : kFit >= 1
        ? `lower nComponents to at most ${kFit} (over ${d} features) or lower nFeatures`
        : `lower nFeatures (not one ${t} component over ${d} features fits)`,
  ];
  if ((t === 'full' || t === 'tied') && k <= LIMITS.components && modelValues(k, d, 'diag') <= LIMITS.modelValues) advice.push('or use diagonal covariances');
  throw new InvalidParameterError(`a ${t} mixture of ${k} components over ${d} features holds ${values} values, more than the ${LIMITS.modelValues} (1 GiB) a model may; ${advice.join(', ')}`);
}
