/**
 * How well learned mixture parameters recover known ones (the MDM paper's
 * Appendix C.1): the normalized error of equation 50 after aligning learned
 * components to true ones by Hungarian matching (mixtures are identifiable only
 * up to the order of their components).
 */
import type { ArrowVectorLike } from '../data/arrow.js';
import { linearSumAssignment } from '../assignment/linear-sum-assignment.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import { DirichletMultinomialMixture } from '../models/dirichlet-multinomial-mixture.js';
import { guardRead, requireVector } from '../validate.js';

/**
 * Equation 50: NMSE(x, y) = sqrt(sum_i ((x_i - y_i) / y_i)^2), y the truth (no
 * zeros): the L2 norm of the relative errors. Divided by sqrt(n) it is the
 * per-entry relative RMS error.
 */
export function normalizedError(estimated: ArrayLike<number> | ArrowVectorLike, truthValues: ArrayLike<number> | ArrowVectorLike): number {
  const estimate = requireVector('estimate', estimated);
  const truth = requireVector('truth', truthValues);
  if (estimate.length !== truth.length) throw new InvalidParameterError(`estimate has ${estimate.length} values but truth has ${truth.length}`);
  let s = 0;
  for (let i = 0; i < truth.length; i++) {
    const y = truth[i]!;
    if (!(y !== 0 && Number.isFinite(y))) throw new InvalidParameterError(`truth[${i}] is ${y}; the normalized error divides by the true values, which must be finite and non-zero`);
    const r = (estimate[i]! - y) / y;
    s += r * r;
  }
  return Math.sqrt(s);
}

export interface MdmRecovery {
  /** permutation[k]: the learned component matched to true component k */
  permutation: Int32Array;
  /** equation 50 on A (K x C entries) and on tau (K entries), aligned */
  alpha: number;
  tau: number;
  /** the same divided by sqrt(entries): per-entry relative RMS errors */
  alphaPerEntry: number;
  tauPerEntry: number;
}

/**
 * Aligns `learned` to `truth` (same K and C) by the assignment minimizing the
 * summed squared relative error of the alphas, then scores A and tau with
 * equation 50.
 */
export function mdmRecoveryError(learned: DirichletMultinomialMixture, truth: DirichletMultinomialMixture): MdmRecovery {
  for (const [name, m] of [['learned', learned], ['truth', truth]] as const) {
    if (!guardRead(name, () => m instanceof DirichletMultinomialMixture)) throw new InvalidParameterError(`${name} must be a DirichletMultinomialMixture, got ${formatValue(m)}`);
  }
  const k = truth.nComponents;
  const c = truth.nCategories;
  if (learned.nComponents !== k || learned.nCategories !== c) {
    throw new InvalidParameterError(`the learned model has K = ${learned.nComponents}, C = ${learned.nCategories}; the truth has K = ${k}, C = ${c}`);
  }
  const cost = Array.from({ length: k }, (_, t) =>
    Array.from({ length: k }, (_, l) => {
      let s = 0;
      for (let j = 0; j < c; j++) {
        const y = truth.alpha[t * c + j]!;
        const r = (learned.alpha[l * c + j]! - y) / y;
        s += r * r;
      }
      return s;
    }),
  );
  const { colInd } = linearSumAssignment(cost);
  const permutation = Int32Array.from(colInd);
  const alpha = new Float64Array(k * c);
  const tau = new Float64Array(k);
  for (let t = 0; t < k; t++) {
    const l = permutation[t]!;
    alpha.set(learned.alpha.subarray(l * c, (l + 1) * c), t * c);
    tau[t] = learned.tau[l]!;
  }
  const a = normalizedError(alpha, truth.alpha);
  const w = normalizedError(tau, truth.tau);
  return { permutation, alpha: a, tau: w, alphaPerEntry: a / Math.sqrt(k * c), tauPerEntry: w / Math.sqrt(k) };
}
