/**
 * Quantity(alpha), the FedGenGMM paper's second scheme (section 5.2; "quantity-
 * based label imbalance" of Li et al. 2022): each client holds exactly alpha
 * randomly chosen classes, and each class's rows are split evenly at random
 * among the clients holding it. FedGEM's experiments vary it: alpha may be a
 * range [lo, hi], each client holding a number of classes drawn uniformly from
 * it, and `imbalance` makes the split uneven across clients (client sizes) or
 * within clients (class proportions).
 *
 * Which classes a client holds: the classes, shuffled, are first dealt round
 * the clients (also shuffled) one at a time, at most as many as the clients
 * have places, so that when there are places for every class every class is
 * held by someone; then each client fills its remaining places with classes
 * drawn uniformly from those it does not hold yet. Classes no client holds
 * (too few places) have their rows returned as `unassigned`.
 */
import type { LabelsLike } from '../data/labels.js';
import { apportion } from '../data/apportion.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import { type Rng } from '../random.js';
import { isArray, LIMITS, readArray, readOptions, requireInteger, requireOneOf } from '../validate.js';
import {
  assemble,
  emptyBuckets,
  encodeLabels,
  equalSplit,
  requireCells,
  requireClients,
  requireMinSize,
  rowsByClass,
  topUp,
  withRng,
  type Label,
  type Partition,
} from './shared.js';

export interface QuantityOptions {
  clients: number;
  /**
   * classes per client: an integer in [1, number of classes], or a range
   * [lo, hi] from which each client draws its number uniformly
   */
  alpha: number | readonly [number, number];
  /**
   * how a class's rows are divided among the clients holding it: 'none' (default)
   * evenly; 'clients' in proportion to client weights drawn from Dir(1, ..., 1), so
   * client sizes differ; 'classes' in proportion to each client's own class
   * proportions drawn from Dir(1, ..., 1) over its classes
   */
  imbalance?: QuantityImbalance;
  seed?: number;
  /**
   * Fewest rows a client may end with (default 1). A client left short (its
   * classes have fewer rows than clients sharing them) takes rows of its own
   * classes from other holders that can spare them; if that is not enough, an
   * InvalidParameterError says so. 0 allows empty clients.
   */
  minSize?: number;
}

export type QuantityImbalance = 'none' | 'clients' | 'classes';

export interface QuantityPartition extends Partition {
  /** classSets[c]: the classes client c holds, as indices into classes, ascending */
  classSets: Int32Array[];
  /** rows of the classes no client holds (only when clients * alpha < number of classes), ascending */
  unassigned: Int32Array;
}

export function quantity(labels: LabelsLike, options: QuantityOptions): QuantityPartition {
  const { codes, classes } = encodeLabels(labels);
  const o = readOptions(options, ['clients', 'alpha', 'imbalance', 'seed', 'minSize']);
  const checked = checkQuantity(o, codes.length, classes.length, 'labels have');
  return withRng(o.seed, (rng) => dealQuantity(rng, codes, classes, checked));
}

export interface CheckedQuantity {
  clients: number;
  /** the range of classes per client (lo = hi for a fixed alpha) */
  alpha: [number, number];
  minSize: number;
  imbalance: QuantityImbalance;
}

/** The options (as readOptions read them), validated for n rows of K classes; `having` names the classes in messages. */
export function checkQuantity(options: Partial<QuantityOptions>, n: number, K: number, having: string): CheckedQuantity {
  const minSize = requireMinSize(options.minSize);
  const clients = requireClients(options.clients, n, minSize);
  requireCells(clients, K, having === 'parts are' ? 'parts' : 'classes');
  const a = options.alpha;
  const range = isArray('alpha', a) ? readArray('alpha', a, 3) : [a, a];
  if (range.length !== 2) throw new InvalidParameterError(`alpha must be an integer or a range [lo, hi], got ${formatValue(a)}`);
  const lo = requireInteger('alpha', range[0], 1, LIMITS.partitionCells);
  const hi = requireInteger('alpha', range[1], lo, LIMITS.partitionCells);
  if (hi > K) {
    throw new InvalidParameterError(`alpha = ${hi} classes per client, but the ${having} only ${K} classes; use alpha <= ${K}`);
  }
  const imbalance = requireOneOf('imbalance', options.imbalance ?? 'none', ['none', 'clients', 'classes'] as const);
  return { clients, alpha: [lo, hi], minSize, imbalance };
}

/**
 * `items` split at random into groups in proportion to `weights`: shuffled,
 * then cut into floor(n w_g / sum w) items each, the remainders going to the
 * largest fractional parts (lowest index on ties).
 */
function weightedSplit(rng: Rng, items: ArrayLike<number>, weights: ArrayLike<number>): number[][] {
  const n = items.length;
  const perm = rng.permutation(n);
  const counts = apportion(n, weights);
  const out: number[][] = [];
  let start = 0;
  for (const c of counts) {
    out.push(Array.from(perm.subarray(start, start + c), (i) => items[i]!));
    start += c;
  }
  return out;
}

/** The dealing, on class codes, with the caller's Rng (shift() deals its artificial classes with it). */
export function dealQuantity(rng: Rng, codes: Int32Array, classes: Label[], { clients, alpha, minSize, imbalance }: CheckedQuantity): QuantityPartition {
  const K = classes.length;
  const [lo, hi] = alpha;
  // a fixed alpha draws nothing here, so Quantity(alpha) keeps its random stream
  const places = lo === hi ? new Array<number>(clients).fill(lo) : Array.from(rng.uniform(clients), (u) => lo + Math.floor(u * (hi - lo + 1)));
  const held: Set<number>[] = Array.from({ length: clients }, () => new Set<number>());
  const classOrder = rng.permutation(K);
  const clientOrder = rng.permutation(clients);
  // round the clients, each taking one class per turn while it has places
  let dealt = 0;
  for (let turn = 0; dealt < K; turn++) {
    let took = false;
    for (let i = 0; i < clients && dealt < K; i++) {
      const c = clientOrder[i]!;
      if (places[c]! > turn) {
        held[c]!.add(classOrder[dealt++]!);
        took = true;
      }
    }
    if (!took) break;
  }
  for (let c = 0; c < clients; c++) {
    const need = places[c]! - held[c]!.size;
    if (need === 0) continue;
    const others = Array.from({ length: K }, (_, k) => k).filter((k) => !held[c]!.has(k));
    for (const j of rng.choice(others.length, need)) held[c]!.add(others[j]!);
  }
  const classSets = held.map((s) => Int32Array.from(s).sort());
  const holders: number[][] = Array.from({ length: K }, () => []);
  classSets.forEach((set, c) => set.forEach((k) => holders[k]!.push(c)));
  const clientWeights = imbalance === 'clients' ? rng.dirichlet(new Float64Array(clients).fill(1), 1).data : undefined;
  const classWeights =
    imbalance === 'classes'
      ? classSets.map((set) => {
          const w = rng.dirichlet(new Float64Array(set.length).fill(1), 1).data;
          return new Map(Array.from(set, (k, j) => [k, w[j]!] as const));
        })
      : undefined;
  const buckets = emptyBuckets(clients, K);
  const unassigned: number[] = [];
  rowsByClass(codes, K).forEach((rows, k) => {
    const h = holders[k]!;
    if (h.length === 0) {
      for (const i of rows) unassigned.push(i);
      return;
    }
    // the split's arrays become the buckets themselves
    const weights = imbalance === 'clients' ? h.map((c) => clientWeights![c]!) : imbalance === 'classes' ? h.map((c) => classWeights![c]!.get(k)!) : undefined;
    (weights ? weightedSplit(rng, rows, weights) : equalSplit(rng, rows, h.length)).forEach((share, j) => {
      buckets[h[j]!]![k] = share;
    });
  });
  const unfilled = topUp(buckets, minSize, (c) => classSets[c]!, true);
  if (unfilled.length > 0) {
    const c = unfilled[0]!;
    const got = buckets[c]!.reduce((s, rows) => s + rows.length, 0);
    const detail = Array.from(classSets[c]!, (k) => `${JSON.stringify(classes[k])} (${plural(classRows(buckets, k), 'row')} for ${plural(holders[k]!.length, 'client')})`).join(', ');
    throw new InvalidParameterError(
      `Quantity(${lo === hi ? lo : `${lo}..${hi}`}): client ${c} gets only ${got} rows (minSize ${minSize}); its classes ${detail} have too few rows for the clients sharing them. ` +
        'Use fewer clients, a larger alpha, a lower minSize or another seed',
    );
  }
  return { ...assemble(buckets, classes), classSets, unassigned: Int32Array.from(unassigned).sort() };
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function classRows(buckets: number[][][], k: number): number {
  return buckets.reduce((s, client) => s + client[k]!.length, 0);
}
