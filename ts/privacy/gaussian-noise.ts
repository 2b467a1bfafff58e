/**
 * The Gaussian mechanism on a Gaussian's moments, one home for every role
 * that releases a mean and a covariance with privacy noise (FedDistr's base
 * distributions, the communities' GMM detectors).
 *
 * A mean and a second moment (1/n) sum z z' of rows clipped to L2 norm C,
 * under replace-one neighbouring with n public, move by at most 2C/n and
 * 2C^2/n (Frobenius; |z z'|_F = |z|^2 <= C^2). Each is released with
 *
 *     sigma = sensitivity * sqrt(2 ln(1.25 / delta)) / epsilon,  epsilon <= 1
 *
 * (Dwork & Roth 2014, Theorem A.1), the second moment's upper triangle drawn
 * once and mirrored. The covariance is the noisy second moment minus the noisy
 * mean's outer product (post-processing), its eigenvalues floored so that it
 * stays positive definite, plus regCovar on the diagonal.
 */
import { Matrix } from '../data/matrix.js';
import { InvalidParameterError } from '../errors.js';
import type { Rng } from '../random.js';
import { readArray, readOptions, readRecord, requireInteger, requirePositive } from '../validate.js';
import { symmetricFloor } from '../distributions/gaussian.js';
import { epsilonFromRdp, rdpSampledGaussian } from './accountant.js';

/** The caller's settings of one release: rows clipped to L2 norm `clip`, (epsilon, delta) for the whole release. */
export interface GaussianNoiseSettings {
  clip: number;
  epsilon: number;
  delta: number;
}

/**
 * `{ clip, epsilon, delta }` read strictly and checked, named `name` in
 * messages (FedDistr's privacy, a GMM detector's noise): epsilon in (0, 1],
 * where the calibration holds, and delta in (0, 1).
 */
export function readGaussianNoise(given: GaussianNoiseSettings, name: string): GaussianNoiseSettings {
  const p = readOptions(given, ['clip', 'epsilon', 'delta'], name);
  const clip = requirePositive(`${name}.clip`, p.clip);
  const epsilon = requirePositive(`${name}.epsilon`, p.epsilon);
  const delta = requirePositive(`${name}.delta`, p.delta);
  if (!(epsilon <= 1)) throw new InvalidParameterError(`${name}.epsilon is ${epsilon}; the Gaussian mechanism's calibration used holds for epsilon <= 1`);
  if (!(delta < 1)) throw new InvalidParameterError(`${name}.delta is ${delta}; it must be below 1`);
  return { clip, epsilon, delta };
}

/** The Gaussian mechanism's noise scale for an L2 sensitivity at (epsilon, delta). */
export function gaussianSigma(sensitivity: number, epsilon: number, delta: number): number {
  return (sensitivity * Math.sqrt(2 * Math.log(1.25 / delta))) / epsilon;
}

/** Releases calibrated alike by gaussianSigma: `count` of them, each at (epsilon, delta). */
export interface CalibratedReleases {
  epsilon: number;
  delta: number;
  count: number;
}

/**
 * The privacy of a set of releases, each a Gaussian mechanism calibrated by
 * gaussianSigma at its own (epsilon_i, delta_i), as they are reported:
 *
 *   basicEpsilon   the epsilons added (basic composition at the deltas
 *                  added): what the calibration was split to give
 *   epsilon        the same releases composed by RDP (each a Gaussian
 *                  mechanism of noise multiplier sigma / sensitivity =
 *                  sqrt(2 ln(1.25 / delta_i)) / epsilon_i, no sampling),
 *                  converted at `delta` (the deltas added) as the accountant
 *                  does, with the order that gives it
 *
 * RDP composition is tighter whenever there is more than one release (and
 * never looser than the calibration by more than the conversion's slack).
 */
export interface ReleasesPrivacy {
  epsilon: number;
  delta: number;
  order: number | undefined;
  basicEpsilon: number;
  releases: number;
}

export function composeReleases(releases: readonly CalibratedReleases[]): ReleasesPrivacy {
  let basic = 0;
  let delta = 0;
  let count = 0;
  let total: Float64Array | undefined;
  // read once, each field checked (gaussianSigma checks epsilon and delta)
  const read = readArray('releases', releases).map((given, i) => {
    const r = readRecord(given as CalibratedReleases, ['epsilon', 'delta', 'count'], `releases[${i}]`);
    return { epsilon: r.epsilon as number, delta: r.delta as number, count: requireInteger(`releases[${i}].count`, r.count, 0) };
  });
  for (const r of read) {
    basic += r.count * r.epsilon;
    delta += r.count * r.delta;
    count += r.count;
    const once = rdpSampledGaussian({ noiseMultiplier: gaussianSigma(1, r.epsilon, r.delta), samplingRate: 1 });
    total ??= new Float64Array(once.length);
    for (let i = 0; i < once.length; i++) total[i] += r.count * once[i]!;
  }
  if (!total || !(delta < 1)) throw new InvalidParameterError('composeReleases needs at least one release, and deltas that add up to less than 1');
  const spent = epsilonFromRdp(total, delta);
  return { epsilon: spent.epsilon, delta, order: spent.order, basicEpsilon: basic, releases: count };
}

/** The noise of one release: standard deviations of the mean's and the second moment's noise, and its generator. */
export interface MomentNoise {
  mean: number;
  second: number;
  rng: Rng;
}

/**
 * A Gaussian from its mean and second moment (full d x d, or the diagonal),
 * with the noise when given (mean and second are noised in place): the mean
 * and the covariance second - mean mean' (+ regCovar on the diagonal; with
 * noise its eigenvalues floored at max(regCovar, 1e-12) first).
 */
export function releaseGaussian(mean: Float64Array, second: Float64Array, d: number, kind: 'full' | 'diagonal', noise: MomentNoise | undefined, regCovar: number): { mean: Float64Array; covariance: Float64Array } {
  if (noise) {
    const e1 = noise.rng.normal(d);
    for (let j = 0; j < d; j++) mean[j]! += noise.mean * e1[j]!;
    if (kind === 'full') {
      const e2 = noise.rng.normal((d * (d + 1)) / 2);
      let t = 0;
      for (let a = 0; a < d; a++) {
        for (let b = a; b < d; b++) {
          second[a * d + b]! += noise.second * e2[t++]!;
          second[b * d + a] = second[a * d + b]!;
        }
      }
    } else {
      const e2 = noise.rng.normal(d);
      for (let a = 0; a < d; a++) second[a]! += noise.second * e2[a]!;
    }
  }
  const floor = Math.max(regCovar, 1e-12);
  const covariance = new Float64Array(kind === 'full' ? d * d : d);
  if (kind === 'full') {
    for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) covariance[a * d + b] = second[a * d + b]! - mean[a]! * mean[b]!;
    if (noise) covariance.set(symmetricFloor(covariance, d, floor));
    for (let a = 0; a < d; a++) covariance[a * d + a]! += regCovar;
    // exact symmetry (receivers check it)
    for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) covariance[a * d + b] = covariance[b * d + a]!;
  } else {
    for (let a = 0; a < d; a++) covariance[a] = Math.max(second[a]! - mean[a]! * mean[a]!, noise ? floor : 0) + regCovar;
  }
  return { mean, covariance };
}

/** Rows scaled down to L2 norm at most `bound` (a copy): the sensitivities above assume ||x|| <= C. */
export function clipRows(x: Matrix, bound: number): Matrix {
  const { nRows: n, nCols: d } = x;
  const out = x.data.slice();
  for (let i = 0; i < n; i++) {
    // the norm over the largest magnitude, so that huge rows do not overflow it
    let top = 0;
    for (let j = 0; j < d; j++) top = Math.max(top, Math.abs(out[j * n + i]!));
    if (!(top > 0) || !Number.isFinite(top)) continue; // zero rows stay; NaN/Inf fail in the core's check
    let sq = 0;
    for (let j = 0; j < d; j++) sq += (out[j * n + i]! / top) ** 2;
    const root = Math.sqrt(sq);
    if (top * root > bound) for (let j = 0; j < d; j++) out[j * n + i] = (out[j * n + i]! / top / root) * bound;
  }
  return new Matrix(out, n, d);
}
