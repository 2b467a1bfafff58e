/**
 * A labelled table for experiments: numeric features, an optional class column
 * (any values, mapped to class indices) and an optional 0/1 anomaly column.
 */
import { cellTableOf, type CellTable, type CsvTable } from '../data/csv.js';
import { Matrix } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { LIMITS, readArray, readOptions } from '../validate.js';

export interface LabelledData {
  X: Matrix;
  featureNames: string[];
  /** class index of each row, when a class column was named */
  labels?: Int32Array;
  classNames?: string[];
  /** 1 = anomaly, when an anomaly column was named */
  anomaly?: Uint8Array;
}

export interface CsvDataOptions {
  /** class column */
  label?: string;
  /** 0/1 anomaly column */
  anomalyLabel?: string;
  /** text columns to one-hot encode into features named column=value (values sorted) */
  oneHot?: string[];
  /** columns to leave out */
  drop?: string[];
  /**
   * numeric class labels grouped into classes, e.g. "0-5,6,7,8,9,10,11-12,13-"
   * (the FedGEM paper's abalone rings): ranges a-b, open ends a- and -b, single values
   */
  labelGroups?: string;
}

/** Parses a label-group spec into [lo, hi] intervals, one per group (range ends are non-negative). */
export function parseLabelGroups(spec: string): [number, number][] {
  return spec.split(',').map((part) => {
    const t = part.trim();
    if (/^-?\d+(\.\d+)?$/.test(t)) return [Number(t), Number(t)];
    const m = /^(\d+(?:\.\d+)?)?-(\d+(?:\.\d+)?)?$/.exec(t);
    if (!m || (m[1] === undefined && m[2] === undefined)) throw new InvalidDataError(`label group "${t}" is not a value, a range a-b or an open range a- / -b`);
    return [m[1] === undefined ? -Infinity : Number(m[1]), m[2] === undefined ? Infinity : Number(m[2])];
  });
}

/** The options, read once (strict keys): column names as strings, lists of them as arrays of strings. */
function readCsvDataOptions(given: CsvDataOptions): CsvDataOptions {
  const o = readOptions(given, ['label', 'anomalyLabel', 'oneHot', 'drop', 'labelGroups']) as CsvDataOptions;
  for (const k of ['label', 'anomalyLabel', 'labelGroups'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'string') throw new InvalidParameterError(`${k} must be a string, got ${formatValue(o[k])}`);
  }
  for (const k of ['oneHot', 'drop'] as const) {
    if (o[k] === undefined) continue;
    const names = readArray(k, o[k], LIMITS.features);
    names.forEach((n, i) => {
      if (typeof n !== 'string') throw new InvalidParameterError(`${k}[${i}] must be a column name (a string), got ${formatValue(n)}`);
    });
    o[k] = names as string[];
  }
  return o;
}

/** CSV text, or a table parseCsv returned: numeric features, and the named class, anomaly and one-hot columns. */
export function labelledFromCsv(text: string | CsvTable, given: CsvDataOptions = {}): LabelledData {
  const options = readCsvDataOptions(given);
  return labelledFromCells(cellTableOf(text), options);
}

/** labelledFromCsv on a table already read (the CLI reads CSV, Arrow and Parquet files into one). */
export function labelledFromCells(table: CellTable, given: CsvDataOptions = {}): LabelledData {
  const options = readCsvDataOptions(given);
  // named columns first, so a misspelt one is reported as such, not as a text feature
  for (const name of [options.label, options.anomalyLabel, ...(options.oneHot ?? [])]) if (name !== undefined) table.column(name);
  table.requireRows('the CSV');
  const oneHot = options.oneHot ?? [];
  const skip = [options.label, options.anomalyLabel, ...oneHot, ...(options.drop ?? [])].filter((c): c is string => c !== undefined);
  // text columns other than the named ones cannot be features: report them clearly
  const numeric = table.toMatrix({ exclude: skip });
  const extra: Float64Array[] = [];
  const extraNames: string[] = [];
  for (const name of oneHot) {
    const col = table.texts(table.column(name));
    for (const value of [...new Set(col)].sort()) {
      extra.push(Float64Array.from(col, (v) => (v === value ? 1 : 0)));
      extraNames.push(`${name}=${value}`);
    }
  }
  const X = extra.length ? Matrix.fromColumns([...Array.from({ length: numeric.X.nCols }, (_, j) => numeric.X.column(j)), ...extra]) : numeric.X;
  const out: LabelledData = { X, featureNames: [...numeric.names, ...extraNames] };
  if (options.label !== undefined) {
    const col = table.texts(table.column(options.label));
    if (options.labelGroups !== undefined) {
      const groups = parseLabelGroups(options.labelGroups);
      out.labels = Int32Array.from(col, (v, i) => {
        const x = Number(v);
        const g = groups.findIndex(([lo, hi]) => x >= lo && x <= hi);
        if (Number.isNaN(x) || g < 0) throw new InvalidDataError(`label "${v}" of data row ${i + 1} falls in no group of "${options.labelGroups}"`);
        return g;
      });
      out.classNames = groups.map(([lo, hi]) => (lo === hi ? String(lo) : `${Number.isFinite(lo) ? lo : ''}-${Number.isFinite(hi) ? hi : ''}`));
    } else {
      const classNames = [...new Set(col)].sort((a, b) => (Number.isNaN(Number(a)) || Number.isNaN(Number(b)) ? a.localeCompare(b) : Number(a) - Number(b)));
      const index = new Map(classNames.map((c, i) => [c, i]));
      out.labels = Int32Array.from(col, (c) => index.get(c)!);
      out.classNames = classNames;
    }
  }
  if (options.anomalyLabel !== undefined) {
    const col = table.texts(table.column(options.anomalyLabel));
    out.anomaly = Uint8Array.from(col, (v, i) => {
      if (v.trim() !== '0' && v.trim() !== '1') {
        throw new InvalidDataError(`anomaly column "${options.anomalyLabel}", data row ${i + 1}: "${v}" is not 0 or 1`);
      }
      return Number(v);
    });
  }
  return out;
}
