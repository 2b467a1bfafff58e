/**
 * `fedmix server` and `fedmix client`: a federation as a user runs it, the
 * server on one machine (with the embedded MQTT broker, or an existing one
 * such as mosquitto) and each client wherever its data is.
 *
 * Clients file (--clients): one client per line, "id:password" (the embedded
 * broker's accounts; with --broker the passwords are the broker's business
 * and "id" alone is enough); blank lines and lines starting with # are skipped.
 * A client's data (--data): a CSV with a header; its numeric columns are its
 * rows (--columns to choose them, --drop to leave some out). An MDM client
 * holds a histogram: --counts "3,0,5", or --category COL of a CSV counted over
 * --categories "a,b,c" (the federation's category order).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Matrix } from '../data/matrix.js';
import { InvalidDataError, InvalidParameterError } from '../errors.js';
import { ALGORITHMS, makeClient, matrixData, resultJson, type AlgorithmName, type ClientSpec } from '../federated/algorithms.js';
import { DEM_INITS } from '../federated/dem/server.js';
import { DEFAULT_EPOCHS, DEFAULT_OPTIMIZER } from '../federated/fedavg/server.js';
import { PHI_GRID } from '../federated/fedgem/server.js';
import { DEFAULT_CLIENT_K_RANGE } from '../federated/fedgengmm/client.js';
import { SERVER_STEPS } from '../federated/fedgengmm/server.js';
import { ENCODINGS, type Encoding } from '../federated/messages/codec.js';
import type { RoundRecord } from '../federated/runtime/run.js';
import { serve } from '../federated/serve.js';
import { join } from '../federated/transport/mqtt.js';
import { COVARIANCE_TYPES } from '../models/gaussian-mixture.js';
import { clientSeed } from '../random.js';
import type { OptionSpec, Options } from './args.js';
import { readDataFile } from './data.js';
import { exclusionLine, note, result, type CommandResult } from './io.js';

const algorithm: OptionSpec = { type: 'string', choices: ALGORITHMS, help: 'the algorithm (required)' };
const federation: OptionSpec = { type: 'string', default: 'fedmix', help: 'the federation: its topics are fedmix/<name>/...' };

export const serverOptions: Record<string, OptionSpec> = {
  algorithm,
  federation,
  clients: { type: 'string', help: 'file of the clients that may join: "id:password" per line (required)' },
  broker: { type: 'string', help: 'an existing MQTT broker (mqtt://host:port); default: start the embedded one' },
  username: { type: 'string', help: "the server's username on --broker" },
  password: { type: 'string', help: "the server's password on --broker" },
  host: { type: 'string', default: '127.0.0.1', help: 'embedded broker: the interface to listen on (no TLS: keep it on trusted networks)' },
  port: { type: 'int', default: 1883, help: 'embedded broker: MQTT over TCP (0: a free port)' },
  'ws-port': { type: 'int', help: 'embedded broker: MQTT over WebSockets, for browser clients' },
  'min-clients': { type: 'int', help: 'clients that must be online before a round starts (default: every listed client)' },
  'min-replies': { type: 'int', default: 1, help: 'usable replies a round needs' },
  fraction: { type: 'number', default: 1, help: 'share of the online clients asked each round' },
  'round-timeout': { type: 'number', default: 60, help: 'seconds a round waits for replies; a client that misses it fails that round' },
  'join-timeout': { type: 'number', default: 300, help: 'seconds to wait for --min-clients' },
  'max-excluded-share': { type: 'number', default: 0.5, help: 'the run fails once more than this share of its clients is excluded (invalid replies, refusals); timeouts and dropouts are not exclusions' },
  encoding: { type: 'string', default: 'binary', choices: ENCODINGS, help: 'wire form of the messages (binary: Arrow IPC)' },
  out: { type: 'string', help: 'write the model JSON here (default: print it)' },
  // the algorithms' own options, under the names `fedmix experiment` uses
  features: { type: 'int', help: 'dem, fedgengmm, fedgem, feddistr: the number of features every client has (required)' },
  components: { type: 'int', help: 'dem, fedgengmm: K of the global model; mdm: K' },
  'k-range': { type: 'range', help: 'fedgengmm: choose the global K by BIC in A..B instead of --components; feddistr: the base distributions per task label, chosen by BIC in A..B (default 1..5)' },
  covariance: { type: 'string', default: 'diag', choices: COVARIANCE_TYPES, help: 'dem, fedgengmm: covariance type' },
  init: { type: 'string', default: 'kfed', choices: DEM_INITS, help: 'dem: how the first model is chosen' },
  'max-rounds': { type: 'int', default: 100, help: 'dem: at most this many EM rounds' },
  tol: { type: 'number', help: 'dem: stop when the average log-likelihood moves less (default 1e-3); fedgem: when every radius is below it' },
  h: { type: 'int', default: 100, help: 'fedgengmm: synthetic rows per incoming component' },
  'server-step': { type: 'string', default: 'sample', choices: SERVER_STEPS, help: "fedgengmm: the global fit: EM on rows sampled from the clients' components (sample) or hierarchical EM on their parameters (hierarchical)" },
  'virtual-samples': { type: 'number', help: "fedgengmm --server-step hierarchical: the virtual rows the clients' components stand for (default: the rows they reported)" },
  rounds: { type: 'int', help: "fedgem, fedavg, fedprox, scaffold: communication rounds (default 10); mdm: Algorithm 2's rounds (default 100)" },
  layers: { type: 'string', help: 'fedavg, fedprox, scaffold: layer widths from input to output, comma-separated, e.g. 784,64,32,64,784 (required)' },
  activation: { type: 'string', default: 'relu', choices: ['relu', 'sigmoid', 'tanh', 'identity'], help: 'fedavg, fedprox, scaffold: hidden activation' },
  loss: { type: 'string', default: 'mse', choices: ['mse', 'bce', 'softmax-cross-entropy'], help: 'fedavg, fedprox, scaffold: mse or bce (an autoencoder: rows are their own targets) or softmax-cross-entropy (a classifier: clients give --label)' },
  'output-activation': { type: 'string', help: 'fedavg, fedprox, scaffold: output activation (default: sigmoid, or softmax with softmax-cross-entropy)' },
  epochs: { type: 'int', default: DEFAULT_EPOCHS, help: 'fedavg, fedprox, scaffold: local epochs E per round' },
  'batch-size': { type: 'int', default: 32, help: 'fedavg, fedprox, scaffold: local batch size B' },
  optimizer: { type: 'string', choices: ['sgd', 'adam'], help: 'fedavg, fedprox: the local optimizer (default adam; scaffold: sgd only)' },
  'learning-rate': { type: 'number', help: "fedavg, fedprox, scaffold: the local learning rate (default: adam's 0.01, sgd's 0.3)" },
  mu: { type: 'number', help: "fedprox: the proximal weight mu (required)" },
  'server-learning-rate': { type: 'number', default: 1, help: "scaffold: the server's step eta_g" },
  phi: { type: 'string', default: '1', help: 'fedgem: the final-radius hyperparameter, a comma-separated list, or "tune"' },
  variance: { type: 'string', default: 'estimate', help: "fedgem: sigma^2 for the clients without their own --variance: estimate (from the clients' within-cluster spreads), a number, or clients (none sent)" },
  separation: { type: 'string', default: 'on', choices: ['on', 'off'], help: "fedgem: after the paper's merge, join super-clusters closer than the closest two clusters one client holds apart (off: the paper's merge alone)" },
  categories: { type: 'int', help: 'mdm: C, the categories of every histogram (required)' },
  'max-count': { type: 'int', help: 'mdm: N, the largest client size the model covers (required)' },
  cohort: { type: 'int', help: 'mdm: clients per round (default: all)' },
  detector: { type: 'string', default: 'ocsvm', choices: ['ocsvm', 'gmm', 'autoencoder'], help: "communities: every client's local detector" },
  contamination: { type: 'number', default: 0.1, help: "communities: the detectors' contamination, in (0, 0.5)" },
  q: { type: 'number', default: 0.08, help: 'communities: accept a partner when |in_ji - in_ii| <= q' },
  partners: { type: 'int', help: 'communities: partners each client draws (default: every other client)' },
  method: { type: 'string', default: 'fast-greedy', choices: ['fast-greedy', 'louvain'], help: 'communities: community detection' },
  seed: { type: 'int', default: 0, help: "seed of the server's random choices" },
};

export const clientOptions: Record<string, OptionSpec> = {
  algorithm,
  federation,
  broker: { type: 'string', help: 'the MQTT broker (mqtt://host:port, ws://host:port/mqtt) (required)' },
  id: { type: 'string', help: "this client's id, also its username (required)" },
  password: { type: 'string', help: "this client's password" },
  'password-file': { type: 'string', help: 'read the password from this file instead' },
  wait: { type: 'number', default: 60, help: 'seconds to keep trying while the broker cannot be reached (it may start after the clients)' },
  data: { type: 'string', help: 'CSV file of this client\'s rows, with a header, Arrow IPC or Parquet (required unless --counts)' },
  columns: { type: 'string', help: 'comma-separated feature columns (default: every column but --drop)' },
  drop: { type: 'string', help: 'comma-separated columns to leave out (e.g. a label)' },
  validation: { type: 'string', help: 'fedgem: CSV of rows that score the phi candidates (same columns)' },
  'k-range': { type: 'range', help: `fedgengmm: choose the local K by BIC in A..B (default ${DEFAULT_CLIENT_K_RANGE.join('..')}, B at most this client's rows)` },
  covariance: { type: 'string', default: 'diag', choices: COVARIANCE_TYPES, help: 'fedgengmm: covariance type of the local model' },
  components: { type: 'int', help: 'fedgem: K_c, the clusters in this client\'s data (required)' },
  variance: { type: 'number', help: "fedgem: the clusters' known variance sigma^2 (default: the server's, by default its federated estimate)" },
  'local-steps': { type: 'int', default: 1, help: 'fedgem: EM steps per round' },
  counts: { type: 'string', help: 'mdm: the histogram, comma-separated counts' },
  category: { type: 'string', help: 'mdm: the CSV column whose values are counted' },
  categories: { type: 'string', help: 'mdm: the categories in the federation\'s order, comma-separated (with --category)' },
  label: { type: 'string', help: 'fedavg, fedprox, scaffold with a classifier: the CSV column of integer class labels; feddistr: the task labels (left out of the features)' },
  detector: { type: 'string', default: 'ocsvm', choices: ['ocsvm', 'gmm', 'autoencoder'], help: "communities: this client's local detector (the server's --detector); an ocsvm detector carries rows of this client's data to the others" },
  contamination: { type: 'number', default: 0.1, help: "communities: the detector's contamination, in (0, 0.5) (the server's --contamination)" },
  seed: { type: 'int', default: 0, help: "the run's seed: this client's random choices use a seed derived from it and --id (every client of a run draws its own)" },
};

const list = (v: unknown) => (typeof v === 'string' ? v.split(',').map((c) => c.trim()).filter(Boolean) : undefined);

function required<T>(o: Options, name: string): T {
  if (o[name] === undefined) throw new InvalidParameterError(`--${name} is required`);
  return o[name] as T;
}

/** "id:password" lines; "id" alone when the passwords live elsewhere. */
export function readClientsFile(path: string, passwords: boolean): { id: string; password?: string }[] {
  const out: { id: string; password?: string }[] = [];
  readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .forEach((line, i) => {
      const t = line.trim();
      if (t === '' || t.startsWith('#')) return;
      const at = t.indexOf(':');
      const id = at < 0 ? t : t.slice(0, at);
      const password = at < 0 ? undefined : t.slice(at + 1);
      if (passwords && !password) throw new InvalidDataError(`${path}, line ${i + 1}: "${id}" has no password; write id:password`);
      out.push({ id, password });
    });
  if (out.length === 0) throw new InvalidDataError(`${path} lists no client`);
  return out;
}

function varianceOption(text: string): number | 'estimate' | 'clients' {
  if (text === 'estimate' || text === 'clients') return text;
  const v = Number(text);
  if (text.trim() === '' || !(v > 0) || !Number.isFinite(v)) throw new InvalidParameterError(`--variance takes a positive number, "estimate" or "clients", got "${text}"`);
  return v;
}

function phiOption(text: string): number | number[] {
  if (text === 'tune') return [...PHI_GRID];
  const values = text.split(',').map((t) => Number(t.trim()));
  if (values.some((v) => !(v > 0) || !Number.isFinite(v))) throw new InvalidParameterError(`--phi takes a positive number, a comma-separated list or "tune", got "${text}"`);
  return values.length === 1 ? values[0]! : values;
}

/** The server role's options from the command line, by algorithm. */
export function serverRoleOptions(a: AlgorithmName, o: Options): Record<string, unknown> {
  const seed = o.seed as number;
  switch (a) {
    case 'dem':
      return { nFeatures: required(o, 'features'), nComponents: required(o, 'components'), covarianceType: o.covariance, init: o.init, maxRounds: o['max-rounds'], tol: o.tol, seed };
    case 'fedgengmm': {
      const range = o['k-range'] as [number, number] | undefined;
      if (range === undefined && o.components === undefined) throw new InvalidParameterError('give --components K or --k-range A..B for the global model');
      return {
        nFeatures: required(o, 'features'), nComponents: o.components, kMin: range?.[0], kMax: range?.[1], covarianceType: o.covariance, h: o.h, seed,
        serverStep: o['server-step'], virtualSamples: o['virtual-samples'],
      };
    }
    case 'fedgem':
      return { nFeatures: required(o, 'features'), rounds: o.rounds, phi: phiOption(String(o.phi)), tol: o.tol, variance: varianceOption(String(o.variance)), separation: o.separation !== 'off' };
    case 'mdm':
      return { nComponents: required(o, 'components'), nCategories: required(o, 'categories'), maxCount: required(o, 'max-count'), rounds: o.rounds, cohort: o.cohort, seed };
    case 'fedavg':
    case 'fedprox':
    case 'scaffold': {
      const sizes = list(required(o, 'layers'))!.map(Number);
      const loss = o.loss as string;
      const network = { sizes, activation: o.activation, outputActivation: o['output-activation'] ?? (loss === 'softmax-cross-entropy' ? 'softmax' : 'sigmoid'), loss, seed };
      // the algorithm's default optimizer, with the name or learning rate given
      const name = (o.optimizer as 'sgd' | 'adam' | undefined) ?? DEFAULT_OPTIMIZER[a].name;
      const learningRate = (o['learning-rate'] as number | undefined) ?? (name === DEFAULT_OPTIMIZER[a].name ? DEFAULT_OPTIMIZER[a].learningRate : name === 'adam' ? DEFAULT_OPTIMIZER.fedavg.learningRate : DEFAULT_OPTIMIZER.scaffold.learningRate);
      const common = { network, rounds: o.rounds, epochs: o.epochs, batchSize: o['batch-size'], optimizer: { name, learningRate } };
      if (a === 'fedprox') return { ...common, mu: required(o, 'mu') };
      if (a === 'scaffold') return { ...common, serverLearningRate: o['server-learning-rate'] };
      return common;
    }
    case 'communities':
      return { nFeatures: required(o, 'features'), kind: o.detector, contamination: o.contamination, q: o.q, partners: o.partners, method: o.method, seed };
    case 'feddistr': {
      // the identity encoder over --features columns; the base distributions per task label in --k-range
      const range = o['k-range'] as [number, number] | undefined;
      return { dimension: required(o, 'features'), kMin: range?.[0], kMax: range?.[1], seed };
    }
  }
}

/** Said on stderr wherever OCSVM detectors are exchanged: they carry client rows. */
export const OCSVM_WARNING = "warning: an ocsvm detector carries support vectors, which are rows of its client's training data, to every partner; use --detector gmm (mixture parameters only, optionally with noise) where rows must not leave a client";

export async function runServerCommand(o: Options): Promise<CommandResult> {
  const a = required<AlgorithmName>(o, 'algorithm');
  if (a === 'communities' && o.detector === 'ocsvm') process.stderr.write(`fedmix server: ${OCSVM_WARNING}\n`);
  const embedded = o.broker === undefined;
  const clients = readClientsFile(required(o, 'clients'), embedded);
  const log = note;
  const result = await serve({
    algorithm: a,
    options: serverRoleOptions(a, o),
    federation: o.federation as string,
    clients,
    broker: embedded ? undefined : { url: o.broker as string, username: o.username as string | undefined, password: o.password as string | undefined },
    listen: { host: o.host as string, port: o.port as number, webSocketPort: o['ws-port'] as number | undefined },
    encoding: o.encoding as Encoding,
    minClients: (o['min-clients'] as number | undefined) ?? clients.length,
    minReplies: o['min-replies'] as number,
    fraction: o.fraction as number,
    roundTimeout: o['round-timeout'] as number,
    joinTimeout: o['join-timeout'] as number,
    maxExcludedShare: o['max-excluded-share'] as number,
    onListening: ({ url, wsUrl }) => log(`fedmix server: broker listening on ${url}${wsUrl ? ` and ${wsUrl}` : ''}`),
    onRound: (r: RoundRecord) =>
      log(`round ${r.round} (${r.kind}): ${r.accepted}/${r.asked} accepted${r.failures.length ? `; ${r.failures.map((f) => `${f.client} ${f.kind}${f.excluded ? ', excluded' : ''}`).join('; ')}` : ''}`),
  });
  const model = resultJson(a, result.model);
  const json = { algorithm: a, model, rounds: result.rounds, traffic: result.traffic, excluded: result.excluded, failures: result.failures };
  if (typeof o.out === 'string') writeFileSync(o.out, JSON.stringify(model) + '\n');
  const summary = [
    `fedmix server: ${a}, ${result.rounds} rounds, ${result.traffic.bytesDown} bytes down and ${result.traffic.bytesUp} up`,
    ...(result.excluded.length ? ['excluded:', ...result.excluded.map((e) => `  ${e.reason} (round ${e.round})`)] : []),
    typeof o.out === 'string' ? `model written to ${o.out}` : JSON.stringify(model),
  ];
  return { text: summary.join('\n'), json, excluded: result.excluded.map((e) => exclusionLine(e)) };
}

/** The client's data from the command line: its rows, or (mdm) its histogram as one row. */
async function clientData(a: AlgorithmName, o: Options): Promise<{ data: Matrix; validation?: Matrix; labels?: Int32Array }> {
  if (a === 'mdm') {
    if (o.counts !== undefined) return { data: Matrix.fromRows([list(o.counts)!.map(Number)]) };
    const table = await readDataFile(required<string>(o, 'data'), o);
    const j = table.column(required(o, 'category'));
    const cats = list(required(o, 'categories'))!;
    const counts = new Array<number>(cats.length).fill(0);
    table.texts(j).forEach((v, i) => {
      const k = cats.indexOf(v.trim());
      if (k < 0) throw new InvalidDataError(`data row ${i + 1}: category "${v}" is not among --categories (${cats.join(', ')})`);
      counts[k]! += 1;
    });
    return { data: Matrix.fromRows([counts]) };
  }
  const label = typeof o.label === 'string' ? o.label : undefined;
  const read = async (path: string) => (await readDataFile(path, o)).toMatrix({ columns: list(o.columns), exclude: [...(list(o.drop) ?? []), ...(label ? [label] : [])] }).X;
  const path = required<string>(o, 'data');
  let labels: Int32Array | undefined;
  if (label) {
    const table = await readDataFile(path, o);
    labels = Int32Array.from(table.texts(table.column(label)), (v, i) => {
      const x = Number(v);
      if (!Number.isInteger(x) || x < 0) throw new InvalidDataError(`${path}, row ${i + 1}: the label "${v}" is not a class index (an integer >= 0)`);
      return x;
    });
  }
  return { data: await read(path), validation: typeof o.validation === 'string' ? await read(o.validation) : undefined, labels };
}

export function clientRoleOptions(a: AlgorithmName, o: Options): Record<string, unknown> {
  // one seed for every client of a run would have them all draw alike (every MDM client the same Algorithm 1 component)
  const seed = clientSeed(o.seed as number, required(o, 'id'));
  switch (a) {
    case 'dem':
      return {};
    case 'fedgengmm': {
      const range = o['k-range'] as [number, number] | undefined;
      return { ...(range ? { kMin: range[0], kMax: range[1] } : {}), covarianceType: o.covariance, seed };
    }
    case 'fedgem':
      return { nComponents: required(o, 'components'), variance: o.variance, localSteps: o['local-steps'], seed };
    case 'mdm':
    case 'fedavg':
    case 'fedprox':
    case 'scaffold':
    case 'feddistr':
      return { seed };
    case 'communities':
      return { detector: { kind: o.detector, contamination: o.contamination } };
  }
}

export async function runClientCommand(o: Options): Promise<CommandResult> {
  const a = required<AlgorithmName>(o, 'algorithm');
  const id = required<string>(o, 'id');
  if (a === 'communities' && o.detector === 'ocsvm') process.stderr.write(`fedmix client: ${OCSVM_WARNING}\n`);
  const password = typeof o['password-file'] === 'string' ? readFileSync(o['password-file'], 'utf8').trim() : (o.password as string | undefined);
  const { data, validation, labels } = await clientData(a, o);
  const spec: ClientSpec = { algorithm: a, id, data: matrixData(data), validation: validation && matrixData(validation), labels, options: clientRoleOptions(a, o) };
  const role = makeClient(spec);
  try {
    const r = await join({
      url: required(o, 'broker'),
      federation: o.federation as string,
      client: role,
      password,
      waitForBroker: o.wait as number,
      onRequest: (kind, round) => result(`answered ${kind} of round ${round}`),
    });
    return { text: `fedmix client ${id}: the run ended ${r.ok ? 'well' : `with an error: ${r.reason}`}; ${r.answered} requests answered`, json: r };
  } finally {
    role.dispose();
  }
}
