/**
 * A FedGenGMM client: fits its own Gaussian mixture on its own rows, choosing
 * the number of components by BIC over its own range and covariance type
 * (clients may differ), and uploads the parameters with its row count, once.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { formatValue, inContext, InvalidParameterError, NotFittedError } from '../../errors.js';
import type { GaussianMixture } from '../../models/gaussian-mixture.js';
import { selectGaussianMixture, selectGaussianMixtureOnThreads, type SelectOptions } from '../../models/select.js';
import { gmmParams, receiveGmmParams } from '../gmm-params.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import { FEDGENGMM_PROTOCOL, GLOBAL_MODEL, LOCAL_MODEL, TRAIN, type LocalModelPayload } from './messages.js';
import { checkClientOptions, DEFAULT_CLIENT_K_RANGE, type FedGenGMMClientOptions, type ResolvedFedGenGMMClientOptions } from './options.js';

export { DEFAULT_CLIENT_K_RANGE, type FedGenGMMClientOptions } from './options.js';

export class FedGenGMMClient implements ClientRole {
  readonly id: string;
  readonly protocol = FEDGENGMM_PROTOCOL;
  private readonly data: Matrix;
  private readonly options: ResolvedFedGenGMMClientOptions;
  private local: GaussianMixture | undefined;
  private global: GaussianMixture | undefined;

  /** Options checked here (checkClientOptions), unless they are what it returned. */
  constructor(id: string, data: MatrixLike, options: FedGenGMMClientOptions = {}) {
    this.id = requireClientId(id);
    this.data = Matrix.from(data);
    this.options = checkClientOptions(options);
  }

  /** The local K range BIC chooses in: [kMin, kMax] as given, or DEFAULT_CLIENT_K_RANGE within the client's rows. */
  get kRange(): [number, number] {
    const kMin = this.options.kMin;
    return [kMin, this.options.kMax ?? Math.max(kMin, Math.min(DEFAULT_CLIENT_K_RANGE[1], this.data.nRows))];
  }

  /** Fits the local model (BIC over kRange) on the calling thread. */
  train(): GaussianMixture {
    if (this.onThreads) {
      throw new InvalidParameterError(`train() runs on the calling thread alone; threads: ${formatValue(this.options.threads)} needs worker threads, which answer asynchronously: use await trainAsync()`);
    }
    return this.keep(selectGaussianMixture(this.data, this.selection()).best);
  }

  /** Fits the local model (BIC over kRange) on the option `threads` (one: train()). */
  async trainAsync(): Promise<GaussianMixture> {
    return this.keep((await selectGaussianMixtureOnThreads(this.data, this.selection(), this.options.threads ?? 1)).best);
  }

  private get onThreads(): boolean {
    return this.options.threads !== undefined && this.options.threads !== 1;
  }

  private selection(): SelectOptions {
    const o = this.options;
    const [kMin, kMax] = this.kRange;
    return { kMin, kMax, covarianceType: o.covarianceType, criterion: o.criterion, nInit: o.nInit, tol: o.tol, maxIter: o.maxIter, regCovar: o.regCovar, seed: o.seed, precision: o.precision };
  }

  private keep(best: GaussianMixture): GaussianMixture {
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

  /** The global model as GaussianMixture.toJSON() gives it (what `fedmix client --out` saves), once the server sent it. */
  savedGlobalModel(): unknown {
    return this.global?.toJSON();
  }

  get nSamples(): number {
    return this.data.nRows;
  }

  /** The upload: the local parameters and |D_c|. Nothing else leaves the client. */
  upload(): LocalModelPayload {
    return { model: gmmParams(this.model), nSamples: this.data.nRows } as LocalModelPayload;
  }

  respond(request: Message): Message | undefined | Promise<Message | undefined> {
    const m = readRequest(this.protocol, request);
    if (m.kind === TRAIN.kind && this.onThreads) {
      return this.trainAsync().then(
        () => LOCAL_MODEL.create(this.id, m.round, this.upload()),
        (e: unknown) => {
          throw inContext(e, 'local training failed');
        },
      );
    }
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
