/**
 * The schema message of a binary message (arrow-ipc.ts), written here as the
 * flatbuffer Arrow's Message.fbs and Schema.fbs describe: a utf8 "header"
 * column, then one non-nullable list column per numeric array. Written by
 * hand so that the federation's wire format needs no apache-arrow: a program
 * that only federates never loads it (test/messages.test.ts reads these
 * schemas with apache-arrow and compares them with its own).
 */

/** Arrow's MetadataVersion V5 and the Schema message header (Message.fbs); arrow-ipc.ts reads with the same codes. */
export const METADATA_V5 = 4;
export const HEADER_SCHEMA = 1;
/** Type union codes of Schema.fbs. */
export const TYPE_INT = 2;
export const TYPE_FLOATING_POINT = 3;
export const TYPE_UTF8 = 5;
export const TYPE_LIST = 12;

/** A column's element type as Schema.fbs spells it: Int (width, signed) or FloatingPoint (precision 1 single, 2 double). */
export type ArrowElement = { int: 8 | 32; signed: boolean } | { float: 1 | 2 };

/** A flatbuffer value: a table (its fields by slot, absent ones undefined), a string or a vector of tables. */
type Node = { table: (Slot | undefined)[] } | { text: string } | { tables: Node[] };
type Slot = { scalar: number; size: 1 | 2 | 4 } | Node;

const isScalar = (s: Slot): s is { scalar: number; size: 1 | 2 | 4 } => 'scalar' in s;
const utf8 = new TextEncoder();

/**
 * Writes flatbuffers front to back: a table, then its children after it (a
 * uoffset points forward), each vtable before its table. As flatbuffers'
 * own builders do, a vtable already written is pointed to again rather than
 * repeated, and it stops at the table's last present field: a schema has a
 * handful of distinct vtables, and every message of a binary federation
 * carries its schema (a numeric column was 24 to 48 bytes heavier without).
 * Every scalar sits at a multiple of its size from the start, which the
 * caller keeps 8-byte aligned.
 */
class Writer {
  private bytes = new Uint8Array(256);
  private view = new DataView(this.bytes.buffer);
  /** vtables written, by their contents: a later table with the same one points back to it (its soffset is positive) */
  private readonly vtables = new Map<string, number>();
  length = 0;

  reserve(n: number): number {
    while (this.length + n > this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
      this.view = new DataView(grown.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }
  align(n: number): void {
    this.reserve((n - (this.length % n)) % n);
  }
  set(at: number, value: number, size: 1 | 2 | 4): void {
    if (size === 1) this.view.setUint8(at, value);
    else if (size === 2) this.view.setInt16(at, value, true);
    else this.view.setInt32(at, value, true);
  }
  /** Writes `node` at the end and returns where it starts (a table's soffset, a string's or vector's length). */
  place(node: Node): number {
    if ('text' in node) {
      const b = utf8.encode(node.text);
      this.align(4);
      const at = this.reserve(4 + b.length + 1);
      this.set(at, b.length, 4);
      this.bytes.set(b, at + 4);
      return at;
    }
    if ('tables' in node) {
      this.align(4);
      const at = this.reserve(4 + 4 * node.tables.length);
      this.set(at, node.tables.length, 4);
      node.tables.forEach((t, i) => this.pointAt(at + 4 + 4 * i, this.place(t)));
      return at;
    }
    // the table's fields after its soffset, widest first (each aligned by its size, as the table start is by 4)
    const slots = node.table;
    const order = slots.map((s, i) => [s, i] as const).filter((e): e is readonly [Slot, number] => e[0] !== undefined);
    const sizeOf = (s: Slot) => (isScalar(s) ? s.size : 4);
    order.sort((a, b) => sizeOf(b[0]) - sizeOf(a[0]));
    const offsets = new Array<number>(slots.length).fill(0);
    let size = 4;
    for (const [s, i] of order) {
      offsets[i] = size;
      size += sizeOf(s);
    }
    // the vtable lists slots up to the last present one (a reader takes the rest as absent)
    let present = slots.length;
    while (present > 0 && slots[present - 1] === undefined) present--;
    const vtableBytes = 4 + 2 * present;
    const key = `${size},${offsets.slice(0, present).join(',')}`;
    let vtable = this.vtables.get(key);
    this.align(4);
    if (vtable === undefined) {
      // the vtable ends where the table starts, 4-aligned
      if ((this.length + vtableBytes) % 4 !== 0) this.reserve(2);
      vtable = this.reserve(vtableBytes);
      this.set(vtable, vtableBytes, 2);
      this.set(vtable + 2, size, 2);
      for (let i = 0; i < present; i++) this.set(vtable + 4 + 2 * i, offsets[i]!, 2);
      this.vtables.set(key, vtable);
    }
    const table = this.reserve(size);
    this.set(table, table - vtable, 4);
    for (const [s, i] of order) if (isScalar(s)) this.set(table + offsets[i]!, s.scalar, s.size);
    for (const [s, i] of order) if (!isScalar(s)) this.pointAt(table + offsets[i]!, this.place(s));
    return table;
  }
  private pointAt(field: number, target: number): void {
    this.set(field, target - field, 4);
  }
  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

const u8 = (scalar: number) => ({ scalar, size: 1 as const });
const i16 = (scalar: number) => ({ scalar, size: 2 as const });
const i32 = (scalar: number) => ({ scalar, size: 4 as const });

/**
 * A Field table (Schema.fbs: name, nullable, type_type, type, dictionary,
 * children): never nullable, which is the default and so left out, as
 * flatbuffers leaves out every default. The children vector is written even
 * when empty: Arrow C++ before 4.0 refused a field without one.
 */
function field(name: string, typeCode: number, type: Node, children: Node[]): Node {
  return { table: [{ text: name }, undefined, u8(typeCode), type, undefined, { tables: children }] };
}

function elementField(e: ArrowElement): Node {
  // Int's is_signed defaults to false: written only when true
  return 'float' in e ? field('item', TYPE_FLOATING_POINT, { table: [i16(e.float)] }, []) : field('item', TYPE_INT, { table: [i32(e.int), e.signed ? u8(1) : undefined] }, []);
}

/**
 * The encapsulated schema message (continuation marker, metadata length, the
 * Message flatbuffer padded to 8 bytes) for a utf8 "header" column and one
 * list column per name, of the given element types.
 */
export function schemaMessage(names: readonly string[], elements: readonly ArrowElement[]): Uint8Array {
  const fields = [field('header', TYPE_UTF8, { table: [] }, []), ...names.map((n, i) => field(n, TYPE_LIST, { table: [] }, [elementField(elements[i]!)]))];
  // Schema: endianness (Little, the default), fields; Message: version, header_type, header (bodyLength 0, the default)
  const message: Node = { table: [i16(METADATA_V5), u8(HEADER_SCHEMA), { table: [undefined, { tables: fields }] }] };
  const fb = new Writer();
  // the flatbuffer opens with the root table's uoffset; it starts 8 bytes into the message, after the prefix
  const root = fb.reserve(4);
  fb.set(root, fb.place(message) - root, 4);
  fb.align(8);
  const body = fb.result();
  const out = new Uint8Array(8 + body.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, 0xffffffff, true);
  v.setInt32(4, body.length, true);
  out.set(body, 8);
  return out;
}
