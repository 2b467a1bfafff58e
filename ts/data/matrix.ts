/**
 * Matrix: the one data container of fedmix. Column-major f64 (feature j is the
 * contiguous run data[j * nRows .. (j + 1) * nRows]), because an Arrow Float64
 * column already is one contiguous buffer and the WASM kernels run SIMD lanes
 * across rows of one feature.
 */
import type { Table } from 'apache-arrow';
import { arrowLibrary } from './arrow-library.js';
import { isArrowBytes, isTableNamed, tableColumns, type ArrowColumnsOptions, type ArrowTableLike, type ArrowVectorLike } from './arrow.js';
import { FedmixError, formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { guardRead, isArray, isDetached, isFloat64Array, MAX_VALUES, readRecord, requireLength, requireVector } from '../validate.js';
import { keepClassName } from '../class-name.js';

/**
 * Anything fedmix accepts as a data matrix: a Matrix, rows of numbers, an
 * Arrow Table or RecordBatch of any apache-arrow version, or Arrow IPC bytes.
 */
export type MatrixLike = Matrix | ArrayLike<number>[] | ArrowTableLike | Uint8Array | ArrayBuffer;

/** Every Matrix this module constructed: a brand that neither a Proxy nor Object.create(Matrix.prototype) can fake. */
const made = new WeakSet<object>();

function checkIndex(what: string, index: unknown, size: number): number {
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= size) {
    throw new InvalidParameterError(`${what} index ${formatValue(index)} is not an integer in 0..${size - 1}`);
  }
  return index;
}

/** nRows x nCols as a checked shape: safe integers whose product is at most MAX_VALUES. */
function checkShape(nRows: unknown, nCols: unknown, Err: new (m: string) => FedmixError): number {
  if (typeof nRows !== 'number' || typeof nCols !== 'number' || !Number.isInteger(nRows) || !Number.isInteger(nCols) || nRows < 0 || nCols < 0) {
    throw new Err(`a matrix shape must be two non-negative integers, got ${formatValue(nRows)} x ${formatValue(nCols)}`);
  }
  if (nRows > MAX_VALUES || nCols > MAX_VALUES || nRows * nCols > MAX_VALUES) {
    throw new Err(
      `a ${nRows} x ${nCols} matrix would hold ${nRows * nCols} values; a Matrix holds at most ${MAX_VALUES} (2^28 - 1, what one WASM allocation takes) and ${MAX_VALUES} rows or columns: process the data in parts`,
    );
  }
  return nRows * nCols;
}

/**
 * A data matrix, immutable in shape: nRows, nCols and the data buffer are
 * fixed at construction (the object is frozen), so that no later assignment
 * can make the core read past the values. The values themselves may be
 * changed in place.
 */
export class Matrix {
  static {
    keepClassName(this, 'Matrix');
  }

  /** Column-major values, nRows * nCols long. */
  readonly data: Float64Array;
  readonly nRows: number;
  readonly nCols: number;

  constructor(data: Float64Array, nRows: number, nCols: number) {
    const size = checkShape(nRows, nCols, InvalidDataError);
    if (!isFloat64Array(data)) throw new InvalidDataError(`a Matrix's data must be a Float64Array (column-major), got ${formatValue(data)}`);
    if (data.length !== size) {
      throw new InvalidDataError(`a ${nRows} x ${nCols} matrix needs ${size} values, got ${data.length}`);
    }
    this.data = data;
    this.nRows = nRows;
    this.nCols = nCols;
    made.add(this);
    Object.freeze(this);
  }

  /** Whether `x` is a Matrix fedmix constructed (a Proxy or a look-alike is not). */
  static isMatrix(x: unknown): x is Matrix {
    return x !== null && typeof x === 'object' && made.has(x);
  }

  static zeros(nRows: number, nCols: number): Matrix {
    return new Matrix(new Float64Array(checkShape(nRows, nCols, InvalidParameterError)), nRows, nCols);
  }

  /** One array (or numeric Arrow vector, of any apache-arrow version) per feature, all of the same length. */
  static fromColumns(columns: (ArrayLike<number> | ArrowVectorLike)[]): Matrix {
    const nCols = requireLength('columns', columns, MAX_VALUES, InvalidDataError);
    const cols = Array.from({ length: nCols }, (_, j) => requireVector(`column ${j}`, guardRead(`column ${j}`, () => columns[j], InvalidDataError), InvalidDataError));
    const nRows = nCols === 0 ? 0 : cols[0]!.length;
    cols.forEach((col, j) => {
      if (col.length !== nRows) {
        throw new InvalidDataError(`column ${j} has ${col.length} values but column 0 has ${nRows}; all columns need the same length`);
      }
    });
    const data = new Float64Array(checkShape(nRows, nCols, InvalidDataError));
    cols.forEach((col, j) => data.set(col, j * nRows));
    return new Matrix(data, nRows, nCols);
  }

  /** One array per row (sample), all of the same length. */
  static fromRows(rows: ArrayLike<number>[]): Matrix {
    const nRows = requireLength('rows', rows, MAX_VALUES, InvalidDataError);
    const rowAt = (i: number): unknown => guardRead(`row ${i}`, () => rows[i], InvalidDataError);
    const nCols = nRows === 0 ? 0 : requireLength('row 0', rowAt(0), MAX_VALUES, InvalidDataError);
    const data = new Float64Array(checkShape(nRows, nCols, InvalidDataError));
    for (let i = 0; i < nRows; i++) {
      const row = rowAt(i);
      const len = requireLength(`row ${i}`, row, MAX_VALUES, InvalidDataError);
      if (len !== nCols) {
        throw new InvalidDataError(`row ${i} has ${len} values but row 0 has ${nCols}; all rows need the same length`);
      }
      if (isFloat64Array(row)) {
        for (let j = 0; j < nCols; j++) data[j * nRows + i] = row[j]!;
        continue;
      }
      guardRead(
        `row ${i}`,
        () => {
          const r = row as ArrayLike<unknown>;
          for (let j = 0; j < nCols; j++) {
            const x = r[j];
            if (typeof x !== 'number') throw new InvalidDataError(`row ${i}, column ${j} is ${formatValue(x)}; every value must be a number`);
            data[j * nRows + i] = x;
          }
        },
        InvalidDataError,
      );
    }
    return new Matrix(data, nRows, nCols);
  }

  /**
   * Numeric columns of an Arrow Table or RecordBatch, of any apache-arrow
   * version (recognised by shape), or of Arrow IPC bytes (file or stream
   * format): Float16/32/64 and integer types; chunked columns are
   * concatenated. A column with nulls is refused, naming it, unless
   * `nulls: 'drop'` drops the rows holding one.
   */
  static fromArrow(table: ArrowTableLike | Uint8Array | ArrayBuffer, options: ArrowColumnsOptions = {}): Matrix {
    const { columns, numRows } = tableColumns(table, options);
    if (columns.length === 0) return new Matrix(new Float64Array(checkShape(numRows, 0, InvalidDataError)), numRows, 0);
    return Matrix.fromColumns(columns);
  }

  /** Any MatrixLike as a Matrix (a Matrix is returned as is, not copied). */
  static from(x: MatrixLike): Matrix {
    if (Matrix.isMatrix(x)) return x.intact();
    if (isArray('X', x, InvalidDataError)) return Matrix.fromRows(x as ArrayLike<number>[]);
    if (isArrowBytes(x) || isTableNamed(x, 'X')) return Matrix.fromArrow(x);
    throw new InvalidDataError(`expected a Matrix, an array of rows, an Arrow Table or Arrow IPC bytes, got ${formatValue(x)}`);
  }

  /** The rows of several matrices with the same columns, one after the other. */
  static vstack(parts: Matrix[]): Matrix {
    const count = requireLength('parts', parts, MAX_VALUES, InvalidDataError);
    if (count === 0) throw new InvalidDataError('vstack needs at least one matrix');
    const ms = Array.from({ length: count }, (_, i) => {
      const m = guardRead(`parts[${i}]`, () => parts[i], InvalidDataError);
      if (!Matrix.isMatrix(m)) throw new InvalidDataError(`vstack takes Matrix objects; parts[${i}] is ${formatValue(m)}`);
      return m;
    });
    const d = ms[0]!.nCols;
    let n = 0;
    for (const m of ms) {
      if (m.nCols !== d) throw new InvalidDataError(`vstack: a matrix has ${m.nCols} columns, the first has ${d}`);
      n += m.nRows;
    }
    const out = new Float64Array(checkShape(n, d, InvalidDataError));
    for (let j = 0; j < d; j++) {
      let o = j * n;
      for (const m of ms) {
        out.set(m.column(j), o);
        o += m.nRows;
      }
    }
    return new Matrix(out, n, d);
  }

  /**
   * This matrix, after checking its buffer still holds nRows x nCols values:
   * the shape is frozen, but an ArrayBuffer can be transferred (length 0) or
   * resized under it. Every entry point takes matrices through Matrix.from,
   * which checks; copies into WASM check again (Scope.matrix).
   */
  intact(): this {
    // asked of the buffer, not of the view's length: deep in a long run
    // (test/hostile-api.test.ts, seeds 3, 9, 10 at 6000 runs) a transferred
    // Float64Array's length read as the old one. A detached buffer's byteLength is 0,
    // a cheap read for get() in loops; only then the sure (allocating) test
    if (this.data.buffer.byteLength === 0 && isDetached(this.data)) {
      throw new InvalidDataError(`this ${this.nRows} x ${this.nCols} matrix's ArrayBuffer was transferred (detached); build a new Matrix`);
    }
    if (this.data.length !== this.nRows * this.nCols) {
      throw new InvalidDataError(
        `this ${this.nRows} x ${this.nCols} matrix's buffer now holds ${this.data.length} values, not ${this.nRows * this.nCols} (was its ArrayBuffer transferred or resized?); build a new Matrix`,
      );
    }
    return this;
  }

  get(i: number, j: number): number {
    this.intact();
    checkIndex('row', i, this.nRows);
    checkIndex('column', j, this.nCols);
    return this.data[j * this.nRows + i]!;
  }

  /** Column j as a view (no copy). */
  column(j: number): Float64Array {
    this.intact();
    checkIndex('column', j, this.nCols);
    try {
      return this.data.subarray(j * this.nRows, (j + 1) * this.nRows);
    } catch (e) {
      // the backstop of intact(): a buffer found transferred away here is the caller's data error too
      if (e instanceof TypeError && isDetached(this.data)) throw new InvalidDataError(`this ${this.nRows} x ${this.nCols} matrix's ArrayBuffer was transferred (detached); build a new Matrix`);
      throw e;
    }
  }

  /** Row i as a new array. */
  row(i: number): Float64Array {
    this.intact();
    checkIndex('row', i, this.nRows);
    const r = new Float64Array(this.nCols);
    for (let j = 0; j < this.nCols; j++) r[j] = this.data[j * this.nRows + i]!;
    return r;
  }

  toRows(): number[][] {
    const rows: number[][] = [];
    for (let i = 0; i < this.nRows; i++) rows.push(Array.from(this.row(i)));
    return rows;
  }

  /** A new matrix of the given rows, in the given order. */
  selectRows(indices: ArrayLike<number>): Matrix {
    this.intact();
    const rows = indexList('row', indices, this.nRows);
    const n = rows.length;
    const out = new Float64Array(checkShape(n, this.nCols, InvalidParameterError));
    for (let j = 0; j < this.nCols; j++) {
      const src = j * this.nRows;
      const dst = j * n;
      for (let i = 0; i < n; i++) out[dst + i] = this.data[src + rows[i]!]!;
    }
    return new Matrix(out, n, this.nCols);
  }

  /** A new matrix of the given columns, in the given order. */
  selectColumns(indices: ArrayLike<number>): Matrix {
    const cols = Array.from(indexList('column', indices, this.nCols), (j) => this.column(j));
    return cols.length ? Matrix.fromColumns(cols) : new Matrix(new Float64Array(0), this.nRows, 0);
  }

  /** An Arrow table (of the project's apache-arrow) with one Float64 column per feature (named x0, x1, ... by default). */
  toArrow(names?: string[]): Table {
    const colNames =
      names === undefined
        ? Array.from({ length: this.nCols }, (_, j) => `x${j}`)
        : Array.from({ length: requireLength('names', names) }, (_, j) => {
            const name = guardRead(`names[${j}]`, () => names[j]);
            if (typeof name !== 'string') throw new InvalidParameterError(`toArrow's names must be strings; names[${j}] is ${formatValue(name)}`);
            return name;
          });
    if (colNames.length !== this.nCols) {
      throw new InvalidParameterError(`toArrow got ${colNames.length} names for ${this.nCols} columns`);
    }
    if (new Set(colNames).size !== colNames.length) throw new InvalidParameterError('toArrow needs distinct column names');
    const cols: Record<string, Float64Array> = {};
    colNames.forEach((name, j) => {
      cols[name] = this.column(j).slice();
    });
    return arrowLibrary('Matrix.toArrow()').tableFromArrays(cols);
  }
}

/** Indices read from the caller's array-like, each an integer in 0..size-1. */
function indexList(what: string, indices: ArrayLike<number>, size: number): Int32Array {
  const n = requireLength(`${what} indices`, indices);
  const out = new Int32Array(n);
  guardRead(`${what} indices`, () => {
    for (let i = 0; i < n; i++) out[i] = checkIndex(what, indices[i], size);
  });
  return out;
}

/** A matrix as plain data, column-major values: what a client spec carries to a worker. */
export interface MatrixData {
  data: Float64Array;
  nRows: number;
  nCols: number;
}

export function matrixData(x: MatrixLike): MatrixData {
  const m = Matrix.from(x);
  return { data: m.data, nRows: m.nRows, nCols: m.nCols };
}

/** The Matrix a spec's MatrixData describes, checked (it may come from another thread or a caller). */
export function fromMatrixData(given: MatrixData): Matrix {
  const d = given === null || typeof given !== 'object' ? undefined : readRecord(given, ['data', 'nRows', 'nCols'], 'client data');
  if (!d || !isFloat64Array(d.data)) throw new InvalidParameterError(`client data must be { data: Float64Array, nRows, nCols }, got ${formatValue(given)}`);
  return new Matrix(d.data, d.nRows!, d.nCols!);
}
