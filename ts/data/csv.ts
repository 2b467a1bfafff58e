/**
 * A small CSV reader (RFC 4180: header row, commas, double-quoted fields with ""
 * escapes, \n or \r\n line ends) and the conversion of its columns to a Matrix.
 */
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { guardRead, LIMITS, readOptions, requireInteger, requireLength } from '../validate.js';
import { Matrix } from './matrix.js';

export interface CsvTable {
  names: string[];
  /** columns[j][i]: the cell of row i in column j, as text */
  columns: string[][];
  nRows: number;
}

export function parseCsv(text: string): CsvTable {
  if (typeof text !== 'string') throw new InvalidParameterError(`parseCsv takes the CSV text as a string, got ${formatValue(text)}`);
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let i = 0;
  const endField = () => {
    record.push(field);
    field = '';
  };
  const endRecord = () => {
    endField();
    if (!(record.length === 1 && record[0] === '')) records.push(record);
    record = [];
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        field += ch;
      }
    } else if (ch === '"' && field === '') {
      quoted = true;
    } else if (ch === ',') {
      endField();
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endRecord();
    } else {
      field += ch;
    }
    i++;
  }
  if (quoted) throw new InvalidDataError('the CSV ends inside a quoted field');
  if (field !== '' || record.length > 0) endRecord();
  if (records.length === 0) throw new InvalidDataError('the CSV is empty; it needs a header row');
  const names = records[0]!.map((n) => n.trim());
  const columns = names.map(() => [] as string[]);
  for (let r = 1; r < records.length; r++) {
    const rec = records[r]!;
    if (rec.length !== names.length) {
      throw new InvalidDataError(`CSV line ${r + 1} has ${rec.length} fields but the header has ${names.length}`);
    }
    rec.forEach((v, j) => columns[j]!.push(v));
  }
  return { names, columns, nRows: records.length - 1 };
}

export function columnIndex(table: CsvTable, name: string): number {
  const j = table.names.indexOf(name);
  if (j < 0) throw new InvalidParameterError(`the CSV has no column ${formatValue(name)}; its columns are ${table.names.join(', ')}`);
  return j;
}

/** A CsvTable as parseCsv makes it, checked (it may come from elsewhere): names, columns of text, nRows. */
function checkTable(table: unknown): CsvTable {
  const t = readOptions(table as CsvTable, ['names', 'columns', 'nRows'], 'table');
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
      const v = cell.trim() === '' ? NaN : Number(cell);
      if (Number.isNaN(v)) {
        throw new InvalidDataError(`column ${formatValue(name)}, data row ${i + 1}: ${formatValue(cell)} is not a number; exclude the column or clean the file`);
      }
      out[i] = v;
    });
    return out;
  });
  return { X: cols.length ? Matrix.fromColumns(cols) : new Matrix(new Float64Array(0), table.nRows, 0), names };
}
