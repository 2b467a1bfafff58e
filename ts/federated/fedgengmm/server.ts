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
 * With serverStep 'hierarchical' nothing is sampled: hierarchical EM
 * (hierarchical.ts) reduces the union of the re-weighted components to the
 * global K from their parameters, each standing for its share of
 * virtualSamples rows (by default the rows the clients reported).
 *
 * One round: the uploads that arrive before the round's deadline are the ones
 * aggregated (a client that misses it is a failure of the round, not of the run).
 */
import { Matrix } from '../../data/matrix.js';
import { ContributionError, FedmixError, formatValue, InvalidParameterError } from '../../errors.js';
import { GaussianMixture, trustedGaussianMixtureOptions, type GaussianMixtureJSON } from '../../models/gaussian-mixture.js';
import { stateMismatch } from '../registry/artifact.js';
import { selectGaussianMixture } from '../../models/select.js';
import { Rng } from '../../random.js';
import type { FeatureRange } from '../feature-range.js';
import { gmmParams } from '../gmm-params.js';
import { outliers } from '../robust.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { hierarchicalEM, selectHierarchical, type WeightedMixture } from './hierarchical.js';
import { FEDGENGMM_PROTOCOL, GLOBAL_MODEL, receiveLocalModel, TRAIN } from './messages.js';
import { checkServerOptions, type FedGenGMMServerOptions, type ResolvedFedGenGMMServerOptions } from './options.js';

export { SAMPLE_N_INIT, SERVER_STEPS, type FedGenGMMServerOptions, type ServerStep } from './options.js';

export interface Aggregate {
  model: GaussianMixture;
  /** clients whose models were used, in the order received */
  clients: string[];
  /** sum of the clients' K_c */
  incomingComponents: number;
  /** rows drawn ('sample'; 0 with 'hierarchical') */
  syntheticRows: number;
  /** the virtual rows N of 'hierarchical' (0 with 'sample') */
  virtualSamples: number;
}

interface Fitted {
  model: GaussianMixture;
  incoming: number;
  /** synthetic rows drawn */
  size: number;
  /** virtual rows of the hierarchical step */
  virtual: number;
}

interface Received {
  model: GaussianMixture;
  nSamples: number;
}

export class FedGenGMMServer implements ServerRole<Received, Aggregate> {
  readonly protocol = FEDGENGMM_PROTOCOL;
  private readonly options: ResolvedFedGenGMMServerOptions;
  private outcome: Aggregate | undefined;
  private phase: 'collect' | 'return' | 'done' = 'collect';
  /** the round the uploads came in: the global model goes back as its end */
  private collectRound = 0;
  /** what accept() returned: the only values discard() and aggregate() take */
  private readonly made = new WeakSet<object>();

  /** Options checked here (checkServerOptions), unless they are what it returned. */
  constructor(options: FedGenGMMServerOptions) {
    this.options = checkServerOptions(options);
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

  /**
   * An upload checked (messages.ts receiveLocalModel; the declared feature
   * range): what an honest client's fit produces always passes: EM's weights
   * are positive (scikit-learn's 10 eps) and sum to one, its covariances are
   * regularized positive definite, K is at most the client's rows, its means
   * are averages of rows inside the range and its variances at most
   * (max - min)^2 / 4 + regCovar (Popoviciu's bound on any distribution in
   * [min, max]).
   */
  accept(reply: Message): Received {
    const r = receiveLocalModel(reply, this.options.nFeatures);
    const declared = this.options.featureRange;
    if (declared) {
      try {
        checkModelInRange(declared, r.model, this.options.regCovar);
      } catch (e) {
        r.model.dispose();
        throw e;
      }
    }
    this.made.add(r);
    return r;
  }

  discard(r: Received): void {
    if (r === null || typeof r !== 'object' || !this.made.has(r)) throw new InvalidParameterError(`discard() takes what accept() returned, got ${formatValue(r)}`);
    r.model.dispose();
  }

  /**
   * Synthesizes |S| = H sum_c K_c rows from the accepted uploads (at most
   * maxSyntheticRows) and fits the global model on them. If the fit breaks
   * down numerically and one upload on a scale far from the others' is to
   * blame (the fit succeeds without it), a ContributionError names it: the
   * runtime excludes it and aggregates the others again.
   */
  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, Received>): { incomingComponents: number; syntheticRows: number; virtualSamples: number } {
    const ctx = checkContext(context);
    const accepted = checkAccepted<Received>(acceptedReplies, this.made);
    const ids = [...accepted.keys()];
    const received = [...accepted.values()];
    let fitted: Fitted;
    try {
      fitted = this.fit(received);
    } catch (e) {
      this.blame(e, ids, received);
      throw e;
    }
    // the uploads are used up: the runtime discards them only when aggregate throws
    for (const r of received) r.model.dispose();
    this.outcome = { model: fitted.model, clients: ids, incomingComponents: fitted.incoming, syntheticRows: fitted.size, virtualSamples: fitted.virtual };
    this.collectRound = ctx.round;
    this.phase = 'return';
    return { incomingComponents: fitted.incoming, syntheticRows: fitted.size, virtualSamples: fitted.virtual };
  }

  /** The global model of these uploads, by the configured server step; changes nothing. */
  private fit(received: Received[]): Fitted {
    const o = this.options;
    const total = received.reduce((t, r) => t + r.nSamples, 0);
    const incoming = received.reduce((t, r) => t + r.model.nComponents, 0);
    if (o.serverStep === 'hierarchical') return this.reduce(received, total, incoming);
    const h = Math.max(1, Math.min(o.h, Math.floor(o.maxSyntheticRows / incoming)));
    const size = h * incoming;
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
    const fit = { covarianceType: o.covarianceType, nInit: o.nInit, tol: o.tol, maxIter: o.maxIter, regCovar: o.regCovar, seed: o.seed, precision: o.precision };
    const model =
      o.nComponents !== undefined
        ? new GaussianMixture(trustedGaussianMixtureOptions({ ...fit, nComponents: o.nComponents })).fit(synthetic)
        : selectGaussianMixture(synthetic, { ...fit, kMin: o.kMin, kMax: o.kMax!, criterion: o.criterion }).best;
    return { model, incoming, size, virtual: 0 };
  }

  /** Hierarchical EM on the uploads' components, each client weighted by |D_c| / |D|. */
  private reduce(received: Received[], total: number, incoming: number): Fitted {
    const o = this.options;
    const parts: WeightedMixture[] = received.map((r) => ({ model: r.model, share: r.nSamples / total }));
    const virtualSamples = o.virtualSamples ?? total;
    const fit = { covarianceType: o.covarianceType, virtualSamples, tol: o.tol, maxIter: o.maxIter, regCovar: o.regCovar, nInit: o.nInit, seed: o.seed };
    const r =
      o.nComponents !== undefined
        ? hierarchicalEM(parts, { ...fit, nComponents: o.nComponents })
        : selectHierarchical(parts, { ...fit, kMin: o.kMin, kMax: o.kMax!, criterion: o.criterion });
    return { model: r.model, incoming, size: 0, virtual: virtualSamples };
  }

  /**
   * After a failed fit: the upload on an outlying scale (robust.ts outliers:
   * more than 1000 times the others' median) without which the fit succeeds,
   * if any (at most three tried). Honest uploads do not reach it: it runs only
   * once the global fit has failed, and a model its client could fit (finite,
   * every variance regularized by regCovar) gives finite synthetic rows and
   * sufficient statistics, so the fit does not fail on it; the suspicion names
   * no client of the honest federations (test/honest-federations.test.ts).
   */
  private blame(e: unknown, ids: string[], received: Received[]): void {
    if (!(e instanceof FedmixError) || e.code === 'WASM' || ids.length < 2) return;
    for (const i of outliers(received.map((r) => modelScale(r.model))).slice(0, 3)) {
      try {
        this.fit(received.filter((_, x) => x !== i)).model.dispose();
      } catch {
        continue;
      }
      throw new ContributionError(ids[i]!, `its model makes the global fit fail (${e.message}); without it the fit succeeds`, 'its model makes the global fit fail');
    }
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save): the phase and, once aggregated, the global model. @internal */
  saveState(): FedGenGMMState {
    const o = this.outcome;
    return {
      phase: this.phase,
      collectRound: this.collectRound,
      outcome: o ? { model: o.model.toJSON(), clients: [...o.clients], incomingComponents: o.incomingComponents, syntheticRows: o.syntheticRows, virtualSamples: o.virtualSamples } : null,
    };
  }

  /** A saved state (its schema checked it; the model loaded) put into this new server role; the role then owns the model. @internal */
  restoreState(state: { phase: 'collect' | 'return' | 'done'; collectRound: number; outcome: Aggregate | null }): void {
    const o = state.outcome;
    const bad = (field: string, why: string) => {
      o?.model.dispose();
      return stateMismatch('fedgengmm', field, why);
    };
    if ((state.phase === 'return') !== (o !== null)) throw bad('outcome', `a server in phase ${state.phase} ${o ? 'has no' : 'has a'} global model`);
    if (o && o.model.nFeatures !== this.options.nFeatures) throw bad('outcome.model', `${o.model.nFeatures} features, but the server's options say ${this.options.nFeatures}`);
    if (o && o.model.covarianceType !== this.options.covarianceType) throw bad('outcome.model', `${o.model.covarianceType} covariances, but the server's options say ${this.options.covarianceType}`);
    this.phase = state.phase;
    this.collectRound = state.collectRound;
    this.outcome = o ?? undefined;
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

/** A FedGenGMM server's state between rounds (saveState). */
export interface FedGenGMMState {
  phase: 'collect' | 'return' | 'done';
  collectRound: number;
  outcome: { model: GaussianMixtureJSON; clients: string[]; incomingComponents: number; syntheticRows: number; virtualSamples: number } | null;
}

/** The largest |mean| + standard deviation of any component and feature: the scale of the rows a model describes. */
export function modelScale(gm: GaussianMixture): number {
  const { nComponents: k, nFeatures: d, covarianceType: t } = gm;
  const means = gm.means;
  const cov = gm.covariances;
  let scale = 0;
  for (let c = 0; c < k; c++) {
    for (let j = 0; j < d; j++) {
      const v = t === 'full' ? cov[c * d * d + j * d + j]! : t === 'tied' ? cov[j * d + j]! : t === 'diag' ? cov[c * d + j]! : cov[c]!;
      scale = Math.max(scale, Math.abs(means[c * d + j]!) + Math.sqrt(v));
    }
  }
  return scale;
}

/** A local model of rows inside the declared range: its means inside, its variances at most (max - min)^2 / 4 plus the regularization. */
function checkModelInRange(range: FeatureRange, gm: GaussianMixture, regCovar: number): void {
  const { nComponents: k, nFeatures: d, covarianceType: t } = gm;
  const means = gm.means;
  const cov = gm.covariances;
  for (let c = 0; c < k; c++) {
    for (let j = 0; j < d; j++) range.inside(`means[${c * d + j}]`, j, means[c * d + j]!);
    if (t === 'spherical') {
      range.sharedVariance(`covariances[${c}]`, cov[c]!, regCovar);
      continue;
    }
    for (let j = 0; j < d; j++) {
      const at = t === 'full' ? c * d * d + j * d + j : t === 'tied' ? j * d + j : c * d + j;
      range.variance(`covariances[${at}]`, j, cov[at]!, regCovar);
    }
  }
}
