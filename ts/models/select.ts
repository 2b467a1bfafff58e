/**
 * Model selection over the number of components by BIC or AIC, as a user would
 * loop over GaussianMixture in scikit-learn, but with the data copied into WASM
 * memory once for every candidate.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { FedmixError, formatValue, InvalidParameterError } from '../errors.js';
import { withScope, type Scope } from '../wasm/memory.js';
import { guardRead, LIMITS, readOptions, requireInteger, requireLength, requireOneOf } from '../validate.js';
import { COVARIANCE_TYPES, GaussianMixture, informationCriteria, type CovarianceType, type GaussianMixtureOptions } from './gaussian-mixture.js';

export interface SelectOptions extends Omit<GaussianMixtureOptions, 'nComponents' | 'weightsInit' | 'meansInit' | 'precisionsInit' | 'warmStart'> {
  /** smallest number of components tried (default 1) */
  kMin?: number;
  /** largest number of components tried; (kMax - kMin + 1) x covariance types is at most LIMITS.candidates (1,024) */
  kMax: number;
  /** default 'bic' */
  criterion?: 'bic' | 'aic';
  /** covariance types tried (default: just covarianceType, itself 'full' by default) */
  covarianceTypes?: CovarianceType[];
}

export interface CandidateScore {
  nComponents: number;
  covarianceType: CovarianceType;
  bic: number;
  aic: number;
  /** mean log-likelihood per row of the training data */
  logLikelihood: number;
  converged: boolean;
  nIter: number;
  /** set when this candidate could not be fitted (it is then skipped) */
  error?: string;
}

export interface Selection {
  best: GaussianMixture;
  criterion: 'bic' | 'aic';
  /** every candidate, in the order tried */
  scores: CandidateScore[];
}

export function selectGaussianMixture(X: MatrixLike, options: SelectOptions): Selection {
  const x = Matrix.from(X);
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be an object with kMax, got ${formatValue(options)}`);
  const o = readOptions(options, ['kMin', 'kMax', 'criterion', 'covarianceTypes', 'covarianceType', 'tol', 'regCovar', 'maxIter', 'nInit', 'initParams', 'seed']);
  const kMin = requireInteger('kMin', o.kMin ?? 1, 1, LIMITS.components);
  const kMax = requireInteger('kMax', o.kMax, kMin, LIMITS.components);
  const criterion = requireOneOf('criterion', o.criterion ?? 'bic', ['bic', 'aic'] as const);
  const given = o.covarianceTypes ?? [o.covarianceType ?? 'full'];
  const types = Array.from({ length: requireLength('covarianceTypes', given, COVARIANCE_TYPES.length) }, (_, i) =>
    requireOneOf(`covarianceTypes[${i}]`, guardRead(`covarianceTypes[${i}]`, () => given[i]), COVARIANCE_TYPES),
  );
  if (types.length === 0) throw new InvalidParameterError('covarianceTypes must name at least one covariance type');
  // every candidate is a fit: their number is capped, not only each k
  const candidates = (kMax - kMin + 1) * types.length;
  if (candidates > LIMITS.candidates) {
    throw new InvalidParameterError(`kMin..kMax = ${kMin}..${kMax} with ${types.length} covariance type(s) is ${candidates} fits; at most ${LIMITS.candidates}: narrow the range`);
  }
  const { kMin: _a, kMax: _b, criterion: _c, covarianceTypes: _d, ...gmOptions } = o;
  const n = x.nRows;
  const scores: CandidateScore[] = [];
  let best: { model: GaussianMixture; value: number } | undefined;
  let candidate: GaussianMixture | undefined;
  let firstError: FedmixError | undefined;
  const fitCandidates = (s: Scope) => {
    const ptr = s.matrix(x);
    for (const covarianceType of types) {
      for (let k = kMin; k <= kMax; k++) {
        const gm = (candidate = new GaussianMixture({ ...gmOptions, nComponents: k, covarianceType }));
        try {
          gm.fitResident(s, ptr, n, x.nCols);
        } catch (e) {
          // out of memory (or a trap) ends the selection: the machine's limit, not a candidate's
          if (!(e instanceof FedmixError) || e.code === 'WASM') throw e;
          firstError ??= e;
          scores.push({ nComponents: k, covarianceType, bic: NaN, aic: NaN, logLikelihood: NaN, converged: false, nIter: 0, error: e.message });
          continue;
        }
        const perRow = gm.scoreSamplesResident(s, ptr, n, x.nCols);
        let ll = 0;
        for (let i = 0; i < n; i++) ll += perRow[i]!;
        ll /= n;
        const { bic, aic } = informationCriteria(ll, n, gm.nParameters);
        scores.push({ nComponents: k, covarianceType, bic, aic, logLikelihood: ll, converged: gm.converged, nIter: gm.nIter });
        const value = criterion === 'bic' ? bic : aic;
        if (!best || value < best.value) {
          best?.model.dispose();
          best = { model: gm, value };
        } else {
          gm.dispose();
        }
      }
    }
  };
  try {
    withScope(fitCandidates);
  } catch (e) {
    // a selection cut short keeps no model: its memory may be what the caller is short of
    candidate?.dispose();
    best?.model.dispose();
    throw e;
  }
  if (!best) throw firstError ?? new InvalidParameterError('no candidate model could be fitted');
  return { best: best.model, criterion, scores };
}
