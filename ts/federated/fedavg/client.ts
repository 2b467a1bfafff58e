/**
 * A client of the FedAvg family: its rows (and labels, for a classifier) stay
 * resident in WASM memory; each TRAIN request sets the global parameters,
 * trains `epochs` local epochs in shuffled minibatches with a fresh optimizer
 * (as Flower's clients build theirs per fit) and answers with the new
 * parameters. With early stopping (the request's validationShare and
 * patience) it holds out the same share of its rows every round, trains on
 * the rest, stops once their loss has not improved on the best so far (the
 * global parameters' to begin with) for `patience` epochs, and answers with
 * the best epoch's parameters and the epochs it ran. FedProx adds mu (w - w_global) to every gradient; SCAFFOLD adds
 * c - c_i and then updates its own control variate by option II of
 * Karimireddy et al. (2020): c_i+ = c_i - c + (x - y_i) / (K lr), K the local
 * steps. The same client answers all three: the request says which.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidMessageError, InvalidParameterError, NumericalError } from '../../errors.js';
import { EarlyStopper, errorSeparation, heldOutSplit } from '../../models/early-stopping.js';
import { Network, type NetworkJSON, type NetworkSpec, type OptimizerSpec, type TrainingSet } from '../../models/network.js';
import { idHash, mixBits as mix } from '../../random.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, type ClientRole } from '../runtime/roles.js';
import { clipUpdate } from '../robust.js';
import { FEDAVG_PROTOCOL, RESULT, TRAIN, UPDATE, type TrainPayload, type WireNetwork } from './messages.js';
import { clientOptions, type FedAvgClientOptions, type ResolvedFedAvgClientOptions } from './options.js';

export type { FedAvgClientOptions } from './options.js';

/**
 * The seed of one local epoch's shuffle: the client's seed, the round and the
 * epoch mixed (so no two epochs of a run shuffle alike). Exported for tests
 * that replay a client's training with a Network.
 */
export function localEpochSeed(seed: number, round: number, epoch: number): number {
  let h = mix(seed >>> 0) ^ mix(Math.floor(seed / 2 ** 32) + 0x9e3779b9);
  h = mix(h ^ mix(round + 0x85ebca6b));
  h = mix(h ^ mix(epoch + 0xc2b2ae35));
  return h >>> 0;
}

export class FedAvgClient implements ClientRole {
  readonly id: string;
  readonly protocol = FEDAVG_PROTOCOL;
  readonly nSamples: number;
  private readonly X: Matrix;
  private readonly labels: Int32Array | undefined;
  private readonly seed: number;
  private network: Network | undefined;
  private set: TrainingSet | undefined;
  /** with early stopping: the rows trained on and the rows held out, for one validation share */
  private split: { share: number; train: TrainingSet; held: TrainingSet } | undefined;
  /** SCAFFOLD's c_i (zero until the first SCAFFOLD round) */
  private control: Float32Array | undefined;
  private final: Float32Array | undefined;

  /** Options checked here (clientOptions), unless they are what its check returned. */
  constructor(id: string, data: MatrixLike, options: FedAvgClientOptions | ResolvedFedAvgClientOptions = {}) {
    if (typeof id !== 'string' || id.length === 0) throw new InvalidParameterError('a client needs a non-empty string id');
    this.id = id;
    const o = clientOptions.check(options);
    this.X = Matrix.from(data);
    if (this.X.nRows === 0) throw new InvalidDataError(`client ${id} has no rows`);
    this.nSamples = this.X.nRows;
    if (o.labels !== undefined) {
      const labels = Int32Array.from(o.labels as ArrayLike<number>);
      if (labels.length !== this.X.nRows) throw new InvalidDataError(`client ${id} has ${this.X.nRows} rows but ${labels.length} labels`);
      this.labels = labels;
    }
    // default: its id hashed, so clients of one run shuffle differently
    this.seed = o.seed ?? idHash(id);
  }

  /** The final global parameters, once the server has sent them. */
  get parameters(): Float32Array | undefined {
    return this.final;
  }

  /** The final global network (Network.toJSON()'s form), once the server has sent its parameters. */
  savedGlobalModel(): NetworkJSON | undefined {
    if (!this.final || !this.network) return undefined;
    const { sizes, activation, outputActivation, loss } = this.network.spec;
    return { format: 'fedmix.Network', version: 1, spec: { sizes: [...sizes], activation, outputActivation, loss }, parameters: Array.from(this.final) };
  }

  respond(request: Message): Message | undefined {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case TRAIN.kind:
        return this.train(m.round, m.payload as TrainPayload);
      case RESULT.kind:
        this.final = Float32Array.from((m.payload as { parameters: Float32Array }).parameters);
        return undefined;
      default:
        throw new InvalidMessageError(`a FedAvg client does not answer ${m.kind}`);
    }
  }

  private train(round: number, p: TrainPayload): Message {
    if (p.clipNorm !== undefined && !(p.clipNorm > 0)) throw new InvalidMessageError(`clipNorm is ${p.clipNorm}; it must be > 0`);
    if (p.clipNorm !== undefined && p.control !== undefined) throw new InvalidMessageError("DP-FedAvg's clipping does not cover SCAFFOLD's control variates: a request cannot ask for both");
    const net = this.networkFor(p.network);
    if (p.parameters.length !== net.nParameters) {
      throw new InvalidMessageError(`the global parameters have ${p.parameters.length} values; the network declared has ${net.nParameters}`);
    }
    const scaffold = p.control !== undefined;
    if (scaffold && p.control!.length !== net.nParameters) throw new InvalidMessageError(`the control variate has ${p.control!.length} values; the network has ${net.nParameters}`);
    if (p.mu !== undefined && !(p.mu >= 0)) throw new InvalidMessageError(`mu is ${p.mu}; it must be >= 0`);
    if (scaffold && p.optimizer.name !== 'sgd') throw new InvalidMessageError("SCAFFOLD's control variates (option II) assume plain SGD steps; the optimizer must be 'sgd'");
    const es = p.earlyStopping;
    if (es) {
      const share = es.monitor === 'validation-loss' ? es.validationShare : es.contamination;
      const other = es.monitor === 'validation-loss' ? es.contamination : es.validationShare;
      if (share === undefined || other !== undefined) throw new InvalidMessageError(`early stopping on '${es.monitor}' takes ${es.monitor === 'validation-loss' ? 'validationShare' : 'contamination'} and nothing else`);
      if (!(share > 0 && share < 0.5)) throw new InvalidMessageError(`early stopping's share is ${share}; it must be in (0, 0.5)`);
      if (es.monitor === 'separation' && p.network.loss === 'softmax-cross-entropy') throw new InvalidMessageError("early stopping on the separation of reconstruction errors needs an autoencoder, not a classifier");
      if (scaffold) throw new InvalidMessageError("SCAFFOLD's control variates assume every client runs all its local steps: no early stopping");
    }
    const x = p.parameters;
    net.setParameters(x);
    // with early stopping on held-out rows, the rows held out (none when the client has too few rows for one)
    const split = es?.monitor === 'validation-loss' ? this.splitFor(net, es.validationShare!) : undefined;
    const trainSet = split ? split.train : this.set!;
    // a smaller client trains on all its rows per batch, as FedAvg's B = infinity would
    const batchSize = Math.min(p.batchSize, trainSet.nRows);
    const correction = scaffold ? this.correction(p.control!) : undefined;
    const opt = net.optimizer(p.optimizer as OptimizerSpec);
    // what early stopping watches, lower being better: the held-out rows' loss, or the separation of the errors negated
    const watch = split
      ? () => net.evaluate(split.held)
      : es?.monitor === 'separation' && this.nSamples >= 2
        ? () => -errorSeparation(net.reconstructionErrors(this.X), es.contamination!)
        : undefined;
    const stopper = watch ? new EarlyStopper(es!.patience, { loss: watch(), parameters: x }) : undefined;
    let loss = 0;
    let epochs = 0;
    try {
      for (let e = 0; e < p.epochs; e++) {
        loss = net.trainEpoch(trainSet, opt, {
          batchSize,
          seed: localEpochSeed(this.seed, round, e),
          proximal: p.mu ? { mu: p.mu, anchor: x } : undefined,
          correction,
        });
        epochs += 1;
        if (stopper && !stopper.observe(watch!(), () => net.getParameters())) break;
      }
    } finally {
      opt.dispose();
    }
    const trained = stopper ? stopper.parameters! : net.getParameters();
    // said here, with its cause, rather than as a message the wire refuses for its NaN
    if (!trained.every(Number.isFinite)) {
      throw new NumericalError(
        `local training diverged in round ${round} (parameters not finite after ${epochs} epoch(s) of ${p.optimizer.name} at learning rate ${p.optimizer.learningRate}): put the features on a common scale (MinMaxScaler, StandardScaler) or lower the learning rate`,
      );
    }
    // DP-FedAvg: the update clipped here, before it leaves the client
    const clip = p.clipNorm === undefined ? undefined : clipUpdate(trained, x, p.clipNorm);
    const y = clip ? clip.vector : trained;
    let controlDelta: Float32Array | undefined;
    if (scaffold) {
      // option II: c_i+ = c_i - c + (x - y) / (K lr)
      const steps = p.epochs * Math.ceil(this.nSamples / batchSize);
      const scale = 1 / (steps * p.optimizer.learningRate);
      const ci = this.control ?? new Float32Array(x.length);
      const next = new Float32Array(x.length);
      controlDelta = new Float32Array(x.length);
      for (let j = 0; j < x.length; j++) {
        next[j] = ci[j]! - p.control![j]! + (x[j]! - y[j]!) * scale;
        controlDelta[j] = next[j]! - ci[j]!;
      }
      this.control = next;
    }
    return UPDATE.create(this.id, round, { parameters: y, nSamples: this.nSamples, loss, epochs, controlDelta, ...(clip ? { clipped: clip.clipped } : {}) });
  }

  /** The rows trained on and held out for a validation share, attached once (again when the share changes). */
  private splitFor(net: Network, share: number): { train: TrainingSet; held: TrainingSet } | undefined {
    if (this.split?.share === share) return this.split;
    this.releaseSplit();
    const rows = heldOutSplit(this.nSamples, share, this.seed);
    if (!rows) return undefined;
    const targets = (idx: Int32Array) => (this.labels ? Int32Array.from(idx, (i) => this.labels![i]!) : this.X.selectRows(idx));
    const train = net.attach(this.X.selectRows(rows.train), targets(rows.train));
    try {
      this.split = { share, train, held: net.attach(this.X.selectRows(rows.held), targets(rows.held)) };
    } catch (e) {
      train.dispose();
      throw e;
    }
    return this.split;
  }

  private releaseSplit(): void {
    this.split?.train.dispose();
    this.split?.held.dispose();
    this.split = undefined;
  }

  /** SCAFFOLD's gradient correction c - c_i. */
  private correction(c: Float32Array): Float32Array {
    const out = new Float32Array(c.length);
    const ci = this.control;
    for (let j = 0; j < c.length; j++) out[j] = c[j]! - (ci ? ci[j]! : 0);
    return out;
  }

  /** The client's network for `wire`, built (and its rows attached) the first time, or again when the server changes it. */
  private networkFor(wire: WireNetwork): Network {
    const spec: NetworkSpec = { sizes: wire.sizes, activation: wire.activation, outputActivation: wire.outputActivation, loss: wire.loss };
    const same = this.network && JSON.stringify(this.network.spec.sizes) === JSON.stringify(spec.sizes) && ['activation', 'outputActivation', 'loss'].every((k) => this.network!.spec[k as keyof NetworkSpec] === spec[k as keyof NetworkSpec]);
    if (same) return this.network!;
    const d = this.X.nCols;
    if (spec.sizes[0] !== d) throw new InvalidMessageError(`the network takes ${spec.sizes[0]} inputs; client ${this.id} has ${d} features`);
    const classifier = spec.loss === 'softmax-cross-entropy';
    if (classifier && !this.labels) throw new InvalidMessageError(`the network is a classifier; client ${this.id} has no labels`);
    if (!classifier && spec.sizes[spec.sizes.length - 1] !== d) {
      throw new InvalidMessageError(`the network reconstructs ${spec.sizes[spec.sizes.length - 1]} outputs; client ${this.id}'s rows (its own targets) have ${d}`);
    }
    this.release();
    const net = new Network(spec);
    try {
      this.set = net.attach(this.X, classifier ? this.labels! : this.X);
    } catch (e) {
      net.dispose();
      throw e;
    }
    this.network = net;
    this.control = undefined;
    return net;
  }

  private release(): void {
    this.releaseSplit();
    this.set?.dispose();
    this.network?.dispose();
    this.set = undefined;
    this.network = undefined;
  }

  dispose(): void {
    this.release();
  }
}

