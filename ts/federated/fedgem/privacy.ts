/**
 * Differential privacy for the centers a FedGEM client shares (the paper's
 * Appendix B.4, Theorem 9): Gaussian noise N(0, sigma^2 I) on every maximizer
 * it uploads, with sigma from the l2-sensitivity of the M-step.
 *
 * Sensitivity. With the responsibilities gamma fixed by the previous iterate,
 * M_k(D) = sum_i gamma_ik x_i / sum_i gamma_ik. Let D, D' differ in one row
 * (x vs x', both with ||x|| <= B, Assumption 7), G the responsibility mass of
 * the shared rows and M0 their weighted mean (inside the B-ball). Then
 * M_k(D) = M0 + gamma (x - M0) / (G + gamma), and since gamma <= 1 and
 * t / (G + t) grows with t, ||M_k(D) - M0|| <= 2B / (G + 1); the same holds for
 * D', so ||M_k(D) - M_k(D')|| <= 4B / (G + 1) <= 4B / (n rho), where rho is a
 * lower bound on every component's share N_k / n of the client's n rows.
 * Over the K_c components: Delta_2 = 4 B sqrt(K_c) / (n rho).
 *
 * Noise. The Gaussian mechanism (Dwork and Roth 2014, Theorem A.1) is
 * (epsilon, delta)-differentially private for epsilon in (0, 1) with
 *
 *   sigma = Delta_2 sqrt(2 ln(1.25 / delta)) / epsilon.
 *
 * Each round's upload is one release: T rounds plus the final upload compose
 * to ((T + 1) epsilon, (T + 1) delta) by basic composition. rho is the user's
 * bound (default half the smallest fixed weight), and a round whose actual
 * shares fall below it is counted in `FedGEMClient.privacyBoundMisses`. The
 * client clips its rows to norm B first, so that Assumption 7 holds.
 *
 * Not covered: the counts N_k and the radii travel without noise (the paper
 * leaves the radii's privacy open). The bound is for one M-step of the means
 * with the responsibilities fixed: with L > 1 local steps the last step's
 * responsibilities come from noiseless iterates of the same rows, and the
 * k-means++ starting means are rows of the data; neither is accounted for.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { readOptions, requirePositive } from '../../validate.js';

export interface PrivacyOptions {
  /** epsilon in (0, 1) per upload */
  epsilon: number;
  /** delta in (0, 1) per upload */
  delta: number;
  /** B: every row's Euclidean norm is at most this (scale the data first) */
  bound: number;
  /** rho: the least share N_k / n of any component (default: half the smallest weight) */
  minShare?: number;
}

export function checkPrivacy(given: PrivacyOptions): PrivacyOptions {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`privacy must be { epsilon, delta, bound }, got ${formatValue(given)}`);
  const p = readOptions(given, ['epsilon', 'delta', 'bound', 'minShare'], 'privacy') as PrivacyOptions;
  const open = (name: string, v: unknown) => {
    if (typeof v !== 'number' || !(v > 0 && v < 1)) throw new InvalidParameterError(`privacy.${name} must be in (0, 1), got ${formatValue(v)}`);
  };
  open('epsilon', p.epsilon);
  open('delta', p.delta);
  if (typeof p.bound !== 'number' || !(p.bound > 0) || !Number.isFinite(p.bound)) throw new InvalidParameterError(`privacy.bound must be a positive number, got ${formatValue(p.bound)}`);
  if (p.minShare !== undefined && (typeof p.minShare !== 'number' || !(p.minShare > 0 && p.minShare <= 1))) {
    throw new InvalidParameterError(`privacy.minShare must be in (0, 1], got ${formatValue(p.minShare)}`);
  }
  return p;
}

/** sigma of the Gaussian noise on a client's centers (see the module comment). */
export function centerNoiseStd(privacy: PrivacyOptions, nSamples: number, nComponents: number, minShare: number): number {
  const p = checkPrivacy(privacy);
  requirePositive('nSamples', nSamples);
  requirePositive('nComponents', nComponents);
  if (typeof minShare !== 'number' || !(minShare > 0 && minShare <= 1)) throw new InvalidParameterError(`minShare must be in (0, 1], got ${formatValue(minShare)}`);
  const sensitivity = (4 * p.bound * Math.sqrt(nComponents)) / (nSamples * minShare);
  return (sensitivity * Math.sqrt(2 * Math.log(1.25 / p.delta))) / p.epsilon;
}
