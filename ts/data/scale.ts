/**
 * Feature scaling fitted on training data only, as scikit-learn's scalers:
 * MinMaxScaler to [0, 1] and StandardScaler to zero mean and unit variance
 * (population variance). A constant feature is shifted but not divided by zero.
 */
import { InvalidDataError, InvalidParameterError, NotFittedError } from '../errors.js';
import { LIMITS, requireInteger } from '../validate.js';
import { Matrix, type MatrixLike } from './matrix.js';
import { readSavedJSON, savedArray } from './saved.js';
import { keepClassName } from '../class-name.js';

/** A fitted scaler's parameters, as toJSON() saves them: x -> (x - offset) * factor per feature. */
interface Affine {
  offset: Float64Array;
  scale: Float64Array;
}

/** Serialized form of a StandardScaler or MinMaxScaler, see toJSON(). */
export interface ScalerJSON<F extends 'fedmix.StandardScaler' | 'fedmix.MinMaxScaler'> {
  format: F;
  version: 1;
  nFeatures: number;
  /** subtracted from each feature: the mean (StandardScaler) or minimum (MinMaxScaler) */
  offset: number[];
  /** then multiplied: 1 / standard deviation or 1 / (max - min), 1 for a constant feature */
  factor: number[];
}
export type StandardScalerJSON = ScalerJSON<'fedmix.StandardScaler'>;
export type MinMaxScalerJSON = ScalerJSON<'fedmix.MinMaxScaler'>;

const SCALER_KEYS = ['format', 'version', 'nFeatures', 'offset', 'factor'] as const;
/** The smallest normal double, 2^-1022. */
const MIN_NORMAL = 2 ** -1022;

function scalerFromJSON<F extends 'fedmix.StandardScaler' | 'fedmix.MinMaxScaler'>(json: unknown, format: F): Affine {
  const j = readSavedJSON<ScalerJSON<F>>(json, format, SCALER_KEYS);
  const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.values);
  const offset = savedArray('offset', j.offset, d);
  const scale = savedArray('factor', j.factor, d);
  for (let i = 0; i < d; i++) {
    // transform multiplies by the factor, inverseTransform divides by it: its inverse (a standard deviation or a range) must be a normal double too
    const spread = 1 / scale[i]!;
    if (!(scale[i]! > 0) || !(spread >= MIN_NORMAL && spread < Infinity)) {
      throw new InvalidParameterError(`factor[${i}] is ${scale[i]}; a scaler's factors are positive and their inverses (the spreads) finite normal numbers`);
    }
  }
  return { offset, scale };
}

/** x -> x / factor + offset: the inverse of affine (up to rounding). */
function inverseAffine(X: MatrixLike, p: Affine | undefined, name: string): Matrix {
  if (!p) throw new NotFittedError(`${name} is not fitted; call fit(X) first`);
  const x = Matrix.from(X);
  const { offset, scale } = p;
  if (x.nCols !== offset.length) throw new InvalidDataError(`X has ${x.nCols} features but the scaler was fitted with ${offset.length}`);
  const out = new Float64Array(x.data.length);
  for (let j = 0; j < x.nCols; j++) {
    const off = j * x.nRows;
    for (let i = 0; i < x.nRows; i++) out[off + i] = x.data[off + i]! / scale[j]! + offset[j]!;
  }
  return new Matrix(out, x.nRows, x.nCols);
}

/** x -> (x - offset) * scale, column by column. */
function affine(X: MatrixLike, p: Affine | undefined, name: string): Matrix {
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

/**
 * What both scalers share: a fitted affine map per feature, x -> (x - offset) * factor, applied,
 * inverted and saved alike. Each scaler computes its offset and factor in fit().
 */
export abstract class AffineScaler<F extends 'fedmix.StandardScaler' | 'fedmix.MinMaxScaler'> {
  /** the fitted parameters, undefined until fit() */
  protected params: Affine | undefined;

  protected constructor(
    /** the saved file's format */
    private readonly format: F,
    /** the class's name, for messages */
    private readonly kind: string,
  ) {}

  /** Fits the scaler on the rows of X (finite values, at least one row). */
  abstract fit(X: MatrixLike): this;

  transform(X: MatrixLike): Matrix {
    return affine(X, this.params, this.kind);
  }

  /** Back to the original units: x / factor + offset (scikit-learn's inverse_transform). */
  inverseTransform(X: MatrixLike): Matrix {
    return inverseAffine(X, this.params, this.kind);
  }

  toJSON(): ScalerJSON<F> {
    const p = this.params;
    if (!p) throw new NotFittedError(`${this.kind} is not fitted; call fit(X) first`);
    return { format: this.format, version: 1, nFeatures: p.offset.length, offset: Array.from(p.offset), factor: Array.from(p.scale) };
  }

  fitTransform(X: MatrixLike): Matrix {
    return this.fit(X).transform(X);
  }
}

/** Zero mean and unit (population) variance per feature; a constant feature is shifted only. */
export class StandardScaler extends AffineScaler<'fedmix.StandardScaler'> {
  static {
    keepClassName(this, 'StandardScaler');
  }

  constructor() {
    super('fedmix.StandardScaler', 'StandardScaler');
  }

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

  /** Rebuilds a scaler saved with toJSON() (the object or its text). */
  static fromJSON(json: StandardScalerJSON | string): StandardScaler {
    const s = new StandardScaler();
    s.params = scalerFromJSON(json, 'fedmix.StandardScaler');
    return s;
  }
}

/** Each feature to [0, 1] by its minimum and maximum; a constant feature is shifted only. */
export class MinMaxScaler extends AffineScaler<'fedmix.MinMaxScaler'> {
  static {
    keepClassName(this, 'MinMaxScaler');
  }

  constructor() {
    super('fedmix.MinMaxScaler', 'MinMaxScaler');
  }

  fit(X: MatrixLike): this {
    const x = Matrix.from(X);
    finiteColumns(x, 'MinMaxScaler');
    const min = new Float64Array(x.nCols);
    const scale = new Float64Array(x.nCols);
    for (let j = 0; j < x.nCols; j++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (const v of x.column(j)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      min[j] = lo;
      scale[j] = hi > lo ? 1 / (hi - lo) : 1;
    }
    this.params = { offset: min, scale };
    return this;
  }

  /** Rebuilds a scaler saved with toJSON() (the object or its text). */
  static fromJSON(json: MinMaxScalerJSON | string): MinMaxScaler {
    const s = new MinMaxScaler();
    s.params = scalerFromJSON(json, 'fedmix.MinMaxScaler');
    return s;
  }
}
