/**
 * The FedGEM server. It sees only what clients upload: per round, each
 * component's maximizer and uncertainty radius; at the end, the centers and
 * counts. Each round it moves every component to the average of the meeting
 * points of its overlaps with other clients' balls (crates/fedmix-core/src/
 * fedgem/server.rs); at the end it merges overlapping components of different
 * clients into super-clusters, whose number is the estimated global K.
 *
 * Final radii follow the paper's heuristic, computed here from what the
 * clients sent (the same information, so phi can be tuned without new
 * uploads): R_c = phi * delta_c / sqrt(n_c), with delta_c the smallest distance
 * between client c's centers (shrinking as its estimates sharpen with more
 * rows). A client with one component has no delta_c; it takes the median
 * delta of the others (or, if every client has one component, the median
 * distance from a center to the nearest center of another client).
 */
import { FedmixError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { requireOneOf, requirePositive } from '../../validate.js';
import { coreConstant } from '../../wasm/constants.js';
import { withScope } from '../../wasm/memory.js';
import { checkEnvelope, decodeMessage, message, type Message } from '../message.js';
import type { ExcludedClient } from '../transport.js';
import {
  BALLS,
  CANDIDATES,
  CENTERS,
  FINAL,
  RESULT,
  SILHOUETTES,
  receiveBalls,
  receiveFinal,
  receiveSilhouettes,
  type CandidatesPayload,
  type CentersPayload,
  type ReceivedComponents,
  type ResultPayload,
} from './messages.js';

export interface FedGEMServerOptions {
  /**
   * the dimension every client must share; without it the first accepted upload
   * sets it (until that client and every other accepted one are excluded)
   */
  nFeatures?: number;
  /** how overlaps are found: a k-d tree (default) or all pairs (the reference) */
  search?: 'kdtree' | 'all-pairs';
  /** what a bad upload does: its client is excluded from then on (default), or it throws */
  onInvalidClient?: 'exclude' | 'throw';
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

export class FedGEMServer {
  readonly excluded: ExcludedClient[] = [];
  readonly history: RoundSummary[] = [];
  private readonly options: FedGEMServerOptions;
  private nFeatures: number | undefined;
  /** clients with an accepted BALLS or FINAL upload: while none is left, an inferred dimension is forgotten */
  private readonly accepted = new Set<string>();
  private readonly out = new Set<string>();
  private balls: ReceivedComponents[] = [];
  private finals: ReceivedComponents[] = [];
  private silhouettes = new Map<string, { values: (number | null)[]; nValidation: number }>();
  private candidateCount = 0;

  constructor(options: FedGEMServerOptions = {}) {
    if (options.search !== undefined) requireOneOf('search', options.search, ['kdtree', 'all-pairs']);
    this.options = options;
    this.nFeatures = options.nFeatures;
  }

  /** Clients not excluded so far. */
  isActive(client: string): boolean {
    return !this.out.has(client);
  }

  /**
   * Runs `fn` on an upload (wire text or message) of `kind` sent for `round`;
   * a bad one excludes its client (or throws, by option) and changes nothing
   * else. Anything thrown while checking it is an InvalidMessageError.
   */
  private accept<T>(input: unknown, kind: string, round: number, fn: (m: Message) => T): T | undefined {
    let from: string | undefined;
    try {
      const m = typeof input === 'string' ? decodeMessage(input, kind) : checkEnvelope(input, kind);
      from = m.from;
      if (this.out.has(m.from)) throw new InvalidMessageError(`client ${m.from} was excluded earlier`);
      if (m.round !== round) throw new InvalidMessageError(`client ${m.from}: a message for round ${m.round} arrived in round ${round}`);
      return fn(m);
    } catch (caught) {
      // anything else (a throwing getter or proxy in an in-process message) is still a bad message
      const e = caught instanceof FedmixError ? caught : new InvalidMessageError(`a ${kind} message could not be checked: ${caught instanceof Error ? caught.message : `a ${typeof caught} was thrown`}`);
      if (e.code === 'WASM' || this.options.onInvalidClient === 'throw') throw e;
      from ??= senderOf(input);
      if (from !== undefined && !this.out.has(from)) {
        this.out.add(from);
        this.balls = this.balls.filter((b) => b.client !== from);
        this.finals = this.finals.filter((b) => b.client !== from);
        this.silhouettes.delete(from);
        this.accepted.delete(from);
        // an inferred dimension needs an accepted client behind it
        if (this.accepted.size === 0 && this.options.nFeatures === undefined) this.nFeatures = undefined;
      }
      this.excluded.push({ client: from ?? 'unknown client', round, reason: e.message });
      return undefined;
    }
  }

  private settleDimension(client: string, d: number): void {
    this.nFeatures ??= d;
    this.accepted.add(client);
  }

  /** Takes a client's BALLS upload for `round`; returns whether it was accepted. */
  receiveBalls(input: string | Message, round: number): boolean {
    const r = this.accept(input, BALLS, round, (m) => {
      if (this.balls.some((b) => b.client === m.from)) throw new InvalidMessageError(`client ${m.from}: a second upload in round ${round}`);
      const c = receiveBalls(m, this.nFeatures);
      this.settleDimension(c.client, c.d);
      this.balls.push(c);
      return true;
    });
    return r === true;
  }

  /**
   * The collaborative step over this round's uploads: each client's updated
   * centers, as CENTERS messages keyed by client. Clears the round.
   */
  update(round: number): Map<string, Message<typeof CENTERS, CentersPayload>> {
    const got = this.balls;
    this.balls = [];
    const replies = new Map<string, Message<typeof CENTERS, CentersPayload>>();
    if (got.length === 0) return replies;
    const d = this.nFeatures!;
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
      replies.set(c.client, message(CENTERS, 'server', round, { centers: updated.slice(at * d, (at + c.k) * d) }));
      at += c.k;
    }
    this.history.push({ round, clients: got.length, components: m, overlaps: pairs, maxRadius: radii.reduce((a, b) => Math.max(a, b), 0) });
    return replies;
  }

  private indexed(): number {
    return this.options.search === 'all-pairs' ? 0 : 1;
  }

  /** Takes a client's FINAL upload; returns whether it was accepted. */
  receiveFinal(input: string | Message, round: number): boolean {
    const r = this.accept(input, FINAL, round, (m) => {
      if (this.finals.some((b) => b.client === m.from)) throw new InvalidMessageError(`client ${m.from}: a second final upload`);
      const c = receiveFinal(m, this.nFeatures);
      this.settleDimension(c.client, c.d);
      this.finals.push(c);
      return true;
    });
    return r === true;
  }

  /** Clients whose final uploads were accepted, in order. */
  get clients(): string[] {
    return this.finals.map((c) => c.client);
  }

  /** The final merge at `phi`. */
  merge(phi: number): Merge {
    requirePositive('phi', phi);
    const finals = this.finals;
    if (finals.length === 0) throw new InvalidParameterError(`no final upload was accepted (${this.excluded.length} clients excluded); nothing to merge`);
    const d = this.nFeatures!;
    const deltas = finalDeltas(finals, d);
    const radius = new Map(finals.map((c, i) => [c.client, (phi * deltas[i]!) / Math.sqrt(c.nSamples)] as const));
    const { centers, radii, owners, weights } = stack(finals, d, (c) => new Float64Array(c.k).fill(radius.get(c.client)!));
    const m = radii.length;
    return withScope((s) => {
      const labels = s.u32(m);
      const k = s.u32(1);
      const out = s.f64(m * d);
      s.check(s.w.fm_fedgem_merge(s.f64From(centers), s.f64From(radii), s.u32From(owners), s.f64From(weights), m, d, this.indexed(), labels, k, out));
      const estimatedK = s.readU32(k, 1)[0]!;
      const all = new Int32Array(s.readU32(labels, m));
      const memberships = new Map<string, Int32Array>();
      let at = 0;
      for (const c of finals) {
        memberships.set(c.client, all.slice(at, at + c.k));
        at += c.k;
      }
      return { phi, estimatedK, globalCenters: s.readF64(out, estimatedK * d), memberships, radii: radius };
    });
  }

  /** The candidates for tuning phi: the global centers each phi gives. */
  candidates(phis: readonly number[], round: number): Message<typeof CANDIDATES, CandidatesPayload> {
    if (phis.length === 0) throw new InvalidParameterError('tuning phi needs at least one candidate value');
    this.candidateCount = phis.length;
    this.silhouettes.clear();
    const candidates = phis.map((phi) => {
      const r = this.merge(phi);
      return { phi, estimatedK: r.estimatedK, centers: r.globalCenters };
    });
    return message(CANDIDATES, 'server', round, { candidates });
  }

  /** Takes a client's silhouettes of the candidates. */
  receiveSilhouettes(input: string | Message, round: number): boolean {
    const r = this.accept(input, SILHOUETTES, round, (m) => {
      if (!this.finals.some((c) => c.client === m.from)) throw new InvalidMessageError(`client ${m.from} sent silhouettes without a final upload`);
      this.silhouettes.set(m.from, receiveSilhouettes(m, this.candidateCount));
      return true;
    });
    return r === true;
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
  choosePhi(phis: readonly number[], tolerance?: number): { phi: number; scores: number[]; standardErrors: number[] } {
    if (phis.length !== this.candidateCount) throw new InvalidParameterError('choosePhi needs the phis sent as candidates');
    if (tolerance !== undefined && !(tolerance >= 0)) throw new InvalidParameterError(`the phi tolerance must be non-negative, got ${String(tolerance)}`);
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

  /** The result for every client at `phi`, as RESULT messages keyed by client. */
  result(phi: number, round: number): { merge: Merge; messages: Map<string, Message<typeof RESULT, ResultPayload>> } {
    const merge = this.merge(phi);
    const messages = new Map<string, Message<typeof RESULT, ResultPayload>>();
    for (const [client, ms] of merge.memberships) {
      messages.set(client, message(RESULT, 'server', round, { phi, estimatedK: merge.estimatedK, globalCenters: merge.globalCenters, memberships: Array.from(ms) }));
    }
    return { merge, messages };
  }
}

/** Indices (into the stacked components) of the informative ones; all of them if none is. */
function informative(list: ReceivedComponents[]): number[] {
  // a component counts when it explains at least this share of its client's rows (the core's MIN_SHARE)
  const minShare = coreConstant('fedgem', 'min_share');
  const kept: number[] = [];
  let at = 0;
  for (const c of list) {
    const total = c.counts.reduce((a, b) => a + b, 0);
    c.counts.forEach((n, j) => {
      if (n > 0 && n >= minShare * total) kept.push(at + j);
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

/** Best effort: who sent an upload whose envelope failed its checks (undefined when unreadable). */
function senderOf(input: unknown): string | undefined {
  let m = input;
  if (typeof m === 'string') {
    try {
      m = JSON.parse(m);
    } catch {
      return undefined;
    }
  }
  try {
    const from = m !== null && typeof m === 'object' ? (m as { from?: unknown }).from : undefined;
    return typeof from === 'string' && from.length > 0 ? from : undefined;
  } catch {
    return undefined;
  }
}
