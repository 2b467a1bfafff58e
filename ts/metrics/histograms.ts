/**
 * How alike two sets of clients are in one categorical feature: the energy
 * distance between the empirical distributions of their class proportions
 * (each histogram divided by its size, a point on the simplex). With X, X'
 * drawn from one set and Y, Y' from the other,
 *
 *   E = 2 E|X - Y| - E|X - X'| - E|Y - Y'|      (|.| the Euclidean norm)
 *
 * (Szekely & Rizzo's energy distance, V-statistic form: all pairs, the zero
 * self-distances included). It is 0 exactly when the two empirical
 * distributions coincide, needs no bandwidth or binning, and grows with how
 * far apart the sets' clients sit, e.g. near-IID clients (all close to the
 * pooled class mix) against heterogeneous ones.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { InvalidDataError } from '../errors.js';

/** Rows as proportions, row-major. */
function proportions(name: string, x: MatrixLike): { p: Float64Array; m: number; c: number } {
  const h = Matrix.from(x);
  const { nRows: m, nCols: c } = h;
  if (m === 0) throw new InvalidDataError(`${name} holds no histograms`);
  const p = new Float64Array(m * c);
  for (let i = 0; i < m; i++) {
    let n = 0;
    for (let j = 0; j < c; j++) {
      const v = h.data[j * m + i]!;
      if (!(v >= 0) || !Number.isFinite(v)) throw new InvalidDataError(`${name}: row ${i}, column ${j} is ${v}; counts must be finite and >= 0`);
      n += v;
    }
    if (n === 0) throw new InvalidDataError(`${name}: row ${i} is empty; every histogram needs a positive total`);
    for (let j = 0; j < c; j++) p[i * c + j] = h.data[j * m + i]! / n;
  }
  return { p, m, c };
}

function meanDistance(a: Float64Array, ma: number, b: Float64Array, mb: number, c: number): number {
  let total = 0;
  for (let i = 0; i < ma; i++) {
    for (let k = 0; k < mb; k++) {
      let s = 0;
      for (let j = 0; j < c; j++) {
        const d = a[i * c + j]! - b[k * c + j]!;
        s += d * d;
      }
      total += Math.sqrt(s);
    }
  }
  return total / (ma * mb);
}

/** The energy distance between the class proportions of two sets of histograms (rows: clients; same columns). */
export function histogramEnergyDistance(a: MatrixLike, b: MatrixLike): number {
  const x = proportions('a', a);
  const y = proportions('b', b);
  if (x.c !== y.c) throw new InvalidDataError(`a has ${x.c} categories but b has ${y.c}; the histograms must count the same classes`);
  return 2 * meanDistance(x.p, x.m, y.p, y.m, x.c) - meanDistance(x.p, x.m, x.p, x.m, x.c) - meanDistance(y.p, y.m, y.p, y.m, x.c);
}
