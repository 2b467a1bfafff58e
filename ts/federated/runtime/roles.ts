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
import { InvalidParameterError } from '../../errors.js';
import type { Message } from '../messages/envelope.js';
import type { MessageType } from '../messages/schema.js';

/** Which request kinds an algorithm sends and what answers each (none: a notification). */
export interface Protocol {
  readonly name: string;
  /** by request kind: its type and the type of its reply (undefined: no reply is expected) */
  readonly exchanges: ReadonlyMap<string, { request: MessageType; reply?: MessageType }>;
}

/** A protocol from [request, reply] pairs; a reply of null makes the request a notification. */
export function defineProtocol(name: string, exchanges: readonly (readonly [MessageType, MessageType | null])[]): Protocol {
  const map = new Map<string, { request: MessageType; reply?: MessageType }>();
  for (const [request, reply] of exchanges) {
    if (map.has(request.kind)) throw new InvalidParameterError(`protocol ${name} declares ${request.kind} twice`);
    map.set(request.kind, reply ? { request, reply } : { request });
  }
  return { name, exchanges: map };
}

/**
 * A reply read as the reply `request` expects under `protocol` (envelope and
 * declared payload checked): what a server's accept() starts with, so that a
 * message object passed to it by hand gets the checks the runtime gives a
 * reply (free when the runtime has read it already).
 */
export function readReply(protocol: Protocol, request: Message, reply: Message): Message {
  const expected = protocol.exchanges.get(request.kind)?.reply;
  if (!expected) throw new InvalidParameterError(`${protocol.name} expects no reply to ${request.kind}`);
  return expected.read(reply);
}

export interface RoundContext {
  /** the communication round, from 1 */
  readonly round: number;
  /** the clients that may be asked this round, in the transport's order: available, not excluded, sampled */
  readonly clients: readonly string[];
  /** every client that is there and not excluded, sampled or not: where notifications (a result) may go */
  readonly available: readonly string[];
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
  /** the communication round of the failure */
  round: number;
  reason: string;
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
  /** Frees what the server holds (WASM memory); called by the runtime when the run ends. */
  dispose?(): void;
}

/** A client role: it sees only its own data and the requests sent to it. */
export interface ClientRole {
  readonly id: string;
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
  dispose?(): void;
}
