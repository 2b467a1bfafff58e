/**
 * The two wire forms of a message, and its size. JSON is for reading and
 * debugging (typed arrays travel as number arrays, about 20 bytes a number);
 * binary is an Arrow IPC stream whose numeric arrays travel as raw buffers
 * (arrow-ipc.ts), a mostly-zero one as its non-zero entries (sparse.ts). A
 * receiver tells them apart by their first byte, so a server reads both;
 * either decodes to the same message once its kind's schema has read the
 * payload. NaN and infinities have no place on either wire: they are
 * refused on the sending side. Sizes are checked before anything is decoded.
 */
import { FedmixError, formatThrown, formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { isDetached, MAX_VALUES, readOptions, requireInteger } from '../../validate.js';
import { arrowLength, decodeArrow, elementType, encodeArrow, isArrowStream, type Column, type NumericArray } from './arrow-ipc.js';
import { carve, densify, nonZeros, sparseForm } from './sparse.js';
import { checkEnvelope, type Message } from './envelope.js';

export type Encoding = 'json' | 'binary';
export const ENCODINGS: readonly Encoding[] = ['json', 'binary'];

/** The default limit on one message: 64 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 2 ** 20;

const utf8 = new TextEncoder();

/**
 * Whether every value is finite: x * 0 is 0 for finite x and NaN otherwise,
 * and a sum tells. Four running sums, so that the additions do not wait on
 * each other (a hot loop: every numeric array of every message).
 */
export function allFinite(a: ArrayLike<number>): boolean {
  const n = a.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += a[i]! * 0;
    s1 += a[i + 1]! * 0;
    s2 += a[i + 2]! * 0;
    s3 += a[i + 3]! * 0;
  }
  for (; i < n; i++) s0 += a[i]! * 0;
  return s0 + s1 + s2 + s3 === 0;
}
const text = new TextDecoder('utf-8', { fatal: true });

/** How deep a message's values may nest: declared payloads need a few levels; a sender's thousands would exhaust the stack of whatever walks them. */
const MAX_DEPTH = 64;

/**
 * The message as plain JSON values: numbers checked finite, objects with a
 * toJSON replaced by its value, and each typed array either kept aside as an
 * Arrow column (`columns` given: the value becomes {"$col": i}) or turned into
 * a number array. One pass; stringified afterwards without a replacer (a
 * replacer runs for every element of every array).
 */
function plain(m: Message, columns: Column[] | undefined): unknown {
  const e = checkEnvelope(m);
  try {
    return plainPayload(e, columns);
  } catch (err) {
    // a message made in process may hold a throwing getter or a cycle: its sender learns it cannot travel
    if (err instanceof FedmixError) throw err;
    throw new InvalidMessageError(`the ${e.kind} message could not be encoded (${formatThrown(err)})`, 'its message could not be encoded');
  }
}

function plainPayload(m: Message, columns: Column[] | undefined): unknown {
  // paths are dotted ("payload.models.0.alpha": the Arrow column names); errors show them with brackets
  const refuse = (value: unknown, path: string): never => {
    const where = path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    throw new InvalidMessageError(`cannot send ${formatValue(value)} in ${where} of a ${m.kind} message; only finite numbers travel`);
  };
  const walk = (value: unknown, key: string, path: string, depth: number): unknown => {
    if (depth > MAX_DEPTH) throw new InvalidMessageError(`cannot send a ${m.kind} message nesting deeper than ${MAX_DEPTH} levels (at ${path.slice(0, 200)}...)`);
    if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      value = (value as { toJSON: (k: string) => unknown }).toJSON(key);
    }
    // + 0 turns -0 into 0, as JSON writes it: a copy (copyMessage) holds what a JSON header would carry
    if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : refuse(value, path);
    if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') return refuse(value, path);
    if (value === null || typeof value !== 'object') return value;
    if (ArrayBuffer.isView(value)) {
      if (value instanceof DataView || value instanceof BigInt64Array || value instanceof BigUint64Array) return refuse(`a ${value.constructor.name}`, path);
      if (isDetached(value as unknown as Uint8Array)) return refuse('a typed array whose buffer was transferred (detached)', path);
      const a = value as unknown as ArrayLike<number>;
      const floats = value instanceof Float64Array || value instanceof Float32Array;
      // a sparse array's zeros are finite: only its values are checked
      const sparse = columns && elementType(value) !== undefined ? sparseForm(value as NumericArray) : undefined;
      if (floats && !allFinite(sparse ? sparse.values : a)) {
        for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i]!)) refuse(a[i], `${path}.${i}`);
      }
      if (columns && sparse) {
        // an array sparse.ts made dense is immutable: in process it is handed over as it is (BinaryInProcess)
        const shared = nonZeros(a) === sparse.indices ? (value as NumericArray) : undefined;
        // (the indices are new or immutable, the values new: sparseForm)
        columns.push({ name: `${path}.indices`, values: sparse.indices, own: true, ...(shared ? { shared } : {}) }, { name: `${path}.values`, values: sparse.values, own: true });
        return { $sparse: columns.length - 2, length: a.length };
      }
      if (columns && elementType(value) !== undefined) {
        columns.push({ name: path, values: value as NumericArray });
        return { $col: columns.length - 1 };
      }
      return Array.from(a);
    }
    if (Array.isArray(value)) {
      // a sparse array of 2^32 - 1 holes is cheap to make and impossible to write
      if (value.length > MAX_VALUES) throw new InvalidMessageError(`cannot send ${path.slice(0, 200)}: an array of ${value.length} entries; at most ${MAX_VALUES} travel`);
      return value.map((v, i) => (typeof v === 'number' ? (Number.isFinite(v) ? v : refuse(v, `${path}.${i}`)) : walk(v, String(i), `${path}.${i}`, depth + 1)));
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value)) {
      // an own '__proto__' key (JSON.parse makes them) would set out's prototype; JSON.stringify never writes it either
      if (k === '__proto__') continue;
      const v = walk((value as Record<string, unknown>)[k], k, `${path}.${k}`, depth + 1);
      if (v !== undefined) out[k] = v;
    }
    return out;
  };
  const envelope: Record<string, unknown> = { protocol: m.protocol, version: m.version, kind: m.kind, from: m.from, round: m.round };
  if (m.users !== undefined) envelope.users = m.users;
  if (m.run !== undefined) envelope.run = m.run;
  if (m.privacy !== undefined) envelope.privacy = { ...m.privacy };
  return { ...envelope, payload: walk(m.payload, 'payload', 'payload', 1) };
}

/** The JSON text of a message (typed arrays as number arrays). */
export function encodeMessage(m: Message): string;
/** The wire bytes of a message: UTF-8 JSON, or an Arrow IPC stream. */
export function encodeMessage(m: Message, encoding: Encoding): Uint8Array;
export function encodeMessage(m: Message, encoding?: Encoding): string | Uint8Array {
  if (encoding === undefined) return JSON.stringify(plain(m, undefined));
  if (encoding === 'json') return utf8.encode(JSON.stringify(plain(m, undefined)));
  if (encoding !== 'binary') throw new InvalidParameterError(`encoding must be 'json' or 'binary', got ${formatValue(encoding)}`);
  const columns: Column[] = [];
  const header = JSON.stringify(plain(m, columns));
  return encodeArrow(header, columns);
}

export interface DecodeOptions {
  /** accept only this kind */
  kind?: string;
  /** refuse anything larger, before decoding (default DEFAULT_MAX_MESSAGE_BYTES) */
  maxBytes?: number;
}

function checkSize(bytes: number, max: number): void {
  if (bytes > max) throw new InvalidMessageError(`a message of ${bytes} bytes is over the limit of ${max} bytes`, 'its message is over the size limit');
}


function malformedBinary(what: string): InvalidMessageError {
  return new InvalidMessageError(`a binary message ${what}`, 'its binary message is malformed');
}

/** What place() reads from: the columns, which were used, and how many bytes sparse columns may still expand to. */
interface Placing {
  columns: Column[];
  used: boolean[];
  budget: number;
}

/** Column i, marked used; each column is referred to exactly once. */
function take(p: Placing, i: unknown): NumericArray {
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= p.columns.length || p.used[i]) throw malformedBinary('refers to a missing or repeated column');
  p.used[i] = true;
  return p.columns[i]!.values;
}

/** The dense array of the sparse pair at columns (at, at + 1), within the size budget. */
function placeSparse(p: Placing, at: unknown, length: unknown): NumericArray {
  const indices = take(p, at);
  const values = take(p, (at as number) + 1);
  if (!(indices instanceof Uint32Array) || indices.length !== values.length) throw malformedBinary('has a sparse array whose indices and values do not match');
  if (typeof length !== 'number' || !Number.isInteger(length) || length < values.length) throw malformedBinary('has a sparse array of an impossible length');
  // a few bytes on the wire must not claim gigabytes once decoded: the message's size limit holds for its decoded arrays too
  p.budget -= length * values.BYTES_PER_ELEMENT;
  if (p.budget < 0) throw new InvalidMessageError('a binary message expands beyond the size limit once its sparse arrays are decoded', 'its message is over the size limit');
  // in process, the dense array these columns were taken from (its indices checked when it was made): what densify would make again
  const shared = p.columns[at as number]!.shared;
  if (shared !== undefined && shared.length === length && shared.constructor === wireType(values)) return shared;
  return densify(indices, values, length);
}

/** Puts the binary columns back where their placeholders are ({"$col": i}, or {"$sparse": i, "length": n} for a sparse pair). */
function place(value: unknown, p: Placing): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = place(value[i], p);
    return value;
  }
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === '$col') return take(p, o.$col);
  if (keys.length === 2 && '$sparse' in o && 'length' in o) return placeSparse(p, o.$sparse, o.length);
  for (const k of keys) o[k] = place(o[k], p);
  return o;
}

/** The message of a header and its columns, every column used once. */
function placeAll(header: unknown, columns: Column[], budget: number): unknown {
  const p: Placing = { columns, used: columns.map(() => false), budget };
  const out = place(header, p);
  if (p.used.some((u) => !u)) throw malformedBinary('carries a column nothing refers to');
  return out;
}

/**
 * A received message (JSON text, or wire bytes in either encoding) with its
 * envelope checked; the payload is checked by its kind's schema afterwards
 * (MessageType.read). InvalidMessageError for anything malformed or too large.
 */
export function decodeMessage(input: string | Uint8Array, options: DecodeOptions | string = {}): Message {
  // the caller's options are the caller's fault; what the bytes make go wrong is the sender's
  const o = typeof options === 'string' ? { kind: options } : readOptions(options, ['kind', 'maxBytes']);
  const max = requireInteger('maxBytes', o.maxBytes ?? DEFAULT_MAX_MESSAGE_BYTES, 0);
  if (o.kind !== undefined && typeof o.kind !== 'string') throw new InvalidParameterError(`kind must be a message kind (a string), got ${formatValue(o.kind)}`);
  try {
    return decode(input, o.kind, max);
  } catch (e) {
    // the bytes come from someone else: whatever they make go wrong is their message's fault
    if (e instanceof InvalidMessageError) throw e;
    throw new InvalidMessageError(`a message could not be decoded: ${formatThrown(e)}`, 'its message is malformed');
  }
}

function decode(input: string | Uint8Array, kind: string | undefined, max: number): Message {
  let parsed: unknown;
  if (typeof input === 'string') {
    // a UTF-16 length bounds the UTF-8 one from below; count exactly only near the limit
    if (input.length > max || (input.length * 3 > max && utf8.encode(input).length > max)) checkSize(utf8.encode(input).length, max);
    parsed = parseJson(input);
  } else if (input instanceof Uint8Array) {
    checkSize(input.length, max);
    if (isArrowStream(input)) {
      const { header, columns } = decodeArrow(input);
      parsed = placeAll(parseJson(header), columns, max);
    } else {
      let s: string;
      try {
        s = text.decode(input);
      } catch {
        throw new InvalidMessageError('a message is neither an Arrow IPC stream nor UTF-8 JSON', 'its message is malformed');
      }
      parsed = parseJson(s);
    }
  } else {
    throw new InvalidMessageError('a message must arrive as text or bytes');
  }
  return checkEnvelope(parsed, kind);
}

/**
 * A binary message handed over in process (InProcessTransport): its receiver
 * gets exactly what decodeMessage would make of its Arrow IPC bytes, and
 * `bytes` is exactly their length, but the stream is never written nor
 * parsed, since nobody else reads it. The sender's checks are encodeMessage's
 * (encode); the receiver's are decodeMessage's (decode: the size limit, the
 * nesting, sparse arrays within the limit, the envelope), on the same header
 * text. Its numeric arrays are copies, side by side in one of sparse.ts'
 * chunks (decoded arrays are views into shared bytes too), made when it is
 * sent: nothing is shared with
 * the sender but what sparse.ts made dense, which nobody may write to
 * (sparse.ts densify), so it is handed over instead of being made again.
 */
export class BinaryInProcess {
  private constructor(
    /** the length of the message's binary encoding */
    readonly bytes: number,
    private readonly header: string,
    private readonly columns: Column[],
  ) {}

  /** `m` sent: what encodeMessage(m, 'binary') checks, and throws. */
  static encode(m: Message): BinaryInProcess {
    const columns: Column[] = [];
    const header = JSON.stringify(plain(m, columns));
    const bytes = arrowLength(asciiOrUtf8Length(header), columns);
    // the dense columns copied into one buffer; a sparse pair's are the codec's own already
    let total = 0;
    for (const c of columns) if (!c.own) total = ((total + 7) & ~7) + c.values.byteLength;
    const { buffer, at: start } = carve(total);
    let at = start;
    for (let i = 0; i < columns.length; i++) {
      const c = columns[i]!;
      if (c.own) continue;
      at = (at + 7) & ~7;
      const copy = new (wireType(c.values))(buffer, at, c.values.length);
      copy.set(c.values);
      columns[i] = { name: c.name, values: copy };
      at += copy.byteLength;
    }
    return new BinaryInProcess(bytes, header, columns);
  }

  /**
   * The message for code that reads an exchange's replies itself (a
   * Received's `message`), under decodeMessage's default limit
   * (DEFAULT_MAX_MESSAGE_BYTES, sparse arrays once dense included); the
   * runtime reads it with decode(maxBytes). Each read decodes anew.
   */
  get message(): Message {
    return this.decode(DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** The message as its receiver reads it: what decodeMessage(bytes, { maxBytes }) gives, and throws. */
  decode(maxBytes: number): Message {
    try {
      checkSize(this.bytes, maxBytes);
      return checkEnvelope(placeAll(parseJson(this.header), this.columns, maxBytes));
    } catch (e) {
      if (e instanceof InvalidMessageError) throw e;
      throw new InvalidMessageError(`a message could not be decoded: ${formatThrown(e)}`, 'its message is malformed');
    }
  }
}

const WIRE_TYPES = { f64: Float64Array, f32: Float32Array, i32: Int32Array, u32: Uint32Array, u8: Uint8Array } as const;

/** The typed array type a receiver of `a` decodes (the base type, of a subclass too). */
function wireType(a: NumericArray): new (b: ArrayBuffer, at: number, n: number) => NumericArray {
  return WIRE_TYPES[elementType(a)!];
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** The UTF-8 length of a JSON text (almost always ASCII: its length). */
function asciiOrUtf8Length(s: string): number {
  return ASCII_ONLY.test(s) ? s.length : utf8Length(s);
}

/**
 * How deep the JSON text nests, counted over its brackets outside strings, in
 * one pass before parsing: whatever walks a parsed message (the schema, the
 * placing of binary columns) may then recurse without exhausting the stack.
 */
function checkNesting(s: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) throw new InvalidMessageError(`a message nests deeper than ${MAX_DEPTH} levels`, 'its message is malformed');
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

function parseJson(s: string): unknown {
  checkNesting(s);
  try {
    return JSON.parse(s);
  } catch {
    throw new InvalidMessageError('a message is not valid JSON', 'its message is malformed');
  }
}

/**
 * What the binary encoding of a message would weigh, without building it: its
 * header's JSON and its numeric arrays' bytes (the Arrow framing, a few
 * hundred bytes, left out). With the copy the receiver gets: plain values, its
 * own typed arrays, nothing shared with the sender. For simulations too large
 * to encode every message.
 */
export function copyMessage(m: Message): { message: Message; bytes: number } {
  const columns: Column[] = [];
  // plain() builds every object and array afresh: the copy of the header is its value, not a parse of its text
  const header = plain(m, columns);
  let bytes = utf8Length(JSON.stringify(header));
  for (const c of columns) bytes += c.values.byteLength;
  const copies = columns.map((c) => ({ name: c.name, values: c.values.slice() }));
  const message = placeAll(header, copies, Infinity) as Message;
  return { message, bytes };
}

/** The UTF-8 length of a string, without encoding it (a lone surrogate counts 3 bytes, as TextEncoder writes U+FFFD). */
function utf8Length(s: string): number {
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a pair: 4 bytes for its two units
      i++;
    } else bytes += 2;
  }
  return bytes;
}

/** Bytes of a JSON text on the wire (its UTF-8). */
export function wireBytes(textOrBytes: string | Uint8Array): number {
  if (typeof textOrBytes !== 'string' && !(ArrayBuffer.isView(textOrBytes) && textOrBytes instanceof Uint8Array)) {
    throw new InvalidParameterError(`wireBytes takes a JSON text or wire bytes (a Uint8Array), got ${formatValue(textOrBytes)}`);
  }
  return typeof textOrBytes === 'string' ? utf8.encode(textOrBytes).length : textOrBytes.length;
}

/**
 * A message's identity for spotting a copy delivered twice (MQTT QoS 1):
 * its length and two independent 32-bit hashes of its bytes. A collision
 * only makes one message look like a copy of the other.
 */
export function fingerprint(b: Uint8Array): string {
  let fnv = 0x811c9dc5;
  let mix = 0x9747b28c;
  for (let i = 0; i < b.length; i++) {
    fnv = Math.imul(fnv ^ b[i]!, 0x01000193);
    mix = Math.imul(mix ^ b[i]!, 0x5bd1e995);
    mix ^= mix >>> 15;
  }
  return `${b.length}:${fnv >>> 0}:${mix >>> 0}`;
}
