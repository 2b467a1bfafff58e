/**
 * The contract every federated algorithm implements, in the spirit of
 * Flower's Strategy and pfl-research's central/user split:
 *
 *   server  configure(round)       what each client is asked this round
 *           accept(reply, request) one reply, checked against what it answers
 *           aggregate(round, accepted, failures)  the round folded in
 *           done, result()         when it is over, and what it produced
 *   client  respond(request)       its answer (async; in a worker, a browser, a device)
 *
 * The runtime (run.ts) owns everything else: sampling, sending, deadlines,
 * decoding, the failure policy, the accounting of rounds and bytes. A server
 * never sees a reply that is not from a client it asked, for this round, of
 * the kind its protocol pairs with the request, and structurally valid; what
 * `accept` refuses (InvalidMessageError) becomes a failure of that client, and
 * `aggregate` gets only accepted replies, so one bad client cannot change the
 * server's state.
 */
import { formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { guardRead, readArray, readOptions, readRecord, requireInteger } from '../../validate.js';
import { checkEnvelope, MAX_USERS, type Message } from '../messages/envelope.js';
import { wasRead, type MessageType } from '../messages/schema.js';
import type { AdditiveLayout } from '../secure-aggregation/layout.js';

/** Which request kinds an algorithm sends and what answers each (none: a notification). */
export interface Protocol {
  readonly name: string;
  /** by request kind: its type and the type of its reply (undefined: no reply is expected) */
  readonly exchanges: ReadonlyMap<string, { request: MessageType; reply?: MessageType }>;
  /**
   * Reply kinds that are additive sufficient statistics: a client standing
   * for a group of simulated users (ClientRole.users) may answer with one
   * reply carrying the sum of its users' contributions and their number
   * (the envelope's `users`). A reply of any other kind stands for one user.
   */
  readonly additive?: ReadonlySet<string>;
  /**
   * By reply kind, the replies that can be summed under secure aggregation,
   * with their layout (secure-aggregation/layout.ts): the fields summed, in
   * order, and those that never travel. A request whose reply has none
   * cannot run under secure aggregation.
   */
  readonly layouts?: ReadonlyMap<string, AdditiveLayout>;
}

/**
 * A protocol from [request, reply] pairs; a reply of null makes the request a
 * notification. `additive`: reply types whose replies are sums over users
 * (see Protocol.additive); the receiving server must check such a reply
 * against the number of users it claims.
 */
export function defineProtocol(name: string, exchanges: readonly (readonly [MessageType, MessageType | null])[], given: { additive?: readonly MessageType[]; layouts?: readonly AdditiveLayout[] } = {}): Protocol {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidParameterError(`a protocol needs a name (a non-empty string), got ${formatValue(name)}`);
  const options = readOptions(given, ['additive', 'layouts']);
  const map = new Map<string, { request: MessageType; reply?: MessageType }>();
  readArray('exchanges', exchanges, 4096).forEach((pair, i) => {
    const [request, reply] = readArray(`exchanges[${i}]`, pair, 2) as [unknown, unknown];
    if (!isMessageType(request) || (reply !== null && reply !== undefined && !isMessageType(reply))) {
      throw new InvalidParameterError(`exchanges[${i}] must be [request type, reply type or null] (types from defineMessage), got ${formatValue(pair)}`);
    }
    if (map.has(request.kind)) throw new InvalidParameterError(`protocol ${name} declares ${request.kind} twice`);
    map.set(request.kind, reply ? { request, reply: reply as MessageType } : { request });
  });
  const replies = new Set([...map.values()].map((e) => e.reply?.kind));
  const additive = new Set<string>();
  readArray('additive', options.additive ?? [], 4096).forEach((t, i) => {
    if (!isMessageType(t) || !replies.has(t.kind)) throw new InvalidParameterError(`additive[${i}] must be a reply type of protocol ${name}, got ${formatValue(t)}`);
    additive.add(t.kind);
  });
  const layouts = new Map<string, AdditiveLayout>();
  readArray('layouts', options.layouts ?? [], 4096).forEach((l, i) => {
    const ok = guardRead('a layout', () => l !== null && typeof l === 'object' && isMessageType((l as AdditiveLayout).reply) && replies.has((l as AdditiveLayout).reply.kind) && typeof (l as AdditiveLayout).flatten === 'function' && typeof (l as AdditiveLayout).build === 'function');
    if (!ok) throw new InvalidParameterError(`layouts[${i}] must be an additive layout (sumLayout) of a reply type of protocol ${name}, got ${formatValue(l)}`);
    layouts.set((l as AdditiveLayout).reply.kind, l as AdditiveLayout);
  });
  const out: Protocol = additive.size === 0 ? { name, exchanges: map } : { name, exchanges: map, additive };
  return layouts.size === 0 ? out : { ...out, layouts };
}

/** Whether `t` is what defineMessage returns (a kind, create() and read()), asked under guard. */
function isMessageType(t: unknown): t is MessageType {
  return guardRead('a message type', () => t !== null && typeof t === 'object' && typeof (t as MessageType).kind === 'string' && typeof (t as MessageType).read === 'function' && typeof (t as MessageType).create === 'function');
}

/**
 * A reply read as the reply `request` expects under `protocol` (envelope and
 * declared payload checked): what a server's accept() starts with, so that a
 * message object passed to it by hand gets the checks the runtime gives a
 * reply (free when the runtime has read it already).
 */
export function readReply(protocol: Protocol, request: Message, reply: Message): Message {
  const kind = guardRead('request', () => (request !== null && typeof request === 'object' ? request.kind : undefined));
  const expected = typeof kind === 'string' ? protocol.exchanges.get(kind)?.reply : undefined;
  if (!expected) throw new InvalidParameterError(`${protocol.name} expects no reply to ${formatValue(kind)}; pass the request the reply answers`);
  return expected.read(reply);
}

export interface RoundContext {
  /** the communication round, from 1 */
  readonly round: number;
  /** the clients that may be asked this round, in the transport's order: available, not excluded, sampled */
  readonly clients: readonly string[];
  /** every client that is there and not excluded, sampled or not: where notifications (a result) may go */
  readonly available: readonly string[];
  /**
   * How many users each client declared it stands for, where that is more
   * than one (ClientRole.users); a client not listed is one user.
   */
  readonly users?: ReadonlyMap<string, number>;
  /**
   * The probability with which each client that could be asked was drawn
   * into `clients` (the policy's fraction, as the runtime sampled: k of the n
   * clients in the quorum); absent: 1, every client asked. A server that adds
   * noise declares it (times its own cohort's share) in its requests' privacy step.
   */
  readonly samplingRate?: number;
  /**
   * A secure round (policy secureAggregation): the largest error of any entry
   * of the summed reply from fixed-point quantization (the round's bound). A
   * check of an identity the exact sums satisfy allows this much per entry.
   */
  readonly quantization?: number;
  /**
   * A secure round with distributed noise: the standard deviation of the
   * noise on each entry of the summed reply, real units (the round record's
   * secure.noise.stddev).
   */
  readonly noise?: number;
  /**
   * The run is under secure aggregation (policy secureAggregation): a reply
   * to a request of this round reaches accept() only as the secure sum of the
   * survivors' replies, noised by the clients where the round takes
   * distributed noise (ServerRole.secureNoise). A server that would add
   * central noise leaves it to the clients then.
   */
  readonly secureAggregation?: boolean;
}

/** The users `id` stands for in a round (1 unless it declared a group). */
export function usersIn(ctx: RoundContext, id: string): number {
  return ctx.users?.get(id) ?? 1;
}

/** The users `ids` stand for together in a round. */
export function totalUsers(ctx: RoundContext, ids: Iterable<string>): number {
  let n = 0;
  for (const id of ids) n += usersIn(ctx, id);
  return n;
}

export type FailureKind =
  /** no answer before the round's deadline */
  | 'timeout'
  /** the client left (its connection or worker ended, or its last will arrived) */
  | 'dropout'
  /** it answered, but the answer failed a check: envelope, kind, schema, or the server's accept() */
  | 'invalid'
  /** it refused the request, saying why (a FedmixError on its side) */
  | 'refused';

export interface Failure {
  client: string;
  round: number;
  kind: FailureKind;
  reason: string;
  /** whether the failure policy took the client out of the rest of the run */
  excluded: boolean;
}

/** A client the run took out, and why. */
export interface ExcludedClient {
  client: string;
  /** the communication round of the failure (0: before the run, e.g. a client that could not be created) */
  round: number;
  /** why, starting with the client's id */
  reason: string;
}

/** An exclusion as one line: its round ("before round 1" for round 0) and its reason, which names the client. */
export function describeExclusion(e: ExcludedClient): string {
  return `${e.round === 0 ? 'before round 1' : `round ${e.round}`}: ${e.reason}`;
}

/**
 * A server role. `Accepted` is what accept() makes of one reply; `Result` is
 * what the run produces. Options are checked in the constructor, before any
 * client is asked anything.
 */
export interface ServerRole<Accepted = unknown, Result = unknown> {
  readonly protocol: Protocol;
  /** true once the run is over (checked before every configure) */
  readonly done: boolean;
  /**
   * The messages of this round, keyed by client id: requests to some of
   * ctx.clients, or notifications (the result sent back: delivered, counted,
   * ending no round) to some of ctx.available; never both in one round.
   * Empty only once the server is done (nobody left to tell).
   */
  configure(ctx: RoundContext): ReadonlyMap<string, Message>;
  /**
   * One reply, checked against the request it answers and the server's state
   * (shapes, counts); throws InvalidMessageError with the reason. Changes no
   * state: a refusal must leave the server as if the client had not answered.
   */
  accept(reply: Message, request: Message, ctx: RoundContext): Accepted;
  /**
   * Frees what accept() made of a reply the round will not use after all
   * (the round failed before aggregate: too few replies, or the 'fail' policy).
   */
  discard?(accepted: Accepted): void;
  /** Folds the round in. Returns what the round's history should record (metrics), if anything. */
  aggregate(ctx: RoundContext, accepted: ReadonlyMap<string, Accepted>, failures: readonly Failure[]): unknown;
  /** What the run produced (called once, when done). */
  result(): Result;
  /**
   * Exclusion reasons with the client's values (default true). A server under
   * differential privacy sets it false: reasons then name the failed check
   * only (InvalidMessageError.check), never what the client sent.
   */
  readonly detailedReasons?: boolean;
  /**
   * Why this server cannot take its replies as one secure sum (an
   * aggregation rule that needs each reply: a median, a server-side clip),
   * or undefined when it can: a run under secure aggregation refuses to start
   * with a server that gives a reason.
   */
  readonly secureAggregationRefusal?: string;
  /**
   * The distributed noise of its secure rounds, where the server decides it
   * (DP-FedAvg: its clip bound and noise multiplier; the runtime calibrates
   * each client's Skellam share from them), or why the policy's
   * secureAggregation.noiseMultiplier cannot apply to its replies (a string).
   * Undefined: the policy's noiseMultiplier and clip, if any.
   */
  readonly secureNoise?: { clip: number; noiseMultiplier: number } | string;
  /** Frees what the server holds (WASM memory); called by the runtime when the run ends. */
  dispose?(): void;
}

/** A client role: it sees only its own data and the requests sent to it. */
export interface ClientRole {
  readonly id: string;
  /**
   * How many simulated users it stands for (default 1): a group of users
   * whose data it holds together answers each request of an additive reply
   * kind once, with the sum of their contributions (Protocol.additive). The
   * runtime refuses a reply that claims more users than this.
   */
  readonly users?: number;
  /** the requests it answers (checked against their declarations before respond is called) */
  readonly protocol: Protocol;
  /**
   * The answer to a request (a notification: undefined). A FedmixError it
   * throws (other than a WASM trap) is a refusal the server learns about; it
   * must leave the client usable for the next request.
   */
  respond(request: Message): Message | undefined | Promise<Message | undefined>;
  /**
   * The transport is done with a request this client answered: free what
   * respond() kept for it. In process, the clients of a round share one
   * request, released once all of them have answered (so each may keep, say,
   * a prepared model for the others to reuse, and must not free it sooner).
   */
  requestDone?(request: Message): void;
  /**
   * The global model the server sent this client at the end of the run, as
   * its class's toJSON() (what `fedmix client --out` and join()'s `out`
   * save); undefined until it came. Only roles whose server sends one have it.
   */
  savedGlobalModel?(): unknown;
  dispose?(): void;
}

/**
 * A request as a client role's respond() takes it: read against `protocol`
 * (envelope, kind, payload), unless a MessageType read it already (ClientHost
 * does, once per broadcast). So a role called directly with anything gets an
 * InvalidMessageError, never a TypeError from a payload it did not declare.
 */
export function readRequest(protocol: Protocol, m: unknown): Message {
  if (wasRead(m)) return m;
  const e = checkEnvelope(m);
  const exchange = protocol.exchanges.get(e.kind);
  if (!exchange) throw new InvalidMessageError(`a ${protocol.name} client does not answer ${e.kind.slice(0, 80)} messages`);
  return exchange.request.read(e);
}

/** A client's id, checked when a client role is made: a non-empty string (what transports and messages name it by). */
export function requireClientId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidParameterError(`a client needs a non-empty string id, got ${formatValue(id)}`);
  return id;
}

/** Most client ids a round context may list: what one federation's runtime handles. */
const MAX_CLIENTS = 2 ** 24;

/** The contexts sealedContext() made: frozen, checked once. */
const runtimeContexts = new WeakSet<object>();

/**
 * A round's context as the runtime hands it to the server role: checked once
 * and frozen (its client lists too), so that checkContext can take it as it is
 * for every reply of the round. A context a caller builds is checked each time.
 */
export function sealedContext(ctx: RoundContext): RoundContext {
  const c = checkContext(ctx);
  if (runtimeContexts.has(c)) return c;
  Object.freeze(c.clients);
  Object.freeze(c.available);
  Object.freeze(c);
  runtimeContexts.add(c);
  return c;
}

/**
 * The round context a server role's configure, accept or aggregate is given,
 * read and checked (the runtime makes them right; a direct caller may not).
 */
export function checkContext(ctx: unknown): RoundContext {
  // a context the runtime made was checked once, for the round: not again for each of its replies (O(clients) each)
  if (ctx !== null && typeof ctx === 'object' && runtimeContexts.has(ctx)) return ctx as RoundContext;
  if (ctx === null || typeof ctx !== 'object') throw new InvalidParameterError(`a round context must be { round, clients, available }, got ${formatValue(ctx)}`);
  const c = readRecord(ctx as RoundContext, ['round', 'clients', 'available', 'users', 'samplingRate', 'quantization', 'noise', 'secureAggregation'], 'ctx');
  const ids = (name: string, v: unknown): string[] => {
    const a = readArray(name, v, MAX_CLIENTS);
    a.forEach((id, i) => {
      if (typeof id !== 'string') throw new InvalidParameterError(`${name}[${i}] must be a client id (a string), got ${formatValue(id)}`);
    });
    return a as string[];
  };
  const clients = ids('ctx.clients', c.clients);
  const base: RoundContext = { round: requireInteger('ctx.round', c.round, 0), clients, available: c.available === undefined ? clients : ids('ctx.available', c.available) };
  if (c.samplingRate !== undefined && !(typeof c.samplingRate === 'number' && c.samplingRate > 0 && c.samplingRate <= 1)) throw new InvalidParameterError(`ctx.samplingRate must be a number in (0, 1], got ${formatValue(c.samplingRate)}`);
  if (c.quantization !== undefined && !(typeof c.quantization === 'number' && c.quantization >= 0 && Number.isFinite(c.quantization))) {
    throw new InvalidParameterError(`ctx.quantization must be a finite number >= 0, got ${formatValue(c.quantization)}`);
  }
  if (c.noise !== undefined && !(typeof c.noise === 'number' && c.noise >= 0 && Number.isFinite(c.noise))) throw new InvalidParameterError(`ctx.noise must be a finite number >= 0, got ${formatValue(c.noise)}`);
  if (c.secureAggregation !== undefined && typeof c.secureAggregation !== 'boolean') throw new InvalidParameterError(`ctx.secureAggregation must be a boolean, got ${formatValue(c.secureAggregation)}`);
  const out: RoundContext = {
    ...base,
    ...(c.samplingRate === undefined ? {} : { samplingRate: c.samplingRate }),
    ...(c.quantization === undefined ? {} : { quantization: c.quantization }),
    ...(c.noise === undefined ? {} : { noise: c.noise }),
    ...(c.secureAggregation ? { secureAggregation: true } : {}),
  };
  if (c.users === undefined) return out;
  if (!guardRead('ctx.users', () => c.users instanceof Map)) throw new InvalidParameterError(`ctx.users must be a Map from client id to its number of users, got ${formatValue(c.users)}`);
  const users = new Map<string, number>();
  for (const [id, n] of c.users as Map<unknown, unknown>) {
    if (typeof id !== 'string') throw new InvalidParameterError(`ctx.users must be keyed by client id (a string), got ${formatValue(id)}`);
    users.set(id, requireInteger(`ctx.users of ${id.slice(0, 80)}`, n, 1, MAX_USERS));
  }
  return { ...out, users };
}

/**
 * What aggregate() is given as the accepted replies: a Map by client id of
 * what this server's accept() returned (`made` holds those).
 */
export function checkAccepted<A>(accepted: unknown, made: WeakSet<object>): ReadonlyMap<string, A> {
  if (!guardRead('accepted', () => accepted instanceof Map)) {
    throw new InvalidParameterError(`accepted must be a Map from client id to what accept() returned, got ${formatValue(accepted)}`);
  }
  for (const [id, a] of accepted as Map<unknown, unknown>) {
    if (typeof id !== 'string' || a === null || typeof a !== 'object' || !made.has(a)) {
      throw new InvalidParameterError(`accepted must map client ids to what this server's accept() returned; ${formatValue(id)} maps to ${formatValue(a)}`);
    }
  }
  return accepted as ReadonlyMap<string, A>;
}

/** The failures aggregate() is given, read and checked. */
export function checkFailures(failures: unknown): Failure[] {
  return readArray('failures', failures ?? [], MAX_CLIENTS).map((f, i) => {
    if (f === null || typeof f !== 'object') throw new InvalidParameterError(`failures[${i}] must be a Failure, got ${formatValue(f)}`);
    const x = readRecord(f as Failure, ['client', 'round', 'kind', 'reason', 'excluded'], `failures[${i}]`);
    if (typeof x.client !== 'string' || typeof x.reason !== 'string' || typeof x.excluded !== 'boolean' || !['timeout', 'dropout', 'invalid', 'refused'].includes(x.kind as string)) {
      throw new InvalidParameterError(`failures[${i}] must be { client, round, kind, reason, excluded }, got ${formatValue(f)}`);
    }
    return { client: x.client, round: requireInteger(`failures[${i}].round`, x.round, 0), kind: x.kind!, reason: x.reason, excluded: x.excluded };
  });
}

/** The users a client role declares it stands for (ClientRole.users), read once under guard: an integer from 1 to MAX_USERS. */
export function declaredUsers(role: unknown): number {
  const n = guardRead('the client role', () => (role !== null && typeof role === 'object' ? (role as ClientRole).users : undefined));
  return n === undefined ? 1 : requireInteger('a client role\'s users', n, 1, MAX_USERS);
}

/** Whether `role` has what a client role needs (a string id, a protocol, respond()); its id, read once. */
export function checkClientRole(role: unknown): string {
  const r = guardRead('the client role', () => {
    if (role === null || typeof role !== 'object') return undefined;
    const x = role as ClientRole;
    return { id: x.id, respond: x.respond, exchanges: x.protocol?.exchanges };
  });
  if (!r || typeof r.respond !== 'function' || !(r.exchanges instanceof Map)) {
    throw new InvalidParameterError(`a client role needs an id, a protocol and respond(), got ${formatValue(role)}`);
  }
  if (typeof r.id !== 'string' || r.id.length === 0) throw new InvalidParameterError(`every client role needs a non-empty string id, got ${formatValue(r.id)}`);
  return r.id;
}

/** Whether `server` has what a server role needs (protocol, configure(), accept(), aggregate(), result()). */
export function checkServerRole(server: unknown): void {
  const ok = guardRead('the server role', () => {
    if (server === null || typeof server !== 'object') return false;
    const s = server as ServerRole;
    return ['configure', 'accept', 'aggregate', 'result'].every((m) => typeof (s as unknown as Record<string, unknown>)[m] === 'function') && s.protocol?.exchanges instanceof Map;
  });
  if (!ok) throw new InvalidParameterError(`a server role needs a protocol, configure(), accept(), aggregate() and result(), got ${formatValue(server)}`);
}
