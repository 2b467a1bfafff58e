/**
 * The one round loop of every federation. Each round: the clients that are
 * there (the transport says), sampled when the policy asks; the server's
 * requests; one exchange through the transport; every reply judged (size,
 * envelope, sender, round, kind, schema, the server's own check); failures
 * (timeouts, dropouts, refusals, invalid replies) handed to the policy, which
 * excludes or fails; the accepted replies and the round's failures to the
 * server's aggregate. Rounds, bytes and timings are counted here, for every
 * algorithm alike.
 *
 * The loop is written once, as a generator that yields its two waits (for
 * clients, for an exchange); `runFederation` drives it over any transport,
 * `runFederationSync` over an in-process transport of synchronous clients
 * (the one-call functions such as distributedEM stay synchronous).
 */
import { ContributionError, FederationError, FedmixError, formatValue, InvalidMessageError, InvalidParameterError, InvalidDataError, NumericalError, NotFittedError, type FedmixErrorCode } from '../../errors.js';
import { LIMITS, guardRead, isArray, optionKeys, readArray, readOptions, readRecord, requireInteger } from '../../validate.js';
import { Rng } from '../../random.js';
import { decodeMessage } from '../messages/codec.js';
import { checkEnvelope, type Message } from '../messages/envelope.js';
import { InProcessTransport } from '../transport/in-process.js';
import type { Exchange, ExchangeOptions, Received, SyncTransport, Transport } from '../transport/transport.js';
import { REFUSAL } from './client-host.js';
import { resolvePolicy, type FederationPolicy, type ResolvedPolicy } from './policy.js';
import { checkServerRole, type ClientRole, type ExcludedClient, type Failure, type RoundContext, type ServerRole } from './roles.js';

export interface Traffic {
  /** communication rounds: rounds whose requests expect replies (a result sent back ends no round) */
  rounds: number;
  bytesUp: number;
  bytesDown: number;
  messagesUp: number;
  messagesDown: number;
  /**
   * users the accepted replies stood for, where some client of the run stands
   * for a group of users (ClientRole.users: it answers for all of them in one
   * message, so messagesUp counts groups); absent when every client is one user
   */
  users?: number;
}

export interface ClientTraffic {
  bytesUp: number;
  bytesDown: number;
  messagesUp: number;
  messagesDown: number;
}

/** One round as the runtime saw it. */
export interface RoundRecord {
  round: number;
  /** the kind of the round's requests */
  kind: string;
  /** false for a round of notifications (the result sent back) */
  replies: boolean;
  asked: number;
  accepted: number;
  /** users the accepted replies stood for (as `accepted` when every client is one user) */
  users: number;
  failures: Failure[];
  bytesUp: number;
  bytesDown: number;
  /** milliseconds: the server's configure, the exchange (clients' work and transport), judging the replies, the server's aggregate */
  ms: { configure: number; exchange: number; accept: number; aggregate: number };
  /** what the server's aggregate reported for the round */
  metrics?: unknown;
}

export interface FederationResult<R = unknown> {
  /** what the server produced (its result()) */
  model: R;
  /** communication rounds */
  rounds: number;
  traffic: Traffic;
  /** by client id */
  clientTraffic: Map<string, ClientTraffic>;
  /** clients the policy took out, with the round and the reason (those given as excludedBefore first, round 0) */
  excluded: ExcludedClient[];
  /** every failure, excluded or not (timeouts and dropouts only cost a round) */
  failures: Failure[];
  history: RoundRecord[];
  /** wall time of the whole run */
  seconds: number;
}

export interface RunOptions extends FederationPolicy {
  /** called after every round */
  onRound?: (record: RoundRecord) => void;
  /**
   * clients left out before the first round, with their reasons (a
   * simulation's clients whose creation failed, round 0): never asked, listed
   * first in the result's `excluded` and counted by maxExcludedShare
   */
  excludedBefore?: readonly ExcludedClient[];
}

/** Every option of RunOptions, for readOptions (the compiler checks it is complete). */
export const RUN_KEYS = optionKeys<RunOptions>()({ onRound: true, excludedBefore: true, onInvalid: true, minClients: true, minReplies: true, fraction: true, sampleSeed: true, roundTimeout: true, joinTimeout: true, maxMessageBytes: true, maxExcludedShare: true });

type Effect = { op: 'available'; min: number; timeoutMs: number; excluded: ReadonlySet<string> } | { op: 'exchange'; round: number; messages: ReadonlyMap<string, Message>; options: ExchangeOptions };

const ERRORS: Partial<Record<FedmixErrorCode, new (m: string) => FedmixError>> = {
  INVALID_DATA: InvalidDataError,
  INVALID_PARAMETER: InvalidParameterError,
  INVALID_MESSAGE: InvalidMessageError,
  NUMERICAL: NumericalError,
  NOT_FITTED: NotFittedError,
  FEDERATION: FederationError,
};

/** Starts a reason with the client's id, once. */
function named(id: string, reason: string): string {
  return reason.startsWith(`${id}:`) || reason.startsWith(`${id} `) ? reason : `${id}: ${reason}`;
}

function sameBytes(a: Received, b: Received): boolean {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** "n clients", or "n users (in m clients)" where some client stands for several users. */
function whoCount(users: number, clients: number, noun = 'client'): string {
  return users === clients ? `${users} ${noun}${users === 1 ? '' : 's'}` : `${users} users (in ${clients} ${noun}${clients === 1 ? '' : 's'})`;
}

function* federation<A, R>(server: ServerRole<A, R>, policy: ResolvedPolicy, options: RunOptions, usersOf: (id: string) => number): Generator<Effect, FederationResult<R>, unknown> {
  const started = performance.now();
  const traffic: Traffic = { rounds: 0, bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 };
  let userReplies = 0;
  let grouped = false;
  const clientTraffic = new Map<string, ClientTraffic>();
  const excluded: ExcludedClient[] = (options.excludedBefore ?? []).map((e) => ({ ...e, reason: named(e.client, e.reason) }));
  const out = new Set(excluded.map((e) => e.client));
  /** clients excluded before the run: counted with the clients it sees */
  const before = new Set(out);
  const failures: Failure[] = [];
  const history: RoundRecord[] = [];
  /** rounds each client missed (a late reply for one of them is stale, not a fault) */
  const missed = new Map<string, Set<number>>();
  const known = new Set<string>();
  const sampler = policy.fraction < 1 ? new Rng(policy.sampleSeed) : undefined;
  const detailed = server.detailedReasons !== false;
  let round = 0;
  /** Fails the run once more than maxExcludedShare of its clients are excluded, naming the reasons. */
  const checkExcludedShare = (when: string): void => {
    let total = known.size;
    for (const id of before) if (!known.has(id)) total += 1;
    if (excluded.length === 0 || excluded.length <= policy.maxExcludedShare * total) return;
    throw new FederationError(
      `${when}: ${excluded.length} of the run's ${total} clients are excluded, more than maxExcludedShare (${policy.maxExcludedShare}) allows: ${reasons(excluded.map((e) => e.reason), 10)}`,
    );
  };
  const count = (id: string): ClientTraffic => {
    let t = clientTraffic.get(id);
    if (!t) clientTraffic.set(id, (t = { bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 }));
    return t;
  };
  try {
    while (!server.done) {
      // the run starts once minClients are there (waiting up to joinTimeout); later rounds take who is there
      const first = round === 0;
      const available = (yield { op: 'available', min: first ? policy.minClients : 0, timeoutMs: first ? policy.joinTimeoutMs : 0, excluded: out }) as readonly string[];
      for (const id of available) known.add(id);
      const present = available.filter((id) => !out.has(id));
      // what each client declared it stands for; minClients and minReplies count users
      const groups = new Map<string, number>();
      for (const id of present) {
        const n = usersOf(id);
        if (n !== 1) groups.set(id, n);
      }
      grouped ||= groups.size > 0;
      const users = (ids: Iterable<string>): number => {
        let n = 0;
        for (const id of ids) n += groups.get(id) ?? 1;
        return n;
      };
      if (first && users(present) < policy.minClients) {
        throw new FederationError(`round 1: ${whoCount(users(present), present.length)} available, fewer than the ${policy.minClients} required (minClients)`);
      }
      if (first) checkExcludedShare('before round 1');
      let clients = present;
      if (sampler && present.length > 1) {
        const k = Math.min(present.length, Math.max(policy.minReplies, Math.ceil(policy.fraction * present.length)));
        const picked = Array.from(sampler.choice(present.length, k)).sort((a, b) => a - b);
        clients = picked.map((i) => present[i]!);
      }
      const ctx: RoundContext = groups.size === 0 ? { round: round + 1, clients, available: present } : { round: round + 1, clients, available: present, users: groups };
      let t0 = performance.now();
      const requests = server.configure(ctx);
      const ms = { configure: performance.now() - t0, exchange: 0, accept: 0, aggregate: 0 };
      if (requests.size === 0) {
        if (server.done) break;
        throw new FederationError(`round ${ctx.round}: the server asked no client and is not done`);
      }
      const kinds = new Set([...requests.values()].map((m) => m.kind));
      const exchanges = [...kinds].map((k) => server.protocol.exchanges.get(k));
      if (exchanges.some((e) => e === undefined)) throw new InvalidParameterError(`round ${ctx.round}: the server sent a kind its protocol does not declare (${[...kinds].join(', ')})`);
      const replies = exchanges.some((e) => e!.reply !== undefined);
      if (replies && exchanges.some((e) => e!.reply === undefined)) throw new InvalidParameterError(`round ${ctx.round}: requests and notifications cannot share a round`);
      const allowed = new Set(replies ? clients : present);
      for (const id of requests.keys()) if (!allowed.has(id)) throw new InvalidParameterError(`round ${ctx.round}: the server asked ${id}, which is not among this round's clients`);
      t0 = performance.now();
      const ex = (yield { op: 'exchange', round: ctx.round, messages: requests, options: { replies, timeoutMs: policy.roundTimeoutMs } }) as Exchange;
      ms.exchange = performance.now() - t0;
      const record: RoundRecord = { round: ctx.round, kind: [...kinds].join(','), replies, asked: requests.size, accepted: 0, users: 0, failures: [], bytesUp: 0, bytesDown: 0, ms };
      for (const [id, bytes] of ex.sent) {
        const t = count(id);
        t.bytesDown += bytes;
        t.messagesDown += 1;
        record.bytesDown += bytes;
      }
      traffic.bytesDown += record.bytesDown;
      traffic.messagesDown += ex.sent.size;
      for (const [id, list] of ex.received) {
        // an unknown sender is ignored, its bytes too
        if (!known.has(id)) continue;
        const t = count(id);
        for (const r of list) {
          const n = r instanceof Uint8Array ? r.length : r.bytes;
          t.bytesUp += n;
          t.messagesUp += 1;
          record.bytesUp += n;
          traffic.messagesUp += 1;
        }
      }
      traffic.bytesUp += record.bytesUp;
      if (!replies) {
        // notifications end the last round rather than start one
        record.round = round;
        history.push(record);
        options.onRound?.(record);
        continue;
      }
      round = ctx.round;
      traffic.rounds += 1;
      // judge every reply; nothing reaches the server's state before aggregate
      t0 = performance.now();
      const accepted = new Map<string, A>();
      /** the users each accepted reply stood for */
      const replyUsers = new Map<string, number>();
      const acceptedUsers = (): number => {
        let n = 0;
        for (const id of accepted.keys()) n += replyUsers.get(id) ?? 1;
        return n;
      };
      const roundFailures: Failure[] = [];
      const fail = (client: string, kind: Failure['kind'], reason: string, exclude: boolean, error?: FedmixError) => {
        if (exclude && policy.onInvalid === 'fail') {
          // the client's own kind of error, where it said which (a refusal) or the check that failed
          const E = error ? (error.constructor as new (m: string) => FedmixError) : InvalidMessageError;
          throw new E(named(client, reason));
        }
        roundFailures.push({ client, round, kind, reason: named(client, reason), excluded: exclude });
      };
      /** One reply's verdict: what accept() made of it, or why it fails. */
      const judge = (id: string, r: Received, request: Message): { value: A; users: number } | { kind: 'refused' | 'invalid'; reason: string; error: FedmixError } => {
        // what the reason may say about the client's reply (see ServerRole.detailedReasons)
        let stage = 'its reply is not a valid message';
        try {
          // a message object (in process, encoding 'none') gets the envelope checks its bytes would
          const m = r instanceof Uint8Array ? decodeMessage(r, { maxBytes: policy.maxMessageBytes }) : checkEnvelope(r.message);
          if (m.from !== id) throw new InvalidMessageError(`its reply claims to come from ${JSON.stringify(m.from)}`);
          if (m.kind === REFUSAL.kind) {
            const refusal = REFUSAL.read(m);
            // a client that could not read the request does not know its round: 0
            if (refusal.round !== round && refusal.round !== 0) throw new InvalidMessageError(`its refusal is for round ${refusal.round}, not ${round}`);
            const E = ERRORS[refusal.payload.code] ?? InvalidMessageError;
            return { kind: 'refused', reason: detailed ? refusal.payload.reason : 'reported an error instead of answering', error: new E(refusal.payload.reason) };
          }
          if (m.round !== round) throw new InvalidMessageError(`its reply is for round ${m.round}, not ${round}`);
          const expected = server.protocol.exchanges.get(request.kind)!.reply!;
          if (m.kind !== expected.kind) throw new InvalidMessageError(`expected a ${expected.kind} message, got ${m.kind}`);
          // a reply for several users: only of an additive kind, never for more users than the client declared
          const claimed = m.users ?? 1;
          if (claimed > 1 && !server.protocol.additive?.has(m.kind)) {
            throw new InvalidMessageError(`its ${m.kind} reply stands for ${claimed} users, but ${m.kind} replies are not sums over users: one reply is one user`, 'its reply claims users its kind cannot carry');
          }
          const declared = groups.get(id) ?? 1;
          if (claimed > declared) throw new InvalidMessageError(`its reply stands for ${claimed} users, more than the ${declared} it declared`, 'its reply claims more users than it declared');
          const checked = expected.read(m);
          stage = 'its reply failed a check';
          return { value: server.accept(checked, request, ctx), users: claimed };
        } catch (caught) {
          // a trap or any other error is a bug, not the client's fault
          if (!(caught instanceof FedmixError) || caught.code === 'WASM' || caught.code === 'FEDERATION') throw caught;
          const check = caught instanceof InvalidMessageError ? caught.check : undefined;
          return { kind: 'invalid', reason: detailed ? caught.message : check ?? stage, error: caught };
        }
      };
      /** A client's messages without late copies of rounds it missed (it was slow, not faulty: they are dropped). */
      const current = (id: string, list: readonly Received[]): Received[] => {
        const late = missed.get(id);
        if (!late) return [...list];
        return list.filter((r) => {
          try {
            // a message object (in process, encoding 'none') gets the envelope checks its bytes would
          const m = r instanceof Uint8Array ? decodeMessage(r, { maxBytes: policy.maxMessageBytes }) : checkEnvelope(r.message);
            return !(m.from === id && late.has(m.round));
          } catch {
            return true;
          }
        });
      };
      try {
        for (const [id, request] of requests) {
          const list = current(id, ex.received.get(id) ?? []);
          if (list.length === 0) {
            const why = ex.missing.get(id) ?? { kind: 'timeout' as const, reason: `did not answer round ${round}` };
            let rounds = missed.get(id);
            if (!rounds) missed.set(id, (rounds = new Set()));
            rounds.add(round);
            fail(id, why.kind, why.reason, false);
            continue;
          }
          // QoS 1 may deliver a reply twice: an identical copy is no fault, a different second reply is
          // (checked before the reply is judged, so that what accept() makes of it is always used)
          if (list.slice(1).some((r) => !sameBytes(r, list[0]!))) {
            fail(id, 'invalid', `sent more than one reply in round ${round}`, true);
            continue;
          }
          const verdict = judge(id, list[0]!, request);
          if ('value' in verdict) {
            accepted.set(id, verdict.value);
            if (verdict.users !== 1) replyUsers.set(id, verdict.users);
          } else fail(id, verdict.kind, verdict.reason, true, verdict.error);
        }
        // messages from clients not asked: stale replies after a timeout are dropped, anything else is a fault of a known client
        for (const [id, list] of ex.received) {
          if (requests.has(id) || !known.has(id) || out.has(id)) continue;
          if (current(id, list).length > 0) fail(id, 'invalid', `sent a message in round ${round} without being asked`, true);
        }
      } catch (e) {
        // the 'fail' policy, or a bug: what was accepted is not used
        for (const value of accepted.values()) server.discard?.(value);
        throw e;
      }
      ms.accept = performance.now() - t0;
      // a client with a failure has no accepted reply: the two are decided together above
      for (const f of roundFailures) {
        if (f.excluded && !out.has(f.client)) {
          out.add(f.client);
          excluded.push({ client: f.client, round: f.round, reason: f.reason });
        }
      }
      failures.push(...roundFailures);
      record.failures = roundFailures;
      record.accepted = accepted.size;
      record.users = acceptedUsers();
      if (record.users < policy.minReplies) {
        for (const value of accepted.values()) server.discard?.(value);
        // the first few reasons (often the same one many times); the rest are in the round's record
        const why = reasons(roundFailures.map((f) => f.reason), 5);
        throw new FederationError(
          `round ${round}: ${usable(record.users, accepted.size)} of ${requests.size}, fewer than the ${policy.minReplies} required${why ? ` (${why})` : ''}`,
        );
      }
      try {
        checkExcludedShare(`round ${round}`);
      } catch (e) {
        for (const value of accepted.values()) server.discard?.(value);
        throw e;
      }
      t0 = performance.now();
      record.metrics = aggregateRound(server, ctx, accepted, roundFailures, (e) => {
        // the contribution that broke the aggregate: its client fails as an invalid reply would
        fail(e.client, 'invalid', detailed ? e.message : e.check ?? 'its contribution made the aggregate fail', true);
        const f = roundFailures[roundFailures.length - 1]!;
        out.add(f.client);
        excluded.push({ client: f.client, round: f.round, reason: f.reason });
        failures.push(f);
        record.accepted = accepted.size;
        record.users = acceptedUsers();
        if (record.users < policy.minReplies) {
          throw new FederationError(`round ${round}: ${usable(record.users, accepted.size)} of ${requests.size} once ${e.client}'s contribution was taken out, fewer than the ${policy.minReplies} required`);
        }
        checkExcludedShare(`round ${round}`);
      });
      ms.aggregate = performance.now() - t0;
      userReplies += record.users;
      history.push(record);
      options.onRound?.(record);
    }
    const model = server.result();
    if (grouped) traffic.users = userReplies;
    return { model, rounds: traffic.rounds, traffic, clientTraffic, excluded, failures, history, seconds: (performance.now() - started) / 1000 };
  } finally {
    sampler?.dispose();
  }
}

/** The first `n` reasons, joined, and how many more there are. */
function reasons(all: readonly string[], n: number): string {
  return all.slice(0, n).join('; ') + (all.length > n ? `; and ${all.length - n} more` : '');
}

/** "n usable replies", or "n users in m usable replies" where replies stood for several users. */
function usable(users: number, replies: number): string {
  const r = `usable repl${replies === 1 ? 'y' : 'ies'}`;
  return users === replies ? `${replies} ${r}` : `${users} users in ${replies} ${r}`;
}

/** The users each client of a transport declared (1 where the transport cannot say). */
function declaredBy(transport: Transport): (id: string) => number {
  const users = guardRead('the transport', () => transport.users);
  if (typeof users !== 'function') return () => 1;
  return (id) => {
    const n = users.call(transport, id);
    return Number.isSafeInteger(n) && n >= 1 ? n : 1;
  };
}

/** The run's options, read once; onRound must be a function when given. */
function readRunOptions(given: RunOptions | undefined): RunOptions {
  const options = readOptions(given, RUN_KEYS) as RunOptions;
  if (options.onRound !== undefined && typeof options.onRound !== 'function') throw new InvalidParameterError(`onRound must be a function, got ${formatValue(options.onRound)}`);
  if (options.excludedBefore !== undefined) {
    options.excludedBefore = readArray('excludedBefore', options.excludedBefore, LIMITS.clients).map((given, i) => {
      const e = readRecord(given as ExcludedClient, ['client', 'round', 'reason'], `excludedBefore[${i}]`);
      if (typeof e.client !== 'string' || typeof e.reason !== 'string') throw new InvalidParameterError(`excludedBefore[${i}] must be { client, round, reason } with a string client id and reason`);
      return { client: e.client, round: requireInteger(`excludedBefore[${i}].round`, e.round, 0), reason: e.reason };
    });
  }
  return options;
}

/**
 * The server's aggregate of the round; a ContributionError takes that client's
 * reply out (`excluded` records it, and may throw) and the others are
 * aggregated again. Whatever else aggregate throws, the accepted values are
 * discarded and the error goes on.
 */
function aggregateRound<A>(server: ServerRole<A, unknown>, ctx: RoundContext, accepted: Map<string, A>, failures: readonly Failure[], excluded: (e: ContributionError) => void): unknown {
  for (;;) {
    try {
      return server.aggregate(ctx, accepted, failures);
    } catch (e) {
      if (!(e instanceof ContributionError) || !accepted.has(e.client)) {
        for (const value of accepted.values()) server.discard?.(value);
        throw e;
      }
      server.discard?.(accepted.get(e.client)!);
      accepted.delete(e.client);
      try {
        excluded(e);
      } catch (stop) {
        for (const value of accepted.values()) server.discard?.(value);
        throw stop;
      }
    }
  }
}

function isTransport(x: unknown): x is Transport {
  return guardRead('the transport', () => x !== null && typeof x === 'object' && !Array.isArray(x) && typeof (x as Transport).exchange === 'function' && typeof (x as Transport).available === 'function');
}

/**
 * Runs `server` with `clients` (client roles, run in process) or over a
 * transport until the server is done. Throws a FederationError when the policy
 * cannot be met, a client's error under onInvalid 'fail', or the server's own
 * error; the server is not disposed (its owner does that).
 */
export async function runFederation<A, R>(server: ServerRole<A, R>, clients: readonly ClientRole[] | Transport, given: RunOptions = {}): Promise<FederationResult<R>> {
  checkServerRole(server);
  const options = readRunOptions(given);
  const { onRound: _onRound, excludedBefore: _before, ...policyOptions } = options; // the policy's options are the run's but these
  const policy = resolvePolicy(policyOptions);
  const transport: Transport = isTransport(clients) ? clients : new InProcessTransport(clients);
  const loop = federation(server, policy, options, declaredBy(transport));
  let ok = false;
  let reason: string | undefined;
  try {
    let step = loop.next();
    while (!step.done) {
      const e = step.value;
      let answer: unknown;
      try {
        answer = e.op === 'available' ? await transport.available(e.min, e.timeoutMs, e.excluded) : await transport.exchange(e.round, e.messages, e.options);
      } catch (err) {
        step = loop.throw(err);
        continue;
      }
      step = loop.next(answer);
    }
    ok = true;
    return step.value;
  } catch (e) {
    reason = e instanceof Error ? e.message : String(e);
    throw e;
  } finally {
    await transport.finish?.({ ok, reason });
  }
}

/** runFederation without yielding: in process, for clients that answer synchronously. */
export function runFederationSync<A, R>(server: ServerRole<A, R>, clients: readonly ClientRole[] | SyncTransport, given: RunOptions = {}): FederationResult<R> {
  checkServerRole(server);
  const options = readRunOptions(given);
  const { onRound: _onRound, excludedBefore: _before, ...policyOptions } = options; // the policy's options are the run's but these
  const policy = resolvePolicy(policyOptions);
  const transport = isArray('clients', clients) ? new InProcessTransport(clients as readonly ClientRole[]) : (clients as SyncTransport);
  if (!isTransport(transport) || !guardRead('the transport', () => typeof transport.exchangeSync === 'function')) throw new InvalidParameterError('runFederationSync needs client roles or an in-process transport; use runFederation for other transports');
  const loop = federation(server, policy, options, declaredBy(transport));
  let step = loop.next();
  while (!step.done) {
    const e = step.value;
    let answer: unknown;
    try {
      answer = e.op === 'available' ? transport.availableSync() : transport.exchangeSync(e.round, e.messages, e.options);
    } catch (err) {
      step = loop.throw(err);
      continue;
    }
    step = loop.next(answer);
  }
  return step.value;
}
