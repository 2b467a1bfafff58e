/**
 * Network: a dense network in the WASM core (crates/fedmix-core/src/nn), the
 * building block of the Autoencoder, the MLPClassifier and the FedAvg family.
 * f32 as PyTorch: nn.Linear layers (weights out x in), PyTorch's default
 * initialization, its losses with 'mean' reduction and torch.optim's SGD and
 * Adam. Parameters (and gradients) are one flat Float32Array in PyTorch's
 * order: layer 0 weight (out x in, row-major), layer 0 bias, layer 1 weight, ...
 *
 * Data crosses once: attach() copies rows into WASM memory (f32, row-major)
 * where they stay, across epochs, until the TrainingSet is disposed. The
 * network, its training sets and its optimizers are each freed by dispose().
 */
import { keepClassName } from '../class-name.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError, NumericalError } from '../errors.js';
import { NN_NEW_OPTIONS, NN_OPTIMIZER_NEW_OPTIONS, NN_TRAIN_EPOCH_OPTIONS } from '../wasm/abi.generated.js';
import { codeTable } from '../wasm/constants.js';
import { instance, type WasmExports } from '../wasm/loader.js';
import { OwnedHandle, requireWasmMemory, withScope, type HandleLabel, type Scope } from '../wasm/memory.js';
import * as v from 'valibot';
import { guardRead, LIMITS, readOptions, readRecord, requireInteger, requireLength, requireNumber, requireOneOf, seedParts } from '../validate.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';

export const ACTIVATIONS = ['relu', 'sigmoid', 'tanh', 'identity'] as const;
export type Activation = (typeof ACTIVATIONS)[number];
export const OUTPUT_ACTIVATIONS = [...ACTIVATIONS, 'softmax'] as const;
export type OutputActivation = Activation | 'softmax';
export const LOSSES = ['mse', 'bce', 'softmax-cross-entropy'] as const;
export type Loss = (typeof LOSSES)[number];
/** How a network's weights start (see NetworkSpec's init). */
export type NetworkInit = 'pytorch' | 'xavier';
export const INITS: readonly NetworkInit[] = ['pytorch', 'xavier'];
export const OPTIMIZERS = ['sgd', 'adam'] as const;

export interface NetworkSpec {
  /** layer widths including input and output, e.g. [784, 64, 32, 64, 784] */
  sizes: readonly number[];
  /** activation of the hidden layers */
  activation: Activation;
  /** 'softmax' only with loss 'softmax-cross-entropy' (fused, like PyTorch's CrossEntropyLoss on logits); 'bce' needs 'sigmoid' */
  outputActivation: OutputActivation;
  loss: Loss;
  /**
   * 'pytorch' (default): nn.Linear's kaiming_uniform_(a = sqrt(5)) weights and
   * U(-1/sqrt(fan_in), 1/sqrt(fan_in)) biases. 'xavier': Glorot-uniform
   * weights U(-sqrt(6 / (fan_in + fan_out)), ...) and zero biases (Keras' Dense).
   */
  init?: NetworkInit;
  /** seed of the initial parameters; without it they differ every time */
  seed?: number;
}

export interface OptimizerSpec {
  name: 'sgd' | 'adam';
  /** > 0 */
  learningRate: number;
  /** torch.optim.SGD: momentum (default 0), dampening (default 0), nesterov (default false), weightDecay (L2, default 0) */
  momentum?: number;
  dampening?: number;
  nesterov?: boolean;
  weightDecay?: number;
  /** torch.optim.Adam: beta1 (0.9), beta2 (0.999), eps (1e-8); weightDecay adds weightDecay * w to the gradient as torch's Adam */
  beta1?: number;
  beta2?: number;
  eps?: number;
}

export interface TrainOptions {
  /** rows per batch, at most the training set's rows; the last batch may be smaller */
  batchSize: number;
  /** this epoch's shuffle: a uniformly random permutation of the rows drawn from it */
  seed: number;
  /** FedProx: adds mu * (w - anchor) to the gradient */
  proximal?: { mu: number; anchor: Float32Array };
  /** SCAFFOLD: adds this vector (c - c_i) to the gradient */
  correction?: Float32Array;
  /** the rows in this order instead of the seeded shuffle (a permutation of 0..nRows - 1) */
  order?: ArrayLike<number>;
  /**
   * scikit-learn's alpha: adds (l2 / batch rows) * W to the weights' gradients
   * (not the biases') and 0.5 * l2 * |W|^2 / batch rows to the reported loss
   */
  l2?: number;
}

/** Rows resident in WASM memory for training and evaluation (see Network.attach). */
export interface TrainingSet {
  readonly nRows: number;
  dispose(): void;
}

/** What Network.gradient returns: one batch's forward and backward pass, no step. */
export interface BatchGradient {
  loss: number;
  /** every layer's outputs (after its activation; the output after softmax), rows x width */
  outputs: Matrix[];
  /** the gradient of the mean loss, flat, PyTorch's order */
  gradient: Float32Array;
}

/** Rows per copy into WASM memory when predicting: bounds what a call holds there at once. */
const ROWS_PER_PASS = 4096;

const ACTIVATION_CODE = codeTable('nn_activation');
const LOSS_CODE = codeTable('nn_loss');
const INIT_CODE = codeTable('nn_init');
const OPTIMIZER_CODE = codeTable('nn_optimizer');
const TARGET_CODE = codeTable('nn_targets');

const NETWORK_LABEL: HandleLabel = { what: 'this network', renew: 'make a new one', redo: 'make it again' };
const SET_LABEL: HandleLabel = { what: 'this training set', renew: 'attach the data again', redo: 'attach the data again' };
const OPTIMIZER_LABEL: HandleLabel = { what: 'this optimizer', renew: 'make a new one with network.optimizer()', redo: 'make it again' };

/** The parameter count of layer widths (weights and biases). */
export function parameterCount(sizes: readonly number[]): number {
  let n = 0;
  for (let i = 1; i < sizes.length; i++) n += sizes[i - 1]! * sizes[i]! + sizes[i]!;
  return n;
}

/**
 * Layer widths, input and output included: 2 to LIMITS.networkLayers + 1 of
 * them, each in [1, LIMITS.layerWidth], and at most LIMITS.networkParameters
 * parameters in all. Read under guard (a caller's array) and copied, frozen.
 * A model checks the widths it builds from data (its input, its classes) here too.
 * @internal
 */
export function networkSizes(given: unknown): readonly number[] {
  const count = requireLength('sizes', given, LIMITS.networkLayers + 1);
  if (count < 2) throw new InvalidParameterError(`sizes must hold at least an input and an output width, got ${formatValue(given)}`);
  const raw = guardRead('sizes', () => Array.from({ length: count }, (_, i) => (given as readonly unknown[])[i]));
  const sizes = raw.map((s, i) => requireInteger(`sizes[${i}]`, s, 1, LIMITS.layerWidth));
  const n = parameterCount(sizes);
  if (n > LIMITS.networkParameters) {
    throw new InvalidParameterError(
      `a ${sizes.join('-')} network has ${n} parameters; at most ${LIMITS.networkParameters} fit (LIMITS.networkParameters: parameters, gradients and optimizer state must fit in WASM memory's 4 GiB). Use narrower layers`,
    );
  }
  return Object.freeze(sizes);
}

/** A network's spec (NetworkSpec), checked once: by the Network constructor, or by check() at a public edge that makes networks. */
export const networkSpecOptions = defineOptions<NetworkSpec>()({
  sizes: v.pipe(v.unknown(), v.transform(networkSizes)),
  activation: atoms.oneOf(ACTIVATIONS),
  outputActivation: atoms.oneOf(OUTPUT_ACTIVATIONS),
  loss: atoms.oneOf(LOSSES),
  init: atoms.optional(atoms.oneOf(INITS), 'pytorch'),
  seed: atoms.optional(atoms.seed()),
});

/** A network spec as checking resolves it: plain values, frozen, init filled in. */
export type ResolvedNetworkSpec = Readonly<Required<Omit<NetworkSpec, 'seed'>> & { seed?: number }>;

/** A spec checked and copied: plain values, frozen (as it is when check() made it). @internal */
export function resolveNetworkSpec(spec: NetworkSpec): ResolvedNetworkSpec {
  if (spec === null || typeof spec !== 'object') throw new InvalidParameterError(`a network spec must be an object like { sizes, activation, outputActivation, loss }, got ${formatValue(spec)}`);
  return networkSpecOptions.check(spec, 'spec');
}

/**
 * The spec of a network a model builds from its resolved options: only the
 * widths, which come from the data (its features, its classes), are checked.
 * @internal
 */
export function trustedNetworkSpec(sizes: readonly number[], o: Omit<ResolvedNetworkSpec, 'sizes'>): ResolvedNetworkSpec {
  return networkSpecOptions.trust({ ...o, sizes: networkSizes(sizes) });
}

/** An optimizer's spec (OptimizerSpec, torch.optim's defaults), checked once: by network.optimizer(), or by check() at a public edge. */
export const optimizerOptions = defineOptions<OptimizerSpec>()(
  {
    // the name first, in the words it always had ("optimizer name", not "name")
    name: v.pipe(v.unknown(), v.transform((x) => requireOneOf('optimizer name', x, OPTIMIZERS))),
    learningRate: atoms.learningRate(),
    momentum: atoms.optional(atoms.number(0), 0),
    dampening: atoms.optional(atoms.number(0), 0),
    nesterov: atoms.optional(atoms.flag(), false),
    weightDecay: atoms.optional(atoms.number(0), 0),
    beta1: atoms.optional(atoms.decayRate(), 0.9),
    beta2: atoms.optional(atoms.decayRate(), 0.999),
    eps: atoms.optional(atoms.number(0), 1e-8),
  },
  (r): Required<OptimizerSpec> => {
    if (r.name === 'sgd' && r.nesterov && (r.momentum <= 0 || r.dampening !== 0)) {
      throw new InvalidParameterError(`Nesterov momentum needs momentum > 0 and dampening 0, got momentum ${r.momentum} and dampening ${r.dampening}`);
    }
    return r;
  },
);

/** Every field of OptimizerSpec. @internal */
export const OPTIMIZER_KEYS = optimizerOptions.keys;

/** An optimizer spec checked (the core checks the ranges again). @internal */
export function resolveOptimizerSpec(spec: OptimizerSpec): Readonly<Required<OptimizerSpec>> {
  if (spec === null || typeof spec !== 'object') throw new InvalidParameterError(`an optimizer spec must be an object like { name: 'adam', learningRate: 1e-3 }, got ${formatValue(spec)}`);
  return optimizerOptions.check(spec, 'optimizer');
}

/** torch.optim's defaults, for trustedOptimizerSpec. */
const OPTIMIZER_DEFAULTS: Required<OptimizerSpec> = { name: 'adam', learningRate: 1e-3, momentum: 0, dampening: 0, nesterov: false, weightDecay: 0, beta1: 0.9, beta2: 0.999, eps: 1e-8 };

/**
 * The spec of an optimizer a model builds from its resolved options (each
 * value checked there), the defaults under it: resolved without checking
 * again. @internal
 */
export function trustedOptimizerSpec(spec: OptimizerSpec): Readonly<Required<OptimizerSpec>> {
  return optimizerOptions.trust({ ...OPTIMIZER_DEFAULTS, ...spec });
}

/**
 * Writes rows r0..r0 + rows of x (column-major f64) at `ptr` as f32 row-major,
 * refusing a value that is not finite as f32 (NaN, Infinity, beyond ±3.4e38).
 */
function writeRows(w: WasmExports, ptr: number, x: Matrix, r0: number, rows: number, what: string): void {
  const d = x.nCols;
  const n = x.nRows;
  const out = new Float32Array(w.memory.buffer, ptr, rows * d);
  const data = x.data;
  for (let j = 0; j < d; j++) {
    const col = j * n + r0;
    for (let i = 0; i < rows; i++) out[i * d + j] = data[col + i]!;
  }
  for (let k = 0; k < out.length; k++) {
    if (!Number.isFinite(out[k]!)) {
      const i = Math.floor(k / d);
      const v = data[(k % d) * n + r0 + i]!;
      throw new InvalidDataError(
        `${what} row ${r0 + i}, column ${k % d} is ${formatValue(v)}${Number.isFinite(v) ? ', beyond the f32 range (±3.4e38) networks compute in' : ''}; remove or impute non-finite values`,
      );
    }
  }
}

/** n x width f32 row-major at `ptr` as a Matrix (column-major f64). */
function readRows(w: WasmExports, ptr: number, n: number, width: number, into?: { m: Matrix; r0: number }): Matrix {
  const src = new Float32Array(w.memory.buffer, ptr, n * width);
  const m = into?.m ?? Matrix.zeros(n, width);
  const r0 = into?.r0 ?? 0;
  const N = m.nRows;
  for (let i = 0; i < n; i++) for (let j = 0; j < width; j++) m.data[j * N + r0 + i] = src[i * width + j]!;
  return m;
}

/** A Float32Array of `n` values read from `value` (a vector the caller passed). */
function requireF32(name: string, value: unknown, n: number): Float32Array {
  const len = requireLength(name, value, LIMITS.networkParameters);
  if (len !== n) throw new InvalidParameterError(`${name} has ${len} values; the network has ${n} parameters`);
  const a = value as ArrayLike<unknown>;
  const out = new Float32Array(n);
  guardRead(name, () => {
    for (let i = 0; i < n; i++) {
      const v = a[i];
      if (typeof v !== 'number') throw new InvalidParameterError(`${name} must be numbers; ${name}[${i}] is ${formatValue(v)}`);
      out[i] = v;
    }
  });
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(out[i]!)) throw new InvalidParameterError(`${name}[${i}] is ${formatValue(a[i])}; every value must be finite (as f32)`);
  }
  return out;
}

/** Every set and optimizer this module made: brands that a Proxy cannot fake nor make throw. */
const madeSets = new WeakSet<object>();
const madeOptimizers = new WeakSet<object>();

class ResidentSet implements TrainingSet {
  /** @internal */
  readonly owned: OwnedHandle;
  readonly nRows: number;
  readonly nFeatures: number;

  constructor(handle: number, nRows: number, nFeatures: number) {
    this.owned = new OwnedHandle(handle, (w, p) => w.fm_nn_set_free(p), SET_LABEL);
    this.nRows = nRows;
    this.nFeatures = nFeatures;
    madeSets.add(this);
  }

  dispose(): void {
    this.owned.dispose();
  }
}

/** Momentum or Adam's moments and step count, in WASM memory, for one network's parameters. */
export class Optimizer {
  readonly spec: Readonly<Required<OptimizerSpec>>;
  /** @internal */
  readonly owned: OwnedHandle;

  /** @internal use network.optimizer(spec) */
  constructor(handle: number, spec: Required<OptimizerSpec>) {
    this.spec = Object.freeze({ ...spec });
    this.owned = new OwnedHandle(handle, (w, p) => w.fm_nn_optimizer_free(p), OPTIMIZER_LABEL);
    madeOptimizers.add(this);
  }

  /** Optimizer steps taken since creation or the last reset (one per batch). */
  get steps(): number {
    return instance().exports.fm_nn_optimizer_steps(this.owned.ptr);
  }

  /** Forgets the momentum, the moments and the step count (a fresh torch optimizer). */
  reset(): void {
    instance().exports.fm_nn_optimizer_reset(this.owned.ptr);
  }

  dispose(): void {
    this.owned.dispose();
  }
}

function setOf(set: unknown): ResidentSet {
  if (set === null || typeof set !== 'object' || !madeSets.has(set)) throw new InvalidParameterError(`expected a TrainingSet from network.attach(), got ${formatValue(set)}`);
  return set as ResidentSet;
}

function optimizerOf(opt: unknown): Optimizer {
  if (opt === null || typeof opt !== 'object' || !madeOptimizers.has(opt)) throw new InvalidParameterError(`expected an Optimizer from network.optimizer(), got ${formatValue(opt)}`);
  return opt as Optimizer;
}

export class Network {
  static {
    keepClassName(this, 'Network');
  }

  readonly spec: NetworkSpec;
  readonly nParameters: number;
  private readonly owned: OwnedHandle;

  /** The spec checked here, unless it is what networkSpecOptions.check() (or trustedNetworkSpec) returned. */
  constructor(spec: NetworkSpec) {
    const s = resolveNetworkSpec(spec);
    this.spec = s;
    this.nParameters = parameterCount(s.sizes);
    // parameters and gradients
    requireWasmMemory(`a ${s.sizes.join('-')} network`, 8 * this.nParameters);
    const [lo, hi] = seedParts(s.seed);
    const handle = withScope((sc) => {
      const out = sc.u32(1);
      sc.check(
        sc.w.fm_nn_new(
          sc.u32From(s.sizes),
          sc.struct(NN_NEW_OPTIONS, {
            nSizes: s.sizes.length, hidden: ACTIVATION_CODE[s.activation], output: ACTIVATION_CODE[s.outputActivation], loss: LOSS_CODE[s.loss],
            init: INIT_CODE[s.init], seedLo: lo, seedHi: hi,
          }),
          out,
        ),
      );
      return sc.readU32(out, 1)[0]!;
    });
    this.owned = new OwnedHandle(handle, (w, p) => w.fm_nn_free(p), NETWORK_LABEL);
  }

  /** Number of inputs (the first width). */
  get nInputs(): number {
    return this.spec.sizes[0]!;
  }

  /** Number of outputs (the last width). */
  get nOutputs(): number {
    return this.spec.sizes[this.spec.sizes.length - 1]!;
  }

  get disposed(): boolean {
    return this.owned.disposed;
  }

  /** A copy of the parameters: flat, PyTorch's order. */
  getParameters(): Float32Array {
    const h = this.owned.ptr;
    requireWasmMemory('reading the parameters', 4 * this.nParameters);
    return withScope((s) => {
      const out = s.alloc(4 * this.nParameters);
      s.w.fm_nn_get_parameters(h, out);
      return new Float32Array(s.w.memory.buffer, out, this.nParameters).slice();
    });
  }

  /** The gradient of the last batch trained or passed to gradient(): flat, PyTorch's order. */
  getGradients(): Float32Array {
    const h = this.owned.ptr;
    requireWasmMemory('reading the gradients', 4 * this.nParameters);
    return withScope((s) => {
      const out = s.alloc(4 * this.nParameters);
      s.w.fm_nn_get_gradients(h, out);
      return new Float32Array(s.w.memory.buffer, out, this.nParameters).slice();
    });
  }

  /** Replaces the parameters (rounded to f32): exactly nParameters finite values. */
  setParameters(p: ArrayLike<number>): void {
    const h = this.owned.ptr;
    const values = requireF32('parameters', p, this.nParameters);
    requireWasmMemory('setting the parameters', 4 * this.nParameters);
    withScope((s) => {
      const ptr = s.alloc(4 * this.nParameters);
      new Float32Array(s.w.memory.buffer, ptr, this.nParameters).set(values);
      s.check(s.w.fm_nn_set_parameters(h, ptr, this.nParameters));
    });
  }

  /**
   * Copies rows and their targets into WASM memory for training and
   * evaluation, once: `targets` a Matrix shaped as the outputs (mse, bce),
   * an Int32Array of class labels 0..nOutputs - 1 (softmax-cross-entropy),
   * or X itself (an autoencoder: the rows are not stored twice).
   */
  attach(X: MatrixLike, targets: MatrixLike | Int32Array): TrainingSet {
    const h = this.owned.ptr;
    const x = Matrix.from(X);
    const d = this.nInputs;
    if (x.nCols !== d) throw new InvalidDataError(`X has ${x.nCols} columns but the network (${this.spec.sizes.join('-')}) takes ${d} inputs`);
    if (x.nRows < 1) throw new InvalidDataError('X has no rows; training needs at least one');
    let kind: 'values' | 'labels' | 'inputs';
    let t: Matrix | Int32Array | undefined;
    if (targets === X || targets === x) {
      kind = 'inputs';
    } else if (guardRead('targets', () => targets instanceof Int32Array, InvalidDataError)) {
      kind = 'labels';
      t = targets as Int32Array;
      if (t.length !== x.nRows) throw new InvalidDataError(`there are ${t.length} labels for ${x.nRows} rows; pass one label per row`);
    } else {
      kind = 'values';
      t = Matrix.from(targets as MatrixLike);
      if (t.nRows !== x.nRows) throw new InvalidDataError(`the targets have ${t.nRows} rows for ${x.nRows} rows of X; pass one target row per row`);
    }
    const width = kind === 'values' ? (t as Matrix).nCols : kind === 'labels' ? 1 : d;
    const bytes = 4 * x.nRows * (d + 1 + (kind === 'values' ? width : kind === 'labels' ? 1 : 0));
    requireWasmMemory(`attaching ${x.nRows} rows of ${d} features`, bytes);
    const w = instance().exports;
    const handle = withScope((s) => {
      const out = s.u32(1);
      s.check(w.fm_nn_set_new(x.nRows, d, TARGET_CODE[kind], width, out));
      return s.readU32(out, 1)[0]!;
    });
    const set = new ResidentSet(handle, x.nRows, d);
    try {
      writeRows(w, w.fm_nn_set_inputs(handle) >>> 0, x, 0, x.nRows, 'X');
      const tp = w.fm_nn_set_targets(handle) >>> 0;
      if (kind === 'values') writeRows(w, tp, t as Matrix, 0, x.nRows, 'the targets');
      if (kind === 'labels') new Int32Array(w.memory.buffer, tp, x.nRows).set(t as Int32Array);
      withScope((s) => {
        s.check(w.fm_nn_set_seal(handle));
        s.check(w.fm_nn_set_check(h, handle));
      });
    } catch (e) {
      set.dispose();
      throw e;
    }
    return set;
  }

  /** An optimizer for this network's parameters (state in WASM memory until dispose()); the spec checked, unless resolved (optimizerOptions). */
  optimizer(spec: OptimizerSpec): Optimizer {
    const h = this.owned.ptr;
    const o = resolveOptimizerSpec(spec);
    requireWasmMemory(`an ${o.name} optimizer for ${this.nParameters} parameters`, 8 * this.nParameters);
    const handle = withScope((s) => {
      const out = s.u32(1);
      s.check(
        s.w.fm_nn_optimizer_new(
          h,
          s.struct(NN_OPTIMIZER_NEW_OPTIONS, {
            kind: OPTIMIZER_CODE[o.name], lr: o.learningRate, momentum: o.momentum, dampening: o.dampening, nesterov: o.nesterov ? 1 : 0,
            weightDecay: o.weightDecay, beta1: o.beta1, beta2: o.beta2, eps: o.eps,
          }),
          out,
        ),
      );
      return s.readU32(out, 1)[0]!;
    });
    return new Optimizer(handle, o);
  }

  /**
   * One epoch over the set: batches in a random order (options.seed) or
   * options.order, one optimizer step per batch. Returns the mean training
   * loss over the epoch's batches, weighted by their rows (each batch's loss
   * taken before its step).
   */
  trainEpoch(set: TrainingSet, opt: Optimizer, options: TrainOptions): number {
    const h = this.owned.ptr;
    const rs = setOf(set);
    const op = optimizerOf(opt);
    const [sh, oh] = [rs.owned.ptr, op.owned.ptr];
    if (options === null || typeof options !== 'object') throw new InvalidParameterError(`trainEpoch needs options { batchSize, seed }, got ${formatValue(options)}`);
    const o = readOptions(options, ['batchSize', 'seed', 'proximal', 'correction', 'order', 'l2']);
    const batch = requireInteger('batchSize', o.batchSize, 1, LIMITS.count);
    if (batch > rs.nRows) throw new InvalidParameterError(`batchSize ${batch} is larger than the training set's ${rs.nRows} rows; use at most ${rs.nRows}`);
    if (o.seed === undefined) throw new InvalidParameterError('trainEpoch needs a seed for the epoch\'s shuffle (e.g. the epoch number)');
    const [lo, hi] = seedParts(o.seed);
    const l2 = requireNumber('l2', o.l2 ?? 0, 0);
    let mu = 0;
    let anchor: Float32Array | undefined;
    if (o.proximal !== undefined) {
      const p = readOptions(o.proximal, ['mu', 'anchor'], 'proximal');
      mu = requireNumber('proximal.mu', p.mu, 0);
      anchor = requireF32('proximal.anchor', p.anchor, this.nParameters);
    }
    const correction = o.correction === undefined ? undefined : requireF32('correction', o.correction, this.nParameters);
    let order: Uint32Array | undefined;
    if (o.order !== undefined) {
      const len = requireLength('order', o.order, LIMITS.count);
      if (len !== rs.nRows) throw new InvalidParameterError(`order has ${len} entries; the training set has ${rs.nRows} rows`);
      const src = o.order;
      order = guardRead('order', () => Uint32Array.from({ length: len }, (_, i) => requireInteger(`order[${i}]`, src[i], 0, rs.nRows - 1)));
    }
    const w = instance().exports;
    requireWasmMemory(`training on batches of ${batch} rows`, w.fm_nn_call_bytes(h, batch) + 4 * rs.nRows + 8 * this.nParameters);
    return withScope((s) => {
      const vec = (v: Float32Array | undefined): [number, number] => {
        if (!v) return [0, 0];
        const ptr = s.alloc(4 * v.length);
        new Float32Array(s.w.memory.buffer, ptr, v.length).set(v);
        return [ptr, v.length];
      };
      const [ap, al] = vec(anchor);
      const [cp, cl] = vec(correction);
      const [op2, ol] = order ? [s.u32From(order), order.length] : [0, 0];
      const out = s.f64(1);
      const epoch = s.struct(NN_TRAIN_EPOCH_OPTIONS, { batch, seedLo: lo, seedHi: hi, orderLen: ol, l2, mu, anchorLen: al, correctionLen: cl });
      s.check(s.w.fm_nn_train_epoch(h, sh, oh, epoch, op2, ap, cp, out));
      return s.readF64(out, 1)[0]!;
    });
  }

  /** The mean loss over every row of the set (PyTorch's 'mean' reduction over all of it). */
  evaluate(set: TrainingSet): number {
    const h = this.owned.ptr;
    const rs = setOf(set);
    const sh = rs.owned.ptr;
    const w = instance().exports;
    requireWasmMemory(`evaluating ${rs.nRows} rows`, w.fm_nn_call_bytes(h, Math.min(rs.nRows, 256)));
    return withScope((s) => {
      const out = s.f64(1);
      s.check(s.w.fm_nn_evaluate(h, sh, out));
      return s.readF64(out, 1)[0]!;
    });
  }

  /**
   * Runs the rows of x through `each`, ROWS_PER_PASS at a time, copied into
   * WASM memory (f32, row-major); `setup` first allocates the outputs.
   */
  private passes(x: Matrix, outBytesPerRow: number, what: string, setup: (s: Scope, rows: number) => void, each: (s: Scope, xPtr: number, r0: number, rows: number) => void): void {
    const h = this.owned.ptr;
    if (x.nCols !== this.nInputs) throw new InvalidDataError(`X has ${x.nCols} columns but the network (${this.spec.sizes.join('-')}) takes ${this.nInputs} inputs`);
    if (x.nRows < 1) throw new InvalidDataError('X has no rows');
    const rows = Math.min(x.nRows, ROWS_PER_PASS);
    const w = instance().exports;
    requireWasmMemory(`${what} ${x.nRows} rows`, rows * (4 * this.nInputs + outBytesPerRow) + w.fm_nn_call_bytes(h, Math.min(rows, 256)));
    withScope((s) => {
      const xp = s.alloc(4 * rows * this.nInputs);
      setup(s, rows);
      for (let r0 = 0; r0 < x.nRows; r0 += rows) {
        const len = Math.min(rows, x.nRows - r0);
        writeRows(s.w, xp, x, r0, len, 'X');
        each(s, xp, r0, len);
      }
    });
  }

  /** The outputs of layer `layer` (1 = the first hidden layer; the last = the output, after its activation) for every row of X. */
  layerOutputs(X: MatrixLike, layer: number): Matrix {
    const h = this.owned.ptr;
    requireInteger('layer', layer, 1, this.spec.sizes.length - 1);
    const x = Matrix.from(X);
    const width = this.spec.sizes[layer]!;
    if (x.nRows * width > LIMITS.values) {
      throw new InvalidDataError(`the outputs of ${x.nRows} rows would hold ${x.nRows * width} values; at most ${LIMITS.values} fit in one Matrix: pass fewer rows`);
    }
    const result = Matrix.zeros(x.nRows, width);
    let out = 0;
    this.passes(
      x,
      4 * width,
      'computing the outputs of',
      (s, rows) => (out = s.alloc(4 * rows * width)),
      (s, xp, r0, rows) => {
        s.check(s.w.fm_nn_predict(h, xp, rows, layer, out));
        readRows(s.w, out, rows, width, { m: result, r0 });
      },
    );
    return result;
  }

  /** The network's outputs (after the output activation) for every row of X: n x nOutputs. */
  predict(X: MatrixLike): Matrix {
    return this.layerOutputs(X, this.spec.sizes.length - 1);
  }

  /** Per-row mean squared error between each row of X and the network's output for it (nOutputs = nInputs). */
  reconstructionErrors(X: MatrixLike): Float64Array {
    const h = this.owned.ptr;
    if (this.nOutputs !== this.nInputs) throw new InvalidParameterError(`reconstruction errors need as many outputs as inputs; this network is ${this.spec.sizes.join('-')}`);
    const x = Matrix.from(X);
    const result = new Float64Array(x.nRows);
    let out = 0;
    this.passes(
      x,
      8,
      'reconstructing',
      (s, rows) => (out = s.f64(rows)),
      (s, xp, r0, rows) => {
        s.check(s.w.fm_nn_reconstruction_errors(h, xp, rows, out));
        result.set(s.readF64(out, rows), r0);
      },
    );
    return result;
  }

  /**
   * One batch's forward and backward pass without a step (for checks against
   * PyTorch): the loss, every layer's outputs and the gradient. Targets as in attach().
   */
  gradient(X: MatrixLike, targets: MatrixLike | Int32Array): BatchGradient {
    const h = this.owned.ptr;
    const x = Matrix.from(X);
    const L = this.spec.sizes.length - 1;
    if (x.nCols !== this.nInputs) throw new InvalidDataError(`X has ${x.nCols} columns but the network takes ${this.nInputs} inputs`);
    if (x.nRows < 1) throw new InvalidDataError('X has no rows');
    const labels = guardRead('targets', () => targets instanceof Int32Array, InvalidDataError) ? (targets as Int32Array) : undefined;
    const t = labels ? undefined : targets === X ? x : Matrix.from(targets as MatrixLike);
    if (labels && labels.length !== x.nRows) throw new InvalidDataError(`there are ${labels.length} labels for ${x.nRows} rows`);
    if (t && (t.nRows !== x.nRows || t.nCols !== this.nOutputs)) throw new InvalidDataError(`the targets are ${t.nRows} x ${t.nCols}; expected ${x.nRows} x ${this.nOutputs}`);
    const n = x.nRows;
    const widths = this.spec.sizes.slice(1);
    const total = widths.reduce((a, b) => a + b * n, 0);
    const w = instance().exports;
    requireWasmMemory(`the gradient of ${n} rows`, 4 * (n * (this.nInputs + this.nOutputs) + total + this.nParameters) + w.fm_nn_call_bytes(h, n));
    return withScope((s) => {
      const xp = s.alloc(4 * n * this.nInputs);
      writeRows(s.w, xp, x, 0, n, 'X');
      let tp = 0;
      let lp = 0;
      if (t) {
        tp = s.alloc(4 * n * this.nOutputs);
        writeRows(s.w, tp, t, 0, n, 'the targets');
      } else {
        lp = s.alloc(4 * n);
        new Int32Array(s.w.memory.buffer, lp, n).set(labels!);
      }
      const outs = s.alloc(4 * total);
      const loss = s.f64(1);
      s.check(s.w.fm_nn_batch_gradient(h, xp, n, tp, lp, outs, loss));
      const outputs: Matrix[] = [];
      let at = outs;
      for (let l = 0; l < L; l++) {
        outputs.push(readRows(s.w, at, n, widths[l]!));
        at += 4 * n * widths[l]!;
      }
      const g = s.alloc(4 * this.nParameters);
      s.w.fm_nn_get_gradients(h, g);
      return { loss: s.readF64(loss, 1)[0]!, outputs, gradient: new Float32Array(s.w.memory.buffer, g, this.nParameters).slice() };
    });
  }

  /** Frees the network's WASM memory. Its training sets and optimizers are separate objects: dispose them too. */
  dispose(): void {
    this.owned.dispose();
  }

  /** The spec (without its seed: the parameters are saved) and the parameters, as JSON; Network.fromJSON reads it back. */
  toJSON(): NetworkJSON {
    const { sizes, activation, outputActivation, loss } = this.spec;
    return { format: 'fedmix.Network', version: 1, spec: { sizes: [...sizes], activation, outputActivation, loss }, parameters: Array.from(this.getParameters()) };
  }

  /**
   * A network saved with toJSON() (the object or its text): the spec checked
   * as the constructor checks it, then exactly its parameter count of finite
   * values (else an InvalidParameterError; nothing is left allocated).
   */
  static fromJSON(json: NetworkJSON | string): Network {
    const j = readModelJSON(json, 'fedmix.Network', ['spec', 'parameters']);
    if (j.spec === undefined) throw new InvalidParameterError('not a fedmix.Network JSON: it has no spec { sizes, activation, outputActivation, loss }');
    const given = readRecord(j.spec as NetworkSpec, ['sizes', 'activation', 'outputActivation', 'loss'], 'spec') as NetworkSpec;
    const net = new Network(given);
    try {
      net.setParameters(j.parameters as ArrayLike<number>);
    } catch (e) {
      net.dispose();
      throw e;
    }
    return net;
  }
}

/** A network as toJSON() saves it. */
export interface NetworkJSON {
  format: 'fedmix.Network';
  version: 1;
  spec: Pick<NetworkSpec, 'sizes' | 'activation' | 'outputActivation' | 'loss'>;
  parameters: number[];
}

/** What an estimator's fit loop needs (see trainEpochs). @internal */
export interface EpochLoop {
  epochs: number;
  batchSize: number;
  /** base of the epochs' shuffle seeds */
  seed: number;
  /** false: every epoch takes the rows in their order (scikit-learn's shuffle=False) */
  shuffle: boolean;
  /** epochs trained before (the shuffle seeds go on from there) */
  firstEpoch?: number;
  l2?: number;
  /** called after every epoch with its number (from 1) and mean loss; returning false stops training */
  onEpoch?: (epoch: number, loss: number) => unknown;
  /** after onEpoch: whether to stop (scikit-learn's no-improvement rule) */
  stop?: (loss: number) => boolean;
}

/** The shuffle seed of epoch e (from 0) under base seed s: distinct per epoch, a safe integer. @internal */
export function epochSeed(s: number, e: number): number {
  return (s + (e + 1) * 0x9e3779b1) % 2 ** 52;
}

/**
 * Trains epochs on a resident set; returns the epochs' mean losses. A loss
 * that is not finite stops it with a NumericalError (the caller restores
 * what it had); so does the callback's `false`, without an error.
 * @internal
 */
export function trainEpochs(net: Network, set: TrainingSet, opt: Optimizer, o: EpochLoop): number[] {
  const losses: number[] = [];
  const identity = o.shuffle ? undefined : Uint32Array.from({ length: set.nRows }, (_, i) => i);
  for (let e = 0; e < o.epochs; e++) {
    const loss = net.trainEpoch(set, opt, { batchSize: o.batchSize, seed: epochSeed(o.seed, (o.firstEpoch ?? 0) + e), order: identity, l2: o.l2 ?? 0 });
    if (!Number.isFinite(loss)) {
      throw new NumericalError(`training diverged in epoch ${e + 1}: the loss is ${loss}; lower the learning rate (or scale the data)`);
    }
    losses.push(loss);
    if (o.onEpoch && o.onEpoch(e + 1, loss) === false) break;
    if (o.stop?.(loss)) break;
  }
  // the last step may have left non-finite parameters that no epoch's loss showed
  if (net.getParameters().some((v) => !Number.isFinite(v))) {
    throw new NumericalError('training diverged: the parameters are no longer finite; lower the learning rate (or scale the data)');
  }
  return losses;
}

/**
 * A model's JSON (an object or its text) read once: `format` and version 1
 * checked, `keys` read under guard. @internal
 */
export function readModelJSON<K extends string>(json: unknown, format: string, keys: readonly K[]): Partial<Record<K, unknown>> {
  let parsed: unknown = json;
  if (typeof json === 'string') {
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new InvalidParameterError(`not a ${format} JSON: the text is not JSON (it starts ${formatValue(json.slice(0, 20))})`);
    }
  }
  if (parsed === null || typeof parsed !== 'object') throw new InvalidParameterError(`not a ${format} JSON: expected an object with format "${format}", got ${formatValue(parsed)}`);
  const j = readRecord(parsed as Record<K | 'format' | 'version', unknown>, ['format', 'version', ...keys], 'the JSON');
  if (j.format !== format) throw new InvalidParameterError(`not a ${format} JSON: format must be "${format}", got ${formatValue(j.format)}`);
  if (j.version !== 1) throw new InvalidParameterError(`unsupported ${format} JSON version ${formatValue(j.version)}; this fedmix reads version 1 (the number)`);
  return j as Partial<Record<K, unknown>>;
}

/** The batch size of a fit on n rows: `given`, at most n, or min(dflt, n) when not given. @internal */
export function batchFor(given: number | undefined, dflt: number, n: number): number {
  if (given === undefined) return Math.min(dflt, n);
  if (given > n) throw new InvalidParameterError(`batchSize ${given} is larger than the ${n} rows of X; use at most ${n}`);
  return given;
}

/** A finite, non-negative seed for the shuffles: the given one, or one drawn now. @internal */
export function baseSeed(seed: number | undefined): number {
  return seed ?? Math.floor(Math.random() * 2 ** 52);
}
