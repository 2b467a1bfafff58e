/**
 * Costs between two Gaussians (FedDistr's matching of base distributions).
 * A covariance is either diagonal (d variances) or full (d x d, row-major);
 * the Gaussian itself and its linear algebra are ts/distributions/gaussian.ts's.
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
import { requireWasmMemory, withScope } from '../../wasm/memory.js';
import type { CovarianceKind, Gaussian } from '../../distributions/gaussian.js';

export type { CovarianceKind, Gaussian } from '../../distributions/gaussian.js';

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
