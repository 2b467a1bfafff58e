/**
 * CSV text as columns of cells, read by Papa Parse (RFC 4180: a header row,
 * double-quoted fields with "" escapes, \n, \r\n or \r line ends; a chosen
 * delimiter), and the conversion of its columns to a Matrix. Papa Parse rather
 * than csv-parse: it runs unchanged in browsers (csv-parse needs Node's Buffer)
 * and streams in Node, so the library and the CLI read CSV one way.
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
 * Builds a CsvTable record by record: the first record names the columns, the
 * others must have as many fields. Shared by parseCsv (a string) and the
 * streaming reader (a file read in chunks, never held whole).
 */
export class CsvTableBuilder {
  private names: string[] | undefined;
  private columns: string[][] = [];
  private records = 0;

  add(record: string[]): void {
    this.records++;
    // a line holding nothing (Papa Parse gives [""]) is no record
    if (record.length === 1 && record[0] === '') return;
    if (!this.names) {
      this.names = record.map((n) => n.trim());
      this.columns = this.names.map(() => []);
      return;
    }
    if (record.length !== this.names.length) {
      throw new InvalidDataError(`CSV line ${this.records} has ${record.length} fields but the header has ${this.names.length}`);
    }
    for (let j = 0; j < record.length; j++) this.columns[j]!.push(record[j]!);
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

  finish(): CsvTable {
    if (!this.names) throw new InvalidDataError('the CSV is empty; it needs a header row');
    return { names: this.names, columns: this.columns, nRows: this.columns[0]?.length ?? 0 };
  }
}

/** Papa Parse's settings for fedmix's CSV: every cell as text, no guessing of the delimiter. */
export function papaConfig(delimiter: string): Papa.ParseConfig {
  return { delimiter, header: false, dynamicTyping: false, skipEmptyLines: false, quoteChar: '"', escapeChar: '"' };
}

export function parseCsv(text: string, options: CsvOptions = {}): CsvTable {
  if (typeof text !== 'string') throw new InvalidParameterError(`parseCsv takes the CSV text as a string, got ${formatValue(text)}`);
  const o = readOptions(options, ['delimiter']);
  const delimiter = csvDelimiter(o.delimiter);
  const builder = new CsvTableBuilder();
  // a string is parsed synchronously, record by record
  Papa.parse<string[]>(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, { ...papaConfig(delimiter), step: builder.step });
  if (builder.failure !== undefined) throw builder.failure;
  return builder.finish();
}

export function columnIndex(table: CsvTable, name: string): number {
  const j = table.names.indexOf(name);
  if (j < 0) throw new InvalidParameterError(`the CSV has no column ${formatValue(name)}; its columns are ${table.names.join(', ')}`);
  return j;
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

/** CSV text parsed, or a CsvTable (as parseCsv returns it, or a reader of files made it) checked. */
export function csvTableOf(input: string | CsvTable): CsvTable {
  return typeof input === 'string' ? parseCsv(input) : checkTable(input);
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

/** The named columns (default: all but `exclude`) as numbers; a non-numeric cell is an error naming it. */
export function csvToMatrix(table: CsvTable, options: { columns?: string[]; exclude?: string[] } = {}): { X: Matrix; names: string[] } {
  const checked = checkTable(table);
  table = checked;
  const o = readOptions(options, ['columns', 'exclude']);
  const exclude = new Set(o.exclude === undefined ? [] : strings('exclude', o.exclude));
  const names = o.columns === undefined ? checked.names.filter((n) => !exclude.has(n)) : strings('columns', o.columns);
  const cols = names.map((name) => {
    const j = columnIndex(table, name);
    const out = new Float64Array(table.nRows);
    table.columns[j]!.forEach((cell, i) => {
      const v = csvNumber(cell);
      if (Number.isNaN(v)) {
        throw new InvalidDataError(`column ${formatValue(name)}, data row ${i + 1}: ${formatValue(cell)} is not a number; exclude the column or clean the file`);
      }
      if (!Number.isFinite(v)) {
        throw new InvalidDataError(`column ${formatValue(name)}, data row ${i + 1}: ${formatValue(cell)} is not a finite number; exclude the column or clean the file`);
      }
      out[i] = v;
    });
    return out;
  });
  return { X: cols.length ? Matrix.fromColumns(cols) : new Matrix(new Float64Array(0), table.nRows, 0), names };
}
