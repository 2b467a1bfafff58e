/**
 * The FedGenGMM paper's experiment, runnable on any labelled table: split
 * (inliers for training; held-out inliers plus anomalies, or noise-perturbed
 * rows, for testing), min-max scaling and optional PCA fitted on the training
 * rows, partitioning of the training rows among clients, the methods, and
 * their scores averaged over repeats.
 */
import { Matrix } from '../data/matrix.js';
import { PCA } from '../data/pca.js';
import { MinMaxScaler } from '../data/scale.js';
import { InvalidParameterError } from '../errors.js';
import { distributedEM } from '../federated/dem/index.js';
import { fedGenGMM } from '../federated/fedgengmm/index.js';
import type { Encoding } from '../federated/messages/codec.js';
import { scoreMixture } from '../metrics/mixture.js';
import { gaussianNoiseOod } from '../metrics/ood.js';
import { GaussianMixture, type CovarianceType } from '../models/gaussian-mixture.js';
import { selectGaussianMixture } from '../models/select.js';
import { Rng } from '../random.js';
import { requireInteger } from '../validate.js';
import type { LabelledData } from './dataset.js';
import { partitionRows, type PartitionScheme } from './partitioning.js';

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

export function runExperiment(data: LabelledData, config: ExperimentConfig): ExperimentReport {
  const c = config;
  const methods = c.methods ?? [...DEFAULT_METHODS];
  for (const m of methods) if (!METHODS.includes(m)) throw new InvalidParameterError(`unknown method "${m}"; choose from ${METHODS.join(', ')}`);
  const repeats = requireInteger('repeats', c.repeats ?? 1, 1);
  requireInteger('clients', c.clients, 1);
  const fraction = c.trainFraction ?? 0.7;
  if (!(fraction > 0 && fraction < 1)) throw new InvalidParameterError(`trainFraction must lie strictly between 0 and 1, got ${fraction}`);
  if (c.oodShare !== undefined && !(c.oodShare > 0 && c.oodShare < 1)) {
    throw new InvalidParameterError(`oodShare must lie strictly between 0 and 1, got ${c.oodShare}`);
  }
  const seed = c.seed ?? 0;
  const cov = c.covarianceType ?? 'diag';
  const tol = c.tol ?? 1e-3;
  if (c.components === undefined && c.kRange === undefined) throw new InvalidParameterError('give components (a fixed K) or kRange');
  if (c.components === undefined && methods.some((m) => m.startsWith('dem'))) {
    throw new InvalidParameterError('distributed EM needs a fixed number of components: give components');
  }
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
    const parts = partitionRows(split.train, split.trainLabels, c, s + 2);
    const train = parts.train; // the shift scheme perturbs the training rows
    const test = parts.shiftTest ? parts.shiftTest(split.test, s + 3) : split.test;
    const clientData = parts.clients.map((idx) => train.selectRows(idx));
    shape = { trainRows: train.nRows, testRows: test.nRows, anomalies: split.anomaly.reduce((a, b) => a + b, 0) };
    const evalTest = { X: test, anomaly: split.anomaly };
    const score = (m: GaussianMixture) => scoreMixture(m, train, evalTest);
    let localModels: GaussianMixture[] = [];
    for (const method of methods) {
      const t0 = performance.now();
      let result: RunScores;
      if (method === 'fedgengmm' || method === 'fedgengmm-hierarchical' || method === 'local') {
        // the same client seed for both server steps: the same local models reach either
        const hierarchical = method === 'fedgengmm-hierarchical';
        const res = fedGenGMM(clientData, {
          client: { kMin: clientRange[0], kMax: clientRange[1], covarianceType: cov, tol, seed: s + 4 },
          server: {
            nComponents: c.components, kMin: c.kRange?.[0], kMax: c.kRange?.[1], covarianceType: cov, tol, h: c.h ?? 100, seed: s + 5,
            ...(hierarchical ? { serverStep: 'hierarchical' as const, virtualSamples: c.virtualSamples } : {}),
          },
          keepLocalModels: method === 'local',
          encoding: c.encoding,
        });
        excluded.get(method)!.push(...res.excluded.map((e) => `repeat ${r}, client ${e.client}: ${e.reason}`));
        if (method !== 'local') {
          const sc = score(res.model);
          result = { ...ZERO, logLikelihood: sc.logLikelihood, aucPr: sc.aucPr!, rocAuc: sc.rocAuc!, rounds: res.traffic.rounds, bytesUp: res.traffic.bytesUp, bytesDown: res.traffic.bytesDown, serverSeconds: res.serverSeconds };
          res.model.dispose();
        } else {
          // the paper's local baseline: every client's own model on the evaluation data, scores averaged
          res.model.dispose();
          localModels = res.localModels.map((l) => l.model);
          const sc = localModels.map(score);
          const avg = (f: (x: (typeof sc)[number]) => number) => sc.reduce((a, x) => a + f(x), 0) / sc.length;
          result = { ...ZERO, logLikelihood: avg((x) => x.logLikelihood), aucPr: avg((x) => x.aucPr!), rocAuc: avg((x) => x.rocAuc!) };
          for (const m of localModels) m.dispose();
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
        const res = distributedEM(clientData, { nComponents: c.components!, covarianceType: cov, init, tol, seed: s + 7, featureRange, encoding: c.encoding });
        excluded.get(method)!.push(...res.excluded.map((e) => `repeat ${r}, client ${e.client}: ${e.reason}`));
        curves.get(method)!.push([...res.history]);
        const sc = score(res.model);
        result = { ...ZERO, logLikelihood: sc.logLikelihood, aucPr: sc.aucPr!, rocAuc: sc.rocAuc!, rounds: res.traffic.rounds, bytesUp: res.traffic.bytesUp, bytesDown: res.traffic.bytesDown };
        res.model.dispose();
      }
      result.seconds = (performance.now() - t0) / 1000;
      runs.get(method)!.push(result);
      done += 1;
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
