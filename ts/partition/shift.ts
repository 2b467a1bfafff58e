/**
 * The FedGenGMM paper's WADI scheme (section 5.2): data without usable classes
 * gets M artificial ones. The rows are split at random into M parts; every row
 * of part m (0-based here; the paper's m - 1) gets a draw from
 * N(m * beta * 1, noiseVariance * I) added (the paper: centre 1 (m - 1) beta,
 * diagonal covariance 0.01), and the M parts, as classes, are dealt to the
 * clients by Quantity(alpha).
 *
 * "The same type of perturbation was applied to both the non-anomalous and
 * anomalous parts of the dataset": applyShift() perturbs test or anomalous
 * rows by the same generative rule, which is what "type" says: the same part
 * means and noise variance, the rows split at random into the same M parts
 * (equal sizes, as the training rows), and a fresh Gaussian draw per row (the
 * training noise was per row too, so there is no per-part draw to reuse).
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { type Rng } from '../random.js';
import { LIMITS, readOptions, requireInteger, requireNumber, requireVector } from '../validate.js';
import { checkQuantity, dealQuantity, type QuantityPartition } from './quantity.js';
import { equalSplit, withRng } from './shared.js';

/** The paper's noise variance: N(C_m, 0.01 I). */
export const PAPER_NOISE_VARIANCE = 0.01;

export interface ShiftOptions {
  /** M, the number of parts (artificial classes): 1 <= parts <= rows */
  parts: number;
  /** distance between consecutive part means, per coordinate (>= 0) */
  beta: number;
  clients: number;
  /** parts per client, as in Quantity(alpha): an integer in [1, parts] */
  alpha: number;
  seed?: number;
  /** fewest rows per client, as in quantity() (default 1) */
  minSize?: number;
  /** variance of the per-coordinate noise (default 0.01, the paper's) */
  noiseVariance?: number;
}

/** What defines the perturbation; pass it to applyShift() for test and anomalous rows. */
export interface ShiftParameters {
  beta: number;
  /** means[m] = m * beta: every coordinate of part m is shifted by it on average (M values) */
  means: Float64Array;
  /** variance of the independent per-coordinate noise */
  noiseVariance: number;
}

export interface ShiftPartition extends QuantityPartition {
  /** the perturbed rows, in the original order (clients' rows: X.selectRows(indices[c])) */
  X: Matrix;
  /** the part (artificial class) of every row; classes are 0..M-1 */
  parts: Int32Array;
  shift: ShiftParameters;
}

export interface ShiftedRows {
  X: Matrix;
  parts: Int32Array;
}

export function shift(X: MatrixLike, options: ShiftOptions): ShiftPartition {
  const x = requireFinite(X);
  const o = readOptions(options, ['parts', 'beta', 'clients', 'alpha', 'seed', 'minSize', 'noiseVariance']);
  const M = requireInteger('parts', o.parts, 1, LIMITS.partitionRows);
  if (M > x.nRows) throw new InvalidParameterError(`parts = ${M} exceeds the ${x.nRows} rows; every part needs a row, use at most ${x.nRows} parts`);
  if (x.nRows > LIMITS.partitionRows) throw new InvalidParameterError(`X has ${x.nRows} rows; a partition deals at most ${LIMITS.partitionRows}`);
  const beta = requireNumber('beta', o.beta, 0);
  const noiseVariance = requireNumber('noiseVariance', o.noiseVariance ?? PAPER_NOISE_VARIANCE, 0);
  const checked = checkQuantity(o, x.nRows, M, 'parts are');
  const params: ShiftParameters = { beta, means: Float64Array.from({ length: M }, (_, m) => m * beta), noiseVariance };
  const classes = Array.from({ length: M }, (_, m) => m);
  return withRng(o.seed, (rng) => {
    const shifted = perturb(rng, x, params);
    return { ...dealQuantity(rng, shifted.parts, classes, checked), ...shifted, shift: params };
  });
}

/**
 * The same perturbation for other rows (a test set, anomalies): split at
 * random into the same parts, each row shifted by its part's mean plus fresh
 * noise. The seed should differ from the one that shifted the training rows
 * (with that seed and the training rows it reproduces shift()'s X and parts:
 * shift() perturbs first, then deals).
 */
export function applyShift(X: MatrixLike, shift: ShiftParameters, options: { seed?: number } = {}): ShiftedRows {
  const x = requireFinite(X);
  if (x.nRows > LIMITS.partitionRows) throw new InvalidParameterError(`X has ${x.nRows} rows; a partition deals at most ${LIMITS.partitionRows}`);
  if (shift === null || typeof shift !== 'object') throw new InvalidParameterError(`shift is ${formatValue(shift)}; pass the shift of a shift() result`);
  const p = readOptions(shift, ['beta', 'means', 'noiseVariance'], 'shift');
  const means = p.means === undefined ? undefined : requireVector('shift.means', p.means);
  if (!means || means.length === 0 || means.length > LIMITS.partitionCells || !means.every((v) => Number.isFinite(v))) {
    throw new InvalidParameterError(
      `shift.means must be a non-empty array of finite numbers, one per part (at most ${LIMITS.partitionCells}): pass the shift of a shift() result, got ${formatValue(p.means)}`,
    );
  }
  const noiseVariance = requireNumber('shift.noiseVariance', p.noiseVariance, 0);
  const params: ShiftParameters = { beta: p.beta as number, means: Float64Array.from(means), noiseVariance };
  return withRng(readOptions(options, ['seed']).seed, (rng) => perturb(rng, x, params));
}

function requireFinite(X: MatrixLike): Matrix {
  const x = Matrix.from(X);
  for (let j = 0; j < x.nCols; j++) {
    const col = x.column(j);
    for (let i = 0; i < col.length; i++) {
      if (!Number.isFinite(col[i])) throw new InvalidDataError(`X contains ${col[i]} at row ${i}, column ${j}; remove or impute non-finite values first`);
    }
  }
  return x;
}

/** Parts by a random equal split, then x + means[part] + sqrt(noiseVariance) z, z standard normal per value. */
function perturb(rng: Rng, x: Matrix, { means, noiseVariance }: ShiftParameters): ShiftedRows {
  const n = x.nRows;
  const parts = new Int32Array(n);
  equalSplit(rng, Int32Array.from({ length: n }, (_, i) => i), means.length).forEach((rows, m) => {
    for (const i of rows) parts[i] = m;
  });
  const sd = Math.sqrt(noiseVariance);
  const out = rng.normal(n * x.nCols);
  for (let j = 0; j < x.nCols; j++) {
    const off = j * n;
    for (let i = 0; i < n; i++) out[off + i] = x.data[off + i]! + means[parts[i]!]! + sd * out[off + i]!;
  }
  return { X: new Matrix(out, n, x.nCols), parts };
}
