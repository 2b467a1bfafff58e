/**
 * Clustering metrics as scikit-learn computes them: the adjusted Rand index
 * (Hubert and Arabie; sklearn.metrics.adjusted_rand_score, through the pair
 * confusion matrix) and the silhouette score (Rousseeuw; sklearn's
 * silhouette_score / silhouette_samples with the Euclidean metric).
 */
import type { LabelsLike } from '../data/labels.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError } from '../errors.js';
import { LIMITS, readArray } from '../validate.js';

type Labels = LabelsLike;

function codes(name: string, given: Labels): { codes: Int32Array; count: number } {
  const labels = readArray(name, given, LIMITS.values, InvalidDataError);
  const map = new Map<number | string, number>();
  const out = new Int32Array(labels.length);
  for (let i = 0; i < labels.length; i++) {
    const v = labels[i];
    if (!(typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)))) {
      throw new InvalidDataError(`${name}[${i}] is ${formatValue(v)}; labels must be finite numbers or strings`);
    }
    let c = map.get(v);
    if (c === undefined) {
      c = map.size;
      map.set(v, c);
    }
    out[i] = c;
  }
  return { codes: out, count: map.size };
}

/**
 * Adjusted Rand index between two labelings of the same samples: 1 for
 * identical partitions (up to renaming), about 0 for independent ones, negative
 * below chance. Labels are numbers or strings; only which samples share a label
 * matters.
 */
export function adjustedRandScore(labelsTrue: Labels, labelsPred: Labels): number {
  const t = codes('labelsTrue', labelsTrue);
  const p = codes('labelsPred', labelsPred);
  const n = t.codes.length;
  if (p.codes.length !== n) {
    throw new InvalidDataError(`labelsTrue has ${n} labels but labelsPred has ${p.codes.length}; pass one of each per sample`);
  }
  const table = new Map<number, number>();
  const rows = new Float64Array(t.count);
  const cols = new Float64Array(p.count);
  for (let i = 0; i < n; i++) {
    const key = t.codes[i]! * p.count + p.codes[i]!;
    table.set(key, (table.get(key) ?? 0) + 1);
    rows[t.codes[i]!]! += 1;
    cols[p.codes[i]!]! += 1;
  }
  // the pair confusion matrix, in exact integers (n^4 exceeds 2^53 from n = 10^4)
  const big = BigInt;
  let squares = 0n;
  for (const v of table.values()) squares += big(v) * big(v);
  let rowSquares = 0n;
  for (const v of rows) rowSquares += big(v) * big(v);
  let colSquares = 0n;
  for (const v of cols) colSquares += big(v) * big(v);
  const nn = big(n);
  const tp = squares - nn;
  const fp = colSquares - squares;
  const fn = rowSquares - squares;
  const tn = nn * nn - fp - fn - squares;
  // sklearn: both labelings all in one cluster, or all singletons: a perfect match
  if (fn === 0n && fp === 0n) return 1;
  const num = 2n * (tp * tn - fn * fp);
  const den = (tp + fn) * (fn + tn) + (tp + fp) * (fp + tn);
  return Number(num) / Number(den);
}

/**
 * Silhouette coefficient of every sample: (b - a) / max(a, b), a the mean
 * distance to the other members of its cluster, b the smallest mean distance to
 * another cluster's members; 0 for a member of a singleton cluster. Needs 2 to
 * n - 1 distinct labels. O(n^2 d) time, O(n) memory.
 */
export function silhouetteSamples(X: MatrixLike, labels: Labels): Float64Array {
  const m = Matrix.from(X);
  const { nRows: n, nCols: d } = m;
  const { codes: c, count: k } = codes('labels', labels);
  if (c.length !== n) throw new InvalidDataError(`X has ${n} rows but labels has ${c.length}; pass one label per row`);
  if (k < 2 || k > n - 1) {
    throw new InvalidDataError(`the silhouette needs 2 to n - 1 = ${n - 1} distinct labels, got ${k}`);
  }
  for (let i = 0; i < m.data.length; i++) {
    if (!Number.isFinite(m.data[i])) throw new InvalidDataError(`X contains ${String(m.data[i])} at row ${i % n}, column ${Math.floor(i / n)}`);
  }
  // row-major copy: the inner loop walks one row's features
  const rowsMajor = new Float64Array(n * d);
  for (let j = 0; j < d; j++) for (let i = 0; i < n; i++) rowsMajor[i * d + j] = m.data[j * n + i]!;
  const sizes = new Float64Array(k);
  for (let i = 0; i < n; i++) sizes[c[i]!]! += 1;
  const out = new Float64Array(n);
  const sums = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    sums.fill(0);
    const xi = i * d;
    for (let l = 0; l < n; l++) {
      const xl = l * d;
      let s = 0;
      for (let j = 0; j < d; j++) {
        const t = rowsMajor[xi + j]! - rowsMajor[xl + j]!;
        s += t * t;
      }
      sums[c[l]!]! += Math.sqrt(s);
    }
    const own = c[i]!;
    if (sizes[own] === 1) continue; // singleton: 0
    const a = sums[own]! / (sizes[own]! - 1);
    let b = Infinity;
    for (let q = 0; q < k; q++) if (q !== own) b = Math.min(b, sums[q]! / sizes[q]!);
    const top = Math.max(a, b);
    out[i] = top > 0 ? (b - a) / top : 0;
  }
  return out;
}

/** Mean silhouette coefficient over all samples (sklearn's silhouette_score). */
export function silhouetteScore(X: MatrixLike, labels: Labels): number {
  const s = silhouetteSamples(X, labels);
  let total = 0;
  for (const v of s) total += v;
  return total / s.length;
}
