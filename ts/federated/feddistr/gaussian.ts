/**
 * Costs between two Gaussians, and the small dense linear algebra the client
 * and server roles need (d is an encoder's latent dimension: tens), all
 * computed by the Rust core: the Cholesky factor, the eigen-decomposition and
 * the matrix square root are crates/fedmix-core/src/linalg.rs's.
 *
 * A covariance is either diagonal (d variances) or full (d x d, row-major).
 *
 *   2-Wasserstein  W2^2 = |m1 - m2|^2 + tr(S1 + S2 - 2 (S2^1/2 S1 S2^1/2)^1/2)
 *                  (Dowson & Landau 1982); diagonal: sum (sqrt a - sqrt b)^2
 *                  elementwise. The cost is W2 itself (the data's units).
 *   Bhattacharyya  DB = 1/8 dm' S^-1 dm + 1/2 ln(det S / sqrt(det S1 det S2)),
 *                  S = (S1 + S2) / 2.
 *
 * Both are computed by the Rust core (crates/fedmix-core/src/gaussian_costs.rs),
 * batched: withGaussianCosts copies a set of Gaussians into WASM memory once
 * and returns the cost matrix between any two ranges of it (the server's
 * client pairs); wasserstein2 and bhattacharyya are its one-pair form.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { readRecord, requireOneOf, requireVector } from '../../validate.js';
import { GAUSSIAN_COSTS_OPTIONS } from '../../wasm/abi.generated.js';
import { coreConstant } from '../../wasm/constants.js';
import { requireWasmMemory, withScope, type Scope } from '../../wasm/memory.js';

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
  const o = readRecord(g as Gaussian, ['mean', 'covariance'], name);
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

export type GaussianCost = 'wasserstein' | 'bhattacharyya';

/** Cost matrices between ranges of a set of Gaussians resident in WASM memory. */
export interface GaussianCostBlocks {
  /**
   * The na x nb row-major costs between Gaussians a0..a0+na-1 and
   * b0..b0+nb-1 of the set: +Infinity where their labels differ, NaN where the
   * cost is undefined (Bhattacharyya with a covariance not positive definite).
   */
  block(a0: number, na: number, b0: number, nb: number): Float64Array;
}

/**
 * Runs `fn` with `gaussians` (all of dimension d, covariances of `kind`, as
 * the caller has checked) copied into WASM memory once; `labels`, one per
 * Gaussian, make pairs of different labels forbidden. A value that is not
 * finite is an InvalidDataError from the core.
 */
export function withGaussianCosts<T>(
  gaussians: readonly Gaussian[],
  labels: ArrayLike<number> | undefined,
  d: number,
  kind: CovarianceKind,
  cost: GaussianCost,
  fn: (costs: GaussianCostBlocks) => T,
): T {
  const n = gaussians.length;
  const size = kind === 'full' ? d * d : d;
  requireWasmMemory(`${n} Gaussians of ${d} dimensions`, 8 * n * (d + size) + 4 * n);
  const costCode = coreConstant('gaussian_cost', cost);
  const formCode = coreConstant('covariance_form', kind);
  return withScope((s) => {
    // every input buffer first: allocating can grow memory, which detaches views
    const means = s.f64(n * d);
    const covs = s.f64(n * size);
    const lab = labels ? s.u32(n) : 0;
    const mv = new Float64Array(s.w.memory.buffer, means, n * d);
    const cv = new Float64Array(s.w.memory.buffer, covs, n * size);
    gaussians.forEach((g, i) => {
      mv.set(g.mean, i * d);
      cv.set(g.covariance, i * size);
    });
    if (labels) new Int32Array(s.w.memory.buffer, lab, n).set(labels);
    let out = 0;
    let capacity = 0;
    const check = (at: number, count: number): void => {
      if (!(Number.isInteger(at) && Number.isInteger(count) && at >= 0 && count >= 0 && at + count <= n)) {
        throw new InvalidParameterError(`Gaussians ${at}..${at + count - 1} are not within the set of ${n}`);
      }
    };
    return fn({
      block(a0: number, na: number, b0: number, nb: number): Float64Array {
        check(a0, na);
        check(b0, nb);
        if (na * nb > capacity) {
          // grown geometrically; the scope frees the old buffers at its end
          capacity = Math.max(na * nb, 2 * capacity);
          requireWasmMemory(`a ${na} x ${nb} cost matrix`, 8 * capacity);
          out = s.f64(capacity);
        }
        const labelsAt = (k: number) => (labels ? lab + 4 * k : 0);
        const shape = s.struct(GAUSSIAN_COSTS_OPTIONS, { cost: costCode, form: formCode, d, na, nb });
        s.check(s.w.fm_gaussian_costs(shape, means + 8 * a0 * d, covs + 8 * a0 * size, labelsAt(a0), means + 8 * b0 * d, covs + 8 * b0 * size, labelsAt(b0), out));
        return s.readF64(out, na * nb);
      },
    });
  });
}

/** The cost between two Gaussians checked by the public entry points. */
function onePair(ga: unknown, gb: unknown, k: unknown, cost: GaussianCost): number {
  const [a, b, kind] = checked(ga, gb, k);
  const d = sameDimension(a, b, kind);
  return withGaussianCosts([a, b], undefined, d, kind, cost, (c) => c.block(0, 1, 1, 1)[0]!);
}

/** The 2-Wasserstein distance W2 (not squared) between two Gaussians, in closed form. */
export function wasserstein2(ga: Gaussian, gb: Gaussian, k: CovarianceKind): number {
  return onePair(ga, gb, k, 'wasserstein');
}

/** The Bhattacharyya distance between two Gaussians (NaN if a covariance is not positive definite). */
export function bhattacharyya(ga: Gaussian, gb: Gaussian, k: CovarianceKind): number {
  return onePair(ga, gb, k, 'bhattacharyya');
}
