/**
 * The FedAvg family's server roles, one averaging loop with three rules:
 *
 *   FedAvgServer    McMahan et al. (2017): each round the sampled clients (the
 *                   runtime's `fraction`) train E epochs of batch B from the
 *                   global parameters; the new global parameters are their
 *                   parameters averaged, weighted by their row counts.
 *   FedProxServer   Li et al. (2020): the same, with mu (w - w_global) added to
 *                   every local gradient (mu = 0 is FedAvg bit for bit).
 *   ScaffoldServer  Karimireddy et al. (2020): control variates correct the
 *                   local gradients (g - c_i + c); x += eta_g (mean y_i - x),
 *                   c += (1/N) sum of the clients' control changes, N the
 *                   clients taking part in the federation.
 *
 * The average is taken in double precision and rounded to f32 once. Robust
 * rules (coordinate-wise median, trimmed mean: ts/federated/robust.ts) replace
 * it when clients may be hostile; an aggregate that is not finite is blamed on
 * the client whose parameters are out of scale (a ContributionError: the
 * runtime excludes it and averages again).
 */
import { ContributionError, formatValue, InvalidParameterError, NumericalError } from '../../errors.js';
import { resolveEarlyStopping, type EarlyStopping, type EarlyStoppingOptions } from '../../models/early-stopping.js';
import { Network, OPTIMIZER_KEYS, type NetworkSpec, type OptimizerSpec } from '../../models/network.js';
import { optionKeys, readOptions, readRecord, requireInteger, requireNumber, requireOneOf, requirePositive, LIMITS } from '../../validate.js';
import type { Message } from '../messages/envelope.js';
import { coordinateMedian, outliers, trimmedMean } from '../robust.js';
import { checkAccepted, checkContext, checkFailures, readReply, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { FEDAVG_PROTOCOL, RESULT, TRAIN, receiveUpdate, type ReceivedUpdate, type TrainPayload } from './messages.js';
import { stateMismatch } from '../registry/artifact.js';

export type FedAvgAlgorithm = 'fedavg' | 'fedprox' | 'scaffold';

export interface FedAvgServerOptions {
  /** the network every client trains (its init and seed make the starting parameters) */
  network: NetworkSpec;
  /** starting parameters instead of the network's seeded initialization */
  initialParameters?: ArrayLike<number>;
  /** communication rounds (default 10) */
  rounds?: number;
  /** E, local epochs per round (default 5) */
  epochs?: number;
  /** B, the local batch size (default 32; a client with fewer rows uses them all) */
  batchSize?: number;
  /** the local optimizer, fresh each round (default DEFAULT_OPTIMIZER: Adam at 0.01 for FedAvg and FedProx, plain SGD at 0.3 for SCAFFOLD) */
  optimizer?: OptimizerSpec;
  /** how replies are weighted: by row count (default) or equally (SCAFFOLD's default, as its paper) */
  weighting?: 'samples' | 'uniform';
  /** 'mean' (default), or a robust rule: 'median' (coordinate-wise) or 'trimmed-mean' */
  aggregation?: 'mean' | 'median' | 'trimmed-mean';
  /** the share cut from each end by 'trimmed-mean' (default 0.1) */
  trim?: number;
  /**
   * early stopping of every client's local epochs (default none: every client
   * trains all E epochs on all its rows, McMahan et al.'s FedAvg): each round
   * a client scores the global parameters, scores every epoch after, stops
   * once `patience` epochs (default 3) have not improved on the best, and
   * answers with the best epoch's parameters (the global ones if none was
   * better) and the epochs it ran. { monitor: 'validation-loss',
   * validationShare } scores the loss of that share of its rows, held out
   * (the same rows every round); { monitor: 'separation', contamination }
   * (autoencoders of anomalies) the separation of its reconstruction errors
   * at that contamination (see ts/models/early-stopping.ts). Not with SCAFFOLD.
   */
  earlyStopping?: EarlyStoppingOptions;
  /** centralized evaluation after each round (Flower's evaluate_fn): metrics recorded in the round's history */
  evaluate?: (parameters: Float32Array, round: number) => Record<string, number>;
}

export interface FedProxServerOptions extends FedAvgServerOptions {
  /** the proximal weight mu >= 0 (0: FedAvg) */
  mu: number;
}

export interface ScaffoldServerOptions extends FedAvgServerOptions {
  /** eta_g, the server's step along the clients' mean change (default 1) */
  serverLearningRate?: number;
}

export interface FedAvgRound {
  round: number;
  /** replies averaged */
  clients: number;
  /** the clients' mean training loss in their last local epoch, weighted as the average is */
  loss: number;
  /** the local epochs the clients ran, mean over the replies (E without early stopping; NaN for none) */
  epochs: number;
  /** what `evaluate` returned */
  metrics?: Record<string, number>;
}

export interface FedAvgOutcome {
  algorithm: FedAvgAlgorithm;
  network: NetworkSpec;
  parameters: Float32Array;
  rounds: number;
  /** the local training every client was asked for (the defaults filled in, so a result says what ran) */
  epochs: number;
  batchSize: number;
  optimizer: OptimizerSpec;
  history: FedAvgRound[];
}

/** Every option of FedAvgServerOptions, for readOptions (the compiler checks it is complete). */
export const FEDAVG_SERVER_KEYS = optionKeys<FedAvgServerOptions>()({ network: true, initialParameters: true, rounds: true, epochs: true, batchSize: true, optimizer: true, weighting: true, aggregation: true, trim: true, earlyStopping: true, evaluate: true });
const FEDPROX_KEYS: readonly (keyof FedProxServerOptions)[] = [...FEDAVG_SERVER_KEYS, 'mu'];
const SCAFFOLD_KEYS: readonly (keyof ScaffoldServerOptions)[] = [...FEDAVG_SERVER_KEYS, 'serverLearningRate'];

/**
 * Each algorithm's local optimizer when none is given. Measured on satellite,
 * letter, abalone and pendigits (10 clients, IID and Dirichlet 0.3, 10 rounds
 * of E = 5; EXPERIMENTS.md, honest-federation matrix): the former plain SGD at
 * 0.01 with E = 1 barely left the initialization (satellite 0.04 against a
 * central MLP's 0.86); Adam at 0.01 reaches 0.84, and is the best of Adam at
 * 1e-3, 3e-3 and 1e-2 and SGD at 0.1 with or without momentum on every set.
 * SCAFFOLD's control variates assume plain SGD steps, and there 0.3 did best
 * of 0.03-0.5 (satellite 0.82, letter 0.37 where 0.01 gave 0.05).
 */
export const DEFAULT_OPTIMIZER: Readonly<Record<FedAvgAlgorithm, Readonly<OptimizerSpec>>> = {
  fedavg: { name: 'adam', learningRate: 0.01 },
  fedprox: { name: 'adam', learningRate: 0.01 },
  scaffold: { name: 'sgd', learningRate: 0.3 },
};

/** E, local epochs per round, when none is given (the FedAvg paper's E = 5) */
export const DEFAULT_EPOCHS = 5;

/** The base: FedAvg itself, and the loop FedProx and SCAFFOLD reuse. */
export class FedAvgServer implements ServerRole<ReceivedUpdate, FedAvgOutcome> {
  readonly protocol = FEDAVG_PROTOCOL;
  readonly algorithm: FedAvgAlgorithm = 'fedavg';
  readonly network: NetworkSpec;
  readonly nParameters: number;
  readonly rounds: number;
  readonly history: FedAvgRound[] = [];
  protected readonly epochs: number;
  protected readonly batchSize: number;
  protected readonly optimizer: OptimizerSpec;
  protected readonly weighting: 'samples' | 'uniform';
  protected readonly aggregation: 'mean' | 'median' | 'trimmed-mean';
  protected readonly trim: number;
  protected readonly earlyStopping: EarlyStopping | undefined;
  protected readonly evaluate: FedAvgServerOptions['evaluate'];
  protected parameters: Float32Array;
  private t = 0;
  /** clients blamed for a non-finite aggregate in the round being aggregated (the runtime excludes them and calls aggregate again) */
  private readonly blamed = new Set<string>();
  private phase: 'train' | 'result' | 'done';
  /** what configure() sent and accept() returned: the only values accept() and aggregate() take */
  private readonly made = new WeakSet<object>();

  /** @internal the option names this class takes (FedProx and SCAFFOLD add theirs) */
  protected static readonly optionNames: readonly string[] = FEDAVG_SERVER_KEYS;

  constructor(given: FedAvgServerOptions, defaultWeighting: 'samples' | 'uniform' = 'samples', defaultOptimizer: OptimizerSpec = DEFAULT_OPTIMIZER.fedavg) {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object like { network, rounds, epochs, batchSize, optimizer }');
    // strict, with the keys of the class being made: a misspelt option is an error, not a default
    const o = readOptions(given, (new.target as typeof FedAvgServer).optionNames as (keyof FedAvgServerOptions)[]) as FedAvgServerOptions;
    if (o.network === undefined) throw new InvalidParameterError('the server needs the network its clients train: { sizes, activation, outputActivation, loss }');
    this.rounds = requireInteger('rounds', o.rounds ?? 10, 0, LIMITS.rounds);
    this.epochs = requireInteger('epochs', o.epochs ?? DEFAULT_EPOCHS, 1, LIMITS.localSteps);
    this.batchSize = requireInteger('batchSize', o.batchSize ?? 32, 1, LIMITS.count);
    this.optimizer = checkOptimizer(o.optimizer ?? { ...defaultOptimizer });
    this.weighting = requireOneOf('weighting', o.weighting ?? defaultWeighting, ['samples', 'uniform'] as const);
    this.aggregation = requireOneOf('aggregation', o.aggregation ?? 'mean', ['mean', 'median', 'trimmed-mean'] as const);
    this.trim = requireNumber('trim', o.trim ?? 0.1, 0);
    if (!(this.trim < 0.5)) throw new InvalidParameterError(`trim is ${this.trim}; it must be below 0.5, or nothing is left to average`);
    this.earlyStopping = o.earlyStopping === undefined ? undefined : resolveEarlyStopping(o.earlyStopping);
    if (o.evaluate !== undefined && typeof o.evaluate !== 'function') throw new InvalidParameterError(`evaluate must be a function (parameters, round) => metrics, got ${formatValue(o.evaluate)}`);
    this.evaluate = o.evaluate;
    // the network checks its own description; its seeded initialization is the starting point
    const net = new Network(o.network);
    try {
      this.network = net.spec;
      this.nParameters = net.nParameters;
      if (o.initialParameters !== undefined) net.setParameters(o.initialParameters);
      this.parameters = net.getParameters();
    } finally {
      net.dispose();
    }
    if (this.earlyStopping?.monitor === 'separation' && this.network.loss === 'softmax-cross-entropy') {
      throw new InvalidParameterError("earlyStopping 'separation' watches reconstruction errors: it is for autoencoders (loss 'mse' or 'bce'), not a classifier; use 'validation-loss'");
    }
    this.phase = this.rounds > 0 ? 'train' : 'result';
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** The global parameters now (a copy). */
  get globalParameters(): Float32Array {
    return this.parameters.slice();
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    const out = new Map<string, Message>();
    if (this.phase === 'train') {
      const request = TRAIN.create('server', ctx.round, this.trainPayload());
      this.made.add(request);
      for (const id of ctx.clients) out.set(id, request);
    } else if (this.phase === 'result') {
      const result = RESULT.create('server', ctx.round, { parameters: this.parameters });
      for (const id of ctx.available) out.set(id, result);
      this.phase = 'done';
    }
    return out;
  }

  /** What every client of a round is asked (FedProx and SCAFFOLD add their fields). */
  protected trainPayload(): TrainPayload {
    const { sizes, activation, outputActivation, loss } = this.network;
    const payload: TrainPayload = { network: { sizes: [...sizes], activation, outputActivation, loss }, parameters: this.parameters, epochs: this.epochs, batchSize: this.batchSize, optimizer: { ...this.optimizer } };
    return this.earlyStopping ? { ...payload, earlyStopping: { ...this.earlyStopping } } : payload;
  }

  accept(unread: Message, request: Message): ReceivedUpdate {
    if (request === null || typeof request !== 'object' || !this.made.has(request)) {
      throw new InvalidParameterError(`accept() takes a request this server's configure() made, got ${formatValue(request)}`);
    }
    const reply = readReply(this.protocol, request, unread);
    const update = receiveUpdate(reply, this.nParameters, this.algorithm === 'scaffold', this.epochs);
    this.made.add(update);
    return update;
  }

  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, ReceivedUpdate>, failed: readonly Failure[] = []): FedAvgRound | undefined {
    const ctx = checkContext(context);
    const accepted = checkAccepted<ReceivedUpdate>(acceptedReplies, this.made);
    checkFailures(failed);
    if (this.phase !== 'train') throw new InvalidParameterError(`round ${ctx.round}: the server has nothing to aggregate`);
    const updates = [...accepted.values()];
    const weights = updates.map((u) => (this.weighting === 'samples' ? u.nSamples : 1));
    const total = weights.reduce((a, b) => a + b, 0);
    let loss = 0;
    updates.forEach((u, i) => (loss += (weights[i]! / total) * u.loss));
    if (updates.length > 0) {
      const next = this.step(this.combine(updates.map((u) => u.parameters), weights), updates, ctx);
      // before the round is counted: a blamed client's reply is taken out and aggregate() called again for the same round
      this.blameIfNotFinite(next, updates, weights, ctx);
      // a client blamed in this round has left the federation: it is not among the clients present
      this.afterStep(updates, { ...ctx, available: ctx.available.filter((id) => !this.blamed.has(id)) });
      this.parameters = next;
    }
    this.blamed.clear();
    this.t += 1;
    const epochs = updates.reduce((n, u) => n + u.epochs, 0) / updates.length;
    const summary: FedAvgRound = { round: this.t, clients: updates.length, loss: updates.length > 0 ? loss : NaN, epochs };
    if (this.evaluate) summary.metrics = this.evaluate(this.parameters.slice(), this.t);
    this.history.push(summary);
    if (this.t >= this.rounds) this.phase = 'result';
    return summary;
  }

  /** The replies' parameters combined by the aggregation rule, in double precision. */
  protected combine(vectors: Float32Array[], weights: number[]): Float64Array {
    if (this.aggregation === 'median') return coordinateMedian(vectors);
    if (this.aggregation === 'trimmed-mean') return trimmedMean(vectors, this.trim);
    const total = weights.reduce((a, b) => a + b, 0);
    const out = new Float64Array(this.nParameters);
    vectors.forEach((v, i) => {
      const w = weights[i]! / total;
      for (let j = 0; j < out.length; j++) out[j]! += w * v[j]!;
    });
    return out;
  }

  /** The new global parameters from the combined replies (FedAvg: the combination itself). */
  protected step(combined: Float64Array, _updates: ReceivedUpdate[], _ctx: RoundContext): Float32Array {
    return Float32Array.from(combined);
  }

  /** State the algorithm keeps beside the parameters, updated once the step is known to be finite. */
  protected afterStep(_updates: ReceivedUpdate[], _ctx: RoundContext): void {}

  /**
   * A new global vector with an entry past f32's range: the client far off the
   * others' scale is excluded (ContributionError) when the step without it is
   * finite, or the round fails (NumericalError).
   *
   * Honest clients are never blamed. The mean, the coordinate-wise median and
   * the trimmed mean are convex combinations of the replies' f32 values, so
   * they cannot leave f32's range (the runtime has already refused replies
   * with NaN or infinities): FedAvg's and FedProx's steps are always finite,
   * and so is SCAFFOLD's at its default server step (eta_g = 1). Only
   * SCAFFOLD's extrapolating step x + eta_g (mean y_i - x) with eta_g > 1 can
   * overflow; a client is then blamed only if its largest magnitude is
   * OUTLIER_SCALE (1000) times the others' median and the step without its
   * reply is finite, so one overflowing the others' step could not have been
   * stopped by excluding it: a federation whose honest training diverges as a
   * whole fails with a NumericalError rather than losing clients one by one.
   */
  private blameIfNotFinite(next: Float32Array, updates: ReceivedUpdate[], weights: number[], ctx: RoundContext): void {
    if (allFinite(next)) return;
    const scale = updates.map((u) => {
      let m = 0;
      for (let j = 0; j < u.parameters.length; j++) m = Math.max(m, Math.abs(u.parameters[j]!));
      return m;
    });
    const culprit = outliers(scale)[0];
    if (culprit !== undefined && updates.length > 1) {
      const others = updates.filter((_, i) => i !== culprit);
      const without = this.step(this.combine(others.map((u) => u.parameters), weights.filter((_, i) => i !== culprit)), others, ctx);
      if (allFinite(without)) {
        this.blamed.add(updates[culprit]!.client);
        throw new ContributionError(updates[culprit]!.client, `its parameters (largest magnitude ${scale[culprit]}) take the average past single precision`, 'its parameters are out of scale');
      }
    }
    throw new NumericalError(`round ${this.t + 1}: the averaged parameters leave single precision; lower the learning rate${this.algorithm === 'scaffold' ? ' or serverLearningRate' : ''}`);
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save; NaN as null). */
  saveState(): FedAvgState {
    const orNull = (x: number) => (Number.isNaN(x) ? null : x);
    const history = this.history.map((r) => ({ ...r, loss: orNull(r.loss), epochs: orNull(r.epochs), ...(r.metrics ? { metrics: Object.fromEntries(Object.entries(r.metrics).map(([k, x]) => [k, orNull(x)])) } : {}) }));
    return { algorithm: this.algorithm, round: this.t, phase: this.phase, parameters: Array.from(this.parameters), history, ...this.extraState() };
  }

  /** A saved state (checked against its schema) put into this new server role, which then continues as the saved one would. */
  restoreState(state: RestoredFedAvgState): void {
    const bad = (field: string, why: string) => stateMismatch(this.algorithm, field, why);
    if (state.algorithm !== this.algorithm) throw bad('algorithm', `it is a ${state.algorithm} server's state`);
    if (state.parameters.length !== this.nParameters) throw bad('parameters', `${state.parameters.length} values, but the network has ${this.nParameters}`);
    if (state.round > this.rounds || (state.phase === 'train') !== state.round < this.rounds || state.history.length !== state.round) {
      throw bad('round', `round ${state.round} of ${this.rounds} with ${state.history.length} rounds of history does not fit phase ${state.phase}`);
    }
    this.t = state.round;
    this.phase = state.phase;
    this.parameters = state.parameters;
    this.history.splice(0, this.history.length, ...state.history);
    this.restoreExtra(state);
  }

  /** What a subclass keeps beside the parameters, for saveState. */
  protected extraState(): { control?: number[] } {
    return {};
  }

  /** Restores what extraState saved. */
  protected restoreExtra(state: RestoredFedAvgState): void {
    if (state.control !== undefined) throw stateMismatch(this.algorithm, 'control', `a ${this.algorithm} server has no control variate`);
  }

  result(): FedAvgOutcome {
    return { algorithm: this.algorithm, network: this.network, parameters: this.parameters.slice(), rounds: this.t, epochs: this.epochs, batchSize: this.batchSize, optimizer: { ...this.optimizer }, history: this.history.slice() };
  }
}

export class FedProxServer extends FedAvgServer {
  override readonly algorithm: FedAvgAlgorithm = 'fedprox';
  readonly mu: number;
  /** @internal */
  protected static override readonly optionNames: readonly string[] = FEDPROX_KEYS;

  constructor(given: FedProxServerOptions) {
    super(given, 'samples', DEFAULT_OPTIMIZER.fedprox);
    // FedAvgServer read the options strictly (this class's keys); mu is read once more here
    const { mu } = readRecord(given, ['mu'], 'options');
    this.mu = requireNumber('mu', mu, 0);
  }

  protected override trainPayload(): TrainPayload {
    // mu = 0 sends no proximal term at all: the clients then do exactly FedAvg's arithmetic
    return this.mu > 0 ? { ...super.trainPayload(), mu: this.mu } : super.trainPayload();
  }
}

export class ScaffoldServer extends FedAvgServer {
  override readonly algorithm: FedAvgAlgorithm = 'scaffold';
  readonly serverLearningRate: number;
  /** the server control variate c */
  private control: Float32Array;
  /** @internal */
  protected static override readonly optionNames: readonly string[] = SCAFFOLD_KEYS;

  constructor(given: ScaffoldServerOptions) {
    super(given, 'uniform', DEFAULT_OPTIMIZER.scaffold);
    // FedAvgServer read the options strictly (this class's keys); serverLearningRate is read once more here
    const { serverLearningRate } = readRecord(given, ['serverLearningRate'], 'options');
    this.serverLearningRate = requirePositive('serverLearningRate', serverLearningRate ?? 1);
    if (this.optimizer.name !== 'sgd') throw new InvalidParameterError("SCAFFOLD's control variates (option II) assume plain SGD local steps: optimizer.name must be 'sgd'");
    if (this.earlyStopping) throw new InvalidParameterError("SCAFFOLD's control variates assume every client runs all its K local steps: earlyStopping is for FedAvg and FedProx");
    this.control = new Float32Array(this.nParameters);
  }

  protected override trainPayload(): TrainPayload {
    return { ...super.trainPayload(), control: this.control };
  }

  protected override extraState(): { control: number[] } {
    return { control: Array.from(this.control) };
  }

  protected override restoreExtra(state: RestoredFedAvgState): void {
    if (state.control?.length !== this.nParameters) throw stateMismatch('scaffold', 'control', `${state.control?.length ?? 'no'} values, but the network has ${this.nParameters}`);
    this.control = state.control;
  }

  /** x + eta_g (combined y - x). */
  protected override step(combined: Float64Array): Float32Array {
    const x = this.parameters;
    const out = new Float32Array(x.length);
    for (let j = 0; j < x.length; j++) out[j] = x[j]! + this.serverLearningRate * (combined[j]! - x[j]!);
    return out;
  }

  /** c += (1/N) sum of the clients' control changes, N the clients present. */
  protected override afterStep(updates: ReceivedUpdate[], ctx: RoundContext): void {
    const n = Math.max(ctx.available.length, updates.length);
    const sum = new Float64Array(this.nParameters);
    for (const u of updates) for (let j = 0; j < sum.length; j++) sum[j]! += u.controlDelta![j]!;
    const next = new Float32Array(this.nParameters);
    for (let j = 0; j < next.length; j++) next[j] = this.control[j]! + sum[j]! / n;
    this.control = next;
  }
}

/** A FedAvg-family server's state between rounds (saveState), as JSON-safe data. */
export interface FedAvgState {
  algorithm: FedAvgAlgorithm;
  round: number;
  phase: 'train' | 'result' | 'done';
  parameters: number[];
  history: (Omit<FedAvgRound, 'loss' | 'epochs' | 'metrics'> & { loss: number | null; epochs: number | null; metrics?: Record<string, number | null> })[];
  control?: number[];
}

/** The state as its schema reads it back (descriptor.ts). */
export interface RestoredFedAvgState {
  algorithm: FedAvgAlgorithm;
  round: number;
  phase: 'train' | 'result' | 'done';
  parameters: Float32Array;
  history: FedAvgRound[];
  control?: Float32Array;
}

function allFinite(v: Float32Array): boolean {
  for (let j = 0; j < v.length; j++) if (!Number.isFinite(v[j]!)) return false;
  return true;
}

/** An optimizer description, read once and checked (the network checks it again when training). */
function checkOptimizer(given: OptimizerSpec): OptimizerSpec {
  const o = readOptions(given, OPTIMIZER_KEYS, 'optimizer') as OptimizerSpec;
  requireOneOf('optimizer.name', o.name, ['sgd', 'adam'] as const);
  requirePositive('optimizer.learningRate', o.learningRate);
  for (const key of ['momentum', 'dampening', 'weightDecay', 'eps'] as const) if (o[key] !== undefined) requireNumber(`optimizer.${key}`, o[key], 0);
  for (const key of ['beta1', 'beta2'] as const) {
    if (o[key] !== undefined && !(requireNumber(`optimizer.${key}`, o[key], 0) < 1)) throw new InvalidParameterError(`optimizer.${key} must be in [0, 1), got ${o[key]}`);
  }
  if (o.nesterov !== undefined && typeof o.nesterov !== 'boolean') throw new InvalidParameterError(`optimizer.nesterov must be true or false, got ${formatValue(o.nesterov)}`);
  const out: OptimizerSpec = { name: o.name, learningRate: o.learningRate };
  for (const key of OPTIMIZER_KEYS) if (key !== 'name' && key !== 'learningRate' && o[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = o[key];
  return out;
}
