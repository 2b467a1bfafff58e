/**
 * What every partitioner returns and the steps they share: labels as class
 * codes, option checks, one seeded Rng per call, random equal splits, the
 * minimum-size top-up and the assembly of the result. A partition deals row
 * indices only; `X.selectRows(p.indices[c])` gives client c's data.
 */
import { type Label } from '../data/labels.js';
import { InvalidParameterError } from '../errors.js';
import { Rng } from '../random.js';
import { LIMITS, requireInteger } from '../validate.js';

export { encodeLabels, type Label } from '../data/labels.js';

export interface Partition {
  /** indices[c]: the rows dealt to client c, ascending */
  indices: Int32Array[];
  /** histograms[c][k]: how many rows of class classes[k] client c holds */
  histograms: Int32Array[];
  /** the distinct labels, ascending (numbers by value, strings by code unit): the histogram columns */
  classes: Label[];
}

/** Row indices grouped by class code, ascending within each class. */
export function rowsByClass(codes: Int32Array, nClasses: number): number[][] {
  const rows: number[][] = Array.from({ length: nClasses }, () => []);
  codes.forEach((k, i) => rows[k]!.push(i));
  return rows;
}

/**
 * `clients` as an integer in [1, nRows / minSize]: each client must be able to
 * get minSize rows. The message says which of the three to change.
 */
export function requireClients(clients: unknown, nRows: number, minSize: number): number {
  const c = requireInteger('clients', clients, 1);
  if (c * minSize > nRows) {
    const most = minSize > 0 ? Math.floor(nRows / minSize) : nRows;
    throw new InvalidParameterError(
      `clients = ${c} needs at least ${c * minSize} rows (minSize ${minSize} each) but there are ${nRows}; use at most ${most} clients${minSize > 1 ? ' or a lower minSize' : ''}`,
    );
  }
  return c;
}

export function requireMinSize(minSize: unknown): number {
  return requireInteger('minSize', minSize ?? 1, 0, LIMITS.partitionRows);
}

/** clients x classes buckets, checked against LIMITS.partitionCells before any is made. */
export function requireCells(clients: number, classes: number, what = 'classes'): void {
  if (clients * classes > LIMITS.partitionCells) {
    throw new InvalidParameterError(
      `${clients} clients x ${classes} ${what} is ${clients * classes} client-class cells; a partition handles at most ${LIMITS.partitionCells}: use fewer clients or group the ${what}`,
    );
  }
}

/** Runs `fn` with a fresh Rng for `seed`, freed afterwards (also when `fn` throws). */
export function withRng<T>(seed: number | undefined, fn: (rng: Rng) => T): T {
  const rng = new Rng(seed);
  try {
    return fn(rng);
  } finally {
    rng.dispose();
  }
}

/**
 * `items` dealt at random into `groups` groups whose sizes differ by at most
 * one (numpy's array_split of a shuffled list): the items are shuffled, and
 * which groups get the larger size is random too, so that a short list does
 * not always favour the first groups.
 */
export function equalSplit(rng: Rng, items: ArrayLike<number>, groups: number): number[][] {
  const n = items.length;
  const perm = rng.permutation(n);
  const order = rng.permutation(groups);
  const q = Math.floor(n / groups);
  const r = n % groups;
  const out: number[][] = Array.from({ length: groups }, () => []);
  let start = 0;
  for (let p = 0; p < groups; p++) {
    const end = start + q + (p < r ? 1 : 0);
    const g = out[order[p]!]!;
    for (let i = start; i < end; i++) g.push(items[perm[i]!]!);
    start = end;
  }
  return out;
}

/** rows[c][k]: the rows of class k dealt to client c. */
export type Buckets = number[][][];

export function emptyBuckets(clients: number, nClasses: number): Buckets {
  return Array.from({ length: clients }, () => Array.from({ length: nClasses }, () => [] as number[]));
}

function size(client: number[][]): number {
  let s = 0;
  for (const rows of client) s += rows.length;
  return s;
}

/**
 * Brings every client up to minSize rows by moving rows from other clients,
 * deterministically: client c (in index order) takes one row at a time of the
 * first class in `preference(c)` that some client can spare, from the client
 * holding the most rows of that class (the lowest index on ties), the row last
 * dealt to it (the rows of a class are dealt in random order). A donor never
 * drops below minSize rows, nor, with `keepClasses`, to zero rows of the class
 * it gives. Returns the clients that could not be filled.
 */
export function topUp(buckets: Buckets, minSize: number, preference: (c: number) => ArrayLike<number>, keepClasses: boolean): number[] {
  const sizes = buckets.map(size);
  const unfilled: number[] = [];
  for (let c = 0; c < buckets.length; c++) {
    if (sizes[c]! >= minSize) continue;
    const order = preference(c);
    while (sizes[c]! < minSize) {
      let moved = false;
      for (let p = 0; p < order.length && !moved; p++) {
        const k = order[p]!;
        let donor = -1;
        for (let d = 0; d < buckets.length; d++) {
          const held = buckets[d]![k]!.length;
          if (d === c || sizes[d]! <= minSize || held <= (keepClasses ? 1 : 0)) continue;
          if (donor < 0 || held > buckets[donor]![k]!.length) donor = d;
        }
        if (donor >= 0) {
          buckets[c]![k]!.push(buckets[donor]![k]!.pop()!);
          sizes[c]!++;
          sizes[donor]!--;
          moved = true;
        }
      }
      if (!moved) {
        unfilled.push(c);
        break;
      }
    }
  }
  return unfilled;
}

/** Indices (ascending) and class histograms from the buckets. */
export function assemble(buckets: Buckets, classes: Label[]): Partition {
  const indices = buckets.map((client) => {
    const out = new Int32Array(size(client));
    let o = 0;
    for (const rows of client) for (const i of rows) out[o++] = i;
    return out.sort();
  });
  const histograms = buckets.map((client) => Int32Array.from(client, (rows) => rows.length));
  return { indices, histograms, classes };
}
