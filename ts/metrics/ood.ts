/**
 * Out-of-distribution rows made as the FedGenGMM paper made them for Covertype:
 * held-out inliers plus Gaussian noise with mean 0 and a given variance (0.005 on
 * min-max normalized features), the same for every class.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { Rng } from '../random.js';
import { readOptions, requireNumber } from '../validate.js';

export function gaussianNoiseOod(X: MatrixLike, options: { variance?: number; seed?: number } = {}): Matrix {
  const x = Matrix.from(X);
  const o = readOptions(options, ['variance', 'seed']);
  const sd = Math.sqrt(requireNumber('variance', o.variance ?? 0.005, 0));
  const rng = new Rng(o.seed);
  try {
    const noise = rng.normal(x.data.length);
    return new Matrix(x.data.map((v, i) => v + sd * noise[i]!), x.nRows, x.nCols);
  } finally {
    rng.dispose();
  }
}
