/**
 * Class labels as the partitioners and the classifiers read them: all finite
 * numbers or all strings, coded 0..K-1 by their sorted distinct values.
 */
import type { ArrowVectorLike } from './arrow.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { LIMITS, readArray } from '../validate.js';

/** A class label: a number (finite) or a string. */
export type Label = number | string;

/** Labels as the partitioners and metrics take them: an array, or an Arrow vector of any version (numbers, strings or a dictionary-encoded column). */
export type LabelsLike = ArrayLike<Label> | ArrowVectorLike;

/** Labels (`name` in messages) as codes 0..K-1 into their sorted distinct values. */
export function encodeLabels(labels: unknown, name = 'labels'): { codes: Int32Array; classes: Label[] } {
  if (labels === null || typeof labels !== 'object') throw new InvalidParameterError(`${name} must be an array of numbers or strings (one per row), got ${formatValue(labels)}`);
  const a = readArray(name, labels, LIMITS.partitionRows);
  if (a.length === 0) throw new InvalidDataError(`${name} is empty; pass one label per row`);
  const kind = typeof a[0];
  if (kind !== 'number' && kind !== 'string') {
    throw new InvalidDataError(`${name}[0] is ${formatValue(a[0])}; labels must be finite numbers or strings`);
  }
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (typeof v !== kind || (kind === 'number' && !Number.isFinite(v))) {
      throw new InvalidDataError(`${name}[${i}] is ${formatValue(v)}; labels must be all finite numbers or all strings`);
    }
  }
  const distinct = [...new Set(a as Label[])];
  const classes = kind === 'number' ? (distinct as number[]).sort((x, y) => x - y) : (distinct as string[]).sort();
  const code = new Map<Label, number>(classes.map((c, k) => [c, k]));
  const codes = new Int32Array(a.length);
  for (let i = 0; i < a.length; i++) codes[i] = code.get(a[i] as Label)!;
  return { codes, classes };
}
