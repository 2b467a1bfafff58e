/**
 * What runs inside one worker (a Node worker thread or a browser Web Worker):
 * a lane of clients created from their specs, kept for the whole run, each
 * answering the wire bytes it is sent. The same handler serves both kinds of
 * worker; workers.ts and web-workers.ts only differ in how tasks reach it.
 */
import { FedmixError } from '../../errors.js';
import { init, type Backend, type InitOptions, type ModuleName } from '../../wasm/loader.js';
import { FEATURES } from '../../wasm/modules.js';
import { makeClient, type ClientSpec, type MatrixData } from '../registry/registry.js';
import { Matrix } from '../../data/matrix.js';
import { GaussianMixture, type CovarianceType, type GaussianMixtureOptions } from '../../models/gaussian-mixture.js';
import { ClientHost } from '../runtime/client-host.js';
import { ClientBudget, type LedgerStore } from '../runtime/client-budget.js';
import type { LaneBudget } from './lanes.js';

/** The build the main thread runs, compiled: a worker runs the same one, whether it came from a file, the user's bytes or fedmix/inline. */
export interface LaneBuild {
  backend: Backend;
  /** the core module and the feature modules it had loaded */
  modules: { [M in ModuleName]?: WebAssembly.Module };
}

export type LaneTask =
  | { op: 'create'; specs: ClientSpec[]; maxMessageBytes?: number; build?: LaneBuild; modules?: string[]; budgets?: Record<string, LaneBudget> }
  | { op: 'handle'; items: { id: string; bytes: Uint8Array }[] }
  | { op: 'dispose' }
  | { op: 'fit'; X: MatrixData; options: GaussianMixtureOptions; build?: LaneBuild };

/**
 * A GaussianMixture fitted in a worker, as it crosses back: its parameters and
 * the training rows' labels and log densities, each in a typed array of its
 * own so that postMessage can transfer it instead of copying.
 */
export interface GaussianMixtureFitData {
  covarianceType: CovarianceType;
  nComponents: number;
  nFeatures: number;
  weights: Float64Array;
  means: Float64Array;
  covariances: Float64Array;
  precisionsCholesky: Float64Array;
  converged: boolean;
  nIter: number;
  lowerBound: number;
  /** the most likely component of each training row (predict) */
  labels: Int32Array;
  /** the log density of each training row (scoreSamples) */
  scoreSamples: Float64Array;
}

/** An error as it crosses back from a worker: the FedmixError code, or undefined for a bug. */
export interface LaneError {
  code?: string;
  message: string;
}

export type LaneReply = { id: string; bytes?: Uint8Array; error?: LaneError };

export type LaneResult = { ok: true; replies?: LaneReply[]; fit?: GaussianMixtureFitData } | { ok: false; error: LaneError };

/** The buffers a result can give away when it is posted (a fit's arrays: made for the reply, referenced nowhere else). */
export function laneTransferables(result: LaneResult): ArrayBuffer[] {
  if (!result.ok || !result.fit) return [];
  const f = result.fit;
  return [f.weights, f.means, f.covariances, f.precisionsCholesky, f.labels, f.scoreSamples].map((a) => a.buffer as ArrayBuffer);
}

/** Fits one GaussianMixture; every array of the answer is a fresh copy, so it can be transferred. */
function fitGaussianMixture(X: MatrixData, options: GaussianMixtureOptions): GaussianMixtureFitData {
  const m = new Matrix(X.data, X.nRows, X.nCols);
  const gm = new GaussianMixture(options);
  try {
    gm.fit(m);
    return {
      covarianceType: gm.covarianceType,
      nComponents: gm.nComponents,
      nFeatures: m.nCols,
      weights: Float64Array.from(gm.weights),
      means: Float64Array.from(gm.means),
      covariances: Float64Array.from(gm.covariances),
      precisionsCholesky: Float64Array.from(gm.precisionsCholesky),
      converged: gm.converged,
      nIter: gm.nIter,
      lowerBound: gm.lowerBound,
      labels: Int32Array.from(gm.predict(m)),
      scoreSamples: Float64Array.from(gm.scoreSamples(m)),
    };
  } finally {
    gm.dispose();
  }
}

const clients = new Map<string, { host: ClientHost; dispose(): void }>();

/** How this kind of worker keeps a client's ledger: a file in Node's threads, IndexedDB in browsers (set by the worker's entry module). */
let ledgerStore: ((ledger: string) => LedgerStore) | undefined;

/** Sets how a lane's clients keep their ledgers (worker.ts, web-worker.ts). */
export function setLedgerStore(open: (ledger: string) => LedgerStore): void {
  ledgerStore = open;
}

/** A client's budget in this worker, its ledger read now. */
async function openBudget(b: LaneBudget): Promise<ClientBudget> {
  if (!ledgerStore) throw new FedmixError('INVALID_PARAMETER', 'this worker keeps no privacy ledgers');
  return ClientBudget.open({ epsilon: b.epsilon, delta: b.delta, trustSamplingRate: b.trustSamplingRate, requireDeclaredPrivacy: b.requireDeclaredPrivacy, store: ledgerStore(b.ledger) });
}

/**
 * How the lane last loaded the core: a task that brings no build (handle,
 * dispose) asks init() for the same, which loads nothing more while the
 * instance runs and, after a trap, reloads the modules the lane was sent
 * (not every module from beside the worker).
 */
let loadedWith: InitOptions = {};

/** The algorithm modules this lane has imported (by URL): each registers its algorithms once. */
const imported = new Set<string>();

/**
 * Imports the modules that register the user's algorithms (registerAlgorithm
 * through the package they import), in order, each once per lane.
 */
async function importAlgorithmModules(urls: readonly string[]): Promise<void> {
  for (const url of urls) {
    if (imported.has(url)) continue;
    try {
      await import(/* webpackIgnore: true */ /* @vite-ignore */ url);
    } catch (e) {
      throw new FedmixError('INVALID_PARAMETER', `the algorithm module ${url} could not be imported: ${e instanceof Error ? e.message : String(e)}`);
    }
    imported.add(url);
  }
}

function laneError(e: unknown): LaneError {
  return e instanceof FedmixError ? { code: e.code, message: e.message } : { message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}

/** Runs one task of the lane. Never throws: errors come back as values. */
export async function runLaneTask(task: LaneTask): Promise<LaneResult> {
  try {
    if (task.op === 'create') await importAlgorithmModules(task.modules ?? []);
    if (task.op === 'create' || task.op === 'fit') {
      // without a build from the main thread (it had none loaded), the worker loads its own from beside its module
      const build = task.build;
      loadedWith = build
        ? { backend: build.backend, features: FEATURES.filter((f) => build.modules[f] !== undefined), wasm: { [build.backend]: build.modules } }
        : {};
    }
    await init(loadedWith);
    switch (task.op) {
      case 'create': {
        // one reply per spec: a client that cannot be made (bad data or options) says why, the others go on
        const replies: LaneReply[] = [];
        for (const spec of task.specs) {
          try {
            if (clients.has(spec.id)) throw new FedmixError('INVALID_PARAMETER', `client ${spec.id} already exists in this worker`);
            const wanted = task.budgets?.[spec.id];
            const budget = wanted === undefined ? undefined : await openBudget(wanted);
            const role = makeClient(spec);
            clients.set(spec.id, { host: new ClientHost(role, { maxMessageBytes: task.maxMessageBytes, ...(budget ? { budget } : {}) }), dispose: () => role.dispose() });
            replies.push({ id: spec.id });
          } catch (e) {
            replies.push({ id: spec.id, error: laneError(e) });
          }
        }
        return { ok: true, replies };
      }
      case 'handle': {
        const replies: LaneReply[] = [];
        for (const { id, bytes } of task.items) {
          const c = clients.get(id);
          if (!c) {
            replies.push({ id, error: { code: 'FEDERATION', message: `client ${id} is not in this worker (it may have restarted)` } });
            continue;
          }
          try {
            replies.push({ id, bytes: await c.host.handle(bytes) });
          } catch (e) {
            replies.push({ id, error: laneError(e) });
          }
        }
        return { ok: true, replies };
      }
      case 'fit':
        return { ok: true, fit: fitGaussianMixture(task.X, task.options) };
      case 'dispose':
        for (const c of clients.values()) c.dispose();
        clients.clear();
        return { ok: true };
    }
  } catch (e) {
    return { ok: false, error: laneError(e) };
  }
}
