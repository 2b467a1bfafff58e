/**
 * Model selection over the number of components by BIC or AIC, as a user would
 * loop over GaussianMixture in scikit-learn, but with the data copied into WASM
 * memory once for every candidate.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { FedmixError, formatValue, InvalidParameterError } from '../errors.js';
import { Scope, withScope } from '../wasm/memory.js';
import { runFits, runFitsAsync, type Threads } from '../parallel/threads.js';
import * as v from 'valibot';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';
import { guardRead, LIMITS, requireInteger, requireLength, requireOneOf } from '../validate.js';
import { COVARIANCE_TYPES, GaussianMixture, gaussianMixtureOptions, informationCriteria, requireSingleThreadPrecision, trustedGaussianMixtureOptions, type CovarianceType, type GaussianMixtureOptions } from './gaussian-mixture.js';

export interface SelectOptions extends Omit<GaussianMixtureOptions, 'nComponents' | 'weightsInit' | 'meansInit' | 'precisionsInit' | 'warmStart' | 'threads'> {
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

/** The covariance types to try, read under guard: at most the four there are, each one of them. */
function readCovarianceTypes(given: unknown): CovarianceType[] {
  return Array.from({ length: requireLength('covarianceTypes', given, COVARIANCE_TYPES.length) }, (_, i) =>
    requireOneOf(`covarianceTypes[${i}]`, guardRead(`covarianceTypes[${i}]`, () => (given as ArrayLike<unknown>)[i]), COVARIANCE_TYPES),
  );
}

const gm = gaussianMixtureOptions.entries;

/**
 * selectGaussianMixture's options: the candidates' EM settings are
 * GaussianMixture's, checked once here (each candidate takes them resolved).
 * Resolved, `types` are the covariance types tried.
 */
export const selectOptions = defineOptions<SelectOptions>()(
  {
    kMin: atoms.optional(atoms.nComponents(), 1),
    kMax: atoms.nComponents(),
    criterion: atoms.optional(atoms.criterion(), 'bic'),
    covarianceTypes: atoms.optional(v.pipe(v.unknown(), v.transform(readCovarianceTypes))),
    covarianceType: gm.covarianceType,
    tol: gm.tol,
    regCovar: gm.regCovar,
    maxIter: gm.maxIter,
    nInit: gm.nInit,
    initParams: gm.initParams,
    seed: gm.seed,
    precision: gm.precision,
  },
  (o) => {
    requireInteger('kMax', o.kMax, o.kMin, LIMITS.components);
    const types = o.covarianceTypes ?? [o.covarianceType];
    if (types.length === 0) throw new InvalidParameterError('covarianceTypes must name at least one covariance type');
    // every candidate is a fit: their number is capped, not only each k
    const candidates = (o.kMax - o.kMin + 1) * types.length;
    if (candidates > LIMITS.candidates) {
      throw new InvalidParameterError(`kMin..kMax = ${o.kMin}..${o.kMax} with ${types.length} covariance type(s) is ${candidates} fits; at most ${LIMITS.candidates}: narrow the range`);
    }
    return { ...o, types };
  },
);

export function selectGaussianMixture(X: MatrixLike, options: SelectOptions): Selection {
  return selectOnCallingThread(Matrix.from(X), readSelectOptions(options));
}

function selectOnCallingThread(x: Matrix, o: ReturnType<typeof selectOptions.check>): Selection {
  return withScope((s) => {
    const ptr = s.matrix(x);
    return runFits(selection(s, ptr, x, o), (gm) => gm.fitResident(s, ptr, x.nRows, x.nCols));
  });
}

/**
 * selectGaussianMixture with every candidate's EM over `threads` threads
 * (GaussianMixture's fitAsync), the threads started once for all: what a
 * federated client's local fit runs on threads. One thread is
 * selectGaussianMixture itself.
 * @internal
 */
export async function selectGaussianMixtureOnThreads(X: MatrixLike, options: SelectOptions, threads: Threads): Promise<Selection> {
  const x = Matrix.from(X);
  const o = readSelectOptions(options);
  if (threads === 1) return selectOnCallingThread(x, o);
  requireSingleThreadPrecision({ precision: o.precision, threads });
  const { threadsOf, withRowShards } = await import('../parallel/row-shards.js');
  const count = threadsOf(x, threads);
  if (count === 1) return selectOnCallingThread(x, o);
  return withRowShards(x, count, async (shards) => {
    const s = new Scope();
    try {
      return await runFitsAsync(selection(s, shards.ptr, x, o), (gm) => gm.fitOnShards(shards));
    } finally {
      s.free();
    }
  });
}

function readSelectOptions(options: SelectOptions): ReturnType<typeof selectOptions.check> {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be an object with kMax, got ${formatValue(options)}`);
  return selectOptions.check(options);
}

/**
 * The selection over the candidates: yields each for the caller to fit on the
 * n rows at `ptr` (x's, in WASM memory), then scores it there. A selection
 * cut short keeps no model: its memory may be what the caller is short of.
 */
function* selection(s: Scope, ptr: number, x: Matrix, o: ReturnType<typeof selectOptions.check>): Generator<GaussianMixture, Selection, void> {
  const { kMin, kMax, criterion, types } = o;
  const { tol, regCovar, maxIter, nInit, initParams, seed, precision } = o;
  const n = x.nRows;
  const scores: CandidateScore[] = [];
  let best: { model: GaussianMixture; value: number } | undefined;
  let candidate: GaussianMixture | undefined;
  let firstError: FedmixError | undefined;
  let finished = false;
  try {
    for (const covarianceType of types) {
      for (let k = kMin; k <= kMax; k++) {
        const gm = (candidate = new GaussianMixture(trustedGaussianMixtureOptions({ tol, regCovar, maxIter, nInit, initParams, seed, precision, nComponents: k, covarianceType })));
        try {
          yield gm;
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
    finished = true;
  } finally {
    if (!finished) {
      candidate?.dispose();
      best?.model.dispose();
    }
  }
  if (!best) throw firstError ?? new InvalidParameterError('no candidate model could be fitted');
  return { best: best.model, criterion, scores };
}
