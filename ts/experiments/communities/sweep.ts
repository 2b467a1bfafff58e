/**
 * The evaluation of the community-based federated anomaly detection paper
 * (Nardi, Valerio, Passarella, section V) as one sweep: for each p (clients
 * per inlier class) and repeat, the paper's partition of a labelled dataset;
 * for each q, the association (its bytes and time, the communities, their
 * members by inlier class, the adjusted Rand index against the ideal groups)
 * and per-community training; the local and ideal baselines once per
 * partition (they do not depend on q); per-client test ROC-AUC for the three,
 * and the per-class breakdown of merged communities.
 *
 * Each q is its own association run: a client answers only its decisions for
 * the q it is sent (the protocol's promise), so several q cannot be read off
 * one run without the clients revealing more.
 *
 * Written as a plan (federated/runtime/plan.ts): runCommunityExperiment runs
 * every federation in process; the CLI's --broker runs the same plan's
 * federations over MQTT.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import type { Label } from '../../data/labels.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { describeExclusion } from '../../federated/runtime/roles.js';
import { planAssociation } from '../../federated/communities/run.js';
import { requireQ } from '../../federated/communities/server.js';
import { runPlanSync, type FederationPlan } from '../../federated/runtime/plan.js';
import { COMMUNITY_METHODS, type CommunityMethod } from '../../graph/communities.js';
import { checkDetectorOptions, DETECTOR_KINDS, DETECTOR_OPTION_KEYS, requireContamination, type DetectorKind, type LocalDetectorOptions } from '../../models/detectors.js';
import { contaminated } from '../../partition/contaminated.js';
import { guardRead, isArray, LIMITS, readArray, readOptions, readRecord, requireInteger, requireOneOf } from '../../validate.js';
import {
  communityMembership,
  communityRandIndex,
  COMMUNITY_DETECTORS,
  DEFAULT_EARLY_STOPPING,
  groupsByClass,
  meanStd,
  mergedCommunityAuc,
  planCommunities,
  TRAINING_OPTION_KEYS,
  type CommunityClient,
  type CommunityDetector,
  type CommunityTrainingOptions,
  type CommunityTrainingResult,
  type MembershipTable,
  type MergedClassAuc,
} from './training.js';

/** A labelled dataset with its own test split (Fashion-MNIST's, or one drawn from a table). */
export interface CommunityDataset {
  train: { X: MatrixLike; labels: ArrayLike<Label> };
  test: { X: MatrixLike; labels: ArrayLike<Label> };
}

export interface CommunityExperimentConfig {
  /** p, clients per inlier class: one value or a list to sweep (default 9) */
  clientsPerClass?: number | readonly number[];
  /** d, each client's share of outlier rows, in (0, 0.5) (default 0.1) */
  contamination?: number;
  /** the association tolerance: one value or a list (default 0.08) */
  q?: number | readonly number[];
  /** the classes taking part (default: every class of the training labels) */
  classes?: readonly Label[];
  /** the association's local detector (default 'ocsvm': nu 0.5, gamma 'auto', as the paper's public code) */
  detector?: DetectorKind;
  /** that detector's model options and optional GMM noise (see LocalDetectorOptions) */
  detectorOptions?: Omit<LocalDetectorOptions, 'kind' | 'contamination'>;
  /** seed of client i's detector noise is noiseSeed + i, for tests only (default: fresh from crypto.getRandomValues) */
  noiseSeed?: number;
  /** 'all' partners (default, as the paper) or s sampled partners per client */
  partners?: 'all' | number;
  /** 'fast-greedy' (default, as the paper's code) or 'louvain' */
  method?: CommunityMethod;
  /** the most detector bytes in one relay message (default 8 MiB; see CommunitiesServer) */
  maxRelayBytes?: number;
  /** the model each community trains: 'autoencoder' (default) or 'fedgengmm' */
  federated?: CommunityDetector;
  /** trainCommunities' options (rounds, epochs, batchSize, learningRate, localEpochs, ...); its seed is the repeat's */
  training?: Omit<CommunityTrainingOptions, 'detector' | 'seed'>;
  /** training rows per client (default: the most the classes allow) */
  rowsPerClient?: number;
  /** test rows per client (default: every test row of its inlier class, and outliers at ratio d / (1 - d)) */
  testRowsPerClient?: number;
  /** repeats with fresh partitions (default 1) */
  repeats?: number;
  /** seed of the first repeat (repeat r uses seed + r) (default 0) */
  seed?: number;
  /** told after every step: (done, total, what) */
  onProgress?: (done: number, total: number, what: string) => void;
}

export interface MeanStd {
  mean: number;
  std: number;
}

/** One association (one q) of one partition, and the training of its communities. */
export interface CommunityAssociationRun {
  q: number;
  /** the communities as trained: each its client ids by position, clients left out of the graph alone */
  communities: string[][];
  /** Tables I/II */
  membership: MembershipTable;
  /** adjusted Rand index of the communities against the ideal groups */
  ari: number;
  modularity: number;
  edges: number;
  /** decisions reported (all pairs of n clients: n (n - 1)) */
  tests: number;
  /** communication rounds of the association: 1 + the relay rounds (more when partners exceed one message) */
  rounds: number;
  /** the association phase: bytes each way and wall seconds (detector fits, relays, decisions) */
  bytesUp: number;
  bytesDown: number;
  seconds: number;
  excluded: string[];
  /** per-community training: mean and std over the clients' test ROC-AUC, and by client id; the local epochs the clients ran (autoencoder) */
  community: { auc: MeanStd; byClient: Record<string, number>; bytes: number; seconds: number; epochs?: MeanStd };
  /** Tables V/VI: merged communities' clients by inlier class, local / community / ideal */
  merged: MergedClassAuc[];
}

/** One partition (one p, one repeat). */
export interface CommunityPartitionRun {
  p: number;
  repeat: number;
  seed: number;
  clients: number;
  rowsPerClient: number;
  /** each client's inlier class, by position (client id = its position) */
  inlierClass: Label[];
  ideal: string[][];
  local: { auc: MeanStd; byClient: Record<string, number>; seconds: number; epochs?: MeanStd };
  idealRun: { auc: MeanStd; byClient: Record<string, number>; bytes: number; seconds: number; epochs?: MeanStd };
  associations: CommunityAssociationRun[];
}

/** Tables III/IV: over every client of every repeat, for one p and q. */
export interface CommunitySummaryRow {
  p: number;
  q: number;
  local: MeanStd;
  community: MeanStd;
  ideal: MeanStd;
  /** over repeats */
  ari: MeanStd;
  communities: MeanStd;
  associationBytes: MeanStd;
  associationSeconds: MeanStd;
}

export interface CommunityExperimentReport {
  config: {
    clientsPerClass: number[];
    contamination: number;
    q: number[];
    classes: Label[];
    detector: DetectorKind;
    partners: 'all' | number;
    method: CommunityMethod;
    federated: CommunityDetector;
    repeats: number;
    seed: number;
    rowsPerClient?: number;
    testRowsPerClient?: number;
  };
  dataset: { trainRows: number; testRows: number; features: number };
  runs: CommunityPartitionRun[];
  summary: CommunitySummaryRow[];
  seconds: number;
}

const KEYS = [
  'clientsPerClass', 'contamination', 'q', 'classes', 'detector', 'detectorOptions', 'noiseSeed', 'partners', 'method', 'maxRelayBytes', 'federated', 'training',
  'rowsPerClient', 'testRowsPerClient', 'repeats', 'seed', 'onProgress',
] as const;

function list<T>(name: string, v: T | readonly T[] | undefined, fallback: T, check: (name: string, x: unknown) => T): T[] {
  if (v === undefined) return [fallback];
  const values = isArray(name, v) ? readArray(name, v as readonly T[], LIMITS.graphNodes) : [v];
  if (values.length === 0) throw new InvalidParameterError(`${name} must hold at least one value`);
  return values.map((x, i) => check(values.length > 1 ? `${name}[${i}]` : name, x));
}

function readMatrix(name: string, v: unknown): Matrix {
  return guardRead(name, () => Matrix.from(v as MatrixLike), InvalidDataError);
}

function readLabels(name: string, v: unknown, rows: number): Label[] {
  const labels = readArray(name, v as ArrayLike<unknown>, LIMITS.values, InvalidDataError);
  if (labels.length !== rows) throw new InvalidDataError(`${name} has ${labels.length} labels for ${rows} rows`);
  return labels.map((l, i) => {
    if (!(typeof l === 'string' || (typeof l === 'number' && Number.isFinite(l)))) throw new InvalidDataError(`${name}[${i}] is ${formatValue(l)}; labels are finite numbers or strings`);
    return l;
  });
}

/** A training's local epochs per client, when it has them (autoencoders). */
function epochsOf(t: CommunityTrainingResult): { epochs?: MeanStd } {
  return t.epochs ? { epochs: t.epochs } : {};
}

/** Groups with members in client order and groups ordered by their first member: one form per partition, so equal groupings train alike. */
function canonical(groups: readonly (readonly string[])[]): string[][] {
  return groups.map((g) => [...g].sort((a, b) => Number(a) - Number(b))).sort((a, b) => Number(a[0]) - Number(b[0]));
}

/**
 * The sweep as a plan (see federated/runtime/plan.ts): every federation it
 * needs is yielded. Everything is checked before the first one.
 */
export function planCommunityExperiment(data: CommunityDataset, given: CommunityExperimentConfig = {}): FederationPlan<CommunityExperimentReport> {
  if (data === null || typeof data !== 'object') throw new InvalidParameterError(`data must be { train: { X, labels }, test: { X, labels } }, got ${formatValue(data)}`);
  const d = readRecord(data, ['train', 'test'], 'data');
  const trainIn = readRecord(d.train, ['X', 'labels'], 'data.train');
  const testIn = readRecord(d.test, ['X', 'labels'], 'data.test');
  const trainX = readMatrix('data.train.X', trainIn.X);
  const testX = readMatrix('data.test.X', testIn.X);
  if (testX.nCols !== trainX.nCols) throw new InvalidDataError(`the test rows have ${testX.nCols} features, the training rows ${trainX.nCols}`);
  const trainLabels = readLabels('data.train.labels', trainIn.labels, trainX.nRows);
  const testLabels = readLabels('data.test.labels', testIn.labels, testX.nRows);

  const o = readOptions(given, KEYS);
  const ps = list('clientsPerClass', o.clientsPerClass, 9, (n, x) => requireInteger(n, x, 1, LIMITS.graphNodes));
  const qs = list('q', o.q, 0.08, (_n, x) => requireQ(x));
  const contamination = requireContamination(o.contamination ?? 0.1);
  const detector = requireOneOf('detector', o.detector ?? 'ocsvm', DETECTOR_KINDS);
  const federated = requireOneOf('federated', o.federated ?? 'autoencoder', COMMUNITY_DETECTORS);
  const method = requireOneOf('method', o.method ?? 'fast-greedy', COMMUNITY_METHODS);
  const partners = o.partners === undefined || o.partners === 'all' ? ('all' as const) : requireInteger('partners', o.partners, 1, LIMITS.graphNodes);
  const repeats = requireInteger('repeats', o.repeats ?? 1, 1, LIMITS.rounds);
  const maxRelayBytes = o.maxRelayBytes === undefined ? undefined : requireInteger('maxRelayBytes', o.maxRelayBytes, 1, 2 ** 31 - 1);
  const seed = requireInteger('seed', o.seed ?? 0, 0, LIMITS.count);
  const noiseSeed = o.noiseSeed === undefined ? undefined : requireInteger('noiseSeed', o.noiseSeed, 0, LIMITS.count);
  const rowsPerClient = o.rowsPerClient === undefined ? undefined : requireInteger('rowsPerClient', o.rowsPerClient, 2, LIMITS.partitionRows);
  const testRowsPerClient = o.testRowsPerClient === undefined ? undefined : requireInteger('testRowsPerClient', o.testRowsPerClient, 2, LIMITS.partitionRows);
  const detectorOptions = o.detectorOptions === undefined ? {} : readOptions(o.detectorOptions, DETECTOR_OPTION_KEYS.filter((k) => k !== 'kind' && k !== 'contamination') as (keyof NonNullable<CommunityExperimentConfig['detectorOptions']>)[], 'detectorOptions');
  // the models' own options checked now, not in the first association's clients
  checkDetectorOptions({ ...detectorOptions, kind: detector, contamination }, 'detectorOptions');
  // detector and seed are read to be refused by name below
  const training = o.training === undefined ? {} : readOptions(o.training as CommunityTrainingOptions, TRAINING_OPTION_KEYS, 'training');
  for (const k of ['detector', 'seed'] as const) if (k in training) throw new InvalidParameterError(`training.${k} is set by the experiment (federated, and each repeat's seed)`);
  const onProgress = o.onProgress;
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new InvalidParameterError(`onProgress must be a function (done, total, what), got ${formatValue(onProgress)}`);

  // the classes taking part: the rows of the others are left out of both splits
  const present = [...new Set(trainLabels)];
  const classes = o.classes === undefined ? present : readArray('classes', o.classes, LIMITS.graphNodes).map((c, i) => {
    if (!present.includes(c as Label)) throw new InvalidParameterError(`classes[${i}] is ${formatValue(c)}, which no training row has`);
    return c as Label;
  });
  if (new Set(classes).size !== classes.length) throw new InvalidParameterError('classes names a class twice');
  if (classes.length < 2) throw new InvalidParameterError(`the experiment needs at least 2 classes (inliers and outliers), got ${classes.length}`);
  const wanted = new Set<Label>(classes);
  const trainRows = trainLabels.flatMap((l, i) => (wanted.has(l) ? [i] : []));
  const testRows = testLabels.flatMap((l, i) => (wanted.has(l) ? [i] : []));
  // every class: no copy of the rows (Fashion-MNIST's are 376 MB)
  const every = trainRows.length === trainLabels.length && testRows.length === testLabels.length;
  const X = every ? trainX : trainX.selectRows(trainRows);
  const labels = every ? trainLabels : trainRows.map((i) => trainLabels[i]!);
  const T = every ? testX : testX.selectRows(testRows);
  const tLabels = every ? testLabels : testRows.map((i) => testLabels[i]!);
  const sortedClasses = [...classes].sort((a, b) => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));

  const total = repeats * ps.length * (2 + 2 * qs.length);
  // the autoencoders' early stopping takes the partition's d as its contamination unless told otherwise
  const earlyStopping = training.earlyStopping ?? { ...DEFAULT_EARLY_STOPPING, contamination };
  const trainOptions = (s: number): CommunityTrainingOptions => ({ ...training, earlyStopping, detector: federated, seed: s });

  return (function* (): FederationPlan<CommunityExperimentReport> {
    const started = performance.now();
    let done = 0;
    const step = (what: string) => onProgress?.(++done, total, what);
    const runs: CommunityPartitionRun[] = [];
    for (const p of ps) {
      for (let r = 0; r < repeats; r++) {
        const s = seed + r;
        const part = contaminated(labels, { clientsPerClass: p, contamination, rowsPerClient, testLabels: tLabels, testRowsPerClient, seed: s });
        const ids = part.indices.map((_, i) => String(i));
        const clients: CommunityClient[] = part.indices.map((rows, i) => {
          const test = part.testIndices![i]!;
          return { id: ids[i]!, X: X.selectRows(rows), test: { X: T.selectRows(test), outlier: Uint8Array.from(test, (t) => (tLabels[t] === part.inlierClass[i] ? 0 : 1)) } };
        });
        const inlierOf = Object.fromEntries(ids.map((id, i) => [id, part.inlierClass[i]!]));
        const ideal = canonical(groupsByClass(ids, part.inlierClass));
        const where = `p = ${p}, repeat ${r + 1}`;
        // the associations first: one per q, each a separate run of the protocol
        const found: { q: number; groups: string[][]; a: { modularity: number; edges: number; tests: number; rounds: number; bytesUp: number; bytesDown: number; seconds: number; excluded: string[] } }[] = [];
        for (const q of qs) {
          const association = yield* planAssociation(
            clients.map((c) => c.X),
            { detector: { ...detectorOptions, kind: detector, contamination }, noiseSeed, q, partners, method, maxRelayBytes, seed: s },
          );
          const inGraph = new Set(association.nodes);
          // a client that left the association (excluded) trains alone
          const groups = canonical([...association.communities, ...ids.filter((id) => !inGraph.has(id)).map((id) => [id])]);
          const f = association.federation;
          found.push({
            q,
            groups,
            a: { modularity: association.modularity, edges: association.edges.length, tests: association.tests, rounds: f.traffic.rounds, bytesUp: f.traffic.bytesUp, bytesDown: f.traffic.bytesDown, seconds: f.seconds, excluded: association.excluded.map(describeExclusion) },
          });
          step(`${where}: association, q = ${q}`);
        }
        const local = yield* planCommunities(clients, 'local', trainOptions(s));
        step(`${where}: local`);
        const idealRun = yield* planCommunities(clients, ideal, trainOptions(s));
        step(`${where}: ideal`);
        // equal groupings train alike: the ideal run, or an earlier q's, is reused
        const trained = new Map<string, CommunityTrainingResult>([[JSON.stringify(ideal), idealRun]]);
        const byClient = (t: CommunityTrainingResult) => Object.fromEntries(t.clients.map((c) => [c.id, c.auc]));
        const associations: CommunityAssociationRun[] = [];
        for (const f of found) {
          const key = JSON.stringify(f.groups);
          let t = trained.get(key);
          if (!t) {
            t = yield* planCommunities(clients, f.groups, trainOptions(s));
            trained.set(key, t);
          }
          step(`${where}: communities, q = ${f.q}`);
          const aucs = { local: byClient(local), community: byClient(t), ideal: byClient(idealRun) };
          associations.push({
            q: f.q,
            communities: f.groups,
            membership: communityMembership(f.groups, inlierOf),
            ari: communityRandIndex(f.groups, ideal),
            ...f.a,
            community: { auc: t.auc, byClient: aucs.community, bytes: t.bytes, seconds: t.seconds, ...epochsOf(t) },
            merged: mergedCommunityAuc(f.groups, inlierOf, aucs),
          });
        }
        runs.push({
          p,
          repeat: r,
          seed: s,
          clients: clients.length,
          rowsPerClient: part.indices[0]!.length,
          inlierClass: part.inlierClass,
          ideal,
          local: { auc: local.auc, byClient: byClient(local), seconds: local.seconds, ...epochsOf(local) },
          idealRun: { auc: idealRun.auc, byClient: byClient(idealRun), bytes: idealRun.bytes, seconds: idealRun.seconds, ...epochsOf(idealRun) },
          associations,
        });
      }
    }
    const summary: CommunitySummaryRow[] = [];
    for (const p of ps) {
      const mine = runs.filter((x) => x.p === p);
      const pooled = (pick: (x: CommunityPartitionRun) => Record<string, number>) => meanStd(mine.flatMap((x) => Object.values(pick(x))));
      qs.forEach((q, k) => {
        const a = mine.map((x) => x.associations[k]!);
        summary.push({
          p,
          q,
          local: pooled((x) => x.local.byClient),
          community: pooled((x) => x.associations[k]!.community.byClient),
          ideal: pooled((x) => x.idealRun.byClient),
          ari: meanStd(a.map((x) => x.ari)),
          communities: meanStd(a.map((x) => x.communities.length)),
          associationBytes: meanStd(a.map((x) => x.bytesUp + x.bytesDown)),
          associationSeconds: meanStd(a.map((x) => x.seconds)),
        });
      });
    }
    return {
      config: { clientsPerClass: ps, contamination, q: qs, classes: sortedClasses, detector, partners, method, federated, repeats, seed, rowsPerClient, testRowsPerClient },
      dataset: { trainRows: X.nRows, testRows: T.nRows, features: X.nCols },
      runs,
      summary,
      seconds: (performance.now() - started) / 1000,
    };
  })();
}

/**
 * The paper's evaluation in one call, in process:
 *
 * ```ts
 * const r = runCommunityExperiment({ train, test }, { clientsPerClass: [9, 18], q: [0.08, 0.06], classes: [0, 1, 2] });
 * r.summary;   // per p and q: local, community and ideal ROC-AUC (mean ± std over clients), ARI, association bytes and seconds
 * r.runs[0].associations[0].membership;   // Tables I/II
 * ```
 */
export function runCommunityExperiment(data: CommunityDataset, config: CommunityExperimentConfig = {}): CommunityExperimentReport {
  return runPlanSync(planCommunityExperiment(data, config));
}
