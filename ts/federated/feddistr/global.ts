/**
 * FedDistr's global model, in the round of the consolidation itself (no
 * further communication): two ways to it from the consolidated set.
 *
 *   BaseDistributionClassifier  the generative classifier the consolidated set
 *       already is. Task label c is the Gaussian mixture of its base
 *       distributions b (weights count_b / count_c), its prior count_c / total,
 *       so Bayes' rule gives, with w_b = count_b / total,
 *
 *           p(c | z) = sum_{b in c} w_b N(z; m_b, S_b) / sum_b w_b N(z; m_b, S_b)
 *
 *       (computed in logs). No training at all; the rows it classifies are
 *       encoded with the encoder the clients used, so it works in their latent
 *       space.
 *   sampleBaseDistributions  the paper's path: labelled synthetic rows drawn
 *       from the consolidated set (rows per base in proportion to its count,
 *       z = m + L e with L the covariance's Cholesky factor and e standard
 *       normal), to train an MLPClassifier on. Every client holding the
 *       consolidated set draws the same rows from the same seed and trains the
 *       same model; the server can as well.
 */
import { apportion } from '../../data/apportion.js';
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { formatValue, inContext, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { GaussianMixture } from '../../models/gaussian-mixture.js';
import { Rng } from '../../random.js';
import { LIMITS, readArray, readRecord, requireInteger, requirePositive, requireVector } from '../../validate.js';
import { encodeRows, readEncoder, type WireEncoder } from './encoder.js';
import { factorCovariance, gaussianLogDensity, type CovarianceKind, type FactoredCovariance } from '../../distributions/gaussian.js';
import { MAX_BASES, MAX_DIMENSION } from './messages.js';
import { classifierOptions, sampleOptions, type BaseDistributionClassifierOptions, type SampleBaseOptions } from './options.js';

export type { BaseDistributionClassifierOptions, SampleBaseOptions } from './options.js';

/** A base distribution with its task label and the rows behind it (a consolidated base, or an uploaded one). */
export interface LabelledGaussian {
  label: number;
  count: number;
  mean: ArrayLike<number>;
  /** d variances (diagonal) or d x d row-major (full) */
  covariance: ArrayLike<number>;
}

/** Most base distributions one global model takes: as many as clients may upload in all. */
const MAX_MODEL_BASES = MAX_BASES * 64;

interface ReadBase {
  label: number;
  count: number;
  mean: Float64Array;
  covariance: Float64Array;
  factored: FactoredCovariance;
}

/** The bases read once and checked: one dimension, one covariance form (`kindGiven`, checked, or read from the lengths), finite values, positive definite covariances. */
function readBases(given: unknown, kindGiven: CovarianceKind | undefined): { bases: ReadBase[]; d: number; kind: CovarianceKind } {
  const list = readArray('bases', given, MAX_MODEL_BASES);
  if (list.length === 0) throw new InvalidParameterError('bases is empty: a global model needs at least one base distribution');
  let d = 0;
  let kind = kindGiven;
  const bases = list.map((b, i): ReadBase => {
    if (b === null || typeof b !== 'object') throw new InvalidParameterError(`bases[${i}] must be { label, count, mean, covariance }, got ${formatValue(b)}`);
    const o = readRecord(b as LabelledGaussian, ['label', 'count', 'mean', 'covariance'], `bases[${i}]`);
    const label = requireInteger(`bases[${i}].label`, o.label, -(2 ** 31 - 1), 2 ** 31 - 1);
    const count = requirePositive(`bases[${i}].count`, o.count);
    const mean = Float64Array.from(requireVector(`bases[${i}].mean`, o.mean));
    const covariance = Float64Array.from(requireVector(`bases[${i}].covariance`, o.covariance));
    for (const v of mean) if (!Number.isFinite(v)) throw new InvalidParameterError(`bases[${i}].mean holds ${v}; every value must be finite`);
    for (const v of covariance) if (!Number.isFinite(v)) throw new InvalidParameterError(`bases[${i}].covariance holds ${v}; every value must be finite`);
    if (i === 0) {
      d = mean.length;
      if (d < 1 || d > MAX_DIMENSION) throw new InvalidParameterError(`bases[0].mean has ${d} values; a latent dimension is 1 to ${MAX_DIMENSION}`);
      kind ??= covariance.length === d ? 'diagonal' : 'full';
    } else if (mean.length !== d) {
      throw new InvalidParameterError(`bases[${i}].mean has ${mean.length} values; bases[0]'s has ${d}`);
    }
    const size = kind === 'diagonal' ? d : d * d;
    if (covariance.length !== size) throw new InvalidParameterError(`bases[${i}].covariance has ${covariance.length} values; a ${kind} covariance in ${d} dimensions has ${size}`);
    if (kind === 'diagonal') {
      for (let j = 0; j < d; j++) if (!(covariance[j]! > 0)) throw new InvalidParameterError(`bases[${i}].covariance[${j}] is ${covariance[j]}; variances must be > 0`);
    } else {
      for (let a = 0; a < d; a++) {
        for (let c = 0; c < a; c++) {
          const x = covariance[a * d + c]!;
          const y = covariance[c * d + a]!;
          if (!(Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y)))) throw new InvalidParameterError(`bases[${i}].covariance is not symmetric (entries (${a}, ${c}) and (${c}, ${a}) differ)`);
        }
      }
    }
    const factored = factorCovariance(covariance, d, kind!);
    if (!factored) throw new InvalidParameterError(`bases[${i}].covariance is not positive definite`);
    return { label, count, mean, covariance, factored };
  });
  requireComputableMixture(bases, d, kind!);
  return { bases, d, kind: kind! };
}

/**
 * The bases as one mixture, through the check every Gaussian mixture from
 * outside passes (Gmm::from_parts in the core: covariances f64 can resolve at
 * the means' magnitude, finite precisions): a base far beyond the others'
 * scale (a mean of 1e300) would make every density underflow and the
 * posteriors NaN.
 */
function requireComputableMixture(bases: ReadBase[], d: number, kind: CovarianceKind): void {
  const total = bases.reduce((s, b) => s + b.count, 0);
  const means = new Float64Array(bases.length * d);
  const covariances = new Float64Array(bases.length * bases[0]!.covariance.length);
  bases.forEach((b, i) => {
    means.set(b.mean, i * d);
    covariances.set(b.covariance, i * b.covariance.length);
  });
  try {
    const weights = Float64Array.from(bases, (b) => b.count / total);
    GaussianMixture.fromParameters({ covarianceType: kind === 'diagonal' ? 'diag' : 'full', weights, means, covariances, nFeatures: d }).dispose();
  } catch (e) {
    throw inContext(e, 'bases (component i is bases[i])');
  }
}

/**
 * The consolidated set as a classifier: Bayes' rule over class-conditional
 * Gaussian mixtures, priors from the counts.
 *
 * ```ts
 * const r = fedDistr(clients, { encoder: pca, covariance: 'full' });
 * const model = new BaseDistributionClassifier(r.bases, { encoder: pca });
 * model.predict(testRows);     // task labels
 * model.score(testRows, testLabels);
 * ```
 */
export class BaseDistributionClassifier {
  /** the task labels, ascending (predictProba's columns) */
  readonly classes: number[];
  /** the latent dimension */
  readonly dimension: number;
  readonly covariance: CovarianceKind;
  /** each class's prior: its share of the rows behind the bases */
  readonly priors: Float64Array;
  private readonly bases: ReadBase[];
  /** per base: its class's position in `classes`, and ln w_b */
  private readonly classOf: Int32Array;
  private readonly logWeight: Float64Array;
  private readonly encoder: WireEncoder;

  constructor(bases: readonly LabelledGaussian[], options: BaseDistributionClassifierOptions = {}) {
    const o = classifierOptions.check(options);
    const read = readBases(bases, o.covariance);
    this.bases = read.bases;
    this.dimension = read.d;
    this.covariance = read.kind;
    const encoder = readEncoder(o.encoder, o.encoder === 'identity' ? read.d : undefined);
    if (encoder.dimension !== read.d) throw new InvalidParameterError(`the encoder's code is ${encoder.dimension} wide; the bases are in ${read.d} dimensions`);
    this.encoder = encoder;
    this.classes = [...new Set(read.bases.map((b) => b.label))].sort((a, b) => a - b);
    const index = new Map(this.classes.map((c, k) => [c, k]));
    const total = read.bases.reduce((s, b) => s + b.count, 0);
    this.classOf = Int32Array.from(read.bases, (b) => index.get(b.label)!);
    this.logWeight = Float64Array.from(read.bases, (b) => Math.log(b.count / total));
    this.priors = new Float64Array(this.classes.length);
    read.bases.forEach((b, i) => (this.priors[this.classOf[i]!]! += b.count / total));
  }

  /** The rows encoded into the latent space (n x d, row-major), checked finite. */
  private encode(X: MatrixLike): { Z: Float64Array; n: number } {
    const x = Matrix.from(X);
    for (const v of x.data) if (!Number.isFinite(v)) throw new InvalidDataError(`X holds a value that is not finite (${v})`);
    return { Z: encodeRows(x, this.encoder, 'the given', InvalidDataError), n: x.nRows };
  }

  /** ln p(c, z) for every row and class: n x classes, row-major. */
  private logJoint(Z: Float64Array, n: number): Float64Array {
    const K = this.classes.length;
    const B = this.bases.length;
    const d = this.dimension;
    const out = new Float64Array(n * K).fill(-Infinity);
    const y = new Float64Array(d);
    const terms = new Float64Array(B);
    for (let i = 0; i < n; i++) {
      for (let b = 0; b < B; b++) terms[b] = this.logWeight[b]! + gaussianLogDensity(this.bases[b]!.factored, this.bases[b]!.mean, Z, i * d, d, this.covariance, y);
      // per class, a log-sum-exp over its bases
      for (let k = 0; k < K; k++) {
        let most = -Infinity;
        for (let b = 0; b < B; b++) if (this.classOf[b] === k && terms[b]! > most) most = terms[b]!;
        if (most === -Infinity) continue;
        let s = 0;
        for (let b = 0; b < B; b++) if (this.classOf[b] === k) s += Math.exp(terms[b]! - most);
        out[i * K + k] = most + Math.log(s);
      }
    }
    return out;
  }

  /** Each row's posterior over the classes (n x classes, columns in the order of `classes`). */
  predictProba(X: MatrixLike): Matrix {
    const { Z, n } = this.encode(X);
    const K = this.classes.length;
    const lj = this.logJoint(Z, n);
    const P = Matrix.zeros(n, K);
    for (let i = 0; i < n; i++) {
      let most = -Infinity;
      for (let k = 0; k < K; k++) most = Math.max(most, lj[i * K + k]!);
      // a row far from every base underflows all densities: the largest log joint still orders them
      let s = 0;
      for (let k = 0; k < K; k++) s += Math.exp(lj[i * K + k]! - most);
      for (let k = 0; k < K; k++) P.data[k * n + i] = Math.exp(lj[i * K + k]! - most) / s;
    }
    return P;
  }

  /** The most probable task label of every row (the first of equals). */
  predict(X: MatrixLike): number[] {
    const { Z, n } = this.encode(X);
    const K = this.classes.length;
    const lj = this.logJoint(Z, n);
    const out: number[] = new Array(n);
    for (let i = 0; i < n; i++) {
      let best = 0;
      for (let k = 1; k < K; k++) if (lj[i * K + k]! > lj[i * K + best]!) best = k;
      out[i] = this.classes[best]!;
    }
    return out;
  }

  /** The share of rows whose predicted task label is theirs. */
  score(X: MatrixLike, y: ArrayLike<number>): number {
    const pred = this.predict(X);
    const labels = readArray('y', y, LIMITS.partitionRows, InvalidDataError);
    if (labels.length !== pred.length) throw new InvalidDataError(`y has ${labels.length} labels for ${pred.length} rows of X`);
    let right = 0;
    for (let i = 0; i < pred.length; i++) if (labels[i] === pred[i]) right++;
    return pred.length === 0 ? NaN : right / pred.length;
  }
}

export interface SampledRows {
  /** n x d latent rows, base after base */
  X: Matrix;
  /** each row's task label */
  labels: Int32Array;
  /** rows drawn from each base, in the order given */
  counts: number[];
}

/**
 * Labelled synthetic rows from base distributions (the consolidated set):
 * the paper's route to a global model, trained on them.
 *
 * ```ts
 * const { X, labels } = sampleBaseDistributions(client.consolidated.bases, { n: 20000, seed: 1 });
 * const mlp = new MLPClassifier({ hiddenLayerSizes: [64], randomState: 1 }).fit(X, labels);
 * ```
 */
export function sampleBaseDistributions(bases: readonly LabelledGaussian[], options: SampleBaseOptions): SampledRows {
  // options required: n has no default
  const o = sampleOptions.check(options ?? null);
  const { bases: read, d, kind } = readBases(bases, o.covariance);
  // the rows' values within LIMITS.values, now that d is known
  const n = requireInteger('n', o.n, 1, Math.floor(LIMITS.values / d));
  const seed = o.seed;
  const counts = apportion(n, read.map((b) => b.count));
  const X = Matrix.zeros(n, d);
  const labels = new Int32Array(n);
  const rng = new Rng(seed);
  try {
    let row = 0;
    read.forEach((b, k) => {
      const m = counts[k]!;
      if (m === 0) return;
      const e = rng.normal(m * d);
      for (let r = 0; r < m; r++, row++) {
        labels[row] = b.label;
        for (let i = 0; i < d; i++) {
          let v = b.mean[i]!;
          if (kind === 'diagonal') v += b.factored.factor[i]! * e[r * d + i]!;
          else for (let j = 0; j <= i; j++) v += b.factored.factor[i * d + j]! * e[r * d + j]!;
          X.data[i * n + row] = v;
        }
      }
    });
  } finally {
    rng.dispose();
  }
  return { X, labels, counts };
}
