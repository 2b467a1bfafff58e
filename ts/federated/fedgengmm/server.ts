/**
 * The FedGenGMM server (Algorithm 4.1 of the paper, lines 22-31): gathers the
 * local mixtures, re-weights every component by its client's share of the rows
 * (r_ck |D_c| / |D|), draws H * sum_c K_c synthetic rows from the union, and fits
 * the global mixture on them, with a fixed K or BIC over a range.
 *
 * Drawing from the union mixture is done client by client: how many rows come
 * from each client is one multinomial over |D_c| / |D| (the total weight of its
 * re-weighted components), then each local model samples its share; that is the
 * same distribution, and keeps each local model's own covariance type.
 */
import { Matrix } from '../../data/matrix.js';
import { FedmixError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { GaussianMixture } from '../../models/gaussian-mixture.js';
import { selectGaussianMixture } from '../../models/select.js';
import { Rng } from '../../random.js';
import { requireInteger } from '../../validate.js';
import { decodeMessage, type Message } from '../message.js';
import type { ExcludedClient } from '../transport.js';
import type { FedGenGMMClientOptions } from './client.js';
import { LOCAL_MODEL, receiveLocalModel } from './messages.js';

/** The global fit takes the clients' options (kMin/kMax for BIC, covariance type, EM settings, seed). */
export interface FedGenGMMServerOptions extends FedGenGMMClientOptions {
  /** synthetic rows per incoming component (default 100, as the paper) */
  h?: number;
  /** a fixed number of global components; or leave it out and give kMin/kMax for BIC */
  nComponents?: number;
  /** the dimension every client must share (checked on receipt when given) */
  nFeatures?: number;
  /** what a bad upload does: excluded with its reason (default) or thrown */
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
  client: string;
  model: GaussianMixture;
  nSamples: number;
}

export class FedGenGMMServer {
  private readonly options: FedGenGMMServerOptions;
  private readonly received: Received[] = [];
  readonly excluded: ExcludedClient[] = [];

  constructor(options: FedGenGMMServerOptions = {}) {
    requireInteger('h', options.h ?? 100, 1);
    if (options.nComponents === undefined && options.kMax === undefined) {
      throw new InvalidParameterError('the server needs nComponents, or kMin/kMax for BIC selection');
    }
    this.options = options;
  }

  /**
   * Takes one upload (wire text or a decoded message). Returns whether it was
   * accepted; a rejected upload changes nothing but the exclusion list.
   */
  receive(input: string | Message): boolean {
    let from = 'unknown client';
    try {
      const m = typeof input === 'string' ? decodeMessage(input, LOCAL_MODEL) : input;
      from = m.from;
      if (m.kind !== LOCAL_MODEL) throw new InvalidMessageError(`expected a ${LOCAL_MODEL} message, got ${m.kind}`);
      if (this.received.some((r) => r.client === m.from)) throw new InvalidMessageError(`client ${m.from}: a second upload in a one-shot protocol`);
      const nFeatures = this.options.nFeatures ?? this.received[0]?.model.nFeatures;
      const { model, nSamples } = receiveLocalModel(m, nFeatures);
      this.received.push({ client: m.from, model, nSamples });
      return true;
    } catch (e) {
      if (!(e instanceof FedmixError) || e.code === 'WASM' || this.options.onInvalidClient === 'throw') throw e;
      this.excluded.push({ client: from, round: 0, reason: e.message });
      return false;
    }
  }

  /** Synthesizes |S| = H sum_c K_c rows and fits the global model on them. */
  aggregate(): Aggregate {
    const o = this.options;
    if (this.received.length === 0) {
      throw new InvalidParameterError(`no client model was accepted (${this.excluded.length} excluded); the server has nothing to aggregate`);
    }
    const h = o.h ?? 100;
    const total = this.received.reduce((t, r) => t + r.nSamples, 0);
    const incoming = this.received.reduce((t, r) => t + r.model.nComponents, 0);
    const size = h * incoming;
    const rng = new Rng(o.seed);
    let synthetic: Matrix;
    try {
      const counts = rng.multinomial(size, this.received.map((r) => r.nSamples / total)).data;
      const seeds = Array.from(rng.uniform(this.received.length), (u) => Math.floor(u * 2 ** 53));
      const parts = this.received.flatMap((r, c) => (counts[c]! > 0 ? [r.model.sample(counts[c]!, { seed: seeds[c] }).X] : []));
      synthetic = Matrix.vstack(parts);
    } finally {
      rng.dispose();
    }
    const fit = {
      covarianceType: o.covarianceType ?? 'diag',
      nInit: o.nInit,
      tol: o.tol,
      maxIter: o.maxIter,
      regCovar: o.regCovar,
      seed: o.seed,
    };
    const model =
      o.nComponents !== undefined
        ? new GaussianMixture({ ...fit, nComponents: requireInteger('nComponents', o.nComponents, 1) }).fit(synthetic)
        : selectGaussianMixture(synthetic, { ...fit, kMin: o.kMin ?? 1, kMax: o.kMax!, criterion: o.criterion ?? 'bic' }).best;
    return { model, clients: this.received.map((r) => r.client), incomingComponents: incoming, syntheticRows: size };
  }

  /** Frees the received models. */
  dispose(): void {
    for (const r of this.received) r.model.dispose();
    this.received.length = 0;
  }
}

