/**
 * Feature scaling fitted on training data only, as scikit-learn's scalers:
 * MinMaxScaler to [0, 1] and StandardScaler to zero mean and unit variance
 * (population variance). A constant feature is shifted but not divided by zero.
 */
import { InvalidDataError, NotFittedError } from '../errors.js';
import { Matrix, type MatrixLike } from './matrix.js';

/** x -> (x - offset) * scale, column by column. */
function affine(X: MatrixLike, p: { offset: Float64Array; scale: Float64Array } | undefined, name: string): Matrix {
  if (!p) throw new NotFittedError(`${name} is not fitted; call fit(X) first`);
  const x = Matrix.from(X);
  const { offset, scale } = p;
  if (x.nCols !== offset.length) throw new InvalidDataError(`X has ${x.nCols} features but the scaler was fitted with ${offset.length}`);
  const out = new Float64Array(x.data.length);
  for (let j = 0; j < x.nCols; j++) {
    const off = j * x.nRows;
    for (let i = 0; i < x.nRows; i++) out[off + i] = (x.data[off + i]! - offset[j]!) * scale[j]!;
  }
  return new Matrix(out, x.nRows, x.nCols);
}

function finiteColumns(x: Matrix, name: string): void {
  if (x.nRows === 0) throw new InvalidDataError(`${name} needs at least one row`);
  for (let j = 0; j < x.nCols; j++) {
    for (const v of x.column(j)) if (!Number.isFinite(v)) throw new InvalidDataError(`column ${j} contains ${v}; ${name} needs finite values`);
  }
}

export class StandardScaler {
  private params: { offset: Float64Array; scale: Float64Array } | undefined;

  fit(X: MatrixLike): this {
    const x = Matrix.from(X);
    finiteColumns(x, 'StandardScaler');
    const offset = new Float64Array(x.nCols);
    const scale = new Float64Array(x.nCols);
    for (let j = 0; j < x.nCols; j++) {
      const col = x.column(j);
      let mean = 0;
      for (const v of col) mean += v;
      mean /= col.length;
      let ss = 0;
      for (const v of col) ss += (v - mean) ** 2;
      const sd = Math.sqrt(ss / col.length);
      offset[j] = mean;
      scale[j] = sd > 0 ? 1 / sd : 1;
    }
    this.params = { offset, scale };
    return this;
  }

  transform(X: MatrixLike): Matrix {
    return affine(X, this.params, 'StandardScaler');
  }

  fitTransform(X: MatrixLike): Matrix {
    return this.fit(X).transform(X);
  }
}

export class MinMaxScaler {
  private range: { min: Float64Array; scale: Float64Array } | undefined;

  fit(X: MatrixLike): this {
    const x = Matrix.from(X);
    if (x.nRows === 0) throw new InvalidDataError('MinMaxScaler needs at least one row');
    const min = new Float64Array(x.nCols);
    const scale = new Float64Array(x.nCols);
    for (let j = 0; j < x.nCols; j++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of x.column(j)) {
        if (!Number.isFinite(v)) throw new InvalidDataError(`column ${j} contains ${v}; MinMaxScaler needs finite values`);
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      min[j] = lo;
      scale[j] = hi > lo ? 1 / (hi - lo) : 1;
    }
    this.range = { min, scale };
    return this;
  }

  transform(X: MatrixLike): Matrix {
    return affine(X, this.range && { offset: this.range.min, scale: this.range.scale }, 'MinMaxScaler');
  }

  fitTransform(X: MatrixLike): Matrix {
    return this.fit(X).transform(X);
  }
}
