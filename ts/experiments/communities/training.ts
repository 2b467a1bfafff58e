/**
 * Per-community federated anomaly detection and its evaluation, as the
 * community-based federated anomaly detection paper (Nardi, Valerio,
 * Passarella) reports it: given the clients and a grouping of them (the
 * communities found by association, each client alone for the local baseline,
 * or the clients sharing an inlier class for the ideal one), one detector is
 * trained per group and every client scores its own test rows with its group's
 * detector.
 *
 *   'autoencoder'  FedAvg of an Autoencoder (d-64-32-64-d, ReLU, sigmoid
 *                  output, MSE, Adam 1e-3) among the group's clients; 10
 *                  rounds of one local epoch in batches of 32 by default, as
 *                  the paper's public code. A group of one trains the same
 *                  Autoencoder locally for rounds x epochs epochs (one Adam
 *                  run). Score: the reconstruction error.
 *   'fedgengmm'    FedGenGMM per group (a group of one: the client's own
 *                  mixture, chosen by BIC as a FedGenGMM client chooses it).
 *                  Score: the negative log-likelihood.
 *
 * Every group's model starts from the same seeded parameters, so a group of
 * one trained here is the local baseline bit for bit. The evaluation helpers
 * take plain data (groups as lists of client ids, each client's inlier class,
 * each client's AUC) and give plain objects; formatCommunityTables prints them
 * as the paper's Tables I/II, III/IV and V/VI.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { FedAvgClient } from '../../federated/fedavg/client.js';
import { FedAvgServer, type FedAvgOutcome } from '../../federated/fedavg/server.js';
import { FedGenGMMClient } from '../../federated/fedgengmm/client.js';
import { FedGenGMMServer, type Aggregate as FedGenGMMAggregate } from '../../federated/fedgengmm/server.js';
import { runPlanSync, type FederationPlan } from '../../federated/runtime/plan.js';
import type { FederationResult } from '../../federated/runtime/run.js';
import { adjustedRandScore } from '../../metrics/clustering.js';
import { rocAuc } from '../../metrics/ranking.js';
import { Autoencoder } from '../../models/autoencoder.js';
import { DEFAULT_CONTAMINATION, DEFAULT_PATIENCE, EarlyStopper, errorSeparation, heldOutSplit, resolveEarlyStopping, type EarlyStopping, type EarlyStoppingOptions } from '../../models/early-stopping.js';
import type { NetworkSpec } from '../../models/network.js';
import { selectGaussianMixture } from '../../models/select.js';
import { guardRead, LIMITS, readArray, readOptions, readRecord, requireInteger, requireLength, requireNumber, requireOneOf } from '../../validate.js';

/** The most local epochs a community's client runs per FedAvg round (early stopping may stop it sooner): the paper's public code's. */
export const DEFAULT_LOCAL_EPOCHS = 10;

/** How a community's autoencoders stop by default (see CommunityTrainingOptions.earlyStopping). */
export const DEFAULT_EARLY_STOPPING: EarlyStoppingOptions = { monitor: 'separation', contamination: DEFAULT_CONTAMINATION, patience: DEFAULT_PATIENCE };

export const COMMUNITY_DETECTORS = ['autoencoder', 'fedgengmm'] as const;
export type CommunityDetector = (typeof COMMUNITY_DETECTORS)[number];

/** One client: its training rows, and its test rows with which of them are outliers. */
export interface CommunityClient {
  id: string;
  /** training rows (unlabelled) */
  X: MatrixLike;
  test: {
    X: MatrixLike;
    /** 1 (or true) for an outlier row, 0 (or false) for an inlier; both must occur */
    outlier: ArrayLike<number | boolean>;
  };
}

export interface CommunityTrainingOptions {
  /** 'autoencoder' (default) or 'fedgengmm' */
  detector?: CommunityDetector;
  /** FedAvg rounds (default 10) */
  rounds?: number;
  /** local epochs per round (default 1) */
  epochs?: number;
  /** local batch size (default 32) */
  batchSize?: number;
  /** Adam's learning rate (default 1e-3) */
  learningRate?: number;
  /** the autoencoder's hidden widths (default [64, 32, 64]) */
  hiddenLayers?: readonly number[];
  /** FedGenGMM: the smallest and largest number of components tried by BIC, locally and globally (default 1 and 3) */
  kMin?: number;
  kMax?: number;
  /** FedGenGMM: synthetic rows per incoming component (default 100) */
  h?: number;
  /**
   * 'autoencoder': early stopping of every client's epochs, each round of a
   * federation and alone (see ts/models/early-stopping.ts). Default
   * { monitor: 'separation', contamination: 0.1, patience: 3 }: a client stops
   * once the separation of its reconstruction errors at the contamination
   * share (runCommunityExperiment: its d) has not improved for 3 epochs and
   * keeps its best epoch. { monitor: 'validation-loss', validationShare,
   * patience } stops on held-out rows instead, as the paper's public code
   * trains its local baselines; 'none' trains every epoch on all the rows.
   */
  earlyStopping?: EarlyStoppingOptions | 'none';
  /**
   * a group of one (the local baseline, or a community of one): at most this
   * many epochs in one Adam run (default rounds x epochs, the most a
   * federation's client runs; the paper's public code: 40)
   */
  localEpochs?: number;
  /** seed of the initial parameters, the shuffles and the mixtures' fits (default 0) */
  seed?: number;
}

export interface ClientScore {
  id: string;
  /** index of the client's group in `groups` */
  group: number;
  /** ROC-AUC of the client's test rows, outliers the positive class */
  auc: number;
  testRows: number;
  outliers: number;
}

export interface GroupTraining {
  members: string[];
  /** bytes up and down of the group's federation (0 for a group of one) */
  bytes: number;
  /** wall time of the training: the federation's own account (its run's seconds), or the local fit's */
  seconds: number;
  /** communication rounds (0 for a group of one) */
  rounds: number;
  /**
   * 'autoencoder': the local epochs a member ran in all, on average (a
   * federation: each round's mean over its clients, summed; a group of one:
   * its epochs), fewer than the most allowed when early stopping stopped them
   */
  epochs?: number;
  /** the autoencoder's final parameters (flat, as Autoencoder.getParameters gives them); undefined for 'fedgengmm' */
  parameters?: Float32Array;
}

export interface CommunityTrainingResult {
  detector: CommunityDetector;
  /** the groups as used, each its ids in the order given */
  groups: string[][];
  /** by client, in the order the clients were given */
  clients: ClientScore[];
  /** mean and (population) standard deviation of the clients' AUC */
  auc: { mean: number; std: number };
  /** 'autoencoder': mean and std over the clients of the local epochs each ran in all (its group's `epochs`) */
  epochs?: { mean: number; std: number };
  training: GroupTraining[];
  /** sums over the groups */
  bytes: number;
  seconds: number;
}

/** Every option of CommunityTrainingOptions, for readOptions. @internal */
export const TRAINING_OPTION_KEYS = ['detector', 'rounds', 'epochs', 'batchSize', 'learningRate', 'hiddenLayers', 'kMin', 'kMax', 'h', 'earlyStopping', 'localEpochs', 'seed'] as const;

interface ReadClient {
  id: string;
  X: Matrix;
  testX: Matrix;
  outlier: Uint8Array;
}

function readClients(given: readonly CommunityClient[]): ReadClient[] {
  const list = readArray('clients', given, LIMITS.graphNodes) as CommunityClient[];
  if (list.length === 0) throw new InvalidParameterError('clients must hold at least one client');
  const seen = new Set<string>();
  let d: number | undefined;
  return list.map((entry, i) => {
    const c = readRecord(entry, ['id', 'X', 'test'], `clients[${i}]`);
    const id = c.id;
    if (typeof id !== 'string' || id.length === 0) throw new InvalidParameterError(`clients[${i}].id must be a non-empty string, got ${formatValue(id)}`);
    if (seen.has(id)) throw new InvalidParameterError(`client id ${formatValue(id)} is given twice; ids must be unique`);
    seen.add(id);
    const X = guardRead(`clients[${i}].X`, () => Matrix.from(c.X as MatrixLike), InvalidDataError);
    if (X.nRows === 0) throw new InvalidDataError(`client ${id} has no training rows`);
    d ??= X.nCols;
    if (X.nCols !== d) throw new InvalidDataError(`client ${id} has ${X.nCols} features but clients[0] has ${d}; every client must share the dimension`);
    const test = readRecord(c.test, ['X', 'outlier'], `clients[${i}].test`);
    const testX = guardRead(`clients[${i}].test.X`, () => Matrix.from(test.X as MatrixLike), InvalidDataError);
    if (testX.nRows === 0) throw new InvalidDataError(`client ${id} has an empty test set; it needs inlier and outlier rows`);
    if (testX.nCols !== d) throw new InvalidDataError(`client ${id}'s test rows have ${testX.nCols} features but its training rows have ${d}`);
    const labels = readArray(`clients[${i}].test.outlier`, test.outlier, LIMITS.values, InvalidDataError);
    if (labels.length !== testX.nRows) throw new InvalidDataError(`client ${id} has ${testX.nRows} test rows but ${labels.length} outlier labels`);
    const outlier = new Uint8Array(labels.length);
    labels.forEach((v, r) => {
      if (v === 1 || v === true) outlier[r] = 1;
      else if (v !== 0 && v !== false) throw new InvalidDataError(`client ${id}'s outlier label ${r} is ${formatValue(v)}; labels are 0/1 or false/true`);
    });
    const positives = outlier.reduce((s, v) => s + v, 0);
    if (positives === 0 || positives === outlier.length) throw new InvalidDataError(`client ${id}'s test set has ${positives === 0 ? 'no outlier' : 'no inlier'} rows; its ROC-AUC needs both`);
    return { id, X, testX, outlier };
  });
}

/** Groups as string[][]: every id known, none twice, none empty; with `cover`, every known id in one. */
function readGroups(name: string, given: unknown, known: ReadonlySet<string>, cover: boolean): string[][] {
  const outer = readArray(name, given, LIMITS.graphNodes);
  const owner = new Map<string, number>();
  const groups = outer.map((g, k) => {
    const ids = readArray(`${name}[${k}]`, g, LIMITS.graphNodes);
    if (ids.length === 0) throw new InvalidParameterError(`${name}[${k}] is empty; a group holds at least one client id`);
    return ids.map((id) => {
      if (typeof id !== 'string') throw new InvalidParameterError(`${name}[${k}] holds ${formatValue(id)}; client ids are strings`);
      if (!known.has(id)) throw new InvalidParameterError(`${name}[${k}] names client ${formatValue(id)}, which is not among the clients`);
      const before = owner.get(id);
      if (before !== undefined) throw new InvalidParameterError(`client ${formatValue(id)} is in ${name}[${before}] and ${name}[${k}]; a client belongs to one group`);
      owner.set(id, k);
      return id;
    });
  });
  if (cover) {
    for (const id of known) if (!owner.has(id)) throw new InvalidParameterError(`client ${formatValue(id)} is in no group of ${name}; every client belongs to one (alone, a group of one)`);
  }
  return groups;
}

/** Mean and population standard deviation (numpy's std, as the paper's tables). */
export function meanStd(values: readonly number[]): { mean: number; std: number } {
  if (values.length === 0) return { mean: NaN, std: NaN };
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}

interface Settings {
  detector: CommunityDetector;
  rounds: number;
  epochs: number;
  batchSize: number;
  learningRate: number;
  hiddenLayers: number[];
  kMin: number;
  kMax: number;
  h: number;
  earlyStopping: EarlyStopping | undefined;
  localEpochs: number | undefined;
  seed: number;
}

function readSettings(given: CommunityTrainingOptions | undefined): Settings {
  const o = readOptions(given, TRAINING_OPTION_KEYS);
  const hidden = o.hiddenLayers ?? [64, 32, 64];
  const count = requireLength('hiddenLayers', hidden, LIMITS.networkLayers - 1);
  if (count < 1) throw new InvalidParameterError('hiddenLayers must hold at least one width, e.g. [64, 32, 64]');
  const hiddenLayers = guardRead('hiddenLayers', () => Array.from({ length: count }, (_, i) => requireInteger(`hiddenLayers[${i}]`, (hidden as readonly unknown[])[i], 1, LIMITS.layerWidth)));
  const kMin = requireInteger('kMin', o.kMin ?? 1, 1, LIMITS.components);
  const learningRate = requireNumber('learningRate', o.learningRate ?? 1e-3, 0);
  if (!(learningRate > 0)) throw new InvalidParameterError(`learningRate must be > 0, got ${formatValue(learningRate)}`);
  return {
    detector: requireOneOf('detector', o.detector ?? 'autoencoder', COMMUNITY_DETECTORS),
    rounds: requireInteger('rounds', o.rounds ?? 10, 1, LIMITS.rounds),
    epochs: requireInteger('epochs', o.epochs ?? DEFAULT_LOCAL_EPOCHS, 1, LIMITS.localSteps),
    batchSize: requireInteger('batchSize', o.batchSize ?? 32, 1, LIMITS.count),
    learningRate,
    hiddenLayers,
    kMin,
    kMax: requireInteger('kMax', o.kMax ?? Math.max(kMin, 3), kMin, LIMITS.components),
    h: requireInteger('h', o.h ?? 100, 1, LIMITS.count),
    earlyStopping: o.earlyStopping === 'none' ? undefined : resolveEarlyStopping(o.earlyStopping ?? DEFAULT_EARLY_STOPPING, 'earlyStopping'),
    localEpochs: o.localEpochs === undefined ? undefined : requireInteger('localEpochs', o.localEpochs, 1, LIMITS.maxIter),
    seed: requireInteger('seed', o.seed ?? 0, 0, LIMITS.count),
  };
}

/**
 * A group of one's Autoencoder: one Adam run of at most localEpochs epochs
 * (default rounds x epochs, the most a federation's client runs), stopped as
 * a federated client stops each round (FedAvgClient): once the score (the
 * separation of its errors on its rows, or the loss of its held-out rows)
 * has not improved for `patience` epochs, keeping the best epoch's
 * parameters. From random initial parameters the first epoch is the first
 * best, as Keras' EarlyStopping without a baseline. Epochs are run one fit()
 * at a time: the optimizer's state and the shuffle seeds go on across them,
 * so without early stopping (or a client too small for it: one row, or too
 * few to hold one out) this is the same run as one fit.
 */
function trainLocalAutoencoder(X: Matrix, s: Settings): { ae: Autoencoder; epochs: number } {
  const es = s.earlyStopping;
  const epochs = s.localEpochs ?? s.rounds * s.epochs;
  const rows = es?.monitor === 'validation-loss' ? heldOutSplit(X.nRows, es.validationShare, s.seed) : undefined;
  const train = rows ? X.selectRows(rows.train) : X;
  const held = rows ? X.selectRows(rows.held) : undefined;
  const mean = (v: Float64Array) => v.reduce((t, x) => t + x, 0) / v.length;
  const watch = held
    ? (ae: Autoencoder) => mean(ae.scoreSamples(held))
    : es?.monitor === 'separation' && X.nRows >= 2
      ? (ae: Autoencoder) => -errorSeparation(ae.scoreSamples(X), es.contamination)
      : undefined;
  const ae = new Autoencoder({ hiddenLayers: s.hiddenLayers, learningRate: s.learningRate, epochs: watch ? 1 : epochs, batchSize: Math.min(s.batchSize, train.nRows), seed: s.seed });
  try {
    if (!watch) return { ae: ae.fit(train), epochs };
    const stopper = new EarlyStopper(es!.patience);
    let run = 0;
    do {
      ae.fit(train);
      run += 1;
    } while (stopper.observe(watch(ae), () => ae.getParameters()) && run < epochs);
    ae.setParameters(stopper.parameters!);
    return { ae, epochs: run };
  } catch (e) {
    ae.dispose();
    throw e;
  }
}

type GroupOutcome = { scores: Float64Array[]; bytes: number; seconds: number; rounds: number; epochs?: number; parameters?: Float32Array };

/** Trains one group's detector and returns each member's test scores, with the cost. */
function* trainGroup(members: ReadClient[], s: Settings): FederationPlan<GroupOutcome> {
  const start = performance.now();
  const d = members[0]!.X.nCols;
  if (s.detector === 'autoencoder') {
    if (members.length === 1) {
      const { ae, epochs } = trainLocalAutoencoder(members[0]!.X, s);
      const seconds = (performance.now() - start) / 1000;
      try {
        const scores = [ae.scoreSamples(members[0]!.testX)];
        return { scores, bytes: 0, seconds, rounds: 0, epochs, parameters: ae.getParameters() };
      } finally {
        ae.dispose();
      }
    }
    const network: NetworkSpec = { sizes: [d, ...s.hiddenLayers, d], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: s.seed };
    const server = new FedAvgServer({ network, rounds: s.rounds, epochs: s.epochs, batchSize: s.batchSize, optimizer: { name: 'adam', learningRate: s.learningRate }, ...(s.earlyStopping ? { earlyStopping: s.earlyStopping } : {}) });
    // client k's shuffles are seeded with seed + k, as fedAvg's
    const clients = members.map((m, k) => new FedAvgClient(m.id, m.X, { seed: s.seed + k }));
    let run: FederationResult<FedAvgOutcome>;
    try {
      run = (yield { purpose: 'fedavg', server, clients }) as FederationResult<FedAvgOutcome>;
    } finally {
      for (const c of clients) c.dispose();
    }
    const ae = new Autoencoder({ hiddenLayers: s.hiddenLayers, nFeatures: d });
    try {
      ae.setParameters(run.model.parameters);
      const scores = members.map((m) => ae.scoreSamples(m.testX));
      // each round's mean over its clients, summed: the epochs a member ran, on average
      const epochs = run.model.history.reduce((n, h) => n + (Number.isNaN(h.epochs) ? 0 : h.epochs), 0);
      return { scores, bytes: run.traffic.bytesUp + run.traffic.bytesDown, seconds: run.seconds, rounds: run.rounds, epochs, parameters: run.model.parameters };
    } finally {
      ae.dispose();
    }
  }
  const fit = { kMin: s.kMin, kMax: s.kMax, covarianceType: 'diag' as const, seed: s.seed };
  if (members.length === 1) {
    const { best } = selectGaussianMixture(members[0]!.X, fit);
    const seconds = (performance.now() - start) / 1000;
    try {
      return { scores: [negate(best.scoreSamples(members[0]!.testX))], bytes: 0, seconds, rounds: 0 };
    } finally {
      best.dispose();
    }
  }
  const server = new FedGenGMMServer({ ...fit, h: s.h, nFeatures: d, onInvalidClient: 'throw' });
  const clients: FedGenGMMClient[] = [];
  let run: FederationResult<FedGenGMMAggregate>;
  try {
    for (const m of members) clients.push(new FedGenGMMClient(m.id, m.X, fit));
    run = (yield { purpose: 'fedgengmm', server, clients }) as FederationResult<FedGenGMMAggregate>;
  } finally {
    server.dispose();
    for (const c of clients) c.dispose();
  }
  try {
    const scores = members.map((m) => negate(run.model.model.scoreSamples(m.testX)));
    return { scores, bytes: run.traffic.bytesUp + run.traffic.bytesDown, seconds: run.seconds, rounds: run.traffic.rounds };
  } finally {
    run.model.model.dispose();
  }
}

function negate(v: Float64Array): Float64Array {
  return v.map((x) => -x);
}

/**
 * Trains one anomaly detector per group and scores every client's test rows
 * with its group's detector. `groups` lists client ids (every client in
 * exactly one group; a group of one trains alone), or 'local' for each client
 * alone. The ideal baseline is `groupsByClass(ids, inlierClasses)`.
 */
export function trainCommunities(clients: readonly CommunityClient[], groups: readonly (readonly string[])[] | 'local', options: CommunityTrainingOptions = {}): CommunityTrainingResult {
  return runPlanSync(planCommunities(clients, groups, options));
}

/**
 * trainCommunities as a plan: the groups' federations are yielded for a
 * driver to run (runPlanSync in process, runPlan over a broker). Options and
 * clients are checked before the first job.
 */
export function planCommunities(clients: readonly CommunityClient[], groups: readonly (readonly string[])[] | 'local', options: CommunityTrainingOptions = {}): FederationPlan<CommunityTrainingResult> {
  const s = readSettings(options);
  const read = readClients(clients);
  const byId = new Map(read.map((c) => [c.id, c]));
  const used = groups === 'local' ? read.map((c) => [c.id]) : readGroups('groups', groups, new Set(byId.keys()), true);
  return (function* (): FederationPlan<CommunityTrainingResult> {
    const scores = new Map<string, ClientScore>();
    const training: GroupTraining[] = [];
    for (let g = 0; g < used.length; g++) {
      const ids = used[g]!;
      const members = ids.map((id) => byId.get(id)!);
      const t = yield* trainGroup(members, s);
      members.forEach((m, k) => {
        const score = t.scores[k]!;
        if (!score.every(Number.isFinite)) throw new InvalidDataError(`group ${g}'s detector gave client ${m.id} scores that are not finite; scale the rows (e.g. to [0, 1])`);
        scores.set(m.id, { id: m.id, group: g, auc: rocAuc(m.outlier, score), testRows: m.testX.nRows, outliers: m.outlier.reduce((n, v) => n + v, 0) });
      });
      training.push({ members: [...ids], bytes: t.bytes, seconds: t.seconds, rounds: t.rounds, ...(t.epochs !== undefined ? { epochs: t.epochs } : {}), ...(t.parameters ? { parameters: t.parameters } : {}) });
    }
    const list = read.map((c) => scores.get(c.id)!);
    const epochs = s.detector === 'autoencoder' ? meanStd(list.map((c) => training[c.group]!.epochs!)) : undefined;
    return {
      detector: s.detector,
      groups: used.map((g) => [...g]),
      clients: list,
      auc: meanStd(list.map((c) => c.auc)),
      ...(epochs ? { epochs } : {}),
      training,
      bytes: training.reduce((n, t) => n + t.bytes, 0),
      seconds: training.reduce((n, t) => n + t.seconds, 0),
    };
  })();
}

/** Each client's class: a Map or a record from client id to class. */
export type ClientClasses = ReadonlyMap<string, number | string> | Readonly<Record<string, number | string>>;

/** A client id -> class lookup, checked. */
function readClasses(name: string, given: ClientClasses): Map<string, number | string> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`${name} must be a Map or an object from client id to class, got ${formatValue(given)}`);
  const entries = guardRead(name, () => (given instanceof Map ? [...(given as Map<unknown, unknown>).entries()] : Object.entries(given as object)));
  if (entries.length > LIMITS.graphNodes) throw new InvalidParameterError(`${name} holds ${entries.length} clients; at most ${LIMITS.graphNodes}`);
  const out = new Map<string, number | string>();
  for (const [id, c] of entries) {
    if (typeof id !== 'string') throw new InvalidParameterError(`${name} has key ${formatValue(id)}; client ids are strings`);
    if (!(typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c)))) throw new InvalidParameterError(`${name}: client ${formatValue(id)} has class ${formatValue(c)}; classes are finite numbers or strings`);
    out.set(id, c);
  }
  return out;
}

function sortClasses(values: Iterable<number | string>): (number | string)[] {
  return [...new Set(values)].sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));
}

/** The ideal groups: the client ids sharing a class, classes in ascending order, ids in the order given. */
export function groupsByClass(ids: readonly string[], classes: ArrayLike<number | string>): string[][] {
  const list = readArray('ids', ids, LIMITS.graphNodes);
  const cls = readArray('classes', classes, LIMITS.graphNodes);
  if (cls.length !== list.length) throw new InvalidParameterError(`ids has ${list.length} entries but classes has ${cls.length}`);
  const seen = new Set<string>();
  const by = new Map<number | string, string[]>();
  list.forEach((id, i) => {
    if (typeof id !== 'string' || id.length === 0) throw new InvalidParameterError(`ids[${i}] is ${formatValue(id)}; client ids are non-empty strings`);
    if (seen.has(id)) throw new InvalidParameterError(`client id ${formatValue(id)} is given twice`);
    seen.add(id);
    const c = cls[i];
    if (!(typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c)))) throw new InvalidParameterError(`classes[${i}] is ${formatValue(c)}; classes are finite numbers or strings`);
    const g = by.get(c);
    if (g) g.push(id);
    else by.set(c, [id]);
  });
  return sortClasses(by.keys()).map((c) => by.get(c)!);
}

export interface MembershipTable {
  /** the inlier classes, ascending */
  classes: (number | string)[];
  /** per group: its members' count per class (aligned with `classes`) */
  rows: { group: number; members: number; counts: number[] }[];
}

/** Each group's members by inlier class: the paper's Tables I and II. */
export function communityMembership(groups: readonly (readonly string[])[], inlierClass: ClientClasses): MembershipTable {
  const classOf = readClasses('inlierClass', inlierClass);
  const g = readGroups('groups', groups, new Set(classOf.keys()), false);
  const classes = sortClasses(g.flat().map((id) => classOf.get(id)!));
  const index = new Map(classes.map((c, i) => [c, i]));
  return {
    classes,
    rows: g.map((ids, k) => {
      const counts = new Array<number>(classes.length).fill(0);
      for (const id of ids) counts[index.get(classOf.get(id)!)!]!++;
      return { group: k, members: ids.length, counts };
    }),
  };
}

/**
 * Adjusted Rand index of a grouping against the ideal one, over the clients
 * (both must cover the same clients): 1 when they match up to renaming.
 */
export function communityRandIndex(groups: readonly (readonly string[])[], ideal: readonly (readonly string[])[]): number {
  const found = new Map<string, number>();
  readArray('groups', groups, LIMITS.graphNodes).forEach((g, k) => {
    readArray(`groups[${k}]`, g, LIMITS.graphNodes).forEach((id) => {
      if (typeof id !== 'string') throw new InvalidParameterError(`groups[${k}] holds ${formatValue(id)}; client ids are strings`);
      if (found.has(id)) throw new InvalidParameterError(`client ${formatValue(id)} is in groups[${found.get(id)}] and groups[${k}]; a client belongs to one group`);
      found.set(id, k);
    });
  });
  if (found.size === 0) throw new InvalidParameterError('groups hold no client');
  const truth = readGroups('ideal', ideal, new Set(found.keys()), true);
  const ids = [...found.keys()];
  const label = new Map<string, number>();
  truth.forEach((g, k) => g.forEach((id) => label.set(id, k)));
  return adjustedRandScore(ids.map((id) => label.get(id)!), ids.map((id) => found.get(id)!));
}

/** Each client's AUC: a Map or a record from client id to AUC. */
export type ClientAucs = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

export interface MergedClassAuc {
  /** the merged group */
  group: number;
  /** an inlier class among its members */
  inlierClass: number | string;
  /** that group's clients of that class */
  clients: number;
  /** by method (e.g. local, community, ideal): mean and std of those clients' AUC */
  auc: Record<string, { mean: number; std: number }>;
}

/**
 * The paper's Tables V and VI: for each group whose members hold more than
 * one inlier class, the mean AUC of its clients of each class, under each
 * method given (`aucs`: method -> client id -> AUC, e.g. from
 * trainCommunities' clients for local, community and ideal).
 */
export function mergedCommunityAuc(groups: readonly (readonly string[])[], inlierClass: ClientClasses, aucs: Readonly<Record<string, ClientAucs>>): MergedClassAuc[] {
  const classOf = readClasses('inlierClass', inlierClass);
  const g = readGroups('groups', groups, new Set(classOf.keys()), false);
  const methods = readOptions(aucs, undefined, 'aucs') as Record<string, ClientAucs>;
  const names = guardRead('aucs', () => Object.keys(methods));
  const table = new Map(names.map((m) => [m, readAucs(`aucs.${m}`, methods[m]!)]));
  const out: MergedClassAuc[] = [];
  g.forEach((ids, k) => {
    const classes = sortClasses(ids.map((id) => classOf.get(id)!));
    if (classes.length < 2) return;
    for (const c of classes) {
      const members = ids.filter((id) => classOf.get(id) === c);
      const auc: Record<string, { mean: number; std: number }> = {};
      for (const [m, values] of table) {
        auc[m] = meanStd(members.map((id) => {
          const v = values.get(id);
          if (v === undefined) throw new InvalidParameterError(`aucs.${m} has no AUC for client ${formatValue(id)}`);
          return v;
        }));
      }
      out.push({ group: k, inlierClass: c, clients: members.length, auc });
    }
  });
  return out;
}

function readAucs(name: string, given: ClientAucs): Map<string, number> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`${name} must be a Map or an object from client id to AUC, got ${formatValue(given)}`);
  const entries = guardRead(name, () => (given instanceof Map ? [...(given as Map<unknown, unknown>).entries()] : Object.entries(given as object)));
  const out = new Map<string, number>();
  for (const [id, v] of entries) {
    if (typeof id !== 'string') throw new InvalidParameterError(`${name} has key ${formatValue(id)}; client ids are strings`);
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new InvalidParameterError(`${name}: client ${formatValue(id)} has AUC ${formatValue(v)}; an AUC is a number in [0, 1]`);
    out.set(id, v);
  }
  return out;
}

/** Client id -> AUC of a trainCommunities result (for mergedCommunityAuc). */
export function aucByClient(result: Pick<CommunityTrainingResult, 'clients'>): Map<string, number> {
  const r = readRecord(result, ['clients'], 'result');
  const list = readArray('result.clients', r.clients, LIMITS.graphNodes);
  const out = new Map<string, number>();
  list.forEach((c, i) => {
    const e = readRecord(c as ClientScore, ['id', 'auc'], `result.clients[${i}]`);
    if (typeof e.id !== 'string') throw new InvalidParameterError(`result.clients[${i}].id is ${formatValue(e.id)}; client ids are strings`);
    if (typeof e.auc !== 'number' || !(e.auc >= 0 && e.auc <= 1)) throw new InvalidParameterError(`result.clients[${i}].auc is ${formatValue(e.auc)}; an AUC is a number in [0, 1]`);
    out.set(e.id, e.auc);
  });
  return out;
}

export interface CommunityTables {
  /** Tables I/II */
  membership?: MembershipTable;
  /** Tables III/IV: method -> mean and std of the clients' AUC */
  auc?: Readonly<Record<string, { mean: number; std: number }>>;
  /** Tables V/VI */
  merged?: readonly MergedClassAuc[];
}

function cell(v: unknown): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : String(v);
}

function grid(header: string[], rows: string[][]): string {
  const widths = header.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j]!.length)));
  const line = (r: string[]) => r.map((c, j) => c.padStart(widths[j]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function pm(v: unknown): string {
  if (v === null || typeof v !== 'object') throw new InvalidParameterError(`an AUC entry must be { mean, std }, got ${formatValue(v)}`);
  const { mean, std } = readRecord(v as { mean: number; std: number }, ['mean', 'std'], 'auc entry');
  if (typeof mean !== 'number' || typeof std !== 'number') throw new InvalidParameterError(`an AUC entry's mean and std are numbers, got ${formatValue(mean)} and ${formatValue(std)}`);
  return `${mean.toFixed(3)} ± ${std.toFixed(3)}`;
}

/** The tables as text, in the paper's layout (each part only if given). */
export function formatCommunityTables(tables: CommunityTables): string {
  const t = readRecord(tables, ['membership', 'auc', 'merged'], 'tables');
  const parts: string[] = [];
  if (t.membership !== undefined) {
    const m = readRecord(t.membership, ['classes', 'rows'], 'tables.membership');
    const classes = readArray('tables.membership.classes', m.classes, LIMITS.graphNodes).map(cell);
    const rows = readArray('tables.membership.rows', m.rows, LIMITS.graphNodes).map((r, i) => {
      const row = readRecord(r as MembershipTable['rows'][number], ['group', 'members', 'counts'], `tables.membership.rows[${i}]`);
      const counts = readArray(`tables.membership.rows[${i}].counts`, row.counts, LIMITS.graphNodes).map(cell);
      if (counts.length !== classes.length) throw new InvalidParameterError(`tables.membership.rows[${i}] has ${counts.length} counts for ${classes.length} classes`);
      return [`G${cell(row.group)}`, cell(row.members), ...counts];
    });
    parts.push(`Communities by inlier class\n${grid(['group', 'members', ...classes.map((c) => `I${c}`)], rows)}`);
  }
  if (t.auc !== undefined) {
    const a = readOptions(t.auc, undefined, 'tables.auc') as Record<string, unknown>;
    const names = guardRead('tables.auc', () => Object.keys(a));
    parts.push(`Test ROC-AUC (mean ± std over clients)\n${grid(names, [names.map((n) => pm(a[n]))])}`);
  }
  if (t.merged !== undefined) {
    const list = readArray('tables.merged', t.merged, LIMITS.graphNodes) as MergedClassAuc[];
    const first = list[0];
    const methods = first === undefined ? [] : guardRead('tables.merged[0].auc', () => Object.keys(readRecord(first, ['auc'], 'tables.merged[0]').auc as object));
    const rows = list.map((e, i) => {
      const r = readRecord(e, ['group', 'inlierClass', 'clients', 'auc'], `tables.merged[${i}]`);
      const auc = readOptions(r.auc as Record<string, unknown>, undefined, `tables.merged[${i}].auc`) as Record<string, unknown>;
      return [`G${cell(r.group)}`, cell(r.inlierClass), cell(r.clients), ...methods.map((m) => pm(auc[m]))];
    });
    parts.push(`Merged communities: test ROC-AUC by inlier class\n${grid(['group', 'C_in', 'clients', ...methods], rows)}`);
  }
  return parts.join('\n\n');
}
