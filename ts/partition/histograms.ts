/**
 * Simulated clients with given label histograms (the MDM paper's section 4):
 * `mdm` draws each client's histogram and size from a learned
 * DirichletMultinomialMixture, `conditionallyIid` takes exact histograms (the
 * paper's oracle: it needs every true client's histogram), and `fullyIid`
 * draws each client's size from the true sizes and its rows uniformly (the
 * paper's naive baseline). A client then gets, for each class, that many rows
 * of the class drawn at random from the central dataset.
 *
 * Rows are distinct within a client. Across clients they may repeat (each
 * client samples the central data independently, as simulations on a proxy
 * dataset do), unless `disjoint` is set: then rows are dealt without
 * replacement and running out of a class is an error naming it.
 */
import type { LabelsLike } from '../data/labels.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError } from '../errors.js';
import { DirichletMultinomialMixture } from '../models/dirichlet-multinomial-mixture.js';
import type { Rng } from '../random.js';
import { guardRead, LIMITS, readArray, readOptions, requireBoolean, requireInteger } from '../validate.js';
import { encodeLabels, rowsByClass, withRng, type Label, type Partition } from './shared.js';

export interface HistogramDealOptions {
  seed?: number;
  /** deal rows without replacement across clients (default false: clients sample the data independently) */
  disjoint?: boolean;
  /**
   * The class each histogram column counts (default: the model's categories
   * when it names them, else the labels' distinct values, ascending; their
   * number must then equal the columns).
   */
  classes?: readonly Label[];
}

export interface ConditionallyIidOptions extends HistogramDealOptions {
  /** one row of class counts per client */
  histograms: MatrixLike;
}

export interface MdmPartitionOptions extends HistogramDealOptions {
  model: DirichletMultinomialMixture;
  /** how many clients to simulate */
  clients: number;
}

export interface MdmPartition extends Partition {
  /** the component each client was drawn from */
  components: Int32Array;
}

export interface FullyIidOptions {
  /** the true clients' sizes: each simulated client's size is one of them, drawn uniformly */
  sizes: ArrayLike<number>;
  /** how many clients to simulate (default: as many as sizes) */
  clients?: number;
  seed?: number;
  disjoint?: boolean;
}

/** Which rows hold the class of each histogram column. */
function columnRows(labels: LabelsLike, columns: number, classes: readonly Label[] | undefined): { rows: number[][]; names: Label[] } {
  const { codes, classes: present } = encodeLabels(labels);
  const byCode = rowsByClass(codes, present.length);
  if (classes === undefined) {
    if (present.length !== columns) {
      throw new InvalidDataError(
        `the labels hold ${present.length} classes but the histograms have ${columns} columns; pass classes to say which class each column counts`,
      );
    }
    return { rows: byCode, names: present };
  }
  const given = readArray('classes', classes, columns + 1);
  if (given.length !== columns || !given.every((c) => typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c)))) {
    throw new InvalidParameterError(`classes must name ${columns} classes (numbers or strings), one per histogram column, got ${formatValue(classes)}`);
  }
  const names = given as Label[];
  const index = new Map(present.map((c, k) => [String(c), k]));
  if (new Set(names.map(String)).size !== names.length) throw new InvalidParameterError('classes must be distinct');
  return { rows: names.map((c) => byCode[index.get(String(c)) ?? -1] ?? []), names };
}

/** Rows for every client: counts[i][j] rows of column j's class. */
function deal(rng: Rng, counts: Matrix, rows: number[][], names: Label[], disjoint: boolean): Partition {
  const m = counts.nRows;
  const c = counts.nCols;
  const queues = disjoint ? rows.map((r) => Array.from(rng.permutation(r.length), (i) => r[i]!)) : [];
  const next = new Int32Array(c);
  const indices: Int32Array[] = [];
  const histograms: Int32Array[] = [];
  for (let i = 0; i < m; i++) {
    const picked: number[] = [];
    const h = new Int32Array(c);
    for (let j = 0; j < c; j++) {
      const want = counts.data[j * m + i]!;
      if (!(want >= 0) || !Number.isInteger(want)) throw new InvalidDataError(`client ${i}: count ${j} is ${want}; counts must be non-negative integers`);
      if (want === 0) continue;
      const pool = rows[j]!;
      if (disjoint) {
        const left = pool.length - next[j]!;
        if (want > left) {
          throw new InvalidDataError(
            `client ${i} needs ${want} rows of class ${String(names[j])} but only ${left} of its ${pool.length} remain undealt; simulate fewer clients or let clients share rows (disjoint: false)`,
          );
        }
        for (let t = 0; t < want; t++) picked.push(queues[j]![next[j]!++]!);
      } else {
        if (want > pool.length) {
          throw new InvalidDataError(`client ${i} needs ${want} rows of class ${String(names[j])} but the data holds only ${pool.length}`);
        }
        for (const t of rng.choice(pool.length, want)) picked.push(pool[t]!);
      }
      h[j] = want;
    }
    indices.push(Int32Array.from(picked).sort());
    histograms.push(h);
  }
  return { indices, histograms, classes: names };
}

/**
 * The conditionally IID oracle: client i gets exactly histograms[i][j] rows of
 * class j (its true histogram), drawn at random.
 */
export function conditionallyIid(labels: LabelsLike, options: ConditionallyIidOptions): Partition {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be an object with histograms, got ${formatValue(options)}`);
  const o = readOptions(options, ['histograms', 'classes', 'seed', 'disjoint']);
  const counts = Matrix.from(o.histograms!);
  const { rows, names } = columnRows(labels, counts.nCols, o.classes);
  // the rows dealt in all, before any is: every count is checked as it is dealt, their sum here
  let total = 0;
  for (const v of counts.data) total += v;
  if (total > LIMITS.partitionRows) throw new InvalidDataError(`the histograms ask for ${total} rows in all; a partition deals at most ${LIMITS.partitionRows}`);
  return withRng(o.seed, (rng) => deal(rng, counts, rows, names, requireBoolean('disjoint', o.disjoint ?? false)));
}

/**
 * Clients like the ones a learned MDM describes: each draws its histogram and
 * size from `model` (a component k ~ tau, n ~ pi_k, c ~ DM(n, alpha_k)) and
 * gets rows of the central data matching the histogram.
 */
export function mdm(labels: LabelsLike, options: MdmPartitionOptions): MdmPartition {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be an object with model and clients, got ${formatValue(options)}`);
  const o = readOptions(options, ['model', 'clients', 'classes', 'seed', 'disjoint']);
  const model = o.model;
  if (!guardRead('model', () => model instanceof DirichletMultinomialMixture)) throw new InvalidParameterError(`model must be a DirichletMultinomialMixture, got ${formatValue(model)}`);
  // each client holds up to maxCount rows: the most that can be dealt is capped before drawing
  const clients = requireInteger('clients', o.clients, 1, Math.max(1, Math.floor(LIMITS.partitionRows / model!.maxCount)));
  const disjoint = requireBoolean('disjoint', o.disjoint ?? false);
  const { rows, names } = columnRows(labels, model!.nCategories, o.classes ?? model!.categories);
  return withRng(o.seed, (rng) => {
    const seed = Math.floor(rng.uniform(1)[0]! * 2 ** 32);
    const drawn = model!.sample(clients, { seed });
    return { ...deal(rng, drawn.histograms, rows, names, disjoint), components: drawn.components };
  });
}

/**
 * The fully IID baseline: each client's size is drawn from the true sizes and
 * its rows uniformly from the whole central dataset, whatever their class.
 */
export function fullyIid(labels: LabelsLike, options: FullyIidOptions): Partition {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`options must be an object with sizes, got ${formatValue(options)}`);
  const o = readOptions(options, ['sizes', 'clients', 'seed', 'disjoint']);
  const { codes, classes } = encodeLabels(labels);
  const sizes = readArray('sizes', o.sizes ?? [], LIMITS.partitionRows).map((v, i) => requireInteger(`sizes[${i}]`, v, 1, LIMITS.partitionRows));
  if (sizes.length === 0) throw new InvalidParameterError('sizes must hold the true clients sizes (at least one)');
  // every client may draw the largest size: the most that can be dealt is capped before drawing
  const largest = sizes.reduce((a, b) => Math.max(a, b), 0);
  const clients = requireInteger('clients', o.clients ?? sizes.length, 1, Math.max(1, Math.floor(LIMITS.partitionRows / largest)));
  const disjoint = requireBoolean('disjoint', o.disjoint ?? false);
  const n = codes.length;
  return withRng(o.seed, (rng) => {
    const pick = rng.uniform(clients);
    const order = disjoint ? rng.permutation(n) : undefined;
    let next = 0;
    const indices: Int32Array[] = [];
    const histograms: Int32Array[] = [];
    for (let i = 0; i < clients; i++) {
      const size = sizes[Math.floor(pick[i]! * sizes.length)]!;
      let rows: Int32Array;
      if (order) {
        if (next + size > n) {
          throw new InvalidDataError(`client ${i} needs ${size} rows but only ${n - next} of ${n} remain undealt; simulate fewer clients or let clients share rows (disjoint: false)`);
        }
        rows = order.slice(next, next + size);
        next += size;
      } else {
        if (size > n) throw new InvalidDataError(`client ${i} needs ${size} rows but the data holds only ${n}`);
        rows = rng.choice(n, size);
      }
      const h = new Int32Array(classes.length);
      for (const r of rows) h[codes[r]!]!++;
      indices.push(rows.sort());
      histograms.push(h);
    }
    return { indices, histograms, classes };
  });
}
