/**
 * The embedded MQTT broker of a federation (Node only: node:net, node:http,
 * node:crypto; never import it from ts/index.ts). aedes over TCP, and over
 * WebSockets for browser clients, enforcing the access list of topics.ts.
 *
 * MQTT 3.1.1 only: aedes 1.x does not speak MQTT 5, so clients connect with
 * protocolVersion 4 (mqtt.js' default).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, createServer as createTlsServer } from 'node:tls';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { readOptions, requireInteger } from '../../validate.js';
import { BrokerError } from '../../errors.js';
import { guardPacketSizes, resolveBrokerLimits, type BrokerLimits } from './limits.js';
import { boundClientQueues, type ClientQueues } from './client-queues.js';
import { hostPort } from './ports.js';
import { accessRule, validateAccounts, validateId, type BrokerAccount, type BrokerUser, type TopicAction } from './topics.js';

export interface BrokerOptions {
  /** the federation whose topics the broker serves; no other topic is open to anyone */
  federation: string;
  /** who may connect: usernames are client ids (or the server's name), each with its password and role */
  users: readonly BrokerAccount[];
  /** interface to listen on; default 127.0.0.1. Without `tls`, passwords cross in clear text. */
  host?: string;
  /** MQTT over TCP (over TLS with `tls`); default 0, a free port chosen by the kernel */
  port?: number;
  /** MQTT over WebSockets for browser clients (wss with `tls`), on this port (0: a free one); absent: no WebSockets */
  webSocketPort?: number;
  /** serve every listener over TLS (mqtts://, wss://) with this certificate (chain) and its private key, PEM */
  tls?: BrokerTls;
  /** packet sizes, login time, messages in flight and queued per connection (limits.ts; the defaults pass any honest federation) */
  limits?: BrokerLimits;
  /** told of every refused connection, publish and subscription (default: nothing) */
  log?: (message: string) => void;
}

/** A broker's TLS identity, PEM text or bytes. */
export interface BrokerTls {
  /** the certificate, followed by its intermediate CAs if any */
  cert: string | Uint8Array;
  key: string | Uint8Array;
}

export interface RunningBroker {
  /** mqtt://host:port (mqtts:// with TLS) */
  readonly url: string;
  readonly port: number;
  /** ws://host:port/mqtt (wss:// with TLS), when webSocketPort was given */
  readonly wsUrl?: string;
  readonly wsPort?: number;
  /** Disconnects every client and stops listening; resolves when all sockets are closed. */
  close(): Promise<void>;
  /**
   * embedded broker: messages dropped so far because a client's queue was full
   * (limits.maxOfflineMessages, maxOfflineBytes), by client id: while the
   * client was away, or while it was connected and did not acknowledge what
   * it had been sent (client accounts only). The name is older than the
   * second case.
   */
  readonly droppedOffline?: () => Readonly<Record<string, number>>;
  /**
   * embedded broker: what each client's queue holds now, by client id (empty
   * ones left out): QoS 1 messages sent and not yet acknowledged, or waiting
   * for the client to return; `bytes` counts payloads and topics
   */
  readonly queued?: () => Readonly<Record<string, { readonly messages: number; readonly bytes: number }>>;
}

// CONNACK return codes of MQTT 3.1.1 (§3.2.2.3)
const BAD_USERNAME_OR_PASSWORD = 4;

/** Passwords are compared as SHA-256 digests: equal lengths, so timingSafeEqual applies and the length is not leaked. */
function digest(secret: Uint8Array | string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * Starts an aedes broker for one federation:
 * - authentication: username and password of `users`, compared in constant time;
 *   an unknown user, a wrong or missing password get CONNACK 4 (bad user name or
 *   password), the same for all so that a refusal does not tell which was wrong;
 * - the username is the client id (as mosquitto's use_username_as_clientid): a
 *   user can only ever take over its own session, never another client's;
 * - a subscription outside the user's grants is refused with granted QoS 128;
 * - a client's retained publish (its last will included) is refused like one
 *   outside its grants: a retained status would count it online after it left;
 * - a publish outside the grants closes the client's connection (MQTT-3.3.5-2
 *   allows this or a silent acknowledgement): the client learns at once that it
 *   is misbehaving rather than believing its message was delivered, and its last
 *   will tells the server it dropped out;
 * - every delivery is checked again against the receiver's grants (aedes stores
 *   all topics of a SUBSCRIBE packet in a persistent session, refused ones included,
 *   and would queue their messages for the client while it is offline).
 * - bounded connections (`limits`): a packet whose fixed header announces more
 *   than the limit closes the connection before its body is read (a small limit
 *   until the login is accepted, the message limit after); a connection that has
 *   not logged in within connectTimeout is closed; inflight and queued packets
 *   are capped per client, and so is the queue of a persistent session: while
 *   its client is away, and while a client account is connected but does not
 *   acknowledge (client-queues.ts: beyond it, new messages are dropped, counted
 *   and logged);
 * - TCP no-delay on every connection: a round's small messages go out at once,
 *   not after Nagle's algorithm waits for the peer's delayed ACK (~40 ms each way);
 * - TLS (`tls`): mqtts:// and wss:// instead of mqtt:// and ws://.
 * Sessions (clean: false), QoS 1 and last wills use aedes' in-memory persistence.
 */
export async function startBroker(given: BrokerOptions): Promise<RunningBroker> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { federation, users, ... }, got ${formatValue(given)}`);
  const options = readOptions(given, ['federation', 'users', 'host', 'port', 'webSocketPort', 'tls', 'limits', 'log']);
  const federation = validateId('federation', options.federation);
  const users = validateAccounts(options.users!);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.length === 0) throw new InvalidParameterError(`host must be a non-empty string, got ${formatValue(host)}`);
  const port = requireInteger('port', options.port ?? 0, 0, 65535);
  const wsPort = options.webSocketPort === undefined ? undefined : requireInteger('webSocketPort', options.webSocketPort, 0, 65535);
  if (options.log !== undefined && typeof options.log !== 'function') throw new InvalidParameterError(`log must be a function, got ${formatValue(options.log)}`);
  const log = options.log ?? (() => {});
  const limits = resolveBrokerLimits(options.limits);
  const tls = readBrokerTls(options.tls);

  type Rule = (topic: string, action: TopicAction) => boolean;
  const accounts = new Map<string, { user: BrokerUser; digest: Buffer; may: Rule }>();
  for (const u of users) {
    const user = { username: u.username, role: u.role };
    accounts.set(u.username, { user, digest: digest(u.password), may: accessRule(federation, user) });
  }
  // compared against when the user is unknown, so that an unknown user takes as long as a known one
  const nobody = digest('');
  const authenticated = new WeakMap<Client, { user: BrokerUser; may: Rule }>();
  /** what to do when a connection's login is accepted: WebSockets raise their frame limit then */
  const onLogin = new WeakMap<Duplex, () => void>();
  // set once aedes' persistence exists, before any client can connect
  let queues!: ClientQueues;

  const aedes = await Aedes.createBroker({
    connectTimeout: limits.connectTimeout * 1000,
    queueLimit: limits.maxQueuedMessages,
    maxInflightInbound: limits.maxInflightMessages,
    preConnect(_client, packet, done) {
      if (typeof packet.username === 'string') packet.clientId = packet.username;
      done(null, true);
    },
    authenticate(client, username, password, done) {
      const account = typeof username === 'string' ? accounts.get(username) : undefined;
      const given = digest(password ?? '');
      const same = timingSafeEqual(given, account?.digest ?? nobody);
      if (!account || password === undefined || !same) {
        log(`refused connection of ${JSON.stringify(username ?? '')}: ${account ? 'wrong password' : 'unknown user'}`);
        const refusal = Object.assign(new Error('bad user name or password'), { returnCode: BAD_USERNAME_OR_PASSWORD });
        done(refusal as AuthenticateError, false);
        return;
      }
      authenticated.set(client, account);
      onLogin.get(client.conn as Duplex)?.();
      done(null, true);
    },
    authorizePublish(client, packet, done) {
      // client is null only for a will that aedes publishes after its client is gone
      // from a broker cluster; a single in-memory broker never has one, and without
      // its client there is no user to judge it by
      const account = client ? authenticated.get(client) : undefined;
      // a client retains nothing: a retained status would say "online" after it has gone (presence.ts)
      const retained = packet.retain && account?.user.role === 'client';
      if (account?.may(packet.topic, 'publish') && !retained) return done(null);
      const who = account?.user.username ?? 'an unknown client';
      log(`refused ${retained ? 'retained ' : ''}publish of ${who} to ${packet.topic}`);
      done(new Error(`${who} may not publish${retained ? ' retained messages' : ''} to ${packet.topic}`));
    },
    authorizeSubscribe(client, subscription, done) {
      const account = authenticated.get(client);
      if (account?.may(subscription.topic, 'subscribe')) return done(null, subscription);
      log(`refused subscription of ${account?.user.username ?? 'an unknown client'} to ${subscription.topic}`);
      done(null, null); // null: SUBACK 128 for this topic, the connection stays
    },
    authorizeForward(client, packet) {
      // null: not sent; a message dropped for a full queue (client-queues.ts) is not sent either
      return authenticated.get(client)?.may(packet.topic, 'subscribe') && queues.forward(client.id, packet) ? packet : null;
    },
  });
  // aedes emits 'error' when it fails to publish stored wills; unheard, it would kill the process
  (aedes as EventEmitter).on('error', (e: Error) => log(`broker error: ${e.message}`));
  // a client gone for good, or one that never acknowledges, must not make its session's queue grow for the rest of the run
  const connected = (aedes as unknown as { clients: Record<string, unknown> }).clients;
  queues = boundClientQueues(
    (aedes as unknown as { persistence: unknown }).persistence,
    {
      connected: (id) => connected[id] !== undefined,
      // the server's account is trusted, and holds many replies at once
      capped: (id) => accounts.get(id)?.user.role !== 'server',
      receives: (id, topic) => accounts.get(id)?.may(topic, 'subscribe') ?? false,
    },
    limits,
    log,
  );
  aedes.on('client', (client) => queues.back(client.id));
  aedes.on('ack', (_packet, client) => queues.acknowledged(client.id));

  const servers: Array<TcpServer | HttpServer> = [];
  let wss: WebSocketServer | undefined;
  const shutDown = async (): Promise<void> => {
    const stopped = servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())));
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    // ws 8 leaves open WebSockets to the caller; aedes has closed their streams, these catch stragglers
    for (const ws of wss?.clients ?? []) ws.terminate();
    wss?.close();
    for (const s of servers) if ('closeAllConnections' in s) s.closeAllConnections();
    await Promise.all(stopped);
  };

  /** A connection's packets are limited as their headers arrive: the login's limit until it is accepted, then the message limit. */
  const guard = (stream: Duplex) =>
    guardPacketSizes(
      stream,
      () => (authenticated.has((stream as Duplex & { client?: Client }).client!) ? limits.maxPacketBytes : limits.maxConnectBytes),
      (announced, max) => log(`closed a connection whose packet announces ${Number.isFinite(announced) ? `${announced} bytes` : 'a malformed length'}, above its limit of ${max} bytes`),
    );
  const handleSocket = (socket: Socket) => {
    socket.setNoDelay(true);
    aedes.handle(socket);
    guard(socket);
  };
  const connectMs = limits.connectTimeout * 1000;

  try {
    // with TLS, a connection reaches aedes once its handshake is done, which must itself end within the connect timeout
    const tcp = tls ? createTlsServer({ ...tls, handshakeTimeout: connectMs }, handleSocket) : createTcpServer(handleSocket);
    servers.push(tcp);
    const tcpPort = await listen(tcp, port, host);
    let wsBound: number | undefined;
    if (wsPort !== undefined) {
      const http = tls ? createHttpsServer({ ...tls, handshakeTimeout: connectMs }) : createHttpServer();
      // a socket that never completes its upgrade request is closed as one that never logs in
      http.headersTimeout = connectMs;
      http.requestTimeout = connectMs;
      servers.push(http);
      // ws reads a whole frame before handing it on: its limit is the packet limit, and the login's until the login is accepted
      wss = new WebSocketServer({ server: http, maxPayload: limits.maxPacketBytes });
      wss.on('connection', (ws, request) => {
        request.socket.setNoDelay(true);
        const stream = createWebSocketStream(ws);
        const receiver = (ws as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver;
        if (receiver && typeof receiver._maxPayload === 'number') {
          receiver._maxPayload = limits.maxConnectBytes;
          onLogin.set(stream, () => (receiver._maxPayload = limits.maxPacketBytes));
        }
        aedes.handle(stream, request);
        guard(stream);
      });
      wsBound = await listen(http, wsPort, host);
    }
    let closing: Promise<void> | undefined;
    const [mqtt, ws] = tls ? ['mqtts', 'wss'] : ['mqtt', 'ws'];
    return {
      url: `${mqtt}://${hostPort(host, tcpPort)}`,
      port: tcpPort,
      ...(wsBound === undefined ? {} : { wsUrl: `${ws}://${hostPort(host, wsBound)}/mqtt`, wsPort: wsBound }),
      close: () => (closing ??= shutDown()),
      droppedOffline: () => queues.dropped(),
      queued: () => queues.queued(),
    };
  } catch (e) {
    await shutDown();
    throw e;
  }
}

/** The certificate and key, checked by building a TLS context from them now, not at the first connection. */
function readBrokerTls(given: BrokerTls | undefined): { cert: string | Buffer; key: string | Buffer } | undefined {
  if (given === undefined) return undefined;
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`tls must be { cert, key } (PEM), got ${formatValue(given)}`);
  const o = readOptions(given, ['cert', 'key'], 'tls');
  const pem = (name: 'cert' | 'key') => {
    const v = o[name];
    if (typeof v === 'string' && v.length > 0) return v;
    if (v instanceof Uint8Array && v.length > 0) return Buffer.from(v);
    throw new InvalidParameterError(`tls.${name} must be PEM text or bytes, got ${formatValue(v)}`);
  };
  const tls = { cert: pem('cert'), key: pem('key') };
  try {
    createSecureContext(tls);
  } catch (e) {
    throw new InvalidParameterError(`tls.cert and tls.key must be a PEM certificate and its private key: ${e instanceof Error ? e.message : String(e)}`);
  }
  return tls;
}

function listen(server: TcpServer | HttpServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (e) => reject(new BrokerError(`the broker cannot listen on ${hostPort(host, port)}: ${e.message}`)));
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}
