/**
 * Off the main thread in browsers: one module Web Worker running the
 * package's own worker entry (web-worker.js, the lane module of
 * WebWorkerTransport), which fits GaussianMixtures and hosts federated
 * clients. Results come back in transferred typed arrays, so a page stays
 * responsive while the core works and pays no copy for the answer.
 */
import {
  FedmixError,
  FederationError,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  NotFittedError,
  NumericalError,
  PrivacyBudgetError,
  WasmError,
  SecureAggregationError,
  type FedmixErrorCode,
  ArrowNotLoadedError,
} from '../../errors.js';
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { GaussianMixture, type GaussianMixtureJSON, type GaussianMixtureOptions } from '../../models/gaussian-mixture.js';
import { readOptions } from '../../validate.js';
import { runningBuild } from '../../wasm/loader.js';
import type { ClientSpec } from '../registry/registry.js';
import type { GaussianMixtureFitData, LaneError, LaneTask } from './lane.js';
import type { LaneOptions } from './lanes.js';
import { LANE_KEYS, readSpecs } from './lanes.js';
import { startLane, WebWorkerTransport, type Lane } from './web-workers.js';
import { keepClassName } from '../../class-name.js';

export interface FedmixWorkerOptions {
  /** the worker module (default: web-worker.js next to this bundle) */
  workerUrl?: string | URL;
}

/** A GaussianMixture fitted in a worker: its parameters and the training rows' labels and log densities. */
export interface GaussianMixtureFit extends GaussianMixtureFitData {
  /** The saved form of the model: `GaussianMixture.fromJSON(fit.toJSON())` rebuilds it where the core is loaded. */
  toJSON(): GaussianMixtureJSON;
}

const ERRORS: Record<FedmixErrorCode, new (message: string) => FedmixError> = {
  INVALID_DATA: InvalidDataError,
  INVALID_PARAMETER: InvalidParameterError,
  INVALID_MESSAGE: InvalidMessageError,
  FEDERATION: FederationError,
  NUMERICAL: NumericalError,
  NOT_FITTED: NotFittedError,
  PRIVACY_BUDGET: PrivacyBudgetError,
  WASM: WasmError,
  SECURE_AGGREGATION: SecureAggregationError,
  ARROW_NOT_LOADED: ArrowNotLoadedError,
};

/** A worker's error as the class it had there (a bug, with no code, as a WasmError naming it). */
function rethrown(e: LaneError): FedmixError {
  const C = e.code === undefined ? undefined : ERRORS[e.code as FedmixErrorCode];
  return C ? new C(e.message) : new WasmError(`the worker failed: ${e.message}`);
}

export class FedmixWorker {
  static {
    keepClassName(this, 'FedmixWorker');
  }

  private closed = false;

  private constructor(private readonly lane: Lane) {}

  /**
   * Starts the worker. It runs the build the main thread has loaded (sent
   * with each task) or, when the main thread never called init(), loads its
   * own .wasm from beside its module.
   */
  static start(options: FedmixWorkerOptions = {}): Promise<FedmixWorker> {
    try {
      const o = readOptions(options, ['workerUrl']);
      return Promise.resolve(new FedmixWorker(startLane(o.workerUrl)));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private async run(task: LaneTask): Promise<GaussianMixtureFitData | undefined> {
    if (this.closed) throw new InvalidParameterError('this FedmixWorker is closed; start a new one');
    const r = await this.lane.run(task);
    if (!r.ok) throw rethrown(r.error);
    return r.fit;
  }

  /**
   * Fits a GaussianMixture in the worker (`X` and `options` as for
   * `new GaussianMixture(options).fit(X)`, checked here first); the same
   * numbers as a fit on the main thread.
   */
  async fitGaussianMixture(X: MatrixLike, options: GaussianMixtureOptions = {}): Promise<GaussianMixtureFit> {
    const resolved = new GaussianMixture(options).options;
    const m = Matrix.from(X);
    const fit = await this.run({ op: 'fit', X: { data: m.data, nRows: m.nRows, nCols: m.nCols }, options: resolved, build: runningBuild() });
    if (!fit) throw new WasmError('the worker answered a fit without its result');
    const { weightsInit: _w, meansInit: _m, precisionsInit: _p, ...saved } = resolved;
    return {
      ...fit,
      toJSON: (): GaussianMixtureJSON => ({
        format: 'fedmix.GaussianMixture',
        version: 1,
        covarianceType: fit.covarianceType,
        nComponents: fit.nComponents,
        nFeatures: fit.nFeatures,
        weights: Array.from(fit.weights),
        means: Array.from(fit.means),
        covariances: Array.from(fit.covariances),
        precisionsCholesky: Array.from(fit.precisionsCholesky),
        converged: fit.converged,
        nIter: fit.nIter,
        lowerBound: Number.isFinite(fit.lowerBound) ? fit.lowerBound : null,
        options: saved,
      }),
    };
  }

  /**
   * Federated clients (the specs of WebWorkerTransport.start) created in this
   * worker, as a transport for runFederation. Its close() frees the clients
   * and leaves the worker running; one set of clients at a time.
   */
  async clients(specs: readonly ClientSpec[], options: LaneOptions = {}): Promise<WebWorkerTransport> {
    if (this.closed) throw new InvalidParameterError('this FedmixWorker is closed; start a new one');
    const o = readOptions(options, LANE_KEYS);
    return WebWorkerTransport.onLanes([this.lane], readSpecs(specs), o);
  }

  /** Stops the worker; later calls are refused. */
  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.lane.terminate();
    }
    return Promise.resolve();
  }
}
