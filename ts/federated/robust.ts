/**
 * Robust aggregation: statistics one client cannot move far, for servers that
 * average what clients send (coordinate-wise median and trimmed mean, the
 * Byzantine-robust rules of Yin et al. 2018, scipy.stats.trim_mean's
 * convention), and the scale test servers use to find the contribution that
 * broke an aggregate.
 */
import { InvalidParameterError } from '../errors.js';
import { readArray, requireNumber, requireVector } from '../validate.js';

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export function median(values: ArrayLike<number>): number {
  const v = Float64Array.from(values).sort();
  const n = v.length;
  if (n === 0) return NaN;
  return n % 2 ? v[(n - 1) / 2]! : (v[n / 2 - 1]! + v[n / 2]!) / 2;
}

/** How many times the others' median scale makes a client an outlier worth blaming for a failed aggregate. */
export const OUTLIER_SCALE = 1e3;

/**
 * Indices whose scale is more than OUTLIER_SCALE times the median of the
 * others' (or not a number), largest first: the clients a server suspects
 * when an aggregate breaks down numerically.
 */
export function outliers(scale: readonly number[]): number[] {
  // a scale that is not a number is the most suspect of all; the others' median leaves such scales out
  const key = scale.map((v) => (Number.isNaN(v) ? Infinity : v));
  const order = key.map((_, i) => i).sort((a, b) => (key[b]! > key[a]! ? 1 : key[b]! < key[a]! ? -1 : a - b));
  return order.filter((i) => {
    const others = scale.filter((v, x) => x !== i && !Number.isNaN(v));
    return others.length > 0 && !(scale[i]! <= OUTLIER_SCALE * median(others));
  });
}

/** m vectors of one length, read once and checked (numbers only, at least one vector). */
function vectors(name: string, xs: readonly ArrayLike<number>[]): Float64Array[] {
  const list = readArray(name, xs).map((x, i) => requireVector(`${name}[${i}]`, x));
  if (list.length === 0) throw new InvalidParameterError(`${name} needs at least one vector`);
  const d = list[0]!.length;
  list.forEach((x, i) => {
    if (x.length !== d) throw new InvalidParameterError(`${name}[${i}] has ${x.length} values; ${name}[0] has ${d}`);
  });
  return list;
}

/** The median of each coordinate over the vectors (numpy.median(xs, axis=0)). */
export function coordinateMedian(xs: readonly ArrayLike<number>[]): Float64Array {
  const vs = vectors('coordinateMedian', xs);
  const d = vs[0]!.length;
  const out = new Float64Array(d);
  const column = new Float64Array(vs.length);
  for (let j = 0; j < d; j++) {
    for (let i = 0; i < vs.length; i++) column[i] = vs[i]![j]!;
    out[j] = median(column);
  }
  return out;
}

/**
 * The mean of each coordinate after cutting `proportion` of the vectors off
 * each end of its sorted values (scipy.stats.trim_mean(xs, proportion,
 * axis=0): floor(proportion x m) from each end); proportion in [0, 0.5).
 */
export function trimmedMean(xs: readonly ArrayLike<number>[], proportion: number): Float64Array {
  const vs = vectors('trimmedMean', xs);
  requireNumber('proportion', proportion, 0);
  if (!(proportion < 0.5)) throw new InvalidParameterError(`proportion is ${proportion}; it must be below 0.5, or nothing is left to average`);
  const m = vs.length;
  const d = vs[0]!.length;
  const cut = Math.floor(proportion * m);
  const out = new Float64Array(d);
  const column = new Float64Array(m);
  for (let j = 0; j < d; j++) {
    for (let i = 0; i < m; i++) column[i] = vs[i]![j]!;
    column.sort();
    let s = 0;
    for (let i = cut; i < m - cut; i++) s += column[i]!;
    out[j] = s / (m - 2 * cut);
  }
  return out;
}

/**
 * `vector` pulled toward `center` so that its update, vector - center, has an
 * L2 norm of at most `bound` (the clipping of DP-FedAvg, McMahan et al. 2018,
 * and of Flower's clipping wrappers): the update scaled by bound / norm when
 * longer, else `vector` itself. In double precision, rounded to f32 once.
 */
export function clipUpdate(vector: Float32Array, center: Float32Array, bound: number): { vector: Float32Array; norm: number; clipped: boolean } {
  let sum = 0;
  for (let j = 0; j < vector.length; j++) {
    const d = vector[j]! - center[j]!;
    sum += d * d;
  }
  const norm = Math.sqrt(sum);
  if (!(norm > bound)) return { vector, norm, clipped: false };
  const scale = bound / norm;
  const out = new Float32Array(vector.length);
  for (let j = 0; j < vector.length; j++) out[j] = center[j]! + scale * (vector[j]! - center[j]!);
  return { vector: out, norm, clipped: true };
}
