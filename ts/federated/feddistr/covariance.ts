/**
 * How a FedDistr client turns a base distribution's rows into the covariance
 * it uploads, and what that covariance costs in BIC.
 *
 * A base distribution may hold fewer rows than the latent space has
 * dimensions (8x8 digits: 64 features, subclasses of a hundred rows split by
 * BIC into parts of twenty). Its maximum-likelihood covariance is then
 * singular, and a feature that happens to be constant in it (a pixel never
 * inked in this digit) gets a variance of the ridge alone: one row that has
 * ink there is judged impossible by it. Shrinking toward a multiple of the
 * identity, (1 - rho) S + rho mu I with mu = tr S / d, keeps every variance
 * at a share of the base's average one. The intensity rho:
 *
 *   'oas'          Oracle Approximating Shrinkage (Chen, Wiesel, Eldar & Hero
 *                  2010, as scikit-learn's `oas`):
 *                  rho = min(1, (tr S^2 + (tr S)^2) / ((n + 1) (tr S^2 - (tr S)^2 / d))),
 *                  a function of S and n only: it is post-processing of a
 *                  released covariance, so it also applies under privacy noise;
 *   'ledoit-wolf'  Ledoit & Wolf (2004), as scikit-learn's `ledoit_wolf`:
 *                  rho = min(beta, delta) / delta, delta = |S - mu I|_F^2,
 *                  beta = (1/n^2) sum_i |x_i x_i' - S|_F^2 (centred rows): it
 *                  reads the rows' fourth moments, so not under privacy;
 *   'none'         rho = 0 (the maximum-likelihood covariance).
 *
 * A diagonal covariance keeps only the d variances, whose estimation noise
 * has nothing to do with the d^2 entries a full one has, so its intensity is
 * the same rule on the variances alone (shrunk toward their mean):
 * Ledoit-Wolf's with beta = (1/n^2) sum_i sum_j (x_ij^2 - s_jj)^2 and delta =
 * sum_j (s_jj - mu)^2, and OAS's Gaussian one, Var s_jj = 2 s_jj^2 / n
 * plugged in: rho = min(1, (2 / (n + 1)) sum_j s_jj^2 / delta).
 *
 * BIC counts what is fitted (effectiveParameters): a shrunk covariance has
 * 1 + (1 - rho)(D - 1) effective parameters, D = d(d + 1)/2 (full) or d
 * (diagonal). That is the trace of the linear map S -> (1 - rho) S + rho mu I
 * on the D free entries: the scale mu is fitted in full, the D - 1 directions
 * orthogonal to the identity are kept at a share 1 - rho.
 */
import { InvalidParameterError } from '../../errors.js';
import type { CovarianceKind } from '../../distributions/gaussian.js';

export type Shrinkage = 'oas' | 'ledoit-wolf' | 'none';
export const SHRINKAGES: readonly Shrinkage[] = ['oas', 'ledoit-wolf', 'none'];

/**
 * The shrinkage intensity rho in [0, 1] for the covariance S (d x d row-major,
 * or d variances) of n rows. Ledoit-Wolf needs the rows themselves (`rows`:
 * the n x d row-major values of which `members` are the base's, with `mean`).
 */
export function shrinkageIntensity(
  method: Shrinkage,
  S: Float64Array,
  d: number,
  kind: CovarianceKind,
  n: number,
  rows?: { values: Float64Array; members: readonly number[]; mean: Float64Array },
): number {
  if (method === 'none' || d === 1) return 0;
  let trace = 0;
  let squares = 0;
  if (kind === 'full') {
    for (let j = 0; j < d; j++) trace += S[j * d + j]!;
    for (let k = 0; k < d * d; k++) squares += S[k]! * S[k]!;
  } else {
    for (let j = 0; j < d; j++) {
      trace += S[j]!;
      squares += S[j]! * S[j]!;
    }
  }
  // |S - mu I|^2 in the entries kept: the dispersion shrinkage removes
  const mu = trace / d;
  const dispersion = squares - trace * mu;
  if (!(dispersion > 0)) return trace > 0 ? 1 : 0;
  if (method === 'oas') {
    const rho = kind === 'full' ? (squares + trace * trace) / ((n + 1) * dispersion) : (2 * squares) / ((n + 1) * dispersion);
    return Math.min(1, rho);
  }
  if (!rows) throw new InvalidParameterError("Ledoit-Wolf shrinkage reads the rows themselves: it cannot shrink a released covariance");
  // beta: the estimate's own variance, summed over the entries kept
  const { values, members, mean } = rows;
  const x = new Float64Array(d);
  let fourth = 0;
  for (const i of members) {
    let sq = 0;
    for (let j = 0; j < d; j++) {
      x[j] = values[i * d + j]! - mean[j]!;
      if (kind === 'full') sq += x[j]! * x[j]!;
      else fourth += (x[j]! * x[j]!) ** 2;
    }
    // full: |x x'|_F^2 = |x|^4
    if (kind === 'full') fourth += sq * sq;
  }
  // sum_i |x_i x_i' - S|^2 = sum_i |x_i x_i'|^2 - n |S|^2 (the entries kept)
  const beta = Math.max(0, fourth / n - squares) / n;
  return Math.min(beta, dispersion) / dispersion;
}

/** (1 - rho) S + rho (tr S / d) I, in place. */
export function shrinkInPlace(S: Float64Array, d: number, kind: CovarianceKind, rho: number): void {
  if (rho === 0) return;
  let trace = 0;
  for (let j = 0; j < d; j++) trace += kind === 'full' ? S[j * d + j]! : S[j]!;
  const mu = trace / d;
  for (let k = 0; k < S.length; k++) S[k]! *= 1 - rho;
  for (let j = 0; j < d; j++) {
    if (kind === 'full') S[j * d + j]! += rho * mu;
    else S[j]! += rho * mu;
  }
}

/** The parameters BIC counts for a Gaussian of dimension d whose covariance was shrunk at rho: mean, plus the covariance's effective ones. */
export function effectiveParameters(d: number, kind: CovarianceKind, rho: number): number {
  const D = kind === 'full' ? (d * (d + 1)) / 2 : d;
  return d + 1 + (1 - rho) * (D - 1);
}
