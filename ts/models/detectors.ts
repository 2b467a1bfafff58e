/**
 * Local anomaly detectors behind one small interface, as the community-based
 * federated anomaly detection of Nardi, Valerio and Passarella uses them:
 * each client fits one on its own rows, thresholds it at the contamination
 * quantile of its own training scores (as pyod does: threshold =
 * percentile(training scores, 100 (1 - contamination)), numpy's linear
 * interpolation), and sends it to other clients, who apply it to their rows.
 *
 * Scores: higher is more anomalous, for every kind.
 *   'ocsvm'        OneClassSVM (default nu 0.5, gamma 'auto', as the paper's
 *                  public pipeline); score = -decisionFunction, as pyod's.
 *                  Its JSON carries the support vectors, which are rows of
 *                  the client's training data: sharing it shares those rows.
 *   'gmm'          GaussianMixture; score = negative log-likelihood. Its JSON
 *                  carries only the mixture's weights, means and covariances.
 *   'autoencoder'  Autoencoder; score = reconstruction error (mean squared
 *                  error of the row). Its JSON carries the network's weights.
 *
 * A row is an outlier when its score is above the threshold.
 *
 * Privacy noise ('gmm' only, `noise: { clip, epsilon, delta }`): the rows are
 * clipped to L2 norm C for the fit, and the fitted mixture's parameters are
 * released by the Gaussian mechanism (privacy/gaussian-noise.ts): each
 * component's mean and second moment with the sensitivities of a Gaussian
 * fitted on n_k = w_k n rows (2C/n_k and 2C^2/n_k), the weights with sqrt(2)/n
 * (one row moves at most one unit of count between components), then floored
 * at 1e-6 and renormalized; the covariances come back positive definite
 * (eigenvalues floored). The budget: one component (the default), mean and
 * second moment (epsilon/2, delta/2) each, exactly as FedDistr's base
 * distributions; K > 1, the weights a third and each component's mean and
 * second moment a third divided by K, composing to (epsilon, delta). The
 * detector then is the noisy mixture: its threshold is set on its own scores
 * of the rows, and it is what travels. Not covered: the threshold (a score
 * quantile of the rows) and, for K > 1, EM's responsibilities (the bound holds
 * with them fixed, and the n_k that scale it come from the data), as FedGEM's
 * note says of its own.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError, notFitted } from '../errors.js';
import { clipRows, composeReleases, gaussianSigma, readGaussianNoise, releaseGaussian, type ReleasesPrivacy } from '../privacy/gaussian-noise.js';
import { Rng } from '../random.js';
import * as v from 'valibot';
import { flattenNumeric, guardRead, LIMITS, readOptions, readRecord, requireInteger, requireOneOf, type NumericArray } from '../validate.js';
import * as atoms from '../options/atoms.js';
import { defineOptions, parseOptions, type OptionEntries, type OptionsDeclaration } from '../options/check.js';
import { Autoencoder, autoencoderOptions, trustedAutoencoderOptions, type AutoencoderOptions, type ResolvedAutoencoderOptions } from './autoencoder.js';
import { COVARIANCE_TYPES, GaussianMixture, gaussianMixtureOptions, type CovarianceType, type GaussianMixtureOptions, type ResolvedGaussianMixtureOptions } from './gaussian-mixture.js';
import { ACTIVATIONS, type Activation } from './network.js';
import { OCSVM_KERNELS, OneClassSVM, oneClassSVMOptions, type OneClassSVMKernel, type OneClassSVMOptions, type ResolvedOneClassSVMOptions } from './one-class-svm.js';
import { keepClassName } from '../class-name.js';

export const DETECTOR_KINDS = ['ocsvm', 'gmm', 'autoencoder'] as const;
export type DetectorKind = (typeof DETECTOR_KINDS)[number];

export interface LocalDetectorOptions {
  /** 'ocsvm' (default), 'gmm' or 'autoencoder' */
  kind?: DetectorKind;
  /** the share of training rows expected to be outliers, in (0, 0.5) (default 0.1) */
  contamination?: number;
  /** options of the OneClassSVM (default nu 0.5, gamma 'auto') */
  ocsvm?: OneClassSVMOptions;
  /** options of the GaussianMixture (default 1 component, 'full' covariance, seed 0) */
  gmm?: GaussianMixtureOptions;
  /** options of the Autoencoder (its own defaults: 64-32-64, ReLU, sigmoid output, Adam, MSE; seed 0) */
  autoencoder?: AutoencoderOptions;
  /** 'gmm' with 'full' or 'diag' covariances only: Gaussian noise on the shared mixture (see the module's note) */
  noise?: DetectorNoise;
  /** seed of that noise, for tests only: whoever knows it can remove the noise (default: fresh from crypto.getRandomValues) */
  noiseSeed?: number;
}

export interface DetectorNoise {
  /** C: rows are scaled down to L2 norm at most C for the fit */
  clip: number;
  /** the budget of the whole release, in (0, 1] */
  epsilon: number;
  /** in (0, 1) */
  delta: number;
}

/**
 * What travels: the detector's kind, threshold, contamination, dimension and
 * the parts of exactly one model (the field named by `kind`).
 */
export interface LocalDetectorJSON {
  format: 'fedmix.LocalDetector';
  version: 1;
  kind: DetectorKind;
  contamination: number;
  threshold: number;
  nFeatures: number;
  ocsvm?: { kernel: OneClassSVMKernel; gamma: number; nu: number; supportVectors: ArrayLike<number>; dualCoef: ArrayLike<number>; offset: number };
  gmm?: { covarianceType: CovarianceType; weights: ArrayLike<number>; means: ArrayLike<number>; covariances: ArrayLike<number> };
  autoencoder?: { sizes: number[]; activation: Activation; outputActivation: Activation; parameters: ArrayLike<number> };
}

const JSON_KEYS = ['format', 'version', 'kind', 'contamination', 'threshold', 'nFeatures', 'ocsvm', 'gmm', 'autoencoder'] as const satisfies readonly (keyof LocalDetectorJSON)[];

type Model = OneClassSVM | GaussianMixture | Autoencoder;

/** Contamination in (0, 0.5): an InvalidParameterError otherwise. */
export function requireContamination(value: unknown): number {
  return parseOptions(CONTAMINATION, { contamination: value }).contamination;
}

const CONTAMINATION = v.object({ contamination: atoms.share() });

/**
 * A kind's model options, as an option of the detector: read under guard
 * (strict keys, named `name`), the detector's defaults for that kind under
 * them, checked by the model's declaration; resolved ones taken as they are.
 */
function modelOptions<E extends OptionEntries, R extends object>(name: string, declaration: OptionsDeclaration<E, R>, defaults: Record<string, unknown>) {
  return v.pipe(
    v.unknown(),
    v.transform((given): Readonly<R> => {
      if (declaration.isResolved(given)) return given;
      if (given !== undefined && (given === null || typeof given !== 'object')) throw new InvalidParameterError(`${name} must be an options object, got ${formatValue(given)}`);
      return declaration.check({ ...defaults, ...readOptions(given as Record<string, unknown> | undefined, declaration.keys, name) }, name);
    }),
  );
}

/** The Gaussian mechanism's parameters for a GMM detector, read under guard and checked. */
const noise = () => v.pipe(v.unknown(), v.transform((x) => readGaussianNoise(x as DetectorNoise, 'noise')));

/**
 * A LocalDetector's options, checked once: by its constructor, or by check()
 * at a public edge whose detectors are made later, in clients (a misspelt
 * option there is the caller's error, said at once, not a client that fails
 * to be made). Every kind's options are checked, the unused kinds' too: a
 * misspelt key is an error wherever it is. Resolved, each kind's options are
 * its model's resolved options, which its model takes as they are.
 */
export const localDetectorOptions = defineOptions<LocalDetectorOptions>()(
  {
    kind: atoms.optional(atoms.oneOf(DETECTOR_KINDS), 'ocsvm'),
    contamination: atoms.optional(atoms.share(), 0.1),
    ocsvm: modelOptions('ocsvm', oneClassSVMOptions, { nu: 0.5, gamma: 'auto' }),
    gmm: modelOptions('gmm', gaussianMixtureOptions, { nComponents: 1, covarianceType: 'full', seed: 0 }),
    autoencoder: modelOptions('autoencoder', autoencoderOptions, { seed: 0 }),
    noise: atoms.optional(noise()),
    noiseSeed: atoms.optional(atoms.seed()),
  },
  (o): ResolvedLocalDetectorOptions => {
    if (o.noise !== undefined) {
      if (o.kind !== 'gmm') throw new InvalidParameterError(`noise is for the 'gmm' detector, which shares only mixture parameters; a '${o.kind}' detector has none`);
      const type = o.gmm.covarianceType;
      if (type !== 'full' && type !== 'diag') throw new InvalidParameterError(`noise needs 'full' or 'diag' covariances, got gmm.covarianceType '${String(type)}'`);
    }
    return { ...o, ocsvm: o.ocsvm as ResolvedOneClassSVMOptions, gmm: o.gmm as ResolvedGaussianMixtureOptions, autoencoder: o.autoencoder as ResolvedAutoencoderOptions };
  },
);

/** A LocalDetector's options as checking resolves them: every kind's model options resolved. */
export type ResolvedLocalDetectorOptions = Readonly<{
  kind: DetectorKind;
  contamination: number;
  ocsvm: ResolvedOneClassSVMOptions;
  gmm: ResolvedGaussianMixtureOptions;
  autoencoder: ResolvedAutoencoderOptions;
  noise?: DetectorNoise;
  noiseSeed?: number;
}>;

/** Every option of LocalDetectorOptions, for readOptions. @internal */
export const DETECTOR_OPTION_KEYS = localDetectorOptions.keys;

/**
 * Detector options read strictly and checked whole (localDetectorOptions), for
 * callers whose detectors are made later, in clients: the resolved options,
 * which a LocalDetector takes as they are. @internal
 */
export function checkDetectorOptions(given: LocalDetectorOptions, name: string): LocalDetectorOptions {
  return localDetectorOptions.check(given, name);
}

/** numpy.percentile(values, pct) with linear interpolation. */
function percentile(values: Float64Array, pct: number): number {
  const s = Float64Array.from(values).sort();
  const pos = ((s.length - 1) * pct) / 100;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, s.length - 1);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export class LocalDetector {
  static {
    keepClassName(this, 'LocalDetector');
  }

  readonly kind: DetectorKind;
  readonly contamination: number;
  private readonly ocsvmOptions: ResolvedOneClassSVMOptions;
  private readonly gmmOptions: ResolvedGaussianMixtureOptions;
  private readonly aeOptions: ResolvedAutoencoderOptions;
  private readonly noise: DetectorNoise | undefined;
  private readonly noiseSeed: number | undefined;
  private model: Model | undefined;
  /** whether dispose() freed the model (and no fit or load since), so a call can say so */
  private disposed = false;
  private cut = NaN;
  private trainShare = NaN;

  /**
   * ```ts
   * const det = new LocalDetector({ kind: 'gmm', contamination: 0.1 }).fit(X);
   * det.inlierShare(Y);  // the share of Y's rows det calls inliers
   * ```
   */
  constructor(options: LocalDetectorOptions = {}) {
    // checked here (localDetectorOptions), unless checked before: each kind's model then takes its options as they are
    const o = localDetectorOptions.check(options);
    this.kind = o.kind;
    this.contamination = o.contamination;
    this.ocsvmOptions = o.ocsvm;
    this.gmmOptions = o.gmm;
    this.aeOptions = o.autoencoder;
    this.noise = o.noise;
    this.noiseSeed = o.noiseSeed;
  }

  /**
   * The fewest training rows this detector fits on: a GaussianMixture's own
   * (2, and at least its components); a OneClassSVM or an autoencoder fits one
   * row (its one score is then the threshold: an honest client of one row, as
   * quantity skew deals, still takes part in the association).
   */
  get minRows(): number {
    if (this.kind !== 'gmm') return 1;
    return Math.max(2, this.gmmOptions.nComponents);
  }

  private make(kind: DetectorKind = this.kind): Model {
    switch (kind) {
      case 'ocsvm':
        return new OneClassSVM(this.ocsvmOptions);
      case 'gmm':
        return new GaussianMixture(this.gmmOptions);
      case 'autoencoder':
        return new Autoencoder(this.aeOptions);
    }
  }

  /** Fits the model on X and sets the threshold at the contamination quantile of X's scores. */
  fit(X: MatrixLike): this {
    const x = Matrix.from(X);
    if (x.nRows < this.minRows) throw new InvalidDataError(`a '${this.kind}' detector needs at least ${this.minRows} rows to fit; got ${x.nRows}`);
    let model = this.make();
    try {
      if (this.noise) {
        model.fit(clipRows(x, this.noise.clip));
        const noisy = this.noisyMixture(model as GaussianMixture, x.nRows);
        model.dispose();
        model = noisy;
      } else {
        model.fit(x);
      }
      const scores = this.scoresOf(model, x);
      const cut = percentile(scores, 100 * (1 - this.contamination));
      if (!Number.isFinite(cut)) throw new InvalidDataError(`the '${this.kind}' detector's training scores are not finite`);
      this.model?.dispose();
      this.model = model;
      this.disposed = false;
      this.cut = cut;
      this.trainShare = shareAtMost(scores, cut);
    } catch (e) {
      model.dispose();
      throw e;
    }
    return this;
  }

  /** The fitted mixture's parameters through the Gaussian mechanism (see the module's note), as a new mixture. */
  private noisyMixture(gmm: GaussianMixture, n: number): GaussianMixture {
    const { clip: C, epsilon, delta } = this.noise!;
    const d = gmm.nFeatures;
    const kind = gmm.covarianceType === 'full' ? 'full' : 'diagonal';
    const regCovar = this.gmmOptions.regCovar;
    const weights = Float64Array.from(gmm.weights);
    const means = Float64Array.from(gmm.means);
    const covariances = Float64Array.from(gmm.covariances);
    const K = weights.length;
    const share = K === 1 ? 2 : 3 * K;
    const rng = this.noiseSeed === undefined ? Rng.unpredictable() : new Rng(this.noiseSeed);
    try {
      if (K > 1) {
        const sw = gaussianSigma(Math.SQRT2 / n, epsilon / 3, delta / 3);
        const e = rng.normal(K);
        for (let k = 0; k < K; k++) weights[k] = Math.max(weights[k]! + sw * e[k]!, 1e-6);
      }
      const size = kind === 'full' ? d * d : d;
      for (let k = 0; k < K; k++) {
        const nk = Math.max(1, gmm.weights[k]! * n);
        const mean = means.slice(k * d, (k + 1) * d);
        // the second moment the fit's covariance came from: covariance - regCovar I + mean mean'
        const second = covariances.slice(k * size, (k + 1) * size);
        for (let a = 0; a < d; a++) {
          if (kind === 'full') {
            for (let b = 0; b < d; b++) second[a * d + b]! += mean[a]! * mean[b]!;
            second[a * d + a]! -= regCovar;
          } else {
            second[a]! += mean[a]! * mean[a]! - regCovar;
          }
        }
        const noise = { mean: gaussianSigma((2 * C) / nk, epsilon / share, delta / share), second: gaussianSigma((2 * C * C) / nk, epsilon / share, delta / share), rng };
        const g = releaseGaussian(mean, second, d, kind, noise, regCovar);
        means.set(g.mean, k * d);
        covariances.set(g.covariance, k * size);
      }
    } finally {
      rng.dispose();
    }
    const total = weights.reduce((t, w) => t + w, 0);
    for (let k = 0; k < K; k++) weights[k] = weights[k]! / total;
    return GaussianMixture.fromParameters({ covarianceType: gmm.covarianceType, weights, means, covariances, nFeatures: d });
  }

  /**
   * With noise, after fit: what the shared mixture's release spends (see the
   * module's note): the (epsilon, delta) it was calibrated to by basic
   * composition (basicEpsilon) and its releases composed by RDP at the same
   * delta (epsilon, order), which is tighter. Undefined without noise.
   */
  get privacy(): ReleasesPrivacy | undefined {
    if (!this.noise || !(this.model instanceof GaussianMixture)) return undefined;
    const { epsilon, delta } = this.noise;
    const K = this.model.nComponents;
    if (K === 1) return composeReleases([{ epsilon: epsilon / 2, delta: delta / 2, count: 2 }]);
    return composeReleases([
      { epsilon: epsilon / 3, delta: delta / 3, count: 1 },
      { epsilon: epsilon / (3 * K), delta: delta / (3 * K), count: 2 * K },
    ]);
  }

  private fitted(): Model {
    if (!this.model) throw notFitted('LocalDetector', this.disposed, 'call fit(X) or LocalDetector.fromJSON');
    return this.model;
  }

  private scoresOf(model: Model, X: MatrixLike): Float64Array {
    if (model instanceof Autoencoder) return model.scoreSamples(X);
    const s = model instanceof OneClassSVM ? model.decisionFunction(X) : model.scoreSamples(X);
    for (let i = 0; i < s.length; i++) s[i] = -s[i]!;
    return s;
  }

  /** Anomaly scores of X's rows (higher: more anomalous). */
  scoreSamples(X: MatrixLike): Float64Array {
    return this.scoresOf(this.fitted(), X);
  }

  /** The score above which a row is an outlier. */
  get threshold(): number {
    this.fitted();
    return this.cut;
  }

  get nFeatures(): number {
    return this.fitted().nFeatures;
  }

  get isFitted(): boolean {
    return this.model !== undefined;
  }

  /** +1 for inliers (score at most the threshold), -1 for outliers, as scikit-learn's detectors. */
  predict(X: MatrixLike): Int32Array {
    const s = this.scoreSamples(X);
    return Int32Array.from(s, (v) => (v > this.cut ? -1 : 1));
  }

  /** The share of X's rows this detector calls inliers (in_ji of the paper when X is client i's rows and this is client j's detector). */
  inlierShare(X: MatrixLike): number {
    const s = this.scoreSamples(X);
    if (s.length === 0) throw new InvalidDataError('inlierShare needs at least one row');
    return shareAtMost(s, this.cut);
  }

  /**
   * inlierShare of the rows it was fitted on (in_ii), from the scores the fit
   * computed for its threshold: the same number, without scoring them again.
   * NaN for a detector loaded with fromJSON (its rows are elsewhere).
   */
  get trainingInlierShare(): number {
    this.fitted();
    return this.trainShare;
  }

  /** What travels to other clients (see LocalDetectorJSON; an 'ocsvm' detector's support vectors are training rows). */
  toJSON(): LocalDetectorJSON {
    const m = this.fitted();
    const base = { format: 'fedmix.LocalDetector', version: 1, kind: this.kind, contamination: this.contamination, threshold: this.cut, nFeatures: m.nFeatures } as const;
    if (m instanceof OneClassSVM) {
      const j = m.toJSON();
      return { ...base, ocsvm: { kernel: j.kernel, gamma: j.gamma, nu: j.nu, supportVectors: j.supportVectors, dualCoef: j.dualCoef, offset: j.offset } };
    }
    if (m instanceof GaussianMixture) {
      return { ...base, gmm: { covarianceType: m.covarianceType, weights: Array.from(m.weights), means: Array.from(m.means), covariances: Array.from(m.covariances) } };
    }
    const j = m.toJSON();
    return { ...base, autoencoder: { sizes: j.sizes, activation: m.options.activation, outputActivation: m.options.outputActivation, parameters: j.parameters } };
  }

  /** A detector from its JSON (its own, or one received): every part checked, an InvalidParameterError naming a bad one. */
  static fromJSON(json: LocalDetectorJSON | string): LocalDetector {
    let parsed: unknown = json;
    if (typeof json === 'string') {
      try {
        parsed = JSON.parse(json);
      } catch {
        throw new InvalidParameterError(`not a fedmix LocalDetector JSON: the text is not JSON (it starts ${formatValue(json.slice(0, 20))})`);
      }
    }
    if (parsed === null || typeof parsed !== 'object') throw new InvalidParameterError(`not a fedmix LocalDetector JSON, got ${formatValue(parsed)}`);
    const j = readRecord(parsed as LocalDetectorJSON, JSON_KEYS, 'the JSON');
    if (j.format !== 'fedmix.LocalDetector') throw new InvalidParameterError(`not a fedmix LocalDetector JSON: format must be "fedmix.LocalDetector", got ${formatValue(j.format)}`);
    if (j.version !== 1) throw new InvalidParameterError(`unsupported LocalDetector JSON version ${formatValue(j.version)}; this fedmix reads version 1`);
    const kind = requireOneOf('kind', j.kind, DETECTOR_KINDS);
    const contamination = requireContamination(j.contamination);
    const threshold = j.threshold;
    if (typeof threshold !== 'number' || !Number.isFinite(threshold)) throw new InvalidParameterError(`threshold must be a finite number, got ${formatValue(threshold)}`);
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.values);
    for (const other of DETECTOR_KINDS) {
      if (other !== kind && j[other] !== undefined) throw new InvalidParameterError(`a '${kind}' detector carries no ${other} field`);
    }
    const parts = j[kind];
    if (parts === null || typeof parts !== 'object') throw new InvalidParameterError(`a '${kind}' detector needs its ${kind} field, got ${formatValue(parts)}`);
    const det = new LocalDetector(trustedDetectorOptions(kind, contamination));
    let model: Model;
    if (kind === 'ocsvm') {
      const p = readRecord(parts as NonNullable<LocalDetectorJSON['ocsvm']>, ['kernel', 'gamma', 'nu', 'supportVectors', 'dualCoef', 'offset'], 'ocsvm');
      model = OneClassSVM.fromJSON({
        format: 'fedmix.OneClassSVM', version: 1, kernel: requireOneOf('ocsvm.kernel', p.kernel, OCSVM_KERNELS), gamma: p.gamma!, nu: p.nu!, nFeatures: d,
        supportVectors: arrayOf('ocsvm.supportVectors', p.supportVectors), dualCoef: arrayOf('ocsvm.dualCoef', p.dualCoef), offset: p.offset!, support: null, nIter: 0, objective: null, converged: true,
      });
    } else if (kind === 'gmm') {
      const p = readRecord(parts as NonNullable<LocalDetectorJSON['gmm']>, ['covarianceType', 'weights', 'means', 'covariances'], 'gmm');
      model = GaussianMixture.fromParameters({ covarianceType: requireOneOf('gmm.covarianceType', p.covarianceType, COVARIANCE_TYPES), weights: arrayOf('gmm.weights', p.weights), means: arrayOf('gmm.means', p.means), covariances: arrayOf('gmm.covariances', p.covariances), nFeatures: d });
    } else {
      const p = readRecord(parts as NonNullable<LocalDetectorJSON['autoencoder']>, ['sizes', 'activation', 'outputActivation', 'parameters'], 'autoencoder');
      const sizes = Array.from(arrayOf('autoencoder.sizes', p.sizes), (w, i) => requireInteger(`autoencoder.sizes[${i}]`, w, 1, LIMITS.layerWidth));
      if (sizes.length < 3 || sizes[0] !== d || sizes[sizes.length - 1] !== d) throw new InvalidParameterError(`autoencoder.sizes must run from nFeatures = ${d} back to ${d} through at least one hidden layer, got ${formatValue(p.sizes)}`);
      // the layers checked by the network it builds
      model = new Autoencoder(
        trustedAutoencoderOptions({ hiddenLayers: sizes.slice(1, -1), activation: requireOneOf('autoencoder.activation', p.activation, ACTIVATIONS), outputActivation: requireOneOf('autoencoder.outputActivation', p.outputActivation, ACTIVATIONS), nFeatures: d }),
      );
      try {
        model.setParameters(arrayOf('autoencoder.parameters', p.parameters));
      } catch (e) {
        model.dispose();
        throw e;
      }
    }
    if (model.nFeatures !== d) {
      model.dispose();
      throw new InvalidParameterError(`the ${kind} model has ${model.nFeatures} features; nFeatures says ${d}`);
    }
    det.model = model;
    det.cut = threshold;
    return det;
  }

  /** Frees the model's WASM memory; the detector is unfitted afterwards. */
  dispose(): void {
    this.model?.dispose();
    this.model = undefined;
    this.disposed = true;
    this.cut = NaN;
    this.trainShare = NaN;
  }
}

/** The defaults, as checking resolves an empty options object (made on first use). */
let detectorDefaults: ResolvedLocalDetectorOptions | undefined;

/** A detector's options from a saved detector's kind and contamination, checked there: the defaults under them, resolved without checking again. */
function trustedDetectorOptions(kind: DetectorKind, contamination: number): ResolvedLocalDetectorOptions {
  detectorDefaults ??= localDetectorOptions.check({});
  return localDetectorOptions.trust({ ...detectorDefaults, kind, contamination });
}

/** The share of scores at most `cut` (inliers). */
function shareAtMost(scores: Float64Array, cut: number): number {
  let inliers = 0;
  for (let i = 0; i < scores.length; i++) if (scores[i]! <= cut) inliers++;
  return inliers / scores.length;
}

/** A numeric array field, checked (finite values) and flattened. */
function arrayOf(name: string, v: unknown): Float64Array {
  if (!guardRead(name, () => Array.isArray(v) || ArrayBuffer.isView(v))) throw new InvalidParameterError(`${name} must be an array of numbers, got ${formatValue(v)}`);
  // a typed array (as the binary wire decodes one) is read as it is, not first
  // turned into an Array; a Float64Array comes back as given, so it is copied
  return guardRead(name, () => {
    const flat = flattenNumeric(name, v as NumericArray);
    return flat === v ? flat.slice() : flat;
  });
}
