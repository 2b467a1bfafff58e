/**
 * The homogeneous baseline: rows dealt at random into equal shares.
 */
import type { LabelsLike } from '../data/labels.js';
import { LIMITS, readOptions, requireInteger } from '../validate.js';
import { encodeLabels, equalSplit, requireCells, requireClients, withRng, type Label, type Partition } from './shared.js';

export interface IidOptions {
  /** at most the rows (a row count at most LIMITS.partitionRows, 2^26) */
  clients: number;
  seed?: number;
}

/**
 * A random equal split of the rows: every client gets floor(n / clients) or
 * one more rows (which clients get one more is random), drawn without
 * replacement. Pass the labels to get class histograms; with a row count
 * there are no classes (empty histograms).
 *
 * ```ts
 * const { indices } = partition.iid(X.nRows, { clients: 10, seed: 1 });
 * const client0 = X.selectRows(indices[0]);
 * ```
 */
export function iid(rowsOrLabels: number | LabelsLike, options: IidOptions): Partition {
  const labelled = typeof rowsOrLabels !== 'number';
  const { codes, classes } = labelled ? encodeLabels(rowsOrLabels) : { codes: undefined, classes: [] as Label[] };
  const n = codes ? codes.length : requireInteger('nRows', rowsOrLabels, 1, LIMITS.partitionRows);
  const o = readOptions(options, ['clients', 'seed']);
  const clients = requireClients(o.clients, n, 1);
  requireCells(clients, Math.max(1, classes.length));
  const shares = withRng(o.seed, (rng) => equalSplit(rng, Int32Array.from({ length: n }, (_, i) => i), clients));
  const indices = shares.map((rows) => Int32Array.from(rows).sort());
  const histograms = indices.map((rows) => {
    const h = new Int32Array(classes.length);
    if (codes) for (const i of rows) h[codes[i]!]!++;
    return h;
  });
  return { indices, histograms, classes };
}
