/**
 * Reading the JSON a model or transformer saved with toJSON(): the same
 * conventions as GaussianMixture.fromJSON (a `format` naming the class, a
 * numeric `version`, every field checked, typed errors), shared by KMeans,
 * PCA and the scalers so each does not re-implement the envelope, and the
 * checks of what the maths needs of the fields (finite numbers, non-negative
 * ones, locations the core can compute distances from).
 */
import { formatValue, InvalidParameterError } from '../errors.js';
import { isArray, readRecord, requireVector } from '../validate.js';

/**
 * `json` (an object or its text) read as `format` at version 1: only `keys`
 * are read (each under guardRead), and a wrong format or version is an
 * InvalidParameterError saying what was found.
 */
export function readSavedJSON<T extends { format: string; version: number }>(json: unknown, format: T['format'], keys: readonly (keyof T & string)[]): Partial<T> {
  const cls = format.replace(/^fedmix\./, '');
  let parsed = json;
  if (typeof json === 'string') {
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new InvalidParameterError(`not a fedmix ${cls} JSON: the text is not JSON (it starts ${formatValue(json.slice(0, 20))})`);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || isArray('the JSON', parsed)) {
    throw new InvalidParameterError(`not a fedmix ${cls} JSON: expected an object with format "${format}", got ${formatValue(parsed)}`);
  }
  // a saved model is a record: keys beyond these are left alone, as model JSON elsewhere (readRecord)
  const j = readRecord(parsed as T, keys, 'the JSON') as Partial<T>;
  if (j.format !== format) throw new InvalidParameterError(`not a fedmix ${cls} JSON: format must be "${format}", got ${formatValue(j.format)}`);
  if (j.version !== 1) throw new InvalidParameterError(`unsupported ${cls} JSON version ${formatValue(j.version)}; this fedmix reads version 1 (the number)`);
  return j;
}

/** A saved array of exactly `want` finite numbers. */
export function savedArray(name: string, value: unknown, want: number): Float64Array {
  if (!isArray(name, value)) throw new InvalidParameterError(`${name} must be an array of ${want} numbers, got ${formatValue(value)}`);
  const f = requireVector(name, value);
  if (f.length !== want) throw new InvalidParameterError(`${name} has ${f.length} values; expected ${want}`);
  for (let i = 0; i < f.length; i++) {
    if (!Number.isFinite(f[i])) throw new InvalidParameterError(`${name}[${i}] is ${f[i]}; saved parameters are finite numbers`);
  }
  return f;
}

/** A saved finite number. */
export function savedNumber(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidParameterError(`${name} must be a finite number, got ${formatValue(value)}`);
  return value;
}

/** A saved finite number >= 0 (a variance, a loss, an inertia). */
export function savedNonNegative(name: string, value: unknown): number {
  const v = savedNumber(name, value);
  if (v < 0) throw new InvalidParameterError(`${name} is ${v}; it must be >= 0`);
  return v;
}

/** A saved array of exactly `want` finite numbers >= 0. */
export function savedNonNegativeArray(name: string, value: unknown, want: number): Float64Array {
  const f = savedArray(name, value, want);
  for (let i = 0; i < f.length; i++) if (f[i]! < 0) throw new InvalidParameterError(`${name}[${i}] is ${f[i]}; it must be >= 0`);
  return f;
}

/**
 * The largest coordinate of a saved location in d dimensions (KMeans
 * centers, a PCA mean): rows are compared with it through squared distances,
 * sum_j (x_j - c_j)^2, and for two points within [-L, L]^d that sum is at
 * most 4 d L^2, finite for L = sqrt(MAX / (4 d)) (about 1e153 at d = 36). A
 * fit squares centered rows the same way, so data beyond it do not fit
 * either; a location beyond it (centers scaled by 1e300) would make every
 * distance Infinity.
 */
export function locationBound(d: number): number {
  return Math.sqrt(Number.MAX_VALUE / (4 * d));
}

/** Coordinates of points in d dimensions, each within locationBound(d) (NaN is not). */
export function requireLocations(name: string, values: Float64Array, d: number): Float64Array {
  const bound = locationBound(d);
  for (let i = 0; i < values.length; i++) {
    if (!(Math.abs(values[i]!) <= bound)) {
      throw new InvalidParameterError(`${name}[${i}] is ${values[i]}; coordinates in ${d} dimensions must be within ±${bound.toPrecision(3)}, or squared distances overflow`);
    }
  }
  return values;
}

/** A saved array of `want` coordinates of points in d dimensions (see requireLocations). */
export function savedLocations(name: string, value: unknown, want: number, d: number): Float64Array {
  return requireLocations(name, savedArray(name, value, want), d);
}

/** A saved history of training losses (each finite and >= 0: mean squared errors, cross-entropies, with their penalties); absent is []. */
export function savedLosses(name: string, value: unknown): number[] {
  if (value === undefined) return [];
  if (!isArray(name, value)) throw new InvalidParameterError(`${name} must be an array of numbers, got ${formatValue(value)}`);
  const f = requireVector(name, value);
  for (let i = 0; i < f.length; i++) {
    if (!(f[i]! >= 0 && f[i]! < Infinity)) throw new InvalidParameterError(`${name}[${i}] is ${f[i]}; a training loss is a finite number >= 0`);
  }
  return Array.from(f);
}
