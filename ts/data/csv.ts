/**
 * CSV text as columns of cells, read by Papa Parse (RFC 4180: a header row,
 * double-quoted fields with "" escapes, \n, \r\n or \r line ends; a chosen
 * delimiter), and the conversion of its columns to a Matrix. Papa Parse rather
 * than csv-parse: it runs unchanged in browsers (csv-parse needs Node's Buffer)
 * and streams in Node, so the library and the CLI read CSV one way. What
 * fedmix reads data into is a CellTable (numbers as numbers); parseCsv's
 * CsvTable keeps every cell's text, for callers who want the text.
 */
import Papa from 'papaparse';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { guardRead, LIMITS, readOptions, readRecord, requireInteger, requireLength } from '../validate.js';
import { Matrix } from './matrix.js';

export interface CsvTable {
  names: string[];
  /** columns[j][i]: the cell of row i in column j, as text */
  columns: string[][];
  nRows: number;
}

export interface CsvOptions {
  /** the field separator (default ","); "tab" or "\\t" for tabs */
  delimiter?: string;
}

/** The delimiter an option names, checked: one or more characters, not a quote or a line end. */
export function csvDelimiter(value: unknown): string {
  if (value === undefined) return ',';
  if (typeof value !== 'string') throw new InvalidParameterError(`delimiter must be a string, got ${formatValue(value)}`);
  const d = value === 'tab' || value === '\\t' ? '\t' : value;
  if (d === '' || /["\r\n]/.test(d)) throw new InvalidParameterError(`delimiter must be one or more characters other than a quote or a line end, got ${formatValue(value)}`);
  return d;
}

/**
 * What parseCsv and the streaming reader share: Papa Parse's records checked
 * (the first names the columns, the others must have as many fields, Papa
 * Parse's errors become InvalidDataErrors) and each data row handed to `row`.
 */
abstract class CsvRecords<T> {
  protected names: string[] | undefined;
  private records = 0;

  /** the column names, once the header is read */
  protected abstract header(names: string[]): void;
  /** one data row, as many fields as the header */
  protected abstract row(record: string[]): void;
  protected abstract table(names: string[]): T;

  add(record: string[]): void {
    this.records++;
    // a line holding nothing (Papa Parse gives [""]) is no record
    if (record.length === 1 && record[0] === '') return;
    if (!this.names) {
      this.names = record.map((n) => n.trim());
      this.header(this.names);
      return;
    }
    if (record.length !== this.names.length) {
      throw new InvalidDataError(`CSV line ${this.records} has ${record.length} fields but the header has ${this.names.length}`);
    }
    this.row(record);
  }

  /** Papa Parse's errors for a record (an unclosed quote, a quote inside a field) as an InvalidDataError. */
  check(errors: ReadonlyArray<Papa.ParseError>): void {
    const e = errors[0];
    if (!e) return;
    if (e.code === 'MissingQuotes') throw new InvalidDataError('the CSV ends inside a quoted field');
    throw new InvalidDataError(`the CSV, line ${this.records + 1}: ${e.message}`);
  }

  /** What stopped the parse: the first record that failed its checks (step keeps it and aborts). */
  failure: unknown = undefined;

  /** Papa Parse's step callback: each record checked and added; the first failure is kept and ends the parse. */
  readonly step = (r: Papa.ParseStepResult<string[]>, parser: Papa.Parser): void => {
    try {
      this.check(r.errors);
      this.add(r.data);
    } catch (e) {
      this.failure = e;
      parser.abort();
    }
  };

  finish(): T {
    if (!this.names) throw new InvalidDataError('the CSV is empty; it needs a header row');
    return this.table(this.names);
  }
}

/** A CsvTable built record by record: every cell kept as its text (parseCsv's result). */
export class CsvTableBuilder extends CsvRecords<CsvTable> {
  private columns: string[][] = [];

  protected header(names: string[]): void {
    this.columns = names.map(() => []);
  }

  protected row(record: string[]): void {
    for (let j = 0; j < record.length; j++) this.columns[j]!.push(record[j]!);
  }

  protected table(names: string[]): CsvTable {
    return { names, columns: this.columns, nRows: this.columns[0]?.length ?? 0 };
  }
}

/**
 * A CellTable built record by record: what the streaming reader holds of a
 * file read in chunks (never whole), each decimal cell as its number.
 */
export class CellTableBuilder extends CsvRecords<CellTable> {
  private cells: CellTable | undefined;

  protected header(names: string[]): void {
    this.cells = new CellTable(names);
  }

  protected row(record: string[]): void {
    this.cells!.addRow(record);
  }

  protected table(): CellTable {
    return this.cells!;
  }
}

/** Papa Parse's settings for fedmix's CSV: every cell as text, no guessing of the delimiter. */
export function papaConfig(delimiter: string): Papa.ParseConfig {
  return { delimiter, header: false, dynamicTyping: false, skipEmptyLines: false, quoteChar: '"', escapeChar: '"' };
}

/** Parses `text` record by record into `records` (a string is parsed synchronously); the first failure is thrown. */
function parseInto<T>(text: string, options: CsvOptions, records: CsvRecords<T>): T {
  if (typeof text !== 'string') throw new InvalidParameterError(`the CSV text must be a string, got ${formatValue(text)}`);
  const o = readOptions(options, ['delimiter']);
  const delimiter = csvDelimiter(o.delimiter);
  Papa.parse<string[]>(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, { ...papaConfig(delimiter), step: records.step });
  if (records.failure !== undefined) throw records.failure;
  return records.finish();
}

export function parseCsv(text: string, options: CsvOptions = {}): CsvTable {
  if (typeof text !== 'string') throw new InvalidParameterError(`parseCsv takes the CSV text as a string, got ${formatValue(text)}`);
  return parseInto(text, options, new CsvTableBuilder());
}

/** A CsvTable as parseCsv makes it, checked (it may come from elsewhere): names, columns of text, nRows. */
function checkTable(table: unknown): CsvTable {
  const t = readRecord(table as CsvTable, ['names', 'columns', 'nRows'], 'table');
  const nRows = requireInteger('table.nRows', t.nRows, 0, LIMITS.values);
  const names = strings('table.names', t.names);
  const count = requireLength('table.columns', t.columns);
  if (count !== names.length) throw new InvalidParameterError(`table has ${names.length} names but ${count} columns; pass what parseCsv returned`);
  const columns = Array.from({ length: count }, (_, j) => {
    const col = strings(`table.columns[${j}]`, guardRead(`table.columns[${j}]`, () => t.columns![j]));
    if (col.length !== nRows) throw new InvalidParameterError(`table.columns[${j}] has ${col.length} cells but nRows is ${nRows}`);
    return col;
  });
  return { names, columns, nRows };
}

/**
 * CSV text parsed, a CsvTable (as parseCsv returns it) checked, or a
 * CellTable (what the CLI's readers make of CSV, Arrow and Parquet files) as
 * it is: the one table the readers of labelled data work on.
 */
export function cellTableOf(input: string | CsvTable | CellTable): CellTable {
  // instanceof runs a Proxy's getPrototypeOf trap: read under guard, so a hostile object is a typed error
  if (typeof input !== 'string' && guardRead('the table', () => input instanceof CellTable)) return input as CellTable;
  if (typeof input === 'string') return parseInto(input, {}, new CellTableBuilder());
  return cellsOfText(checkTable(input));
}

/** A checked CsvTable's cells as a CellTable. */
function cellsOfText(t: CsvTable): CellTable {
  const cells = new CellTable(t.names);
  const record = new Array<string>(t.names.length);
  for (let i = 0; i < t.nRows; i++) {
    for (let j = 0; j < record.length; j++) record[j] = t.columns[j]![i]!;
    cells.addRow(record);
  }
  return cells;
}

/** An array of strings the caller passed, copied. */
function strings(name: string, value: unknown): string[] {
  const n = requireLength(name, value);
  return guardRead(name, () =>
    Array.from({ length: n }, (_, i) => {
      const v = (value as ArrayLike<unknown>)[i];
      if (typeof v !== 'string') throw new InvalidParameterError(`${name}[${i}] is ${formatValue(v)}; expected a string`);
      return v;
    }),
  );
}

/**
 * A decimal number as CSV writers print it: optional sign, digits with an
 * optional point, optional exponent. Number() alone also takes 'Infinity',
 * '0x10', '0b1' and '0o7', which no numeric CSV column means.
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A cell's number: NaN when it is not decimal text (or blank), else its value, which may overflow to +-Infinity ('1e999'). */
function csvNumber(cell: string): number {
  const t = cell.trim();
  return DECIMAL.test(t) ? Number(t) : NaN;
}

/** The column names a message lists: all of a narrow table's, the first few of a wide one's. */
function listNames(names: readonly string[]): string {
  const shown = 20;
  return names.length <= shown ? names.join(', ') : `${names.slice(0, shown).join(', ')}, ... (${names.length} in all)`;
}

/** log2 of the values in one chunk of a CellTable's store (2^16 values, 512 KiB). */
const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;

/** The text cells of one column: each distinct text once, and per row its index (-1 where the row's cell is a number). */
class TextCells {
  readonly texts: string[] = [];
  private readonly index = new Map<string, number>();
  codes: Int32Array = new Int32Array(0);

  set(row: number, text: string): void {
    let code = this.index.get(text);
    if (code === undefined) {
      code = this.texts.length;
      this.texts.push(text);
      this.index.set(text, code);
    }
    if (row >= this.codes.length) {
      const grown = new Int32Array(Math.max(16, 2 * (row + 1))).fill(-1);
      grown.set(this.codes);
      this.codes = grown;
    }
    this.codes[row] = code;
  }

  /** The text of `row`'s cell, or undefined when the cell is a number. */
  at(row: number): string | undefined {
    const code = row < this.codes.length ? this.codes[row]! : -1;
    return code < 0 ? undefined : this.texts[code];
  }
}

/**
 * A table of cells as fedmix holds data it reads (CSV, and the CLI's Arrow and
 * Parquet files): every cell that is a finite decimal number as that number,
 * 8 bytes in a store of fixed-size chunks (rows after rows: a table grows
 * without copying what it holds, and a wide table costs nothing per column),
 * and any other cell as text, each distinct text of a column held once. A
 * 1 GB CSV of numbers is about 1 GB of doubles, not a string per cell (which
 * cost V8 five times the file). A number cell's text, where a column is read
 * as text (a class or category column), is the number's shortest form: "1.0"
 * and "1" are the same class, as in an Arrow column of numbers.
 */
export class CellTable {
  readonly names: readonly string[];
  private rows = 0;
  private readonly chunks: Float64Array[] = [];
  private size = 0;
  /** per column, its text cells (undefined while it has none) */
  private readonly textCells: (TextCells | undefined)[];
  /** the first column of each name, for lookups in constant time (a table may have 2^28 columns) */
  private readonly positions = new Map<string, number>();

  constructor(names: readonly string[]) {
    this.names = names;
    this.textCells = new Array<TextCells | undefined>(names.length);
    names.forEach((name, j) => {
      if (!this.positions.has(name)) this.positions.set(name, j);
    });
  }

  get nRows(): number {
    return this.rows;
  }

  get nCols(): number {
    return this.names.length;
  }

  /** Appends a row of cells given as text, one per column. */
  addRow(cells: ArrayLike<string>): void {
    const d = this.names.length;
    this.reserve(d);
    for (let j = 0; j < d; j++) {
      const cell = cells[j]!;
      const v = csvNumber(cell);
      this.push(Number.isFinite(v) ? v : this.text(j, cell));
    }
    this.rows++;
  }

  /** Appends a row of values (an Arrow row): a finite number as it is, anything else as its text. */
  addValues(values: ArrayLike<unknown>): void {
    const d = this.names.length;
    this.reserve(d);
    for (let j = 0; j < d; j++) {
      const x = values[j];
      if (typeof x === 'number' && Number.isFinite(x)) this.push(x);
      else {
        const cell = String(x);
        const v = csvNumber(cell);
        this.push(Number.isFinite(v) ? v : this.text(j, cell));
      }
    }
    this.rows++;
  }

  /** Checks that `more` values fit in LIMITS.values (a table past it could never become a Matrix). */
  private reserve(more: number): void {
    if (this.size + more > LIMITS.values) {
      throw new InvalidDataError(`the data holds more than ${LIMITS.values} values (LIMITS.values, what one Matrix may hold) after ${this.rows} rows of ${this.names.length} columns`);
    }
  }

  /** Keeps `cell` as column j's text in the current row; its slot in the store holds NaN. */
  private text(j: number, cell: string): number {
    (this.textCells[j] ??= new TextCells()).set(this.rows, cell);
    return NaN;
  }

  private push(v: number): void {
    const k = this.size >>> CHUNK_BITS;
    if (k === this.chunks.length) this.chunks.push(new Float64Array(CHUNK));
    this.chunks[k]![this.size & (CHUNK - 1)] = v;
    this.size++;
  }

  private value(i: number, j: number): number {
    const p = i * this.names.length + j;
    return this.chunks[p >>> CHUNK_BITS]![p & (CHUNK - 1)]!;
  }

  /** Refuses a table of no data rows, which nothing can be learnt from (`source` names it). */
  requireRows(source: string): this {
    if (this.rows === 0) throw new InvalidDataError(`${source} has column names but no data rows`);
    return this;
  }

  /** The index of the column named `name` (the first, if several are). */
  column(name: string): number {
    const j = this.positions.get(name);
    if (j === undefined) throw new InvalidParameterError(`the CSV has no column ${formatValue(name)}; its columns are ${listNames(this.names)}`);
    return j;
  }

  /** Column j's cells as text: a text cell as it was written, a number as its shortest form. */
  texts(j: number): string[] {
    const text = this.textCells[j];
    return Array.from({ length: this.rows }, (_, i) => text?.at(i) ?? String(this.value(i, j)));
  }

  /**
   * The named columns (default: all but `exclude`) as a Matrix, filled straight
   * from the store; a cell that is not a finite number is an error naming it.
   */
  toMatrix(options: { columns?: string[]; exclude?: string[] } = {}): { X: Matrix; names: string[] } {
    const o = readOptions(options, ['columns', 'exclude']);
    const exclude = new Set(o.exclude === undefined ? [] : strings('exclude', o.exclude));
    let js: number[];
    if (o.columns === undefined) {
      js = [];
      this.names.forEach((name, j) => exclude.has(name) || js.push(j));
    } else js = strings('columns', o.columns).map((name) => this.column(name));
    const names = js.map((j) => this.names[j]!);
    const n = this.rows;
    for (const [c, j] of js.entries()) {
      const text = this.textCells[j];
      if (!text) continue;
      const i = text.codes.findIndex((code) => code >= 0);
      const cell = text.texts[text.codes[i]!]!;
      const kind = Number.isNaN(csvNumber(cell)) ? 'a number' : 'a finite number';
      throw new InvalidDataError(`column ${formatValue(names[c])}, data row ${i + 1}: ${formatValue(cell)} is not ${kind}; exclude the column or clean the file`);
    }
    const data = new Float64Array(n * js.length);
    // chunk by chunk, each value to its column: the store is read once, in order
    const d = this.names.length;
    const slot = new Int32Array(d).fill(-1);
    js.forEach((j, c) => {
      if (slot[j]! < 0) slot[j] = c;
    });
    for (let p = 0, i = 0, j = 0; p < this.size; p++) {
      const c = slot[j]!;
      if (c >= 0) data[c * n + i] = this.chunks[p >>> CHUNK_BITS]![p & (CHUNK - 1)]!;
      if (++j === d) {
        j = 0;
        i++;
      }
    }
    // a column asked for twice: a copy of its first place
    js.forEach((j, c) => {
      const first = slot[j]!;
      if (first !== c) data.copyWithin(c * n, first * n, (first + 1) * n);
    });
    return { X: new Matrix(data, n, js.length), names };
  }
}

/** The named columns (default: all but `exclude`) as numbers; a non-numeric cell is an error naming it. */
export function csvToMatrix(table: CsvTable, options: { columns?: string[]; exclude?: string[] } = {}): { X: Matrix; names: string[] } {
  return cellsOfText(checkTable(table)).toMatrix(options);
}
