/**
 * The FedGEM paper's experiments, runnable on a labelled table or on blobs:
 * clients hold random subsets of the clusters (Quantity over a range of
 * clusters per client, optionally imbalanced), each client splits its rows
 * into training and test rows (and, when phi is tuned, validation rows), and
 * FedGEM is scored per client (ARI and silhouette on its test rows, weighted by
 * their number, as the paper's personalized evaluation) against a centralized
 * Gaussian mixture given the true K, scored the same way.
 */
import { makeBlobs, type BlobOptions } from '../../data/synthetic.js';
import { Matrix } from '../../data/matrix.js';
import { StandardScaler } from '../../data/scale.js';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { describeExclusion } from '../../federated/runtime/roles.js';
import { fedGEM, type FedGEMResult, type VarianceEstimate } from '../../federated/fedgem/index.js';
import { adjustedRandScore, silhouetteScore } from '../../metrics/clustering.js';
import { GaussianMixture, type CovarianceType } from '../../models/gaussian-mixture.js';
import { quantity, type QuantityImbalance } from '../../partition/quantity.js';
import { Rng } from '../../random.js';
import { guardRead, isArray, readArray, requireInteger, requirePositive } from '../../validate.js';

/** Where each repeat's rows come from: a fixed table, or fresh blobs per repeat. */
export type ClusteringSource = { kind: 'table'; X: Matrix; labels: Int32Array; name: string } | { kind: 'blobs'; blobs: Omit<BlobOptions, 'seed'> };

export interface FedGEMExperimentConfig {
  clients: number;
  /** clusters per client, [lo, hi] */
  clustersPerClient: [number, number];
  imbalance?: QuantityImbalance;
  rounds?: number;
  localSteps?: number;
  /** a fixed phi, or candidates to tune by validation silhouette */
  phi?: number | number[];
  /** sigma^2 of the clients' isotropic components (default: estimated federatedly, see FedGEMServer's variance) */
  variance?: number;
  /** 'standard': z-score every feature with the training rows' mean and deviation (default 'none') */
  scale?: 'none' | 'standard';
  /** each client's share of rows held out for testing (default 0.2, the paper's 80/20) */
  testShare?: number;
  /** when phi is tuned: each client's share of training rows held out to score the candidates (default 0.2) */
  validationShare?: number;
  /** the centralized baseline's covariance type, or 'none' to skip it (default 'full') */
  central?: CovarianceType | 'none';
  search?: 'kdtree' | 'all-pairs';
  /** the server's separation step after the paper's merge (default true) */
  separation?: boolean;
  repeats?: number;
  seed?: number;
  onProgress?: (done: number, total: number, what: string) => void;
}

export interface ClientReport {
  client: string;
  /** the true clusters among its rows */
  clusters: number[];
  nTrain: number;
  nTest: number;
  /** its components' super-clusters */
  memberships: number[];
  ari: number;
  /** silhouette of its test rows under its predictions (null when they fall in one cluster) */
  silhouette: number | null;
  centralAri?: number;
}

export interface RunReport {
  seed: number;
  trueK: number;
  estimatedK: number;
  /** joins of the separation step, and the distance it joined below */
  separationJoins: number;
  separation?: number;
  /** components with fewer than two rows, not counted */
  uncounted: number;
  phi: number;
  phiScores?: FedGEMResult['phiScores'];
  /** the federated estimate of sigma^2 (when config.variance is not given) */
  varianceEstimate?: VarianceEstimate;
  /** ARI and silhouette over the clients, weighted by test rows */
  ari: number;
  silhouette: number;
  centralAri?: number;
  /** the centralized model's ARI on all test rows together */
  centralGlobalAri?: number;
  centralSilhouette?: number;
  rounds: number;
  bytesUp: number;
  bytesDown: number;
  seconds: number;
  serverSeconds: number;
  excluded: string[];
  overlapsPerRound: number[];
  clients: ClientReport[];
}

export interface FedGEMExperimentReport {
  config: FedGEMExperimentConfig;
  data: { source: string; rows: number; features: number; clusters: number };
  runs: RunReport[];
  summary: {
    /** runs whose estimated K equals the true K */
    kCorrect: number;
    meanAri: number;
    stdAri: number;
    meanCentralAri?: number;
    meanEstimatedK: number;
  };
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const std = (v: number[]) => {
  const m = mean(v);
  return Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, v.length - 1));
};

/** Rows of `rows` split at random: the first `share` (rounded, at least 1 when possible) and the rest. */
function splitShare(rng: Rng, rows: Int32Array, share: number): [Int32Array, Int32Array] {
  const perm = rng.permutation(rows.length);
  const held = share > 0 ? Math.min(rows.length - 1, Math.max(1, Math.round(rows.length * share))) : 0;
  const a = Int32Array.from(perm.subarray(0, held), (i) => rows[i]!).sort();
  const b = Int32Array.from(perm.subarray(held), (i) => rows[i]!).sort();
  return [a, b];
}

/** Weighted mean of the non-null values. */
function weighted(values: (number | null | undefined)[], weights: number[]): number {
  let t = 0;
  let w = 0;
  values.forEach((v, i) => {
    if (v !== null && v !== undefined) {
      t += v * weights[i]!;
      w += weights[i]!;
    }
  });
  return w > 0 ? t / w : NaN;
}

function silhouetteOrNull(X: Matrix, labels: ArrayLike<number>): number | null {
  const k = new Set(Array.from(labels)).size;
  return k >= 2 && k <= X.nRows - 1 ? silhouetteScore(X, labels) : null;
}

/**
 * The range of clusters each client holds, checked here under its own name: quantity() calls it
 * alpha, a name the experiment's caller (and `fedmix fedgem --clusters-per-client`) never gave.
 */
function clustersPerClient(value: unknown, nClusters: number): [number, number] {
  const range = isArray('clustersPerClient', value) ? readArray('clustersPerClient', value, 3) : [value, value];
  const [lo, hi] = range;
  const whole = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
  if (range.length !== 2 || !whole(lo) || !whole(hi) || lo < 1 || hi < lo || hi > nClusters) {
    throw new InvalidParameterError(`clustersPerClient (how many clusters each client holds) must be a range [lo, hi] of integers with 1 <= lo <= hi <= ${nClusters}, the data's clusters; got ${formatValue(value)}`);
  }
  return [lo, hi];
}

export function runFedGEMExperiment(source: ClusteringSource, config: FedGEMExperimentConfig): FedGEMExperimentReport {
  const repeats = requireInteger('repeats', config.repeats ?? 1, 1);
  const seed0 = requireInteger('seed', config.seed ?? 0, 0);
  const testShare = config.testShare ?? 0.2;
  const validationShare = config.validationShare ?? 0.2;
  if (!(testShare > 0 && testShare < 1)) throw new InvalidParameterError(`testShare must be in (0, 1), got ${testShare}`);
  if (!(validationShare > 0 && validationShare < 1)) throw new InvalidParameterError(`validationShare must be in (0, 1), got ${validationShare}`);
  // checked here: a bad variance would otherwise fail every client's creation, and the run with "no clients"
  if (config.variance !== undefined) requirePositive('variance', config.variance);
  const tuned = isArray('phi', config.phi) && guardRead('phi.length', () => (config.phi as readonly number[]).length > 1);
  const runs: RunReport[] = [];
  let shape = { rows: 0, features: 0, clusters: 0 };
  for (let r = 0; r < repeats; r++) {
    const seed = seed0 + 1000 * r;
    const data = source.kind === 'table' ? source : { ...makeBlobs({ ...source.blobs, seed }), name: 'blobs' };
    const nClusters = new Set(data.labels).size;
    shape = { rows: data.X.nRows, features: data.X.nCols, clusters: nClusters };
    const part = quantity(Array.from(data.labels), {
      clients: config.clients,
      alpha: clustersPerClient(config.clustersPerClient, nClusters),
      imbalance: config.imbalance ?? 'none',
      seed,
      minSize: 4,
    });
    const rng = new Rng(seed + 1);
    let split: { train: Int32Array; test: Int32Array; validation?: Int32Array }[];
    try {
      split = part.indices.map((rows) => {
        const [test, rest] = splitShare(rng, rows, testShare);
        if (!tuned) return { train: rest, test };
        const [validation, train] = splitShare(rng, rest, validationShare);
        return { train, test, validation };
      });
    } finally {
      rng.dispose();
    }
    let X = data.X;
    if (config.scale === 'standard') {
      const scaler = new StandardScaler().fit(X.selectRows(Int32Array.from(split.flatMap((s) => Array.from(s.train)))));
      X = scaler.transform(X);
    }
    const labelsOf = (rows: Int32Array) => Array.from(rows, (i) => data.labels[i]!);
    const clusterCount = (rows: Int32Array) => new Set(labelsOf(rows)).size;
    const trueK = new Set(split.flatMap((s) => labelsOf(s.train))).size;
    const t0 = performance.now();
    const result = fedGEM(
      split.map((s) => X.selectRows(s.train)),
      {
        client: split.map((s, c) => ({ nComponents: clusterCount(s.train), variance: config.variance, localSteps: config.localSteps, seed: seed + 17 * c + 3 })),
        rounds: config.rounds ?? 10,
        phi: config.phi ?? 1,
        validation: tuned ? split.map((s) => X.selectRows(s.validation!)) : undefined,
        server: { search: config.search, separation: config.separation },
      },
    );
    const seconds = (performance.now() - t0) / 1000;
    let central: GaussianMixture | undefined;
    try {
      if ((config.central ?? 'full') !== 'none') {
        const pooled = X.selectRows(Int32Array.from(split.flatMap((s) => Array.from(s.train))).sort());
        central = new GaussianMixture({ nComponents: trueK, covarianceType: config.central as CovarianceType | undefined, nInit: 3, seed: seed + 5 }).fit(pooled);
      }
      const clients: ClientReport[] = [];
      const byId = new Map(result.clients.map((c) => [c.id, c]));
      split.forEach((s, c) => {
        const client = byId.get(String(c));
        if (!client) return;
        const test = X.selectRows(s.test);
        const truth = labelsOf(s.test);
        const pred = client.predict(test);
        clients.push({
          client: client.id,
          clusters: [...new Set(labelsOf(s.train))].sort((a, b) => a - b),
          nTrain: s.train.length,
          nTest: s.test.length,
          memberships: Array.from(client.memberships ?? []),
          ari: adjustedRandScore(truth, pred),
          silhouette: silhouetteOrNull(test, pred),
          centralAri: central ? adjustedRandScore(truth, central.predict(test)) : undefined,
        });
      });
      const weights = clients.map((c) => c.nTest);
      let centralGlobalAri: number | undefined;
      let centralSilhouette: number | undefined;
      if (central) {
        const allTest = Int32Array.from(split.flatMap((s) => Array.from(s.test))).sort();
        const testX = X.selectRows(allTest);
        const pred = central.predict(testX);
        centralGlobalAri = adjustedRandScore(labelsOf(allTest), pred);
        centralSilhouette = weighted(
          split.map((s) => {
            const t = X.selectRows(s.test);
            return silhouetteOrNull(t, central!.predict(t));
          }),
          split.map((s) => s.test.length),
        );
      }
      runs.push({
        seed,
        trueK,
        estimatedK: result.estimatedK,
        separationJoins: result.separationJoins,
        separation: result.separation,
        uncounted: result.uncounted,
        phi: result.phi,
        phiScores: result.phiScores,
        varianceEstimate: result.varianceEstimate,
        ari: weighted(clients.map((c) => c.ari), weights),
        silhouette: weighted(clients.map((c) => c.silhouette), weights),
        centralAri: central ? weighted(clients.map((c) => c.centralAri), weights) : undefined,
        centralGlobalAri,
        centralSilhouette,
        rounds: result.traffic.rounds,
        bytesUp: result.traffic.bytesUp,
        bytesDown: result.traffic.bytesDown,
        seconds,
        serverSeconds: result.serverSeconds,
        excluded: result.excluded.map(describeExclusion),
        overlapsPerRound: result.history.map((h) => h.overlaps),
        clients,
      });
    } finally {
      central?.dispose();
      for (const c of result.clients) c.dispose();
    }
    config.onProgress?.(r + 1, repeats, `repeat ${r + 1}`);
  }
  const aris = runs.map((r) => r.ari);
  const centralAris = runs.map((r) => r.centralAri).filter((v): v is number => v !== undefined);
  return {
    config,
    data: { source: source.kind === 'table' ? source.name : 'blobs', ...shape },
    runs,
    summary: {
      kCorrect: runs.filter((r) => r.estimatedK === r.trueK).length,
      meanAri: mean(aris),
      stdAri: std(aris),
      meanCentralAri: centralAris.length ? mean(centralAris) : undefined,
      meanEstimatedK: mean(runs.map((r) => r.estimatedK)),
    },
  };
}
