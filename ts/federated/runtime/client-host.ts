/**
 * The client side of every transport: a request as it arrived (wire bytes,
 * or a copied message in process) becomes the client role's answer in the
 * same encoding. The request is checked against the client's protocol first;
 * a request it cannot use, or a FedmixError while answering, becomes a
 * refusal message naming the reason, so the server learns why instead of
 * waiting out its deadline. A WASM trap or any other error is a bug and
 * propagates.
 */
import * as v from 'valibot';
import { FedmixError, formatValue, InvalidMessageError, InvalidParameterError, isFedmixError, OtherRunError, WasmAllocationError, type FedmixErrorCode } from '../../errors.js';
import { BinaryInProcess, copyMessage, decodeMessage, DEFAULT_MAX_MESSAGE_BYTES, encodeMessage, type Encoding } from '../messages/codec.js';
import { isArrowStream } from '../messages/arrow-ipc.js';
import { checkEnvelope, withRun, type Message } from '../messages/envelope.js';
import { defineMessage, oneOf, record } from '../messages/schema.js';
import { checkClientRole, declaredUsers, type ClientRole } from './roles.js';
import type { SecureParticipant } from '../secure-aggregation/client.js';
import { isSecureStage } from '../secure-aggregation/messages.js';
import { guardRead, readOptions, requireInteger } from '../../validate.js';
import type { ClientBudget } from './client-budget.js';

/**
 * Requests already read against a declaration, by message object: in process
 * a broadcast is decoded once and handed to every client, which then shares
 * one checked (read-only) request instead of each checking its own copy.
 */
const checkedReads = new WeakMap<Message, Message>();

/** FEDMIX_CRASH_AT_STAGE, the crash drill's variable (secure-aggregation/crash-drill.ts, loaded only when it is set), as this process was given it. */
function crashDrillValue(): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.FEDMIX_CRASH_AT_STAGE || undefined;
}

/** Whether `b` offers what a client host calls on its ledger (ClientBudget's concerns and account). */
function isClientBudget(b: unknown): b is ClientBudget {
  return b !== null && typeof b === 'object' && guardRead('budget', () => typeof (b as ClientBudget).concerns === 'function' && typeof (b as ClientBudget).account === 'function');
}

const CODES: readonly FedmixErrorCode[] = ['INVALID_DATA', 'INVALID_PARAMETER', 'INVALID_MESSAGE', 'FEDERATION', 'NUMERICAL', 'NOT_FITTED', 'PRIVACY_BUDGET', 'SECURE_AGGREGATION'];

/** A client's answer when it cannot answer: why, and the kind of error it met. */
export const REFUSAL = defineMessage(
  'fedmix/refusal',
  record({
    reason: v.pipe(v.string(), v.maxLength(4000)),
    code: oneOf(CODES),
  }),
);

/**
 * What the server records of a refusal: its reason, or, where reasons are
 * withheld (ServerRole.detailedReasons), only that the client refused; a
 * refusal for the client's own privacy budget says nothing of its data, so it
 * is named either way.
 */
export function refusalReason(refusal: { reason: string; code: FedmixErrorCode }, detailed: boolean): string {
  if (detailed) return refusal.reason;
  return refusal.code === 'PRIVACY_BUDGET' ? 'refused: answering would exceed its privacy budget' : 'reported an error instead of answering';
}

/**
 * A reply stamped with the run of the request it answers (roles make their
 * replies without one), so that the server can tell a reply of its run from
 * one of another; a request that could not be read names no run.
 */
function sameRun(request: Message | FedmixError, reply: Message, read?: Read): Message {
  if (isFedmixError(request)) return reply;
  // the envelope answer() read, when it read this request: not read again
  const run = read !== undefined && read.request === request ? (isFedmixError(read.envelope) ? undefined : read.envelope.run) : guardedRun(request);
  if (run === undefined || reply === null || typeof reply !== 'object') return reply;
  // what a role returned may be anything: one that cannot be read goes to the encoder as it is, which says why
  try {
    return withRun(reply, run);
  } catch {
    return reply;
  }
}

/** A request and its envelope as answer() read it once (checkEnvelope's copy, or why it cannot be read). */
interface Read {
  request: Message | FedmixError;
  envelope: Message | FedmixError;
}

/** A request's run id as checkEnvelope reads it (undefined when it has none or cannot be read). */
function guardedRun(request: Message): string | undefined {
  try {
    return checkEnvelope(request).run;
  } catch {
    return undefined;
  }
}

/** The encoding to answer in: the request's (anything but Arrow IPC bytes, unreadable input included, gets JSON). */
function wireOf(bytes: unknown): Encoding {
  return ArrayBuffer.isView(bytes) && bytes instanceof Uint8Array && isArrowStream(bytes) ? 'binary' : 'json';
}

export class ClientHost {
  readonly maxMessageBytes: number;
  /** the kind and round of the last request it read (for progress reports) */
  last: { kind: string; round: number } | undefined;

  readonly id: string;
  /** the users the role declared it stands for (ClientRole.users), read once */
  readonly users: number;
  /** the client's own privacy ledger: consulted before any request that declares privacy is answered (client-budget.ts) */
  readonly budget: ClientBudget | undefined;

  constructor(
    readonly role: ClientRole,
    options: { maxMessageBytes?: number; budget?: ClientBudget } = {},
  ) {
    this.id = checkClientRole(role);
    this.users = declaredUsers(role);
    const o = readOptions(options, ['maxMessageBytes', 'budget']);
    this.maxMessageBytes = requireInteger('maxMessageBytes', o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 1);
    // by what the host calls, not instanceof: the ledger's code (and its accountant) stays out of clients that keep none
    if (o.budget !== undefined && !isClientBudget(o.budget)) throw new InvalidParameterError(`budget must be a ClientBudget (ClientBudget.open), got ${formatValue(o.budget)}`);
    this.budget = o.budget;
    this.crashDrill = crashDrillValue();
  }

  /**
   * The answer to a request on the wire, in the request's encoding (undefined
   * for a notification). `run`: the run this client joined; a request that
   * carries another run's id is not answered, an OtherRunError says why.
   */
  async handle(bytes: Uint8Array, run?: string): Promise<Uint8Array | undefined> {
    const request = this.decode(bytes);
    if (run !== undefined) this.checkRun(request, run);
    try {
      return this.encode(request, await this.answer(request), wireOf(bytes));
    } finally {
      this.requestDone(request);
    }
  }

  /** Throws an OtherRunError when `request` carries the id of a run other than `run` (one it cannot be read for is refused as usual). */
  private checkRun(request: Message | FedmixError, run: string): void {
    if (isFedmixError(request)) return;
    const theirs = guardedRun(request);
    if (theirs === undefined || theirs === run) return;
    // its envelope was read (checkEnvelope): kind and round are there
    throw new OtherRunError(`client ${this.id} does not answer a ${request.kind} request of round ${request.round} of run ${theirs}: it joined run ${run}`, theirs, run);
  }

  /** handle() for roles that answer synchronously (in-process simulations). */
  handleSync(bytes: Uint8Array): Uint8Array | undefined {
    const request = this.decode(bytes);
    try {
      return this.encode(request, this.answerSync(request), wireOf(bytes));
    } finally {
      this.requestDone(request);
    }
  }

  /**
   * Tells the role the request will not come again (ClientRole.requestDone). The
   * handle methods do it themselves; for a request shared by many clients
   * (handleDecoded, handleCopy) the transport does, after all have answered.
   */
  requestDone(request: Message | FedmixError): void {
    if (request === null || typeof request !== 'object' || isFedmixError(request)) return;
    const read = checkedReads.get(request);
    if (read !== undefined) this.role.requestDone?.(read);
  }

  /**
   * The answer to a request decoded already (in process, once for every
   * client it was sent to), encoded as `encoding`.
   */
  handleDecodedSync(request: Message | FedmixError, encoding: Encoding): Uint8Array | undefined {
    return this.encode(request, this.answerSync(request), encoding);
  }

  async handleDecoded(request: Message | FedmixError, encoding: Encoding): Promise<Uint8Array | undefined> {
    return this.encode(request, await this.answer(request), encoding);
  }

  /**
   * @internal In process (InProcessTransport): the answer to a request decoded
   * already, handed over without writing its binary form (BinaryInProcess: the
   * receiver reads what its bytes would give, and counts their size), or as
   * JSON bytes.
   */
  passDecodedSync(request: Message | FedmixError, encoding: Encoding): Uint8Array | BinaryInProcess | undefined {
    return this.pass(request, this.answerSync(request), encoding);
  }

  /** @internal passDecodedSync() for roles that may answer asynchronously. */
  async passDecoded(request: Message | FedmixError, encoding: Encoding): Promise<Uint8Array | BinaryInProcess | undefined> {
    return this.pass(request, await this.answer(request), encoding);
  }

  private pass(request: Message | FedmixError, reply: Message | undefined, encoding: Encoding): Uint8Array | BinaryInProcess | undefined {
    if (encoding !== 'binary') return this.encode(request, reply, encoding);
    if (reply === undefined) return undefined;
    // a reply that cannot be encoded becomes a refusal saying so, as in encode()
    try {
      return BinaryInProcess.encode(sameRun(request, reply, this.read));
    } catch (e) {
      return BinaryInProcess.encode(sameRun(request, this.refuse(request, e)!, this.read));
    }
  }

  /** handle() without encoding (in-process runs of encoding 'none'): the request is a copy already; the reply is copied. */
  async handleCopy(request: Message): Promise<{ message: Message; bytes: number } | undefined> {
    return this.copy(request, await this.answer(request));
  }

  handleCopySync(request: Message): { message: Message; bytes: number } | undefined {
    return this.copy(request, this.answerSync(request));
  }

  private copy(request: Message, reply: Message | undefined): { message: Message; bytes: number } | undefined {
    if (reply === undefined) return undefined;
    try {
      return copyMessage(sameRun(request, reply, this.read));
    } catch (e) {
      return copyMessage(sameRun(request, this.refuse(request, e)!, this.read));
    }
  }

  /** The reply's wire bytes; a reply that cannot be encoded (NaN in it) becomes a refusal saying so. */
  private encode(request: Message | FedmixError, reply: Message | undefined, encoding: Encoding): Uint8Array | undefined {
    if (reply === undefined) return undefined;
    try {
      return encodeMessage(sameRun(request, reply, this.read), encoding);
    } catch (e) {
      return encodeMessage(sameRun(request, this.refuse(request, e)!, this.read), encoding);
    }
  }

  /** The request as received: a message, or why it cannot be read. */
  decode(bytes: Uint8Array): Message | FedmixError {
    try {
      return decodeMessage(bytes, { maxBytes: this.maxMessageBytes });
    } catch (e) {
      if (e instanceof FedmixError) return e;
      throw e;
    }
  }

  /** The role's answer to a decoded request, or a refusal. */
  async answer(request: Message | FedmixError): Promise<Message | undefined> {
    const envelope = this.readEnvelope(request);
    const stage = this.secureStage(envelope);
    if (stage) {
      // the crash drill (FEDMIX_CRASH_AT_STAGE), loaded only when set: a client it names dies here, unanswered, as a killed one would
      if (this.crashDrill !== undefined) await (await import('../secure-aggregation/crash-drill.js')).crashDrill(this.crashDrill, this.id, stage.kind);
      try {
        // the real request inside the round is accounted by the client's ledger like any other
        const ledger = async (inner: Message) => {
          if (this.budget?.concerns(inner, this.expectsReply(inner)) === true) await this.budget.account(inner, this.expectsReply(inner), this.id);
        };
        // loaded at the first secure round: a client never asked for one does not carry SecAgg+ (test/package-size.test.ts)
        if (!this.secure) {
          const { SecureParticipant } = await import('../secure-aggregation/client.js');
          this.secure ??= new SecureParticipant(this.role, this.id, ledger);
        }
        return await this.secure.answer(stage);
      } catch (e) {
        return this.refuse(stage, e);
      }
    }
    const checked = this.check(request, envelope);
    if (checked instanceof FedmixError) return this.refuse(request, checked);
    try {
      // the step is written to the ledger before the answer is made (refused: nothing spent, nothing answered)
      if (this.budget?.concerns(checked, this.expectsReply(checked)) === true) await this.budget.account(checked, this.expectsReply(checked), this.id);
      return await this.role.respond(checked);
    } catch (e) {
      return this.refuse(checked, e);
    }
  }

  answerSync(request: Message | FedmixError): Message | undefined {
    const envelope = this.readEnvelope(request);
    const stage = this.secureStage(envelope);
    if (stage) return this.refuse(stage, new InvalidMessageError(`client ${this.id} answers secure aggregation asynchronously; run it with runFederation (async)`));
    const checked = this.check(request, envelope);
    if (checked instanceof FedmixError) return this.refuse(request, checked);
    try {
      if (this.budget?.concerns(checked, this.expectsReply(checked)) === true) throw new InvalidParameterError(`client ${this.id} keeps a privacy ledger, which is written before it answers: run it with runFederation (async)`);
      const r = this.role.respond(checked);
      if (r instanceof Promise) throw new InvalidMessageError(`client ${this.id} answers asynchronously; run it with runFederation (async)`);
      return r;
    } catch (e) {
      return this.refuse(checked, e);
    }
  }

  /** Whether the protocol pairs a reply with the request's kind (else it is a notification). */
  private expectsReply(request: Message): boolean {
    return this.role.protocol.exchanges.get(request.kind)?.reply !== undefined;
  }

  /** FEDMIX_CRASH_AT_STAGE as this process was given it (crash-drill.ts; undefined: unset, as in any honest run) */
  private readonly crashDrill: string | undefined;

  /** Answers the stages of secure rounds (created at the first one). */
  private secure: SecureParticipant | undefined;

  /** The request and its envelope as the last answer read them (sameRun takes its run from there). */
  private read: Read | undefined;

  /**
   * The request's envelope, read once per answer (checkEnvelope's copy, or
   * why it cannot be read): handed over in process, a request may be
   * anything, so it is read under guard.
   */
  private readEnvelope(request: Message | FedmixError): Message | FedmixError {
    let envelope: Message | FedmixError;
    if (isFedmixError(request)) envelope = request;
    else {
      try {
        envelope = checkEnvelope(request);
      } catch (e) {
        if (!(e instanceof FedmixError)) throw e;
        envelope = e;
      }
    }
    this.read = { request, envelope };
    return envelope;
  }

  /** The request, when it is a stage of a secure round (its envelope checked). */
  private secureStage(envelope: Message | FedmixError): Message | undefined {
    if (isFedmixError(envelope) || !isSecureStage(envelope)) return undefined;
    this.last = { kind: envelope.kind, round: envelope.round };
    return envelope;
  }

  /** The request read against the client's protocol (an error when it cannot be used); `envelope`: readEnvelope's. */
  private check(request: Message | FedmixError, envelope: Message | FedmixError): Message | FedmixError {
    if (isFedmixError(envelope)) return envelope;
    if (isFedmixError(request)) return request;
    const exchange = this.role.protocol.exchanges.get(request.kind);
    if (!exchange) return new InvalidMessageError(`a ${this.role.protocol.name} client does not answer ${request.kind} messages`);
    try {
      let read = checkedReads.get(request);
      if (read === undefined || read.kind !== request.kind) {
        read = exchange.request.read(request);
        checkedReads.set(request, read);
      }
      this.last = { kind: read.kind, round: read.round };
      return read;
    } catch (e) {
      if (e instanceof FedmixError) return e;
      throw e;
    }
  }

  private refuse(request: Message | FedmixError, e: unknown): Message | undefined {
    // what the refusal says of the request: its kind and round, when it has readable ones
    let header: { kind: string; round: number } | undefined;
    try {
      if (!isFedmixError(request)) header = checkEnvelope(request) && { kind: request.kind, round: request.round };
    } catch {
      header = undefined;
    }
    // no WASM memory for what a request asks: the instance is intact, so the client refuses and stays usable
    if (e instanceof WasmAllocationError) {
      const what = header === undefined ? 'request' : `${header.kind} request`;
      e = new InvalidMessageError(`the client cannot allocate the memory this ${what} needs (${e.message})`);
    }
    if (!(e instanceof FedmixError) || e.code === 'WASM') throw e;
    // a notification gets no answer, not even a refusal
    if (header !== undefined && this.role.protocol.exchanges.get(header.kind)?.reply === undefined && this.role.protocol.exchanges.has(header.kind)) return undefined;
    const round = header?.round ?? 0;
    const reason = e.message.startsWith(`${this.id}:`) || e.message.startsWith(`${this.id} `) ? e.message : `${this.id}: ${e.message}`;
    return REFUSAL.create(this.id, round, { reason: reason.slice(0, 4000), code: e.code as (typeof CODES)[number] });
  }
}
