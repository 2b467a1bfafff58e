/**
 * The FedGenGMM paper's experiment, runnable on any labelled table: split
 * (inliers for training; held-out inliers plus anomalies, or noise-perturbed
 * rows, for testing), min-max scaling and optional PCA fitted on the training
 * rows, partitioning of the training rows among clients, the methods, and
 * their scores averaged over repeats.
 */
import { encodeLabels } from '../../data/labels.js';
import { fromMatrixData, Matrix, matrixData, type MatrixLike } from '../../data/matrix.js';
import { PCA } from '../../data/pca.js';
import { MinMaxScaler } from '../../data/scale.js';
import { FederationError, formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import type { ClientSpec } from '../../federated/algorithms.js';
import { DemClient } from '../../federated/dem/client.js';
import { FedGenGMMClient, type FedGenGMMClientOptions } from '../../federated/fedgengmm/client.js';
import { DemServer } from '../../federated/dem/server.js';
import { serverSeconds } from '../../federated/fedgengmm/run.js';
import { FedGenGMMServer, type Aggregate } from '../../federated/fedgengmm/server.js';
import type { Encoding } from '../../federated/messages/codec.js';
import type { Message } from '../../federated/messages/envelope.js';
import { describeExclusion, type ClientRole, type ServerRole } from '../../federated/runtime/roles.js';
import { runFederation, runFederationSync, type FederationResult, type RoundRecord } from '../../federated/runtime/run.js';
import { InProcessTransport } from '../../federated/transport/in-process.js';
import type { Transport } from '../../federated/transport/transport.js';
import { scoreMixture } from '../../metrics/mixture.js';
import { gaussianNoiseOod } from '../../metrics/ood.js';
import { COVARIANCE_TYPES, GaussianMixture, type CovarianceType } from '../../models/gaussian-mixture.js';
import { KMeans } from '../../models/kmeans.js';
import { selectGaussianMixture } from '../../models/select.js';
import { Rng } from '../../random.js';
import { guardRead, LIMITS, optionKeys, readArray, readOptions, readRecord, requireInteger, requireNumber, requireOneOf } from '../../validate.js';
import { drive, driveAsync } from '../drive.js';
import type { LabelledData } from '../dataset.js';
import { partitionRows, type PartitionScheme } from '../partitioning.js';

export const METHODS = ['fedgengmm', 'fedgengmm-hierarchical', 'dem-separated', 'dem-subset', 'dem-kfed', 'central', 'local'] as const;
export type Method = (typeof METHODS)[number];
/** what runs when no methods are given: the paper's (FedGenGMM with its sampling server step) */
export const DEFAULT_METHODS: readonly Method[] = METHODS.filter((m) => m !== 'fedgengmm-hierarchical');

export interface ExperimentConfig {
  clients: number;
  partition: PartitionScheme;
  /** Dir(alpha) concentration, or the classes per client for quantity/shift */
  alpha?: number;
  /** shift between the artificial classes of the shift scheme */
  beta?: number;
  /** artificial classes M of the shift scheme */
  classes?: number;
  /**
   * data without class labels: the dirichlet and quantity partitions deal this
   * many k-means clusters of the training rows as classes
   */
  clusterClasses?: number;
  /** PCA components (fitted on the scaled training rows) */
  pca?: number;
  /** the global model's K; or kRange for BIC selection */
  components?: number;
  kRange?: [number, number];
  /** the clients' BIC range (default: [components, components], as the paper's K_c = K) */
  clientKRange?: [number, number];
  covarianceType?: CovarianceType;
  h?: number;
  /** 'fedgengmm-hierarchical': the virtual rows N (default: the training rows the clients hold) */
  virtualSamples?: number;
  tol?: number;
  methods?: Method[];
  repeats?: number;
  seed?: number;
  /** share of the inliers used for training when anomaly labels exist (default 0.7) */
  trainFraction?: number;
  /** variance of the Gaussian noise that makes OOD rows without anomaly labels (default 0.005) */
  oodVariance?: number;
  /**
   * share of anomalous rows in the test set: default 0.1 for noise-made OOD rows
   * (the paper's Table 2), and the dataset's own anomaly share for labelled ones
   */
  oodShare?: number;
  /** the wire whose bytes are counted (default 'binary'; EXPERIMENTS.md's tables were measured on 'json') */
  encoding?: Encoding;
  /** called after every method of every repeat */
  onProgress?: (done: number, total: number, what: string) => void;
}

export interface RunScores {
  logLikelihood: number;
  aucPr: number;
  rocAuc: number;
  rounds: number;
  bytesUp: number;
  bytesDown: number;
  seconds: number;
  /** FedGenGMM (either server step) only: the server's share of `seconds` */
  serverSeconds: number;
}

export interface MethodSummary {
  method: Method;
  runs: RunScores[];
  mean: RunScores;
  std: RunScores;
  /** clients excluded in any run, with reasons */
  excluded: string[];
  /** distributed EM: each run's curve, per EM round the average of the clients' mean log-likelihoods under the broadcast model */
  curves?: number[][];
}

export interface ExperimentReport {
  config: Omit<ExperimentConfig, 'onProgress'>;
  dataset: { rows: number; features: number; trainRows: number; testRows: number; anomalies: number };
  results: MethodSummary[];
}

interface Split {
  train: Matrix;
  trainLabels?: Int32Array;
  test: Matrix;
  anomaly: Uint8Array;
}

function take<T extends ArrayLike<number>>(a: T, idx: ArrayLike<number>): number[] {
  return Array.from(idx, (i) => a[i]!);
}

/** Train/test split, scaling, PCA and the OOD rows of one repeat. */
function prepare(data: LabelledData, c: ExperimentConfig, seed: number): Split {
  const rng = new Rng(seed);
  try {
    let trainIdx: number[];
    let testIdx: number[];
    let oodIdx: number[] = [];
    if (data.anomaly) {
      const inliers: number[] = [];
      const outliers: number[] = [];
      data.anomaly.forEach((a, i) => (a ? outliers : inliers).push(i));
      const order = take(inliers, rng.permutation(inliers.length));
      const nTrain = Math.round(order.length * (c.trainFraction ?? 0.7));
      trainIdx = order.slice(0, nTrain);
      // anomalies drawn to the requested share of the test set (default: the dataset's own)
      const share = c.oodShare ?? outliers.length / data.X.nRows;
      const testInliers = order.slice(nTrain);
      const want = Math.min(outliers.length, Math.round((share / (1 - share)) * testInliers.length));
      testIdx = [...testInliers, ...take(outliers, rng.permutation(outliers.length)).slice(0, want)];
    } else {
      // as the paper did for Covertype: thirds for training, test inliers and OOD;
      // the OOD third is subsampled to its share of the test set (10% by default)
      const order = Array.from(rng.permutation(data.X.nRows));
      const third = Math.floor(order.length / 3);
      trainIdx = order.slice(0, third);
      testIdx = order.slice(third, 2 * third);
      const share = c.oodShare ?? 0.1;
      oodIdx = order.slice(2 * third, 2 * third + Math.min(third, Math.round((share / (1 - share)) * third)));
    }
    const scaler = new MinMaxScaler().fit(data.X.selectRows(trainIdx));
    let train = scaler.transform(data.X.selectRows(trainIdx));
    let test = scaler.transform(data.X.selectRows(testIdx));
    let anomaly = Uint8Array.from(testIdx, (i) => data.anomaly?.[i] ?? 0);
    if (oodIdx.length) {
      const ood = gaussianNoiseOod(scaler.transform(data.X.selectRows(oodIdx)), { variance: c.oodVariance ?? 0.005, seed: seed + 1 });
      test = Matrix.vstack([test, ood]);
      anomaly = Uint8Array.from([...anomaly, ...new Uint8Array(ood.nRows).fill(1)]);
    }
    if (c.pca !== undefined) {
      const pca = new PCA({ nComponents: c.pca }).fit(train);
      train = pca.transform(train);
      test = pca.transform(test);
    }
    const trainLabels = data.labels ? Int32Array.from(trainIdx, (i) => data.labels![i]!) : undefined;
    return { train, trainLabels, test, anomaly };
  } finally {
    rng.dispose();
  }
}

/** Per-feature minimum and maximum. */
function columnRange(X: Matrix): [Float64Array, Float64Array] {
  const lo = new Float64Array(X.nCols);
  const hi = new Float64Array(X.nCols);
  for (let j = 0; j < X.nCols; j++) {
    let a = Infinity;
    let b = -Infinity;
    for (const v of X.column(j)) {
      if (v < a) a = v;
      if (v > b) b = v;
    }
    [lo[j], hi[j]] = [a, b];
  }
  return [lo, hi];
}

const ZERO: RunScores = { logLikelihood: 0, aucPr: 0, rocAuc: 0, rounds: 0, bytesUp: 0, bytesDown: 0, seconds: 0, serverSeconds: 0 };

function summarize(method: Method, runs: RunScores[], excluded: string[]): MethodSummary {
  const keys = Object.keys(ZERO) as (keyof RunScores)[];
  const mean = { ...ZERO };
  const std = { ...ZERO };
  for (const k of keys) {
    const v = runs.map((r) => r[k]);
    const m = v.reduce((a, b) => a + b, 0) / v.length;
    mean[k] = m;
    std[k] = v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1)) : 0;
  }
  return { method, runs, mean, std, excluded };
}

/**
 * One federation the experiment needs run (one federated method of one
 * repeat): its server, and its clients as specs, plain data that a transport
 * creates in process or in workers. What a driver answers is the run's
 * FederationResult.
 */
export interface ExperimentFederation {
  method: Method;
  /** 0-based */
  repeat: number;
  server: ServerRole;
  specs: ClientSpec[];
  encoding: Encoding;
}

/**
 * The local baseline scores every client's own model. Clients in workers keep
 * theirs, so it is taken from what the server received: each accepted upload,
 * copied before the server's aggregate uses it up.
 */
class KeepingFedGenGMMServer extends FedGenGMMServer {
  readonly uploads = new Map<string, GaussianMixture>();

  override accept(reply: Message): ReturnType<FedGenGMMServer['accept']> {
    const r = super.accept(reply);
    this.uploads.get(reply.from)?.dispose();
    this.uploads.set(reply.from, GaussianMixture.fromJSON(r.model.toJSON()));
    return r;
  }

  override dispose(): void {
    for (const m of this.uploads.values()) m.dispose();
    this.uploads.clear();
    super.dispose();
  }
}

/**
 * The experiment, written once as a generator: it yields every federation it
 * needs and is handed back each run's result, so the same steps run in
 * process and synchronously (runExperiment) or over any transport, such as
 * Web Workers in a browser (runExperimentAsync).
 */
function* experiment(data: LabelledData, c: ExperimentConfig, hooks: ExperimentHooks): Generator<ExperimentFederation, ExperimentReport, FederationResult> {
  const methods = c.methods ?? [...DEFAULT_METHODS];
  const repeats = c.repeats ?? 1;
  const seed = c.seed ?? 0;
  const cov = c.covarianceType ?? 'diag';
  const tol = c.tol ?? 1e-3;
  const encoding = c.encoding ?? 'binary';
  const clientRange = c.clientKRange ?? (c.components !== undefined ? [c.components, c.components] : c.kRange!);
  const runs = new Map<Method, RunScores[]>(methods.map((m) => [m, []]));
  const excluded = new Map<Method, string[]>(methods.map((m) => [m, []]));
  const curves = new Map<Method, number[][]>(methods.map((m) => [m, []]));
  const total = repeats * methods.length;
  let done = 0;
  let shape = { trainRows: 0, testRows: 0, anomalies: 0 };
  const fitGlobal = (X: Matrix, s: number) =>
    c.components !== undefined
      ? new GaussianMixture({ nComponents: c.components, covarianceType: cov, tol, seed: s }).fit(X)
      : selectGaussianMixture(X, { kMin: c.kRange![0], kMax: c.kRange![1], covarianceType: cov, tol, seed: s }).best;

  for (let r = 0; r < repeats; r++) {
    const s = seed + 1000 * r;
    const split = prepare(data, c, s);
    const parts = partitionRows(split.train, split.trainLabels ?? clusterLabels(split.train, c, s + 8), c, s + 2);
    const train = parts.train; // the shift scheme perturbs the training rows
    const test = parts.shiftTest ? parts.shiftTest(split.test, s + 3) : split.test;
    const clientData = parts.clients.map((idx) => matrixData(train.selectRows(idx)));
    shape = { trainRows: train.nRows, testRows: test.nRows, anomalies: split.anomaly.reduce((a, b) => a + b, 0) };
    const evalTest = { X: test, anomaly: split.anomaly };
    const score = (m: GaussianMixture) => scoreMixture(m, train, evalTest);
    const excludedBy = (method: Method, run: FederationResult) => excluded.get(method)!.push(...run.excluded.map((e) => `repeat ${r}, ${describeExclusion(e)}`));
    for (const method of methods) {
      const t0 = performance.now();
      let result: RunScores;
      if (method === 'fedgengmm' || method === 'fedgengmm-hierarchical' || method === 'local') {
        // ids '0', '1', ... as fedGenGMM names its clients; the same client seed for both server steps: the same local models reach either
        const hierarchical = method === 'fedgengmm-hierarchical';
        const specs: ClientSpec[] = clientData.map((data, i) => ({
          algorithm: 'fedgengmm',
          id: String(i),
          data,
          options: { kMin: clientRange[0], kMax: clientRange[1], covarianceType: cov, tol, seed: s + 4 },
        }));
        const server = new KeepingFedGenGMMServer({
          nComponents: c.components, kMin: c.kRange?.[0], kMax: c.kRange?.[1], covarianceType: cov, tol, h: c.h ?? 100, seed: s + 5, nFeatures: train.nCols,
          ...(hierarchical ? { serverStep: 'hierarchical' as const, virtualSamples: c.virtualSamples } : {}),
        });
        try {
          const run = (yield { method, repeat: r, server, specs, encoding }) as FederationResult<Aggregate>;
          excludedBy(method, run);
          const agg = run.model;
          try {
            if (method !== 'local') {
              const sc = score(agg.model);
              result = { ...ZERO, logLikelihood: sc.logLikelihood, aucPr: sc.aucPr!, rocAuc: sc.rocAuc!, rounds: run.traffic.rounds, bytesUp: run.traffic.bytesUp, bytesDown: run.traffic.bytesDown, serverSeconds: serverSeconds(run.history) };
            } else {
              // the paper's local baseline: every client's own model on the evaluation data, scores averaged
              const sc = agg.clients.map((id) => score(server.uploads.get(id)!));
              const avg = (f: (x: (typeof sc)[number]) => number) => sc.reduce((a, x) => a + f(x), 0) / sc.length;
              result = { ...ZERO, logLikelihood: avg((x) => x.logLikelihood), aucPr: avg((x) => x.aucPr!), rocAuc: avg((x) => x.rocAuc!) };
            }
          } finally {
            agg.model.dispose();
          }
        } finally {
          server.dispose();
        }
      } else if (method === 'central') {
        const model = fitGlobal(train, s + 6);
        const sc = score(model);
        result = { ...ZERO, logLikelihood: sc.logLikelihood, aucPr: sc.aucPr!, rocAuc: sc.rocAuc! };
        model.dispose();
      } else {
        const init = method.slice('dem-'.length) as 'separated' | 'subset' | 'kfed';
        // 'separated' spreads its centers over the known feature range (the paper
        // used the normalized [0, 1]); the shift scheme moves the rows outside it,
        // so the training rows' per-feature range is passed (one round of client
        // minima and maxima would give a server the same)
        const featureRange = init === 'separated' ? columnRange(train) : undefined;
        // ids 'client-0', 'client-1', ... as distributedEM names its clients
        const specs: ClientSpec[] = clientData.map((data, i) => ({ algorithm: 'dem', id: `client-${i}`, data }));
        // k-FED as its paper runs it (ceil(sqrt(K)) local clusters, grouped from one seed device), not the library's defaults: EXPERIMENTS.md compares the papers' methods
        const kfed = init === 'kfed' ? { kfedLocalClusters: Math.ceil(Math.sqrt(c.components!)), kfedGrouping: 'seed-device' as const } : {};
        const server = new DemServer({ nComponents: c.components!, covarianceType: cov, init, tol, seed: s + 7, featureRange, nFeatures: train.nCols, ...kfed });
        try {
          const run = (yield { method, repeat: r, server, specs, encoding }) as FederationResult<GaussianMixture>;
          excludedBy(method, run);
          curves.get(method)!.push(server.history);
          const sc = score(run.model);
          result = { ...ZERO, logLikelihood: sc.logLikelihood, aucPr: sc.aucPr!, rocAuc: sc.rocAuc!, rounds: run.traffic.rounds, bytesUp: run.traffic.bytesUp, bytesDown: run.traffic.bytesDown };
          run.model.dispose();
        } finally {
          server.dispose();
        }
      }
      result.seconds = (performance.now() - t0) / 1000;
      runs.get(method)!.push(result);
      done += 1;
      hooks.onRun?.({ method, repeat: r, scores: result, curve: method.startsWith('dem') ? curves.get(method)![r] : undefined });
      c.onProgress?.(done, total, `repeat ${r + 1}/${repeats}, ${method}`);
    }
  }
  const { onProgress: _p, ...rest } = c;
  return {
    config: rest,
    dataset: { rows: data.X.nRows, features: data.X.nCols, ...shape },
    results: methods.map((m) => {
      const summary = summarize(m, runs.get(m)!, excluded.get(m)!);
      return curves.get(m)!.length ? { ...summary, curves: curves.get(m)! } : summary;
    }),
  };
}

/**
 * Without class labels, the dirichlet and quantity partitions deal the
 * k-means clusters of the training rows when `clusterClasses` asks for them
 * (an anomaly set such as thyroid has no classes to deal).
 */
function clusterLabels(train: Matrix, c: ExperimentConfig, seed: number): Int32Array | undefined {
  if (c.clusterClasses === undefined || c.partition === 'iid' || c.partition === 'shift') return undefined;
  const km = new KMeans({ nClusters: c.clusterClasses, seed }).fit(train);
  return Int32Array.from(km.predict(train));
}

/** Every key of ExperimentConfig (the compiler checks the list is complete). */
const CONFIG_KEYS = optionKeys<ExperimentConfig>()({
  clients: true, partition: true, alpha: true, beta: true, classes: true, clusterClasses: true, pca: true, components: true, kRange: true, clientKRange: true,
  covarianceType: true, h: true, virtualSamples: true, tol: true, methods: true, repeats: true, seed: true, trainFraction: true, oodVariance: true, oodShare: true, encoding: true, onProgress: true,
});

/** The labelled data, read once and checked: finite features, one label and one 0/1 anomaly flag per row where given. */
function readLabelledData(given: LabelledData): LabelledData {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`data must be { X, featureNames, labels?, anomaly? } (see labelledFromCsv), got ${formatValue(given)}`);
  const d = readRecord(given, ['X', 'featureNames', 'labels', 'classNames', 'anomaly'], 'data');
  const X = Matrix.from(d.X as MatrixLike);
  for (let j = 0; j < X.nCols; j++) for (const v of X.column(j)) if (!Number.isFinite(v)) throw new InvalidDataError(`data.X has a non-finite value (${v}) in column ${j}`);
  const rowsOf = (name: string, a: unknown): unknown[] => {
    const list = readArray(name, a, LIMITS.partitionRows, InvalidDataError);
    if (list.length !== X.nRows) throw new InvalidDataError(`${name} has ${list.length} entries for ${X.nRows} rows`);
    return list;
  };
  const names = d.featureNames === undefined ? [] : readArray('data.featureNames', d.featureNames, LIMITS.features, InvalidDataError);
  names.forEach((n, j) => {
    if (typeof n !== 'string') throw new InvalidDataError(`data.featureNames[${j}] is ${formatValue(n)}; names are strings`);
  });
  const out: LabelledData = { X, featureNames: names as string[] };
  if (d.labels !== undefined) out.labels = encodeLabels(rowsOf('data.labels', d.labels), 'data.labels').codes;
  if (d.anomaly !== undefined) {
    out.anomaly = Uint8Array.from(rowsOf('data.anomaly', d.anomaly), (v, i) => {
      if (v !== 0 && v !== 1) throw new InvalidDataError(`data.anomaly[${i}] is ${formatValue(v)}; flags are 0 or 1`);
      return v;
    });
  }
  return out;
}

/** The config, read once (strict keys) and checked before anything runs. */
function readConfig(given: ExperimentConfig): ExperimentConfig {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`config must be an object with clients, partition and components, got ${formatValue(given)}`);
  const c = { ...(readOptions(given, CONFIG_KEYS) as ExperimentConfig) };
  const pair = (name: string, v: unknown): [number, number] | undefined => {
    if (v === undefined) return undefined;
    const a = readArray(name, v, 2);
    if (a.length !== 2) throw new InvalidParameterError(`${name} must be [min, max], got ${formatValue(v)}`);
    const lo = requireInteger(`${name}[0]`, a[0], 1, LIMITS.count);
    return [lo, requireInteger(`${name}[1]`, a[1], lo, LIMITS.count)];
  };
  const methods = c.methods === undefined ? [...DEFAULT_METHODS] : readArray('methods', c.methods, METHODS.length * 4).map((m) => m as Method);
  for (const m of methods) if (!METHODS.includes(m)) throw new InvalidParameterError(`unknown method ${formatValue(m)}; choose from ${METHODS.join(', ')}`);
  c.methods = methods;
  c.repeats = requireInteger('repeats', c.repeats ?? 1, 1, 10_000);
  requireInteger('clients', c.clients, 1, LIMITS.partitionRows);
  requireOneOf('partition', c.partition, ['iid', 'dirichlet', 'quantity', 'shift'] as const);
  for (const k of ['alpha', 'beta', 'oodVariance'] as const) if (c[k] !== undefined) requireNumber(k, c[k], 0);
  if (c.virtualSamples !== undefined) requireNumber('virtualSamples', c.virtualSamples, 1);
  for (const k of ['classes', 'clusterClasses', 'pca', 'components', 'h'] as const) if (c[k] !== undefined) requireInteger(k, c[k], 1, LIMITS.count);
  c.kRange = pair('kRange', c.kRange);
  c.clientKRange = pair('clientKRange', c.clientKRange);
  if (c.covarianceType !== undefined) requireOneOf('covarianceType', c.covarianceType, COVARIANCE_TYPES);
  if (c.tol !== undefined) requireNumber('tol', c.tol, 0);
  if (c.seed !== undefined) requireInteger('seed', c.seed, 0, 2 ** 31);
  if (c.encoding !== undefined) requireOneOf('encoding', c.encoding, ['binary', 'json'] as const);
  if (c.onProgress !== undefined && typeof c.onProgress !== 'function') throw new InvalidParameterError(`onProgress must be a function, got ${formatValue(c.onProgress)}`);
  const fraction = c.trainFraction ?? 0.7;
  if (!(typeof fraction === 'number' && fraction > 0 && fraction < 1)) throw new InvalidParameterError(`trainFraction must lie strictly between 0 and 1, got ${formatValue(fraction)}`);
  if (c.oodShare !== undefined && !(typeof c.oodShare === 'number' && c.oodShare > 0 && c.oodShare < 1)) {
    throw new InvalidParameterError(`oodShare must lie strictly between 0 and 1, got ${formatValue(c.oodShare)}`);
  }
  if (c.components === undefined && c.kRange === undefined) throw new InvalidParameterError('give components (a fixed K) or kRange');
  if (c.components === undefined && methods.some((m) => m.startsWith('dem'))) {
    throw new InvalidParameterError('distributed EM needs a fixed number of components: give components');
  }
  return c;
}

/** What the experiment reports while it runs. */
export interface ExperimentHooks {
  /** after every method of every repeat: its scores, and distributed EM's curve of the run */
  onRun?: (run: { method: Method; repeat: number; scores: RunScores; curve?: number[] }) => void;
}

/** Where the clients of the asynchronous experiment run, and what it reports on the way. */
export interface ExperimentRunOptions extends ExperimentHooks {
  /**
   * the transport of one federation's clients, made from their specs (the
   * form WebWorkerTransport.start and WorkerTransport.start take); closed
   * after the federation when it has close(). Default: in process.
   */
  clients?: (specs: ClientSpec[], options: { encoding: Encoding }) => Transport | Promise<Transport>;
  /** after every round of every federation (distributed EM's rounds carry `metrics.logLikelihood`) */
  onRound?: (round: { method: Method; repeat: number; record: RoundRecord }) => void;
}

function checkHook(name: string, f: unknown): void {
  if (f !== undefined && typeof f !== 'function') throw new InvalidParameterError(`${name} must be a function, got ${formatValue(f)}`);
}

/**
 * One federation's clients made in process from their specs (every message still encoded on the way); close() frees them.
 * The specs are the experiment's own, of two algorithms: made here rather than by makeClient, whose table of every
 * algorithm would come into every program that runs this experiment.
 */
function inProcessClients(specs: ClientSpec[], { encoding }: { encoding: Encoding }): InProcessTransport & { close(): void } {
  const roles: (ClientRole & { dispose(): void })[] = [];
  const close = () => {
    for (const r of roles) r.dispose();
  };
  try {
    for (const { algorithm, id, data, options } of specs) {
      const rows = fromMatrixData(data);
      roles.push(algorithm === 'dem' ? new DemClient(id, rows) : new FedGenGMMClient(id, rows, options as FedGenGMMClientOptions));
    }
    return Object.assign(new InProcessTransport(roles, { encoding }), { close });
  } catch (e) {
    close();
    throw e;
  }
}

/** One federation in process, synchronously. */
function runInProcess(job: ExperimentFederation): FederationResult {
  const transport = inProcessClients(job.specs, job);
  try {
    return runFederationSync(job.server, transport);
  } finally {
    transport.close();
  }
}

/** The experiment in process (synchronous): the command line's `fedmix experiment` and `fedmix demo`. */
export function runExperiment(data: LabelledData, config: ExperimentConfig, hooks: ExperimentHooks = {}): ExperimentReport {
  const h = readOptions(hooks, ['onRun']) as ExperimentHooks;
  checkHook('onRun', h.onRun);
  return drive(experiment(readLabelledData(data), readConfig(config), h), runInProcess);
}

/**
 * The same experiment with each federation's clients wherever `options.clients`
 * puts them (one Web Worker per client in the browser demo), round by round
 * through the runtime; in process by default. The numbers equal
 * runExperiment's at the same config: only `seconds` and `serverSeconds` differ.
 */
export async function runExperimentAsync(data: LabelledData, config: ExperimentConfig, options: ExperimentRunOptions = {}): Promise<ExperimentReport> {
  const o = readOptions(options, ['clients', 'onRound', 'onRun']) as ExperimentRunOptions;
  for (const k of ['clients', 'onRound', 'onRun'] as const) checkHook(k, o[k]);
  return driveAsync(experiment(readLabelledData(data), readConfig(config), o), (job) => runFederated(job, o));
}

async function runFederated(job: ExperimentFederation, o: ExperimentRunOptions): Promise<FederationResult> {
  const onRound = o.onRound && ((record: RoundRecord) => o.onRound!({ method: job.method, repeat: job.repeat, record }));
  const transport = await (o.clients ?? inProcessClients)(job.specs, { encoding: job.encoding });
  const close = guardRead('the transport', () => (transport as { close?: unknown } | null)?.close);
  try {
    if (!guardRead('the transport', () => transport !== null && typeof transport === 'object' && typeof transport.exchange === 'function' && typeof transport.available === 'function')) {
      throw new InvalidParameterError(`clients() must give a transport (with available() and exchange()), got ${formatValue(transport)}`);
    }
    // a client its worker could not create fails the run, as it does in process (makeClient throws)
    const unborn = guardRead('the transport', () => {
      const u = (transport as { unborn?: unknown }).unborn;
      return Array.isArray(u) ? u.map((x: { reason?: unknown } | null) => String(x?.reason)) : [];
    });
    if (unborn.length > 0) throw new FederationError(`${job.method}: ${unborn.length} client(s) could not be created: ${unborn.slice(0, 3).join('; ')}`);
    return await runFederation(job.server, transport, { onRound });
  } finally {
    if (typeof close === 'function') await close.call(transport);
  }
}
