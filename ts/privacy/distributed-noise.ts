/**
 * Calibration of distributed DP under secure aggregation: each client's
 * Skellam share (ts/privacy/skellam.ts) so that the released sum holds at
 * least the noise of a central Gaussian mechanism of noise multiplier z.
 *
 * A client's contribution has L2 norm at most `clip` (real units); quantized
 * at `scale` by rounding to nearest (deterministic rounding, as the fixed
 * point of secure aggregation does), its integer vector has L2 norm at most
 *
 *     l2 = clip * scale + sqrt(d) / 2        (triangle inequality: |round(x) - x|_2 <= sqrt(d)/2)
 *
 * and L1 norm at most l1 = min(l2^2, sqrt(d) l2) (|v| <= v^2 for integers; Cauchy-Schwarz).
 * Adding or removing one client moves the sum by such a vector. The released
 * sum holds Sk(M) per coordinate with M the sum of the shares' mus, of
 * variance 2M; the target is the central Gaussian's variance at the rounded
 * sensitivity, (z l2)^2, so
 *
 *     M = (z l2)^2 / 2,   each client's mu = M / t,
 *
 * with t the fewest clients whose shares the released sum can hold (the
 * secure-aggregation threshold: a sum released with fewer survivors is never
 * released). More survivors only add noise. The accountant step is the
 * Skellam mechanism with mu M and sensitivities (l1, l2), whose RDP is the
 * Gaussian's alpha / (2 z^2) plus a discreteness term of order 1/M.
 *
 * The scale: the largest power of two at which (a) a share's mu stays within
 * what the sampler draws exactly (2^48) and (b) no sum of `clients`
 * contributions plus the noise of all their shares can wrap Z_2^64: clients *
 * (ceil(clip * scale) + 1) plus a tail bound of the noise stays below 2^63, the
 * tail a Chernoff bound of Sk(clients * mu) that every one of the d
 * coordinates stays inside, but with probability 2^-64.
 */
import { formatValue, InvalidParameterError } from '../errors.js';
import { readOptions } from '../validate.js';
import type { SkellamSteps } from './accountant.js';
import { MAX_SKELLAM_MU } from './skellam.js';

/** What distributed noise is calibrated from. */
export interface DistributedNoiseOptions {
  /** L2 bound of one client's contribution, in real units */
  clip: number;
  /** z: the released sum's noise is at least that of a central Gaussian of standard deviation z x clip (at the rounded sensitivity) */
  noiseMultiplier: number;
  /** d: values in the vector */
  length: number;
  /** the most clients whose contributions and shares a sum can hold (overflow headroom) */
  clients: number;
  /** the fewest clients whose shares a released sum holds: the secure-aggregation threshold (default: clients) */
  threshold?: number;
  /** the fixed-point scale (quantized = value x scale); default: chosen (see above) */
  scale?: number;
}

/** A fixed point as secure aggregation takes it: values in [-clip, clip], `contributors` of them summed, quantized at `scale`. */
export interface NoisedFixedPoint {
  clip: number;
  contributors: number;
  scale: number;
}

/** Each client's Skellam share and what it guarantees. */
export interface DistributedNoise {
  /** each client's share: Sk(skellamMu) per word */
  skellamMu: number;
  /** threshold x skellamMu: the least total mu a released sum holds */
  totalMu: number;
  /** the quantization: pass as secure aggregation's fixedPoint */
  fixedPoint: NoisedFixedPoint;
  /** L2 sensitivity of the quantized sum (quantized units): clip x scale + sqrt(d)/2 */
  l2: number;
  /** L1 sensitivity of the quantized sum (quantized units) */
  l1: number;
  /** the least standard deviation of a released (dequantized) coordinate's noise, real units: sqrt(2 totalMu) / scale */
  stddev: number;
  /** how client values are rounded: to nearest */
  rounding: 'deterministic';
  /** the accountant's step for one release (RdpAccountant.step) */
  step: SkellamSteps;
}

const TWO_63 = 2 ** 63;
/** ln of the chance, per release, that the noise of some coordinate passes its headroom: 2^-64. */
const LN_WRAP = 64 * Math.LN2;

/**
 * t with P(|Sk(m)| >= t) <= 2 exp(-g(t)) and 2 d exp(-g(t)) <= 2^-64: the Chernoff bound
 * g(t) = t asinh(t / 2m) - (sqrt(4m^2 + t^2) - 2m) of the Skellam's moment generating function.
 */
export function skellamTail(m: number, d: number): number {
  if (m === 0) return 0;
  const target = LN_WRAP + Math.log(2 * d);
  const g = (t: number) => t * Math.asinh(t / (2 * m)) - (t * t) / (Math.sqrt(4 * m * m + t * t) + 2 * m);
  let hi = Math.sqrt(4 * m * target) + target;
  while (g(hi) < target) hi *= 2;
  let lo = 0;
  for (let i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (g(mid) >= target) hi = mid;
    else lo = mid;
  }
  return hi;
}

function positive(name: string, x: unknown): number {
  if (!(typeof x === 'number' && Number.isFinite(x) && x > 0)) throw new InvalidParameterError(`${name} must be a finite number > 0, got ${formatValue(x)}`);
  return x;
}

function count(name: string, x: unknown): number {
  if (!(typeof x === 'number' && Number.isSafeInteger(x) && x >= 1)) throw new InvalidParameterError(`${name} must be an integer >= 1, got ${formatValue(x)}`);
  return x;
}

/**
 * Why shares of `skellamMu` from `fixedPoint.contributors` clients could wrap a
 * sum of `length` values at this fixed point, or undefined when they cannot
 * (but with probability 2^-64): contributors * (ceil(clip * scale) + 1) plus
 * the noise's tail bound below 2^63, and the share within the sampler's range.
 * Secure aggregation checks a noised round's fixed point with it.
 */
export function noiseProblem(fixedPoint: NoisedFixedPoint, skellamMu: number, length: number): string | undefined {
  const { clip, contributors, scale } = fixedPoint;
  if (!(skellamMu >= 0 && skellamMu <= MAX_SKELLAM_MU)) return `each share's mu would be ${skellamMu.toPrecision(4)}, above 2^48`;
  const room = contributors * (Math.ceil(clip * scale) + 1) + skellamTail(contributors * skellamMu, Math.max(length, 1));
  if (!(room < TWO_63)) return `${contributors} contributions and their noise could reach ${room.toPrecision(4)}, past 2^63`;
  return undefined;
}

/**
 * The sensitivities of a sum of `length` values quantized at `scale` to one
 * contribution of L2 norm at most `clip` (quantized units, see the module's
 * note): what a Skellam step of the accountant must name. A client asked to
 * add noise checks the step the server declares against them.
 */
export function quantizedSensitivity(clip: number, scale: number, length: number): { l1: number; l2: number } {
  const l2 = clip * scale + Math.sqrt(length) / 2;
  return { l2, l1: Math.min(l2 * l2, Math.sqrt(length) * l2) };
}

/** One scale's shares, or why it does not fit. */
function atScale(clip: number, z: number, d: number, clients: number, threshold: number, scale: number): DistributedNoise | string {
  const { l1, l2 } = quantizedSensitivity(clip, scale, d);
  const target = (z * l2) ** 2 / 2;
  let skellamMu = target / threshold;
  // threshold x mu must not round below the target
  while (skellamMu * threshold < target) skellamMu = skellamMu * (1 + Number.EPSILON);
  const problem = noiseProblem({ clip, contributors: clients, scale }, skellamMu, d);
  if (problem) return problem;
  const totalMu = skellamMu * threshold;
  return {
    skellamMu,
    totalMu,
    fixedPoint: { clip, contributors: clients, scale },
    l2,
    l1,
    stddev: Math.sqrt(2 * totalMu) / scale,
    rounding: 'deterministic',
    step: { mechanism: 'skellam', mu: totalMu, l1, l2 },
  };
}

/**
 * Each client's Skellam share for a target noise multiplier, and the fixed
 * point to quantize at (see the module's note for the calibration).
 *
 * ```ts
 * const noise = distributedNoise({ clip: 1, noiseMultiplier: 1.1, length: 1000, clients: 100, threshold: 60 });
 * // noise.skellamMu: each client's share; noise.fixedPoint: secure aggregation's; noise.step: the accountant's
 * ```
 */
export function distributedNoise(options: DistributedNoiseOptions): DistributedNoise {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be { clip, noiseMultiplier, length, clients, threshold?, scale? }, got ${formatValue(options)}`);
  const o = readOptions(options, ['clip', 'noiseMultiplier', 'length', 'clients', 'threshold', 'scale'], 'options');
  const clip = positive('clip', o.clip);
  const z = positive('noiseMultiplier', o.noiseMultiplier);
  const d = count('length', o.length);
  const clients = count('clients', o.clients);
  const threshold = o.threshold === undefined ? clients : count('threshold', o.threshold);
  if (threshold > clients) throw new InvalidParameterError(`threshold ${threshold} is above clients ${clients}`);
  if (o.scale !== undefined) {
    const scale = positive('scale', o.scale);
    const r = atScale(clip, z, d, clients, threshold, scale);
    if (typeof r === 'string') throw new InvalidParameterError(`scale ${scale} does not fit distributed noise: ${r}; pass a smaller scale or leave it out`);
    return r;
  }
  let why = '';
  for (let e = 62; e >= 0; e--) {
    const r = atScale(clip, z, d, clients, threshold, 2 ** e);
    if (typeof r !== 'string') return r;
    why = r;
  }
  throw new InvalidParameterError(`no fixed-point scale >= 1 fits distributed noise for clip ${clip}, noise multiplier ${z}, ${d} values and ${clients} clients: at scale 1, ${why}`);
}
