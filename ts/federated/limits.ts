/**
 * The size of a federated model, checked against LIMITS.modelValues before a
 * server or client allocates one (a model of 2^31 features would ask 16 GB).
 */
import { InvalidParameterError } from '../errors.js';
import { LIMITS } from '../validate.js';
import type { CovarianceType } from '../models/gaussian-mixture.js';

/** The values of a K-component mixture over d features; an InvalidParameterError when they pass LIMITS.modelValues. */
export function requireModelSize(k: number, d: number, t: CovarianceType): void {
  const covariances = t === 'full' ? k * d * d : t === 'tied' ? d * d : t === 'diag' ? k * d : k;
  const values = k + k * d + covariances;
  if (values > LIMITS.modelValues) {
    throw new InvalidParameterError(`a ${t} mixture of ${k} components over ${d} features holds ${values} values, more than the ${LIMITS.modelValues} (1 GiB) a model may; lower nComponents or nFeatures, or use diagonal covariances`);
  }
}
