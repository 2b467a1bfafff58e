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
import { ContributionError, formatValue, InvalidMessageError, InvalidParameterError, NumericalError } from '../../errors.js';
import type { EarlyStopping } from '../../models/early-stopping.js';
import { Network, type NetworkSpec, type OptimizerSpec } from '../../models/network.js';
import { withPrivacy, type Message } from '../messages/envelope.js';
import { Rng } from '../../random.js';
import { clipUpdate, coordinateMedian, outliers, trimmedMean } from '../robust.js';
import { DeclaredSamples } from './samples.js';
import { checkAccepted, checkContext, checkFailures, readReply, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { FEDAVG_PROTOCOL, RESULT, TRAIN, receiveUpdate, type ReceivedUpdate, type TrainPayload } from './messages.js';
import {
  checkServerOptions,
  fedAvgServerOptions,
  fedProxServerOptions,
  scaffoldServerOptions,
  type FedAvgAlgorithm,
  type FedAvgServerOptions,
  type FedProxServerOptions,
  type ResolvedFedAvgServerOptions,
  type ResolvedFedProxServerOptions,
  type ResolvedScaffoldServerOptions,
  type ScaffoldServerOptions,
} from './options.js';
import { stateMismatch } from '../registry/artifact.js';

export {
  DEFAULT_EPOCHS,
  DEFAULT_OPTIMIZER,
  type FedAvgAlgorithm,
  type FedAvgServerOptions,
  type FedProxServerOptions,
  type ScaffoldServerOptions,
} from './options.js';

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
  /** with clipNorm: the replies whose update was scaled down to it; with dp: the replies whose client says it clipped */
  clipped?: number;
  /**
   * with dp: the standard deviation of the noise on each coordinate of the averaged update (noiseMultiplier x clipNorm / the
   * round's expected clients); under secure aggregation the noise of the survivors' Skellam shares over their count (the
   * round record's secure.noise.stddev / survivors: at least noiseMultiplier x clipNorm / survivors, more when few drop)
   */
  noiseStddev?: number;
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
  /** the row counts clients declared: bounded by maxSamples, pinned at each client's first reply */
  private readonly samples: DeclaredSamples;
  protected readonly clipNorm: number | undefined;
  protected readonly earlyStopping: EarlyStopping | undefined;
  protected readonly evaluate: FedAvgServerOptions['evaluate'];
  /** DP-FedAvg's clip bound and noise multiplier, and the noise's generator (no public seed predicts it) */
  protected readonly dp: Readonly<{ clipNorm: number; noiseMultiplier: number }> | undefined;
  private readonly noise: Rng | undefined;
  /** DP-FedAvg: the round's expected number of clients (the clients sampled), the fixed denominator of the average */
  private expected = 0;
  protected parameters: Float32Array;
  private t = 0;
  /** clients blamed for a non-finite aggregate in the round being aggregated (the runtime excludes them and calls aggregate again) */
  private readonly blamed = new Set<string>();
  private phase: 'train' | 'result' | 'done';
  /** what configure() sent and accept() returned: the only values accept() and aggregate() take */
  private readonly made = new WeakSet<object>();

  /**
   * Why the replies cannot be one secure sum: a robust rule, a server-side
   * clip or uniform weights need each update (see ServerRole). DP-FedAvg's
   * are uniform and clipped on the clients: their secure sum over the
   * survivors' count is the average.
   */
  get secureAggregationRefusal(): string | undefined {
    if (this.aggregation !== 'mean') return `aggregation '${this.aggregation}' needs every update; secure aggregation gives the server only their sum (use aggregation 'mean')`;
    if (this.clipNorm !== undefined) return 'clipNorm clips each update on the server, which secure aggregation never sees; clip on the clients instead (dp)';
    if (this.weighting !== 'samples' && !this.dp) return "weighting 'uniform' averages the updates one by one; under secure aggregation the sum is weighted by samples (weighting 'samples'), or uniform under DP-FedAvg (dp)";
    return undefined;
  }

  /** DP-FedAvg's noise moves to the clients under secure aggregation (distributed DP); without dp the weighted sums have no bound to calibrate noise to. */
  get secureNoise(): { clip: number; noiseMultiplier: number } | string {
    if (this.dp) return { clip: this.dp.clipNorm, noiseMultiplier: this.dp.noiseMultiplier };
    return 'its secure sums weigh parameters by row counts, with no bound on one client\'s contribution; distributed noise on FedAvg is DP-FedAvg\'s (dp: { clipNorm, noiseMultiplier }), whose clients clip their updates';
  }

  /** @internal this class's options (FedProx and SCAFFOLD add theirs) */
  protected static readonly declaration: { check(raw: unknown, name?: string): ResolvedFedAvgServerOptions } = fedAvgServerOptions;
  /** @internal the options as checked: what FedProx and SCAFFOLD read theirs from */
  protected readonly resolved: ResolvedFedAvgServerOptions;

  /** Options checked here (this class's declaration), unless they are what its check returned. */
  constructor(given: FedAvgServerOptions | ResolvedFedAvgServerOptions) {
    const o = checkServerOptions((new.target as typeof FedAvgServer).declaration, given);
    this.resolved = o;
    this.rounds = o.rounds;
    this.epochs = o.epochs;
    this.batchSize = o.batchSize;
    this.optimizer = { ...o.optimizer };
    // filled in by the options' check (the algorithm's default, or 'uniform' under DP)
    this.weighting = o.weighting ?? 'samples';
    this.aggregation = o.aggregation;
    this.trim = o.trim;
    this.samples = new DeclaredSamples(o.maxSamples);
    this.clipNorm = o.clipNorm;
    this.earlyStopping = o.earlyStopping;
    this.evaluate = o.evaluate;
    this.dp = o.dp;
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
    this.noise = this.dp ? (o.noiseSeed === undefined ? Rng.unpredictable() : new Rng(o.noiseSeed)) : undefined;
  }

  /** Reasons name the failed check only under DP (never a client's values). */
  get detailedReasons(): boolean {
    return this.dp === undefined;
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
      let request: Message = TRAIN.create('server', ctx.round, this.trainPayload());
      if (this.dp) {
        // the noise this round adds, declared for the run's accountant and the clients' ledgers; under secure aggregation
        // the clients add it, and the runtime declares their Skellam step
        if (!ctx.secureAggregation) request = withPrivacy(request, { mechanism: 'gaussian', noiseMultiplier: this.dp.noiseMultiplier, samplingRate: ctx.samplingRate ?? 1 });
        this.expected = ctx.clients.length;
      }
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
    if (this.dp) payload.clipNorm = this.dp.clipNorm;
    return this.earlyStopping ? { ...payload, earlyStopping: { ...this.earlyStopping } } : payload;
  }

  accept(unread: Message, request: Message, context?: RoundContext): ReceivedUpdate {
    if (request === null || typeof request !== 'object' || !this.made.has(request)) {
      throw new InvalidParameterError(`accept() takes a request this server's configure() made, got ${formatValue(request)}`);
    }
    const reply = readReply(this.protocol, request, unread);
    // DP-FedAvg under secure aggregation: the one reply is the survivors' noised sum, clipped by each client (its noise makes it longer than the bound)
    const secureSum = this.dp !== undefined && context !== undefined && checkContext(context).secureAggregation === true;
    const update = receiveUpdate(reply, this.nParameters, this.algorithm === 'scaffold', this.epochs, this.dp !== undefined, secureSum);
    if (secureSum) {
      this.made.add(update);
      return update;
    }
    if (this.dp) this.checkClipped(update);
    this.samples.check(update.client, update.nSamples);
    this.made.add(update);
    return update;
  }

  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, ReceivedUpdate>, failed: readonly Failure[] = []): FedAvgRound | undefined {
    const ctx = checkContext(context);
    const accepted = checkAccepted<ReceivedUpdate>(acceptedReplies, this.made);
    checkFailures(failed);
    if (this.phase !== 'train') throw new InvalidParameterError(`round ${ctx.round}: the server has nothing to aggregate`);
    let clipped = 0;
    const updates = [...accepted.values()].map((u) => {
      if (this.clipNorm === undefined) return u;
      const c = clipUpdate(u.parameters, this.parameters, this.clipNorm);
      if (c.clipped) clipped += 1;
      return c.clipped ? { ...u, parameters: c.vector } : u;
    });
    const weights = updates.map((u) => (this.weighting === 'samples' ? u.nSamples : 1));
    const total = weights.reduce((a, b) => a + b, 0);
    let loss = 0;
    updates.forEach((u, i) => (loss += (weights[i]! / total) * u.loss));
    if (this.dp) clipped = updates.filter((u) => u.clipped).length;
    // DP-FedAvg under secure aggregation: the one update is the clients' noised average already (no central noise)
    const noisedSum = this.dp && ctx.secureAggregation ? updates[0] : undefined;
    // DP-FedAvg: the noise is added whoever answered (an empty round too: its release is the noise alone)
    if (updates.length > 0 || this.dp) {
      const combined = noisedSum ? Float64Array.from(noisedSum.parameters) : this.dp ? this.noisyAverage(updates) : this.combine(updates.map((u) => u.parameters), weights);
      const next = this.step(combined, updates, ctx);
      // before the round is counted: a blamed client's reply is taken out and aggregate() called again for the same round
      this.blameIfNotFinite(next, updates, weights, ctx);
      // a client blamed in this round has left the federation: it is not among the clients present
      this.afterStep(updates, { ...ctx, available: ctx.available.filter((id) => !this.blamed.has(id)) });
      this.parameters = next;
    }
    this.blamed.clear();
    this.t += 1;
    const epochs = updates.reduce((n, u) => n + u.epochs, 0) / updates.length;
    const summary: FedAvgRound = { round: this.t, clients: noisedSum ? noisedSum.clients! : updates.length, loss: updates.length > 0 ? loss : NaN, epochs };
    // a noised secure sum releases no client's clipped flag (each clips: DP-FedAvg's sensitivity), loss or epochs
    if (this.clipNorm !== undefined || (this.dp && !noisedSum)) summary.clipped = clipped;
    // under secure aggregation the noise the clients' shares put on the sum (at least the central one's whoever drops), over the survivors
    if (this.dp) summary.noiseStddev = noisedSum ? (ctx.noise ?? NaN) / noisedSum.clients! : (this.dp.noiseMultiplier * this.dp.clipNorm) / Math.max(1, this.expected);
    if (this.evaluate) summary.metrics = this.evaluate(this.parameters.slice(), this.t);
    this.history.push(summary);
    if (this.t >= this.rounds) this.phase = 'result';
    return summary;
  }

  /**
   * DP-FedAvg's update is clipped on its client; one longer than the bound
   * (beyond single precision's rounding of the clipped parameters) is refused.
   */
  private checkClipped(u: ReceivedUpdate): void {
    const x = this.parameters;
    let sq = 0;
    let ySq = 0;
    for (let j = 0; j < x.length; j++) {
      sq += (u.parameters[j]! - x[j]!) ** 2;
      ySq += u.parameters[j]! ** 2;
    }
    const bound = this.dp!.clipNorm;
    // the clipped parameters are rounded to f32: each by at most 2^-24 of itself
    if (Math.sqrt(sq) > bound * (1 + 1e-3) + 2 ** -23 * Math.sqrt(ySq)) {
      throw new InvalidMessageError(`its update has L2 norm ${Math.sqrt(sq)}, longer than the clip bound ${bound} every DP-FedAvg client clips to`, 'its update is longer than the clip bound');
    }
  }

  /**
   * DP-FedAvg's step (McMahan et al. 2018, with central noise): the global
   * parameters plus the sum of the updates, each clipped again to clipNorm in
   * double precision (so the sensitivity holds exactly), plus N(0, (z C)^2)
   * noise on each coordinate, over the round's expected number of clients
   * (the clients sampled: a fixed denominator, whoever answers).
   */
  private noisyAverage(updates: ReceivedUpdate[]): Float64Array {
    const { clipNorm, noiseMultiplier } = this.dp!;
    const x = this.parameters;
    const sum = new Float64Array(this.nParameters);
    const delta = new Float64Array(this.nParameters);
    for (const u of updates) {
      let sq = 0;
      for (let j = 0; j < delta.length; j++) sq += (delta[j] = u.parameters[j]! - x[j]!) ** 2;
      const scale = Math.min(1, clipNorm / Math.sqrt(sq));
      for (let j = 0; j < delta.length; j++) sum[j]! += scale * delta[j]!;
    }
    const e = this.noise!.normal(this.nParameters);
    const denominator = Math.max(1, this.expected);
    const out = new Float64Array(this.nParameters);
    for (let j = 0; j < out.length; j++) out[j] = x[j]! + (sum[j]! + noiseMultiplier * clipNorm * e[j]!) / denominator;
    return out;
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

  /** Frees DP-FedAvg's noise generator. */
  dispose(): void {
    if (this.noise && !this.noise.disposed) this.noise.dispose();
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save; NaN as null). @internal */
  saveState(): FedAvgState {
    const orNull = (x: number) => (Number.isNaN(x) ? null : x);
    const history = this.history.map((r) => ({ ...r, loss: orNull(r.loss), epochs: orNull(r.epochs), ...(r.metrics ? { metrics: Object.fromEntries(Object.entries(r.metrics).map(([k, x]) => [k, orNull(x)])) } : {}) }));
    const samples = this.samples.save();
    return { algorithm: this.algorithm, round: this.t, phase: this.phase, parameters: Array.from(this.parameters), history, ...(samples.length ? { samples } : {}), ...this.extraState() };
  }

  /** A saved state (checked against its schema) put into this new server role, which then continues as the saved one would. @internal */
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
    this.samples.restore(state.samples ?? new Map());
    this.restoreExtra(state);
  }

  /** What a subclass keeps beside the parameters, for saveState. @internal */
  protected extraState(): { control?: number[] } {
    return {};
  }

  /** Restores what extraState saved. @internal */
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
  protected static override readonly declaration = fedProxServerOptions;

  constructor(given: FedProxServerOptions | ResolvedFedProxServerOptions) {
    super(given);
    this.mu = (this.resolved as ResolvedFedProxServerOptions).mu;
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
  protected static override readonly declaration = scaffoldServerOptions;

  constructor(given: ScaffoldServerOptions | ResolvedScaffoldServerOptions) {
    super(given);
    this.serverLearningRate = (this.resolved as ResolvedScaffoldServerOptions).serverLearningRate;
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
  /** the row count each client declared first (pinned) */
  samples?: [string, number][];
  control?: number[];
}

/** The state as its schema reads it back (descriptor.ts). */
export interface RestoredFedAvgState {
  algorithm: FedAvgAlgorithm;
  round: number;
  phase: 'train' | 'result' | 'done';
  parameters: Float32Array;
  history: FedAvgRound[];
  samples?: Map<string, number>;
  control?: Float32Array;
}

function allFinite(v: Float32Array): boolean {
  for (let j = 0; j < v.length; j++) if (!Number.isFinite(v[j]!)) return false;
  return true;
}

/** An optimizer description, read once and checked (the network checks it again when training). */
