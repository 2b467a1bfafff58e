/**
 * The binary wire form of a message: one Apache Arrow IPC stream (schema
 * message, one record batch of one row, end-of-stream marker), readable by any
 * Arrow implementation (apache-arrow's tableFromIPC, pyarrow.ipc.open_stream).
 * Column "header" (utf8) holds the envelope and the payload's small fields as
 * JSON, with a placeholder {"$col": i} where a numeric array was; each numeric
 * array is column i, a list of float64, float32, int32, uint32 or uint8 named
 * by its path in the message ("payload.s1"); a sparse array is two such
 * columns, "<path>.indices" (uint32) and "<path>.values" (codec.ts decides).
 *
 * Why not apache-arrow's tableToIPC/tableFromIPC per message: they cost about
 * 50 and 40 us per small message here (Table, schema and writer machinery),
 * which dominates a round of 10,000 clients; and a program that federates
 * need not load apache-arrow at all. The schema message is written once per
 * layout (arrow-schema.ts) and cached; the record batch header is a fixed
 * flatbuffer written and read here (Arrow's Message.fbs / Schema.fbs), and the
 * numeric buffers are copied in (and viewed on decode, without a copy, when
 * the received bytes are 8-byte aligned). test/messages.test.ts checks both
 * directions against apache-arrow itself.
 */
import { InvalidMessageError } from '../../errors.js';
import { HEADER_SCHEMA, METADATA_V5, schemaMessage as writeSchema, TYPE_FLOATING_POINT, TYPE_INT, TYPE_LIST, TYPE_UTF8, type ArrowElement } from './arrow-schema.js';

export type ElementType = 'f64' | 'f32' | 'i32' | 'u32' | 'u8';
export type NumericArray = Float64Array | Float32Array | Int32Array | Uint32Array | Uint8Array;

export interface Column {
  name: string;
  values: NumericArray;
  /**
   * On the indices column of a sparse pair made in this process: the dense
   * array it was taken from, when sparse.ts made that one dense (immutable by
   * its contract): handed over as it is in process (codec.ts BinaryInProcess).
   * Never on the wire.
   */
  shared?: NumericArray;
  /** values the codec made (or immutable ones): in process they need no copy. Never on the wire. */
  own?: true;
}

const CONTINUATION = 0xffffffff;
/** Message.fbs' MessageHeader code of a record batch (the schema's and the type codes are arrow-schema.ts'). */
const HEADER_RECORD_BATCH = 3;

interface Element {
  type: ElementType;
  bytes: number;
  make(buffer: ArrayBuffer, offset: number, length: number): NumericArray;
  arrow: ArrowElement;
}

const ELEMENTS: Record<ElementType, Element> = {
  f64: { type: 'f64', bytes: 8, make: (b, o, n) => new Float64Array(b, o, n), arrow: { float: 2 } },
  f32: { type: 'f32', bytes: 4, make: (b, o, n) => new Float32Array(b, o, n), arrow: { float: 1 } },
  i32: { type: 'i32', bytes: 4, make: (b, o, n) => new Int32Array(b, o, n), arrow: { int: 32, signed: true } },
  u32: { type: 'u32', bytes: 4, make: (b, o, n) => new Uint32Array(b, o, n), arrow: { int: 32, signed: false } },
  u8: { type: 'u8', bytes: 1, make: (b, o, n) => new Uint8Array(b, o, n), arrow: { int: 8, signed: false } },
};

/** The element type of a typed array the codec carries; undefined for anything else. */
export function elementType(a: unknown): ElementType | undefined {
  if (a instanceof Float64Array) return 'f64';
  if (a instanceof Float32Array) return 'f32';
  if (a instanceof Int32Array) return 'i32';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Uint8Array) return 'u8';
  return undefined;
}

const pad8 = (n: number) => (n + 7) & ~7;

/** Bounded caches: layouts come from senders, so a stream of new ones must not grow memory. */
class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly size: number) {}
  private last: K | undefined;
  get(k: K): V | undefined {
    const v = this.map.get(k);
    // the most recent entry asked again (a round of one message kind): nothing to reorder
    if (v !== undefined && k !== this.last) {
      this.map.delete(k);
      this.map.set(k, v);
      this.last = k;
    }
    return v;
  }
  set(k: K, v: V): void {
    if (this.map.size >= this.size) this.map.delete(this.map.keys().next().value as K);
    this.map.set(k, v);
    this.last = k;
  }
}

const schemaCache = new Lru<string, Uint8Array>(256);

/** The last layout's schema message: a round's messages mostly repeat it, and then no key is built. */
let lastLayout: { names: string[]; types: ElementType[]; bytes: Uint8Array } | undefined;

/** The encapsulated schema message for a header column and these numeric columns. */
function schemaMessage(columns: readonly Column[], types: readonly ElementType[]): Uint8Array {
  const last = lastLayout;
  if (last !== undefined && last.names.length === columns.length && columns.every((c, i) => c.name === last.names[i] && types[i] === last.types[i])) return last.bytes;
  const key = columns.map((c, i) => `${c.name}\u0000${types[i]}`).join('\u0001');
  let bytes = schemaCache.get(key);
  if (!bytes) {
    bytes = writeSchema(columns.map((c) => c.name), types.map((t) => ELEMENTS[t].arrow));
    schemaCache.set(key, bytes);
  }
  lastLayout = { names: columns.map((c) => c.name), types: [...types], bytes };
  return bytes;
}

/** A non-negative int64 below 2^53 as two 32-bit writes. */
function setInt64(v: DataView, p: number, x: number): void {
  v.setUint32(p, x % 2 ** 32, true);
  v.setUint32(p + 4, Math.floor(x / 2 ** 32), true);
}

/**
 * Where everything goes in the stream of a header of `textLength` UTF-8 bytes
 * and these columns: what encodeArrow writes and what arrowLength counts.
 */
function layoutOf(textLength: number, columns: readonly Column[]) {
  const types = columns.map((c) => elementType(c.values)!);
  const schema = schemaMessage(columns, types);
  const nCols = columns.length;
  const nodes = 1 + 2 * nCols;
  const nBuffers = 3 + 4 * nCols;
  // the record batch flatbuffer, laid out forward (offsets point ahead, vtables behind):
  //   0 root offset | 8 Message vtable (12) | 24 Message table (24) | 48 RecordBatch vtable (10)
  //   64 RecordBatch table (24) | 92 nodes vector | buffers vector
  const nodesAt = 92; // its count at 92, its 16-byte elements 8-aligned from 96
  const buffersAt = nodesAt + 4 + 16 * nodes + 4; // length 4 bytes before 8-aligned elements
  const fbLength = pad8(buffersAt + 4 + 16 * nBuffers);
  // body: header (validity 0, offsets 8, text), then per column list validity 0, offsets 8, child validity 0, values
  let bodyLength = 8 + pad8(textLength);
  for (const c of columns) bodyLength += 8 + pad8(c.values.byteLength);
  // schema, continuation + length, record batch metadata, body, end of stream
  const total = schema.length + 8 + fbLength + bodyLength + 8;
  return { schema, nodes, nBuffers, nodesAt, buffersAt, fbLength, bodyLength, total };
}

/** The length of encodeArrow(header, columns) for a header of `textLength` UTF-8 bytes, without writing it. */
export function arrowLength(textLength: number, columns: readonly Column[]): number {
  return layoutOf(textLength, columns).total;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

const encoder = new TextEncoder();
const ASCII = /^[\x00-\x7f]*$/;

/**
 * One message as an Arrow IPC stream: `header` (JSON text) and the numeric
 * columns, in order. The schema message comes from a cache (one per layout);
 * the record batch's metadata is written straight into the output, and the
 * values are copied once, into the returned bytes.
 */
export function encodeArrow(header: string, columns: readonly Column[]): Uint8Array {
  // JSON text is almost always ASCII: then its UTF-8 length is its length
  const text = ASCII.test(header) ? undefined : encoder.encode(header);
  const textLength = text ? text.length : header.length;
  const { schema, nodes, nBuffers, nodesAt, buffersAt, fbLength, bodyLength, total } = layoutOf(textLength, columns);
  const fb = schema.length + 8;
  const bodyAt = fb + fbLength;
  const out = new Uint8Array(total);
  out.set(schema, 0);
  const v = new DataView(out.buffer);
  v.setUint32(schema.length, CONTINUATION, true);
  v.setInt32(schema.length + 4, fbLength, true);
  // root -> Message table at 24
  v.setUint32(fb, 24, true);
  // Message vtable at 8: vtable size, table size, version@16, header_type@18, header@4, bodyLength@8
  v.setUint16(fb + 8, 12, true);
  v.setUint16(fb + 10, 24, true);
  v.setUint16(fb + 12, 16, true);
  v.setUint16(fb + 14, 18, true);
  v.setUint16(fb + 16, 4, true);
  v.setUint16(fb + 18, 8, true);
  // Message table at 24
  v.setInt32(fb + 24, 24 - 8, true);
  v.setUint32(fb + 28, 64 - 28, true);
  setInt64(v, fb + 32, bodyLength);
  v.setInt16(fb + 40, METADATA_V5, true);
  v.setUint8(fb + 42, HEADER_RECORD_BATCH);
  // RecordBatch vtable at 48: length@8, nodes@4, buffers@16
  v.setUint16(fb + 48, 10, true);
  v.setUint16(fb + 50, 24, true);
  v.setUint16(fb + 52, 8, true);
  v.setUint16(fb + 54, 4, true);
  v.setUint16(fb + 56, 16, true);
  // RecordBatch table at 64
  v.setInt32(fb + 64, 64 - 48, true);
  v.setUint32(fb + 68, nodesAt - 68, true);
  setInt64(v, fb + 72, 1);
  v.setUint32(fb + 80, buffersAt - 80, true);
  // nodes: the header (one row), then per column the list (one row) and its values (null counts 0: already zero)
  v.setUint32(fb + nodesAt, nodes, true);
  let node = fb + nodesAt + 4;
  setInt64(v, node, 1);
  for (const c of columns) {
    setInt64(v, (node += 16), 1);
    setInt64(v, (node += 16), c.values.length);
  }
  // buffers (offset, length) as the body is written: a list's offsets are [0, length] of its one row
  v.setUint32(fb + buffersAt, nBuffers, true);
  let entry = fb + buffersAt + 4;
  let body = 0;
  const buffer = (length: number): number => {
    setInt64(v, entry, body);
    setInt64(v, entry + 8, length);
    entry += 16;
    const at = bodyAt + body;
    body += pad8(length);
    return at;
  };
  buffer(0);
  v.setInt32(buffer(8) + 4, textLength, true);
  const textAt = buffer(textLength);
  if (text) out.set(text, textAt);
  else encoder.encodeInto(header, out.subarray(textAt, textAt + textLength));
  for (const c of columns) {
    const values = c.values;
    buffer(0);
    v.setInt32(buffer(8) + 4, values.length, true);
    buffer(0);
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), buffer(values.byteLength));
  }
  // end of stream
  v.setUint32(bodyAt + bodyLength, CONTINUATION, true);
  return out;
}

function malformed(what: string): InvalidMessageError {
  return new InvalidMessageError(`a binary message is not a valid fedmix Arrow IPC stream: ${what}`, 'its binary message is malformed');
}

/** A bounds-checked reader of the flatbuffers in one metadata block. */
class Flatbuffer {
  constructor(
    private readonly v: DataView,
    private readonly start: number,
    private readonly end: number,
  ) {}

  private at(p: number, size: number): number {
    if (!(p >= this.start && p + size <= this.end)) throw malformed('an offset points outside its metadata');
    return p;
  }
  u8(p: number): number {
    return this.v.getUint8(this.at(p, 1));
  }
  i16(p: number): number {
    return this.v.getInt16(this.at(p, 2), true);
  }
  i32(p: number): number {
    return this.v.getInt32(this.at(p, 4), true);
  }
  u32(p: number): number {
    return this.v.getUint32(this.at(p, 4), true);
  }
  /** A non-negative int64 below 2^53 (two 32-bit reads: BigInt is slow on this path). */
  i64(p: number): number {
    this.at(p, 8);
    const hi = this.v.getUint32(p + 4, true);
    if (hi > 0x1fffff) throw malformed('a length is out of range');
    return hi * 2 ** 32 + this.v.getUint32(p, true);
  }
  root(): number {
    return this.ref(this.start);
  }
  /** Where the uoffset at p points. */
  ref(p: number): number {
    return this.at(p + this.u32(p), 4);
  }
  /** Position of field `slot` of the table at t, or undefined when absent. */
  field(t: number, slot: number): number | undefined {
    const vt = this.at(t - this.i32(t), 4);
    const vtSize = this.v.getUint16(vt, true);
    if (vtSize < 4 || vtSize % 2 !== 0) throw malformed('a vtable is malformed');
    this.at(vt, vtSize);
    if (4 + 2 * slot >= vtSize) return undefined;
    const off = this.v.getUint16(vt + 4 + 2 * slot, true);
    return off === 0 ? undefined : this.at(t + off, 1);
  }
  /** [first element, count] of the vector referenced at p; elements of `size` bytes. */
  vector(p: number, size: number): [number, number] {
    const at = this.ref(p);
    const n = this.u32(at);
    this.at(at + 4, n * size);
    return [at + 4, n];
  }
  string(p: number): string {
    const [first, n] = this.vector(p, 1);
    try {
      return decoder.decode(new Uint8Array(this.v.buffer, this.v.byteOffset + first, n));
    } catch {
      throw malformed('a name is not valid UTF-8');
    }
  }
}

interface Layout {
  names: string[];
  types: ElementType[];
}

/** Parsed schemas by their bytes: a hash picks the bucket, a byte comparison confirms. */
const layoutCache = new Lru<number, { bytes: Uint8Array; layout: Layout }[]>(256);
let lastSchema: { bytes: Uint8Array; layout: Layout } | undefined;

/** FNV-1a over 32-bit words (schema messages are 8-byte multiples, read through a DataView). */
function hashOf(v: DataView, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i += 4) h = Math.imul(h ^ v.getUint32(i, true), 0x01000193);
  return h >>> 0;
}

/** Byte equality, word by word where both are 4-byte aligned (a schema is compared for every message). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0 && a.length % 4 === 0) {
    const x = new Uint32Array(a.buffer, a.byteOffset, a.length / 4);
    const y = new Uint32Array(b.buffer, b.byteOffset, b.length / 4);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  }
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The columns a schema message declares: a utf8 "header", then lists of a supported element type. */
function readSchema(fb: Flatbuffer): Layout {
  const msg = fb.root();
  const headerType = fb.field(msg, 1);
  if (headerType === undefined || fb.u8(headerType) !== HEADER_SCHEMA) throw malformed('it does not start with a schema');
  const schema = fb.ref(fb.field(msg, 2) ?? malformedAt('the schema is missing'));
  const fieldsAt = fb.field(schema, 1);
  if (fieldsAt === undefined) throw malformed('the schema has no fields');
  const [first, n] = fb.vector(fieldsAt, 4);
  const names: string[] = [];
  const types: ElementType[] = [];
  for (let i = 0; i < n; i++) {
    const f = fb.ref(first + 4 * i);
    const nameAt = fb.field(f, 0);
    const name = nameAt === undefined ? '' : fb.string(nameAt);
    const typeCode = fb.field(f, 2);
    const code = typeCode === undefined ? 0 : fb.u8(typeCode);
    if (i === 0) {
      if (name !== 'header' || code !== TYPE_UTF8) throw malformed('its first column must be the utf8 "header"');
      continue;
    }
    if (code !== TYPE_LIST) throw malformed(`column ${JSON.stringify(name)} is not a list`);
    const childrenAt = fb.field(f, 5);
    if (childrenAt === undefined) throw malformed(`list column ${JSON.stringify(name)} has no item field`);
    const [c0, nc] = fb.vector(childrenAt, 4);
    if (nc !== 1) throw malformed(`list column ${JSON.stringify(name)} must have one item field`);
    const child = fb.ref(c0);
    const childCode = fb.field(child, 2);
    const childType = fb.field(child, 3);
    if (childCode === undefined || childType === undefined) throw malformed(`the items of ${JSON.stringify(name)} have no type`);
    const t = fb.ref(childType);
    types.push(elementOf(fb, fb.u8(childCode), t, name));
    names.push(name);
  }
  return { names, types };
}

function malformedAt(what: string): never {
  throw malformed(what);
}

function elementOf(fb: Flatbuffer, code: number, t: number, name: string): ElementType {
  if (code === TYPE_FLOATING_POINT) {
    const precision = fb.field(t, 0);
    const p = precision === undefined ? 0 : fb.i16(precision);
    if (p === 2) return 'f64';
    if (p === 1) return 'f32';
  } else if (code === TYPE_INT) {
    const widthAt = fb.field(t, 0);
    const signedAt = fb.field(t, 1);
    const width = widthAt === undefined ? 0 : fb.i32(widthAt);
    const signed = signedAt !== undefined && fb.u8(signedAt) !== 0;
    if (width === 32) return signed ? 'i32' : 'u32';
    if (width === 8 && !signed) return 'u8';
  }
  throw malformed(`the items of ${JSON.stringify(name)} are of a type fedmix does not carry`);
}

/** The header text and numeric columns of a binary message; InvalidMessageError when it is not one. */
export function decodeArrow(bytes: Uint8Array): { header: string; columns: Column[] } {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let p = 0;
  /** The next encapsulated message's metadata: [start, end) of its flatbuffer. */
  const next = (): [number, number] => {
    if (p + 8 > bytes.length || v.getUint32(p, true) !== CONTINUATION) throw malformed('a message does not start with the continuation marker');
    const len = v.getInt32(p + 4, true);
    if (len <= 0 || len % 8 !== 0 || p + 8 + len > bytes.length) throw malformed('a metadata length is out of range');
    const range: [number, number] = [p + 8, p + 8 + len];
    p += 8 + len;
    return range;
  };
  const [s0, s1] = next();
  if (s1 - s0 > 65536) throw malformed('the schema is too large');
  // the schema is parsed once per distinct schema; a round's messages mostly repeat the last one
  const schemaBytes = bytes.subarray(s0, s1);
  let layout = lastSchema && sameBytes(lastSchema.bytes, schemaBytes) ? lastSchema.layout : undefined;
  if (!layout) {
    const hash = hashOf(v, s0, s1);
    const bucket = layoutCache.get(hash) ?? [];
    lastSchema = bucket.find((e) => sameBytes(e.bytes, schemaBytes));
    if (!lastSchema) {
      lastSchema = { bytes: schemaBytes.slice(), layout: readSchema(new Flatbuffer(v, s0, s1)) };
      bucket.push(lastSchema);
      if (bucket.length > 4) bucket.shift();
      layoutCache.set(hash, bucket);
    }
    layout = lastSchema.layout;
  }
  const [r0, r1] = next();
  const fb = new Flatbuffer(v, r0, r1);
  const msg = fb.root();
  const headerType = fb.field(msg, 1);
  if (headerType === undefined || fb.u8(headerType) !== HEADER_RECORD_BATCH) throw malformed('the schema is not followed by a record batch');
  const bodyAt = fb.field(msg, 3);
  const bodyLength = bodyAt === undefined ? 0 : fb.i64(bodyAt);
  const body = p;
  if (body + bodyLength > bytes.length) throw malformed('the body is truncated');
  // after the body, the end-of-stream marker (optional in Arrow) and nothing else: no bytes ride along unread
  const rest = bytes.length - (body + bodyLength);
  if (rest !== 0 && !(rest === 8 && v.getUint32(body + bodyLength, true) === CONTINUATION && v.getUint32(body + bodyLength + 4, true) === 0)) {
    throw malformed(`${rest} bytes follow the record batch where only the end-of-stream marker may`);
  }
  const rb = fb.ref(fb.field(msg, 2) ?? malformedAt('the record batch is missing'));
  const lengthAt = fb.field(rb, 0);
  if (lengthAt === undefined || fb.i64(lengthAt) !== 1) throw malformed('the record batch must hold exactly one row');
  if (fb.field(rb, 3) !== undefined) throw malformed('compressed bodies are not accepted');
  const nodesAt = fb.field(rb, 1);
  const buffersAt = fb.field(rb, 2);
  if (nodesAt === undefined || buffersAt === undefined) throw malformed('the record batch has no nodes or buffers');
  const [n0, nNodes] = fb.vector(nodesAt, 16);
  const [b0, nBuffers] = fb.vector(buffersAt, 16);
  const nCols = layout.names.length;
  if (nNodes !== 1 + 2 * nCols || nBuffers !== 3 + 4 * nCols) throw malformed('the record batch does not match its schema');
  const node = (i: number) => [fb.i64(n0 + 16 * i), fb.i64(n0 + 16 * i + 8)] as const;
  const buffer = (i: number): [number, number] => {
    const offset = fb.i64(b0 + 16 * i);
    const length = fb.i64(b0 + 16 * i + 8);
    if (offset + length > bodyLength) throw malformed('a buffer lies outside the body');
    return [body + offset, length];
  };
  /** The [first, last) offsets of row 0 of a list or utf8 node, within `limit` items. */
  const row = (offsets: [number, number], limit: number): [number, number] => {
    if (offsets[1] < 8) throw malformed('an offsets buffer is too short');
    const a = v.getInt32(offsets[0], true);
    const b = v.getInt32(offsets[0] + 4, true);
    if (!(a >= 0 && b >= a && b <= limit)) throw malformed('list offsets are out of range');
    return [a, b];
  };
  for (let i = 0; i < nNodes; i++) if (node(i)[1] !== 0) throw malformed('null values are not accepted');
  if (node(0)[0] !== 1) throw malformed('the header column must hold one row');
  const text = buffer(2);
  const [h0, h1] = row(buffer(1), text[1]);
  let header: string;
  try {
    header = decoder.decode(bytes.subarray(text[0] + h0, text[0] + h1));
  } catch {
    throw malformed('the header is not valid UTF-8');
  }
  const columns: Column[] = [];
  for (let i = 0; i < nCols; i++) {
    const el = ELEMENTS[layout.types[i]!];
    const [listRows] = node(1 + 2 * i);
    const [items] = node(2 + 2 * i);
    if (listRows !== 1) throw malformed(`column ${JSON.stringify(layout.names[i])} must hold one row`);
    const data = buffer(3 + 4 * i + 3);
    if (data[1] < items * el.bytes) throw malformed(`column ${JSON.stringify(layout.names[i])} is shorter than its length`);
    const [a, b] = row(buffer(3 + 4 * i + 1), items);
    const at = bytes.byteOffset + data[0] + a * el.bytes;
    // a view when aligned (no copy); otherwise a copy
    const values = at % el.bytes === 0 ? el.make(bytes.buffer as ArrayBuffer, at, b - a) : el.make(bytes.slice(data[0] + a * el.bytes, data[0] + b * el.bytes).buffer, 0, b - a);
    columns.push({ name: layout.names[i]!, values });
  }
  return { header, columns };
}

/** Whether bytes look like an Arrow IPC stream (the continuation marker), as opposed to JSON text. */
export function isArrowStream(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xff && bytes[2] === 0xff && bytes[3] === 0xff;
}
