/**
 * What the runtime needs of a transport: which clients are there, and one
 * exchange per round (send each client its message, gather what comes back
 * until every client asked has answered, left, or the deadline passed). A
 * transport moves messages; it decides nothing: what it gathers is checked and
 * judged by the runtime (runtime/run.ts), including messages a client should
 * not have sent.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, readOptions, requireBoolean, requirePositive } from '../../validate.js';
import type { Message } from '../messages/envelope.js';

/**
 * A reply as the transport got it: wire bytes, or in process a message and
 * its size: a binary one handed over without its bytes (codec.ts
 * BinaryInProcess: the runtime decodes it as its bytes would be, under its
 * size limit; `bytes` is their exact length), or without encoding a copy and
 * its declared size.
 */
export type Received = Uint8Array | { message: Message; bytes: number };

export interface ExchangeOptions {
  /** false for notifications: deliver and return, nothing comes back */
  replies: boolean;
  /** milliseconds to wait for replies (undefined: until every client asked has answered or left) */
  timeoutMs?: number;
}

export interface Exchange {
  /** bytes each client was sent (one message each) */
  sent: Map<string, number>;
  /** what each client sent back during the exchange, in arrival order (also clients not asked, and duplicates) */
  received: Map<string, Received[]>;
  /** clients asked that will not answer this round, and why */
  missing: Map<string, { kind: 'timeout' | 'dropout'; reason: string }>;
  /**
   * outages the exchange rode out (over a network: the broker restarted),
   * each repeating the round: the requests not answered yet were sent again
   * with a new deadline (absent when there was none)
   */
  interruptions?: Interruption[];
}

/** An outage during an exchange, after which the round was repeated. */
export interface Interruption {
  reason: string;
  /** seconds the connection was away */
  seconds: number;
  /** requests sent again (the clients that had not answered yet) */
  resent: number;
}

export interface Transport {
  /** a short name for logs and results ('in-process', 'workers', 'mqtt') */
  readonly name: string;
  /**
   * The ids of the clients that can be asked now, in the transport's order;
   * waits up to `timeoutMs` until at least `min` of them are not in
   * `excluded`, then returns what there is (the runtime decides whether that
   * is enough).
   */
  available(min: number, timeoutMs: number, excluded?: ReadonlySet<string>): Promise<readonly string[]>;
  exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange>;
  /**
   * How many simulated users a client declared it stands for when it joined
   * (ClientRole.users; 1 when it declared nothing, or the transport cannot
   * say): the most users one reply of it may claim.
   */
  users?(id: string): number;
  /** Tells the clients the run is over (remote ones stop waiting); called once at the end, even after an error. */
  finish?(outcome: { ok: boolean; reason?: string }): Promise<void>;
}

/** A transport that can also run an exchange without yielding (in-process simulations of synchronous clients). */
export interface SyncTransport extends Transport {
  availableSync(): readonly string[];
  exchangeSync(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Exchange;
}

/**
 * An exchange's arguments, checked (the runtime makes them right; a direct
 * caller may not): messages a Map from client id to message, options read.
 */
export function checkExchange(messages: unknown, options: unknown): { messages: ReadonlyMap<string, Message>; options: ExchangeOptions } {
  if (!guardRead('messages', () => messages instanceof Map)) throw new InvalidParameterError(`messages must be a Map from client id to message, got ${formatValue(messages)}`);
  for (const id of (messages as Map<unknown, unknown>).keys()) {
    if (typeof id !== 'string') throw new InvalidParameterError(`messages must be keyed by client id (a string), got ${formatValue(id)}`);
  }
  const o = readOptions(options as ExchangeOptions, ['replies', 'timeoutMs']);
  return {
    messages: messages as ReadonlyMap<string, Message>,
    options: { replies: requireBoolean('replies', o.replies ?? true), timeoutMs: o.timeoutMs === undefined ? undefined : requirePositive('timeoutMs', o.timeoutMs) },
  };
}
