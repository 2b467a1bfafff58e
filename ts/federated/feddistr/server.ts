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
 *             whose cost is below the threshold is parallel;
 *   sets      parallel pairs are joined by union-find into parallel sets; each
 *             set is represented by the member fitted on the most rows (the
 *             paper's dominant rule) or by the members' count-weighted merge;
 *             a base distribution in no parallel pair is orthogonal and kept;
 *   result    the consolidated set (weights: each set's share of all rows) is
 *             sent to every client present, as a notification.
 *
 * A reply that fails a check (a covariance not positive definite, a task label
 * not declared, counts that do not add up, a mean of the wrong dimension, a
 * value that is not finite) is refused by accept(): the runtime excludes its
 * client and the consolidation is built without it.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { linearSumAssignment } from '../../assignment/linear-sum-assignment.js';
import { PCA } from '../../data/pca.js';
import { Autoencoder } from '../../models/autoencoder.js';
import { guardRead, isFloat64Array, LIMITS, readOptions, readRecord, requireInteger, requireNumber, requireOneOf } from '../../validate.js';
import type { Message } from '../messages/envelope.js';
import { checkAccepted, checkContext, checkFailures, readReply, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import { withGaussianCosts, type CovarianceKind, type Gaussian } from './gaussian.js';
import { CONSOLIDATED, DESCRIBE, FEDDISTR_PROTOCOL, MAX_DIMENSION, receiveDistributions, type BaseDistribution, type DescribePayload, type ReceivedDistributions } from './messages.js';

export type FedDistrCost = 'wasserstein' | 'bhattacharyya';

/** A PCA's parameters as the server shares them: mean (features) and components (dimension x features, row-major). */
export interface PcaEncoder {
  mean: Float64Array;
  components: Float64Array;
}

export interface FedDistrServerOptions {
  /**
   * 'identity' (default; needs `dimension`), a fitted PCA or its { mean,
   * components }, or a fitted Autoencoder (its code layer's outputs; the
   * network and its parameters are sent to the clients)
   */
  encoder?: 'identity' | PCA | PcaEncoder | Autoencoder;
  /** the rows' number of features, for the identity encoder */
  dimension?: number;
  /** the base distributions' covariance form (default 'full') */
  covariance?: CovarianceKind;
  /** how clients split a task label into base distributions (default 'gmm') */
  clustering?: 'kmeans' | 'gmm';
  /** how clients choose their number (default 'bic'; k-means needs 'silhouette') */
  criterion?: 'bic' | 'silhouette';
  /** the range of base distributions per task label (default 1..5) */
  kMin?: number;
  kMax?: number;
  /** the cost between two Gaussians (default 'wasserstein': W2) */
  cost?: FedDistrCost;
  /**
   * A matched pair is parallel when its cost is below this. Default: for
   * 'bhattacharyya' 0.5; for 'wasserstein' 3 times the median over the
   * uploaded base distributions of their RMS standard deviation sqrt(tr S / d)
   * (fragments of a few rows estimate their covariance poorly: a tighter
   * threshold leaves them unmatched).
   */
  threshold?: number;
  /** how a parallel set is represented: its member fitted on the most rows (default, the paper's) or the count-weighted merge */
  merge?: 'dominant' | 'weighted';
  /** the clients' clustering seed (default 0) */
  seed?: number;
}

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
  parallel: boolean;
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
  threshold: number;
  cost: FedDistrCost;
  covariance: CovarianceKind;
}

const KEYS = ['encoder', 'dimension', 'covariance', 'clustering', 'criterion', 'kMin', 'kMax', 'cost', 'threshold', 'merge', 'seed'] as const;

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

  constructor(given: FedDistrServerOptions = {}) {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be an object like { encoder, dimension, cost, threshold }, got ${formatValue(given)}`);
    const o = readOptions(given, KEYS) as FedDistrServerOptions;
    this.covariance = requireOneOf('covariance', o.covariance ?? 'full', ['full', 'diagonal'] as const);
    const clustering = requireOneOf('clustering', o.clustering ?? 'gmm', ['kmeans', 'gmm'] as const);
    const criterion = requireOneOf('criterion', o.criterion ?? (clustering === 'kmeans' ? 'silhouette' : 'bic'), ['bic', 'silhouette'] as const);
    if (clustering === 'kmeans' && criterion === 'bic') throw new InvalidParameterError("k-means has no likelihood for BIC: use criterion 'silhouette' or clustering 'gmm'");
    const kMin = requireInteger('kMin', o.kMin ?? 1, 1, LIMITS.components);
    const kMax = requireInteger('kMax', o.kMax ?? Math.max(5, kMin), kMin, LIMITS.components);
    this.cost = requireOneOf('cost', o.cost ?? 'wasserstein', ['wasserstein', 'bhattacharyya'] as const);
    this.merge = requireOneOf('merge', o.merge ?? 'dominant', ['dominant', 'weighted'] as const);
    this.threshold = o.threshold === undefined ? undefined : requireNumber('threshold', o.threshold, 0);
    const seed = requireInteger('seed', o.seed ?? 0, 0, 2 ** 32 - 1);
    const encoder = readEncoder(o.encoder ?? 'identity', o.dimension);
    this.dimension = encoder.dimension;
    this.describe = { encoder, covariance: this.covariance, clustering, criterion, kMin, kMax, seed };
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
    const threshold = this.threshold ?? (this.cost === 'bhattacharyya' ? 0.5 : 3 * medianRmsStd(all, d, this.covariance));
    const parent = Int32Array.from(all, (_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
      return i;
    };
    const pairs: MatchedPair[] = [];
    // every upload copied into the core once; one batched cost matrix per pair of clients
    const labels = Int32Array.from(all, (b) => b.label);
    withGaussianCosts(all, labels, d, this.covariance, this.cost, (costs) => {
      for (let A = 0; A < uploads.length; A++) {
        for (let B = A + 1; B < uploads.length; B++) {
          const a = uploads[A]!.bases;
          const b = uploads[B]!.bases;
          const na = a.length;
          const nb = b.length;
          if (na === 0 || nb === 0) continue;
          const block = costs.block(start[A]!, na, start[B]!, nb);
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
              if (Number.isFinite(c)) most = Math.max(most, c);
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
            const c = cost[i * width + j]!;
            const parallel = c < threshold;
            pairs.push({ a: { client: a[i]!.client, index: i }, b: { client: b[j]!.client, index: j }, cost: c, parallel });
            if (parallel) {
              const ra = find(start[A]! + i);
              const rb = find(start[B]! + j);
              if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
            }
          }
        }
      }
    });
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
      const members = g.map((i) => all[i]!);
      const count = members.reduce((s, b) => s + b.count, 0);
      const rep = this.merge === 'dominant' ? dominant(members) : weightedMerge(members, d, this.covariance);
      return { label: members[0]!.label, count, weight: count / total, mean: rep.mean, covariance: rep.covariance, members: members.map((b) => ({ client: b.client, index: b.index })) };
    });
    const membership = new Map<string, Int32Array>();
    uploads.forEach((u, A) => membership.set(u.client, Int32Array.from(u.bases, (_, i) => setOf.get(find(start[A]! + i))!)));
    return { bases, estimatedBaseDistributions: bases.length, membership, pairs, uploaded: all.length, threshold, cost: this.cost, covariance: this.covariance };
  }

  result(): FedDistrOutcome {
    // before the upload is aggregated there is nothing consolidated yet
    const o = this.outcome ?? { bases: [], estimatedBaseDistributions: 0, membership: new Map(), pairs: [], uploaded: 0, threshold: this.threshold ?? NaN, cost: this.cost, covariance: this.covariance };
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

/** The median over the base distributions of sqrt(tr S / d): the default W2 threshold's unit. */
function medianRmsStd(all: BaseDistribution[], d: number, kind: CovarianceKind): number {
  if (all.length === 0) return 0;
  const v = all
    .map((b) => {
      let t = 0;
      for (let j = 0; j < d; j++) t += kind === 'full' ? b.covariance[j * d + j]! : b.covariance[j]!;
      return Math.sqrt(t / d);
    })
    .sort((x, y) => x - y);
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

export function readEncoder(given: unknown, dimension: unknown): DescribePayload['encoder'] {
  if (given === 'identity') {
    if (dimension === undefined) throw new InvalidParameterError("the identity encoder needs `dimension`: the rows' number of features");
    return { kind: 'identity', dimension: requireInteger('dimension', dimension, 1, MAX_DIMENSION) };
  }
  if (guardRead('encoder', () => given instanceof Autoencoder)) {
    const ae = given as Autoencoder;
    const f = ae.nFeatures;
    if (dimension !== undefined && requireInteger('dimension', dimension, 1) !== f) throw new InvalidParameterError(`dimension is ${String(dimension)} but the Autoencoder takes ${f} features`);
    const o = ae.options;
    const sizes = [f, ...o.hiddenLayers, f];
    const codeLayer = ae.codeLayer;
    const k = sizes[codeLayer]!;
    if (k > MAX_DIMENSION) throw new InvalidParameterError(`the Autoencoder's code is ${k} wide; at most ${MAX_DIMENSION}`);
    return { kind: 'autoencoder', dimension: k, network: { sizes, activation: o.activation, outputActivation: o.outputActivation, loss: o.loss, parameters: ae.getParameters(), codeLayer } };
  }
  if (guardRead('encoder', () => given instanceof PCA)) {
    const pca = given as PCA;
    const mean = pca.mean;
    const components = pca.components;
    return checkPca(mean, components, dimension);
  }
  if (given !== null && typeof given === 'object') {
    const e = readRecord(given as PcaEncoder, ['mean', 'components'], 'encoder');
    if (!isFloat64Array(e.mean) || !isFloat64Array(e.components)) throw new InvalidParameterError('a PCA encoder is { mean: Float64Array, components: Float64Array } (or a fitted PCA)');
    return checkPca(e.mean.slice(), e.components.slice(), dimension);
  }
  throw new InvalidParameterError(`encoder must be 'identity', a fitted PCA or { mean, components }, or a fitted Autoencoder, got ${formatValue(given)}`);
}

function checkPca(mean: Float64Array, components: Float64Array, dimension: unknown): DescribePayload['encoder'] {
  const f = mean.length;
  if (f === 0 || components.length === 0 || components.length % f !== 0) throw new InvalidParameterError(`a PCA encoder's components (${components.length} values) must be a whole number of rows of its ${f} features`);
  for (const v of mean) if (!Number.isFinite(v)) throw new InvalidParameterError('the PCA encoder\'s mean holds a value that is not finite');
  for (const v of components) if (!Number.isFinite(v)) throw new InvalidParameterError('the PCA encoder\'s components hold a value that is not finite');
  const k = components.length / f;
  if (k > MAX_DIMENSION) throw new InvalidParameterError(`the PCA encoder has ${k} components; at most ${MAX_DIMENSION}`);
  if (dimension !== undefined && requireInteger('dimension', dimension, 1) !== f) throw new InvalidParameterError(`dimension is ${String(dimension)} but the PCA encoder takes ${f} features`);
  return { kind: 'pca', dimension: k, mean, components };
}
