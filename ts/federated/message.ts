/**
 * Messages between federated roles: a small versioned envelope around a
 * payload, with a JSON wire encoding (typed arrays travel as number arrays).
 * Every message is validated on receipt by the role that gets it; this module
 * checks the envelope, the roles check their payloads.
 */
import { InvalidMessageError } from '../errors.js';

export const PROTOCOL = 'fedmix';
export const PROTOCOL_VERSION = 1;

export interface Message<K extends string = string, P = unknown> {
  protocol: typeof PROTOCOL;
  version: typeof PROTOCOL_VERSION;
  /** what the payload is, e.g. 'fedgengmm/local-model' */
  kind: K;
  /** the sending party's id */
  from: string;
  round: number;
  payload: P;
}

export function message<K extends string, P>(kind: K, from: string, round: number, payload: P): Message<K, P> {
  return { protocol: PROTOCOL, version: PROTOCOL_VERSION, kind, from, round, payload };
}

/**
 * JSON text of a message. NaN and infinities have no JSON form: they are
 * refused here, on the sending side. Typed arrays travel as number arrays.
 * The message is first copied into plain JSON values (checking every number
 * once) and then stringified without a replacer: a replacer is called for
 * every element of every array, which made large statistics messages several
 * times slower to encode.
 */
export function encodeMessage(m: Message): string {
  const refuse = (value: number, key: string) => {
    throw new InvalidMessageError(`cannot send ${String(value)} in field "${key}" of a ${m.kind} message; only finite numbers travel`);
  };
  const plain = (value: unknown, key: string): unknown => {
    if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      value = (value as { toJSON: (k: string) => unknown }).toJSON(key);
    }
    if (typeof value === 'number') return Number.isFinite(value) ? value : refuse(value, key);
    if (value === null || typeof value !== 'object') return value;
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      const a = value as unknown as ArrayLike<number>;
      for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) refuse(a[i]!, String(i));
      return Array.from(a);
    }
    if (Array.isArray(value)) return value.map((v, i) => plain(v, String(i)));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v, k);
    return out;
  };
  return JSON.stringify(plain(m, ''));
}

/** Parses and checks the envelope; `kind` restricts what is accepted. */
export function decodeMessage(text: string, kind?: string): Message {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    throw new InvalidMessageError('a message is not valid JSON');
  }
  return checkEnvelope(m, kind);
}

/** decodeMessage's envelope checks, also for a message received as an object (in process). */
export function checkEnvelope(m: unknown, kind?: string): Message {
  if (m === null || typeof m !== 'object') throw new InvalidMessageError('a message must be a JSON object');
  const e = m as Partial<Message>;
  if (e.protocol !== PROTOCOL) throw new InvalidMessageError(`not a fedmix message (protocol ${JSON.stringify(e.protocol)})`);
  if (e.version !== PROTOCOL_VERSION) throw new InvalidMessageError(`message version ${String(e.version)} is not supported; this fedmix speaks version ${PROTOCOL_VERSION}`);
  if (typeof e.kind !== 'string') throw new InvalidMessageError('a message needs a string "kind"');
  if (kind !== undefined && e.kind !== kind) throw new InvalidMessageError(`expected a ${kind} message, got ${e.kind}`);
  if (typeof e.from !== 'string' || e.from.length === 0) throw new InvalidMessageError('a message needs a non-empty "from"');
  if (!Number.isInteger(e.round) || (e.round as number) < 0) throw new InvalidMessageError('a message needs a non-negative integer "round"');
  if (!('payload' in e)) throw new InvalidMessageError('a message needs a "payload"');
  return e as Message;
}

/**
 * A received array of `length` finite numbers (a JSON array, or a typed array
 * in process) as a Float64Array; `who` names the sender in the error.
 */
export function finiteNumbers(name: string, v: unknown, length: number, who: string): Float64Array {
  if (!Array.isArray(v) && !(v instanceof Float64Array)) throw new InvalidMessageError(`${who}: ${name} must be an array of numbers`);
  if (v.length !== length) throw new InvalidMessageError(`${who}: ${name} has ${v.length} values; expected ${length}`);
  // one pass, types checked before use: a BigInt or a Symbol must not reach arithmetic
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const x: unknown = v[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new InvalidMessageError(`${who}: ${name}[${i}] is ${typeof x === 'bigint' ? `${x}n` : String(x)}; values must be finite numbers`);
    }
    out[i] = x;
  }
  return out;
}

const encoder = new TextEncoder();

/** Bytes of a message on the wire (UTF-8 of its JSON). */
export function wireBytes(text: string): number {
  return encoder.encode(text).length;
}
