/**
 * A FedGenGMM client: fits its own Gaussian mixture on its own rows, choosing
 * the number of components by BIC over its own range and covariance type
 * (clients may differ), and uploads the parameters with its row count, once.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { inContext, InvalidParameterError, NotFittedError } from '../../errors.js';
import { COVARIANCE_TYPES, type CovarianceType, type GaussianMixture } from '../../models/gaussian-mixture.js';
import { selectGaussianMixture } from '../../models/select.js';
import { optionKeys, readOptions, requireInteger, requireNumber, requireOneOf } from '../../validate.js';
import { gmmParams, receiveGmmParams } from '../gmm-params.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import { FEDGENGMM_PROTOCOL, GLOBAL_MODEL, LOCAL_MODEL, TRAIN, type LocalModelPayload } from './messages.js';
import { LIMITS } from '../../validate.js';

/**
 * The local K range when none is given: BIC over 1..10 (Algorithm 4.1's
 * TrainGMM), kMax capped at the client's rows (a K above them cannot be fitted).
 */
export const DEFAULT_CLIENT_K_RANGE: readonly [number, number] = [1, 10];

export interface FedGenGMMClientOptions {
  /** smallest number of components tried (default 1) */
  kMin?: number;
  /**
   * largest number tried (default: the larger of kMin and 10, but at most the
   * client's rows when that is more than kMin); kMin = kMax fixes K
   */
  kMax?: number;
  /** default 'diag', as the paper's experiments */
  covarianceType?: CovarianceType;
  criterion?: 'bic' | 'aic';
  nInit?: number;
  tol?: number;
  maxIter?: number;
  regCovar?: number;
  seed?: number;
}

/** Every option of FedGenGMMClientOptions, for readOptions (the compiler checks it is complete). */
export const FEDGENGMM_CLIENT_KEYS = optionKeys<FedGenGMMClientOptions>()({ kMin: true, kMax: true, covarianceType: true, criterion: true, nInit: true, tol: true, maxIter: true, regCovar: true, seed: true });

/**
 * The local fit's settings, checked (shared with the server's global fit):
 * strict over `keys` (the server's are more), read under `name`.
 */
export function checkFitOptions(options: FedGenGMMClientOptions, keys: readonly string[] = FEDGENGMM_CLIENT_KEYS, name = 'options'): FedGenGMMClientOptions {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`${name} must be an object`);
  const o = readOptions(options, keys as (keyof FedGenGMMClientOptions)[], name) as FedGenGMMClientOptions;
  const kMin = requireInteger('kMin', o.kMin ?? 1, 1, LIMITS.count);
  if (o.kMax !== undefined) requireInteger('kMax', o.kMax, kMin, LIMITS.count);
  if (o.covarianceType !== undefined) requireOneOf('covarianceType', o.covarianceType, COVARIANCE_TYPES);
  if (o.criterion !== undefined) requireOneOf('criterion', o.criterion, ['bic', 'aic'] as const);
  if (o.nInit !== undefined) requireInteger('nInit', o.nInit, 1, LIMITS.restarts);
  if (o.tol !== undefined) requireNumber('tol', o.tol, 0);
  if (o.maxIter !== undefined) requireInteger('maxIter', o.maxIter, 1, LIMITS.maxIter);
  if (o.regCovar !== undefined) requireNumber('regCovar', o.regCovar, 0);
  if (o.seed !== undefined) requireInteger('seed', o.seed, 0);
  return { ...o };
}

export class FedGenGMMClient implements ClientRole {
  readonly id: string;
  readonly protocol = FEDGENGMM_PROTOCOL;
  private readonly data: Matrix;
  private readonly options: FedGenGMMClientOptions;
  private local: GaussianMixture | undefined;
  private global: GaussianMixture | undefined;

  constructor(id: string, data: MatrixLike, options: FedGenGMMClientOptions = {}) {
    this.id = requireClientId(id);
    this.data = Matrix.from(data);
    this.options = checkFitOptions(options);
  }

  /** The local K range BIC chooses in: [kMin, kMax] as given, or DEFAULT_CLIENT_K_RANGE within the client's rows. */
  get kRange(): [number, number] {
    const kMin = this.options.kMin ?? DEFAULT_CLIENT_K_RANGE[0];
    return [kMin, this.options.kMax ?? Math.max(kMin, Math.min(DEFAULT_CLIENT_K_RANGE[1], this.data.nRows))];
  }

  /** Fits the local model (BIC over kRange). */
  train(): GaussianMixture {
    const o = this.options;
    const [kMin, kMax] = this.kRange;
    const { best } = selectGaussianMixture(this.data, {
      kMin,
      kMax,
      covarianceType: o.covarianceType ?? 'diag',
      criterion: o.criterion ?? 'bic',
      nInit: o.nInit,
      tol: o.tol,
      maxIter: o.maxIter,
      regCovar: o.regCovar,
      seed: o.seed,
    });
    this.local?.dispose();
    this.local = best;
    return best;
  }

  /** The local model (after train()), e.g. for the local-models baseline. */
  get model(): GaussianMixture {
    if (!this.local) throw new NotFittedError(`client ${this.id} has not trained yet; call train() first`);
    return this.local;
  }

  /** Hands the local model to the caller, who disposes it; the client keeps none. */
  takeModel(): GaussianMixture {
    const m = this.model;
    this.local = undefined;
    return m;
  }

  /** The global model the server sent back, once it has. */
  get globalModel(): GaussianMixture | undefined {
    return this.global;
  }

  get nSamples(): number {
    return this.data.nRows;
  }

  /** The upload: the local parameters and |D_c|. Nothing else leaves the client. */
  upload(): LocalModelPayload {
    return { model: gmmParams(this.model), nSamples: this.data.nRows } as LocalModelPayload;
  }

  respond(request: Message): Message | undefined {
    const m = readRequest(this.protocol, request);
    if (m.kind === TRAIN.kind) {
      try {
        this.train();
      } catch (e) {
        throw inContext(e, 'local training failed');
      }
      return LOCAL_MODEL.create(this.id, m.round, this.upload());
    }
    // the global model: kept for the client's own use
    const g = receiveGmmParams(GLOBAL_MODEL.read(m).payload, 'the server', this.data.nCols);
    this.global?.dispose();
    this.global = g;
    return undefined;
  }

  dispose(): void {
    this.local?.dispose();
    this.local = undefined;
    this.global?.dispose();
    this.global = undefined;
  }
}
