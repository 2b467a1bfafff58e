/**
 * FedDistr's server role (the paper's section 4.3, with Gaussian base
 * distributions, its equation 5):
 *
 *   round 1   every client is sent the encoder and the clustering to use, and
 *             answers once with its base distributions (task label, rows,
 *             mean, covariance);
 *   matching  for every pair of clients, their base distributions are matched
 *             by linearSumAssignment (Kuhn-Munkres) on a cost between Gaussians
 *             (2-Wasserstein or Bhattacharyya); pairs of different task labels
 *             are forbidden (+Infinity); each row also has its own "unmatched"
 *             column at a large finite cost, so that a base distribution whose
 *             task label the other client lacks stays feasible; a matched pair
 *             whose cost is within its bound is parallel. The bound (default)
 *             is what sampling alone puts between two estimates of one
 *             Gaussian, NOISE_FACTOR times its expectation for the two row
 *             counts (samplingNoise): in 64 dimensions two fits of one digit
 *             from 100 rows each lie about 30 RMS standard deviations apart
 *             in W2, far beyond any fixed multiple of one; or `threshold`;
 *   sets      parallel pairs join their sets, most parallel first, when the
 *             sets stay parallel sets: no client twice in one (a client's own
 *             bases are distinct by its clustering) and every two members of
 *             different clients parallel themselves (complete linkage: a
 *             fragment of a few rows, close to everything of its label, does
 *             not chain two distinct base distributions together); each set
 *             is represented by the members' count-weighted merge (default)
 *             or by the member fitted on the most rows (the paper's dominant
 *             rule: one client's estimate where many hold the distribution);
 *             a base distribution in no parallel pair is orthogonal and kept;
 *   result    the consolidated set (weights: each set's share of all rows) is
 *             sent to every client present, as a notification.
 *
 * A reply that fails a check (a covariance not positive definite, a task label
 * not declared, counts that do not add up, a mean of the wrong dimension, a
 * value that is not finite) is refused by accept(): the runtime excludes its
 * client and the consolidation is built without it. Why an honest client's
 * upload passes each: see client.ts.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { linearSumAssignment } from '../../assignment/linear-sum-assignment.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, checkFailures, readReply, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { stateMismatch } from '../registry/artifact.js';
import { symmetricEigen, type CovarianceKind, type Gaussian } from '../../distributions/gaussian.js';
import { withGaussianCosts } from './gaussian.js';
import { CONSOLIDATED, DESCRIBE, FEDDISTR_PROTOCOL, receiveDistributions, type BaseDistribution, type DescribePayload, type ReceivedDistributions } from './messages.js';
import { checkServerOptions, type FedDistrCost, type FedDistrServerOptions, type ResolvedFedDistrServerOptions } from './options.js';

export type { FedDistrCost, FedDistrServerOptions } from './options.js';
export { readEncoder, type PcaEncoder } from './encoder.js';

/** One consolidated base distribution. */
export interface ConsolidatedBase extends Gaussian {
  label: number;
  /** rows behind it: the sum over its parallel set */
  count: number;
  /** count over all rows */
  weight: number;
  /** the uploaded base distributions it stands for */
  members: { client: string; index: number }[];
}

export interface MatchedPair {
  a: { client: string; index: number };
  b: { client: string; index: number };
  cost: number;
  /** the cost at or below which this pair is parallel: `threshold`, or its sampling-noise bound */
  bound: number;
  /** cost <= bound */
  parallel: boolean;
  /** whether the two ended in one parallel set (a parallel pair may not: complete linkage, one base per client) */
  joined: boolean;
}

export interface FedDistrOutcome {
  bases: ConsolidatedBase[];
  /** the estimated number of distinct base distributions: the consolidated set's size */
  estimatedBaseDistributions: number;
  /** per client whose upload was used, the consolidated base each of its uploaded base distributions went to */
  membership: Map<string, Int32Array>;
  /** every pair the matching made (across clients), with its cost and whether it was parallel */
  pairs: MatchedPair[];
  /** base distributions uploaded in all */
  uploaded: number;
  /** the threshold given; absent when each pair had its sampling-noise bound (pairs[].bound) */
  threshold?: number;
  cost: FedDistrCost;
  covariance: CovarianceKind;
}

/**
 * The default parallel bound: a matched pair is parallel when its cost is at
 * most what sampling gives two estimates of one Gaussian, this many times its
 * expectation (samplingNoise).
 */
export const NOISE_FACTOR = 2;

export class FedDistrServer implements ServerRole<ReceivedDistributions, FedDistrOutcome> {
  readonly protocol = FEDDISTR_PROTOCOL;
  readonly dimension: number;
  readonly covariance: CovarianceKind;
  readonly cost: FedDistrCost;
  readonly merge: 'dominant' | 'weighted';
  private readonly describe: DescribePayload;
  private readonly threshold: number | undefined;
  private phase: 'describe' | 'result' | 'done' = 'describe';
  private outcome: FedDistrOutcome | undefined;
  private readonly made = new WeakSet<object>();

  /** Options checked here (checkServerOptions), unless they are what it returned. */
  constructor(options: FedDistrServerOptions | ResolvedFedDistrServerOptions = {}) {
    const o = checkServerOptions(options);
    this.covariance = o.covariance;
    this.cost = o.cost;
    this.merge = o.merge;
    this.threshold = o.threshold;
    this.describe = o.describe;
    this.dimension = o.describe.encoder.dimension;
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  configure(context: RoundContext): Map<string, Message> {
    const ctx = checkContext(context);
    const out = new Map<string, Message>();
    if (this.phase === 'describe') {
      const request = DESCRIBE.create('server', ctx.round, this.describe);
      this.made.add(request);
      for (const id of ctx.clients) out.set(id, request);
    } else if (this.phase === 'result') {
      const bases = this.outcome!.bases.map((b) => ({ label: b.label, count: b.count, weight: b.weight, mean: b.mean, covariance: b.covariance }));
      const result = CONSOLIDATED.create('server', ctx.round, { bases });
      for (const id of ctx.available) out.set(id, result);
      this.phase = 'done';
    }
    return out;
  }

  accept(unread: Message, request: Message): ReceivedDistributions {
    if (request === null || typeof request !== 'object' || !this.made.has(request)) {
      throw new InvalidParameterError(`accept() takes a request this server's configure() made, got ${formatValue(request)}`);
    }
    const reply = readReply(this.protocol, request, unread);
    const received = receiveDistributions(reply, this.dimension, this.covariance);
    this.made.add(received);
    return received;
  }

  aggregate(context: RoundContext, acceptedReplies: ReadonlyMap<string, ReceivedDistributions>, failed: readonly Failure[] = []): { clients: number; uploaded: number; estimatedBaseDistributions: number } {
    const ctx = checkContext(context);
    const accepted = checkAccepted<ReceivedDistributions>(acceptedReplies, this.made);
    checkFailures(failed);
    if (this.phase !== 'describe') throw new InvalidParameterError(`round ${ctx.round}: the server has nothing to aggregate`);
    // the clients in the round's order, so that a run without one client consolidates the others alike
    const order = ctx.clients.filter((id) => accepted.has(id));
    for (const id of accepted.keys()) if (!order.includes(id)) order.push(id);
    this.outcome = this.consolidate(order.map((id) => accepted.get(id)!));
    this.phase = 'result';
    return { clients: order.length, uploaded: this.outcome.uploaded, estimatedBaseDistributions: this.outcome.estimatedBaseDistributions };
  }

  /** The matching, the parallel sets and their representatives. */
  private consolidate(uploads: ReceivedDistributions[]): FedDistrOutcome {
    const all: BaseDistribution[] = uploads.flatMap((u) => u.bases);
    const start: number[] = [];
    let offset = 0;
    for (const u of uploads) {
      start.push(offset);
      offset += u.bases.length;
    }
    const d = this.dimension;
    const B = all.length;
    const noise = this.threshold === undefined ? all.map((b) => samplingNoise(b, d, this.covariance, this.cost)) : undefined;
    // the bound of bases x and y: the threshold given, or NOISE_FACTOR times their expected sampling distance
    const boundOf = (x: number, y: number): number => {
      if (!noise) return this.threshold!;
      const spread = (1 / all[x]!.count + 1 / all[y]!.count) * ((noise[x]! + noise[y]!) / 2);
      // W2 is a distance, its noise a squared one; Bhattacharyya is itself of the order of a squared distance
      return this.cost === 'wasserstein' ? Math.sqrt(NOISE_FACTOR * spread) : NOISE_FACTOR * spread;
    };
    // every parallel pair of bases of different clients (not only the matched ones), for complete linkage
    const parallelAt = new Set<number>();
    const key = (x: number, y: number) => Math.min(x, y) * B + Math.max(x, y);
    const matched: { pair: MatchedPair; x: number; y: number }[] = [];
    // every upload copied into the core once; one batched cost matrix per pair of clients
    const labels = Int32Array.from(all, (b) => b.label);
    withGaussianCosts(all, labels, d, this.covariance, this.cost, (costs) => {
      for (let A = 0; A < uploads.length; A++) {
        for (let C = A + 1; C < uploads.length; C++) {
          const a = uploads[A]!.bases;
          const b = uploads[C]!.bases;
          const na = a.length;
          const nb = b.length;
          if (na === 0 || nb === 0) continue;
          const block = costs.block(start[A]!, na, start[C]!, nb);
          const width = nb + na;
          // the real pairs (different task labels forbidden: +Infinity), then one "unmatched" column per row
          const cost = new Float64Array(na * width).fill(Infinity);
          let most = 0;
          for (let i = 0; i < na; i++) {
            for (let j = 0; j < nb; j++) {
              if (a[i]!.label !== b[j]!.label) continue;
              const c = block[i * nb + j]!;
              // a cost that is not a number (rounding on a near-singular pair) cannot be parallel
              cost[i * width + j] = Number.isFinite(c) ? c : Number.MAX_VALUE / (4 * (na + 1));
              if (Number.isFinite(c)) {
                most = Math.max(most, c);
                if (c <= boundOf(start[A]! + i, start[C]! + j)) parallelAt.add(key(start[A]! + i, start[C]! + j));
              }
            }
          }
          // "unmatched": dearer than any real pair, so every feasible real pair is matched first
          const unmatched = (most + 1) * (na + nb + 1);
          for (let i = 0; i < na; i++) cost[i * width + nb + i] = unmatched;
          const { rowInd, colInd } = linearSumAssignment(cost, { shape: [na, width] });
          for (let k = 0; k < rowInd.length; k++) {
            const i = rowInd[k]!;
            const j = colInd[k]!;
            if (j >= nb) continue;
            const x = start[A]! + i;
            const y = start[C]! + j;
            const c = cost[i * width + j]!;
            const bound = boundOf(x, y);
            matched.push({ pair: { a: { client: a[i]!.client, index: i }, b: { client: b[j]!.client, index: j }, cost: c, bound, parallel: parallelAt.has(key(x, y)), joined: false }, x, y });
          }
        }
      }
    });
    // parallel sets: the matched parallel pairs, most parallel (cost / bound) first, join two sets when
    // no client is in both and every two members of different clients are parallel
    const parent = Int32Array.from(all, (_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
      return i;
    };
    const members = new Map<number, number[]>(all.map((_, i) => [i, [i]]));
    const order = matched.filter((m) => m.pair.parallel).sort((p, q) => p.pair.cost / p.pair.bound - q.pair.cost / q.pair.bound || p.x - q.x || p.y - q.y);
    for (const { x, y } of order) {
      const rx = find(x);
      const ry = find(y);
      if (rx === ry) continue;
      const mx = members.get(rx)!;
      const my = members.get(ry)!;
      const clients = new Set(mx.map((i) => all[i]!.client));
      if (my.some((j) => clients.has(all[j]!.client))) continue;
      if (!mx.every((i) => my.every((j) => parallelAt.has(key(i, j))))) continue;
      const [root, other] = rx < ry ? [rx, ry] : [ry, rx];
      parent[other] = root;
      members.set(root, [...members.get(root)!, ...members.get(other)!]);
      members.delete(other);
    }
    for (const m of matched) m.pair.joined = find(m.x) === find(m.y);
    const setOf = new Map<number, number>();
    const groups: number[][] = [];
    all.forEach((_, i) => {
      const r = find(i);
      if (!setOf.has(r)) {
        setOf.set(r, groups.length);
        groups.push([]);
      }
      groups[setOf.get(r)!]!.push(i);
    });
    const total = all.reduce((s, b) => s + b.count, 0);
    const bases = groups.map((g): ConsolidatedBase => {
      const group = g.map((i) => all[i]!);
      const count = group.reduce((s, b) => s + b.count, 0);
      const rep = this.merge === 'dominant' ? dominant(group) : weightedMerge(group, d, this.covariance);
      return { label: group[0]!.label, count, weight: count / total, mean: rep.mean, covariance: rep.covariance, members: group.map((b) => ({ client: b.client, index: b.index })) };
    });
    const membership = new Map<string, Int32Array>();
    uploads.forEach((u, A) => membership.set(u.client, Int32Array.from(u.bases, (_, i) => setOf.get(find(start[A]! + i))!)));
    const out: FedDistrOutcome = { bases, estimatedBaseDistributions: bases.length, membership, pairs: matched.map((m) => m.pair), uploaded: all.length, cost: this.cost, covariance: this.covariance };
    if (this.threshold !== undefined) out.threshold = this.threshold;
    return out;
  }

  /** The state between rounds, as JSON-safe data (the descriptor's state.save): the phase and the consolidation once made. @internal */
  saveState(): unknown {
    const o = this.outcome;
    const orNull = (x: number) => (Number.isFinite(x) ? x : null);
    return {
      phase: this.phase,
      outcome: o
        ? {
            ...o,
            bases: o.bases.map((b) => ({ ...b, mean: Array.from(b.mean), covariance: Array.from(b.covariance), members: b.members.map((m) => ({ ...m })) })),
            membership: [...o.membership].map(([id, m]) => [id, Array.from(m)]),
            pairs: o.pairs.map((p) => ({ ...p, cost: orNull(p.cost), bound: orNull(p.bound) })),
          }
        : null,
    };
  }

  /** A saved state (its schema checked it) put into this new server role. @internal */
  restoreState(state: { phase: 'describe' | 'result' | 'done'; outcome: FedDistrOutcome | null }): void {
    const o = state.outcome;
    const bad = (field: string, why: string) => stateMismatch('feddistr', field, why);
    if ((state.phase === 'describe') !== (o === null)) throw bad('outcome', `a server in phase ${state.phase} ${o ? 'has no' : 'has a'} consolidation`);
    if (o) {
      if (o.cost !== this.cost || o.covariance !== this.covariance) throw bad('outcome', `${o.cost} costs on ${o.covariance} covariances; the server's options say ${this.cost} on ${this.covariance}`);
      const d = this.dimension;
      for (const b of o.bases) if (b.mean.length !== d || b.covariance.length !== (this.covariance === 'full' ? d * d : d)) throw bad('outcome.bases', `a base is not of dimension ${d}`);
    }
    this.phase = state.phase;
    this.outcome = o ?? undefined;
  }

  result(): FedDistrOutcome {
    // before the upload is aggregated there is nothing consolidated yet
    const o = this.outcome ?? { bases: [], estimatedBaseDistributions: 0, membership: new Map(), pairs: [], uploaded: 0, cost: this.cost, covariance: this.covariance, ...(this.threshold === undefined ? {} : { threshold: this.threshold }) };
    return { ...o, bases: o.bases.slice(), membership: new Map(o.membership), pairs: o.pairs.slice() };
  }
}

/** The member fitted on the most rows (the first of those on a tie). */
function dominant(members: BaseDistribution[]): Gaussian {
  let best = members[0]!;
  for (const m of members) if (m.count > best.count) best = m;
  return { mean: best.mean.slice(), covariance: best.covariance.slice() };
}

/** The mixture of the members collapsed to one Gaussian: mean sum w m, covariance sum w (S + (m - mean)(m - mean)'). */
function weightedMerge(members: BaseDistribution[], d: number, kind: CovarianceKind): Gaussian {
  const n = members.reduce((s, b) => s + b.count, 0);
  const mean = new Float64Array(d);
  for (const b of members) for (let j = 0; j < d; j++) mean[j]! += (b.count / n) * b.mean[j]!;
  const covariance = new Float64Array(kind === 'full' ? d * d : d);
  for (const b of members) {
    const w = b.count / n;
    if (kind === 'full') {
      for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) covariance[i * d + j]! += w * (b.covariance[i * d + j]! + (b.mean[i]! - mean[i]!) * (b.mean[j]! - mean[j]!));
    } else {
      for (let j = 0; j < d; j++) covariance[j]! += w * (b.covariance[j]! + (b.mean[j]! - mean[j]!) ** 2);
    }
  }
  return { mean, covariance };
}

/**
 * What sampling alone puts between two estimates of one Gaussian N(m, S), per
 * unit of 1/n_a + 1/n_b: the expected cost of the two maximum-likelihood
 * estimates from n_a and n_b rows is (1/n_a + 1/n_b) times this, to first
 * order (the estimates' errors small beside S). With S's eigenvalues l_i:
 *
 *   W2^2, full       tr S + sum_{i,j} l_i l_j (1 + [i = j]) / (2 (l_i + l_j))
 *                    (the means' part tr S; the covariances' part from the
 *                    Bures metric's local form sum |dS_ij|^2 / (2 (l_i + l_j))
 *                    and Wishart's Var dS_ij = l_i l_j (1 + [i = j]) / n)
 *   W2^2, diagonal   tr S + tr S / 2
 *   Bhattacharyya    d / 8 + d (d + 1) / 16   (full; scale-free)
 *                    d / 8 + d / 8            (diagonal)
 *
 * S is the base's own covariance, so the bound of a pair averages the two.
 * With shrinkage the covariances' errors are smaller, so this errs toward
 * parallel for pairs of many rows, where it is small anyway.
 */
export function samplingNoise(b: Gaussian, d: number, kind: CovarianceKind, cost: FedDistrCost): number {
  if (cost === 'bhattacharyya') return kind === 'full' ? d / 8 + (d * (d + 1)) / 16 : d / 4;
  let trace = 0;
  for (let j = 0; j < d; j++) trace += kind === 'full' ? b.covariance[j * d + j]! : b.covariance[j]!;
  if (kind === 'diagonal') return 1.5 * trace;
  const l = symmetricEigen(b.covariance, d).values.map((v) => Math.max(v, 0));
  let bures = 0;
  for (let i = 0; i < d; i++) {
    bures += l[i]! / 2;
    for (let j = 0; j < i; j++) if (l[i]! + l[j]! > 0) bures += (l[i]! * l[j]!) / (l[i]! + l[j]!);
  }
  return trace + bures;
}
