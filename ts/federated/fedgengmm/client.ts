/**
 * A FedGenGMM client: fits its own Gaussian mixture on its own rows, choosing
 * the number of components by BIC over its own range and covariance type
 * (clients may differ), and uploads the parameters with its row count, once.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { NotFittedError } from '../../errors.js';
import type { CovarianceType, GaussianMixture } from '../../models/gaussian-mixture.js';
import { selectGaussianMixture } from '../../models/select.js';
import { requireInteger } from '../../validate.js';
import { gmmParams } from '../gmm-params.js';
import { message } from '../message.js';
import { LOCAL_MODEL, type LocalModelMessage } from './messages.js';

export interface FedGenGMMClientOptions {
  /** smallest number of components tried (default 1) */
  kMin?: number;
  /** largest number tried (default kMin) */
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

export class FedGenGMMClient {
  readonly id: string;
  private readonly data: Matrix;
  private readonly options: FedGenGMMClientOptions;
  private local: GaussianMixture | undefined;

  constructor(id: string, data: MatrixLike, options: FedGenGMMClientOptions = {}) {
    this.id = id;
    this.data = Matrix.from(data);
    this.options = options;
  }

  /** Fits the local model (BIC over [kMin, kMax]). */
  train(): GaussianMixture {
    const o = this.options;
    const kMin = requireInteger('kMin', o.kMin ?? 1, 1);
    const kMax = requireInteger('kMax', o.kMax ?? kMin, kMin);
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

  get nSamples(): number {
    return this.data.nRows;
  }

  /** The upload: the local parameters and |D_c|. Nothing else leaves the client. */
  upload(): LocalModelMessage {
    return message(LOCAL_MODEL, this.id, 0, { model: gmmParams(this.model), nSamples: this.data.nRows });
  }

  dispose(): void {
    this.local?.dispose();
    this.local = undefined;
  }
}
