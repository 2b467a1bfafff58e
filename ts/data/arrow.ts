/**
 * Arrow in and out, for any apache-arrow version a project has (a peer
 * dependency, >= 15). Tables and vectors are recognised by their shape, never
 * by `instanceof`: a Table made by another copy or version of apache-arrow
 * (a project's own, DuckDB's, a worker's bundle) is not an instance of ours.
 * What is read here are the parts of the Arrow JS API that every version
 * fedmix is tested with (15 to 21, test/arrow-versions.test.ts) shares:
 * schema.fields, numRows, getChild, type.typeId, get, isValid, toArray; type
 * ids are the Arrow format's (Schema.fbs), the same in every version, and reading
 * them needs no apache-arrow. Tables given back, and tables read from IPC bytes, are
 * built with the project's own apache-arrow (external to fedmix's bundle), loaded on
 * demand (arrow-library.ts: loadArrow).
 */
import type { Table, Vector } from 'apache-arrow';
import { arrowLibrary } from './arrow-library.js';
import { FedmixError, formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { guardRead, MAX_VALUES, readOptions, requireAttached, requireLength, requireOneOf } from '../validate.js';
import { isObject, isVectorNamed, NUMERIC, nullError, numericValues, typeName, vectorShaped, vectorToArray, vectorToFloat64, type ArrowVectorLike } from './arrow-vector.js';

export { isVectorNamed, vectorToArray, vectorToFloat64, type ArrowVectorLike };

/** An Arrow Table or RecordBatch of any apache-arrow version, as fedmix reads it. */
export interface ArrowTableLike {
  readonly numRows: number;
  readonly schema: { readonly fields: ReadonlyArray<{ readonly name: string }> };
  getChild(name: string): unknown;
}

/** What to do with null values: refuse them (a typed error naming the column) or drop the rows that hold one. */
export type NullPolicy = 'error' | 'drop';
export const NULL_POLICIES: readonly NullPolicy[] = ['error', 'drop'];

/** Arrow's file magic "ARROW1" and the stream format's continuation marker. */
const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31];
const CONTINUATION = 0xffffffff;


/** Whether `x` has the shape of an Arrow Table or RecordBatch (any apache-arrow version). Reading it may run a caller's getters. */
function tableShaped(x: unknown): x is ArrowTableLike {
  if (!isObject(x) || ArrayBuffer.isView(x) || Array.isArray(x)) return false;
  const schema = x.schema;
  return typeof x.getChild === 'function' && typeof x.numRows === 'number' && isObject(schema) && Array.isArray(schema.fields);
}

/** Whether `x` is an Arrow Table or RecordBatch, of any apache-arrow version (recognised by its shape). */
export function isArrowTable(x: unknown): x is ArrowTableLike {
  return isTableNamed(x, 'the value');
}

/** Whether `x` is an Arrow Vector, of any apache-arrow version (recognised by its shape). */
export function isArrowVector(x: unknown): x is ArrowVectorLike {
  return isVectorNamed(x, 'the value');
}

/** isArrowTable for an argument called `name` (a getter or Proxy that throws is an InvalidDataError naming it). */
export function isTableNamed(x: unknown, name: string, Err: new (m: string) => FedmixError = InvalidDataError): x is ArrowTableLike {
  return guardRead(name, () => tableShaped(x), Err);
}

const byteLengthOfBuffer = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')!.get!;

/** Whether `x` is an ArrayBuffer, asked through its internal slot: no Proxy trap runs (instanceof would run one). */
function isArrayBuffer(x: unknown): x is ArrayBuffer {
  try {
    byteLengthOfBuffer.call(x);
    return true;
  } catch {
    return false;
  }
}

/** The bytes of `x` when it is a Uint8Array or ArrayBuffer, else undefined (asked without running a Proxy trap). */
function bytesOf(x: unknown): Uint8Array | undefined {
  if (isArrayBuffer(x)) return new Uint8Array(x);
  // isView first: it runs no Proxy trap, and instanceof on a real view runs none either
  if (ArrayBuffer.isView(x) && x instanceof Uint8Array) return x;
  return undefined;
}

/** Whether `x` is bytes (a Uint8Array or ArrayBuffer), which fedmix reads as Arrow IPC where a table is taken. */
export function isArrowBytes(x: unknown): x is Uint8Array | ArrayBuffer {
  return bytesOf(x) !== undefined;
}

/** Whether `x` is Arrow IPC bytes (a Uint8Array or ArrayBuffer in the file format, "ARROW1", or the stream format). */
export function isArrowIPC(x: unknown): x is Uint8Array | ArrayBuffer {
  const b = bytesOf(x);
  if (!b || b.length < 8) return false;
  if (MAGIC.every((m, i) => b[i] === m)) return true;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // a stream opens with the continuation marker and the schema message's length
  return v.getUint32(0, true) === CONTINUATION && v.getInt32(4, true) > 0;
}

/** Arrow IPC bytes (file or stream format) as a Table of the project's apache-arrow. */
export function tableFromBytes(bytes: Uint8Array | ArrayBuffer, name = 'the Arrow IPC bytes'): Table {
  const b = bytesOf(bytes);
  if (!b || !isArrowIPC(b)) {
    throw new InvalidDataError(`${name} are not Arrow IPC: neither the file format (opening "ARROW1") nor the stream format (opening 0xFFFFFFFF and a schema)`);
  }
  let table: Table;
  try {
    table = arrowLibrary('reading Arrow IPC bytes').tableFromIPC(b);
  } catch (e) {
    if (e instanceof FedmixError) throw e;
    throw new InvalidDataError(`${name} could not be read as Arrow IPC (${e instanceof Error ? e.message : formatValue(e)})`);
  }
  return table;
}

/** A table-shaped value, or IPC bytes read into one; anything else is an InvalidDataError. */
export function readTable(x: unknown, name = 'the table'): ArrowTableLike {
  if (isArrowBytes(x)) return tableFromBytes(x, `${name}'s bytes`);
  if (isTableNamed(x, name)) return x;
  throw new InvalidDataError(`${name} must be an Arrow Table, RecordBatch or Arrow IPC bytes, got ${formatValue(x)}`);
}

/** A type's name for messages (apache-arrow's types print as "Float64", "Dictionary<Int32, Utf8>"). */
export interface ArrowColumnsOptions {
  /** the columns to read, in order (default: all) */
  columns?: string[];
  /** nulls: 'error' (default) refuses a column holding one, naming it; 'drop' drops every row with a null in a chosen column */
  nulls?: NullPolicy;
}

/**
 * Numeric columns of a table-shaped value (or IPC bytes), each as a
 * Float64Array of the rows kept, with the table's row count.
 */
export function tableColumns(input: unknown, options: ArrowColumnsOptions = {}): { columns: Float64Array[]; numRows: number; names: string[] } {
  const table = readTable(input, 'the table');
  const { columns: wanted, nulls: nullsOption } = readOptions(options, ['columns', 'nulls']);
  const nulls = nullsOption === undefined ? 'error' : requireOneOf('nulls', nullsOption, NULL_POLICIES);
  let names: string[] | undefined;
  if (wanted !== undefined) {
    const n = requireLength('columns', wanted);
    names = Array.from({ length: n }, (_, j) => {
      const name = guardRead(`columns[${j}]`, () => wanted[j]);
      if (typeof name !== 'string') throw new InvalidParameterError(`columns must name the table's columns; columns[${j}] is ${formatValue(name)}`);
      return name;
    });
  }
  // a Proxy, a subclass or a look-alike may throw from anything read here
  return guardRead(
    'the Arrow table',
    () => {
      const fields = table.schema.fields;
      const known = Array.from({ length: requireLength('the table schema fields', fields, MAX_VALUES, InvalidDataError) }, (_, j) => String(fields[j]!.name));
      const chosen = names ?? known;
      const numRows = table.numRows;
      if (!Number.isSafeInteger(numRows) || numRows < 0 || numRows > MAX_VALUES) throw new InvalidDataError(`the table has ${formatValue(numRows)} rows; a Matrix holds at most ${MAX_VALUES} values`);
      if (chosen.length > 0 && numRows * chosen.length > MAX_VALUES) {
        throw new InvalidDataError(`${numRows} rows x ${chosen.length} columns would hold more than ${MAX_VALUES} values (2^28 - 1); read the table in parts`);
      }
      const vectors = chosen.map((name) => {
        if (!known.includes(name)) {
          throw new InvalidParameterError(`the table has no column ${formatValue(name)}; it has ${known.map((k) => formatValue(k)).join(', ')}`);
        }
        const v = table.getChild(name);
        if (!vectorShaped(v)) throw new InvalidDataError(`column ${formatValue(name)} is not an Arrow vector (got ${formatValue(v)})`);
        if (!NUMERIC.has(v.type.typeId)) {
          throw new InvalidDataError(`column ${formatValue(name)} has Arrow type ${typeName(v.type)}, not a number type; select numeric columns with { columns: [...] }`);
        }
        if (v.length !== numRows) throw new InvalidDataError(`column ${formatValue(name)} has ${v.length} values but the table ${numRows} rows`);
        if (v.nullCount > 0 && nulls === 'error') {
          throw nullError(`column ${formatValue(name)}`, v, "impute them, or pass { nulls: 'drop' } to Matrix.fromArrow to drop the rows holding one");
        }
        return v;
      });
      const columns = vectors.map((v, j) => numericValues(`column ${formatValue(chosen[j])}`, v));
      if (nulls === 'drop' && vectors.some((v) => v.nullCount > 0)) {
        const keep: number[] = [];
        for (let i = 0; i < numRows; i++) if (vectors.every((v) => v.nullCount === 0 || v.isValid(i))) keep.push(i);
        return { columns: columns.map((c) => Float64Array.from(keep, (i) => c[i]!)), numRows: keep.length, names: chosen };
      }
      return { columns, numRows, names: chosen };
    },
    InvalidDataError,
  );
}

/** A typed array of numbers (not BigInt), as toArrowVector keeps them. */
export type NumericTypedArray = Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array | Uint8ClampedArray;

function isNumericTypedArray(x: unknown): x is NumericTypedArray {
  return ArrayBuffer.isView(x) && !(x instanceof DataView) && !(x instanceof BigInt64Array) && !(x instanceof BigUint64Array);
}

/**
 * Results as an Arrow vector of the project's apache-arrow: a typed array
 * keeps its type (scores as Float64, labels as Int32); an array of numbers
 * becomes Float64; an array of strings becomes a dictionary (Utf8 values,
 * Int32 codes). With `classes`, the values are codes into them (as a
 * partition's or an encoder's codes): numbers give those class values,
 * strings a dictionary of the classes.
 */
export function toArrowVector(values: ArrayLike<number> | readonly string[], options: { classes?: ReadonlyArray<number | string> } = {}): Vector {
  const { makeData, makeVector, vectorFromArray, Dictionary, Int32, Utf8 } = arrowLibrary('toArrowVector');
  const { classes } = readOptions(options, ['classes']);
  if (classes !== undefined) {
    const k = requireLength('classes', classes);
    const cls = Array.from({ length: k }, (_, j) => guardRead(`classes[${j}]`, () => classes[j]));
    const strings = cls.every((c) => typeof c === 'string');
    if (!strings && !cls.every((c) => typeof c === 'number')) throw new InvalidParameterError('classes must be all numbers or all strings');
    const n = requireLength('values', values);
    const codes = new Int32Array(n);
    guardRead('values', () => {
      for (let i = 0; i < n; i++) {
        const c = (values as ArrayLike<unknown>)[i];
        if (typeof c !== 'number' || !Number.isInteger(c) || c < 0 || c >= k) throw new InvalidParameterError(`values[${i}] is ${formatValue(c)}, not a code into the ${k} classes`);
        codes[i] = c;
      }
    });
    if (strings) {
      const dictionary = vectorFromArray(cls as string[], new Utf8());
      return makeVector(makeData({ type: new Dictionary(new Utf8(), new Int32()), length: n, nullCount: 0, data: codes, dictionary }));
    }
    return makeVector(Float64Array.from(codes, (c) => cls[c] as number));
  }
  if (isNumericTypedArray(values)) return makeVector(requireAttached('values', values).slice() as never) as Vector;
  const n = requireLength('values', values);
  const a = guardRead('values', () => Array.from({ length: n }, (_, i) => (values as ArrayLike<unknown>)[i]));
  if (n > 0 && a.every((x) => typeof x === 'string')) return vectorFromArray(a as string[], new Dictionary(new Utf8(), new Int32())) as Vector;
  const out = new Float64Array(n);
  a.forEach((x, i) => {
    if (typeof x !== 'number') throw new InvalidParameterError(`values must be all numbers or all strings; values[${i}] is ${formatValue(x)}`);
    out[i] = x;
  });
  return makeVector(out);
}

/**
 * One row per item, a fixed-size list of `width` doubles each (a component's
 * mean, a center): what DuckDB and pyarrow read as FLOAT8[width].
 */
export function fixedSizeListVector(values: Float64Array, width: number): Vector {
  const { makeData, makeVector, Field, FixedSizeList, Float64 } = arrowLibrary('toArrow');
  const rows = width === 0 ? 0 : values.length / width;
  const child = makeData({ type: new Float64(), length: values.length, nullCount: 0, data: values.slice() });
  const type = new FixedSizeList(width, new Field('item', new Float64(), false));
  return makeVector(makeData({ type, length: rows, nullCount: 0, child }));
}

/** A table of the project's apache-arrow from named vectors (all of one length). */
export function tableOf(columns: Record<string, Vector>): Table {
  return new (arrowLibrary('toArrow').Table)(columns);
}

/** Row codes 0..n-1 as an Int32 vector (a component or client column). */
export function indexVector(n: number): Vector {
  return arrowLibrary('toArrow').makeVector(Int32Array.from({ length: n }, (_, i) => i));
}

/** A partition as an Arrow Table with one row per dealt row: `row` (the row index) and `client`. */
export function partitionToArrow(p: { indices: ReadonlyArray<ArrayLike<number>> }): Table {
  const { makeVector, Table } = arrowLibrary('partitionToArrow');
  if (!isObject(p)) throw new InvalidParameterError(`partitionToArrow takes a partition ({ indices, ... }), got ${formatValue(p)}`);
  const indices = guardRead('partition.indices', () => p.indices);
  const clients = requireLength('partition.indices', indices, MAX_VALUES);
  const parts = Array.from({ length: clients }, (_, c) => {
    const rows = guardRead(`partition.indices[${c}]`, () => indices[c]);
    const n = requireLength(`partition.indices[${c}]`, rows, MAX_VALUES);
    return guardRead(`partition.indices[${c}]`, () => {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const r = rows[i];
        if (typeof r !== 'number' || !Number.isInteger(r) || r < 0 || r > 2 ** 31 - 1) throw new InvalidParameterError(`partition.indices[${c}][${i}] is ${formatValue(r)}, not a row index`);
        out[i] = r;
      }
      return out;
    });
  });
  const total = parts.reduce((s, a) => s + a.length, 0);
  if (total > MAX_VALUES) throw new InvalidParameterError(`the partition deals ${total} rows; at most ${MAX_VALUES} are written`);
  const row = new Int32Array(total);
  const client = new Int32Array(total);
  let o = 0;
  parts.forEach((a, c) => {
    row.set(a, o);
    client.fill(c, o, o + a.length);
    o += a.length;
  });
  return new Table({ row: makeVector(row), client: makeVector(client) });
}
