/**
 * Federations over an MQTT broker (3.1.1 or 5): the embedded one of
 * `fedmix server` (aedes), Debian's mosquitto, or any broker or cluster. The
 * server side is a Transport (MqttTransport); the client side is join(), which
 * runs one client role until the server says the run is over. Both work in
 * Node and in browsers (MQTT over WebSockets: a ws:// or wss:// URL); the
 * `mqtt` package is loaded only when a connection is made.
 *
 * Topics of federation F (topics.ts), all QoS 1:
 *   fedmix/F/server/status      retained {state: online|offline, run}; the server's last will says offline
 *   fedmix/F/broadcast          retained {state: done, run, ok, reason?}: the end of a run
 *   fedmix/F/clients/X/down     requests to client X (wire bytes)
 *   fedmix/F/clients/X/up       X's replies (wire bytes)
 *   fedmix/F/clients/X/status   {state: online|offline|left}, never retained; X's last will says offline
 * Sessions are persistent (clean: false) on both ends: a request published
 * while a client is briefly away waits at the broker and is delivered when it
 * is back. QoS 1 is at least once: the runtime ignores an identical second
 * copy of a reply. A client whose last will arrives during a round is a
 * dropout of that round; when it is back online it is asked again from the
 * next round.
 *
 * Presence (presence.ts): a client is online only while it is connected and
 * says so. The server ignores retained status messages (a client that left
 * one and went away is not there), and its retained
 * `online` is a roll call that every connected client answers.
 *
 * A lost connection to the broker (a restart) is ridden out by both ends
 * (reconnect.ts: backoff, for up to reconnectFor seconds). The round in
 * flight is repeated: its requests not answered yet are sent again, to all
 * when the server is back, and to each client when it says it is back
 * (replies already received count, once); the exchange reports it.
 */
import { FederationError, formatThrown, formatValue, InvalidParameterError, OtherRunError, UntrustedBrokerError } from '../../errors.js';
import { guardRead, LIMITS, readArray, readOptions, requireInteger, requireSeconds } from '../../validate.js';
import { decodeMessage, DEFAULT_MAX_MESSAGE_BYTES, encodeMessage, fingerprint, type Encoding } from '../messages/codec.js';
import { freshRunId, isRunId, type Message } from '../messages/envelope.js';
import { receivedModel } from './received-model.js';
import { ClientHost } from '../runtime/client-host.js';
import type { ClientBudget } from '../runtime/client-budget.js';
import type { ClientRole } from '../runtime/roles.js';
import { readCertificates, untrustedCertificate, type Certificates } from './tls.js';
import { federationTopics, validateId, type FederationTopics } from './topics.js';
import { clientStatus, isStaleStatus } from './presence.js';
import { connectionChange, keepConnected, type ConnectionChange } from './reconnect.js';
import type { Exchange, ExchangeOptions, Received, Transport } from './transport.js';
import { keepClassName } from '../../class-name.js';

/** The parts of an mqtt.js client used here (mqtt is loaded on demand). */
interface MqttClient {
  on(event: 'message', cb: (topic: string, payload: Uint8Array, packet: { retain?: boolean }) => void): unknown;
  on(event: 'error' | 'close' | 'offline' | 'connect' | 'reconnect', cb: (...a: unknown[]) => void): unknown;
  subscribeAsync(topic: string | string[], opts: { qos: 0 | 1 }): Promise<{ topic: string; qos: number }[]>;
  publishAsync(topic: string, payload: Uint8Array | string, opts: { qos: 0 | 1; retain?: boolean }): Promise<unknown>;
  endAsync(force?: boolean): Promise<void>;
  connected: boolean;
  options: { reconnectPeriod?: number };
}

interface ConnectOptions {
  clientId: string;
  username?: string;
  password?: string;
  clean: boolean;
  will: { topic: string; payload: Uint8Array; qos: 1; retain: boolean };
  connectTimeout: number;
  reconnectPeriod: number;
  protocolVersion: 4 | 5;
  /** the CAs trusted for mqtts:// and wss:// (Node; default the system's) */
  ca?: (string | Uint8Array)[];
  /** mqtts:// only: accepts the broker's certificate by its SHA-256 fingerprint instead of its host name */
  checkServerIdentity?: (host: string, cert: { fingerprint256?: string }) => Error | undefined;
}

/**
 * TCP no-delay on the client's socket, now and on each reconnect's new one:
 * without it Nagle's algorithm holds a small publish until the broker's delayed
 * ACK of the last one (~40 ms), the floor of a round. WebSockets set it themselves.
 */
function setNoDelay(client: MqttClient): void {
  const set = () => (client as unknown as { stream?: { setNoDelay?: (on: boolean) => unknown } }).stream?.setNoDelay?.(true);
  set();
  client.on('connect', set);
}

/**
 * Connects, retrying while the broker cannot be reached (it may start after
 * its clients) for up to `waitMs`; a broker that answers no (wrong
 * credentials: a CONNACK refusal) is final at once.
 */
/** What both ends' connection options must be before anything connects: a broker URL, its credentials, an MQTT version. */
function checkConnection(o: { url?: unknown; username?: unknown; password?: unknown; protocolVersion?: unknown }): void {
  if (typeof o.url !== 'string' || !/^(mqtts?|wss?):\/\/\S+$/.test(o.url)) throw new InvalidParameterError(`url must be the broker's URL (mqtt://, mqtts://, ws:// or wss://), got ${formatValue(o.url)}`);
  for (const key of ['username', 'password'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'string') throw new InvalidParameterError(`${key} must be a string, got ${formatValue(o[key])}`);
  }
  if (o.protocolVersion !== undefined && o.protocolVersion !== 4 && o.protocolVersion !== 5) throw new InvalidParameterError(`protocolVersion must be 4 or 5, got ${formatValue(o.protocolVersion)}`);
}

async function connect(url: string, options: ConnectOptions, waitMs = 0): Promise<MqttClient> {
  const m = (await import('mqtt')) as unknown as { connectAsync?: (u: string, o: object) => Promise<MqttClient>; default?: { connectAsync: (u: string, o: object) => Promise<MqttClient> } };
  const connectAsync = m.connectAsync ?? m.default?.connectAsync;
  if (!connectAsync) throw new FederationError("the 'mqtt' package could not be loaded");
  const until = Date.now() + waitMs;
  for (let delay = 250; ; delay = Math.min(2 * delay, 2000)) {
    try {
      // no automatic reconnect while connecting: a refused login must fail now, not retry forever
      const client = await connectAsync(url, { ...options, reconnectPeriod: 0 });
      setNoDelay(client);
      return client;
    } catch (e) {
      // a certificate the client does not trust stays untrusted: no retry, and no password was sent
      const untrusted = untrustedCertificate(e);
      if (untrusted) throw new UntrustedBrokerError(`the MQTT broker at ${url} is not trusted (${untrusted}: ${formatThrown(e)}); give the CA that signed its certificate (ca; fedmix client or server --tls-ca)`);
      const refused = typeof (e as { code?: unknown }).code === 'number';
      if (refused || Date.now() + delay > until) {
        throw new FederationError(`could not connect to the MQTT broker at ${url}: ${formatThrown(e)}${refused ? '' : waitMs > 0 ? ` (tried for ${Math.round(waitMs / 1000)} s)` : ''}`);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The client and channel of a topic fedmix/F/clients/X/{up,status}; undefined for any other. */
function clientTopic(topics: FederationTopics, topic: string): { client: string; channel: 'up' | 'status' } | undefined {
  const prefix = topics.allUp.slice(0, topics.allUp.indexOf('+'));
  if (!topic.startsWith(prefix)) return undefined;
  const [client, channel, ...rest] = topic.slice(prefix.length).split('/');
  if (rest.length > 0 || !client || (channel !== 'up' && channel !== 'status')) return undefined;
  return { client, channel };
}

/** The round and run a reply says it is for (undefined when it cannot be read: the runtime judges it). */
function readRound(bytes: Uint8Array): { round: number; run?: string } | undefined {
  try {
    const m = decodeMessage(bytes);
    return { round: m.round, run: m.run };
  } catch {
    return undefined;
  }
}

/** `p`, or nothing after `ms` (a timer keeps the process alive meanwhile). */
function within(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    p.then(
      () => (clearTimeout(t), resolve()),
      () => (clearTimeout(t), resolve()),
    );
  });
}

const utf8 = new TextEncoder();
const text = new TextDecoder();

function json(value: unknown): Uint8Array {
  return utf8.encode(JSON.stringify(value));
}

function readJson(payload: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text.decode(payload)) as unknown;
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export interface MqttTransportOptions {
  /** the broker: mqtt://host:port, mqtts://, ws://host:port/path, wss:// */
  url: string;
  /** the federation's name: its topics live under fedmix/<federation>/ */
  federation: string;
  username?: string;
  password?: string;
  /**
   * the client ids allowed to take part, in the order rounds list them
   * (default: any client that comes online, in the order it did); others are ignored.
   * A fixed order makes a run reproducible: it decides the order of sums and of per-client seeds.
   */
  clients?: readonly string[];
  /** the wire form of requests (default 'binary'); clients answer in kind */
  encoding?: Encoding;
  /** seconds a round waits for replies when the policy sets no roundTimeout (default 60) */
  defaultRoundTimeout?: number;
  /** seconds to wait for the broker (default 10) */
  connectTimeout?: number;
  /** MQTT protocol version: 4 (3.1.1, default) or 5 */
  protocolVersion?: 4 | 5;
  /** mqtts:// and wss:// in Node: the CA certificates (PEM) to trust instead of the system's, e.g. a self-signed broker's own */
  ca?: Certificates;
  /**
   * mqtts:// in Node: accept exactly the broker certificate with this SHA-256
   * fingerprint ("AB:CD:..."), whatever host it names (its chain must still be
   * trusted: `ca`). serve() connects to its own embedded broker so.
   */
  certificateFingerprint?: string;
  /**
   * seconds to keep reconnecting after the connection to the broker is lost
   * (a broker restart), with backoff, before the run fails (default 60);
   * meanwhile the round in flight waits, and is repeated once the broker is back
   */
  reconnectFor?: number;
  /** told when the connection to the broker is lost, comes back, or is given up (default: nothing) */
  onConnection?: (change: ConnectionChange) => void;
  /** the run's id, announced in the server's status messages (default: a fresh one; a resumed run passes its checkpoint's) */
  run?: string;
}

/** The server's side of a federation over MQTT. */
export class MqttTransport implements Transport {
  static {
    keepClassName(this, 'MqttTransport');
  }

  readonly name = 'mqtt';
  /** client ids in the order they first came online (used when no allowed list fixes the order) */
  private readonly order: string[] = [];
  private readonly online = new Set<string>();
  /** replies received and not yet handed to an exchange */
  private pending = new Map<string, Received[]>();
  /** the round and run each pending reply says it is for, read once on arrival (undefined: unreadable, the runtime judges it) */
  private readonly roundOf = new WeakMap<Uint8Array, { round: number; run?: string } | undefined>();
  /** the last reply of each client, by fingerprint: QoS 1 may deliver it again */
  private readonly lastUp = new Map<string, string>();
  /** rounds each client was asked and did not answer in time: a reply for one of them is late, not an answer */
  private readonly unanswered = new Map<string, Set<number>>();
  /** copies of a reply delivered again by the broker, dropped */
  redelivered = 0;
  /** messages and status changes from ids outside the allowed list, ignored */
  ignored = 0;
  /** why the connection to the broker was lost for good, once it was */
  private lost: FederationError | undefined;
  private wake: (() => void) | undefined;
  private readonly allowedSet: ReadonlySet<string> | undefined;
  /** reconnects so far, and how long the last outage lasted */
  private reconnects = 0;
  private lastOutage = 0;
  private readonly link: { stop(): void; readonly down: boolean };
  /** the clients the exchange under way waits for, and those of them that said they are (back) online meanwhile */
  private asking: ReadonlySet<string> | undefined;
  private readonly rejoined = new Set<string>();
  /** retained status messages ignored: presence is what a connected client says */
  staleStatus = 0;

  private constructor(
    private readonly client: MqttClient,
    private readonly topics: FederationTopics,
    /** the run's id, announced in the status messages (the runtime stamps its requests with it) */
    readonly run: string,
    private readonly allowed: readonly string[] | undefined,
    private readonly encoding: Encoding,
    private readonly defaultTimeoutMs: number,
    reconnectMs: number,
    onConnection: ((change: ConnectionChange) => void) | undefined,
  ) {
    this.allowedSet = allowed && new Set(allowed);
    client.on('message', (topic, payload, packet) => this.onMessage(topic, payload, packet?.retain === true));
    const tell = (change: ConnectionChange) => {
      try {
        onConnection?.(change);
      } catch {
        // a logger's failure is not the run's
      }
    };
    // a broker away for longer than reconnectMs ends the run: every wait ends with this
    this.link = keepConnected(client, reconnectMs, {
      lost: () => {
        tell(connectionChange('lost', reconnectMs));
        this.wake?.();
      },
      back: (seconds) => {
        this.reconnects += 1;
        this.lastOutage = seconds;
        tell(connectionChange('back', reconnectMs, seconds));
        // the roll call again: a restarted broker has lost the retained status, and the clients answer it
        void client.publishAsync(topics.serverStatus, json({ state: 'online', run }), { qos: 1, retain: true }).catch(() => undefined);
        this.wake?.();
      },
      gaveUp: (error) => {
        this.lost ??= error;
        tell(connectionChange('gave-up', reconnectMs, undefined, error.message));
        this.wake?.();
      },
    });
  }

  /** Connects as the federation's server, clears what a previous run left, and says it is online. */
  static async connect(given: MqttTransportOptions): Promise<MqttTransport> {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { url, federation, ... }, got ${formatValue(given)}`);
    const options = readOptions(given, ['url', 'federation', 'username', 'password', 'clients', 'encoding', 'defaultRoundTimeout', 'connectTimeout', 'protocolVersion', 'ca', 'certificateFingerprint', 'reconnectFor', 'onConnection', 'run']) as MqttTransportOptions;
    checkConnection(options);
    const ca = readCertificates('ca', options.ca);
    const pin = options.certificateFingerprint;
    if (pin !== undefined && (typeof pin !== 'string' || !/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/i.test(pin))) throw new InvalidParameterError(`certificateFingerprint must be a SHA-256 fingerprint (32 hex bytes joined by ':'), got ${formatValue(pin)}`);
    // mqtt.js hands the identity check to TLS sockets only, not to WebSockets
    if (pin !== undefined && !options.url.startsWith('mqtts://')) throw new InvalidParameterError(`certificateFingerprint applies to mqtts:// URLs only, got ${formatValue(options.url)}`);
    const topics = federationTopics(options.federation);
    const allowed = options.clients === undefined ? undefined : readArray('clients', options.clients).map((c) => validateId('client id', c));
    const encoding = options.encoding ?? 'binary';
    if (encoding !== 'binary' && encoding !== 'json') throw new InvalidParameterError(`encoding must be 'binary' or 'json', got ${formatValue(encoding)}`);
    if (options.defaultRoundTimeout !== undefined) requireSeconds('defaultRoundTimeout', options.defaultRoundTimeout);
    const reconnectMs = requireSeconds('reconnectFor', options.reconnectFor ?? 60) * 1000;
    if (options.onConnection !== undefined && typeof options.onConnection !== 'function') throw new InvalidParameterError(`onConnection must be a function, got ${formatValue(options.onConnection)}`);
    if (options.run !== undefined && !isRunId(options.run)) throw new InvalidParameterError(`run must be a run id (8 to 64 letters, digits, - or _), got ${formatValue(options.run)}`);
    const run = options.run ?? freshRunId();
    const connectOptions: ConnectOptions = {
      clientId: `fedmix-${options.federation}-server`,
      username: options.username,
      password: options.password,
      clean: true,
      will: { topic: topics.serverStatus, payload: json({ state: 'offline', run }), qos: 1, retain: true },
      connectTimeout: requireInteger('connectTimeout', options.connectTimeout ?? 10, 1, LIMITS.timeoutSeconds) * 1000,
      reconnectPeriod: 0,
      protocolVersion: options.protocolVersion ?? 4,
      ...(ca ? { ca } : {}),
      ...(pin === undefined ? {} : { checkServerIdentity: (_host, cert) => (cert.fingerprint256?.toUpperCase() === pin.toUpperCase() ? undefined : Object.assign(new Error(`its certificate (SHA-256 ${cert.fingerprint256}) is not the expected ${pin}`), { code: 'CERT_FINGERPRINT_MISMATCH' })) }),
    };
    // a clean session first, ended at once: what an earlier run's persistent session holds is not this run's
    await (await connect(options.url, connectOptions)).endAsync();
    // then the run's persistent session: what clients send while the server is briefly away waits at the broker
    const client = await connect(options.url, { ...connectOptions, clean: false });
    const t = new MqttTransport(client, topics, run, allowed, encoding, (options.defaultRoundTimeout ?? 60) * 1000, reconnectMs, options.onConnection);
    try {
      const granted = await client.subscribeAsync([topics.allUp, topics.allStatus], { qos: 1 });
      if (granted.some((g) => g.qos === 128)) throw new FederationError(`the broker refused the server's subscriptions (${granted.map((g) => g.topic).join(', ')}); check its access list`);
      // an empty retained message deletes the last run's end
      await client.publishAsync(topics.broadcast, new Uint8Array(0), { qos: 1, retain: true });
      await client.publishAsync(topics.serverStatus, json({ state: 'online', run }), { qos: 1, retain: true });
    } catch (e) {
      t.link.stop();
      await client.endAsync(true);
      throw e;
    }
    return t;
  }

  private onMessage(topic: string, payload: Uint8Array, retained = false): void {
    const parsed = clientTopic(this.topics, topic);
    if (!parsed) return;
    const { client: id, channel } = parsed;
    if (this.allowedSet && !this.allowedSet.has(id)) {
      this.ignored += 1;
      return;
    }
    if (channel === 'status') {
      if (isStaleStatus(payload, retained)) {
        // kept by the broker for a client that may be long gone (or from an earlier run): not presence
        if (payload.length > 0) this.staleStatus += 1;
        return;
      }
      const status = readJson(payload);
      const state = status?.state;
      if (state === 'online') {
        if (!this.order.includes(id)) this.order.push(id);
        this.online.add(id);
        // reconnected while a round waits for it: it may have missed its request (see exchange)
        if (status?.reconnected === true && this.asking?.has(id)) this.rejoined.add(id);
      } else {
        this.online.delete(id);
      }
    } else if (channel === 'up') {
      // a copy: mqtt.js may reuse the buffer, and the codec views aligned bytes without copying
      const bytes = Uint8Array.prototype.slice.call(payload);
      const print = fingerprint(bytes);
      if (this.lastUp.get(id) === print) {
        this.redelivered += 1;
        return;
      }
      this.lastUp.set(id, print);
      this.roundOf.set(bytes, readRound(bytes));
      const list = this.pending.get(id) ?? [];
      list.push(bytes);
      this.pending.set(id, list);
    }
    this.wake?.();
  }

  /** Resolves when something arrives (or after `ms`). */
  private changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  async available(min: number, timeoutMs: number, excluded?: ReadonlySet<string>): Promise<readonly string[]> {
    const until = Date.now() + timeoutMs;
    const there = () => (this.allowed ?? this.order).filter((id) => this.online.has(id));
    const count = () => there().filter((id) => !excluded?.has(id)).length;
    while (count() < min && Date.now() < until) {
      if (this.lost) throw this.lost;
      await this.changed(Math.min(250, until - Date.now()));
    }
    if (this.lost) throw this.lost;
    return there();
  }

  async exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    if (this.lost) throw this.lost;
    const out: Exchange = { sent: new Map(), received: new Map(), missing: new Map() };
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    let until = Date.now() + timeoutMs;
    const epoch = { reconnects: this.reconnects };
    const encoded = new Map<Message, Uint8Array>();
    const request = new Map<string, Uint8Array>();
    const send = (id: string) => this.client.publishAsync(this.topics.down(id), request.get(id)!, { qos: 1 });
    const sends: Promise<unknown>[] = [];
    for (const [id, m] of messages) {
      let bytes = encoded.get(m);
      if (!bytes) encoded.set(m, (bytes = encodeMessage(m, this.encoding)));
      out.sent.set(id, bytes.length);
      request.set(id, bytes);
      sends.push(send(id));
    }
    // the deadline covers sending too: a publish on a lost connection would wait for ever
    // (but for the reconnect window: while the broker is away the deadline is on hold)
    let sent = false;
    const settled = () => ((sent = true), this.wake?.());
    Promise.all(sends).then(settled, settled);
    while (!sent && !this.lost && (this.link.down || Date.now() < until)) await this.changed(250);
    if (this.lost) throw this.lost;
    if (!options.replies) return out;
    // a client has answered once any reply is in but a late one for a round it missed: that one is not its answer
    // (a reply that cannot be read, or claims a round it was not asked, is an answer for the runtime to judge)
    const answered = new Set<string>();
    // a reply of another run (a dead run's, delivered again) is no answer either
    const waiting = () =>
      [...messages.keys()].filter((id) => {
        if (answered.has(id) || out.missing.has(id)) return false;
        const late = this.unanswered.get(id);
        const run = messages.get(id)!.run;
        const answers = (h: { round: number; run?: string } | undefined) => !h || ((h.run === undefined || h.run === run) && !late?.has(h.round));
        if ((this.pending.get(id) ?? []).some((r) => answers(this.roundOf.get(r as Uint8Array)))) answered.add(id);
        return !answered.has(id);
      });
    this.asking = new Set(messages.keys());
    this.rejoined.clear();
    try {
      for (;;) {
        if (this.lost) throw this.lost;
        // the broker is away: the round is on hold (the reconnect window bounds the wait)
        if (this.link.down) {
          await this.changed(250);
          continue;
        }
        if (this.reconnects !== epoch.reconnects) {
          // back after an outage during the round: the round is repeated, with a new deadline
          epoch.reconnects = this.reconnects;
          const again = waiting();
          for (const id of again) send(id).catch(() => undefined);
          (out.interruptions ??= []).push({ seconds: this.lastOutage, resent: again.length, reason: 'the connection to the broker was lost' });
          until = Date.now() + timeoutMs;
          this.rejoined.clear();
        }
        // a client that says it is back may have missed its request (a restarted broker forgets what it queued)
        for (const id of this.rejoined) if (waiting().includes(id)) send(id).catch(() => undefined);
        this.rejoined.clear();
        for (const id of waiting()) if (!this.online.has(id)) out.missing.set(id, { kind: 'dropout', reason: 'went offline (its last will arrived) before answering' });
        if (waiting().length === 0 || Date.now() >= until) break;
        await this.changed(Math.min(250, until - Date.now()));
      }
    } finally {
      this.asking = undefined;
    }
    for (const id of waiting()) out.missing.set(id, { kind: 'timeout', reason: `did not answer within ${timeoutMs} ms` });
    out.received = this.pending;
    this.pending = new Map();
    // a late reply, once handed over, settles its round; a round missed now awaits one
    for (const [id, list] of out.received) for (const r of list) this.unanswered.get(id)?.delete(this.roundOf.get(r as Uint8Array)?.round ?? NaN);
    for (const id of out.missing.keys()) {
      let rounds = this.unanswered.get(id);
      if (!rounds) this.unanswered.set(id, (rounds = new Set()));
      rounds.add(round);
      // a client gone for good must not grow this for ever: only recent rounds can still see a late reply
      if (rounds.size > 16) rounds.delete(rounds.values().next().value as number);
    }
    return out;
  }

  /**
   * Tells the clients the run is over (retained, so that late ones learn it
   * too), waits up to `graceMs` for the online ones to say they left (so that
   * a broker stopped right after still delivered the news), and disconnects.
   */
  async finish(outcome: { ok: boolean; reason?: string }, graceMs = 5000): Promise<void> {
    if (this.lost) {
      this.link.stop();
      await within(this.client.endAsync(true), 2000);
      return;
    }
    // a wait still under way (for clients that will not come now) ends with the connection
    this.lost = new FederationError('the connection to the MQTT broker was closed: the run is over');
    // every step bounded: a broker lost now must not keep the run from ending
    await within(this.client.publishAsync(this.topics.broadcast, json({ state: 'done', run: this.run, ...outcome }), { qos: 1, retain: true }), graceMs);
    const until = Date.now() + graceMs;
    while (this.online.size > 0 && !this.link.down && Date.now() < until) await this.changed(Math.min(100, until - Date.now()));
    await within(this.client.publishAsync(this.topics.serverStatus, json({ state: 'offline', run: this.run }), { qos: 1, retain: true }), 2000);
    this.link.stop();
    await within(this.client.endAsync(!this.client.connected), 2000);
    this.wake?.();
  }
}

export interface JoinOptions {
  /** the broker: mqtt://host:port, ws://host:port/path, ... */
  url: string;
  federation: string;
  /** the client role that answers (its id is its MQTT user and topic name) */
  client: ClientRole;
  username?: string;
  password?: string;
  /** per message, checked before decoding (default 64 MiB) */
  maxMessageBytes?: number;
  /** seconds one connection attempt may take (default 10) */
  connectTimeout?: number;
  /** seconds to keep trying while the broker cannot be reached, at the start (default 30; it may start after its clients) */
  waitForBroker?: number;
  /** seconds to keep reconnecting (with backoff) after the connection is lost during the run, before giving up (default 60) */
  reconnectFor?: number;
  protocolVersion?: 4 | 5;
  /** mqtts:// and wss:// in Node: the CA certificates (PEM) to trust instead of the system's, e.g. a self-signed broker's own; a broker they do not vouch for is an UntrustedBrokerError */
  ca?: Certificates;
  /** told when the connection to the broker is lost, comes back, or is given up (default: nothing) */
  onConnection?: (change: ConnectionChange) => void;
  /** called after each answered request */
  onRequest?: (kind: string, round: number) => void;
  /**
   * told of each request of a run other than the one the server announces
   * (a dead run's, kept by the broker): it is not answered (default: nothing)
   */
  onOtherRun?: (error: OtherRunError) => void;
  /**
   * The client's own privacy budget and ledger (ClientBudget.open): a request
   * declaring a privacy step that would take it past its budget is refused,
   * spending nothing (runtime/client-budget.ts). Default: none kept.
   */
  budget?: ClientBudget;
  /**
   * Aborting it drops the connection at once, without a goodbye, as a crash
   * or a lost network would (the broker then publishes the client's last
   * will); join() rejects. Joining again later with the same id resumes the
   * session: the client is asked again from the next round.
   */
  signal?: AbortSignal;
}

export interface JoinResult {
  /** whether the server's run ended without error */
  ok: boolean;
  reason?: string;
  /** requests this client answered (refusals included) */
  answered: number;
  /** requests of another run, not answered (absent: none) */
  otherRun?: number;
  /** the global model the server sent at the end (the role's savedGlobalModel(): a model's toJSON()), when the run ended well and the role has one */
  model?: unknown;
}

/**
 * Joins a federation over MQTT as `options.client` and answers its requests
 * until the server ends the run. Resolves with how the run ended; rejects
 * with a FederationError when the broker refuses the connection (wrong
 * credentials) or the subscriptions (access list).
 */
export async function join(given: JoinOptions): Promise<JoinResult> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { url, federation, client, ... }, got ${formatValue(given)}`);
  const options = readOptions(given, [
    'url', 'federation', 'client', 'username', 'password', 'maxMessageBytes', 'connectTimeout', 'waitForBroker', 'reconnectFor', 'protocolVersion', 'ca', 'onRequest', 'signal', 'onConnection', 'budget', 'onOtherRun',
  ]) as JoinOptions;
  checkConnection(options);
  const ca = readCertificates('ca', options.ca);
  if (options.onRequest !== undefined && typeof options.onRequest !== 'function') throw new InvalidParameterError(`onRequest must be a function, got ${formatValue(options.onRequest)}`);
  if (options.onConnection !== undefined && typeof options.onConnection !== 'function') throw new InvalidParameterError(`onConnection must be a function, got ${formatValue(options.onConnection)}`);
  if (options.onOtherRun !== undefined && typeof options.onOtherRun !== 'function') throw new InvalidParameterError(`onOtherRun must be a function, got ${formatValue(options.onOtherRun)}`);
  if (options.signal !== undefined && !guardRead('signal', () => options.signal instanceof AbortSignal)) throw new InvalidParameterError(`signal must be an AbortSignal, got ${formatValue(options.signal)}`);
  const role = options.client;
  // the host checks the role and reads its id once
  const host = new ClientHost(role, { maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, ...(options.budget !== undefined ? { budget: options.budget } : {}) });
  const id = validateId('client id', host.id);
  const topics = federationTopics(options.federation);
  const reconnectMs = requireSeconds('reconnectFor', options.reconnectFor ?? 60) * 1000;
  const waitMs = requireSeconds('waitForBroker', options.waitForBroker ?? 30, 0) * 1000;
  const client = await connect(
    options.url,
    {
      clientId: `fedmix-${options.federation}-${id}`,
      username: options.username ?? id,
      password: options.password,
      clean: false,
      // not retained: a status the broker keeps would outlive the connection it speaks for (presence.ts)
      will: { topic: topics.status(id), payload: utf8.encode(clientStatus('offline')), qos: 1, retain: false },
      connectTimeout: requireInteger('connectTimeout', options.connectTimeout ?? 10, 1, LIMITS.timeoutSeconds) * 1000,
      reconnectPeriod: 0,
      protocolVersion: options.protocolVersion ?? 4,
      ...(ca ? { ca } : {}),
    },
    waitMs,
  );
  let answered = 0;
  /** the last requests answered (by a hash of their bytes), with the reply sent */
  const replies = new Map<string, { request: Uint8Array; reply: Uint8Array | undefined }>();
  let serverRun: string | undefined;
  let otherRun = 0;
  // requests wait for the server's status to name its run: a persistent session hands over what the broker kept (maybe a dead run's) first
  let announced!: () => void;
  const runKnown = new Promise<void>((resolve) => (announced = resolve));
  let queue = Promise.resolve();
  return new Promise<JoinResult>((resolve, reject) => {
    let finished = false;
    const tell = (change: ConnectionChange) => {
      try {
        options.onConnection?.(change);
      } catch {
        // a logger's failure is not the run's
      }
    };
    // from now on a lost connection is retried with backoff (the session is persistent: requests wait at the broker)
    const link = keepConnected(client, reconnectMs, {
      lost: () => tell(connectionChange('lost', reconnectMs)),
      back: (seconds) => {
        tell(connectionChange('back', reconnectMs, seconds));
        // back: say so again (the server may have missed the request it sent meanwhile, and sends it again)
        void client.publishAsync(topics.status(id), clientStatus('online', true), { qos: 1 }).catch(() => undefined);
      },
      gaveUp: (error) => {
        tell(connectionChange('gave-up', reconnectMs, undefined, error.message));
        end(error);
      },
    });
    const end = (r: JoinResult | Error) => {
      if (finished) return;
      finished = true;
      link.stop();
      // saying goodbye must not hang on a broker that is already gone (a publish would wait offline for ever);
      // after an error, no goodbye: a forced end lets the broker publish the last will, so the server stops waiting
      const leave = r instanceof Error ? Promise.resolve() : client.publishAsync(topics.status(id), clientStatus('left'), { qos: 1 }).catch(() => undefined);
      void within(leave, 2000)
        .then(() => within(client.endAsync(r instanceof Error || !client.connected), 2000))
        .then(
          () => (r instanceof Error ? reject(r) : resolve(r)),
          () => (r instanceof Error ? reject(r) : resolve(r)),
        );
    };
    client.on('message', (topic, payload) => {
      if (topic === topics.serverStatus) {
        const s = readJson(payload);
        if (s?.state === 'online' && typeof s.run === 'string') {
          serverRun = s.run;
          announced();
          // the server's roll call (it started, or is back after a broker restart): answer it
          if (!finished) void client.publishAsync(topics.status(id), clientStatus('online'), { qos: 1 }).catch(() => undefined);
        }
      } else if (topic === topics.broadcast) {
        const s = payload.length === 0 ? undefined : readJson(payload);
        // a retained end of an earlier run is not this one's
        if (s?.state === 'done' && s.run === serverRun) queue = queue.then(() => end({ ok: s.ok === true, reason: typeof s.reason === 'string' ? s.reason : undefined, answered, ...(otherRun > 0 ? { otherRun } : {}), ...receivedModel(role, s.ok === true) }));
      } else if (topic === topics.down(id)) {
        const bytes = Uint8Array.prototype.slice.call(payload);
        // one request at a time, in arrival order
        queue = queue.then(async () => {
          await runKnown;
          try {
            // QoS 1 may deliver a request again (after a reconnect): the same answer goes back, the client is not asked twice
            const key = fingerprint(bytes);
            const seen = replies.get(key);
            const again = seen !== undefined && seen.request.length === bytes.length && seen.request.every((b, i) => b === bytes[i]);
            let reply: Uint8Array | undefined;
            try {
              reply = again ? seen.reply : await host.handle(bytes, serverRun);
            } catch (e) {
              if (!(e instanceof OtherRunError)) throw e;
              // another run's request: not answered, so that it cannot move this client's state
              otherRun += 1;
              options.onOtherRun?.(e);
              return;
            }
            if (!again) {
              answered += 1;
              replies.set(key, { request: bytes, reply });
              if (replies.size > 8) replies.delete(replies.keys().next().value as string);
              if (host.last) options.onRequest?.(host.last.kind, host.last.round);
            }
            if (reply) await client.publishAsync(topics.up(id), reply, { qos: 1 });
          } catch (e) {
            end(e instanceof Error ? e : new FederationError(String(e)));
          }
        });
      }
    });
    const abort = () => {
      if (finished) return;
      finished = true;
      link.stop();
      void client.endAsync(true).then(
        () => reject(new FederationError(`client ${id} left: its join was aborted`)),
        () => reject(new FederationError(`client ${id} left: its join was aborted`)),
      );
    };
    if (options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    void (async () => {
      try {
        const granted = await client.subscribeAsync([topics.down(id), topics.broadcast, topics.serverStatus], { qos: 1 });
        if (granted.some((g) => g.qos === 128)) throw new FederationError(`the broker refused client ${id}'s subscriptions (${granted.filter((g) => g.qos === 128).map((g) => g.topic).join(', ')}); check its access list`);
        await client.publishAsync(topics.status(id), clientStatus('online'), { qos: 1 });
      } catch (e) {
        end(e instanceof Error ? e : new FederationError(String(e)));
      }
    })();
  });
}
