/**
 * MLPClassifier with scikit-learn 1.2's names and training loop (camelCase):
 * hidden layers of hiddenLayerSizes, a softmax output over the classes, the
 * cross-entropy (log-loss) plus alpha's L2 penalty on the weights, Adam or SGD
 * (momentum, Nesterov) with a constant learning rate, minibatches reshuffled
 * every epoch, and the stop after nIterNoChange epochs that improve the loss by
 * less than tol. It runs on the WASM core's f32 engine (ts/models/network.ts).
 *
 * Differences from scikit-learn, on purpose: arithmetic in f32 (PyTorch's
 * default) rather than X's dtype; the initial parameters are PyTorch's
 * nn.Linear ones (or Glorot's with zero biases: init 'xavier') rather than
 * scikit-learn's Glorot with uniform biases; two classes get two softmax
 * outputs rather than one logistic unit (the same model); only the 'constant'
 * learning rate; no validation-split early stopping.
 */
import { encodeLabels, type Label, type LabelsLike } from '../data/labels.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { savedLosses } from '../data/saved.js';
import { formatValue, InvalidDataError, InvalidParameterError, notFitted } from '../errors.js';
import { requireWasmMemory } from '../wasm/memory.js';
import * as v from 'valibot';
import { integerNeed, LIMITS, readArray, readOptions, requireInteger } from '../validate.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';
import { baseSeed, batchFor, INITS, Network, readModelJSON, trainEpochs, trustedNetworkSpec, trustedOptimizerSpec, type Activation, type NetworkInit, type Optimizer, type OptimizerSpec } from './network.js';
import { keepClassName } from '../class-name.js';

/** scikit-learn's activation names ('logistic' is the sigmoid). */
export const MLP_ACTIVATIONS = ['identity', 'logistic', 'tanh', 'relu'] as const;
export type MLPActivation = (typeof MLP_ACTIVATIONS)[number];

export interface MLPClassifierOptions {
  /** widths of the hidden layers (default [100]) */
  hiddenLayerSizes?: readonly number[];
  /** 'relu' (default), 'logistic', 'tanh', 'identity' */
  activation?: MLPActivation;
  /** 'adam' (default) or 'sgd' */
  solver?: 'adam' | 'sgd';
  /** L2 penalty: (alpha / batch rows) W added to the weights' gradients, as scikit-learn (default 1e-4) */
  alpha?: number;
  /** rows per step; 'auto' (default) is min(200, rows) */
  batchSize?: number | 'auto';
  /** default 1e-3 */
  learningRateInit?: number;
  /** most epochs (default 200) */
  maxIter?: number;
  /** reshuffle the rows every epoch (default true) */
  shuffle?: boolean;
  /** seed of the initial parameters and the shuffles (scikit-learn's random_state); `seed` is the same */
  randomState?: number;
  seed?: number;
  /** the loss must improve by at least tol ... (default 1e-4) */
  tol?: number;
  /** ... within nIterNoChange epochs, or training stops (default 10) */
  nIterNoChange?: number;
  /** SGD's momentum (default 0.9) and Nesterov's (default true) */
  momentum?: number;
  nesterovsMomentum?: boolean;
  /** Adam's (defaults 0.9, 0.999, 1e-8) */
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  /** fit() goes on from the current parameters instead of new ones (the labels must be among classes) */
  warmStart?: boolean;
  /** 'pytorch' (default) or 'xavier' */
  init?: NetworkInit;
  /** called after every epoch with its number (from 1) and mean training loss; returning false stops the fit */
  onEpoch?: (epoch: number, loss: number) => unknown;
}

export type ResolvedMLPClassifierOptions = Readonly<{
  hiddenLayerSizes: readonly number[];
  activation: MLPActivation;
  solver: 'adam' | 'sgd';
  alpha: number;
  batchSize: number | 'auto';
  learningRateInit: number;
  maxIter: number;
  shuffle: boolean;
  randomState: number | undefined;
  tol: number;
  nIterNoChange: number;
  momentum: number;
  nesterovsMomentum: boolean;
  beta1: number;
  beta2: number;
  epsilon: number;
  warmStart: boolean;
  init: NetworkInit;
  onEpoch: ((epoch: number, loss: number) => unknown) | undefined;
}>;

/** Serialized form, see toJSON(). */
export interface MLPClassifierJSON {
  format: 'fedmix.MLPClassifier';
  version: 1;
  nFeatures: number;
  classes: Label[];
  sizes: number[];
  parameters: number[];
  nIter: number;
  lossCurve: number[];
  options: Omit<MLPClassifierOptions, 'onEpoch' | 'seed'>;
}

/** 'auto' or a number of rows, in the words of an integer option. */
const batchSizeOrAuto = () => {
  const rows = atoms.batchSize();
  return atoms.atom<number | 'auto'>((x) => x === 'auto' || v.is(rows, x), (input) => `must be ${integerNeed(1, LIMITS.count, input)}`);
};

/**
 * MLPClassifier's options (scikit-learn's defaults), checked once: by the
 * constructor, or by check() at a public edge, then taken as they are.
 * Resolved, `seed` is folded into randomState.
 */
export const mlpClassifierOptions = defineOptions<MLPClassifierOptions>()(
  {
    hiddenLayerSizes: atoms.optional(atoms.layerWidths('hiddenLayerSizes'), [100]),
    activation: atoms.optional(atoms.oneOf(MLP_ACTIVATIONS), 'relu'),
    solver: atoms.optional(atoms.oneOf(['adam', 'sgd'] as const), 'adam'),
    alpha: atoms.optional(atoms.number(0), 1e-4),
    batchSize: atoms.optional(batchSizeOrAuto(), 'auto'),
    learningRateInit: atoms.optional(atoms.learningRate(), 1e-3),
    maxIter: atoms.optional(atoms.maxIterations(1), 200),
    shuffle: atoms.optional(atoms.flag(), true),
    randomState: atoms.optional(atoms.seed()),
    seed: atoms.optional(atoms.seed()),
    tol: atoms.optional(atoms.tolerance(), 1e-4),
    nIterNoChange: atoms.optional(atoms.maxIterations(1), 10),
    momentum: atoms.optional(atoms.number(0), 0.9),
    nesterovsMomentum: atoms.optional(atoms.flag(), true),
    beta1: atoms.optional(atoms.decayRate(), 0.9),
    beta2: atoms.optional(atoms.decayRate(), 0.999),
    epsilon: atoms.optional(atoms.number(0), 1e-8),
    warmStart: atoms.optional(atoms.flag(), false),
    init: atoms.optional(atoms.oneOf(INITS), 'pytorch'),
    onEpoch: atoms.optional(atoms.callback<NonNullable<MLPClassifierOptions['onEpoch']>>('must be a function (epoch, loss) => void')),
  },
  ({ seed, randomState, ...o }): ResolvedMLPClassifierOptions => {
    if (seed !== undefined && randomState !== undefined && seed !== randomState) {
      throw new InvalidParameterError(`seed and randomState are the same option; got ${formatValue(seed)} and ${formatValue(randomState)}`);
    }
    return { ...o, randomState: randomState ?? seed, onEpoch: o.onEpoch };
  },
);

/** Every option's name, and those a saved model carries (no callback). */
const OPTION_KEYS = mlpClassifierOptions.keys;
const SAVED_OPTION_KEYS = OPTION_KEYS.filter((k) => k !== 'onEpoch');

function optimizerSpec(o: Pick<ResolvedMLPClassifierOptions, 'solver' | 'learningRateInit' | 'momentum' | 'nesterovsMomentum' | 'beta1' | 'beta2' | 'epsilon'>): OptimizerSpec {
  return o.solver === 'adam'
    ? { name: 'adam', learningRate: o.learningRateInit, beta1: o.beta1, beta2: o.beta2, eps: o.epsilon }
    : { name: 'sgd', learningRate: o.learningRateInit, momentum: o.momentum, nesterov: o.nesterovsMomentum && o.momentum > 0 };
}

function networkActivation(a: MLPActivation): Activation {
  return a === 'logistic' ? 'sigmoid' : a;
}

interface Fitted {
  net: Network;
  classes: Label[];
}

export class MLPClassifier {
  static {
    keepClassName(this, 'MLPClassifier');
  }

  readonly options: ResolvedMLPClassifierOptions;
  private state: Fitted | undefined;
  /** whether dispose() freed the model (and no fit or load since), so a call can say so */
  private disposed = false;
  private opt: Optimizer | undefined;
  private curve: number[] = [];
  private iterations = 0;
  private readonly shuffleSeed: number;

  /** Options checked here (mlpClassifierOptions), unless they are what its check() returned. */
  constructor(options: MLPClassifierOptions = {}) {
    this.options = mlpClassifierOptions.check(options);
    this.shuffleSeed = baseSeed(this.options.randomState);
  }

  private sizes(d: number, k: number): number[] {
    return [d, ...this.options.hiddenLayerSizes, k];
  }

  private network(d: number, k: number): Network {
    const o = this.options;
    return new Network(trustedNetworkSpec(this.sizes(d, k), { activation: networkActivation(o.activation), outputActivation: 'softmax', loss: 'softmax-cross-entropy', init: o.init, seed: o.randomState }));
  }

  private fitted(): Fitted {
    if (!this.state || this.state.net.disposed) throw notFitted('MLPClassifier', this.disposed, 'call fit(X, y) or MLPClassifier.fromJSON');
    return this.state;
  }

  get isFitted(): boolean {
    return this.state !== undefined && !this.state.net.disposed;
  }

  /** The class labels, sorted (scikit-learn's classes_). */
  get classes(): Label[] {
    return this.fitted().classes.slice();
  }

  get nFeatures(): number {
    return this.fitted().net.nInputs;
  }

  /** Epochs run by the fits (n_iter_; a warm start adds to it). */
  get nIter(): number {
    this.fitted();
    return this.iterations;
  }

  /** The mean training loss (with alpha's penalty) of every epoch (loss_curve_). */
  get lossCurve(): number[] {
    this.fitted();
    return this.curve.slice();
  }

  /** The last epoch's loss (loss_); NaN when none is known (a model loaded from a file without its lossCurve). */
  get loss(): number {
    this.fitted();
    return this.curve[this.curve.length - 1] ?? NaN;
  }

  /** The labels as codes into `classes`; a label outside them is an InvalidDataError. */
  private codesIn(classes: Label[], y: unknown, n: number): Int32Array {
    const labels = readArray('y', y, LIMITS.partitionRows, InvalidDataError);
    if (labels.length !== n) throw new InvalidDataError(`y has ${labels.length} labels for ${n} rows of X; pass one label per row`);
    const index = new Map<unknown, number>(classes.map((c, k) => [c, k]));
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const k = index.get(labels[i]);
      if (k === undefined) {
        throw new InvalidDataError(`y[${i}] is ${formatValue(labels[i])}, not one of the classes this model was fitted on (${classes.slice(0, 10).map((c) => formatValue(c)).join(', ')}${classes.length > 10 ? ', …' : ''}); warmStart continues only with those`);
      }
      codes[i] = k;
    }
    return codes;
  }

  /**
   * Trains on X (rows as samples) and their labels y (numbers or strings;
   * classes are their sorted distinct values). Returns this.
   */
  fit(X: MatrixLike, y: LabelsLike): this {
    const x = Matrix.from(X);
    if (x.nRows < 1) throw new InvalidDataError('X has no rows; fit needs at least one');
    const o = this.options;
    const warm = o.warmStart && this.isFitted;
    let classes: Label[];
    let codes: Int32Array;
    if (warm) {
      const st = this.fitted();
      if (x.nCols !== st.net.nInputs) throw new InvalidDataError(`X has ${x.nCols} features but this MLPClassifier was fitted with ${st.net.nInputs}; pass data with ${st.net.nInputs} columns`);
      classes = st.classes;
      codes = this.codesIn(classes, y, x.nRows);
    } else {
      ({ codes, classes } = encodeLabels(y, 'y'));
      if (codes.length !== x.nRows) throw new InvalidDataError(`y has ${codes.length} labels for ${x.nRows} rows of X; pass one label per row`);
      if (classes.length < 2) throw new InvalidDataError(`y has only one class (${formatValue(classes[0])}); a classifier needs at least two`);
    }
    const batch = batchFor(o.batchSize === 'auto' ? undefined : o.batchSize, 200, x.nRows);
    let net: Network;
    let made = false;
    if (warm) {
      net = this.fitted().net;
    } else {
      net = this.network(x.nCols, classes.length);
      made = true;
    }
    let opt = warm ? this.opt : undefined;
    try {
      opt ??= net.optimizer(trustedOptimizerSpec(optimizerSpec(o)));
      // a loaded model gets its optimizer on its first warm fit
      if (warm) this.opt = opt;
      const set = net.attach(x, codes);
      const before = warm ? net.getParameters() : undefined;
      let best = warm ? Math.min(...this.curve, Infinity) : Infinity;
      let stale = 0;
      try {
        const losses = trainEpochs(net, set, opt, {
          epochs: o.maxIter,
          batchSize: batch,
          seed: this.shuffleSeed,
          shuffle: o.shuffle,
          firstEpoch: warm ? this.iterations : 0,
          l2: o.alpha,
          onEpoch: o.onEpoch,
          // scikit-learn's _update_no_improvement_count and its break
          stop: (loss) => {
            stale = loss > best - o.tol ? stale + 1 : 0;
            if (loss < best) best = loss;
            return stale > o.nIterNoChange;
          },
        });
        if (warm) {
          this.curve.push(...losses);
          this.iterations += losses.length;
        } else {
          this.curve = losses;
          this.iterations = losses.length;
        }
      } catch (e) {
        if (before && !net.disposed) {
          net.setParameters(before);
          opt.reset();
        }
        throw e;
      } finally {
        set.dispose();
      }
    } catch (e) {
      if (made) {
        if (opt !== this.opt) opt?.dispose();
        net.dispose();
      }
      throw e;
    }
    if (made) {
      this.opt?.dispose();
      this.state?.net.dispose();
      this.state = { net, classes };
      this.disposed = false;
      this.opt = opt;
    }
    return this;
  }

  /** Probability of every class for every row (n x classes, columns in the order of classes). */
  predictProba(X: MatrixLike): Matrix {
    return this.fitted().net.predict(X);
  }

  /** The most probable class of every row (the first of equals). */
  predict(X: MatrixLike): Label[] {
    const { classes } = this.fitted();
    const p = this.predictProba(X);
    const n = p.nRows;
    const out: Label[] = new Array(n);
    for (let i = 0; i < n; i++) {
      let best = 0;
      for (let k = 1; k < classes.length; k++) if (p.data[k * n + i]! > p.data[best * n + i]!) best = k;
      out[i] = classes[best]!;
    }
    return out;
  }

  /** Mean accuracy on X against labels y (a label outside the classes counts as wrong, as in scikit-learn). */
  score(X: MatrixLike, y: LabelsLike): number {
    const pred = this.predict(X);
    const labels = readArray('y', y, LIMITS.partitionRows, InvalidDataError);
    if (labels.length !== pred.length) throw new InvalidDataError(`y has ${labels.length} labels for ${pred.length} rows of X`);
    let right = 0;
    for (let i = 0; i < pred.length; i++) if (labels[i] === pred[i]) right++;
    return right / pred.length;
  }

  /** A copy of the parameters: flat, PyTorch's order (layer 0 weight (out x in), layer 0 bias, ...). */
  getParameters(): Float32Array {
    return this.fitted().net.getParameters();
  }

  /** Replaces the parameters of the fitted network (as getParameters() gives them). */
  setParameters(p: ArrayLike<number>): void {
    this.fitted().net.setParameters(p);
  }

  toJSON(): MLPClassifierJSON {
    const { net, classes } = this.fitted();
    const { onEpoch: _f, hiddenLayerSizes, ...rest } = this.options;
    return {
      format: 'fedmix.MLPClassifier',
      version: 1,
      nFeatures: net.nInputs,
      classes: classes.slice(),
      sizes: [...net.spec.sizes],
      parameters: Array.from(net.getParameters()),
      nIter: this.iterations,
      lossCurve: this.curve.slice(),
      options: { ...rest, hiddenLayerSizes: [...hiddenLayerSizes] },
    };
  }

  /** Rebuilds a model saved with toJSON(). */
  static fromJSON(json: MLPClassifierJSON | string): MLPClassifier {
    const j = readModelJSON(json, 'fedmix.MLPClassifier', ['nFeatures', 'classes', 'parameters', 'nIter', 'lossCurve', 'options']);
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.layerWidth);
    // the file's options checked once, here (strict keys: a saved model has no callback)
    const m = new MLPClassifier(mlpClassifierOptions.check(readOptions(j.options as MLPClassifierOptions | undefined, SAVED_OPTION_KEYS, 'options'), 'options'));
    const { codes, classes } = encodeLabels(j.classes, 'classes');
    if (codes.length !== classes.length) throw new InvalidParameterError('classes must be distinct labels');
    if (classes.length < 2) throw new InvalidParameterError('classes must hold at least two labels');
    const curve = savedLosses('lossCurve', j.lossCurve);
    const nIter = requireInteger('nIter', j.nIter ?? curve.length, 0, LIMITS.maxIter);
    const sizes = m.sizes(d, classes.length);
    const count = sizes.reduce((n, w, i, s) => (i === 0 ? 0 : n + s[i - 1]! * w + w), 0);
    requireWasmMemory(`loading a ${sizes.join('-')} classifier`, 8 * count);
    const net = m.network(d, classes.length);
    try {
      net.setParameters(j.parameters as ArrayLike<number>);
    } catch (e) {
      net.dispose();
      throw e;
    }
    m.state = { net, classes };
    m.curve = curve;
    m.iterations = nIter;
    return m;
  }

  /** Frees the network's WASM memory; the model is unfitted afterwards. */
  dispose(): void {
    this.opt?.dispose();
    this.state?.net.dispose();
    this.opt = undefined;
    this.state = undefined;
    this.disposed = true;
  }
}
