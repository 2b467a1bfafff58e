/**
 * How the FedGenGMM paper scores a mixture: the mean log-likelihood per row
 * (equation 2) on the training data it should describe, and, as an anomaly
 * detector, the negative log-likelihood of held-out rows ranked against their
 * labels (AUC-PR, ROC-AUC).
 */
import type { ArrowVectorLike } from '../data/arrow.js';
import type { MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { GaussianMixture } from '../models/gaussian-mixture.js';
import { guardRead, LIMITS, readArray, readRecord } from '../validate.js';
import { averagePrecision, rocAuc } from './ranking.js';

export interface MixtureScores {
  /** mean log-likelihood per row of the training data */
  logLikelihood: number;
  /** AUC-PR of -log-likelihood for the anomaly labels (when test data is given) */
  aucPr?: number;
  rocAuc?: number;
}

/** Anomaly scores: the negative log-likelihood of every row. */
function requireModel(model: unknown): GaussianMixture {
  if (!guardRead('model', () => model instanceof GaussianMixture)) throw new InvalidParameterError(`model must be a GaussianMixture, got ${formatValue(model)}`);
  return model as GaussianMixture;
}

export function anomalyScores(model: GaussianMixture, X: MatrixLike): Float64Array {
  return requireModel(model).scoreSamples(X).map((v) => -v);
}

export function scoreMixture(model: GaussianMixture, train: MatrixLike, test?: { X: MatrixLike; anomaly: ArrayLike<number> | ArrowVectorLike }): MixtureScores {
  const out: MixtureScores = { logLikelihood: requireModel(model).score(train) };
  if (test !== undefined) {
    const t = readRecord(test, ['X', 'anomaly'], 'test');
    const anomaly = readArray('test.anomaly', t.anomaly, LIMITS.values, InvalidDataError) as number[];
    const s = anomalyScores(model, t.X!);
    if (s.length !== anomaly.length) throw new InvalidDataError(`${s.length} test rows but ${anomaly.length} anomaly labels`);
    out.aucPr = averagePrecision(anomaly, s);
    out.rocAuc = rocAuc(anomaly, s);
  }
  return out;
}
