/**
 * serve(): a federation's server as a user runs it (Node). It starts the
 * embedded MQTT broker unless pointed at an existing one, waits for its
 * minimum of clients, runs the algorithm's rounds on the runtime and returns
 * the result. Clients join from anywhere with join() or `fedmix client`.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import { formatValue, InvalidParameterError } from '../errors.js';
import { isArray, optionKeys, readArray, readOptions, readRecord, requireSeconds } from '../validate.js';
import { algorithm as registered, makeServer, restoreServer, saveCheckpoint } from './registry/index.js';
import type { Encoding } from './messages/codec.js';
import { resolvePolicy, type FederationPolicy } from './runtime/policy.js';
import { resumePointOf } from './runtime/resume-point.js';
import { RUN_KEYS, runFederation, runPolicy, type FederationResult, type RunCheckpoint, type RunHooks, type RunOptions } from './runtime/run.js';
import { StateDirectory } from './state-dir.js';
import { startBroker, type BrokerTls, type RunningBroker } from './transport/broker.js';
import { PACKET_OVERHEAD_BYTES, type BrokerLimits } from './transport/limits.js';
import { MqttTransport } from './transport/mqtt.js';
import { readCertificates, type Certificates } from './transport/tls.js';
import type { ConnectionChange } from './transport/reconnect.js';
import type { Transport } from './transport/transport.js';
import { validateAccounts, validateId } from './transport/topics.js';

/** The server's username on an embedded broker (client ids cannot take it). */
export const SERVER_USER = 'fedmix-server';

/** The run's policy and hooks (onRound, onCheckpoint, stopWhen: see RunHooks), and where and with whom it runs. */
export interface ServeOptions extends FederationPolicy, RunHooks {
  /** a registered algorithm's name (the built-in ones, or one of registerAlgorithm) */
  algorithm: string;
  /** the algorithm's server options (as its server role takes them) */
  options: Record<string, unknown>;
  /** the federation's name: its topics live under fedmix/<federation>/ */
  federation: string;
  /** the clients that may join, with their passwords (the embedded broker's accounts; with `broker`, the ids allowed) */
  clients: readonly { id: string; password?: string }[];
  /**
   * an existing broker, and the server's account there; without it an
   * embedded broker is started. `ca`: for an mqtts:// or wss:// broker, the CA
   * certificates (PEM) to trust instead of the system's, e.g. a private CA's;
   * a broker they do not vouch for is an UntrustedBrokerError
   */
  broker?: { url: string; username?: string; password?: string; ca?: Certificates };
  /**
   * the embedded broker: interface and ports (default 127.0.0.1, 1883, no
   * WebSockets), TLS (mqtts://, wss://) and its limits per connection (the
   * packet limit's default follows maxMessageBytes); `log` is told what it
   * refuses and drops (e.g. messages for a client away too long)
   */
  listen?: { host?: string; port?: number; webSocketPort?: number; tls?: BrokerTls; limits?: BrokerLimits; log?: (message: string) => void };
  /** the wire form of requests (default 'binary') */
  encoding?: Encoding;
  /** told where the embedded broker listens, once it does */
  onListening?: (broker: { url: string; wsUrl?: string }) => void;
  /**
   * seconds to keep reconnecting, with backoff, after the connection to the
   * broker is lost (a restart of an existing broker) before the run fails
   * with a BrokerError (default 60); the round in flight waits, and is
   * repeated once the broker is back
   */
  reconnectFor?: number;
  /** told when the connection to the broker is lost, comes back, or is given up */
  onConnection?: (change: ConnectionChange) => void;
  /**
   * a checkpoint saved with saveCheckpoint (onCheckpoint) to resume from: the
   * server role is restored from it (with `options`) and the run goes on from
   * the round after (RunOptions.resume)
   */
  resume?: unknown;
  /**
   * a directory for the server's state (docs/operations.md): the run's
   * checkpoint is saved there, atomically, after every complete round, and a
   * server started again with the same directory (after a crash or a kill)
   * resumes after the last complete round, with the same run id. A
   * directory of another run (algorithm, federation, clients or options), of
   * a finished run, or damaged is an InvalidParameterError naming why.
   */
  state?: string;
  /** told, before the first round, the run's id and, when it resumes, the round it resumes after and where from */
  onStart?: (run: { id: string; resumedAfter?: number; state?: string }) => void;
}

/** Every option of ServeOptions, for readOptions (the compiler checks it is complete). */
const SERVE_KEYS = optionKeys<ServeOptions>()({
  algorithm: true, options: true, federation: true, clients: true, broker: true, listen: true, encoding: true, onListening: true, resume: true, state: true, onStart: true, onRound: true, onCheckpoint: true, stopWhen: true,
  onInvalid: true, minClients: true, minReplies: true, fraction: true, sampleSeed: true, roundTimeout: true, joinTimeout: true, maxMessageBytes: true, maxExcludedShare: true, maxMissedRounds: true, privacy: true, secureAggregation: true,
  reconnectFor: true, onConnection: true,
});

/**
 * Runs one federation to its end; the server role is disposed, what it
 * produced returned. The run fails with a FederationError when the policy
 * cannot be met: too few clients or replies, or more than maxExcludedShare
 * of the clients excluded (default 0.5); below that, the result's `excluded`
 * lists every client left out, with the round and the reason.
 */
export async function serve(given: ServeOptions): Promise<FederationResult> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object');
  // read once: the caller's objects are not read again (getters, Proxies)
  const options = { ...(readOptions(given, SERVE_KEYS) as ServeOptions) };
  const algorithm = registered(options.algorithm).name;
  const federation = validateId('federation', options.federation);
  const listed = isArray('clients', options.clients) ? readArray('clients', options.clients) : [];
  if (listed.length === 0) throw new InvalidParameterError('clients must list the ids that may join');
  options.clients = listed.map((c, i) => readOptions(c as { id: string; password?: string }, ['id', 'password'], `clients[${i}]`) as { id: string; password?: string });
  if (options.broker !== undefined) {
    const broker = readOptions(options.broker, ['url', 'username', 'password', 'ca'], 'broker') as NonNullable<ServeOptions['broker']>;
    // read once, and checked before anything listens (the transport reads the list again, as it reads a caller's)
    const ca = readCertificates('broker.ca', broker.ca);
    options.broker = { ...broker, ...(ca ? { ca } : {}) };
  }
  if (options.listen !== undefined) options.listen = readOptions(options.listen, ['host', 'port', 'webSocketPort', 'tls', 'limits', 'log'], 'listen');
  if (options.onListening !== undefined && typeof options.onListening !== 'function') throw new InvalidParameterError(`onListening must be a function, got ${formatValue(options.onListening)}`);
  if (options.onConnection !== undefined && typeof options.onConnection !== 'function') throw new InvalidParameterError(`onConnection must be a function, got ${formatValue(options.onConnection)}`);
  if (options.reconnectFor !== undefined) requireSeconds('reconnectFor', options.reconnectFor);
  const ids = options.clients.map((c) => validateId('client id', c.id));
  if (ids.includes(SERVER_USER)) throw new InvalidParameterError(`"${SERVER_USER}" is the server's name; choose another client id`);
  // the run's own options only: the rest (broker, clients, ...) are for the set-up
  const run = readRecord(options, RUN_KEYS.filter((k) => k !== 'excludedBefore') as (keyof ServeOptions & keyof RunOptions)[], 'options');
  // the policy and the server role first: their options are checked before anything listens
  resolvePolicy(runPolicy(run));
  for (const hook of ['onStart'] as const) if (options[hook] !== undefined && typeof options[hook] !== 'function') throw new InvalidParameterError(`${hook} must be a function, got ${formatValue(options[hook])}`);
  if (options.state !== undefined && options.resume !== undefined) throw new InvalidParameterError('give state (a directory the run saves itself to and resumes from) or resume (a checkpoint), not both');
  const state = options.state === undefined ? undefined : StateDirectory.open(options.state, { algorithm, federation, clients: ids, options: options.options });
  const resume = options.resume ?? state?.checkpoint;
  const server = resume === undefined ? makeServer(algorithm, options.options) : restoreServer(resume, options.options, algorithm);
  let federationBroker: FederationBroker | undefined;
  try {
    // the run's id: the saved run's when resuming, else the state directory's or a fresh one; the transport announces it
    const point = resume === undefined ? undefined : resumePointOf(server, resume);
    const id = point?.run ?? state?.run ?? randomBytes(16).toString('hex');
    if (state) run.onCheckpoint = saving(state, algorithm, run.onCheckpoint);
    federationBroker = await openFederation({ ...options, federation, run: id });
    options.onStart?.({ id, ...(point ? { resumedAfter: point.round } : {}), ...(state ? { state: state.path } : {}) });
    const transport = state ? finishingFirst(federationBroker.transport, state) : federationBroker.transport;
    return await runFederation(server, transport, { ...run, run: id, ...(resume === undefined ? {} : { resume }) });
  } finally {
    server.dispose?.();
    await federationBroker?.close();
  }
}

/** The run's checkpoint hook with the state directory's save after the caller's own (a failed save ends the run, as the hook's error would). */
function saving(state: StateDirectory, algorithm: string, own: RunHooks['onCheckpoint']): NonNullable<RunHooks['onCheckpoint']> {
  return async (checkpoint: RunCheckpoint) => {
    await own?.(checkpoint);
    await state.save(saveCheckpoint(algorithm, checkpoint));
  };
}

/**
 * The transport with the state directory marked finished before the clients
 * are told the run is over: a server killed after that point is not resumed
 * to wait for clients that have already left.
 */
function finishingFirst(transport: MqttTransport, state: StateDirectory): Transport & { run: string } {
  return {
    name: transport.name,
    run: transport.run,
    available: (min, timeoutMs, excluded) => transport.available(min, timeoutMs, excluded),
    exchange: (round, messages, options) => transport.exchange(round, messages, options),
    finish: async (outcome) => {
      try {
        if (outcome.ok) await state.finish(outcome.reason);
      } finally {
        // the clients are told even when the mark could not be written (the error then ends the run)
        await transport.finish(outcome);
      }
    },
  };
}

/** A federation's broker as its server sees it: the server's transport, the URL clients connect to, and how to stop. */
export interface FederationBroker {
  transport: MqttTransport;
  url: string;
  /** stops the embedded broker (nothing for an existing one: the transport ends its own connection when the run finishes) */
  close(): Promise<void>;
}

/**
 * The server's side of a federation over MQTT: the embedded broker started
 * with the clients' accounts (or an existing broker), and the server's
 * transport connected to it, allowing only the listed clients, in their order.
 */
export async function openFederation(options: Pick<ServeOptions, 'federation' | 'clients' | 'broker' | 'listen' | 'encoding' | 'onListening' | 'maxMessageBytes' | 'reconnectFor' | 'onConnection'> & { run?: string }): Promise<FederationBroker> {
  const federation = options.federation;
  const ids = options.clients.map((c) => c.id);
  let broker: RunningBroker | undefined;
  try {
    let url: string;
    let username: string | undefined;
    let password: string | undefined;
    let tls: { ca: Certificates; certificateFingerprint?: string } | undefined;
    if (options.broker) {
      ({ url, username, password } = options.broker);
      if (options.broker.ca !== undefined) tls = { ca: options.broker.ca };
    } else {
      password = randomBytes(18).toString('base64url');
      username = SERVER_USER;
      const accounts = validateAccounts([
        { username, password, role: 'server' },
        ...options.clients.map((c) => {
          if (typeof c.password !== 'string' || c.password.length === 0) throw new InvalidParameterError(`client ${c.id} needs a password for the embedded broker`);
          return { username: c.id, password: c.password, role: 'client' as const };
        }),
      ]);
      const listen = options.listen;
      // a run whose messages may be larger than the codec's default needs packets that carry them
      const limits = options.maxMessageBytes === undefined ? listen?.limits : { maxPacketBytes: options.maxMessageBytes + PACKET_OVERHEAD_BYTES, ...listen?.limits };
      broker = await startBroker({ federation, users: accounts, host: listen?.host, port: listen?.port ?? 1883, webSocketPort: listen?.webSocketPort, tls: listen?.tls, limits, log: listen?.log });
      url = broker.url;
      if (listen?.tls) {
        // the server reaches its own broker by address, which its certificate need not name: it trusts that very certificate
        const cert = String(listen.tls.cert instanceof Uint8Array ? Buffer.from(listen.tls.cert) : listen.tls.cert);
        tls = { ca: [...rootCertificates, cert], certificateFingerprint: new X509Certificate(cert).fingerprint256 };
      }
      options.onListening?.({ url: broker.url, wsUrl: broker.wsUrl });
    }
    const transport = await MqttTransport.connect({ url, federation, username, password, clients: ids, encoding: options.encoding, reconnectFor: options.reconnectFor, onConnection: options.onConnection, run: options.run, ...tls });
    const running = broker;
    return { transport, url, close: async () => void (await running?.close()) };
  } catch (e) {
    await broker?.close();
    throw e;
  }
}
