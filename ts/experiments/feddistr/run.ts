/**
 * FedDistr's experiment (issue 14, items 5 and 6): data whose task classes
 * are made of base distributions (subclasses), dealt to clients at a target
 * entangled coefficient; FedDistr's one round with its global models (the
 * generative classifier the consolidated set is, and an MLPClassifier trained
 * on rows drawn from it); and the baselines training the same network for many
 * rounds on the same partition (FedAvg, FedProx, SCAFFOLD) or on the pooled
 * rows (central), with the accuracy after every round and the bytes sent so
 * far, and the rounds each needs to reach FedDistr's one-round accuracy (the
 * paper's Table 2). The report is plain JSON (no NaN: missing values are null).
 *
 * One latent space for all: the encoder (identity, a PCA or an Autoencoder)
 * is fitted on a public split that is never evaluated on; FedDistr's clients
 * encode with it as the protocol says, and the baselines' clients train on
 * their rows encoded by the same public encoder, so every method trains the
 * same MLP on the same inputs. The networks' inputs are standardized with the
 * public split's codes (a public affine map every party applies alike).
 *
 * Datasets with base distributions inside task classes: Fashion-MNIST's ten
 * classes grouped into five task classes (FASHION_MNIST_TASK_GROUPS), letter.csv's
 * 26 letters into 13 (LETTER_TASK_GROUPS), or any CSV with a subclass column
 * and a superclass column or a grouping (subclassDataFromCsv).
 */
import { cellTableOf, type CellTable, type CsvTable } from '../../data/csv.js';
import type { FashionMnist } from '../../data/datasets/fashion-mnist.js';
import { Matrix } from '../../data/matrix.js';
import { PCA } from '../../data/pca.js';
import { StandardScaler } from '../../data/scale.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { describeExclusion } from '../../federated/runtime/roles.js';
import { fedAvgSimulation, type FedAvgResult } from '../../federated/fedavg/run.js';
import type { FedDistrPrivacy } from '../../federated/feddistr/client.js';
import { encodeRows } from '../../federated/feddistr/encoder.js';
import type { Shrinkage } from '../../federated/feddistr/covariance.js';
import type { CovarianceKind } from '../../distributions/gaussian.js';
import { BaseDistributionClassifier, sampleBaseDistributions } from '../../federated/feddistr/global.js';
import { fedDistrSimulation } from '../../federated/feddistr/run.js';
import { readEncoder, type FedDistrCost } from '../../federated/feddistr/server.js';
import type { Encoding } from '../../federated/messages/codec.js';
import { Autoencoder } from '../../models/autoencoder.js';
import { MLPClassifier } from '../../models/mlp-classifier.js';
import { Network, type NetworkSpec } from '../../models/network.js';
import { runSimulation, type Simulation } from '../../federated/simulation.js';
import { entangled } from '../../partition/entangled.js';
import { Rng } from '../../random.js';
import { readGaussianNoise } from '../../privacy/gaussian-noise.js';
import { guardRead, isArray, LIMITS, optionKeys, readArray, readOptions, readRecord, requireInteger, requireNumber, requireOneOf, requirePositive, requireVector } from '../../validate.js';
import { drive, driveAsync } from '../drive.js';

/** Rows labelled with their base distribution (subclass) and their task class (superclass). */
export interface SubclassData {
  X: Matrix;
  /** each row's subclass, an index into subclassNames */
  subclasses: Int32Array;
  /** each row's task class, an index into taskNames */
  tasks: Int32Array;
  subclassNames: string[];
  taskNames: string[];
}

/**
 * Fashion-MNIST's ten classes as five task classes of two. Each pairs two
 * articles of one broad kind that look alike at 28 x 28 (the classes
 * Fashion-MNIST's own confusion matrices mix most: T-shirt/Shirt,
 * Pullover/Coat, Sandal/Sneaker), the rest by silhouette (Trouser and Dress,
 * long and narrow; Bag and Ankle boot, the two non-garment, non-shoe-like
 * leftovers). So a task class is a mixture of two related but distinct base
 * distributions, as a CIFAR-100 superclass is of its subclasses.
 */
export const FASHION_MNIST_TASK_GROUPS: readonly (readonly string[])[] = Object.freeze([
  Object.freeze(['T-shirt/top', 'Shirt']),
  Object.freeze(['Trouser', 'Dress']),
  Object.freeze(['Pullover', 'Coat']),
  Object.freeze(['Sandal', 'Sneaker']),
  Object.freeze(['Bag', 'Ankle boot']),
]);

/**
 * letter.csv's 26 letters as 13 task classes of alphabetical neighbours (A
 * and B, C and D, ...): a grouping by no property of the shapes, so each task
 * class is a mixture of two unrelated base distributions.
 */
export const LETTER_TASK_GROUPS: readonly (readonly string[])[] = Object.freeze(
  Array.from({ length: 13 }, (_, k) => Object.freeze([String.fromCharCode(65 + 2 * k), String.fromCharCode(66 + 2 * k)])),
);

/** A grouping written as text: groups separated by commas, a group's subclasses by '+' ("A+B,C+D"). */
export function parseTaskGroups(spec: string): string[][] {
  if (typeof spec !== 'string' || spec.trim() === '') throw new InvalidParameterError('a grouping is text like "A+B,C+D": groups by commas, subclasses by +');
  return spec.split(',').map((g) => {
    const members = g.split('+').map((s) => s.trim());
    if (members.some((m) => m === '')) throw new InvalidParameterError(`group "${g}" has an empty subclass name`);
    return members;
  });
}

/**
 * Rows with their subclass names grouped into task classes: by `groups`
 * (every subclass present in exactly one group; a group's name is its members
 * joined by '+') or by a superclass name per row (every subclass in one
 * superclass only).
 */
export function groupSubclasses(X: Matrix, subclassOfRow: readonly string[], how: { groups: readonly (readonly string[])[] } | { superclasses: readonly string[] }): SubclassData {
  if (!Matrix.isMatrix(X)) throw new InvalidParameterError(`X must be a Matrix, got ${formatValue(X)}`);
  const n = X.nRows;
  // names are text (numbers read as their text); anything else is a mistake, named where it is
  const names = (name: string, value: unknown, max: number, Err: typeof InvalidDataError | typeof InvalidParameterError = InvalidDataError): string[] =>
    readArray(name, value, max, Err).map((v, i) => {
      if (typeof v !== 'string' && typeof v !== 'number') throw new Err(`${name}[${i}] must be a name, got ${formatValue(v)}`);
      return String(v);
    });
  const h = readOptions(how as { groups?: unknown; superclasses?: unknown }, ['groups', 'superclasses'], 'how');
  if (isArray('how', how) || (h.groups === undefined) === (h.superclasses === undefined)) throw new InvalidParameterError(`how must be { groups } or { superclasses }, got ${formatValue(how)}`);
  const subclassOfRowNames = names('subclassOfRow (one per row)', subclassOfRow, n);
  if (subclassOfRowNames.length !== n) throw new InvalidDataError(`${n} rows but ${subclassOfRowNames.length} subclass labels`);
  const subclassNames = [...new Set(subclassOfRowNames)].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const subIndex = new Map(subclassNames.map((s, i) => [s, i]));
  const subclasses = Int32Array.from(subclassOfRowNames, (s) => subIndex.get(s)!);
  const taskOfSub = new Int32Array(subclassNames.length).fill(-1);
  let taskNames: string[];
  if (h.groups !== undefined) {
    const groups = readArray('groups', h.groups, subclassNames.length).map((g, k) => names(`groups[${k}]`, g, subclassNames.length, InvalidParameterError));
    taskNames = groups.map((g) => g.join('+'));
    groups.forEach((g, k) => {
      for (const s of g) {
        const i = subIndex.get(s);
        if (i === undefined) throw new InvalidDataError(`group ${taskNames[k]} names subclass "${s}", which no row has`);
        if (taskOfSub[i] !== -1) throw new InvalidDataError(`subclass "${s}" is in two groups`);
        taskOfSub[i] = k;
      }
    });
    const loose = subclassNames.filter((_, i) => taskOfSub[i] === -1);
    if (loose.length) throw new InvalidDataError(`subclasses ${loose.slice(0, 5).join(', ')}${loose.length > 5 ? ', …' : ''} are in no group`);
  } else {
    const sup = names('superclasses (one per row)', h.superclasses, n);
    if (sup.length !== n) throw new InvalidDataError(`${n} rows but ${sup.length} superclass labels`);
    taskNames = [...new Set(sup)].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    const taskIndex = new Map(taskNames.map((t, i) => [t, i]));
    for (let r = 0; r < n; r++) {
      const s = subclasses[r]!;
      const t = taskIndex.get(sup[r]!)!;
      if (taskOfSub[s] === -1) taskOfSub[s] = t;
      else if (taskOfSub[s] !== t) throw new InvalidDataError(`subclass "${subclassNames[s]}" appears in superclasses "${taskNames[taskOfSub[s]!]}" and "${sup[r]}"; a base distribution belongs to one task class`);
    }
  }
  if (taskNames.length < 2) throw new InvalidDataError(`there is ${taskNames.length} task class; a classifier needs at least two`);
  return { X, subclasses, tasks: Int32Array.from(subclasses, (s) => taskOfSub[s]!), subclassNames, taskNames };
}

/** Fashion-MNIST rows with their ten classes as subclasses of five task classes (or of `groups`, class names as FASHION_MNIST_CLASSES spells them). */
export function fashionMnistSubclasses(fm: FashionMnist, groups: readonly (readonly string[])[] = FASHION_MNIST_TASK_GROUPS): SubclassData {
  const { X, labels, classNames } = readRecord(fm, ['X', 'labels', 'classNames'], 'fm');
  if (!labels || !isArray('fm.classNames', classNames)) throw new InvalidParameterError(`fm must be a Fashion-MNIST split ({ X, labels, classNames }, as loadFashionMnist gives), got ${formatValue(fm)}`);
  const names = Array.from(requireVector('fm.labels', labels), (l) => {
    const name = classNames[l];
    if (typeof name !== 'string') throw new InvalidParameterError(`fm.labels holds ${formatValue(l)}, which names no class of fm.classNames`);
    return name;
  });
  return groupSubclasses(X as FashionMnist['X'], names, { groups });
}

export interface SubclassCsvOptions {
  /** the subclass (base distribution) column */
  subclass: string;
  /** the superclass (task class) column; or */
  superclass?: string;
  /** a grouping of the subclass values ("A+B,C+D" or arrays of names) */
  groups?: string | readonly (readonly string[])[];
  /** columns to leave out of the features */
  drop?: string[];
}

/** A CSV with a subclass column and a superclass column (or a grouping of the subclasses); every other column a numeric feature. */
export function subclassDataFromCsv(text: string | CsvTable, options: SubclassCsvOptions): SubclassData {
  const o = readSubclassCsvOptions(options);
  return subclassDataFromCells(cellTableOf(text), o);
}

function readSubclassCsvOptions(options: SubclassCsvOptions): SubclassCsvOptions {
  const o = readOptions(options, ['subclass', 'superclass', 'groups', 'drop']);
  if (typeof o.subclass !== 'string') throw new InvalidParameterError('name the subclass column: { subclass }');
  if ((o.superclass === undefined) === (o.groups === undefined)) throw new InvalidParameterError('give either a superclass column or groups of subclasses');
  return o as SubclassCsvOptions;
}

/** subclassDataFromCsv on a table already read (the CLI reads CSV, Arrow and Parquet files into one). */
export function subclassDataFromCells(table: CellTable, options: SubclassCsvOptions): SubclassData {
  const o = readSubclassCsvOptions(options);
  table.requireRows('the CSV');
  const exclude = [o.subclass, ...(o.superclass !== undefined ? [o.superclass] : []), ...(o.drop ?? [])];
  const { X } = table.toMatrix({ exclude });
  const sub = table.texts(table.column(o.subclass));
  if (o.superclass !== undefined) return groupSubclasses(X, sub, { superclasses: table.texts(table.column(o.superclass)) });
  return groupSubclasses(X, sub, { groups: typeof o.groups === 'string' ? parseTaskGroups(o.groups) : o.groups! });
}

export interface FedDistrExperimentData {
  /** the rows dealt to clients (test and public splits are carved from them when not given) */
  train: SubclassData;
  /** rows evaluated on */
  test?: { X: Matrix; tasks: Int32Array };
  /** public rows: the encoder and the networks' input scaling are fitted on them, nothing is evaluated on them */
  public?: Matrix;
}

export const BASELINES = ['fedavg', 'fedprox', 'scaffold', 'central'] as const;
export type Baseline = (typeof BASELINES)[number];
export const GLOBAL_MODELS = ['generative', 'mlp'] as const;
export type GlobalModel = (typeof GLOBAL_MODELS)[number];

export interface FedDistrExperimentConfig {
  clients: number;
  /** the target average entangled coefficient (0: disentangled) */
  entanglement: number;
  /** fitted on the public split: 'identity' (default), 'pca' or 'autoencoder' */
  encoder?: 'identity' | 'pca' | 'autoencoder';
  /** the PCA's components or the Autoencoder's code width (default 16) */
  latent?: number;
  /** the Autoencoder's hidden layers (default [128, latent, 128]) and epochs (default 20) */
  autoencoderLayers?: number[];
  autoencoderEpochs?: number;
  /** FedDistr's clients: base distributions per task label in kMin..kMax (default 1..3), chosen by */
  kMin?: number;
  kMax?: number;
  clustering?: 'gmm' | 'kmeans';
  criterion?: 'bic' | 'silhouette';
  covariance?: CovarianceKind;
  /** FedDistr's clients' covariance estimate: shrinkage (default 'oas') and the ridge relative to their variances (default 1e-6) */
  shrinkage?: Shrinkage;
  regCovar?: number;
  /** FedDistr's server */
  cost?: FedDistrCost;
  threshold?: number;
  merge?: 'dominant' | 'weighted';
  /** Gaussian noise on every client's means and covariances */
  privacy?: FedDistrPrivacy;
  /** FedDistr's global models (default both) */
  models?: GlobalModel[];
  /** rows drawn from the consolidated set for the MLP (default: as many as the clients hold) */
  syntheticRows?: number;
  /** the MLP of every method (default [64]) */
  hiddenLayers?: number[];
  /** epochs of the MLPs trained in one place (FedDistr's, central) (default 100, stopping early as scikit-learn's) */
  mlpEpochs?: number;
  /** default fedavg, fedprox, scaffold, central */
  baselines?: Baseline[];
  /** the FedAvg family's communication rounds (default 50), local epochs (default 1), batch size (default 32), SGD learning rate (default 0.05) */
  rounds?: number;
  localEpochs?: number;
  batchSize?: number;
  learningRate?: number;
  /** FedProx's mu (default 0.01) */
  mu?: number;
  /** shares carved from `train` when test or public rows are not given (defaults 0.2 and 0.1) */
  testFraction?: number;
  publicFraction?: number;
  repeats?: number;
  seed?: number;
  /** the wire whose bytes are counted (default 'binary') */
  encoding?: Encoding;
  /** called after every step of every repeat */
  onProgress?: (done: number, total: number, what: string) => void;
}

/** One point of a baseline's curve: after `round` rounds. */
export interface CurvePoint {
  round: number;
  accuracy: number;
  /** bytes sent so far, both ways (the training rounds') */
  bytes: number;
}

export interface BaselineRun {
  method: Baseline;
  /** after every round (central: one point, no bytes) */
  curve: CurvePoint[];
  finalAccuracy: number;
  bestAccuracy: number;
  /** the first round reaching each FedDistr global model's accuracy, null if none did */
  roundsToMatch: Partial<Record<GlobalModel, number | null>>;
  /** bytes sent by then, null if never */
  bytesToMatch: Partial<Record<GlobalModel, number | null>>;
  /** the final parameters sent back to the clients */
  resultBytes: number;
  seconds: number;
  excluded: string[];
}

export interface FedDistrRun {
  accuracy: Partial<Record<GlobalModel, number>>;
  uploaded: number;
  estimatedBaseDistributions: number;
  trueBaseDistributions: number | null;
  adjustedRandIndex: number | null;
  parallelRecall: number | null;
  parallelPrecision: number | null;
  rounds: number;
  bytesUp: number;
  bytesDown: number;
  /** of bytesDown, the DESCRIBE requests (the encoder's parameters travel in them) */
  describeBytes: number;
  bytes: number;
  seconds: number;
  excluded: string[];
}

export interface RepeatRun {
  seed: number;
  /** the average entangled coefficient the partition achieved, and its mixing share */
  coefficient: number;
  lambda: number;
  clientRows: number[];
  feddistr: FedDistrRun;
  baselines: BaselineRun[];
}

export interface MeanStd {
  mean: number | null;
  std: number | null;
}

export interface BaselineSummary {
  method: Baseline;
  finalAccuracy: MeanStd;
  /** per round, the mean over repeats */
  curve: CurvePoint[];
  /** the mean over the repeats that matched, and how many did */
  roundsToMatch: Partial<Record<GlobalModel, { mean: number | null; matched: number }>>;
}

export interface FedDistrExperimentReport {
  config: Omit<FedDistrExperimentConfig, 'onProgress'>;
  dataset: { clientRows: number; testRows: number; publicRows: number; features: number; latent: number; subclasses: number; tasks: number; taskNames: string[] };
  runs: RepeatRun[];
  summary: {
    coefficient: MeanStd;
    feddistr: { accuracy: Partial<Record<GlobalModel, MeanStd>>; bytes: MeanStd; estimatedBaseDistributions: MeanStd; adjustedRandIndex: MeanStd };
    baselines: BaselineSummary[];
  };
}

/** A number for JSON: null for NaN and infinities. */
function finite(x: number | undefined): number | null {
  return x !== undefined && Number.isFinite(x) ? x : null;
}

function meanStd(values: (number | null)[]): MeanStd {
  const v = values.filter((x): x is number => x !== null);
  if (v.length === 0) return { mean: null, std: null };
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  return { mean: m, std: v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1)) : 0 };
}

/**
 * The first point of a curve whose accuracy reaches `target`: its round and
 * bytes, or nulls when none does (the paper's Table 2 rounds).
 */
export function roundsToReach(curve: readonly CurvePoint[], target: number): { round: number | null; bytes: number | null } {
  const t = requireNumber('target', target, -Infinity);
  const points = readArray('curve', curve);
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    if (p === null || typeof p !== 'object') throw new InvalidParameterError(`curve[${i}] must be { round, accuracy, bytes }, got ${formatValue(p)}`);
    const { round, accuracy, bytes } = readRecord(p as CurvePoint, ['round', 'accuracy', 'bytes'], `curve[${i}]`);
    if (requireNumber(`curve[${i}].accuracy`, accuracy, -Infinity) >= t) {
      return { round: requireNumber(`curve[${i}].round`, round, 0), bytes: requireNumber(`curve[${i}].bytes`, bytes, 0) };
    }
  }
  return { round: null, bytes: null };
}

/** The share of right answers. */
function accuracyOf(pred: ArrayLike<number>, truth: ArrayLike<number>): number {
  let right = 0;
  for (let i = 0; i < truth.length; i++) if (pred[i] === truth[i]) right++;
  return right / truth.length;
}

/** Row-major n x d values as a Matrix. */
function fromRowMajor(Z: Float64Array, n: number, d: number): Matrix {
  const m = Matrix.zeros(n, d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) m.data[j * n + i] = Z[i * d + j]!;
  return m;
}

interface Resolved {
  clients: number;
  entanglement: number;
  encoder: 'identity' | 'pca' | 'autoencoder';
  latent: number;
  models: GlobalModel[];
  baselines: Baseline[];
  rounds: number;
  localEpochs: number;
  batchSize: number;
  learningRate: number;
  mu: number;
  hiddenLayers: number[];
  mlpEpochs: number;
  testFraction: number;
  publicFraction: number;
  repeats: number;
  seed: number;
}

function resolve(c: FedDistrExperimentConfig): Resolved {
  const models = readArray('models', c.models ?? [...GLOBAL_MODELS], LIMITS.candidates).map((m) => requireOneOf('models[]', m, GLOBAL_MODELS));
  const baselines = readArray('baselines', c.baselines ?? [...BASELINES], LIMITS.candidates).map((m) => requireOneOf('baselines[]', m, BASELINES));
  const fraction = (name: string, v: number | undefined, dflt: number) => {
    const x = requireNumber(name, v ?? dflt, 0);
    if (!(x < 1)) throw new InvalidParameterError(`${name} is ${x}; it must be below 1`);
    return x;
  };
  const entanglement = requireNumber('entanglement', c.entanglement, 0);
  if (!(entanglement <= 1)) throw new InvalidParameterError(`entanglement is ${entanglement}; an entangled coefficient lies in [0, 1]`);
  return {
    clients: requireInteger('clients', c.clients, 1),
    entanglement,
    encoder: requireOneOf('encoder', c.encoder ?? 'identity', ['identity', 'pca', 'autoencoder'] as const),
    latent: requireInteger('latent', c.latent ?? 16, 1, 1024),
    models,
    baselines,
    rounds: requireInteger('rounds', c.rounds ?? 50, 1, 100_000),
    localEpochs: requireInteger('localEpochs', c.localEpochs ?? 1, 1, 10_000),
    batchSize: requireInteger('batchSize', c.batchSize ?? 32, 1),
    learningRate: requirePositive('learningRate', c.learningRate ?? 0.05),
    mu: requireNumber('mu', c.mu ?? 0.01, 0),
    hiddenLayers: readArray('hiddenLayers', c.hiddenLayers ?? [64], LIMITS.networkLayers).map((w, i) => requireInteger(`hiddenLayers[${i}]`, w, 1)),
    mlpEpochs: requireInteger('mlpEpochs', c.mlpEpochs ?? 100, 1),
    testFraction: fraction('testFraction', c.testFraction, 0.2),
    publicFraction: fraction('publicFraction', c.publicFraction, 0.1),
    repeats: requireInteger('repeats', c.repeats ?? 1, 1, 1000),
    seed: requireInteger('seed', c.seed ?? 0, 0),
  };
}

/** The data's shapes agree: one subclass and one task class per row, codes within the names, test and public rows of the same width. */
/**
 * The experiment's data, its nested records read once (readRecord): later
 * code, which copies data.train with a spread, then meets no getter or Proxy.
 */
function readExperimentData(data: FedDistrExperimentData): FedDistrExperimentData {
  const d = readRecord(data, ['train', 'test', 'public'], 'data');
  if (!d.train) throw new InvalidParameterError('data.train is missing: the rows dealt to clients, with subclasses and tasks');
  const train = readRecord(d.train, ['X', 'subclasses', 'tasks', 'subclassNames', 'taskNames'], 'data.train') as SubclassData;
  const test = d.test === undefined ? undefined : (readRecord(d.test, ['X', 'tasks'], 'data.test') as FedDistrExperimentData['test']);
  return { train, test, public: d.public };
}

function checkSubclassData(d: FedDistrExperimentData): void {
  const t = d.train;
  if (!Matrix.isMatrix(t.X)) throw new InvalidParameterError('data.train.X must be a Matrix');
  const n = t.X.nRows;
  const codes = (name: string, a: unknown, count: number, rows: number) => {
    if (!(ArrayBuffer.isView(a) && a instanceof Int32Array) || a.length !== rows) throw new InvalidDataError(`${name} must be an Int32Array of ${rows} codes, one per row`);
    for (const v of a) if (!(v >= 0 && v < count)) throw new InvalidDataError(`${name} holds ${v}; codes run from 0 to ${count - 1}`);
  };
  if (!isArray('data.train.subclassNames', t.subclassNames) || !isArray('data.train.taskNames', t.taskNames)) throw new InvalidParameterError('data.train needs subclassNames and taskNames');
  codes('data.train.subclasses', t.subclasses, t.subclassNames.length, n);
  codes('data.train.tasks', t.tasks, t.taskNames.length, n);
  if (d.test) {
    if (!Matrix.isMatrix(d.test.X) || d.test.X.nCols !== t.X.nCols) throw new InvalidDataError(`data.test.X must be a Matrix of ${t.X.nCols} features`);
    codes('data.test.tasks', d.test.tasks, t.taskNames.length, d.test.X.nRows);
  }
  if (d.public && (!Matrix.isMatrix(d.public) || d.public.nCols !== t.X.nCols)) throw new InvalidDataError(`data.public must be a Matrix of ${t.X.nCols} features`);
}

/** The splits of one repeat: the clients' rows, the test rows and the public rows. */
function split(data: FedDistrExperimentData, r: Resolved, seed: number): { train: SubclassData; test: { X: Matrix; tasks: Int32Array }; publicX: Matrix } {
  const t = data.train;
  if (data.test && data.public) return { train: t, test: data.test, publicX: data.public };
  const rng = new Rng(seed);
  let order: Int32Array;
  try {
    order = rng.permutation(t.X.nRows);
  } finally {
    rng.dispose();
  }
  const n = t.X.nRows;
  let at = 0;
  let test = data.test;
  if (!test) {
    const m = Math.round(r.testFraction * n);
    const idx = order.subarray(at, at + m);
    at += m;
    test = { X: t.X.selectRows(idx), tasks: Int32Array.from(idx, (i) => t.tasks[i]!) };
  }
  let publicX = data.public;
  if (!publicX) {
    const m = Math.round(r.publicFraction * n);
    publicX = t.X.selectRows(order.subarray(at, at + m));
    at += m;
  }
  const rest = Int32Array.from(order.subarray(at)).sort();
  if (rest.length === 0 || test.X.nRows === 0 || publicX.nRows === 0) throw new InvalidDataError(`${n} rows leave no rows for the clients, the test or the public split`);
  const train: SubclassData = { ...t, X: t.X.selectRows(rest), subclasses: Int32Array.from(rest, (i) => t.subclasses[i]!), tasks: Int32Array.from(rest, (i) => t.tasks[i]!) };
  return { train, test, publicX };
}

type EncoderObject = 'identity' | PCA | Autoencoder;

function fitEncoder(c: FedDistrExperimentConfig, r: Resolved, publicX: Matrix, seed: number): EncoderObject {
  if (r.encoder === 'identity') return 'identity';
  if (r.encoder === 'pca') return new PCA({ nComponents: Math.min(r.latent, publicX.nRows, publicX.nCols) }).fit(publicX);
  const layers = c.autoencoderLayers ?? [128, r.latent, 128];
  const ae = new Autoencoder({ hiddenLayers: layers, epochs: requireInteger('autoencoderEpochs', c.autoencoderEpochs ?? 20, 1), batchSize: 64, seed });
  return ae.fit(publicX);
}

/**
 * FedDistr against the FedAvg family and central training on one dataset,
 * repeated; see the module's note. Every federation runs in process.
 *
 * ```ts
 * const data = { train: subclassDataFromCsv(text, { subclass: 'label', groups: LETTER_TASK_GROUPS }) };
 * const report = runFedDistrExperiment(data, { clients: 10, entanglement: 0, rounds: 100 });
 * report.summary.baselines[0].roundsToMatch.generative; // FedAvg's rounds to FedDistr's one-round accuracy
 * ```
 */
export function runFedDistrExperiment(data: FedDistrExperimentData, config: FedDistrExperimentConfig): FedDistrExperimentReport {
  return drive(experiment(data, config), runSimulation);
}

/** Runs one simulation somewhere (simulateOverMqtt: over a broker), disposes its clients, and resolves with its result. */
export type SimulationRunner = <M, R>(simulation: Simulation<M, R>) => Promise<R>;

/**
 * runFedDistrExperiment with its federations (FedDistr's round and the
 * baselines' rounds) run by `runner`: `fedmix feddistr --broker` passes
 * simulateOverMqtt, so every client is an MQTT client. The same report as in
 * process (timings aside).
 */
export async function runFedDistrExperimentWith(data: FedDistrExperimentData, config: FedDistrExperimentConfig, runner: SimulationRunner): Promise<FedDistrExperimentReport> {
  if (typeof runner !== 'function') throw new InvalidParameterError(`runner must be a function that runs a simulation, got ${formatValue(runner)}`);
  return driveAsync(experiment(data, config), runner);
}

/** Every field of FedDistrExperimentConfig, for readOptions (the compiler checks it is complete). */
const CONFIG_KEYS = optionKeys<FedDistrExperimentConfig>()({
  clients: true, entanglement: true, encoder: true, latent: true, autoencoderLayers: true, autoencoderEpochs: true, kMin: true, kMax: true, clustering: true, criterion: true,
  covariance: true, shrinkage: true, regCovar: true, cost: true, threshold: true, merge: true, privacy: true, models: true, syntheticRows: true, hiddenLayers: true, mlpEpochs: true, baselines: true, rounds: true,
  localEpochs: true, batchSize: true, learningRate: true, mu: true, testFraction: true, publicFraction: true, repeats: true, seed: true, encoding: true, onProgress: true,
});

/** A simulation the experiment needs run: yielded to its driver, which sends back its result. */
type Step = Simulation<unknown, unknown>;

function* simulate<M, R>(s: Simulation<M, R>): Generator<Step, R, unknown> {
  return (yield s as unknown as Step) as R;
}

/** The experiment, written once: it yields each federation to run and is handed its result. */
function* experiment(data: FedDistrExperimentData, config: FedDistrExperimentConfig): Generator<Step, FedDistrExperimentReport, unknown> {
  if (config === null || typeof config !== 'object') throw new InvalidParameterError('config must be an object like { clients, entanglement, rounds }');
  const c = readOptions(config, CONFIG_KEYS) as FedDistrExperimentConfig;
  if (c.privacy !== undefined) readGaussianNoise(c.privacy, 'config.privacy');
  const r = resolve(c);
  const d0 = readExperimentData(data);
  guardRead('data', () => checkSubclassData(d0));
  const T = d0.train.taskNames.length;
  const runs: RepeatRun[] = [];
  const steps = 1 + r.baselines.length;
  const total = r.repeats * steps;
  let done = 0;
  const progress = (what: string) => c.onProgress?.(++done, total, what);
  let shape = { clientRows: 0, testRows: 0, publicRows: 0, latent: 0 };
  for (let rep = 0; rep < r.repeats; rep++) {
    const s = r.seed + 1000 * rep;
    const { train, test, publicX } = split(d0, r, s);
    const encoder = fitEncoder(c, r, publicX, s + 1);
    try {
      const wire = readEncoder(encoder, encoder === 'identity' ? train.X.nCols : undefined);
      const d = wire.dimension;
      const encode = (X: Matrix) => fromRowMajor(encodeRows(X, wire, 'the', InvalidDataError), X.nRows, d);
      // the networks' inputs: codes standardized by the public split's
      const scaler = new StandardScaler().fit(encode(publicX));
      const netTest = scaler.transform(encode(test.X));
      shape = { clientRows: train.X.nRows, testRows: test.X.nRows, publicRows: publicX.nRows, latent: d };

      const p = entangled(train.subclasses, { clients: r.clients, target: r.entanglement, tasks: train.tasks, seed: s + 2 });
      const rows = p.indices;

      // FedDistr: one round, then its global models
      const t0 = performance.now();
      const fd = yield* simulate(fedDistrSimulation(
        rows.map((idx) => ({ X: train.X.selectRows(idx), labels: Int32Array.from(idx, (i) => train.tasks[i]!), subclasses: Array.from(idx, (i) => train.subclasses[i]!) })),
        {
          encoder,
          dimension: encoder === 'identity' ? train.X.nCols : undefined,
          covariance: c.covariance,
          clustering: c.clustering,
          criterion: c.criterion,
          kMin: c.kMin ?? 1,
          kMax: c.kMax ?? 3,
          shrinkage: c.shrinkage,
          regCovar: c.regCovar,
          cost: c.cost,
          threshold: c.threshold,
          merge: c.merge,
          seed: s + 3,
          privacy: c.privacy,
          encoding: c.encoding,
        },
      ));
      const accuracy: FedDistrRun['accuracy'] = {};
      if (fd.bases.length > 0) {
        if (r.models.includes('generative')) accuracy.generative = new BaseDistributionClassifier(fd.bases, { encoder, covariance: fd.covariance }).score(test.X, test.tasks);
        if (r.models.includes('mlp')) {
          const synthetic = sampleBaseDistributions(fd.bases, { n: requireInteger('syntheticRows', c.syntheticRows ?? train.X.nRows, 1), seed: s + 4, covariance: fd.covariance });
          // rows of one task label only cannot train a classifier: then no accuracy to report
          if (new Set(synthetic.labels).size >= 2) {
            const mlp = new MLPClassifier({ hiddenLayerSizes: r.hiddenLayers, maxIter: r.mlpEpochs, randomState: s + 5 });
            try {
              accuracy.mlp = mlp.fit(scaler.transform(synthetic.X), synthetic.labels).score(netTest, test.tasks);
            } finally {
              mlp.dispose();
            }
          }
        }
      }
      const fed = fd.federation;
      const describeBytes = fed.history.filter((h) => h.replies).reduce((a, h) => a + h.bytesDown, 0);
      const ev = fd.evaluation;
      const feddistr: FedDistrRun = {
        accuracy,
        uploaded: fd.uploaded,
        estimatedBaseDistributions: fd.estimatedBaseDistributions,
        trueBaseDistributions: ev ? ev.trueBaseDistributions : null,
        adjustedRandIndex: finite(ev?.adjustedRandIndex),
        parallelRecall: finite(ev?.parallelRecall),
        parallelPrecision: finite(ev?.parallelPrecision),
        rounds: fed.traffic.rounds,
        bytesUp: fed.traffic.bytesUp,
        bytesDown: fed.traffic.bytesDown,
        describeBytes,
        bytes: fed.traffic.bytesUp + fed.traffic.bytesDown,
        seconds: (performance.now() - t0) / 1000,
        excluded: fd.excluded.map(describeExclusion),
      };
      progress(`repeat ${rep + 1}/${r.repeats}, feddistr`);

      // the baselines: the same network on the same partition's rows, encoded by the same public encoder
      const netRows = scaler.transform(encode(train.X));
      const spec: NetworkSpec = { sizes: [d, ...r.hiddenLayers, T], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: s + 6 };
      const baselines: BaselineRun[] = [];
      for (const method of r.baselines) {
        const t1 = performance.now();
        baselines.push(method === 'central' ? central(netRows, train.tasks, netTest, test.tasks, r, s + 7) : yield* federated(method, rows, netRows, train.tasks, netTest, test.tasks, spec, r, c.encoding, s + 8));
        baselines[baselines.length - 1]!.seconds = (performance.now() - t1) / 1000;
        progress(`repeat ${rep + 1}/${r.repeats}, ${method}`);
      }
      for (const b of baselines) {
        for (const m of r.models) {
          const target = accuracy[m];
          if (target === undefined) continue;
          const hit = roundsToReach(b.curve, target);
          b.roundsToMatch[m] = hit.round;
          b.bytesToMatch[m] = hit.bytes;
        }
      }
      runs.push({ seed: s, coefficient: p.coefficient, lambda: p.lambda, clientRows: rows.map((x) => x.length), feddistr, baselines });
    } finally {
      if (encoder !== 'identity' && encoder instanceof Autoencoder) encoder.dispose();
    }
  }
  const { onProgress: _p, ...rest } = c;
  return {
    config: JSON.parse(JSON.stringify(rest)) as Omit<FedDistrExperimentConfig, 'onProgress'>,
    dataset: { ...shape, features: d0.train.X.nCols, subclasses: d0.train.subclassNames.length, tasks: T, taskNames: d0.train.taskNames.slice() },
    runs,
    summary: summarize(runs, r),
  };
}

/** One of the FedAvg family on the partition's rows: accuracy after every round, bytes so far. */
function* federated(
  method: Exclude<Baseline, 'central'>,
  rows: Int32Array[],
  X: Matrix,
  y: Int32Array,
  testX: Matrix,
  testY: Int32Array,
  spec: NetworkSpec,
  r: Resolved,
  encoding: Encoding | undefined,
  seed: number,
): Generator<Step, BaselineRun, unknown> {
  const net = new Network(spec);
  let res: FedAvgResult;
  try {
    const evaluate = (parameters: Float32Array): Record<string, number> => {
      net.setParameters(parameters);
      const P = net.predict(testX);
      const n = P.nRows;
      const pred = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        let best = 0;
        for (let k = 1; k < P.nCols; k++) if (P.data[k * n + i]! > P.data[best * n + i]!) best = k;
        pred[i] = best;
      }
      return { accuracy: accuracyOf(pred, testY) };
    };
    res = yield* simulate(fedAvgSimulation(
      rows.map((idx) => ({ X: X.selectRows(idx), labels: Int32Array.from(idx, (i) => y[i]!) })),
      {
        algorithm: method,
        network: spec,
        rounds: r.rounds,
        epochs: r.localEpochs,
        batchSize: r.batchSize,
        optimizer: { name: 'sgd', learningRate: r.learningRate },
        mu: method === 'fedprox' ? r.mu : undefined,
        evaluate,
        seed,
        encoding,
      },
    ));
  } finally {
    net.dispose();
  }
  const training = res.federation.history.filter((h) => h.replies);
  let bytes = 0;
  const curve: CurvePoint[] = res.history.map((h, i) => {
    bytes += training[i] ? training[i]!.bytesUp + training[i]!.bytesDown : 0;
    return { round: h.round, accuracy: h.metrics!.accuracy!, bytes };
  });
  const resultBytes = res.federation.history.filter((h) => !h.replies).reduce((a, h) => a + h.bytesDown, 0);
  const acc = curve.map((p) => p.accuracy);
  return {
    method,
    curve,
    finalAccuracy: acc[acc.length - 1] ?? NaN,
    bestAccuracy: Math.max(...acc),
    roundsToMatch: {},
    bytesToMatch: {},
    resultBytes,
    seconds: 0,
    excluded: res.excluded.map(describeExclusion),
  };
}

/** The MLP on the pooled rows (no communication): one point. */
function central(X: Matrix, y: Int32Array, testX: Matrix, testY: Int32Array, r: Resolved, seed: number): BaselineRun {
  const mlp = new MLPClassifier({ hiddenLayerSizes: r.hiddenLayers, maxIter: r.mlpEpochs, randomState: seed });
  try {
    const accuracy = mlp.fit(X, y).score(testX, testY);
    return { method: 'central', curve: [{ round: 0, accuracy, bytes: 0 }], finalAccuracy: accuracy, bestAccuracy: accuracy, roundsToMatch: {}, bytesToMatch: {}, resultBytes: 0, seconds: 0, excluded: [] };
  } finally {
    mlp.dispose();
  }
}

function summarize(runs: RepeatRun[], r: Resolved): FedDistrExperimentReport['summary'] {
  const accuracy: Partial<Record<GlobalModel, MeanStd>> = {};
  for (const m of r.models) accuracy[m] = meanStd(runs.map((x) => finite(x.feddistr.accuracy[m])));
  const baselines = r.baselines.map((method): BaselineSummary => {
    const mine = runs.map((x) => x.baselines.find((b) => b.method === method)!);
    const length = Math.min(...mine.map((b) => b.curve.length));
    const curve = Array.from({ length }, (_, i) => ({
      round: mine[0]!.curve[i]!.round,
      accuracy: mine.reduce((a, b) => a + b.curve[i]!.accuracy, 0) / mine.length,
      bytes: mine.reduce((a, b) => a + b.curve[i]!.bytes, 0) / mine.length,
    }));
    const roundsToMatch: BaselineSummary['roundsToMatch'] = {};
    for (const m of r.models) {
      const hits = mine.map((b) => b.roundsToMatch[m]).filter((x): x is number => typeof x === 'number');
      roundsToMatch[m] = { mean: hits.length ? hits.reduce((a, b) => a + b, 0) / hits.length : null, matched: hits.length };
    }
    return { method, finalAccuracy: meanStd(mine.map((b) => finite(b.finalAccuracy))), curve, roundsToMatch };
  });
  return {
    coefficient: meanStd(runs.map((x) => x.coefficient)),
    feddistr: {
      accuracy,
      bytes: meanStd(runs.map((x) => x.feddistr.bytes)),
      estimatedBaseDistributions: meanStd(runs.map((x) => x.feddistr.estimatedBaseDistributions)),
      adjustedRandIndex: meanStd(runs.map((x) => x.feddistr.adjustedRandIndex)),
    },
    baselines,
  };
}
