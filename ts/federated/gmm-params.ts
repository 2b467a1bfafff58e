/**
 * Gaussian-mixture parameters as they travel between federated roles: their
 * declaration (a schema shared by every message that ships a mixture:
 * FedGenGMM uploads, distributed EM broadcasts) and their check on receipt:
 * shapes, positive weights summing to one, positive-definite covariances.
 */
import { formatValue, InvalidMessageError, InvalidParameterError, restated } from '../errors.js';
import { guardRead, requireInteger } from '../validate.js';
import { COVARIANCE_TYPES, covarianceLength, GaussianMixture, type CovarianceType } from '../models/gaussian-mixture.js';
import { lengthIs } from './messages/checks.js';
import { f64Array, oneOf, parsePayload, record, wholeNumber } from './messages/schema.js';

export const GMM_PARAMS = record({
  covarianceType: oneOf(COVARIANCE_TYPES),
  nComponents: wholeNumber(1, 1 << 20),
  nFeatures: wholeNumber(1, 1 << 20),
  weights: f64Array(),
  means: f64Array(),
  covariances: f64Array(),
});

export interface GmmParams {
  covarianceType: CovarianceType;
  nComponents: number;
  nFeatures: number;
  weights: number[] | Float64Array;
  means: number[] | Float64Array;
  covariances: number[] | Float64Array;
}

export function gmmParams(gm: GaussianMixture): GmmParams {
  if (!guardRead('the model', () => gm instanceof GaussianMixture)) throw new InvalidParameterError(`gmmParams takes a fitted GaussianMixture, got ${formatValue(gm)}`);
  return {
    covarianceType: gm.covarianceType,
    nComponents: gm.nComponents,
    nFeatures: gm.nFeatures,
    weights: gm.weights,
    means: gm.means,
    covariances: gm.covariances,
  };
}

/**
 * Checks received parameters (`who`, when given, names the sender in the
 * reasons) and builds the model; `nFeatures`, when given, is the dimension
 * every party must share. Throws InvalidMessageError; nothing is kept on failure.
 */
export function receiveGmmParams(p: unknown, who: string | undefined, nFeatures?: number): GaussianMixture {
  if (who !== undefined && typeof who !== 'string') throw new InvalidParameterError(`who must name the sender (a string) or be undefined, got ${formatValue(who)}`);
  if (nFeatures !== undefined) requireInteger('nFeatures', nFeatures, 1);
  const q = parsePayload(GMM_PARAMS, p, who);
  const fail = (reason: string) => new InvalidMessageError(who === undefined ? reason : `${who}: ${reason}`);
  const { nComponents: k, nFeatures: d, covarianceType: t } = q;
  if (nFeatures !== undefined && d !== nFeatures) {
    throw fail(`the model has ${d} features but this federation has ${nFeatures}`);
  }
  try {
    lengthIs('weights', q.weights, k);
    lengthIs('means', q.means, k * d);
    lengthIs('covariances', q.covariances, covarianceLength(t, k, d));
  } catch (e) {
    throw fail((e as Error).message);
  }
  const weights = q.weights;
  for (let i = 0; i < weights.length; i++) {
    if (!(weights[i]! > 0)) throw fail(`weights[${i}] is ${weights[i]}; mixture weights must be positive`);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  if (Math.abs(total - 1) > 1e-6) throw fail(`weights sum to ${total}, not 1`);
  try {
    return GaussianMixture.fromParameters({ covarianceType: t, weights: weights.map((w) => w / total), means: q.means, covariances: q.covariances, nFeatures: d });
  } catch (e) {
    throw restated(e, (x) => fail(x.message));
  }
}
