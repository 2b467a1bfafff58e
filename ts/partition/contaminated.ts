/**
 * The partition of the community-based anomaly detection paper (Nardi,
 * Valerio, Passarella, section V.A): |C| classes, p clients per class; each
 * client's training rows are a share 1 - d of its inlier class and d of one
 * outlier class, and within the group of clients sharing an inlier class the
 * outlier class circulates through the other classes (client j of the group
 * of class c takes class c + 1 + (j mod (|C| - 1)), modulo |C|). Every row is
 * used at most once and all clients get the same number of rows: the largest
 * the classes allow (or rowsPerClient). The ideal groups are the clients that
 * share an inlier class.
 */
import type { LabelsLike } from '../data/labels.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { LIMITS, readOptions, requireInteger } from '../validate.js';
import { encodeLabels, requireCells, rowsByClass, withRng, type Label, type Partition } from './shared.js';

export interface ContaminatedOptions {
  /** p, the clients per class (per inlier class) */
  clientsPerClass: number;
  /** d, each client's share of outlier rows, in (0, 0.5) */
  contamination: number;
  /** rows per client (default: the most every class allows) */
  rowsPerClient?: number;
  /** labels of a test split (the same classes): each client then gets test rows of its two classes in the same ratio */
  testLabels?: LabelsLike;
  /** test rows per client (default: every test row of its inlier class, and outliers in ratio d / (1 - d)) */
  testRowsPerClient?: number;
  seed?: number;
}

export interface ContaminatedPartition extends Partition {
  /** each client's inlier class (clients sharing it form an ideal group) */
  inlierClass: Label[];
  /** each client's outlier class */
  outlierClass: Label[];
  /** each client's ideal group: the code of its inlier class in `classes` */
  group: Int32Array;
  /** with testLabels: each client's test rows (ascending), drawn without replacement per client; clients of one group may share test rows */
  testIndices?: Int32Array[];
}

/**
 * ```ts
 * const p = partition.contaminated(trainLabels, { clientsPerClass: 9, contamination: 0.1, testLabels, seed: 1 });
 * const client0 = X.selectRows(p.indices[0]);   // 90% class p.inlierClass[0], 10% class p.outlierClass[0]
 * ```
 */
export function contaminated(labels: LabelsLike, options: ContaminatedOptions): ContaminatedPartition {
  const { codes, classes } = encodeLabels(labels);
  const o = readOptions(options, ['clientsPerClass', 'contamination', 'rowsPerClient', 'testLabels', 'testRowsPerClient', 'seed']);
  const K = classes.length;
  if (K < 2) throw new InvalidDataError(`the labels hold ${K} class; inliers and outliers need at least 2`);
  const p = requireInteger('clientsPerClass', o.clientsPerClass, 1, LIMITS.partitionRows);
  const d = o.contamination;
  if (typeof d !== 'number' || !(d > 0 && d < 0.5)) throw new InvalidParameterError(`contamination must be a number in (0, 0.5), got ${formatValue(d)}`);
  const cap = o.rowsPerClient === undefined ? Infinity : requireInteger('rowsPerClient', o.rowsPerClient, 2, LIMITS.partitionRows);
  const clients = K * p;
  requireCells(clients, K);
  const rows = rowsByClass(codes, K);
  const inl = Array.from({ length: clients }, (_, c) => Math.floor(c / p));
  const out = inl.map((g, c) => (g + 1 + ((c % p) % (K - 1))) % K);
  const uses = new Array<number>(K).fill(0);
  for (const k of out) uses[k]!++;
  const outliersOf = (m: number) => Math.round(m * d);
  const fits = (m: number) => uses.every((u, k) => p * (m - outliersOf(m)) + u * outliersOf(m) <= rows[k]!.length);
  let m = Math.min(cap, Math.min(...rows.map((r) => r.length)));
  while (m >= 2 && !fits(m)) m--;
  if (m < 2 || outliersOf(m) < 1) {
    throw new InvalidDataError(`the classes are too small for ${p} clients per class with contamination ${d}: each client would get ${Math.max(m, 0)} rows and ${m >= 2 ? outliersOf(m) : 0} outliers; use fewer clients per class or a larger contamination`);
  }
  let testCodes: Int32Array | undefined;
  if (o.testLabels !== undefined) {
    const t = encodeLabels(o.testLabels, 'testLabels');
    const code = new Map<Label, number>(classes.map((c, k) => [c, k]));
    testCodes = Int32Array.from(t.codes, (tc) => {
      const k = code.get(t.classes[tc]!);
      if (k === undefined) throw new InvalidDataError(`testLabels hold class ${formatValue(t.classes[tc])}, which the training labels do not`);
      return k;
    });
  }
  const testSize = o.testRowsPerClient === undefined ? undefined : requireInteger('testRowsPerClient', o.testRowsPerClient, 2, LIMITS.partitionRows);
  return withRng(o.seed, (rng) => {
    const shuffled = rows.map((r) => Array.from(rng.permutation(r.length), (i) => r[i]!));
    const next = new Array<number>(K).fill(0);
    const take = (k: number, n: number) => shuffled[k]!.slice(next[k]!, (next[k]! += n));
    const indices: Int32Array[] = [];
    const histograms: Int32Array[] = [];
    for (let c = 0; c < clients; c++) {
      const nOut = outliersOf(m);
      indices.push(Int32Array.from([...take(inl[c]!, m - nOut), ...take(out[c]!, nOut)]).sort());
      const h = new Int32Array(K);
      h[inl[c]!] = m - nOut;
      h[out[c]!] = nOut;
      histograms.push(h);
    }
    const result: ContaminatedPartition = { indices, histograms, classes, inlierClass: inl.map((k) => classes[k]!), outlierClass: out.map((k) => classes[k]!), group: Int32Array.from(inl) };
    if (testCodes) {
      const testRows = rowsByClass(testCodes, K);
      result.testIndices = inl.map((g, c) => {
        const a = testRows[g]!;
        const b = testRows[out[c]!]!;
        const nIn = Math.min(a.length, testSize === undefined ? a.length : testSize - Math.round(testSize * d));
        const nOut = Math.min(b.length, testSize === undefined ? Math.round((nIn * d) / (1 - d)) : Math.round(testSize * d));
        const pick = (from: number[], n: number) => Array.from(rng.choice(from.length, n), (i) => from[i]!);
        return Int32Array.from([...pick(a, nIn), ...pick(b, nOut)]).sort();
      });
    }
    return result;
  });
}
