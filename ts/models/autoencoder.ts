/**
 * Autoencoder: a dense network trained to reproduce its input (Keras'
 * Sequential of Dense layers with fit(X, X)), in the WASM core's f32 engine
 * (ts/models/network.ts). The per-row reconstruction error is the anomaly
 * score of the community-based federated anomaly detection paper: a
 * 64-32-64 ReLU network with a sigmoid output, Adam and MSE, its defaults.
 *
 * fit() trains from the current parameters, as Keras' fit does: a new model
 * starts from seeded initial ones, a fitted or loaded one goes on from where
 * it is (what a federated client does with the global parameters it receives).
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { savedLosses } from '../data/saved.js';
import { formatValue, InvalidDataError, InvalidParameterError, NotFittedError, notFitted } from '../errors.js';
import { requireWasmMemory } from '../wasm/memory.js';
import * as v from 'valibot';
import { LIMITS, readOptions, requireInteger, requireOneOf } from '../validate.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';
import {
  ACTIVATIONS,
  baseSeed,
  batchFor,
  INITS,
  Network,
  optimizerOptions,
  readModelJSON,
  resolveOptimizerSpec,
  trainEpochs,
  trustedNetworkSpec,
  trustedOptimizerSpec,
  type Activation,
  type NetworkInit,
  type Optimizer,
  type OptimizerSpec,
  OPTIMIZER_KEYS,
} from './network.js';
import { keepClassName } from '../class-name.js';

export interface AutoencoderOptions {
  /** widths of the hidden layers (default [64, 32, 64]); the narrowest is the code encode() returns */
  hiddenLayers?: readonly number[];
  /** activation of the hidden layers: 'relu' (default), 'sigmoid', 'tanh', 'identity' */
  activation?: Activation;
  /** activation of the output layer (default 'sigmoid', for data in [0, 1]; 'identity' for unbounded data) */
  outputActivation?: Activation;
  /** 'mse' (default) or 'bce' (needs outputActivation 'sigmoid' and data in [0, 1]) */
  loss?: 'mse' | 'bce';
  /** 'adam' (default), 'sgd', or a full optimizer spec ({ name, learningRate, momentum, ... }) */
  optimizer?: 'adam' | 'sgd' | OptimizerSpec;
  /** default 1e-3 (a spec's own learningRate wins) */
  learningRate?: number;
  /** passes over the data per fit() (default 10; Keras' is 1) */
  epochs?: number;
  /** rows per gradient step (default 32, or all rows when fewer); at most the rows of X */
  batchSize?: number;
  /** a new order of the rows every epoch (default true) */
  shuffle?: boolean;
  /** 'pytorch' (default, nn.Linear's) or 'xavier' (Glorot uniform, zero biases) */
  init?: NetworkInit;
  /** features of the data: lets setParameters() and fromJSON() build the network before any fit */
  nFeatures?: number;
  /** seed of the initial parameters and of the shuffles; without it every model differs */
  seed?: number;
  /** called after every epoch with its number (from 1) and mean training loss; returning false stops the fit */
  onEpoch?: (epoch: number, loss: number) => unknown;
}

export type ResolvedAutoencoderOptions = Readonly<{
  hiddenLayers: readonly number[];
  activation: Activation;
  outputActivation: Activation;
  loss: 'mse' | 'bce';
  optimizer: Readonly<Required<OptimizerSpec>>;
  learningRate: number;
  epochs: number;
  batchSize: number | undefined;
  shuffle: boolean;
  init: NetworkInit;
  nFeatures: number | undefined;
  seed: number | undefined;
  onEpoch: ((epoch: number, loss: number) => unknown) | undefined;
}>;

/** Serialized form, see toJSON(). */
export interface AutoencoderJSON {
  format: 'fedmix.Autoencoder';
  version: 1;
  nFeatures: number;
  /** layer widths, input and output included */
  sizes: number[];
  /** flat, PyTorch's order (f32 values) */
  parameters: number[];
  /** the mean training loss of every epoch trained */
  history: number[];
  options: Omit<AutoencoderOptions, 'onEpoch' | 'nFeatures'>;
}

/** The optimizer as given ('adam', 'sgd' or a spec), with the learning rate a name takes; a spec's own learningRate wins. */
function optimizerOf(given: AutoencoderOptions['optimizer'], learningRate: number): Readonly<Required<OptimizerSpec>> {
  if (typeof given === 'string') return trustedOptimizerSpec({ name: requireOneOf('optimizer', given, ['adam', 'sgd'] as const), learningRate });
  if (optimizerOptions.isResolved(given)) return given;
  return resolveOptimizerSpec({ learningRate, ...readOptions(given as OptimizerSpec, OPTIMIZER_KEYS, 'optimizer') } as OptimizerSpec);
}

/**
 * The Autoencoder's options (the anomaly-communities paper's network and
 * Keras' training defaults), checked once: by the constructor, or by check()
 * at a public edge that makes autoencoders (a LocalDetector), then taken as
 * they are.
 */
export const autoencoderOptions = defineOptions<AutoencoderOptions>()(
  {
    hiddenLayers: atoms.optional(atoms.layerWidths('hiddenLayers', 'must hold at least one width (the code layer), e.g. [64, 32, 64]'), [64, 32, 64]),
    activation: atoms.optional(atoms.oneOf(ACTIVATIONS), 'relu'),
    outputActivation: atoms.optional(atoms.oneOf(ACTIVATIONS), 'sigmoid'),
    loss: atoms.optional(atoms.oneOf(['mse', 'bce'] as const), 'mse'),
    // resolved with the learning rate by the rule below
    optimizer: atoms.optional(v.unknown(), 'adam'),
    learningRate: atoms.optional(atoms.learningRate(), 1e-3),
    epochs: atoms.optional(atoms.maxIterations(1), 10),
    batchSize: atoms.optional(atoms.batchSize()),
    shuffle: atoms.optional(atoms.flag(), true),
    init: atoms.optional(atoms.oneOf(INITS), 'pytorch'),
    nFeatures: atoms.optional(atoms.integer(1, LIMITS.layerWidth)),
    seed: atoms.optional(atoms.seed()),
    onEpoch: atoms.optional(atoms.callback<NonNullable<AutoencoderOptions['onEpoch']>>('must be a function (epoch, loss) => void')),
  },
  (o): ResolvedAutoencoderOptions => {
    if (o.loss === 'bce' && o.outputActivation !== 'sigmoid') {
      throw new InvalidParameterError(`loss 'bce' needs outputs in [0, 1]: use outputActivation 'sigmoid', not ${formatValue(o.outputActivation)}`);
    }
    const optimizer = optimizerOf(o.optimizer as AutoencoderOptions['optimizer'], o.learningRate);
    return { ...o, batchSize: o.batchSize, nFeatures: o.nFeatures, seed: o.seed, onEpoch: o.onEpoch, optimizer, learningRate: optimizer.learningRate };
  },
);

/** Every option's name, for reading them once (readOptions). */
export const AUTOENCODER_OPTION_KEYS = autoencoderOptions.keys;

/** The defaults, as checking resolves an empty options object (made on first use). */
let defaults: ResolvedAutoencoderOptions | undefined;

/**
 * Options the library builds from values it has checked already (a saved
 * detector's layers and activations): the defaults under `o` (its undefined
 * entries ignored), resolved without checking again. @internal
 */
export function trustedAutoencoderOptions(o: Partial<ResolvedAutoencoderOptions>): ResolvedAutoencoderOptions {
  defaults ??= autoencoderOptions.check({});
  const out: Record<string, unknown> = { ...defaults };
  for (const [k, x] of Object.entries(o)) if (x !== undefined) out[k] = x;
  return autoencoderOptions.trust(out as ResolvedAutoencoderOptions);
}

/** The options a saved model carries (toJSON): all but the callback and the features, which the file has apart. */
const SAVED_OPTION_KEYS = AUTOENCODER_OPTION_KEYS.filter((k) => k !== 'onEpoch' && k !== 'nFeatures');

export class Autoencoder {
  static {
    keepClassName(this, 'Autoencoder');
  }

  readonly options: ResolvedAutoencoderOptions;
  private net: Network | undefined;
  /** whether dispose() freed the model (and no fit or load since), so a call can say so */
  private disposed = false;
  private opt: Optimizer | undefined;
  private losses: number[] = [];
  /** base of the shuffle seeds, drawn once when no seed is given */
  private readonly shuffleSeed: number;

  /** Options checked here (autoencoderOptions), unless they are what its check() returned. */
  constructor(options: AutoencoderOptions = {}) {
    this.options = autoencoderOptions.check(options);
    this.shuffleSeed = baseSeed(this.options.seed);
  }

  /** Layer widths for d features: d, the hidden layers, d. */
  private sizes(d: number): number[] {
    return [d, ...this.options.hiddenLayers, d];
  }

  /** The network for d features (made on first use). */
  private build(d: number): Network {
    if (this.net && !this.net.disposed) return this.net;
    const o = this.options;
    this.disposed = false;
    this.net = new Network(trustedNetworkSpec(this.sizes(d), { activation: o.activation, outputActivation: o.outputActivation, loss: o.loss, init: o.init, seed: o.seed }));
    return this.net;
  }

  private fitted(): Network {
    if (!this.net || this.net.disposed) throw notFitted('Autoencoder', this.disposed, 'call fit(X) or Autoencoder.fromJSON');
    return this.net;
  }

  get isFitted(): boolean {
    return this.net !== undefined && !this.net.disposed;
  }

  /** Number of features (the input and output width). */
  get nFeatures(): number {
    return this.fitted().nInputs;
  }

  /** The mean training loss of every epoch trained so far (Keras' history.history.loss). */
  get history(): number[] {
    return this.losses.slice();
  }

  /** Which layer encode() reads: 1 + the position of the narrowest hidden layer (the first of equals). */
  get codeLayer(): number {
    const h = this.options.hiddenLayers;
    return 1 + h.indexOf(Math.min(...h));
  }

  /**
   * Trains options.epochs epochs on X (rows as samples) to reproduce X,
   * from the current parameters. Returns this.
   */
  fit(X: MatrixLike): this {
    const x = Matrix.from(X);
    if (x.nRows < 1) throw new InvalidDataError('X has no rows; fit needs at least one');
    const d = this.isFitted ? this.nFeatures : this.options.nFeatures;
    if (d !== undefined && x.nCols !== d) throw new InvalidDataError(`X has ${x.nCols} features but this Autoencoder has ${d}; pass data with ${d} columns`);
    const o = this.options;
    const batch = batchFor(o.batchSize, 32, x.nRows);
    const fresh = !this.isFitted;
    try {
      const net = this.build(x.nCols);
      this.opt ??= net.optimizer(o.optimizer);
      const set = net.attach(x, x);
      const before = net.getParameters();
      try {
        const losses = trainEpochs(net, set, this.opt, {
          epochs: o.epochs, batchSize: batch, seed: this.shuffleSeed, shuffle: o.shuffle, firstEpoch: this.losses.length, onEpoch: o.onEpoch,
        });
        this.losses.push(...losses);
      } catch (e) {
        // a fit that fails leaves the parameters as they were
        if (!net.disposed) {
          net.setParameters(before);
          this.opt.reset();
        }
        throw e;
      } finally {
        set.dispose();
      }
    } catch (e) {
      if (fresh) this.release();
      throw e;
    }
    return this;
  }

  /** The code of every row: the activations of the narrowest hidden layer (n x its width). */
  encode(X: MatrixLike): Matrix {
    return this.fitted().layerOutputs(X, this.codeLayer);
  }

  /** The network's reconstruction of every row (n x nFeatures). */
  reconstruct(X: MatrixLike): Matrix {
    return this.fitted().predict(X);
  }

  /** Per-row mean squared reconstruction error: the anomaly score (higher is more anomalous). */
  scoreSamples(X: MatrixLike): Float64Array {
    return this.fitted().reconstructionErrors(X);
  }

  /** A copy of the parameters: flat, PyTorch's order (layer 0 weight (out x in), layer 0 bias, ...). */
  getParameters(): Float32Array {
    return this.fitted().getParameters();
  }

  /**
   * Replaces the parameters (a Float32Array or numbers, as getParameters()
   * gives them). A model never fitted needs options.nFeatures for this.
   */
  setParameters(p: ArrayLike<number>): void {
    if (!this.isFitted) {
      if (this.options.nFeatures === undefined) {
        throw new NotFittedError('this Autoencoder has no network yet: fit it first, or pass nFeatures in its options to set the parameters of a new one');
      }
      const net = this.build(this.options.nFeatures);
      try {
        net.setParameters(p);
      } catch (e) {
        this.release();
        throw e;
      }
      return;
    }
    this.fitted().setParameters(p);
  }

  toJSON(): AutoencoderJSON {
    const net = this.fitted();
    const { onEpoch: _f, nFeatures: _d, optimizer, ...rest } = this.options;
    return {
      format: 'fedmix.Autoencoder',
      version: 1,
      nFeatures: net.nInputs,
      sizes: [...net.spec.sizes],
      parameters: Array.from(net.getParameters()),
      history: this.losses.slice(),
      options: { ...rest, hiddenLayers: [...rest.hiddenLayers], optimizer: { ...optimizer } },
    };
  }

  /** Rebuilds a model saved with toJSON(). */
  static fromJSON(json: AutoencoderJSON | string): Autoencoder {
    const j = readModelJSON(json, 'fedmix.Autoencoder', ['nFeatures', 'parameters', 'history', 'options']);
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.layerWidth);
    // the file's options checked once, here (strict keys: a saved model has no callback)
    const ae = new Autoencoder(autoencoderOptions.check({ ...readOptions(j.options as AutoencoderOptions | undefined, SAVED_OPTION_KEYS, 'options'), nFeatures: d }, 'options'));
    const history = savedLosses('history', j.history);
    const count = ae.sizes(d).reduce((n, w, i, s) => (i === 0 ? 0 : n + s[i - 1]! * w + w), 0);
    requireWasmMemory(`loading a ${ae.sizes(d).join('-')} autoencoder`, 8 * count);
    ae.setParameters(j.parameters as ArrayLike<number>);
    ae.losses = history;
    return ae;
  }

  /** Frees the network's WASM memory; the model is unfitted afterwards. */
  dispose(): void {
    this.release();
    this.disposed = true;
  }

  /** Frees the network (a failed first fit's too, which leaves the model unfitted rather than disposed). */
  private release(): void {
    this.opt?.dispose();
    this.net?.dispose();
    this.opt = undefined;
    this.net = undefined;
  }
}
