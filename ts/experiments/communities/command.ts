/**
 * `fedmix communities`: the community-based federated anomaly detection
 * paper's evaluation (Nardi, Valerio, Passarella) on Fashion-MNIST or a
 * labelled CSV: for each p and q, the communities by inlier class (Tables
 * I/II), their adjusted Rand index against the ideal groups, the test ROC-AUC
 * of local, community and ideal training (Tables III/IV), the merged
 * communities by class (Tables V/VI), and the association's bytes and time.
 * In process by default; with --broker, every federation (each association,
 * each community's training) runs over MQTT: the embedded broker
 * (--broker embedded) or an existing one that lets clients in without
 * passwords (--broker mqtt://host:port).
 */
import { randomBytes } from 'node:crypto';
import { MinMaxScaler } from '../../data/scale.js';
import { loadFashionMnist } from '../../data/datasets/fashion-mnist-node.js';
import { InvalidDataError, InvalidParameterError } from '../../errors.js';
import { labelledFromCells } from '../dataset.js';
import { formatCommunityTables, type CommunityTrainingOptions } from './training.js';
import { planCommunityExperiment, type CommunityDataset, type CommunityExperimentConfig, type CommunityExperimentReport } from './sweep.js';
import { OCSVM_WARNING } from '../../federated/communities/descriptor.js';
import { jobPolicy, runPlan, runPlanSync, type FederationJob } from '../../federated/runtime/plan.js';
import { runFederation, type FederationResult } from '../../federated/runtime/run.js';
import { SERVER_USER } from '../../federated/serve.js';
import { startBroker, type RunningBroker } from '../../federated/transport/broker.js';
import { join, MqttTransport } from '../../federated/transport/mqtt.js';
import { COVARIANCE_TYPES } from '../../models/gaussian-mixture.js';
import { Rng } from '../../random.js';
import type { OptionSpec, Options } from '../../cli/args.js';
import type { NamedCommand } from '../../cli/command.js';
import type { CommandResult } from '../../cli/io.js';
import { readDataFile } from '../../cli/data.js';
import { progressBar } from '../../cli/progress.js';
import { textTable } from '../../cli/table.js';

export const communitiesOptions: Record<string, OptionSpec> = {
  data: { type: 'string', help: 'fashion-mnist, or a CSV (Arrow IPC, Parquet) file with a header row and a class column (required)' },
  label: { type: 'string', help: 'CSV: the class column (required with a CSV)' },
  'test-share': { type: 'number', default: 0.2, help: "CSV: the share of rows held out as the test split (Fashion-MNIST has its own)" },
  p: { type: 'string', default: '9', help: 'clients per inlier class: a number or a comma-separated list to sweep, e.g. 9,18,27,36' },
  contamination: { type: 'number', default: 0.1, help: "d: each client's share of outlier rows, in (0, 0.5); also the detectors' contamination" },
  q: { type: 'string', default: '0.08', help: 'association tolerance: a number or a comma-separated list, e.g. 0.08,0.06 (each q is its own association run)' },
  classes: { type: 'string', help: 'comma-separated classes taking part (default: all)' },
  detector: { type: 'string', default: 'ocsvm', choices: ['ocsvm', 'gmm', 'autoencoder'], help: 'the local detector of the association (ocsvm: nu 0.5, gamma auto, as the paper\'s public code); an ocsvm detector carries rows of its client\'s data to the others' },
  covariance: { type: 'string', default: 'full', choices: COVARIANCE_TYPES, help: 'gmm detector: covariance type' },
  'gmm-components': { type: 'int', default: 1, help: 'gmm detector: mixture components' },
  'noise-epsilon': { type: 'number', help: "gmm detector: Gaussian noise on the shared mixture at this epsilon in (0, 1] (with --noise-clip; see README's privacy notes)" },
  'noise-delta': { type: 'number', default: 1e-5, help: 'gmm detector noise: delta' },
  'noise-clip': { type: 'number', help: 'gmm detector noise: rows clipped to this L2 norm for the fit' },
  'noise-seed': { type: 'int', help: 'gmm detector noise: seed (tests only; default: fresh from the system)' },
  federated: { type: 'string', default: 'autoencoder', choices: ['autoencoder', 'fedgengmm'], help: 'what each community trains with FedAvg (autoencoder 64-32-64) or FedGenGMM' },
  rounds: { type: 'int', default: 10, help: 'FedAvg rounds of each community (and of the ideal groups)' },
  epochs: { type: 'int', help: 'the most local epochs per FedAvg round (default 10; early stopping may stop a client sooner)' },
  'local-epochs': { type: 'int', help: 'a client alone (the local baseline, a community of one): the most epochs (default rounds x epochs; the paper\'s code: 40)' },
  'early-stopping': { type: 'string', default: 'separation', choices: ['separation', 'validation-loss', 'none'], help: "each client's epochs stop once the separation of its reconstruction errors at --contamination (or the loss of its held-out rows) has not improved for --patience epochs; the best epoch is kept" },
  patience: { type: 'int', default: 3, help: 'early stopping: epochs without improvement before a client stops' },
  'validation-share': { type: 'number', default: 0.1, help: "--early-stopping validation-loss: the share of each client's rows held out" },
  'batch-size': { type: 'int', default: 32, help: 'batch size' },
  'learning-rate': { type: 'number', default: 1e-3, help: "Adam's learning rate" },
  'rows-per-client': { type: 'int', help: 'training rows per client (default: the most the classes allow); small values make quick runs' },
  'test-rows-per-client': { type: 'int', help: 'test rows per client (default: every test row of its inlier class, outliers at ratio d / (1 - d))' },
  partners: { type: 'int', help: 'partners each client tests (default: every other client, as the paper)' },
  method: { type: 'string', default: 'fast-greedy', choices: ['fast-greedy', 'louvain'], help: 'community detection' },
  'relay-mb': { type: 'number', default: 8, help: "association: the most detector data (MiB) in one relay message; a client's partners take as many rounds as they need" },
  repeats: { type: 'int', default: 1, help: 'repeats with fresh partitions' },
  seed: { type: 'int', default: 0, help: 'seed of the first repeat' },
  broker: { type: 'string', help: 'run every federation over MQTT: "embedded" (a broker started here) or mqtt://host:port of a broker open to the clients' },
  federation: { type: 'string', default: 'communities', help: 'with --broker: the federations are named <name>-1, <name>-2, ...' },
};

const list = (v: unknown) => (typeof v === 'string' ? v.split(',').map((c) => c.trim()).filter(Boolean) : undefined);

function numbers(name: string, text: string, integer: boolean): number[] {
  const values = list(text)!.map(Number);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v) || (integer && !Number.isInteger(v)))) {
    throw new InvalidParameterError(`--${name} takes ${integer ? 'an integer' : 'a number'} or a comma-separated list, got "${text}"`);
  }
  return values;
}

/** Fashion-MNIST's own splits, or a CSV's rows split at random and min-max scaled to [0, 1] on the training rows (the autoencoder's sigmoid output needs it). */
async function loadData(o: Options): Promise<{ data: CommunityDataset; source: Record<string, unknown>; numericLabels: boolean }> {
  if (typeof o.data !== 'string') throw new InvalidParameterError('--data fashion-mnist or --data FILE.csv (with --label) is required');
  if (o.data === 'fashion-mnist') {
    const [train, test] = await Promise.all([loadFashionMnist(), loadFashionMnist({ split: 'test' })]);
    return { data: { train: { X: train.X, labels: train.labels }, test: { X: test.X, labels: test.labels } }, source: { dataset: 'fashion-mnist' }, numericLabels: true };
  }
  if (typeof o.label !== 'string') throw new InvalidParameterError('--label COLUMN is required with a CSV file (the class of each row)');
  const table = labelledFromCells(await readDataFile(o.data, o), { label: o.label });
  const share = o['test-share'] as number;
  if (!(share > 0 && share < 1)) throw new InvalidParameterError(`--test-share must be in (0, 1), got ${share}`);
  const n = table.X.nRows;
  const nTest = Math.round(n * share);
  if (nTest < 1 || nTest >= n) throw new InvalidDataError(`${o.data} has ${n} rows: too few to hold out ${share} of them`);
  const rng = new Rng(o.seed as number);
  let order: Int32Array;
  try {
    order = rng.permutation(n);
  } finally {
    rng.dispose();
  }
  const testIdx = order.subarray(0, nTest);
  const trainIdx = order.subarray(nTest);
  const scaler = new MinMaxScaler().fit(table.X.selectRows(trainIdx));
  const names = table.classNames!;
  const labelsOf = (idx: Int32Array) => Array.from(idx, (i) => names[table.labels![i]!]!);
  const data: CommunityDataset = {
    train: { X: scaler.transform(table.X.selectRows(trainIdx)), labels: labelsOf(trainIdx) },
    test: { X: scaler.transform(table.X.selectRows(testIdx)), labels: labelsOf(testIdx) },
  };
  return { data, source: { file: o.data, label: o.label, testShare: share, scaling: 'min-max on the training rows' }, numericLabels: false };
}

function relayBytes(mb: number): number {
  if (!(mb > 0 && mb <= 1024)) throw new InvalidParameterError(`--relay-mb must be in (0, 1024], got ${mb}`);
  return Math.round(mb * 2 ** 20);
}

/** --early-stopping and its options, as trainCommunities takes them (separation at --contamination). */
function earlyStopping(o: Options): CommunityTrainingOptions['earlyStopping'] {
  const patience = o.patience as number;
  switch (o['early-stopping']) {
    case 'none':
      return 'none';
    case 'validation-loss':
      return { monitor: 'validation-loss', validationShare: o['validation-share'] as number, patience };
    default:
      return { monitor: 'separation', contamination: o.contamination as number, patience };
  }
}

export function communitiesConfig(o: Options, numericLabels: boolean): CommunityExperimentConfig {
  const epsilon = o['noise-epsilon'] as number | undefined;
  const clip = o['noise-clip'] as number | undefined;
  if ((epsilon === undefined) !== (clip === undefined)) throw new InvalidParameterError('the GMM detector noise needs both --noise-epsilon and --noise-clip');
  if (epsilon !== undefined && o.detector !== 'gmm') throw new InvalidParameterError('--noise-epsilon is for --detector gmm (the only detector that shares no rows and no weights)');
  const classes = list(o.classes);
  return {
    clientsPerClass: numbers('p', String(o.p), true),
    q: numbers('q', String(o.q), false),
    contamination: o.contamination as number,
    classes: classes && (numericLabels ? classes.map(Number) : classes),
    detector: o.detector as CommunityExperimentConfig['detector'],
    detectorOptions: {
      gmm: { nComponents: o['gmm-components'] as number, covarianceType: o.covariance as (typeof COVARIANCE_TYPES)[number], seed: o.seed as number },
      ...(epsilon !== undefined ? { noise: { epsilon, clip: clip!, delta: o['noise-delta'] as number } } : {}),
    },
    noiseSeed: o['noise-seed'] as number | undefined,
    partners: o.partners as number | undefined,
    method: o.method as CommunityExperimentConfig['method'],
    maxRelayBytes: relayBytes(o['relay-mb'] as number),
    federated: o.federated as CommunityExperimentConfig['federated'],
    training: {
      rounds: o.rounds as number,
      epochs: o.epochs as number | undefined,
      batchSize: o['batch-size'] as number,
      learningRate: o['learning-rate'] as number,
      localEpochs: o['local-epochs'] as number | undefined,
      earlyStopping: earlyStopping(o),
    },
    rowsPerClient: o['rows-per-client'] as number | undefined,
    testRowsPerClient: o['test-rows-per-client'] as number | undefined,
    repeats: o.repeats as number,
    seed: o.seed as number,
  };
}

/**
 * Runs each job over MQTT: its own federation name, the clients joining from
 * this process as remote clients would; on the embedded broker, one broker per
 * job with a fresh password per account.
 */
function mqttRunner(broker: string, base: string): (job: FederationJob) => Promise<FederationResult> {
  let count = 0;
  return async (job) => {
    const federation = `${base}-${++count}`;
    const ids = job.clients.map((c) => c.id);
    const embedded = broker === 'embedded';
    const secret = new Map(ids.map((id) => [id, embedded ? randomBytes(12).toString('base64url') : undefined]));
    const serverPassword = embedded ? randomBytes(18).toString('base64url') : undefined;
    let running: RunningBroker | undefined;
    try {
      if (embedded) {
        running = await startBroker({
          federation,
          users: [{ username: SERVER_USER, password: serverPassword!, role: 'server' }, ...ids.map((id) => ({ username: id, password: secret.get(id)!, role: 'client' as const }))],
        });
      }
      const url = running?.url ?? broker;
      const transport = await MqttTransport.connect({ url, federation, username: embedded ? SERVER_USER : undefined, password: serverPassword, clients: ids });
      const joins = job.clients.map((client) => join({ url, federation, client, password: secret.get(client.id), waitForBroker: 10 }));
      try {
        return await runFederation(job.server, transport, { ...jobPolicy(job), minClients: ids.length, joinTimeout: 60 });
      } finally {
        await Promise.allSettled(joins);
      }
    } finally {
      await running?.close();
    }
  };
}

const f3 = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(3));
const pm = (m: { mean: number; std: number }) => `${f3(m.mean)} ± ${f3(m.std)}`;
const epochs = (m: { mean: number; std: number }) => `${m.mean.toFixed(1)} ± ${m.std.toFixed(1)}`;
const kb = (b: number) => (b < 1024 ? `${b.toFixed(0)} B` : b < 1024 ** 2 ? `${(b / 1024).toFixed(1)} kB` : `${(b / 1024 ** 2).toFixed(1)} MB`);

export function formatCommunitiesReport(r: CommunityExperimentReport, title: string): string {
  const c = r.config;
  const lines = [
    title,
    `classes ${c.classes.join(',')}; d = ${c.contamination}; detector ${c.detector}, partners ${c.partners}, ${c.method}; communities train ${c.federated}; ${c.repeats} repeat${c.repeats === 1 ? '' : 's'} from seed ${c.seed}`,
    `${r.dataset.trainRows} training and ${r.dataset.testRows} test rows of ${r.dataset.features} features`,
    '',
    'Test ROC-AUC, mean ± std over every client (of every repeat); ARI of the communities against the ideal groups; the association phase',
    ...textTable(
      ['p', 'q', 'local', 'community', 'ideal', 'ARI', 'communities', 'assoc. bytes', 'assoc. s'],
      r.summary.map((s) => [String(s.p), String(s.q), pm(s.local), pm(s.community), pm(s.ideal), f3(s.ari.mean), s.communities.mean.toFixed(1), kb(s.associationBytes.mean), s.associationSeconds.mean.toFixed(2)]),
    ),
  ];
  for (const run of r.runs) {
    for (const a of run.associations) {
      lines.push(
        '',
        `p = ${run.p}, q = ${a.q}, repeat ${run.repeat + 1} (seed ${run.seed}): ${run.clients} clients of ${run.rowsPerClient} rows; ${a.communities.length} communities, ARI ${f3(a.ari)}, modularity ${f3(a.modularity)}; association ${kb(a.bytesUp + a.bytesDown)} (${kb(a.bytesUp)} up) in ${a.rounds} rounds, ${a.seconds.toFixed(2)} s`,
        ...(run.local.epochs && a.community.epochs && run.idealRun.epochs
          ? [`local epochs per client (early stopping): local ${epochs(run.local.epochs)}, community ${epochs(a.community.epochs)}, ideal ${epochs(run.idealRun.epochs)}`]
          : []),
        formatCommunityTables({
          membership: a.membership,
          auc: { local: run.local.auc, community: a.community.auc, ideal: run.idealRun.auc },
          ...(a.merged.length ? { merged: a.merged } : {}),
        }),
        ...(a.excluded.length ? ['excluded from the association:', ...a.excluded.map((e) => `  ${e}`)] : []),
      );
    }
  }
  return lines.join('\n');
}

export async function runCommunitiesCommand(o: Options): Promise<CommandResult> {
  if (o.detector === 'ocsvm') {
    process.stderr.write(`fedmix communities: ${OCSVM_WARNING}\n`);
  }
  const broker = o.broker as string | undefined;
  if (broker !== undefined && broker !== 'embedded' && !/^(mqtts?|wss?):\/\//.test(broker)) throw new InvalidParameterError(`--broker takes "embedded" or a URL like mqtt://host:1883, got "${broker}"`);
  const { data, source, numericLabels } = await loadData(o);
  const config = communitiesConfig(o, numericLabels);
  const plan = planCommunityExperiment(data, { ...config, onProgress: progressBar('communities') });
  const report = broker === undefined ? runPlanSync(plan) : await runPlan(plan, mqttRunner(broker, o.federation as string));
  const title = `fedmix communities: ${o.data}${broker ? ` over MQTT (${broker})` : ''}`;
  const excluded = report.runs.flatMap((run) => run.associations.flatMap((a) => a.excluded.map((e) => `p = ${run.p}, q = ${a.q}, repeat ${run.repeat + 1}, association: ${e}`)));
  return { text: formatCommunitiesReport(report, title), json: { data: source, transport: broker === undefined ? 'in-process' : `mqtt (${broker})`, ...report }, excluded };
}

export const communitiesCommand: NamedCommand = {
  name: 'communities',
  summary: 'community-based federated anomaly detection (Nardi et al.): association, communities, per-community training, the paper\'s tables (Fashion-MNIST or CSV)',
  options: communitiesOptions,
  run: runCommunitiesCommand,
};
