/**
 * `fedmix fedgem`: federated clustering with an unknown number of clusters on a
 * labelled CSV file (the label names each row's true cluster) or on generated
 * blobs. Each client gets the rows of a random subset of the clusters; the
 * table shows the estimated K, the clients' ARI and silhouette, and the
 * centralized GMM given the true K.
 */
import { labelledFromCells } from '../dataset.js';
import { runFedGEMExperiment, type ClusteringSource, type FedGEMExperimentConfig, type FedGEMExperimentReport } from './run.js';
import { InvalidParameterError } from '../../errors.js';
import { PHI_GRID } from '../../federated/fedgem/index.js';
import { COVARIANCE_TYPES, type CovarianceType } from '../../models/gaussian-mixture.js';
import type { OptionSpec, Options } from '../../cli/args.js';
import type { NamedCommand } from '../../cli/command.js';
import type { CommandResult } from '../../cli/io.js';
import { readDataFile } from '../../cli/data.js';
import { progressBar } from '../../cli/progress.js';
import { textTable } from '../../cli/table.js';

export const fedgemOptions: Record<string, OptionSpec> = {
  data: { type: 'string', help: 'CSV file with a header row, Arrow IPC or Parquet (or use --blobs)' },
  label: { type: 'string', default: 'label', help: 'column naming the true cluster of each row' },
  'label-groups': { type: 'string', help: 'group numeric labels into clusters, e.g. "0-5,6,7,8,9,10,11-12,13-" (abalone rings as the paper)' },
  'one-hot': { type: 'string', help: 'comma-separated text columns to one-hot encode as features (e.g. sex)' },
  drop: { type: 'string', help: 'comma-separated columns to leave out' },
  blobs: { type: 'flag', help: 'generate isotropic blobs instead of reading --data (fresh ones per repeat)' },
  'blob-clusters': { type: 'int', default: 10, help: 'blobs: number of clusters' },
  'blob-features': { type: 'int', default: 2, help: 'blobs: number of features' },
  'blob-samples': { type: 'int', default: 300, help: 'blobs: rows per cluster' },
  'min-distance': { type: 'number', default: 6, help: 'blobs: smallest distance between two centers (the first two exactly), in standard deviations' },
  clients: { type: 'int', default: 10, help: 'number of clients' },
  'clusters-per-client': { type: 'range', default: [3, 6], help: "each client holds the rows of this many randomly chosen clusters (a range: drawn per client)" },
  imbalance: { type: 'string', default: 'none', choices: ['none', 'clients', 'classes'], help: "uneven splits: client sizes ('clients') or cluster shares within clients ('classes')" },
  rounds: { type: 'int', default: 10, help: 'collaborative rounds' },
  'local-steps': { type: 'int', default: 1, help: 'EM steps per client per round' },
  phi: { type: 'string', default: '1', help: `final-radius hyperparameter: a number, comma-separated candidates, or "tune" (${PHI_GRID.join(',')}), chosen by validation silhouette` },
  variance: { type: 'number', help: "the clients' known component variance sigma^2 (default: estimated federatedly from the clients' within-cluster spreads)" },
  scale: { type: 'string', choices: ['none', 'standard'], help: 'feature scaling fitted on the training rows (default: standard for --data, none for --blobs)' },
  'test-share': { type: 'number', default: 0.2, help: "each client's share of rows held out for testing" },
  central: { type: 'string', default: 'full', choices: [...COVARIANCE_TYPES, 'none'], help: 'covariance type of the centralized GMM baseline with the true K, or none' },
  search: { type: 'string', default: 'kdtree', choices: ['kdtree', 'all-pairs'], help: 'how the server finds overlapping balls' },
  separation: { type: 'string', default: 'on', choices: ['on', 'off'], help: "after the paper's merge, join super-clusters closer than the closest two clusters any client holds apart (off: the paper's merge alone)" },
  repeats: { type: 'int', default: 1, help: 'repeats with fresh splits, partitions (and blobs)' },
  seed: { type: 'int', default: 0, help: 'seed of the first repeat' },
};

function parsePhi(text: string): number | number[] {
  if (text === 'tune') return [...PHI_GRID];
  const values = text.split(',').map((t) => Number(t.trim()));
  if (values.some((v) => !(v > 0) || !Number.isFinite(v))) throw new InvalidParameterError(`--phi takes a positive number, a comma-separated list or "tune", got "${text}"`);
  return values.length === 1 ? values[0]! : values;
}

export function fedgemConfig(o: Options): FedGEMExperimentConfig {
  return {
    clients: o.clients as number,
    clustersPerClient: o['clusters-per-client'] as [number, number],
    imbalance: o.imbalance as FedGEMExperimentConfig['imbalance'],
    rounds: o.rounds as number,
    localSteps: o['local-steps'] as number,
    phi: parsePhi(String(o.phi)),
    variance: o.variance as number | undefined,
    scale: (o.scale ?? (o.blobs ? 'none' : 'standard')) as 'none' | 'standard',
    testShare: o['test-share'] as number,
    central: o.central as CovarianceType | 'none',
    search: o.search as 'kdtree' | 'all-pairs',
    separation: o.separation !== 'off',
    repeats: o.repeats as number,
    seed: o.seed as number,
  };
}

const f3 = (v: number | null | undefined) => (v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(3));
/** A variance: 4 significant digits (standardized features make it small). */
const g4 = (v: number | undefined) => (v === undefined ? '-' : v.toPrecision(4));

/** The variance line of the report: given, or the federated estimate of each repeat. */
function varianceLine(r: FedGEMExperimentReport): string {
  if (r.config.variance !== undefined) return `variance sigma^2 = ${r.config.variance} (given)`;
  const e = r.runs.map((x) => x.varianceEstimate).filter((v): v is NonNullable<typeof v> => v !== undefined);
  if (e.length === 0) return 'variance sigma^2: not estimated';
  const first = e[0]!;
  const range = e.length > 1 ? `; over the repeats ${g4(Math.min(...e.map((v) => v.variance)))} to ${g4(Math.max(...e.map((v) => v.variance)))}` : '';
  return `variance sigma^2 estimated ${g4(first.variance)} (first repeat: within-cluster sum of squares ${g4(first.sumSquares)} over ${first.degreesOfFreedom} degrees of freedom from ${first.clients.length} clients' k-means)${range}`;
}

/** What the separation step did in the first repeat (and the uncounted components); every repeat's is in the table. */
function separationLine(x: FedGEMExperimentReport['runs'][number], on: boolean): string {
  const joined = !on
    ? 'separation step off (--separation off): the paper\'s merge alone'
    : x.separation === undefined
      ? 'separation step: nothing joined (no variance at the server, or no client with two counted components)'
      : `separation step (first repeat): ${x.separationJoins} super-clusters joined, closer than ${g4(x.separation)}`;
  return `${joined}; ${x.uncounted} components of fewer than two rows not counted in K`;
}

export function formatFedgemReport(r: FedGEMExperimentReport, title: string): string {
  const first = r.runs[0]!;
  const head = ['client', 'clusters', 'train', 'test', 'super-clusters', 'ARI', 'silhouette', 'central ARI'];
  const rows = first.clients.map((c) => [c.client, c.clusters.join(','), String(c.nTrain), String(c.nTest), c.memberships.join(','), f3(c.ari), f3(c.silhouette), f3(c.centralAri)]);
  const repeats = r.runs.map((x) => [String(x.seed), String(x.trueK), String(x.estimatedK), String(x.separationJoins), String(x.uncounted), String(x.phi), g4(x.varianceEstimate?.variance ?? r.config.variance), f3(x.ari), f3(x.centralAri), f3(x.centralGlobalAri), String(x.rounds), x.seconds.toFixed(2)]);
  const d = r.data;
  const s = r.summary;
  return [
    title,
    `${d.rows} rows x ${d.features} features, ${d.clusters} clusters; ${r.config.clients} clients holding ${r.config.clustersPerClient.join('..')} clusters each (imbalance: ${r.config.imbalance ?? 'none'}); features scaled: ${r.config.scale ?? 'none'}`,
    varianceLine(r),
    separationLine(first, r.config.separation !== false),
    '',
    `first repeat (seed ${first.seed}): estimated K ${first.estimatedK} (true ${first.trueK}), phi ${first.phi}; ARI ${f3(first.ari)} weighted over clients (central GMM with the true K: ${f3(first.centralAri)})`,
    ...textTable(head, rows),
    '',
    'repeats:',
    ...textTable(['seed', 'true K', 'estimated K', 'joined', 'uncounted', 'phi', 'sigma^2', 'ARI', 'central ARI', 'central ARI (all)', 'rounds', 'seconds'], repeats),
    '',
    `estimated K right in ${s.kCorrect} of ${r.runs.length}; ARI ${f3(s.meanAri)} ± ${f3(s.stdAri)}${s.meanCentralAri !== undefined ? `, central ${f3(s.meanCentralAri)}` : ''}`,
    ...(r.runs.some((x) => x.excluded.length) ? ['', 'excluded clients:', ...r.runs.flatMap((x) => x.excluded.map((e) => `  seed ${x.seed}: ${e}`))] : []),
  ].join('\n');
}

export async function runFedgemCommand(o: Options): Promise<CommandResult> {
  let source: ClusteringSource;
  let data: Record<string, unknown>;
  if (o.blobs) {
    if (typeof o.data === 'string') throw new InvalidParameterError('give --data FILE or --blobs, not both');
    const blobs = {
      nClusters: o['blob-clusters'] as number,
      nFeatures: o['blob-features'] as number,
      samplesPerCluster: o['blob-samples'] as number,
      minDistance: o['min-distance'] as number,
    };
    source = { kind: 'blobs', blobs };
    data = { source: 'blobs', ...blobs, clusterStd: 1 };
  } else {
    if (typeof o.data !== 'string') throw new InvalidParameterError('--data FILE (with --label) or --blobs is required');
    const list = (v: unknown) => (typeof v === 'string' ? v.split(',').map((c) => c.trim()).filter(Boolean) : undefined);
    const table = labelledFromCells(await readDataFile(o.data, o), {
      label: o.label as string,
      labelGroups: o['label-groups'] as string | undefined,
      oneHot: list(o['one-hot']),
      drop: list(o.drop),
    });
    source = { kind: 'table', X: table.X, labels: table.labels!, name: o.data };
    data = { source: 'csv', file: o.data, label: o.label, labelGroups: o['label-groups'], oneHot: o['one-hot'], drop: o.drop, features: table.featureNames };
  }
  const config = fedgemConfig(o);
  const report = runFedGEMExperiment(source, { ...config, onProgress: progressBar('fedgem') });
  const first = report.runs[0]!;
  const json = {
    data,
    config: report.config,
    estimatedK: first.estimatedK,
    separationJoins: first.separationJoins,
    separation: first.separation,
    uncounted: first.uncounted,
    trueK: first.trueK,
    ari: first.ari,
    silhouette: first.silhouette,
    centralAri: first.centralAri,
    phi: first.phi,
    // sigma^2 the clients used: given, or the first repeat's federated estimate (every repeat's is in runs)
    variance: first.varianceEstimate?.variance ?? config.variance,
    varianceEstimated: config.variance === undefined,
    varianceEstimate: first.varianceEstimate,
    clients: first.clients,
    runs: report.runs,
    summary: report.summary,
  };
  const excluded = report.runs.flatMap((x) => x.excluded.map((e) => `seed ${x.seed}, ${e}`));
  return { text: formatFedgemReport(report, `fedmix fedgem: ${o.blobs ? 'blobs' : o.data}`), json, excluded };
}

export const fedgemCommand: NamedCommand = {
  name: 'fedgem',
  summary: 'FedGEM: federated clustering with an unknown number of clusters (CSV or blobs), against a central GMM',
  options: fedgemOptions,
  run: runFedgemCommand,
};
