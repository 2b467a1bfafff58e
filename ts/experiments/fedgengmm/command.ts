/**
 * `fedmix experiment`: the FedGenGMM paper's experiment on a CSV file, every
 * method side by side; a table on stdout, the same numbers as JSON with --json.
 */
import { labelledFromCells } from '../dataset.js';
import { DEFAULT_METHODS, METHODS, runExperiment, type ExperimentConfig, type ExperimentReport, type Method } from './run.js';
import { InvalidParameterError } from '../../errors.js';
import { ENCODINGS, type Encoding } from '../../federated/messages/codec.js';
import { COVARIANCE_TYPES, type CovarianceType } from '../../models/gaussian-mixture.js';
import type { OptionSpec, Options } from '../../cli/args.js';
import type { NamedCommand } from '../../cli/command.js';
import { readDataFile } from '../../cli/data.js';
import { bytesText, meanStd } from './plots.js';
import { writeReport } from './report.js';
import { progressBar } from '../../cli/progress.js';
import { textTable } from '../../cli/table.js';
import type { CommandResult } from '../../cli/io.js';

export const experimentOptions: Record<string, OptionSpec> = {
  data: { type: 'string', help: 'CSV file with a header row, Arrow IPC or Parquet (required)' },
  label: { type: 'string', help: 'class column, for the dirichlet and quantity partitions' },
  'anomaly-label': { type: 'string', help: '0/1 anomaly column; without it, OOD test rows are held-out rows plus Gaussian noise (variance 0.005)' },
  clients: { type: 'int', default: 20, help: 'number of clients' },
  partition: { type: 'string', default: 'dirichlet', choices: ['iid', 'dirichlet', 'quantity', 'shift'], help: 'how training rows become clients' },
  alpha: { type: 'number', default: 0.3, help: 'Dir(alpha) concentration, or classes per client for quantity and shift' },
  beta: { type: 'number', default: 0.5, help: 'shift between the artificial classes of the shift partition' },
  classes: { type: 'int', default: 10, help: 'artificial classes M of the shift partition' },
  'cluster-classes': { type: 'int', help: 'without a class column: the dirichlet and quantity partitions deal this many k-means clusters of the training rows' },
  pca: { type: 'int', help: 'reduce to this many principal components (fitted on training rows)' },
  components: { type: 'int', help: 'K of the global model (required by the dem methods)' },
  'k-range': { type: 'range', help: 'BIC range for the global model, instead of --components' },
  'client-k-range': { type: 'range', help: 'BIC range of the clients (default: --components)' },
  covariance: { type: 'string', default: 'diag', choices: COVARIANCE_TYPES, help: 'covariance type' },
  h: { type: 'int', default: 100, help: 'synthetic rows per incoming component (FedGenGMM)' },
  tol: { type: 'number', default: 1e-3, help: 'EM convergence threshold (all methods)' },
  'virtual-samples': { type: 'number', help: "fedgengmm-hierarchical: the virtual rows the clients' components stand for (default: the training rows)" },
  methods: { type: 'string', default: DEFAULT_METHODS.join(','), help: `comma-separated, any of ${METHODS.join(', ')} (fedgengmm-hierarchical: FedGenGMM with the hierarchical EM server step)` },
  'ood-share': { type: 'number', help: "anomalies' share of the test set (default: 0.1 for noise-made OOD rows, the dataset's own share with --anomaly-label)" },
  repeats: { type: 'int', default: 5, help: 'repeats with fresh splits and partitions' },
  seed: { type: 'int', default: 0, help: 'seed of the first repeat' },
  encoding: { type: 'string', default: 'binary', choices: ENCODINGS, help: 'the wire whose bytes are counted (EXPERIMENTS.md measured json)' },
  report: { type: 'string', help: 'also write a self-contained HTML report with plots of the results to this file' },
};

export function experimentConfig(o: Options): ExperimentConfig {
  const methods = String(o.methods).split(',').map((m) => m.trim()) as Method[];
  for (const m of methods) if (!METHODS.includes(m)) throw new InvalidParameterError(`--methods: unknown method "${m}"; choose from ${METHODS.join(', ')}`);
  if (o.components === undefined && o['k-range'] === undefined) throw new InvalidParameterError('give --components K or --k-range A..B for the global model');
  return {
    clients: o.clients as number,
    partition: o.partition as ExperimentConfig['partition'],
    alpha: o.alpha as number,
    beta: o.beta as number,
    classes: o.classes as number,
    clusterClasses: o['cluster-classes'] as number | undefined,
    pca: o.pca as number | undefined,
    components: o.components as number | undefined,
    kRange: o['k-range'] as [number, number] | undefined,
    clientKRange: o['client-k-range'] as [number, number] | undefined,
    covarianceType: o.covariance as CovarianceType,
    h: o.h as number,
    virtualSamples: o['virtual-samples'] as number | undefined,
    tol: o.tol as number,
    methods,
    repeats: o.repeats as number,
    seed: o.seed as number,
    oodShare: o['ood-share'] as number | undefined,
    encoding: o.encoding as Encoding,
  };
}


export function formatReport(r: ExperimentReport, title: string): string {
  const head = ['method', 'log-likelihood', 'AUC-PR', 'ROC-AUC', 'rounds', 'bytes up', 'bytes down', 'seconds'];
  const rows = r.results.map((x) => [
    x.method,
    meanStd(x.mean.logLikelihood, x.std.logLikelihood),
    meanStd(x.mean.aucPr, x.std.aucPr),
    meanStd(x.mean.rocAuc, x.std.rocAuc),
    x.mean.rounds === 0 ? '-' : x.mean.rounds.toFixed(1),
    bytesText(x.mean.bytesUp),
    bytesText(x.mean.bytesDown),
    x.mean.seconds.toFixed(2),
  ]);
  const excluded = r.results.flatMap((x) => x.excluded.map((e) => `  ${x.method}: ${e}`));
  const d = r.dataset;
  return [
    title,
    `${d.rows} rows x ${d.features} features; train ${d.trainRows} rows over ${r.config.clients} clients (${r.config.partition}); test ${d.testRows} rows of which ${d.anomalies} anomalous; ${r.config.repeats ?? 1} repeats, mean ± std`,
    '',
    ...textTable(head, rows),
    ...(excluded.length ? ['', 'excluded clients:', ...excluded] : []),
  ].join('\n');
}

/** Every client the experiment's federations excluded: method, repeat, client and reason. */
export function experimentExclusions(r: ExperimentReport): string[] {
  return r.results.flatMap((x) => x.excluded.map((e) => `${x.method}, ${e}`));
}

export async function runExperimentCommand(o: Options): Promise<CommandResult> {
  if (typeof o.data !== 'string') throw new InvalidParameterError('--data FILE is required');
  const data = labelledFromCells(await readDataFile(o.data, o), { label: o.label as string | undefined, anomalyLabel: o['anomaly-label'] as string | undefined });
  const config = experimentConfig(o);
  const report = runExperiment(data, { ...config, onProgress: progressBar('experiment') });
  const source = { file: o.data, label: o.label, anomalyLabel: o['anomaly-label'] };
  const title = `fedmix experiment: ${o.data}`;
  const text = formatReport(report, title);
  if (typeof o.report === 'string') writeReport(o.report, report, title, text);
  return { text, json: { data: source, ...report }, excluded: experimentExclusions(report) };
}

export const experimentCommand: NamedCommand = {
  name: 'experiment',
  summary: "the FedGenGMM paper's experiment on a CSV file: every method, scores over repeats",
  options: experimentOptions,
  run: runExperimentCommand,
};
