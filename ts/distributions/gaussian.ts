/**
 * A Gaussian: its covariance factored for densities, its density, and the
 * small dense linear algebra on symmetric matrices it needs (d is tens: an
 * encoder's latent dimension, a detector's features), all computed by the Rust
 * core (crates/fedmix-core/src/linalg.rs). Below the algorithms: FedDistr's
 * base distributions, the Gaussian mechanism (ts/privacy/) and the models use it.
 *
 * A covariance is either diagonal (d variances) or full (d x d, row-major).
 */
import { InvalidParameterError } from '../errors.js';
import { requireWasmMemory, withScope, type Scope } from '../wasm/memory.js';

export type CovarianceKind = 'full' | 'diagonal';

/** A Gaussian: its mean (d values) and covariance (d variances, or d x d row-major). */
export interface Gaussian {
  mean: Float64Array;
  covariance: Float64Array;
}

/**
 * A copy of the d x d matrix `a` in WASM memory for one of the core's
 * linear-algebra exports (crates/fedmix-core/src/linalg.rs), or undefined
 * when `a` has fewer than d x d values.
 */
function squareIn(s: Scope, a: ArrayLike<number>, d: number): number | undefined {
  if (!(Number.isSafeInteger(d) && d >= 0 && a.length >= d * d)) return undefined;
  requireWasmMemory(`a ${d} x ${d} matrix`, 8 * 4 * d * d);
  return s.f64From(d * d === a.length ? a : Array.prototype.slice.call(a, 0, d * d));
}

function squareOrThrow(s: Scope, a: ArrayLike<number>, d: number): number {
  const ptr = squareIn(s, a, d);
  if (ptr === undefined) throw new InvalidParameterError(`a ${d} x ${d} matrix has ${d * d} values, got ${a.length}`);
  return ptr;
}

/** The lower Cholesky factor of a symmetric d x d matrix (the core's), or undefined when it is not positive definite. */
export function cholesky(a: ArrayLike<number>, d: number): Float64Array | undefined {
  return withScope((s) => {
    const ptr = squareIn(s, a, d);
    if (ptr === undefined) return undefined;
    const out = s.f64(d * d);
    return s.w.fm_cholesky(ptr, d, out) === 1 ? s.readF64(out, d * d) : undefined;
  });
}

/** Whether a covariance is symmetric (to a relative 1e-9) and positive definite. */
export function isPositiveDefinite(cov: ArrayLike<number>, d: number, kind: CovarianceKind): boolean {
  if (kind === 'diagonal') {
    for (let j = 0; j < d; j++) if (!(cov[j]! > 0) || !Number.isFinite(cov[j]!)) return false;
    return true;
  }
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < i; j++) {
      const a = cov[i * d + j]!;
      const b = cov[j * d + i]!;
      if (!(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)))) return false;
    }
  }
  return cholesky(cov, d) !== undefined;
}

const LOG_2PI = Math.log(2 * Math.PI);

/** A covariance factored for densities: its lower Cholesky factor (full) or standard deviations (diagonal), and ln det. */
export interface FactoredCovariance {
  factor: Float64Array;
  logDet: number;
}

/** The covariance factored, or undefined when it is not positive definite. */
export function factorCovariance(cov: ArrayLike<number>, d: number, kind: CovarianceKind): FactoredCovariance | undefined {
  let logDet = 0;
  if (kind === 'diagonal') {
    const factor = new Float64Array(d);
    for (let j = 0; j < d; j++) {
      if (!(cov[j]! > 0) || !Number.isFinite(cov[j]!)) return undefined;
      factor[j] = Math.sqrt(cov[j]!);
      logDet += Math.log(cov[j]!);
    }
    return { factor, logDet };
  }
  const factor = cholesky(cov, d);
  if (!factor) return undefined;
  for (let j = 0; j < d; j++) logDet += 2 * Math.log(factor[j * d + j]!);
  return { factor, logDet };
}

/** ln N(z; mean, S) for the row z at offset `at` of Z (row-major), S factored; `y` is d values of scratch. */
export function gaussianLogDensity(c: FactoredCovariance, mean: ArrayLike<number>, Z: ArrayLike<number>, at: number, d: number, kind: CovarianceKind, y: Float64Array): number {
  let quad = 0;
  const L = c.factor;
  if (kind === 'diagonal') {
    for (let j = 0; j < d; j++) quad += ((Z[at + j]! - mean[j]!) / L[j]!) ** 2;
  } else {
    // L y = z - m by forward substitution; the quadratic form is |y|^2
    for (let i = 0; i < d; i++) {
      let s = Z[at + i]! - mean[i]!;
      for (let k = 0; k < i; k++) s -= L[i * d + k]! * y[k]!;
      y[i] = s / L[i * d + i]!;
      quad += y[i]! * y[i]!;
    }
  }
  return -0.5 * (d * LOG_2PI + c.logDet + quad);
}

/**
 * Eigen-decomposition of a symmetric d x d matrix (the core's; its lower
 * triangle is read): the eigenvalues, descending, and the unit eigenvectors as
 * the rows of a row-major matrix.
 */
export function symmetricEigen(a: ArrayLike<number>, d: number): { values: Float64Array; vectors: Float64Array } {
  return withScope((s) => {
    const ptr = squareOrThrow(s, a, d);
    const [values, vectors] = [s.f64(d), s.f64(d * d)];
    s.check(s.w.fm_symmetric_eigen(ptr, d, values, vectors));
    return { values: s.readF64(values, d), vectors: s.readF64(vectors, d * d) };
  });
}

/** A symmetric matrix with its eigenvalues raised to at least `floor` (the core's): the nearest such matrix. */
export function symmetricFloor(a: ArrayLike<number>, d: number, floor: number): Float64Array {
  return withScope((s) => {
    const ptr = squareOrThrow(s, a, d);
    const out = s.f64(d * d);
    s.check(s.w.fm_symmetric_floor(ptr, d, floor, out));
    return s.readF64(out, d * d);
  });
}

/** The symmetric positive semi-definite square root of a symmetric matrix (the core's). */
export function sqrtm(a: ArrayLike<number>, d: number): Float64Array {
  return withScope((s) => {
    const ptr = squareOrThrow(s, a, d);
    const out = s.f64(d * d);
    s.check(s.w.fm_sqrtm(ptr, d, out));
    return s.readF64(out, d * d);
  });
}
