/**
 * Entanglement (FedDistr, Definition 1): a client's data is a mixture of base
 * distributions with weights p_i (its probability vector over them); two
 * clients' entangled coefficient is the normalized inner product
 *
 *     E(i, j) = <p_i, p_j> / (|p_i| |p_j|)
 *
 * 0 when they share no base distribution (orthogonal), 1 when their mixtures
 * are proportional (identical). The federation's coefficient is the average
 * over its pairs of distinct clients.
 *
 * `partition.entangled` deals rows labelled by base distribution (a subclass)
 * to clients at a target average coefficient: every subclass has an owner
 * (subclasses dealt round-robin over the clients in a shuffled order) and each
 * row goes to its owner with probability 1 - lambda, to a uniformly drawn
 * client otherwise. lambda = 0 is disentangled (every subclass on exactly one
 * client, coefficient 0), lambda = 1 is IID. With more clients than subclasses
 * each subclass has several owners (every client still owns one) and its rows
 * are shared among them, so clients owning the same subclass are entangled
 * from the start: the least coefficient reachable is then above 0; lambda is found by bisection on
 * the coefficient of the rows actually dealt (the draws are fixed by the seed,
 * so the coefficient is a step function of lambda that rises with it), and the
 * coefficient achieved is reported.
 */
import type { LabelsLike } from '../data/labels.js';
import { InvalidDataError, InvalidParameterError } from '../errors.js';
import { readArray, readOptions, requireInteger, requireNumber } from '../validate.js';
import { encodeLabels, requireClients, withRng, type Label, type Partition } from './shared.js';

/** Definition 1: the normalized inner product of two clients' probability (or count) vectors; 0 if either is all zero. */
export function entangledCoefficient(p: ArrayLike<number>, q: ArrayLike<number>): number {
  const a = readArray('p', p) as number[];
  const b = readArray('q', q) as number[];
  if (a.length !== b.length) throw new InvalidParameterError(`p has ${a.length} base distributions but q has ${b.length}; give both over the same base distributions`);
  let pq = 0;
  let pp = 0;
  let qq = 0;
  for (let k = 0; k < a.length; k++) {
    const x = requireNumber(`p[${k}]`, a[k], 0);
    const y = requireNumber(`q[${k}]`, b[k], 0);
    pq += x * y;
    pp += x * x;
    qq += y * y;
  }
  if (pp === 0 || qq === 0) return 0;
  return Math.min(1, pq / Math.sqrt(pp * qq));
}

/** The average of the entangled coefficient over all pairs of distinct clients (0 with fewer than two clients). */
export function averageEntanglement(vectors: readonly ArrayLike<number>[]): number {
  const v = readArray('vectors', vectors) as ArrayLike<number>[];
  let total = 0;
  let pairs = 0;
  for (let i = 0; i < v.length; i++) {
    for (let j = i + 1; j < v.length; j++) {
      total += entangledCoefficient(v[i]!, v[j]!);
      pairs++;
    }
  }
  return pairs === 0 ? 0 : total / pairs;
}

export interface EntangledOptions {
  /** clients; with more clients than subclasses, a subclass is owned by several (the least coefficient is then above 0) */
  clients: number;
  /** the target average entangled coefficient in [0, 1] (0: disentangled) */
  target: number;
  /** the task label (superclass) of every row; when given, histograms and classes are over task labels */
  tasks?: LabelsLike;
  seed?: number;
}

export interface EntangledPartition extends Partition {
  /** the average entangled coefficient of the partition dealt */
  coefficient: number;
  /** the mixing share used: the chance that a row leaves its subclass's owner for a random client */
  lambda: number;
  /** per client, its row count of each subclass (the order of `subclasses`) */
  subclassCounts: Int32Array[];
  subclasses: Label[];
  /** per subclass (the order of `subclasses`), the clients owning it: one unless there are more clients than subclasses */
  owners: Int32Array[];
}

/**
 * Rows dealt to `clients` at an average entangled coefficient near `target`.
 *
 * ```ts
 * const p = partition.entangled(letters, { clients: 10, target: 0.06, tasks: pairs, seed: 1 });
 * p.coefficient; // what was achieved
 * ```
 */
export function entangled(subclassLabels: LabelsLike, options: EntangledOptions): EntangledPartition {
  const { codes, classes: subclasses } = encodeLabels(subclassLabels);
  const n = codes.length;
  const o = readOptions(options, ['clients', 'target', 'tasks', 'seed']);
  const clients = requireClients(o.clients, n, 1);
  const target = requireNumber('target', o.target, 0);
  if (!(target <= 1)) throw new InvalidParameterError(`target is ${target}; an entangled coefficient lies in [0, 1]`);
  const S = subclasses.length;
  let tasks: { codes: Int32Array; classes: Label[] } | undefined;
  if (o.tasks !== undefined) {
    tasks = encodeLabels(o.tasks);
    if (tasks.codes.length !== n) throw new InvalidDataError(`there are ${n} subclass labels but ${tasks.codes.length} task labels; give one of each per row`);
  }
  const seed = o.seed === undefined ? undefined : requireInteger('seed', o.seed, 0);
  const { owners, u, other, share } = withRng(seed, (rng) => {
    const order = rng.permutation(S);
    const own: number[][] = Array.from({ length: S }, () => []);
    // subclass order[k] goes to client k (mod clients); with more clients than subclasses, to k, k + S, k + 2S, ...
    for (let k = 0; k < Math.max(S, clients); k++) own[order[k % S]!]!.push(k % clients);
    const uniform = rng.uniform(n);
    const pick = rng.uniform(n);
    // drawn only when a subclass has several owners, so that fewer clients deal exactly as before
    const among = clients > S ? rng.uniform(n) : undefined;
    return { owners: own.map((o) => Int32Array.from(o)), u: uniform, other: Int32Array.from(pick, (x) => Math.min(clients - 1, Math.floor(x * clients))), share: among };
  });
  const ownerOf = (s: number, i: number): number => {
    const o = owners[s]!;
    return o.length === 1 ? o[0]! : o[Math.min(o.length - 1, Math.floor(share![i]! * o.length))]!;
  };
  const deal = (lambda: number): Int32Array => Int32Array.from(codes, (s, i) => (u[i]! < lambda ? other[i]! : ownerOf(s, i)));
  const countsOf = (assigned: Int32Array): Int32Array[] => {
    const counts = Array.from({ length: clients }, () => new Int32Array(S));
    assigned.forEach((c, i) => counts[c]![codes[i]!]!++);
    return counts;
  };
  const coefficientOf = (lambda: number): number => averageEntanglement(countsOf(deal(lambda)));
  let lo = 0;
  let hi = 1;
  let best = { lambda: 0, coefficient: coefficientOf(0) };
  const consider = (lambda: number, c: number): void => {
    if (Math.abs(c - target) < Math.abs(best.coefficient - target)) best = { lambda, coefficient: c };
  };
  if (target > 0) {
    consider(1, coefficientOf(1));
    for (let it = 0; it < 40 && hi - lo > 1e-9; it++) {
      const mid = (lo + hi) / 2;
      const c = coefficientOf(mid);
      consider(mid, c);
      if (c < target) lo = mid;
      else hi = mid;
    }
  }
  const assigned = deal(best.lambda);
  const subclassCounts = countsOf(assigned);
  const rows: number[][] = Array.from({ length: clients }, () => []);
  assigned.forEach((c, i) => rows[c]!.push(i));
  const indices = rows.map((r) => Int32Array.from(r));
  const histClasses = tasks ? tasks.classes : subclasses;
  const histCodes = tasks ? tasks.codes : codes;
  const histograms = indices.map((r) => {
    const h = new Int32Array(histClasses.length);
    for (const i of r) h[histCodes[i]!]!++;
    return h;
  });
  return { indices, histograms, classes: histClasses, coefficient: best.coefficient, lambda: best.lambda, subclassCounts, subclasses, owners };
}
