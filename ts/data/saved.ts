/**
 * Reading the JSON a model or transformer saved with toJSON(): the same
 * conventions as GaussianMixture.fromJSON (a `format` naming the class, a
 * numeric `version`, every field checked, typed errors), shared by KMeans,
 * PCA and the scalers so each does not re-implement the envelope.
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
