/**
 * `fedmix feddistr`: FedDistr's one round against the FedAvg family's many,
 * on Fashion-MNIST (ten classes as subclasses of five task classes) or a CSV
 * with a subclass column and a superclass column or a grouping. Tables of
 * FedDistr's accuracy and bytes, each baseline's final accuracy and the rounds
 * it needs to reach FedDistr's one-round accuracy, and the accuracy curves;
 * the same in the JSON. In process by default; with --broker every
 * federation of the experiment (FedDistr's round, every baseline round) runs
 * over MQTT, each simulated client an MQTT client (simulateOverMqtt), with the
 * same results. `fedmix server --algorithm feddistr` with `fedmix client` runs
 * FedDistr with clients on other machines.
 */
import { FASHION_MNIST_CLASSES } from '../../data/datasets/fashion-mnist.js';
import { loadFashionMnist } from '../../data/datasets/fashion-mnist-node.js';
import { InvalidParameterError } from '../../errors.js';
import {
  BASELINES,
  fashionMnistSubclasses,
  FASHION_MNIST_TASK_GROUPS,
  GLOBAL_MODELS,
  parseTaskGroups,
  runFedDistrExperiment,
  runFedDistrExperimentWith,
  subclassDataFromCells,
  type Baseline,
  type FedDistrExperimentConfig,
  type FedDistrExperimentData,
  type FedDistrExperimentReport,
  type GlobalModel,
} from './run.js';
import { simulateOverMqtt, type SimulateOverMqttOptions } from '../../federated/simulate-mqtt.js';
import type { OptionSpec, Options } from '../../cli/args.js';
import type { NamedCommand } from '../../cli/command.js';
import type { CommandResult } from '../../cli/io.js';
import { readDataFile } from '../../cli/data.js';
import { progressBar } from '../../cli/progress.js';
import { textTable } from '../../cli/table.js';

export const feddistrOptions: Record<string, OptionSpec> = {
  data: { type: 'string', default: 'fashion-mnist', help: 'fashion-mnist (Debian\'s files, or --fmnist-dir) or a CSV file with a header row' },
  label: { type: 'string', default: 'label', help: 'CSV: the subclass (base distribution) column' },
  superclass: { type: 'string', help: 'CSV: the superclass (task class) column; or --groups' },
  groups: { type: 'string', help: 'subclasses grouped into task classes, "A+B,C+D" (Fashion-MNIST default: T-shirt/top+Shirt,Trouser+Dress,Pullover+Coat,Sandal+Sneaker,Bag+Ankle boot)' },
  'fmnist-dir': { type: 'string', help: 'Fashion-MNIST: the folder of its files (default Debian\'s)' },
  'fmnist-rows': { type: 'int', default: 12000, help: 'Fashion-MNIST: training rows dealt to clients (stratified)' },
  'public-rows': { type: 'int', default: 2000, help: 'Fashion-MNIST: further training rows, public: the encoder is fitted on them' },
  'test-rows': { type: 'int', default: 2000, help: 'Fashion-MNIST: rows of the test split evaluated on (stratified)' },
  'test-share': { type: 'number', default: 0.2, help: 'CSV: share of rows held out for testing' },
  'public-share': { type: 'number', default: 0.1, help: 'CSV: share of rows made public (the encoder and input scaling are fitted on them)' },
  clients: { type: 'int', default: 10, help: 'number of clients' },
  entanglement: { type: 'number', default: 0, help: 'the target average entangled coefficient (0: disentangled, 1: IID)' },
  encoder: { type: 'string', choices: ['identity', 'pca', 'autoencoder'], help: 'fitted on the public rows (default: autoencoder for Fashion-MNIST, identity for a CSV)' },
  latent: { type: 'int', default: 16, help: "the PCA's components or the Autoencoder's code width" },
  'ae-epochs': { type: 'int', default: 20, help: "the Autoencoder's training epochs" },
  'base-k-range': { type: 'range', default: [1, 3], help: 'base distributions per task label and client, chosen by BIC in this range' },
  covariance: { type: 'string', default: 'full', choices: ['full', 'diagonal'], help: 'the base distributions\' covariances' },
  shrinkage: { type: 'string', default: 'oas', choices: ['oas', 'ledoit-wolf', 'none'], help: 'each covariance shrunk toward a multiple of the identity: OAS, Ledoit-Wolf (not with --noise) or none (maximum likelihood)' },
  'reg-covar': { type: 'number', default: 1e-6, help: "added to each covariance's diagonal, times the client's average variance (> 0)" },
  cost: { type: 'string', default: 'wasserstein', choices: ['wasserstein', 'bhattacharyya'], help: 'the matching cost between Gaussians' },
  threshold: { type: 'number', help: 'a matched pair at or below this cost is parallel (default: a bound per pair, twice the cost sampling alone gives two estimates of one Gaussian from their row counts)' },
  merge: { type: 'string', default: 'weighted', choices: ['weighted', 'dominant'], help: "a parallel set's representative: its members' count-weighted merge, or the member fitted on the most rows (the paper's)" },
  task: { type: 'string', default: 'both', choices: ['generative', 'mlp', 'both'], help: "FedDistr's global model: the consolidated set as a Bayes classifier, an MLP on rows drawn from it, or both" },
  'synthetic-rows': { type: 'int', help: 'rows drawn for the MLP (default: as many as the clients hold)' },
  hidden: { type: 'string', default: '64', help: 'the MLP\'s hidden layers, comma-separated widths (every method trains it)' },
  'mlp-epochs': { type: 'int', default: 100, help: 'epochs of the MLPs trained in one place (FedDistr\'s, central)' },
  baselines: { type: 'string', default: 'fedavg,fedprox,scaffold,central', help: `comma-separated, of ${BASELINES.join(', ')}; or none` },
  rounds: { type: 'int', default: 50, help: 'the baselines\' communication rounds' },
  'local-epochs': { type: 'int', default: 1, help: 'the baselines\' local epochs per round' },
  'batch-size': { type: 'int', default: 32, help: 'the baselines\' local batch size' },
  'learning-rate': { type: 'number', default: 0.05, help: 'the baselines\' local SGD learning rate' },
  mu: { type: 'number', default: 0.01, help: "FedProx's proximal weight" },
  noise: { type: 'number', help: 'differential privacy: epsilon per base distribution (Gaussian noise on means and covariances; needs --clip)' },
  clip: { type: 'number', help: 'differential privacy: encoded rows clipped to this L2 norm' },
  delta: { type: 'number', default: 1e-5, help: 'differential privacy: delta' },
  curve: { type: 'int', default: 10, help: 'the curve table shows every this many rounds' },
  repeats: { type: 'int', default: 1, help: 'repeats with fresh splits and partitions' },
  seed: { type: 'int', default: 0, help: 'seed of the first repeat' },
  broker: { type: 'string', help: 'run every federation over MQTT, the clients as MQTT clients: "embedded" (a broker on a free port of 127.0.0.1) or an existing broker\'s URL (mqtt://host:port); default: in process' },
  federation: { type: 'string', default: 'feddistr', help: '--broker: the federation, its topics fedmix/<name>/...' },
  username: { type: 'string', help: "--broker URL: the server's username there" },
  password: { type: 'string', help: "--broker URL: the server's password there" },
  'client-password': { type: 'string', help: '--broker URL: the password of every simulated client (usernames are their ids, 0, 1, ...)' },
  'round-timeout': { type: 'number', default: 600, help: '--broker: seconds a round waits for replies (the clients compute one after another in this process)' },
};

function list(v: unknown): string[] {
  return typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

/** The experiment's configuration from the options. */
export function feddistrConfig(o: Options, fashion: boolean): FedDistrExperimentConfig {
  const baselines = String(o.baselines) === 'none' ? [] : list(o.baselines);
  for (const b of baselines) if (!(BASELINES as readonly string[]).includes(b)) throw new InvalidParameterError(`--baselines takes ${BASELINES.join(', ')} or none, got "${b}"`);
  const hidden = list(o.hidden).map(Number);
  if (hidden.length === 0 || hidden.some((w) => !Number.isInteger(w) || w < 1)) throw new InvalidParameterError(`--hidden takes comma-separated positive widths, got "${String(o.hidden)}"`);
  if ((o.noise === undefined) !== (o.clip === undefined)) throw new InvalidParameterError('--noise (epsilon) and --clip go together');
  const [kMin, kMax] = o['base-k-range'] as [number, number];
  const task = String(o.task);
  return {
    clients: o.clients as number,
    entanglement: o.entanglement as number,
    encoder: (o.encoder ?? (fashion ? 'autoencoder' : 'identity')) as FedDistrExperimentConfig['encoder'],
    latent: o.latent as number,
    autoencoderEpochs: o['ae-epochs'] as number,
    kMin,
    kMax,
    covariance: o.covariance as 'full' | 'diagonal',
    shrinkage: o.shrinkage as 'oas' | 'ledoit-wolf' | 'none',
    regCovar: o['reg-covar'] as number,
    cost: o.cost as 'wasserstein' | 'bhattacharyya',
    threshold: o.threshold as number | undefined,
    merge: o.merge as 'dominant' | 'weighted',
    models: task === 'both' ? [...GLOBAL_MODELS] : [task as GlobalModel],
    syntheticRows: o['synthetic-rows'] as number | undefined,
    hiddenLayers: hidden,
    mlpEpochs: o['mlp-epochs'] as number,
    baselines: baselines as Baseline[],
    rounds: o.rounds as number,
    localEpochs: o['local-epochs'] as number,
    batchSize: o['batch-size'] as number,
    learningRate: o['learning-rate'] as number,
    mu: o.mu as number,
    privacy: o.noise === undefined ? undefined : { epsilon: o.noise as number, clip: o.clip as number, delta: o.delta as number },
    testFraction: o['test-share'] as number,
    publicFraction: o['public-share'] as number,
    repeats: o.repeats as number,
    seed: o.seed as number,
  };
}

async function fashionData(o: Options): Promise<FedDistrExperimentData> {
  const groups = typeof o.groups === 'string' ? parseTaskGroups(o.groups) : FASHION_MNIST_TASK_GROUPS;
  for (const g of groups) for (const name of g) if (!FASHION_MNIST_CLASSES.includes(name)) throw new InvalidParameterError(`--groups names "${name}", not a Fashion-MNIST class (${FASHION_MNIST_CLASSES.join(', ')})`);
  const dir = o['fmnist-dir'] as string | undefined;
  const nTrain = o['fmnist-rows'] as number;
  const nPublic = o['public-rows'] as number;
  // one stratified draw split in two: the public rows are disjoint from the clients'
  const [train, test] = await Promise.all([
    loadFashionMnist({ dir, n: nTrain + nPublic, sample: 'stratified', seed: o.seed as number }),
    loadFashionMnist({ dir, split: 'test', n: o['test-rows'] as number, sample: 'stratified', seed: o.seed as number }),
  ]);
  const all = fashionMnistSubclasses(train, groups);
  const pub: number[] = [];
  const rest: number[] = [];
  // nPublic rows evenly spaced over the draw (in file order, classes mixed) are public
  const N = all.X.nRows;
  for (let i = 0; i < N; i++) (Math.floor(((i + 1) * nPublic) / N) > Math.floor((i * nPublic) / N) ? pub : rest).push(i);
  const t = fashionMnistSubclasses(test, groups);
  return {
    train: { ...all, X: all.X.selectRows(rest), subclasses: Int32Array.from(rest, (i) => all.subclasses[i]!), tasks: Int32Array.from(rest, (i) => all.tasks[i]!) },
    test: { X: t.X, tasks: t.tasks },
    public: all.X.selectRows(pub),
  };
}

const f3 = (v: number | null | undefined) => (v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(3));
const kb = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${(v / 1024).toFixed(1)}`);

export function formatFeddistrReport(r: FedDistrExperimentReport, title: string, every: number): string {
  const d = r.dataset;
  const models = (r.config.models ?? [...GLOBAL_MODELS]) as GlobalModel[];
  const runs = r.runs.map((x) => [
    String(x.seed),
    x.coefficient.toFixed(4),
    ...models.map((m) => f3(x.feddistr.accuracy[m])),
    `${x.feddistr.estimatedBaseDistributions}/${x.feddistr.trueBaseDistributions ?? '-'}`,
    f3(x.feddistr.adjustedRandIndex),
    kb(x.feddistr.bytesUp),
    kb(x.feddistr.bytesDown),
    kb(x.feddistr.describeBytes),
  ]);
  const base = r.summary.baselines.map((b) => {
    const runsOf = r.runs.map((x) => x.baselines.find((y) => y.method === b.method)!);
    const perRound = b.method === 'central' || b.curve.length < 2 ? 0 : b.curve[b.curve.length - 1]!.bytes / b.curve.length;
    return [
      b.method,
      f3(b.finalAccuracy.mean),
      ...models.map((m) => {
        const s = b.roundsToMatch[m]!;
        return b.method === 'central' ? (s.matched ? 'yes' : 'no') : s.mean === null ? `> ${b.curve.length}` : `${s.mean.toFixed(1)} (${s.matched}/${r.runs.length})`;
      }),
      kb(perRound),
      kb(b.curve[b.curve.length - 1]?.bytes),
      runsOf.reduce((a, x) => a + x.seconds, 0).toFixed(1),
    ];
  });
  const fed = r.summary.baselines.filter((b) => b.method !== 'central');
  const rounds = fed.length ? fed[0]!.curve.map((p) => p.round).filter((k) => k === 1 || k % every === 0) : [];
  const curve = rounds.map((k) => [String(k), ...fed.map((b) => f3(b.curve[k - 1]?.accuracy)), ...fed.map((b) => kb(b.curve[k - 1]?.bytes))]);
  return [
    title,
    `${d.clientRows} client rows, ${d.testRows} test, ${d.publicRows} public; ${d.features} features encoded to ${d.latent}; ${d.subclasses} subclasses in ${d.tasks} task classes; ${r.config.clients} clients at entanglement ${r.config.entanglement}`,
    '',
    'FedDistr, one round (bytes in KiB):',
    ...textTable(['seed', 'coefficient', ...models.map((m) => `${m} acc`), 'bases found/true', 'ARI', 'up', 'down', 'of it requests (encoder)'], runs),
    '',
    `FedDistr accuracy: ${models.map((m) => `${m} ${f3(r.summary.feddistr.accuracy[m]?.mean)}`).join(', ')}; ${kb(r.summary.feddistr.bytes.mean)} KiB in all`,
    '',
    'baselines (rounds to reach FedDistr\'s one-round accuracy; bytes in KiB):',
    ...textTable(['method', 'final acc', ...models.map((m) => `rounds to ${m}`), 'per round', 'in all', 'seconds'], base),
    ...(curve.length ? ['', 'accuracy and KiB sent by round (mean over repeats):', ...textTable(['round', ...fed.map((b) => b.method), ...fed.map((b) => `${b.method} KiB`)], curve)] : []),
    ...(r.runs.some((x) => x.feddistr.excluded.length) ? ['', 'excluded clients:', ...r.runs.flatMap((x) => x.feddistr.excluded.map((e) => `  seed ${x.seed}: ${e}`))] : []),
  ].join('\n');
}

export async function runFeddistrCommand(o: Options): Promise<CommandResult> {
  const fashion = o.data === 'fashion-mnist';
  let data: FedDistrExperimentData;
  let source: Record<string, unknown>;
  if (fashion) {
    data = await fashionData(o);
    source = { source: 'fashion-mnist', groups: data.train.taskNames };
  } else {
    if (typeof o.data !== 'string') throw new InvalidParameterError('--data fashion-mnist or a CSV file is required');
    if (o.superclass === undefined && o.groups === undefined) throw new InvalidParameterError('a CSV needs --superclass COLUMN or --groups "A+B,C+D"');
    const train = subclassDataFromCells(await readDataFile(o.data, o), { subclass: o.label as string, superclass: o.superclass as string | undefined, groups: o.groups as string | undefined });
    data = { train };
    source = { source: 'csv', file: o.data, subclass: o.label, superclass: o.superclass, groups: train.taskNames };
  }
  const config = { ...feddistrConfig(o, fashion), onProgress: progressBar('feddistr') };
  const broker = o.broker as string | undefined;
  const mqtt = broker === undefined ? undefined : brokerOptions(o, broker);
  const report = mqtt ? await runFedDistrExperimentWith(data, config, (s) => simulateOverMqtt(s, mqtt)) : runFedDistrExperiment(data, config);
  const where = broker === undefined ? 'in process' : `over MQTT (${broker === 'embedded' ? 'the embedded broker' : broker})`;
  const transport = broker === undefined ? { transport: 'in-process' } : { transport: 'mqtt', broker: broker === 'embedded' ? 'embedded' : 'external', federation: o.federation };
  const excluded = report.runs.flatMap((x) => [
    ...x.feddistr.excluded.map((e) => `seed ${x.seed}, feddistr, ${e}`),
    ...x.baselines.flatMap((b) => b.excluded.map((e) => `seed ${x.seed}, ${b.method}, ${e}`)),
  ]);
  return { text: formatFeddistrReport(report, `fedmix feddistr: ${fashion ? 'Fashion-MNIST' : o.data}, ${where}`, o.curve as number), json: { data: source, run: transport, ...report }, excluded };
}

/** --broker embedded, or an existing broker with the server's account and the clients' password. */
function brokerOptions(o: Options, broker: string): SimulateOverMqttOptions {
  const common = { federation: o.federation as string, roundTimeout: o['round-timeout'] as number };
  if (broker === 'embedded') {
    for (const name of ['username', 'password', 'client-password']) if (o[name] !== undefined) throw new InvalidParameterError(`--${name} is for an existing broker (--broker URL); the embedded one makes its own accounts`);
    return common;
  }
  return { ...common, broker: { url: broker, username: o.username as string | undefined, password: o.password as string | undefined, clientPassword: o['client-password'] as string | undefined } };
}

export const feddistrCommand: NamedCommand = {
  name: 'feddistr',
  summary: "FedDistr's one round against FedAvg, FedProx, SCAFFOLD and central training (Fashion-MNIST or a CSV with subclasses)",
  options: feddistrOptions,
  run: runFeddistrCommand,
};
