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
 *   fedmix/F/clients/X/status   retained {state: online|offline|left}; X's last will says offline
 * Sessions are persistent (clean: false): a request published while a client
 * is briefly away waits at the broker and is delivered when it is back. QoS 1
 * is at least once: the runtime ignores an identical second copy of a reply.
 * A client whose last will arrives during a round is a dropout of that round;
 * when it is back online it is asked again from the next round.
 */
import { FederationError, formatThrown, formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, LIMITS, readArray, readOptions, requireInteger, requireSeconds } from '../../validate.js';
import { decodeMessage, DEFAULT_MAX_MESSAGE_BYTES, encodeMessage, fingerprint, type Encoding } from '../messages/codec.js';
import type { Message } from '../messages/envelope.js';
import { receivedModel } from './received-model.js';
import { ClientHost } from '../runtime/client-host.js';
import type { ClientRole } from '../runtime/roles.js';
import { federationTopics, validateId, type FederationTopics } from './topics.js';
import type { Exchange, ExchangeOptions, Received, Transport } from './transport.js';
import { keepClassName } from '../../class-name.js';

/** The parts of an mqtt.js client used here (mqtt is loaded on demand). */
interface MqttClient {
  on(event: 'message', cb: (topic: string, payload: Uint8Array) => void): unknown;
  on(event: 'error' | 'close' | 'offline' | 'connect', cb: (...a: unknown[]) => void): unknown;
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
  will: { topic: string; payload: Uint8Array; qos: 1; retain: true };
  connectTimeout: number;
  reconnectPeriod: number;
  protocolVersion: 4 | 5;
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
      return await connectAsync(url, { ...options, reconnectPeriod: 0 });
    } catch (e) {
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

/** The round a reply says it is for (undefined when it cannot be read: the runtime judges it). */
function readRound(bytes: Uint8Array): number | undefined {
  try {
    return decodeMessage(bytes).round;
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
  /** the round each pending reply says it is for, read once on arrival (undefined: unreadable, the runtime judges it) */
  private readonly roundOf = new WeakMap<Uint8Array, number | undefined>();
  /** the last reply of each client, by fingerprint: QoS 1 may deliver it again */
  private readonly lastUp = new Map<string, string>();
  /** rounds each client was asked and did not answer in time: a reply for one of them is late, not an answer */
  private readonly unanswered = new Map<string, Set<number>>();
  /** copies of a reply delivered again by the broker, dropped */
  redelivered = 0;
  /** messages and status changes from ids outside the allowed list, ignored */
  ignored = 0;
  /** why the connection to the broker was lost, once it was */
  private lost: FederationError | undefined;
  private wake: (() => void) | undefined;
  private readonly allowedSet: ReadonlySet<string> | undefined;

  private constructor(
    private readonly client: MqttClient,
    private readonly topics: FederationTopics,
    private readonly run: string,
    private readonly allowed: readonly string[] | undefined,
    private readonly encoding: Encoding,
    private readonly defaultTimeoutMs: number,
  ) {
    this.allowedSet = allowed && new Set(allowed);
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
    // a server without its broker cannot go on: every wait ends with this
    client.on('close', () => {
      this.lost ??= new FederationError('the connection to the MQTT broker was lost');
      this.wake?.();
    });
  }

  /** Connects as the federation's server, clears what a previous run left, and says it is online. */
  static async connect(given: MqttTransportOptions): Promise<MqttTransport> {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { url, federation, ... }, got ${formatValue(given)}`);
    const options = readOptions(given, ['url', 'federation', 'username', 'password', 'clients', 'encoding', 'defaultRoundTimeout', 'connectTimeout', 'protocolVersion']) as MqttTransportOptions;
    checkConnection(options);
    const topics = federationTopics(options.federation);
    const allowed = options.clients === undefined ? undefined : readArray('clients', options.clients).map((c) => validateId('client id', c));
    const encoding = options.encoding ?? 'binary';
    if (encoding !== 'binary' && encoding !== 'json') throw new InvalidParameterError(`encoding must be 'binary' or 'json', got ${formatValue(encoding)}`);
    if (options.defaultRoundTimeout !== undefined) requireSeconds('defaultRoundTimeout', options.defaultRoundTimeout);
    const run = Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
    const client = await connect(options.url, {
      clientId: `fedmix-${options.federation}-server`,
      username: options.username,
      password: options.password,
      clean: true,
      will: { topic: topics.serverStatus, payload: json({ state: 'offline', run }), qos: 1, retain: true },
      connectTimeout: requireInteger('connectTimeout', options.connectTimeout ?? 10, 1, LIMITS.timeoutSeconds) * 1000,
      reconnectPeriod: 0,
      protocolVersion: options.protocolVersion ?? 4,
    });
    const t = new MqttTransport(client, topics, run, allowed, encoding, (options.defaultRoundTimeout ?? 60) * 1000);
    try {
      const granted = await client.subscribeAsync([topics.allUp, topics.allStatus], { qos: 1 });
      if (granted.some((g) => g.qos === 128)) throw new FederationError(`the broker refused the server's subscriptions (${granted.map((g) => g.topic).join(', ')}); check its access list`);
      // an empty retained message deletes the last run's end
      await client.publishAsync(topics.broadcast, new Uint8Array(0), { qos: 1, retain: true });
      await client.publishAsync(topics.serverStatus, json({ state: 'online', run }), { qos: 1, retain: true });
    } catch (e) {
      await client.endAsync(true);
      throw e;
    }
    return t;
  }

  private onMessage(topic: string, payload: Uint8Array): void {
    const parsed = clientTopic(this.topics, topic);
    if (!parsed) return;
    const { client: id, channel } = parsed;
    if (this.allowedSet && !this.allowedSet.has(id)) {
      this.ignored += 1;
      return;
    }
    if (channel === 'status') {
      const state = payload.length === 0 ? undefined : readJson(payload)?.state;
      if (state === 'online') {
        if (!this.order.includes(id)) this.order.push(id);
        this.online.add(id);
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
    const until = Date.now() + timeoutMs;
    const encoded = new Map<Message, Uint8Array>();
    const sends: Promise<unknown>[] = [];
    for (const [id, m] of messages) {
      let bytes = encoded.get(m);
      if (!bytes) encoded.set(m, (bytes = encodeMessage(m, this.encoding)));
      out.sent.set(id, bytes.length);
      sends.push(this.client.publishAsync(this.topics.down(id), bytes, { qos: 1 }));
    }
    // the deadline covers sending too: a publish on a lost connection would wait for ever
    await within(Promise.all(sends), timeoutMs);
    if (this.lost) throw this.lost;
    if (!options.replies) return out;
    // a client has answered once any reply is in but a late one for a round it missed: that one is not its answer
    // (a reply that cannot be read, or claims a round it was not asked, is an answer for the runtime to judge)
    const answered = new Set<string>();
    const waiting = () =>
      [...messages.keys()].filter((id) => {
        if (answered.has(id) || out.missing.has(id)) return false;
        const late = this.unanswered.get(id);
        if ((this.pending.get(id) ?? []).some((r) => !late?.has(this.roundOf.get(r as Uint8Array) ?? NaN))) answered.add(id);
        return !answered.has(id);
      });
    for (;;) {
      if (this.lost) throw this.lost;
      for (const id of waiting()) if (!this.online.has(id)) out.missing.set(id, { kind: 'dropout', reason: 'went offline (its last will arrived) before answering' });
      if (waiting().length === 0 || Date.now() >= until) break;
      await this.changed(Math.min(250, until - Date.now()));
    }
    for (const id of waiting()) out.missing.set(id, { kind: 'timeout', reason: `did not answer within ${timeoutMs} ms` });
    out.received = this.pending;
    this.pending = new Map();
    // a late reply, once handed over, settles its round; a round missed now awaits one
    for (const [id, list] of out.received) for (const r of list) this.unanswered.get(id)?.delete(this.roundOf.get(r as Uint8Array) ?? NaN);
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
      await within(this.client.endAsync(true), 2000);
      return;
    }
    // every step bounded: a broker lost now must not keep the run from ending
    await within(this.client.publishAsync(this.topics.broadcast, json({ state: 'done', run: this.run, ...outcome }), { qos: 1, retain: true }), graceMs);
    const until = Date.now() + graceMs;
    while (this.online.size > 0 && !this.lost && Date.now() < until) await this.changed(Math.min(100, until - Date.now()));
    await within(this.client.publishAsync(this.topics.serverStatus, json({ state: 'offline', run: this.run }), { qos: 1, retain: true }), 2000);
    await within(this.client.endAsync(), 2000);
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
  /** seconds to keep reconnecting after the connection is lost during the run, before giving up (default 60) */
  reconnectFor?: number;
  protocolVersion?: 4 | 5;
  /** called after each answered request */
  onRequest?: (kind: string, round: number) => void;
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
    'url', 'federation', 'client', 'username', 'password', 'maxMessageBytes', 'connectTimeout', 'waitForBroker', 'reconnectFor', 'protocolVersion', 'onRequest', 'signal',
  ]) as JoinOptions;
  checkConnection(options);
  if (options.onRequest !== undefined && typeof options.onRequest !== 'function') throw new InvalidParameterError(`onRequest must be a function, got ${formatValue(options.onRequest)}`);
  if (options.signal !== undefined && !guardRead('signal', () => options.signal instanceof AbortSignal)) throw new InvalidParameterError(`signal must be an AbortSignal, got ${formatValue(options.signal)}`);
  const role = options.client;
  // the host checks the role and reads its id once
  const host = new ClientHost(role, { maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES });
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
      will: { topic: topics.status(id), payload: json({ state: 'offline' }), qos: 1, retain: true },
      connectTimeout: requireInteger('connectTimeout', options.connectTimeout ?? 10, 1, LIMITS.timeoutSeconds) * 1000,
      reconnectPeriod: 0,
      protocolVersion: options.protocolVersion ?? 4,
    },
    waitMs,
  );
  // from now on a lost connection is retried (the session is persistent: requests wait at the broker)
  client.options.reconnectPeriod = 1000;
  let answered = 0;
  /** the last requests answered (by a hash of their bytes), with the reply sent */
  const replies = new Map<string, { request: Uint8Array; reply: Uint8Array | undefined }>();
  let serverRun: string | undefined;
  let queue = Promise.resolve();
  return new Promise<JoinResult>((resolve, reject) => {
    let finished = false;
    /** set while the connection is lost: when it fires, the client gives up */
    let lost: ReturnType<typeof setTimeout> | undefined;
    const end = (r: JoinResult | Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(lost);
      client.options.reconnectPeriod = 0;
      // saying goodbye must not hang on a broker that is already gone (a publish would wait offline for ever);
      // after an error, no goodbye: a forced end lets the broker publish the last will, so the server stops waiting
      const leave = r instanceof Error ? Promise.resolve() : client.publishAsync(topics.status(id), json({ state: 'left' }), { qos: 1, retain: true }).catch(() => undefined);
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
        if (s?.state === 'online' && typeof s.run === 'string') serverRun = s.run;
      } else if (topic === topics.broadcast) {
        const s = payload.length === 0 ? undefined : readJson(payload);
        // a retained end of an earlier run is not this one's
        if (s?.state === 'done' && s.run === serverRun) queue = queue.then(() => end({ ok: s.ok === true, reason: typeof s.reason === 'string' ? s.reason : undefined, answered, ...receivedModel(role, s.ok === true) }));
      } else if (topic === topics.down(id)) {
        const bytes = Uint8Array.prototype.slice.call(payload);
        // one request at a time, in arrival order
        queue = queue.then(async () => {
          try {
            // QoS 1 may deliver a request again (after a reconnect): the same answer goes back, the client is not asked twice
            const key = fingerprint(bytes);
            const seen = replies.get(key);
            const again = seen !== undefined && seen.request.length === bytes.length && seen.request.every((b, i) => b === bytes[i]);
            const reply = again ? seen.reply : await host.handle(bytes);
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
    // a lost connection: mqtt.js reconnects; given up after reconnectFor
    client.on('close', () => {
      if (finished || lost) return;
      lost = setTimeout(() => end(new FederationError(`the connection to the broker was lost and did not come back within ${reconnectMs / 1000} s`)), reconnectMs);
    });
    client.on('connect', () => {
      if (!lost) return;
      clearTimeout(lost);
      lost = undefined;
      // back: say so again (the broker published the last will when the connection was lost)
      void client.publishAsync(topics.status(id), json({ state: 'online' }), { qos: 1, retain: true }).catch(() => undefined);
    });
    const abort = () => {
      if (finished) return;
      finished = true;
      clearTimeout(lost);
      client.options.reconnectPeriod = 0;
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
        await client.publishAsync(topics.status(id), json({ state: 'online' }), { qos: 1, retain: true });
      } catch (e) {
        end(e instanceof Error ? e : new FederationError(String(e)));
      }
    })();
  });
}
