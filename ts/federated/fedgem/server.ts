/**
 * The FedGEM server. It sees only what clients upload: per round, each
 * component's maximizer and uncertainty radius; at the end, the centers and
 * counts. Each round it moves every component to the average of the meeting
 * points of its overlaps with other clients' balls (crates/fedmix-core/src/
 * fedgem/server.rs) and sends each client its centers with the next request;
 * at the end it merges overlapping components of different clients into
 * super-clusters, whose number is the estimated global K, tunes phi by the
 * clients' validation silhouettes when given candidates, and sends each
 * client its result (the protocol, Algorithm 1 of the paper: index.ts).
 *
 * Final radii follow the paper's heuristic, computed here from what the
 * clients sent (the same information, so phi can be tuned without new
 * uploads): R_c = phi * delta_c / sqrt(n_c), with delta_c the smallest distance
 * between client c's centers (shrinking as its estimates sharpen with more
 * rows). A client with one component has no delta_c; it takes the median
 * delta of the others (or, if every client has one component, the median
 * distance from a center to the nearest center of another client).
 *
 * The variance. FedGEM's clients share one isotropic variance sigma^2 (the
 * paper's identity covariance). When the server estimates it (the default),
 * a first round asks every client for the spread of its training rows around
 * its own local k-means clusters: the within-cluster sum of squares SS_c and
 * its degrees of freedom dof_c = (n_c - K_c) d, additive statistics whose sums
 * give the pooled estimate sigma^2 = sum SS_c / sum dof_c, the same as one
 * pooled within-cluster estimate over every client's clusters. The estimate
 * goes with every ROUND and FINISH to the clients without a variance of their
 * own (see client.ts for the choice of K_c there).
 */
import { FederationError, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { requirePositive } from '../../validate.js';
import { FEDGEM_MERGE_OPTIONS } from '../../wasm/abi.generated.js';
import { coreConstant } from '../../wasm/constants.js';
import { withScope } from '../../wasm/memory.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, checkFailures, readReply, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import {
  CANDIDATES,
  FEDGEM_PROTOCOL,
  FINISH,
  RESULT,
  ROUND,
  SPREAD,
  receiveBalls,
  receiveFinal,
  receiveSilhouettes,
  receiveSpread,
  type ReceivedComponents,
  type ReceivedSpread,
} from './messages.js';
import { checkServerOptions, type FedGEMServerOptions, type ResolvedFedGEMServerOptions } from './options.js';
import { stateMismatch } from '../registry/artifact.js';

/** A grid of phi to tune over: 0.25 to 32 by factors of two. */
export const PHI_GRID: readonly number[] = [0.25, 0.5, 1, 2, 4, 8, 16, 32];

export type { FedGEMServerOptions } from './options.js';

/** The federated estimate of the shared variance: sum SS_c / sum dof_c. */
export interface VarianceEstimate {
  /** sigma^2 = sumSquares / degreesOfFreedom */
  variance: number;
  /** the clients' within-cluster sums of squares, summed */
  sumSquares: number;
  /** their degrees of freedom (rows - local clusters) x features, summed */
  degreesOfFreedom: number;
  /** the clients whose spreads were accepted, in reply order */
  clients: string[];
}

/** The outcome of merging at one phi. */
export interface Merge {
  phi: number;
  estimatedK: number;
  /** estimatedK x d, row-major: each super-cluster's centers averaged by counts */
  globalCenters: Float64Array;
  /** per client (in upload order): the super-cluster of each of its components */
  memberships: Map<string, Int32Array>;
  /** per client: its final radius R_c */
  radii: Map<string, number>;
  /** joins the separation step made (0 when it is off); estimatedK is the paper's merge's count minus these */
  separationJoins: number;
  /** the distance it joined below: the smallest distance between two counted components of one client (undefined when off or when no client has two) */
  separation?: number;
  /** components with fewer than two rows (or none), placed in the nearest super-cluster without counting in estimatedK */
  uncounted: number;
}

/** What a FedGEM run produced: the merge at the chosen phi, the tuning's scores when phi was tuned, the variance estimate when estimated. */
export interface FedGEMOutcome extends Merge {
  phiScores?: { phi: number; score: number; standardError: number; estimatedK: number }[];
  varianceEstimate?: VarianceEstimate;
}

/** One round of collaborative training, as the server saw it. */
export interface RoundSummary {
  round: number;
  clients: number;
  components: number;
  /** overlapping pairs of balls from different clients */
  overlaps: number;
  /** the largest radius reported */
  maxRadius: number;
}

type Phase = 'spread' | 'train' | 'final' | 'tune' | 'result' | 'done';
type Accepted = ReceivedComponents | ReceivedSpread | { values: (number | null)[]; nValidation: number };

export class FedGEMServer implements ServerRole<Accepted, FedGEMOutcome> {
  readonly protocol = FEDGEM_PROTOCOL;
  readonly history: RoundSummary[] = [];
  private readonly nFeatures: number;
  private readonly rounds: number;
  private readonly phis: readonly number[];
  private readonly phiTolerance: number | undefined;
  private readonly tol: number;
  private readonly search: 'kdtree' | 'all-pairs';
  private readonly separation: boolean;
  private phase: Phase;
  /** sigma^2 sent with ROUND and FINISH (given, or estimated after the first round) */
  private variance: number | undefined;
  /** sigma^2 the clients bring (variance 'clients'), known to the server but not sent */
  private readonly clientVariance: number | undefined;
  private varianceEstimate: VarianceEstimate | undefined;
  /** collaborative rounds done */
  private t = 0;
  /** each client's centers from the last update, sent with its next request */
  private pending = new Map<string, Float64Array>();
  private finals: ReceivedComponents[] = [];
  private silhouettes = new Map<string, { values: (number | null)[]; nValidation: number }>();
  private offered: { phi: number; estimatedK: number; centers: Float64Array }[] = [];
  private outcome: FedGEMOutcome | undefined;
  /** the round whose end the result is */
  private lastRound = 0;
  /** what accept() returned: the only values aggregate() takes */
  private readonly made = new WeakSet<object>();

  /** Options checked here (checkServerOptions), unless they are what it returned. */
  constructor(options: FedGEMServerOptions | ResolvedFedGEMServerOptions) {
    const o = checkServerOptions(options);
    this.nFeatures = o.nFeatures;
    this.rounds = o.rounds;
    this.tol = o.tol ?? 0;
    this.phis = o.phi;
    this.phiTolerance = o.phiTolerance;
    this.search = o.search;
    this.separation = o.separation;
    if (typeof o.variance === 'number') this.variance = o.variance;
    this.clientVariance = o.clientVariance;
    this.phase = o.variance === 'estimate' ? 'spread' : this.training();
  }

  /** The phase after the variance: collaborative rounds, or straight to the final upload. */
  private training(): Phase {
    return this.rounds > 0 ? 'train' : 'final';
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** Clients whose final uploads were accepted, in order. */
  get clients(): string[] {
    return this.finals.map((c) => c.client);
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    const out = new Map<string, Message>();
    switch (this.phase) {
      case 'spread':
        for (const id of ctx.clients) out.set(id, SPREAD.create('server', ctx.round, {}));
        break;
      case 'train':
      case 'final': {
        const type = this.phase === 'train' ? ROUND : FINISH;
        // the variance goes with every request: a client that missed a round still gets it
        const variance = this.variance === undefined ? {} : { variance: this.variance };
        for (const id of ctx.clients) out.set(id, type.create('server', ctx.round, { centers: this.pending.get(id), ...variance }));
        break;
      }
      case 'tune': {
        this.offered = this.phis.map((phi) => {
          const r = this.merge(phi);
          return { phi, estimatedK: r.estimatedK, centers: r.globalCenters };
        });
        const offer = CANDIDATES.create('server', ctx.round, { candidates: this.offered });
        const asked = new Set(ctx.clients);
        for (const id of this.clients) if (asked.has(id)) out.set(id, offer);
        break;
      }
      case 'result': {
        const o = this.outcome!;
        const there = new Set(ctx.available);
        for (const [client, ms] of o.memberships) {
          if (there.has(client)) {
            out.set(client, RESULT.create('server', this.lastRound, { phi: o.phi, estimatedK: o.estimatedK, globalCenters: o.globalCenters, memberships: ms }));
          }
        }
        this.phase = 'done';
        break;
      }
      case 'done':
        break;
    }
    return out;
  }

  accept(unread: Message, request: Message): Accepted {
    const reply = readReply(this.protocol, request, unread);
    const out =
      this.phase === 'spread'
        ? receiveSpread(reply, this.nFeatures)
        : this.phase === 'train'
          ? receiveBalls(reply, this.nFeatures)
          : this.phase === 'final'
            ? receiveFinal(reply, this.nFeatures)
            : receiveSilhouettes(reply, this.phis.length);
    this.made.add(out);
    return out;
  }

  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, Accepted>, failed: readonly Failure[]): RoundSummary | undefined {
    const ctx = checkContext(context);
    const accepted = checkAccepted<Accepted>(acceptedReplies, this.made);
    const failures = checkFailures(failed);
    this.lastRound = ctx.round;
    // an excluded client's earlier uploads leave with it
    for (const f of failures) {
      if (!f.excluded) continue;
      this.pending.delete(f.client);
      this.finals = this.finals.filter((c) => c.client !== f.client);
      this.silhouettes.delete(f.client);
    }
    switch (this.phase) {
      case 'spread':
        this.estimateVariance([...accepted.values()] as ReceivedSpread[]);
        this.phase = this.training();
        return undefined;
      case 'train': {
        const summary = this.update([...accepted.values()] as ReceivedComponents[]);
        this.t += 1;
        // every radius below tol: the components have stopped moving
        if (this.t >= this.rounds || summary.maxRadius < this.tol) this.phase = 'final';
        return summary;
      }
      case 'final':
        this.finals = [...accepted.values()] as ReceivedComponents[];
        this.pending.clear();
        if (this.phis.length > 1) this.phase = 'tune';
        else this.finish(this.phis[0]!);
        return undefined;
      case 'tune': {
        for (const [id, s] of accepted) this.silhouettes.set(id, s as { values: (number | null)[]; nValidation: number });
        const chosen = this.choosePhi(this.phis, this.phiTolerance);
        this.finish(chosen.phi, this.phis.map((p, i) => ({ phi: p, score: chosen.scores[i]!, standardError: chosen.standardErrors[i]!, estimatedK: this.offered[i]!.estimatedK })));
        return undefined;
      }
      default:
        throw new InvalidParameterError(`round ${ctx.round}: the server has nothing to aggregate`);
    }
  }

  private finish(phi: number, phiScores?: FedGEMOutcome['phiScores']): void {
    this.outcome = { ...this.merge(phi), phiScores, varianceEstimate: this.varianceEstimate };
    this.phase = 'result';
  }

  /** sigma^2 = sum SS_c / sum dof_c over the accepted spreads (see the module comment). */
  private estimateVariance(got: ReceivedSpread[]): void {
    if (got.length === 0) throw new FederationError('no client reported its spread, so the variance cannot be estimated; give the server a variance or let more clients answer');
    let sumSquares = 0;
    let dof = 0;
    for (const c of got) {
      sumSquares += c.sumSquares;
      dof += c.dof;
    }
    if (!(sumSquares > 0)) {
      throw new InvalidDataError(`every client's rows lie exactly on their local cluster centers (a within-cluster sum of squares of 0), so there is no spread to estimate the variance from; give the variance`);
    }
    const variance = sumSquares / dof;
    this.variance = variance;
    this.varianceEstimate = { variance, sumSquares, degreesOfFreedom: dof, clients: got.map((c) => c.client) };
  }

  /** The federated variance estimate, once the first round is aggregated (undefined when the variance is not estimated). */
  get estimatedVariance(): VarianceEstimate | undefined {
    const e = this.varianceEstimate;
    return e && { ...e, clients: [...e.clients] };
  }

  /**
   * The collaborative step over one round's uploads: each client's updated
   * centers, kept to go with its next request.
   */
  private update(got: ReceivedComponents[]): RoundSummary {
    const round = this.t;
    if (got.length === 0) return { round, clients: 0, components: 0, overlaps: 0, maxRadius: 0 };
    const d = this.nFeatures;
    const { centers, radii, owners } = stack(got, d, (c) => c.radii!);
    const m = radii.length;
    // components with (almost) no rows keep their centers and pull no one (the merge leaves them out in server.rs)
    const kept = informative(got);
    const mk = kept.length;
    const subCenters = new Float64Array(mk * d);
    kept.forEach((i, j) => subCenters.set(centers.subarray(i * d, (i + 1) * d), j * d));
    const updated = centers.slice();
    const pairs = withScope((s) => {
      const out = s.f64(mk * d);
      const nPairs = s.f64(1);
      const subRadii = Float64Array.from(kept, (i) => radii[i]!);
      const subOwners = Uint32Array.from(kept, (i) => owners[i]!);
      s.check(s.w.fm_fedgem_update(s.f64From(subCenters), s.f64From(subRadii), s.u32From(subOwners), mk, d, this.indexed(), out, nPairs));
      const moved = s.readF64(out, mk * d);
      kept.forEach((i, j) => updated.set(moved.subarray(j * d, (j + 1) * d), i * d));
      return s.readF64(nPairs, 1)[0]!;
    });
    let at = 0;
    for (const c of got) {
      this.pending.set(c.client, updated.slice(at * d, (at + c.k) * d));
      at += c.k;
    }
    const summary = { round, clients: got.length, components: m, overlaps: pairs, maxRadius: radii.reduce((a, b) => Math.max(a, b), 0) };
    this.history.push(summary);
    return summary;
  }

  private indexed(): number {
    return this.search === 'all-pairs' ? 0 : 1;
  }

  /** The final merge at `phi`. */
  merge(phi: number): Merge {
    requirePositive('phi', phi);
    const finals = this.finals;
    if (finals.length === 0) throw new InvalidParameterError('no final upload was accepted; nothing to merge');
    const d = this.nFeatures;
    const deltas = finalDeltas(finals, d);
    const radius = new Map(finals.map((c, i) => [c.client, (phi * deltas[i]!) / Math.sqrt(c.nSamples)] as const));
    const { centers, radii, owners, weights } = stack(finals, d, (c) => new Float64Array(c.k).fill(radius.get(c.client)!));
    const m = radii.length;
    return withScope((s) => {
      const labels = s.u32(m);
      const k = s.u32(1);
      const out = s.f64(m * d);
      const [joins, uncounted, separation] = [s.u32(1), s.u32(1), s.f64(1)];
      // the separation step needs sigma^2: 0 leaves it out
      const variance = this.separation ? (this.variance ?? this.clientVariance ?? 0) : 0;
      s.check(s.w.fm_fedgem_merge(s.f64From(centers), s.f64From(radii), s.u32From(owners), s.f64From(weights), s.struct(FEDGEM_MERGE_OPTIONS, { m, d, indexed: this.indexed(), separationVariance: variance }), labels, k, out, joins, separation, uncounted));
      const estimatedK = s.readU32(k, 1)[0]!;
      const delta = s.readF64(separation, 1)[0]!;
      const all = new Int32Array(s.readU32(labels, m));
      const memberships = new Map<string, Int32Array>();
      let at = 0;
      for (const c of finals) {
        memberships.set(c.client, all.slice(at, at + c.k));
        at += c.k;
      }
      return {
        phi,
        estimatedK,
        globalCenters: s.readF64(out, estimatedK * d),
        memberships,
        radii: radius,
        separationJoins: s.readU32(joins, 1)[0]!,
        ...(Number.isNaN(delta) ? {} : { separation: delta }),
        uncounted: s.readU32(uncounted, 1)[0]!,
      };
    });
  }

  /**
   * The phi to use: the smallest candidate whose mean silhouette over the
   * clients (weighted by their validation rows) is within `tolerance` of the
   * best; by default one standard error of the best candidate's mean (across
   * clients: sqrt(sum_c w_c^2 (s_c - mean)^2) / sum_c w_c), Breiman's
   * one-standard-error rule. The silhouette rises a little when two close
   * clusters merge (a pair 6 sigma apart scores higher as one cluster when the
   * others are far), so among scores the data cannot tell apart the least
   * merging is kept. `scores` lists every candidate's mean (NaN where no client
   * could score it).
   */
  private choosePhi(phis: readonly number[], tolerance: number | undefined): { phi: number; scores: number[]; standardErrors: number[] } {
    const stats = phis.map((_, i) => {
      const got: [number, number][] = [];
      for (const { values, nValidation } of this.silhouettes.values()) {
        const v = values[i];
        if (v !== null && v !== undefined && nValidation > 0) got.push([v, nValidation]);
      }
      const weight = got.reduce((t, [, w]) => t + w, 0);
      if (weight === 0) return { mean: NaN, se: NaN };
      const mean = got.reduce((t, [v, w]) => t + v * w, 0) / weight;
      const se = Math.sqrt(got.reduce((t, [v, w]) => t + w * w * (v - mean) ** 2, 0)) / weight;
      return { mean, se };
    });
    const scores = stats.map((x) => x.mean);
    let best = -1;
    scores.forEach((v, i) => {
      if (!Number.isNaN(v) && (best < 0 || v > scores[best]!)) best = i;
    });
    if (best < 0) throw new InvalidParameterError('no client could score any candidate (each needs validation rows spanning at least two clusters)');
    const se = stats[best]!.se;
    const slack = tolerance ?? (Number.isFinite(se) ? se : 0);
    let phi = Infinity;
    scores.forEach((v, i) => {
      if (v >= scores[best]! - slack) phi = Math.min(phi, phis[i]!);
    });
    // the best candidate always qualifies, and candidates were merged at a finite phi
    if (!Number.isFinite(phi)) throw new InvalidParameterError(`no finite phi was chosen among ${phis.join(', ')}`);
    return { phi, scores, standardErrors: stats.map((x) => x.se) };
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save); NaN scores as null. @internal */
  saveState(): unknown {
    const components = (c: ReceivedComponents) => ({ client: c.client, k: c.k, centers: Array.from(c.centers), ...(c.radii ? { radii: Array.from(c.radii) } : {}), counts: Array.from(c.counts), nSamples: c.nSamples });
    const orNull = (x: number) => (Number.isNaN(x) ? null : x);
    const o = this.outcome;
    return {
      phase: this.phase,
      variance: this.variance ?? null,
      varianceEstimate: this.varianceEstimate ?? null,
      t: this.t,
      pending: [...this.pending].map(([id, c]) => [id, Array.from(c)]),
      finals: this.finals.map(components),
      silhouettes: [...this.silhouettes],
      offered: this.offered.map((x) => ({ phi: x.phi, estimatedK: x.estimatedK, centers: Array.from(x.centers) })),
      outcome: o
        ? {
            ...o,
            globalCenters: Array.from(o.globalCenters),
            memberships: [...o.memberships].map(([id, m]) => [id, Array.from(m)]),
            radii: [...o.radii],
            phiScores: o.phiScores?.map((p) => ({ ...p, score: orNull(p.score), standardError: orNull(p.standardError) })),
            varianceEstimate: o.varianceEstimate ?? null,
          }
        : null,
      lastRound: this.lastRound,
      history: this.history.map((r) => ({ ...r })),
    };
  }

  /** A saved state (its schema checked it) put into this new server role. @internal */
  restoreState(state: RestoredFedGEMState): void {
    const d = this.nFeatures;
    const bad = (field: string, why: string) => stateMismatch('fedgem', field, why);
    for (const c of state.finals) {
      if (c.centers.length !== c.k * d || c.counts.length !== c.k || (c.radii && c.radii.length !== c.k)) throw bad('finals', `${c.client}'s ${c.k} components do not have ${d} features each`);
    }
    for (const [id, c] of state.pending) if (c.length % d !== 0) throw bad('pending', `${id}'s centers are not rows of ${d} features`);
    if (state.outcome && state.outcome.globalCenters.length !== state.outcome.estimatedK * d) throw bad('outcome.globalCenters', `not ${state.outcome.estimatedK} centers of ${d} features`);
    if (state.t > this.rounds) throw bad('t', `${state.t} rounds, of ${this.rounds}`);
    if (state.phase === 'result' && !state.outcome) throw bad('outcome', 'a server in phase result has an outcome');
    if ([...state.silhouettes.values()].some((x) => x.values.length !== this.phis.length)) throw bad('silhouettes', `not one value per candidate phi (${this.phis.length})`);
    this.phase = state.phase;
    this.variance = state.variance ?? undefined;
    this.varianceEstimate = state.varianceEstimate ?? undefined;
    this.t = state.t;
    this.pending = state.pending;
    this.finals = state.finals;
    this.silhouettes = state.silhouettes;
    this.offered = state.offered;
    this.outcome = state.outcome ?? undefined;
    this.lastRound = state.lastRound;
    this.history.splice(0, this.history.length, ...state.history);
  }

  /** The merge at the chosen phi (the caller owns it). */
  result(): FedGEMOutcome {
    if (!this.outcome) throw new InvalidParameterError('the server has no result yet');
    return this.outcome;
  }
}

/** A FedGEM server's state as its schema reads it back (descriptor.ts). */
export interface RestoredFedGEMState {
  phase: Phase;
  variance: number | null;
  varianceEstimate: VarianceEstimate | null;
  t: number;
  pending: Map<string, Float64Array>;
  finals: ReceivedComponents[];
  silhouettes: Map<string, { values: (number | null)[]; nValidation: number }>;
  offered: { phi: number; estimatedK: number; centers: Float64Array }[];
  outcome: FedGEMOutcome | null;
  lastRound: number;
  history: RoundSummary[];
}

/** Indices (into the stacked components) of the informative ones; all of them if none is. */
function informative(list: ReceivedComponents[]): number[] {
  // a component counts when it explains at least this share of its client's rows and two rows (the core's MIN_SHARE, MIN_ROWS)
  const minShare = coreConstant('fedgem', 'min_share');
  const minRows = coreConstant('fedgem', 'min_rows');
  const kept: number[] = [];
  let at = 0;
  for (const c of list) {
    const total = c.counts.reduce((a, b) => a + b, 0);
    c.counts.forEach((n, j) => {
      if (n > 0 && n >= minRows && n >= minShare * total) kept.push(at + j);
    });
    at += c.k;
  }
  return kept.length > 0 ? kept : Array.from({ length: at }, (_, i) => i);
}

/** The components of several clients, stacked: centers, radii, owner index, counts. */
function stack(list: ReceivedComponents[], d: number, radiiOf: (c: ReceivedComponents) => Float64Array) {
  const m = list.reduce((t, c) => t + c.k, 0);
  const centers = new Float64Array(m * d);
  const radii = new Float64Array(m);
  const owners = new Uint32Array(m);
  const weights = new Float64Array(m);
  let at = 0;
  list.forEach((c, i) => {
    centers.set(c.centers, at * d);
    radii.set(radiiOf(c), at);
    owners.fill(i, at, at + c.k);
    weights.set(c.counts, at);
    at += c.k;
  });
  return { centers, radii, owners, weights };
}

function distance(a: Float64Array, i: number, b: Float64Array, j: number, d: number): number {
  let s = 0;
  for (let f = 0; f < d; f++) s += (a[i * d + f]! - b[j * d + f]!) ** 2;
  return Math.sqrt(s);
}

function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const h = Math.floor(v.length / 2);
  return v.length % 2 ? v[h]! : (v[h - 1]! + v[h]!) / 2;
}

/** delta_c per client: the smallest distance between its centers, with the fallbacks of the module comment. */
function finalDeltas(finals: ReceivedComponents[], d: number): number[] {
  const own = finals.map((c) => {
    let best = Infinity;
    for (let a = 0; a < c.k; a++) for (let b = a + 1; b < c.k; b++) best = Math.min(best, distance(c.centers, a, c.centers, b, d));
    return best;
  });
  const finite = own.filter(Number.isFinite);
  let fallback: number;
  if (finite.length > 0) fallback = median(finite);
  else {
    const nearest: number[] = [];
    finals.forEach((c, i) => {
      for (let a = 0; a < c.k; a++) {
        let best = Infinity;
        finals.forEach((o, j) => {
          if (j !== i) for (let b = 0; b < o.k; b++) best = Math.min(best, distance(c.centers, a, o.centers, b, d));
        });
        if (Number.isFinite(best)) nearest.push(best);
      }
    });
    fallback = nearest.length > 0 ? median(nearest) : 1;
  }
  return own.map((v) => (Number.isFinite(v) ? v : fallback));
}

