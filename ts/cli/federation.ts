/**
 * `fedmix server` and `fedmix client`: a federation as a user runs it, the
 * server on one machine (with the embedded MQTT broker, or an existing one
 * such as mosquitto) and each client wherever its data is.
 *
 * Clients file (--clients): one client per line, "id:password" (the embedded
 * broker's accounts; with --broker the passwords are the broker's business
 * and "id" alone is enough); blank lines and lines starting with # are skipped.
 * A client's data (--data): a CSV with a header; its numeric columns are its
 * rows (--columns to choose them, --drop to leave some out), unless its
 * algorithm reads its data its own way (the descriptor's cli.client.data).
 *
 * Both commands run any registered algorithm (the registry's descriptors:
 * their options, how they read them, their warnings); --algorithm-module
 * imports modules that register more before the command line is read.
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomicSync } from '../atomic-write.js';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Matrix } from '../data/matrix.js';
import { FedmixError, InvalidDataError, InvalidParameterError } from '../errors.js';
import { algorithm as registered, algorithmNames, algorithms, makeClient, matrixData, type CliClientContext, type CliContext, type ClientSpec } from '../federated/registry/index.js';
import { ENCODINGS, type Encoding } from '../federated/messages/codec.js';
import type { RoundReport } from '../federated/runtime/run.js';
import type { SecureAggregationPolicy } from '../federated/runtime/policy.js';
import { serve } from '../federated/serve.js';
import { join } from '../federated/transport/mqtt.js';
import { clientSeed } from '../random.js';
import type { OptionSpec, Options } from './args.js';
import { readDataFile } from './data.js';
import { BROKER_OPTIONS, brokerListenOptions, readPem } from './broker-options.js';
import { exclusionLine, note, result, type CommandResult } from './io.js';
import { logFormatOption, requestLine, roundLine, startLine, type LogFormat } from './federation-log.js';
import { clientOutcome, requireClientModel, serverArtifact } from './federation-output.js';
import { BUDGET_OPTIONS, budgetOutcome, clientBudget } from './client-budget.js';

const federation: OptionSpec = { type: 'string', default: 'fedmix', help: 'the federation: its topics are fedmix/<name>/...' };
const algorithmModule: OptionSpec = { type: 'string', help: 'a module (path or URL) that registers algorithms of your own with registerAlgorithm, imported before the options are read; may be repeated' };

/** The options of `fedmix server` that are the command's own, not an algorithm's. */
const SERVER_COMMON: Record<string, OptionSpec> = {
  federation,
  clients: { type: 'string', help: 'file of the clients that may join: "id:password" per line (required)' },
  broker: { type: 'string', help: 'an existing MQTT broker (mqtt://host:port); default: start the embedded one' },
  username: { type: 'string', help: "the server's username on --broker" },
  password: { type: 'string', help: "the server's password on --broker" },
  'tls-ca': { type: 'string', help: "PEM file of the CA certificates to trust for an mqtts:// or wss:// --broker (default: the system's), e.g. a private CA's" },
  host: { type: 'string', default: '127.0.0.1', help: 'embedded broker: the interface to listen on (without --tls-cert, passwords cross in clear text: keep it on trusted networks)' },
  port: { type: 'int', default: 1883, help: 'embedded broker: MQTT over TCP (0: a free port)' },
  'ws-port': { type: 'int', help: 'embedded broker: MQTT over WebSockets, for browser clients' },
  ...BROKER_OPTIONS,
  'min-clients': { type: 'int', help: 'clients that must be online before a round starts (default: every listed client)' },
  'min-replies': { type: 'int', default: 1, help: 'usable replies a round needs' },
  fraction: { type: 'number', default: 1, help: 'share of the online clients asked each round' },
  'round-timeout': { type: 'number', default: 60, help: 'seconds a round waits for replies; a client that misses it fails that round' },
  'join-timeout': { type: 'number', default: 300, help: 'seconds to wait for --min-clients' },
  'max-excluded-share': { type: 'number', default: 0.5, help: 'the run fails once more than this share of its clients is excluded (invalid replies, refusals); timeouts and dropouts are not exclusions' },
  'max-missed-rounds': { type: 'int', default: 3, help: 'a client that misses this many rounds in a row leaves the quorum (rounds stop waiting for it) until it answers again; 0: never' },
  'reconnect-for': { type: 'number', default: 60, help: 'seconds to keep reconnecting when the connection to the broker is lost (a broker restart); the round in flight is then repeated' },
  encoding: { type: 'string', default: 'binary', choices: ENCODINGS, help: 'wire form of the messages (binary: Arrow IPC)' },
  out: { type: 'string', help: 'write the model here, as the one artifact loadModel() reads (default: print it)' },
  'log-format': logFormatOption,
  'secure-aggregation': { type: 'flag', help: 'sum every additive round by secure aggregation (SecAgg+): the server and the broker see only the sum of the survivors\' replies (docs/privacy.md)' },
  'secagg-threshold': { type: 'int', help: 'secure aggregation: shares that rebuild a dropped client\'s mask (default: from the neighbours)' },
  'secagg-neighbours': { type: 'int', help: 'secure aggregation: each client\'s neighbours in the masking graph (default O(log n); clients - 1: all pairs)' },
  'secagg-clip': { type: 'number', help: 'secure aggregation: the largest magnitude a reply\'s values may have (default 2^36); a client with a larger one refuses' },
  'secagg-noise-multiplier': { type: 'number', help: 'distributed DP: each client adds its Skellam share, so that every released sum holds at least Gaussian noise of this many times --secagg-clip, which then bounds the L2 norm of a client\'s whole reply (needs --secagg-clip; an algorithm with its own --dp-noise-multiplier takes that instead; docs/privacy.md)' },
  state: { type: 'string', help: "a directory for the server's state: saved after every round; started again with it after a crash, the server resumes the run (docs/operations.md)" },
  delta: { type: 'number', help: "account the privacy the rounds' noise spends (RDP) at this delta: each round's log says epsilon so far (docs/privacy.md)" },
  'epsilon-budget': { type: 'number', help: 'with --delta: stop the run, before sending it, at the round that would spend more than this epsilon (exit status 0, the model so far)' },
};

/** The options of `fedmix client` that are the command's own. */
const CLIENT_COMMON: Record<string, OptionSpec> = {
  federation,
  broker: { type: 'string', help: 'the MQTT broker (mqtt://host:port, ws://host:port/mqtt) (required)' },
  id: { type: 'string', help: "this client's id, also its username (required)" },
  password: { type: 'string', help: "this client's password" },
  'password-file': { type: 'string', help: 'read the password from this file instead' },
  'tls-ca': { type: 'string', help: 'PEM file of the CA certificates to trust for an mqtts:// or wss:// broker (default: the system\'s), e.g. the server\'s own self-signed certificate' },
  wait: { type: 'number', default: 60, help: 'seconds to keep trying while the broker cannot be reached (it may start after the clients)' },
  'reconnect-for': { type: 'number', default: 60, help: 'seconds to keep reconnecting when the connection to the broker is lost during the run (a broker restart)' },
  data: { type: 'string', help: 'CSV file of this client\'s rows, with a header, Arrow IPC or Parquet (required unless --counts)' },
  columns: { type: 'string', help: 'comma-separated feature columns (default: every column but --drop)' },
  drop: { type: 'string', help: 'comma-separated columns to leave out (e.g. a label)' },
  out: { type: 'string', help: 'write the global model the server sends at the end here, as the artifact loadModel() reads; only for algorithms whose server sends one' },
  'log-format': logFormatOption,
  ...BUDGET_OPTIONS,
};

const SEED: Record<'server' | 'client', OptionSpec> = {
  server: { type: 'int', default: 0, help: "seed of the server's random choices" },
  client: { type: 'int', default: 0, help: "the run's seed: this client's random choices use a seed derived from it and --id (every client of a run draws its own)" },
};

const same = (a: OptionSpec, b: OptionSpec) => a.type === b.type && JSON.stringify(a.default) === JSON.stringify(b.default) && JSON.stringify(a.choices) === JSON.stringify(b.choices);

/**
 * The options of `fedmix server` or `fedmix client` with every registered
 * algorithm's (the descriptors' cli parts): an option several algorithms
 * declare is one option, its help saying which algorithm reads it how
 * ("a, b: what it does"). Two algorithms that declare one name
 * with different types, defaults or choices are an InvalidParameterError.
 */
export function federationOptions(command: 'server' | 'client'): Record<string, OptionSpec> {
  const common = command === 'server' ? SERVER_COMMON : CLIENT_COMMON;
  const table: Record<string, OptionSpec> = {
    algorithm: { type: 'string', choices: algorithmNames(), help: 'the algorithm (required)' },
    'algorithm-module': algorithmModule,
    ...common,
  };
  const own = new Map<string, { spec: OptionSpec; by: string; helps: Map<string, string[]> }>();
  for (const d of algorithms()) {
    for (const [name, spec] of Object.entries(d.cli?.[command]?.options ?? {})) {
      if (name in table || name === 'seed' || name === 'json' || name === 'quiet' || name === 'help' || name === 'delimiter') {
        throw new InvalidParameterError(`algorithm ${d.name} declares --${name}, which is the ${command} command's own option; choose another name`);
      }
      const known = own.get(name);
      if (!known) {
        own.set(name, { spec, by: d.name, helps: new Map([[spec.help, [d.name]]]) });
        continue;
      }
      if (!same(known.spec, spec)) throw new InvalidParameterError(`algorithms ${known.by} and ${d.name} both declare --${name} for fedmix ${command}, with different types, defaults or choices`);
      const names = known.helps.get(spec.help);
      if (names) names.push(d.name);
      else known.helps.set(spec.help, [d.name]);
    }
  }
  for (const [name, { spec, helps }] of own) {
    table[name] = { ...spec, help: [...helps].map(([help, names]) => `${names.join(', ')}: ${help}`).join('; ') };
  }
  table.seed = SEED[command];
  return table;
}

/** The options of `fedmix server` with the built-in algorithms (the command reads its table when it runs, after --algorithm-module). */
export const serverOptions = federationOptions('server');
/** The options of `fedmix client` with the built-in algorithms. */
export const clientOptions = federationOptions('client');

/** Every `--algorithm-module X` (or `--algorithm-module=X`) of a command line, in order. */
export function algorithmModules(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--algorithm-module') {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('-')) throw new InvalidParameterError('--algorithm-module needs a value');
      out.push(next);
      i++;
    } else if (a.startsWith('--algorithm-module=')) {
      out.push(a.slice('--algorithm-module='.length));
    }
  }
  return out;
}

/**
 * Imports the modules of the command line's --algorithm-module options, each
 * of which registers algorithms (registerAlgorithm from the package it
 * imports): a path is relative to the working directory.
 */
export async function loadAlgorithmModules(argv: readonly string[]): Promise<void> {
  for (const m of algorithmModules(argv)) {
    const url = /^[a-z][a-z0-9+.-]*:/i.test(m) && !/^[a-z]:[\\/]/i.test(m) ? m : pathToFileURL(resolve(m)).href;
    try {
      await import(url);
    } catch (e) {
      if (e instanceof FedmixError) throw e;
      throw new InvalidParameterError(`--algorithm-module ${m} could not be imported: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

const list = (v: unknown) => (typeof v === 'string' ? v.split(',').map((c) => c.trim()).filter(Boolean) : undefined);

function required<T>(o: Options, name: string): T {
  if (o[name] === undefined) throw new InvalidParameterError(`--${name} is required`);
  return o[name] as T;
}

/** What an algorithm's CLI part reads the command line with. */
function context(o: Options, seed: number): CliContext {
  return { seed, required: <T>(name: string) => required<T>(o, name), list: (name: string) => list(o[name]) };
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

/** The run's privacy accounting from --delta and --epsilon-budget (a budget needs a delta). */
function privacyPolicy(o: Options): { privacy?: { delta: number; epsilonBudget?: number } } {
  const delta = o.delta as number | undefined;
  const budget = o['epsilon-budget'] as number | undefined;
  if (delta === undefined && budget !== undefined) throw new InvalidParameterError('--epsilon-budget needs --delta: epsilon is spent at a delta');
  return delta === undefined ? {} : { privacy: { delta, ...(budget === undefined ? {} : { epsilonBudget: budget }) } };
}

/** The server role's options from the command line: the algorithm's CLI part reads them (none: {}). */
export function serverRoleOptions(a: string, o: Options): unknown {
  const read = registered(a).cli?.server?.read;
  return read ? read(o, context(o, o.seed as number)) : {};
}

/** `--secure-aggregation` and its settings as the policy's secureAggregation (settings without the flag are an error). */
export function secureOption(o: Options): { secureAggregation?: SecureAggregationPolicy } {
  const settings = {
    threshold: o['secagg-threshold'] as number | undefined,
    neighbours: o['secagg-neighbours'] as number | undefined,
    clip: o['secagg-clip'] as number | undefined,
    noiseMultiplier: o['secagg-noise-multiplier'] as number | undefined,
  };
  const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
  if (!o['secure-aggregation']) {
    if (Object.keys(given).length > 0) throw new InvalidParameterError('--secagg-threshold, --secagg-neighbours, --secagg-clip and --secagg-noise-multiplier need --secure-aggregation');
    return {};
  }
  // said before the broker starts, in the flags' names
  if (settings.noiseMultiplier !== undefined && settings.clip === undefined) throw new InvalidParameterError("--secagg-noise-multiplier needs --secagg-clip: the L2 bound of one client's reply, which the noise is calibrated to");
  return { secureAggregation: given };
}

export async function runServerCommand(o: Options): Promise<CommandResult> {
  const a = registered(required<string>(o, 'algorithm')).name;
  const warning = registered(a).cli?.server?.warning?.(o);
  if (warning) process.stderr.write(`fedmix server: ${warning}\n`);
  const embedded = o.broker === undefined;
  // the server trusts its embedded broker's own certificate (pinned): a CA is for a broker it does not host
  if (embedded && o['tls-ca'] !== undefined) throw new InvalidParameterError('--tls-ca is for --broker (an mqtts:// or wss:// broker the server does not host); the server trusts its embedded broker\'s certificate itself');
  const clients = readClientsFile(required(o, 'clients'), embedded);
  const hosted = brokerListenOptions(o);
  if (!embedded && Object.keys(hosted).length > 0) throw new InvalidParameterError('--tls-cert, --tls-key and the broker limits (--max-packet-bytes, ...) are for the embedded broker; with --broker, configure that broker');
  const ca = typeof o['tls-ca'] === 'string' ? readPem(o['tls-ca'], '--tls-ca') : undefined;
  const log = note;
  const result = await serve({
    algorithm: a,
    options: serverRoleOptions(a, o) as Record<string, unknown>,
    federation: o.federation as string,
    clients,
    broker: embedded ? undefined : { url: o.broker as string, username: o.username as string | undefined, password: o.password as string | undefined, ...(ca === undefined ? {} : { ca }) },
    listen: { host: o.host as string, port: o.port as number, webSocketPort: o['ws-port'] as number | undefined, ...hosted, log: (m) => log(`fedmix server: broker: ${m}`) },
    encoding: o.encoding as Encoding,
    minClients: (o['min-clients'] as number | undefined) ?? clients.length,
    minReplies: o['min-replies'] as number,
    fraction: o.fraction as number,
    roundTimeout: o['round-timeout'] as number,
    joinTimeout: o['join-timeout'] as number,
    maxExcludedShare: o['max-excluded-share'] as number,
    maxMissedRounds: o['max-missed-rounds'] as number,
    ...privacyPolicy(o),
    ...secureOption(o),
    reconnectFor: o['reconnect-for'] as number,
    onListening: ({ url, wsUrl }) => log(`fedmix server: broker listening on ${url}${wsUrl ? ` and ${wsUrl}` : ''}`),
    onConnection: (change) => log(`fedmix server: ${change.message}`),
    state: o.state as string | undefined,
    onStart: (r) => log(startLine(r)),
    onRound: (r: RoundReport) => log(roundLine(r, o['log-format'] as LogFormat, o['max-missed-rounds'] as number)),
  });
  const artifact = serverArtifact(a, result, serverRoleOptions(a, o));
  const model = artifact.model;
  const json = {
    algorithm: a, model, rounds: result.rounds, traffic: result.traffic, excluded: result.excluded, failures: result.failures, history: artifact.history,
    ...(result.privacy ? { privacy: result.privacy } : {}), ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}),
  };
  if (typeof o.out === 'string') writeFileAtomicSync(o.out, JSON.stringify(artifact) + '\n');
  const summary = [
    `fedmix server: ${a}, ${result.rounds} rounds, ${result.traffic.bytesDown} bytes down and ${result.traffic.bytesUp} up`,
    ...(result.stoppedEarly ? [`stopped early after round ${result.stoppedEarly.round}: ${result.stoppedEarly.reason}`] : []),
    ...(result.privacy ? [`privacy spent: epsilon ${Number(result.privacy.epsilon.toPrecision(4))} at delta ${result.privacy.delta}${result.privacy.epsilonBudget === undefined ? '' : ` (budget ${result.privacy.epsilonBudget})`}`] : []),
    ...(result.excluded.length ? ['excluded:', ...result.excluded.map((e) => `  ${e.reason} (round ${e.round})`)] : []),
    typeof o.out === 'string' ? `model written to ${o.out}` : JSON.stringify(model),
  ];
  return { text: summary.join('\n'), json, excluded: result.excluded.map((e) => exclusionLine(e)) };
}

/** The client's data from the command line: the algorithm's own reading (e.g. a histogram as one row), or its rows, validation rows and labels. */
async function clientData(a: string, o: Options, ctx: CliContext): Promise<{ data: Matrix; validation?: Matrix; labels?: Int32Array }> {
  const label = typeof o.label === 'string' ? o.label : undefined;
  const readRows = async (path: string) => (await readDataFile(path, o)).toMatrix({ columns: list(o.columns), exclude: [...(list(o.drop) ?? []), ...(label ? [label] : [])] }).X;
  const own = registered(a).cli?.client?.data;
  if (own) {
    const io: CliClientContext = { ...ctx, readTable: (path) => readDataFile(path, o), readRows };
    return own(o, io);
  }
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
  return { data: await readRows(path), validation: typeof o.validation === 'string' ? await readRows(o.validation) : undefined, labels };
}

/** A client role's options from the command line (its seed derived from --seed and --id): the algorithm's CLI part reads them (none: {}). */
export function clientRoleOptions(a: string, o: Options): Record<string, unknown> {
  // one seed for every client of a run would have them all draw alike (the same random choices in every client)
  const seed = clientSeed(o.seed as number, required(o, 'id'));
  const read = registered(a).cli?.client?.read;
  return (read ? read(o, context(o, seed)) : {}) as Record<string, unknown>;
}

export async function runClientCommand(o: Options): Promise<CommandResult> {
  const a = registered(required<string>(o, 'algorithm')).name;
  const id = required<string>(o, 'id');
  const warning = registered(a).cli?.client?.warning?.(o);
  if (warning) process.stderr.write(`fedmix client: ${warning}\n`);
  const password = typeof o['password-file'] === 'string' ? readFileSync(o['password-file'], 'utf8').trim() : (o.password as string | undefined);
  const { data, validation, labels } = await clientData(a, o, context(o, o.seed as number));
  const spec: ClientSpec = { algorithm: a, id, data: matrixData(data), validation: validation && matrixData(validation), labels, options: clientRoleOptions(a, o) };
  const role = makeClient(spec);
  try {
    if (typeof o.out === 'string') requireClientModel(a, role);
    const budget = await clientBudget(o, id);
    const r = await join({
      ...(budget ? { budget } : {}),
      url: required(o, 'broker'),
      federation: o.federation as string,
      client: role,
      password,
      ...(typeof o['tls-ca'] === 'string' ? { ca: readPem(o['tls-ca'], '--tls-ca') } : {}),
      waitForBroker: o.wait as number,
      reconnectFor: o['reconnect-for'] as number,
      onConnection: (change) => note(`fedmix client ${id}: ${change.message}`),
      onOtherRun: (e) => note(`fedmix ${e.message}`),
      onRequest: (kind, round) => result(requestLine(id, role.protocol, kind, round, o['log-format'] as LogFormat)),
    });
    // a failed run is an error (stderr, exit status 2); the global model, when asked for, is written once the run ended well
    return budgetOutcome(clientOutcome(a, id, r, role, o, (path, text) => writeFileAtomicSync(path, text), (budget?.refusals.length ?? 0) > 0), budget);
  } finally {
    role.dispose();
  }
}
