/**
 * The server role of distributed EM. It sees only messages: it chooses the
 * initial model (without data, or from what the initialization asks of the
 * clients), broadcasts the model each round, and turns the clients' statistics
 * into the next model with the core's M-step (fm_dem_server_step).
 *
 * On the federation runtime (runtime/run.ts): configure() asks each round's
 * clients, accept() checks one reply in full against its request (nothing is
 * merged before every reply of the round is judged), aggregate() takes the
 * accepted ones. Which clients fail, and what happens to them, is the
 * runtime's policy.
 *
 * Stopping rule (the FedGenGMM paper's): each client reports the log-likelihood
 * of its own rows under the broadcast model; the run stops when the average of
 * the clients' mean log-likelihoods changes by less than tol between two rounds
 * (averaged over the clients that answered both), or after maxRounds EM rounds.
 */
import { apportion } from '../../data/apportion.js';
import { Matrix } from '../../data/matrix.js';
import { ContributionError, FedmixError, formatValue, inContext, InvalidMessageError, InvalidParameterError, NumericalError } from '../../errors.js';
import { cholesky } from '../../distributions/gaussian.js';
import { COV_CODE, GaussianMixture } from '../../models/gaussian-mixture.js';
import { Rng } from '../../random.js';
import { seedParts } from '../../validate.js';
import { DEM_KFED_SERVER_OPTIONS, DEM_SERVER_STEP_OPTIONS } from '../../wasm/abi.generated.js';
import { withScope } from '../../wasm/memory.js';
import { FeatureRange } from '../feature-range.js';
import { gmmParams } from '../gmm-params.js';
import { outliers } from '../robust.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, readReply, type RoundContext, type ServerRole } from '../runtime/roles.js';
import {
  checkCount,
  checkKfedLocal,
  checkLogLikelihood,
  checkStats,
  checkStatsInRange,
  kfedLocalType,
  packedLength,
  checkSubsetRows,
  DEM_COUNT_REQUEST,
  DEM_KFED_REQUEST,
  DEM_KINDS,
  DEM_MODEL,
  DEM_PROTOCOL,
  DEM_SUBSET_REQUEST,
  type CountReply,
  type KfedLocalReply,
  type ModelBroadcast,
  type ReceivedKfedLocal,
  type DataSummaryPayload,
  type ReceivedStats,
  type StatsReply,
  type SubsetReply,
} from './messages.js';
import { checkServerOptions, type DemServerOptions, type ResolvedDemServerOptions } from './options.js';
import type { GaussianMixtureJSON } from '../../models/gaussian-mixture.js';
import type { RngState } from '../../random.js';
import { stateMismatch } from '../registry/artifact.js';

/** A DEM server's state between rounds (saveState), as JSON-safe data. */
/** How a DemServer chose its first model (its `init`), with the settings that method used. */
export type DemInitialization =
  | { method: 'given' | 'separated' }
  | { method: 'subset'; subsetSize: number }
  | { method: 'kfed'; localClusters: number; grouping: 'kmeans' | 'seed-device'; starts: number };

export interface DemState {
  phase: Phase;
  initRounds: number;
  emRounds: number;
  model: GaussianMixtureJSON | null;
  history: number[];
  converged: boolean;
  rowsOf: [string, number][];
  lastMeans: [string, number][];
  summaryShift: number[] | null;
  summaries: [string, { absMax: number[]; sum?: number[]; scatter?: number[] }][];
  quotas: [string, number][];
  ownSeed: number;
  rng: RngState;
}

/** The state as its schema reads it back (descriptor.ts). */
export interface RestoredDemState extends Omit<DemState, 'model' | 'summaryShift' | 'summaries' | 'rowsOf' | 'lastMeans' | 'quotas'> {
  model: GaussianMixture | null;
  summaryShift: Float64Array | null;
  summaries: Map<string, DataSummaryPayload>;
  rowsOf: Map<string, number>;
  lastMeans: Map<string, number>;
  quotas: Map<string, number>;
}

export { DEM_INITS, type DemInitMethod, type DemInitialParameters, type DemOptions, type DemServerOptions } from './options.js';

type Phase = 'count' | 'subset' | 'kfed' | 'em' | 'done';

/** The arrays one after the other. */
function concat(parts: ArrayLike<number>[]): Float64Array {
  const out = new Float64Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function mean(v: number[]): number {
  return v.reduce((a, b) => a + b, 0) / v.length;
}

/** What accept() keeps of one reply, by phase. */
type Accepted =
  | { phase: 'count'; rows: number }
  | { phase: 'subset'; values: Float64Array }
  | { phase: 'kfed'; rows: number; local: ReceivedKfedLocal }
  | { phase: 'em'; rows: number; stats: ReceivedStats; quantizationRidge?: QuantizationRidge[]; quantizationEmpty?: number[] };

/** A ridge added to a component's covariance in a secure round (quantizationRidges): its index and the amount on each variance. */
export interface QuantizationRidge {
  component: number;
  ridge: number;
}

/**
 * An EM round's metrics: the clients' average mean log-likelihood; in a
 * secure round with full covariances, only when there were any, the ridges
 * its sum needed and the components whose count summed to 0 (their first and
 * second moments, quantization noise, taken as 0).
 */
export interface DemRoundMetrics {
  logLikelihood: number;
  quantizationRidge?: QuantizationRidge[];
  quantizationEmpty?: number[];
}

export class DemServer implements ServerRole<Accepted, GaussianMixture> {
  readonly protocol = DEM_PROTOCOL;
  /** Distributed noise cannot apply: the summed statistics are checked against each other (counts against rows, variances >= 0), which noise of a client's whole scale breaks (docs/privacy.md). */
  readonly secureNoise = "its summed sufficient statistics (counts, sums, second moments) grow with each client's rows and are checked against each other (counts against rows, variances >= 0): noise of one client's scale breaks those checks and the EM step; distributed EM takes exact secure sums only";
  private readonly o: ResolvedDemServerOptions;
  private readonly rng: Rng;
  private phase: Phase;
  private initRoundCount = 0;
  private emRoundCount = 0;
  private current: GaussianMixture | undefined;
  private readonly historyValues: number[] = [];
  private convergedFlag = false;
  /** what each client reported first about its rows; later reports must agree */
  private readonly rowsOf = new Map<string, number>();
  /** each client's mean log-likelihood in the last EM round (clients that answered it) */
  private lastMeans = new Map<string, number>();
  private summaryShift: Float64Array | undefined;
  private readonly summaries = new Map<string, NonNullable<ReceivedStats['summary']>>();
  private quotas = new Map<string, number>();
  /** the requests configure() made: the only ones accept() takes */
  private readonly sent = new WeakSet<Message>();
  /** what accept() returned: the only values aggregate() takes */
  private readonly made = new WeakSet<object>();
  /** the feature range the federation declared (featureRange given): what clients send is checked against it */
  private readonly declared: FeatureRange | undefined;
  /** the seed of the server's own random choice (k-FED's seed device, the subset fit), drawn first so that the clients' seeds do not move it */
  private ownSeed: number;

  /** Options checked here (checkServerOptions), unless they are what it returned. */
  constructor(options: DemServerOptions) {
    this.o = checkServerOptions(options);
    const { init, covarianceType: t, nFeatures: d } = this.o;
    const given = typeof init === 'object' ? init : undefined;
    this.declared = this.o.declared;
    const { lo, hi } = this.o.range;
    this.rng = new Rng(this.o.seed);
    this.ownSeed = this.seed();
    try {
      if (given) {
        this.current = GaussianMixture.fromParameters({ covarianceType: t, weights: given.weights, means: given.means, covariances: given.covariances, nFeatures: d });
        this.phase = 'em';
      } else if (init === 'separated') {
        this.current = this.separated(lo, hi);
        this.phase = 'em';
      } else {
        this.phase = init === 'subset' ? 'count' : 'kfed';
      }
      if (this.phase === 'em' && this.o.maxRounds === 0) this.phase = 'done';
    } catch (e) {
      this.rng.dispose();
      throw e;
    }
  }

  private separated(lo: Float64Array, hi: Float64Array): GaussianMixture {
    const { nComponents: k, nFeatures: d, covarianceType: t, regCovar } = this.o;
    return withScope((s) => {
      const out = s.u32(1);
      s.check(s.w.fm_dem_separated_init(COV_CODE[t], k, d, s.f64From(lo), s.f64From(hi), regCovar, out));
      return GaussianMixture.fromHandle(s, s.readU32(out, 1)[0]!, this.modelOptions());
    });
  }

  private modelOptions() {
    return { nComponents: this.o.nComponents, covarianceType: this.o.covarianceType, regCovar: this.o.regCovar, tol: this.o.tol, maxIter: this.o.maxRounds };
  }

  /** A fresh seed for a client or a server-side draw. */
  private seed(): number {
    return Math.floor(this.rng.uniform(1)[0]! * 2 ** 32);
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** The current model (owned by the server; see result). Undefined before the initialization has run. */
  get model(): GaussianMixture | undefined {
    return this.current;
  }

  /** Per EM round, the average over the clients of their mean log-likelihood under that round's broadcast model. */
  get history(): number[] {
    return [...this.historyValues];
  }

  get initRounds(): number {
    return this.initRoundCount;
  }

  /** How the first model was chosen, with the settings that method used (a result says which defaults applied). */
  get initialization(): DemInitialization {
    const { init, kfedLocalClusters, kfedGrouping, kfedStarts, subsetSize } = this.o;
    if (typeof init === 'object') return { method: 'given' };
    if (init === 'subset') return { method: 'subset', subsetSize };
    if (init === 'kfed') return { method: 'kfed', localClusters: kfedLocalClusters, grouping: kfedGrouping, starts: kfedGrouping === 'seed-device' ? 1 : kfedStarts };
    return { method: 'separated' };
  }

  get emRounds(): number {
    return this.emRoundCount;
  }

  /** true when the stopping rule ended the run (not maxRounds) */
  get converged(): boolean {
    return this.convergedFlag;
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    const out = this.configureRound(ctx);
    for (const m of out.values()) this.sent.add(m);
    return out;
  }

  private configureRound(ctx: RoundContext): Map<string, Message> {
    const out = new Map<string, Message>();
    const r = ctx.round;
    switch (this.phase) {
      case 'count': {
        const m = DEM_COUNT_REQUEST.create('server', r, {});
        for (const id of ctx.clients) out.set(id, m);
        break;
      }
      case 'subset':
        for (const id of ctx.clients) {
          const count = this.quotas.get(id) ?? 0;
          if (count > 0) out.set(id, DEM_SUBSET_REQUEST.create('server', r, { count, seed: this.seed() }));
        }
        break;
      case 'kfed':
        for (const id of ctx.clients) {
          out.set(id, DEM_KFED_REQUEST.create('server', r, { localClusters: this.o.kfedLocalClusters, covarianceType: this.o.covarianceType, seed: this.seed() }));
        }
        break;
      case 'em': {
        const model = this.current!;
        if (this.emRoundCount === 0) {
          // the weighted mean of the first model's means: near the data, so the
          // clients' scatters about it lose nothing when recentered (tied)
          const { nComponents: k, nFeatures: d } = this.o;
          const w = model.weights;
          const m = model.means;
          this.summaryShift = new Float64Array(d);
          for (let c = 0; c < k; c++) for (let j = 0; j < d; j++) this.summaryShift[j] += w[c]! * m[c * d + j]!;
        }
        // clients whose summary the server has get the model alone; the others (all of them in the first EM round) the shift too
        const params = gmmParams(model);
        const plain = DEM_MODEL.create('server', r, { model: params });
        const withShift = DEM_MODEL.create('server', r, { model: params, summaryShift: this.summaryShift! });
        for (const id of ctx.clients) out.set(id, this.summaries.has(id) ? plain : withShift);
        break;
      }
      case 'done':
        break;
    }
    return out;
  }

  /** Checks one reply in full (content, the rows it reports); throws InvalidMessageError with the reason. */
  accept(unread: Message, request: Message, ctx?: RoundContext): Accepted {
    // the request is one this server made (its payload is trusted); the reply is read if the runtime has not
    if (request === null || typeof request !== 'object' || !this.sent.has(request)) {
      throw new InvalidParameterError(`accept() takes a request this server's configure() made, got ${formatValue(request)}`);
    }
    const reply = readReply(this.protocol, request, unread);
    const { nComponents: k, nFeatures: d, covarianceType: t } = this.o;
    let out: Accepted;
    switch (request.kind) {
      case DEM_KINDS.countRequest:
        out = { phase: 'count', rows: checkCount(reply.payload as CountReply, d) };
        break;
      case DEM_KINDS.subsetRequest: {
        const values = checkSubsetRows(reply.payload as SubsetReply, (request.payload as { count: number }).count, d);
        this.declared?.rows('values', values);
        const subset: Accepted = { phase: 'subset', values };
        this.made.add(subset);
        return subset;
      }
      case DEM_KINDS.kfedRequest: {
        const local = checkKfedLocal(reply.payload as KfedLocalReply, t, this.o.kfedLocalClusters, d, this.o.regCovar);
        if (this.declared) {
          this.declared.rows('centers', local.centers);
          checkStatsInRange(this.declared, kfedLocalType(t), local.k, d, local.centers, local);
        }
        out = { phase: 'kfed', rows: local.rows, local };
        break;
      }
      default: {
        const shift = (request.payload as ModelBroadcast).summaryShift;
        // a secure round's sum: each value within the round's quantization bound of the exact sum
        const quantization = ctx === undefined ? 0 : (checkContext(ctx).quantization ?? 0);
        const stats = checkStats(reply.payload as StatsReply, t, k, d, this.o.regCovar, shift, quantization);
        if (this.declared) {
          checkStatsInRange(this.declared, t, k, d, this.current!.means, stats);
          const absMax = stats.summary?.absMax;
          // a secure sum's absMax is its users' maxima summed: their mean is at most their largest
          const users = reply.users ?? 1;
          if (absMax) for (let j = 0; j < d; j++) this.declared.magnitude(`summary absMax[${j}]`, j, absMax[j]! / users);
        }
        // the log-likelihood it reports must be one its statistics allow: the stopping rule averages them
        const summary = stats.summary ?? this.summaries.get(reply.from);
        checkLogLikelihood(this.current!, stats, this.summaryShift ?? shift, summary);
        if (quantization > 0 && t === 'full') {
          const { ridged, ridges, empty } = quantizationRidges(stats, summary?.absMax ?? new Float64Array(d), k, d, this.o.regCovar, quantization);
          out = { phase: 'em', rows: stats.rows, stats: ridged, ...(ridges.length ? { quantizationRidge: ridges } : {}), ...(empty.length ? { quantizationEmpty: empty } : {}) };
        } else {
          out = { phase: 'em', rows: stats.rows, stats };
        }
      }
    }
    // a client's rows do not change during a run (its summary depends on them)
    const before = this.rowsOf.get(reply.from);
    if (before !== undefined && before !== out.rows) throw new InvalidMessageError(`reports ${out.rows} rows, ${before} before`);
    this.made.add(out);
    return out;
  }

  /** Ends the round with the accepted replies (the runtime has dealt with the failures). */
  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, Accepted>): DemRoundMetrics | undefined {
    const ctx = checkContext(context);
    const accepted = checkAccepted<Accepted>(acceptedReplies, this.made);
    for (const [id, a] of accepted) if (a.phase !== 'subset') this.rowsOf.set(id, a.rows);
    // every reply of a round answers its phase's request (accept() read them so)
    const replies = [...accepted.values()];
    switch (this.phase) {
      case 'count':
        this.setQuotas(new Map([...accepted].map(([id, a]) => [id, (a as Extract<Accepted, { phase: 'count' }>).rows])));
        this.initRoundCount += 1;
        this.phase = 'subset';
        return undefined;
      case 'subset':
        this.fitSubset(replies.map((a) => (a as Extract<Accepted, { phase: 'subset' }>).values));
        this.initRoundCount += 1;
        return undefined;
      case 'kfed':
        this.kfed(replies.map((a) => (a as Extract<Accepted, { phase: 'kfed' }>).local));
        this.initRoundCount += 1;
        return undefined;
      case 'em': {
        const em = [...accepted].map(([id, a]) => [id, a as Extract<Accepted, { phase: 'em' }>] as const);
        const logLikelihood = this.emStep(new Map(em.map(([id, a]) => [id, a.stats])));
        const ridges = em.flatMap(([, a]) => a.quantizationRidge ?? []);
        const empty = em.flatMap(([, a]) => a.quantizationEmpty ?? []);
        return { logLikelihood, ...(ridges.length ? { quantizationRidge: ridges } : {}), ...(empty.length ? { quantizationEmpty: empty } : {}) };
      }
      default:
        throw new InvalidParameterError(`round ${ctx.round}: the server is done`);
    }
  }

  /** Subset sizes proportional to the clients' rows (largest remainders), summing to min(subsetSize, all rows). */
  private setQuotas(rows: Map<string, number>): void {
    const total = [...rows.values()].reduce((a, b) => a + b, 0);
    const size = Math.min(this.o.subsetSize, total);
    const ids = [...rows.keys()];
    const q = apportion(size, ids.map((id) => rows.get(id)!));
    this.quotas = new Map(ids.map((id, i) => [id, q[i]!]));
  }

  private fitSubset(parts: Float64Array[]): void {
    const d = this.o.nFeatures;
    const n = parts.reduce((a, p) => a + p.length / d, 0);
    const x = Matrix.zeros(n, d);
    let i = 0;
    for (const p of parts) {
      for (let r = 0; r < p.length / d; r++, i++) for (let j = 0; j < d; j++) x.data[j * n + i] = p[r * d + j]!;
    }
    const gm = new GaussianMixture({ ...this.modelOptions(), tol: 1e-3, maxIter: 100, initParams: 'kmeans', seed: this.ownSeed });
    try {
      gm.fit(x);
    } catch (e) {
      gm.dispose();
      throw inContext(e, `subset initialization on ${n} rows`);
    }
    this.startEm(gm);
  }

  private kfed(ls: ReceivedKfedLocal[]): void {
    const { nComponents: k, nFeatures: d, covarianceType: t, regCovar, kfedGrouping, kfedStarts } = this.o;
    // 0 asks the core for the paper's seed-device grouping
    const starts = kfedGrouping === 'seed-device' ? 0 : kfedStarts;
    const cat = (f: (l: ReceivedKfedLocal) => Float64Array) => concat(ls.map(f));
    const [lo, hi] = seedParts(this.ownSeed);
    const gm = withScope((s) => {
      const out = s.u32(1);
      s.check(
        s.w.fm_dem_kfed_server(
          s.struct(DEM_KFED_SERVER_OPTIONS, { covType: COV_CODE[t], k, d, m: ls.length, regCovar, starts, seedLo: lo, seedHi: hi }),
          s.f64From(ls.map((l) => l.k)), s.f64From(cat((l) => l.centers)), s.f64From(cat((l) => l.nk)), s.f64From(cat((l) => l.s1)), s.f64From(cat((l) => l.s2)), out,
        ),
      );
      return GaussianMixture.fromHandle(s, s.readU32(out, 1)[0]!, this.modelOptions());
    });
    this.startEm(gm);
  }

  private startEm(gm: GaussianMixture): void {
    this.current?.dispose();
    this.current = gm;
    this.phase = this.o.maxRounds === 0 ? 'done' : 'em';
  }

  /** The M-step over the round's statistics; returns the round's average mean log-likelihood. */
  private emStep(stats: Map<string, ReceivedStats>): number {
    const { tol, maxRounds } = this.o;
    const ids = [...stats.keys()];
    const rs = ids.map((id) => stats.get(id)!);
    // summaries arrive with a client's first statistics and are kept for the later rounds
    const sm = rs.map((r, i) => r.summary ?? this.summaries.get(ids[i]!)!);
    const means = rs.map((r) => r.logLikelihood / r.rows);
    const average = mean(means);
    const round = this.emRoundCount + 1;
    // the change is measured on the clients that answered this round and the one before
    const both = ids.map((id, i) => [i, this.lastMeans.get(id)] as const).filter(([, last]) => last !== undefined);
    const converged = round >= 2 && both.length > 0 && Math.abs(mean(both.map(([i]) => means[i]!)) - mean(both.map(([, last]) => last!))) < tol;
    const last = converged || round >= maxRounds;
    let next: GaussianMixture;
    try {
      next = this.mStep(rs, sm, round, converged);
    } catch (e) {
      this.blame(e, ids, rs, sm, round, converged);
      throw e;
    }
    // committed only now that the M-step has succeeded
    this.current!.dispose();
    this.current = next;
    this.emRoundCount = round;
    this.historyValues.push(average);
    this.lastMeans = new Map(ids.map((id, i) => [id, means[i]!]));
    ids.forEach((id, i) => this.summaries.set(id, sm[i]!));
    if (last) {
      this.convergedFlag = converged;
      this.phase = 'done';
    }
    return average;
  }

  /** The M-step on these clients' statistics and summaries (the core's fm_dem_server_step); changes nothing. */
  private mStep(rs: ReceivedStats[], sm: DataSummaryPayload[], round: number, converged: boolean): GaussianMixture {
    const tied = this.o.covarianceType === 'tied';
    const cat = (f: (i: number) => ArrayLike<number>) => concat(rs.map((_, i) => f(i)));
    return withScope((s) => {
      const out = s.u32(1);
      s.check(
        s.w.fm_dem_server_step(
          this.current!.handle, s.struct(DEM_SERVER_STEP_OPTIONS, { m: rs.length, regCovar: this.o.regCovar, nIter: round, converged: converged ? 1 : 0 }),
          s.f64From(rs.map((r) => r.rows)), s.f64From(rs.map((r) => r.logLikelihood)),
          s.f64From(cat((i) => rs[i]!.nk)), s.f64From(cat((i) => rs[i]!.s1)), s.f64From(cat((i) => rs[i]!.s2)),
          s.f64From(this.summaryShift!), s.f64From(cat((i) => sm[i]!.absMax)),
          s.f64From(tied ? cat((i) => sm[i]!.sum!) : []), s.f64From(tied ? cat((i) => sm[i]!.scatter!) : []),
          out,
        ),
      );
      return GaussianMixture.fromHandle(s, s.readU32(out, 1)[0]!, this.modelOptions());
    });
  }

  /**
   * After a failed M-step: a client whose data are on a scale far from the
   * others' (robust.ts outliers), and without whose statistics
   * the M-step succeeds, is blamed (a ContributionError: the runtime excludes
   * it and the round is aggregated again). A failure no such client explains
   * (a component collapsing on honest data) is left to fail the run.
   */
  private blame(e: unknown, ids: string[], rs: ReceivedStats[], sm: DataSummaryPayload[], round: number, converged: boolean): void {
    if (!(e instanceof FedmixError) || e.code === 'WASM' || ids.length < 2) return;
    const d = this.o.nFeatures;
    const scale = rs.map((r, i) => {
      let m = Math.max(...sm[i]!.absMax);
      r.nk.forEach((n, c) => {
        if (n > 0) for (let j = 0; j < d; j++) m = Math.max(m, Math.abs(r.s1[c * d + j]!) / n);
      });
      return m;
    });
    for (const i of outliers(scale)) {
      const keep = ids.map((_, x) => x).filter((x) => x !== i);
      try {
        this.mStep(keep.map((x) => rs[x]!), keep.map((x) => sm[x]!), round, converged).dispose();
      } catch {
        continue;
      }
      throw new ContributionError(ids[i]!, `its statistics make the M-step fail (${e.message}); without them it succeeds`, 'its statistics make the M-step fail');
    }
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save): phase, counters, model, what replies are checked against, the generator. @internal */
  saveState(): DemState {
    const arrays = (m: Map<string, DataSummaryPayload>) => [...m].map(([id, x]): [string, DemState['summaries'][number][1]] => [id, { absMax: Array.from(x.absMax), ...(x.sum ? { sum: Array.from(x.sum) } : {}), ...(x.scatter ? { scatter: Array.from(x.scatter) } : {}) }]);
    return {
      phase: this.phase,
      initRounds: this.initRoundCount,
      emRounds: this.emRoundCount,
      model: this.current ? this.current.toJSON() : null,
      history: [...this.historyValues],
      converged: this.convergedFlag,
      rowsOf: [...this.rowsOf],
      lastMeans: [...this.lastMeans],
      summaryShift: this.summaryShift ? Array.from(this.summaryShift) : null,
      summaries: arrays(this.summaries),
      quotas: [...this.quotas],
      ownSeed: this.ownSeed,
      rng: this.rng.getState(),
    };
  }

  /** A saved state (its schema checked it; the model loaded) put into this new server role; the role then owns the model. @internal */
  restoreState(state: RestoredDemState): void {
    const { nComponents: k, nFeatures: d, covarianceType: t } = this.o;
    const m = state.model;
    const bad = (field: string, why: string) => {
      m?.dispose();
      return stateMismatch('dem', field, why);
    };
    if (m && (m.nComponents !== k || m.nFeatures !== d || m.covarianceType !== t)) throw bad('model', `${m.nComponents} ${m.covarianceType} components of ${m.nFeatures} features, but the server's options say ${k} ${t} of ${d}`);
    if (!m && (state.phase === 'em' || state.phase === 'done')) throw bad('model', `a server in phase ${state.phase} has a model`);
    if (state.summaryShift && state.summaryShift.length !== d) throw bad('summaryShift', `${state.summaryShift.length} values for ${d} features`);
    for (const [id, x] of state.summaries) {
      if (x.absMax.length !== d || (x.sum !== undefined && x.sum.length !== d) || (x.scatter !== undefined && x.scatter.length !== d * d)) throw bad('summaries', `${id}'s summary does not have ${d} features`);
    }
    if (state.emRounds > this.o.maxRounds || state.history.length !== state.emRounds) throw bad('emRounds', `${state.emRounds} EM rounds (of at most ${this.o.maxRounds}) with ${state.history.length} rounds of history`);
    try {
      this.rng.setState(state.rng);
    } catch (e) {
      m?.dispose();
      throw e;
    }
    this.current?.dispose();
    this.current = m ?? undefined;
    this.phase = state.phase;
    this.initRoundCount = state.initRounds;
    this.emRoundCount = state.emRounds;
    this.historyValues.splice(0, this.historyValues.length, ...state.history);
    this.convergedFlag = state.converged;
    this.rowsOf.clear();
    for (const [id, n] of state.rowsOf) this.rowsOf.set(id, n);
    this.lastMeans = new Map(state.lastMeans);
    this.summaryShift = state.summaryShift ?? undefined;
    this.summaries.clear();
    for (const [id, x] of state.summaries) this.summaries.set(id, x);
    this.quotas = new Map(state.quotas);
    this.ownSeed = state.ownSeed;
  }

  /** Hands the current model to the caller, who disposes it; the server keeps none. */
  result(): GaussianMixture {
    const gm = this.current;
    if (!gm) throw new InvalidParameterError('the server has no model yet; run the initialization first');
    this.current = undefined;
    return gm;
  }

  /** Frees the server's model (if not taken) and its generator. */
  dispose(): void {
    this.current?.dispose();
    this.current = undefined;
    if (!this.rng.disposed) this.rng.dispose();
  }
}

/** What the core's M-step adds to every component's count (stats.rs COUNT_FLOOR, scikit-learn's). */
const COUNT_FLOOR = 10 * Number.EPSILON;

/**
 * A secure round's summed full statistics, each component's covariance made
 * positive definite where the quantization left it short. The core's check
 * (SuffStats::check_sum) accepts a sum whose moment matrices lack up to
 * eps = (d + k + 2) q of positive semidefinite, so the covariance the M-step
 * forms (S2 / n - m m^T + regCovar, n = nk + COUNT_FLOOR, m = s1 / n, as
 * SuffStats::estimates) may lack up to eps (1 + |m|^2) / n in a direction:
 * more than regCovar where a feature is (near) constant within a component.
 * Only such a component gets a ridge: the smallest delta, doubling from
 * regCovar, whose S2 + delta n I gives a covariance the M-step can factor
 * (the core's Cholesky, pivots above the variance floor (16 eps absMax)^2),
 * at most that worst case; beyond it, a NumericalError.
 *
 * A component whose count summed to 0 (the layout clamps a count the
 * quantization took below zero: its rows' responsibilities are within the
 * bound of none) has only quantization noise in s1 and S2, which over the
 * count floor would put its mean anywhere (1e9 away on raw shuttle): both are
 * taken as 0, so the M-step keeps its mean with covariance regCovar I, as a
 * plain M-step does for a component no row reaches.
 *
 * Every other component, and every plain round, is left exactly as summed;
 * what was changed goes into the round's metrics.
 */
function quantizationRidges(
  stats: ReceivedStats, absMax: ArrayLike<number>, k: number, d: number, regCovar: number, quantization: number,
): { ridged: ReceivedStats; ridges: QuantizationRidge[]; empty: number[] } {
  const eps = (d + k + 2) * quantization;
  const packed = packedLength(d);
  const floor = Array.from({ length: d }, (_, j) => (16 * Number.EPSILON * absMax[j]!) ** 2);
  const ridges: QuantizationRidge[] = [];
  const empty: number[] = [];
  let s1: Float64Array | undefined;
  let s2: Float64Array | undefined;
  const cov = new Float64Array(d * d);
  /** whether component c's covariance, with delta n on S2's diagonal, factors as the M-step factors it */
  const definite = (c: number, n: number, m: Float64Array, delta: number): boolean => {
    for (let j = 0, i = c * packed; j < d; j++) {
      for (let l = j; l < d; l++, i++) {
        const second = j === l && delta > 0 ? stats.s2[i]! + delta * n : stats.s2[i]!;
        const v = second / n - m[j]! * m[l]! + (j === l ? regCovar : 0);
        cov[j * d + l] = v;
        cov[l * d + j] = v;
      }
    }
    const l = cholesky(cov, d);
    return l !== undefined && floor.every((f, j) => l[j * d + j]! * l[j * d + j]! > f);
  };
  for (let c = 0; c < k; c++) {
    if (stats.nk[c] === 0) {
      let noise = false;
      for (let j = 0; j < d; j++) noise ||= stats.s1[c * d + j] !== 0;
      for (let i = c * packed; i < (c + 1) * packed; i++) noise ||= stats.s2[i] !== 0;
      if (noise) {
        (s1 ??= Float64Array.from(stats.s1)).fill(0, c * d, (c + 1) * d);
        (s2 ??= Float64Array.from(stats.s2)).fill(0, c * packed, (c + 1) * packed);
        empty.push(c);
      }
      continue;
    }
    const n = stats.nk[c]! + COUNT_FLOOR;
    const m = Float64Array.from({ length: d }, (_, j) => stats.s1[c * d + j]! / n);
    if (definite(c, n, m, 0)) continue;
    const cap = (eps * (1 + m.reduce((a, x) => a + x * x, 0))) / n;
    let delta = regCovar > 0 ? Math.min(regCovar, cap) : cap;
    while (!definite(c, n, m, delta)) {
      if (delta >= cap) {
        throw new NumericalError(
          `Fitting failed at component ${c}: its covariance from the secure sum is not positive definite even with a ridge of ${cap.toExponential(3)}, ` +
            `the most the round's quantization bound ${quantization.toExponential(3)} explains ((d + k + 2) q (1 + |mean offset|^2) / n_k); increase regCovar or lower nComponents`,
        );
      }
      delta = Math.min(2 * delta, cap);
    }
    s2 ??= Float64Array.from(stats.s2);
    for (let j = 0, i = c * packed; j < d; i += d - j, j++) s2[i] = s2[i]! + delta * n;
    ridges.push({ component: c, ridge: delta });
  }
  return { ridged: s1 || s2 ? { ...stats, ...(s1 ? { s1 } : {}), ...(s2 ? { s2 } : {}) } : stats, ridges, empty };
}
