/**
 * The FedGenGMM server (Algorithm 4.1 of the paper, lines 22-31): gathers the
 * local mixtures, re-weights every component by its client's share of the rows
 * (r_ck |D_c| / |D|), draws H * sum_c K_c synthetic rows from the union, and fits
 * the global mixture on them, with a fixed K or BIC over a range; then sends
 * the global model back to the clients that took part.
 *
 * Drawing from the union mixture is done client by client: how many rows come
 * from each client is one multinomial over |D_c| / |D| (the total weight of its
 * re-weighted components), then each local model samples its share; that is the
 * same distribution, and keeps each local model's own covariance type.
 *
 * One round: the uploads that arrive before the round's deadline are the ones
 * aggregated (a client that misses it is a failure of the round, not of the run).
 */
import { Matrix } from '../../data/matrix.js';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { GaussianMixture } from '../../models/gaussian-mixture.js';
import { selectGaussianMixture } from '../../models/select.js';
import { Rng } from '../../random.js';
import { requireInteger } from '../../validate.js';
import { gmmParams } from '../gmm-params.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, readReply, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { checkFitOptions, type FedGenGMMClientOptions } from './client.js';
import { FEDGENGMM_PROTOCOL, GLOBAL_MODEL, receiveLocalModel, TRAIN } from './messages.js';

/** The global fit takes the clients' options (kMin/kMax for BIC, covariance type, EM settings, seed). */
export interface FedGenGMMServerOptions extends FedGenGMMClientOptions {
  /** synthetic rows per incoming component (default 100, as the paper) */
  h?: number;
  /** a fixed number of global components; or leave it out and give kMin/kMax for BIC */
  nComponents?: number;
  /** the dimension every client must share */
  nFeatures: number;
  /** what a bad upload does: excluded with its reason (default) or thrown (the runtime's onInvalid policy) */
  onInvalidClient?: 'exclude' | 'throw';
}

export interface Aggregate {
  model: GaussianMixture;
  /** clients whose models were used, in the order received */
  clients: string[];
  /** sum of the clients' K_c */
  incomingComponents: number;
  syntheticRows: number;
}

interface Received {
  model: GaussianMixture;
  nSamples: number;
}

export class FedGenGMMServer implements ServerRole<Received, Aggregate> {
  readonly protocol = FEDGENGMM_PROTOCOL;
  private readonly options: FedGenGMMServerOptions & { h: number };
  private outcome: Aggregate | undefined;
  private phase: 'collect' | 'return' | 'done' = 'collect';
  /** the round the uploads came in: the global model goes back as its end */
  private collectRound = 0;
  /** what accept() returned: the only values discard() and aggregate() take */
  private readonly made = new WeakSet<object>();

  constructor(given: FedGenGMMServerOptions) {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object');
    const options = checkFitOptions(given) as FedGenGMMServerOptions;
    const h = requireInteger('h', options.h ?? 100, 1);
    requireInteger('nFeatures', options.nFeatures, 1);
    if (options.nComponents !== undefined) requireInteger('nComponents', options.nComponents, 1);
    else if (options.kMax === undefined) throw new InvalidParameterError('the server needs nComponents, or kMin/kMax for BIC selection');
    this.options = { ...options, h };
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    if (this.phase === 'collect') {
      const train = TRAIN.create('server', ctx.round, {});
      return new Map(ctx.clients.map((id) => [id, train]));
    }
    // the same round: the global model goes back to every client that took part and is still there
    const out = this.outcome;
    if (!out) throw new InvalidParameterError('the global model was handed over before it was sent back; call result() once the run is done');
    const back = GLOBAL_MODEL.create('server', this.collectRound, gmmParams(out.model));
    this.phase = 'done';
    const there = new Set(ctx.available);
    return new Map(out.clients.filter((id) => there.has(id)).map((id) => [id, back]));
  }

  accept(reply: Message): Received {
    const r = receiveLocalModel(readReply(this.protocol, reply), this.options.nFeatures);
    this.made.add(r);
    return r;
  }

  discard(r: Received): void {
    if (r === null || typeof r !== 'object' || !this.made.has(r)) throw new InvalidParameterError(`discard() takes what accept() returned, got ${formatValue(r)}`);
    r.model.dispose();
  }

  /** Synthesizes |S| = H sum_c K_c rows from the accepted uploads and fits the global model on them. */
  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, Received>): { incomingComponents: number; syntheticRows: number } {
    const ctx = checkContext(context);
    const accepted = checkAccepted<Received>(acceptedReplies, this.made);
    const received = [...accepted.values()];
    try {
      const o = this.options;
      const total = received.reduce((t, r) => t + r.nSamples, 0);
      const incoming = received.reduce((t, r) => t + r.model.nComponents, 0);
      const size = o.h * incoming;
      const rng = new Rng(o.seed);
      let synthetic: Matrix;
      try {
        const counts = rng.multinomial(size, received.map((r) => r.nSamples / total)).data;
        const seeds = Array.from(rng.uniform(received.length), (u) => Math.floor(u * 2 ** 53));
        const parts = received.flatMap((r, c) => (counts[c]! > 0 ? [r.model.sample(counts[c]!, { seed: seeds[c] }).X] : []));
        synthetic = Matrix.vstack(parts);
      } finally {
        rng.dispose();
      }
      const fit = { covarianceType: o.covarianceType ?? 'diag', nInit: o.nInit, tol: o.tol, maxIter: o.maxIter, regCovar: o.regCovar, seed: o.seed };
      const model =
        o.nComponents !== undefined
          ? new GaussianMixture({ ...fit, nComponents: o.nComponents }).fit(synthetic)
          : selectGaussianMixture(synthetic, { ...fit, kMin: o.kMin ?? 1, kMax: o.kMax!, criterion: o.criterion ?? 'bic' }).best;
      this.outcome = { model, clients: [...accepted.keys()], incomingComponents: incoming, syntheticRows: size };
      this.collectRound = ctx.round;
      this.phase = 'return';
      return { incomingComponents: incoming, syntheticRows: size };
    } finally {
      for (const r of received) r.model.dispose();
    }
  }

  /** The global model (the caller disposes it) and how it was made. */
  result(): Aggregate {
    const out = this.outcome;
    if (!out) throw new InvalidParameterError('the server has not aggregated yet');
    this.outcome = undefined;
    return out;
  }

  dispose(): void {
    this.outcome?.model.dispose();
    this.outcome = undefined;
  }
}
