/**
 * Costs between two Gaussians, and the small dense linear algebra they need
 * (d is an encoder's latent dimension: tens, so plain loops suffice).
 *
 * A covariance is either diagonal (d variances) or full (d x d, row-major).
 *
 *   2-Wasserstein  W2^2 = |m1 - m2|^2 + tr(S1 + S2 - 2 (S2^1/2 S1 S2^1/2)^1/2)
 *                  (Dowson & Landau 1982); diagonal: sum (sqrt a - sqrt b)^2
 *                  elementwise. The cost is W2 itself (the data's units).
 *   Bhattacharyya  DB = 1/8 dm' S^-1 dm + 1/2 ln(det S / sqrt(det S1 det S2)),
 *                  S = (S1 + S2) / 2.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { readOptions, requireOneOf, requireVector } from '../../validate.js';

export type CovarianceKind = 'full' | 'diagonal';

/** A Gaussian: its mean (d values) and covariance (d variances, or d x d row-major). */
export interface Gaussian {
  mean: Float64Array;
  covariance: Float64Array;
}

/** The lower Cholesky factor of a symmetric d x d matrix, or undefined when it is not positive definite. */
export function cholesky(a: ArrayLike<number>, d: number): Float64Array | undefined {
  const L = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[i * d + j]!;
      for (let k = 0; k < j; k++) s -= L[i * d + k]! * L[j * d + k]!;
      if (i === j) {
        if (!(s > 0) || !Number.isFinite(s)) return undefined;
        L[i * d + i] = Math.sqrt(s);
      } else {
        L[i * d + j] = s / L[j * d + j]!;
      }
    }
  }
  return L;
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

/**
 * Eigen-decomposition of a symmetric d x d matrix by cyclic Jacobi rotations:
 * the eigenvalues and the eigenvectors as the columns of a row-major matrix.
 */
export function symmetricEigen(a: ArrayLike<number>, d: number): { values: Float64Array; vectors: Float64Array } {
  const A = Float64Array.from(a);
  const V = new Float64Array(d * d);
  for (let i = 0; i < d; i++) V[i * d + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let total = 0;
    for (let i = 0; i < d; i++) {
      for (let j = 0; j < d; j++) {
        const v = A[i * d + j]! * A[i * d + j]!;
        total += v;
        if (i !== j) off += v;
      }
    }
    if (off <= 1e-30 * total || off === 0) break;
    for (let p = 0; p < d - 1; p++) {
      for (let q = p + 1; q < d; q++) {
        const apq = A[p * d + q]!;
        if (apq === 0) continue;
        const theta = (A[q * d + q]! - A[p * d + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < d; k++) {
          const akp = A[k * d + p]!;
          const akq = A[k * d + q]!;
          A[k * d + p] = c * akp - s * akq;
          A[k * d + q] = s * akp + c * akq;
        }
        for (let k = 0; k < d; k++) {
          const apk = A[p * d + k]!;
          const aqk = A[q * d + k]!;
          A[p * d + k] = c * apk - s * aqk;
          A[q * d + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < d; k++) {
          const vkp = V[k * d + p]!;
          const vkq = V[k * d + q]!;
          V[k * d + p] = c * vkp - s * vkq;
          V[k * d + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(d);
  for (let i = 0; i < d; i++) values[i] = A[i * d + i]!;
  return { values, vectors: V };
}

/** V f(values) V' for a symmetric matrix (its square root with f = sqrt of the eigenvalues floored at 0). */
export function symmetricFunction(a: ArrayLike<number>, d: number, f: (x: number) => number): Float64Array {
  const { values, vectors } = symmetricEigen(a, d);
  const out = new Float64Array(d * d);
  for (let k = 0; k < d; k++) {
    const fk = f(values[k]!);
    if (fk === 0) continue;
    for (let i = 0; i < d; i++) {
      const vik = vectors[i * d + k]! * fk;
      for (let j = 0; j < d; j++) out[i * d + j]! += vik * vectors[j * d + k]!;
    }
  }
  return out;
}

/** The symmetric positive semi-definite square root of a symmetric matrix. */
export function sqrtm(a: ArrayLike<number>, d: number): Float64Array {
  return symmetricFunction(a, d, (x) => Math.sqrt(Math.max(0, x)));
}

function matmul(a: ArrayLike<number>, b: ArrayLike<number>, d: number): Float64Array {
  const out = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let k = 0; k < d; k++) {
      const aik = a[i * d + k]!;
      if (aik === 0) continue;
      for (let j = 0; j < d; j++) out[i * d + j]! += aik * b[k * d + j]!;
    }
  }
  return out;
}

function dimensionOf(g: Gaussian, kind: CovarianceKind): number {
  const d = g.mean.length;
  if (g.covariance.length !== (kind === 'diagonal' ? d : d * d)) {
    throw new InvalidParameterError(`a ${kind} covariance for ${d} dimensions has ${kind === 'diagonal' ? d : d * d} values, got ${g.covariance.length}`);
  }
  return d;
}

/** A Gaussian a caller passed, read once: { mean, covariance } as flat arrays of numbers. */
function readGaussian(name: string, g: unknown): Gaussian {
  if (g === null || typeof g !== 'object') throw new InvalidParameterError(`${name} must be a Gaussian { mean, covariance }, got ${formatValue(g)}`);
  const o = readOptions(g as Gaussian, ['mean', 'covariance'], name);
  return { mean: requireVector(`${name}.mean`, o.mean), covariance: requireVector(`${name}.covariance`, o.covariance) };
}

/** Both Gaussians and the covariance kind checked (public entry points: the caller's values may be anything). */
function checked(a: unknown, b: unknown, kind: unknown): [Gaussian, Gaussian, CovarianceKind] {
  return [readGaussian('a', a), readGaussian('b', b), requireOneOf('kind', kind, ['full', 'diagonal'] as const)];
}

function sameDimension(a: Gaussian, b: Gaussian, kind: CovarianceKind): number {
  const d = dimensionOf(a, kind);
  if (dimensionOf(b, kind) !== d) throw new InvalidParameterError(`the two Gaussians have ${d} and ${b.mean.length} dimensions`);
  return d;
}

/** The 2-Wasserstein distance W2 (not squared) between two Gaussians, in closed form. */
export function wasserstein2(ga: Gaussian, gb: Gaussian, k: CovarianceKind): number {
  const [a, b, kind] = checked(ga, gb, k);
  const d = sameDimension(a, b, kind);
  let m = 0;
  for (let j = 0; j < d; j++) m += (a.mean[j]! - b.mean[j]!) ** 2;
  let c = 0;
  if (kind === 'diagonal') {
    for (let j = 0; j < d; j++) c += (Math.sqrt(a.covariance[j]!) - Math.sqrt(b.covariance[j]!)) ** 2;
  } else {
    const rb = sqrtm(b.covariance, d);
    const cross = sqrtm(matmul(matmul(rb, a.covariance, d), rb, d), d);
    for (let j = 0; j < d; j++) c += a.covariance[j * d + j]! + b.covariance[j * d + j]! - 2 * cross[j * d + j]!;
  }
  // rounding can leave the trace term a hair below zero for equal covariances
  return Math.sqrt(Math.max(0, m + c));
}

/** ln det of a positive definite matrix from its Cholesky factor (Infinity-safe: undefined factor gives NaN). */
function logDet(L: Float64Array | undefined, d: number): number {
  if (!L) return NaN;
  let s = 0;
  for (let i = 0; i < d; i++) s += Math.log(L[i * d + i]!);
  return 2 * s;
}

/** The Bhattacharyya distance between two Gaussians (NaN if a covariance is not positive definite). */
export function bhattacharyya(ga: Gaussian, gb: Gaussian, k: CovarianceKind): number {
  const [a, b, kind] = checked(ga, gb, k);
  const d = sameDimension(a, b, kind);
  if (kind === 'diagonal') {
    let quad = 0;
    let ld = 0;
    for (let j = 0; j < d; j++) {
      const va = a.covariance[j]!;
      const vb = b.covariance[j]!;
      const v = (va + vb) / 2;
      quad += (a.mean[j]! - b.mean[j]!) ** 2 / v;
      ld += Math.log(v) - 0.5 * (Math.log(va) + Math.log(vb));
    }
    return quad / 8 + ld / 2;
  }
  const S = new Float64Array(d * d);
  for (let i = 0; i < d * d; i++) S[i] = (a.covariance[i]! + b.covariance[i]!) / 2;
  const L = cholesky(S, d);
  if (!L) return NaN;
  // S^-1 dm by forward and back substitution
  const y = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    let s = a.mean[i]! - b.mean[i]!;
    for (let k = 0; k < i; k++) s -= L[i * d + k]! * y[k]!;
    y[i] = s / L[i * d + i]!;
  }
  let quad = 0;
  for (let i = 0; i < d; i++) quad += y[i]! * y[i]!;
  return quad / 8 + (logDet(L, d) - 0.5 * (logDet(cholesky(a.covariance, d), d) + logDet(cholesky(b.covariance, d), d))) / 2;
}
