/**
 * KMeans with scikit-learn 1.2 semantics: k-means++ (greedy, 2 + ln k local
 * trials) or random seeding, Lloyd iterations, best of nInit runs by inertia.
 * The centers are small and live in JavaScript; the work runs in WASM.
 */
import type { Table } from 'apache-arrow';
import * as v from 'valibot';
import { fixedSizeListVector, indexVector, tableOf } from '../data/arrow.js';
import { arrowLibrary } from '../data/arrow-library.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError, NotFittedError } from '../errors.js';
import { KMEANS_FIT_OPTIONS } from '../wasm/abi.generated.js';
import { coreConstant } from '../wasm/constants.js';
import { requireWasmMemory, Scope, withScope } from '../wasm/memory.js';
import type { LloydResult } from '../parallel/kmeans-shard.js';
import type { RowShards } from '../parallel/row-shards.js';
import { ONE_THREAD, threadsOption, type FitThreads, type Threads } from '../parallel/threads.js';
import { readSavedJSON, savedLocations, savedNonNegative } from '../data/saved.js';
import { flattenNumeric, isArray, LIMITS, readOptions, requireInteger, requireVector, seedParts, type NumericArray } from '../validate.js';
import { keepClassName } from '../class-name.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';

export interface KMeansOptions {
  /** default 8; at most LIMITS.components (65,536) */
  nClusters?: number;
  /** 'k-means++' (default), 'random', or the (k, d) starting centers */
  init?: 'k-means++' | 'random' | NumericArray;
  /** runs with different seeds; the lowest inertia is kept (default 10; 1 with given centers; at most LIMITS.nInit, 1,000) */
  nInit?: number;
  /** default 300; at most LIMITS.maxIter (10^6) */
  maxIter?: number;
  /** relative to the mean feature variance (default 1e-4) */
  tol?: number;
  seed?: number;
  /**
   * Threads of fitAsync(): 1 (default: the calling thread alone, the same
   * bits as fit()), more, or 'auto' (the cores the runtime reports). Rows are
   * cut into one contiguous shard per thread (at least 256 rows each) and each
   * Lloyd iteration adds the shards' counts and sums in shard order: the same
   * data, options and threads give the same bits on every run, and agree with
   * one thread to rounding. fit() runs on one thread only.
   */
  threads?: Threads;
}

/** Serialized form, see toJSON(). */
export interface KMeansJSON {
  format: 'fedmix.KMeans';
  version: 1;
  nClusters: number;
  nFeatures: number;
  /** (nClusters, nFeatures) row-major */
  centers: number[];
  /** cluster of each training row */
  labels: number[];
  inertia: number;
  nIter: number;
  /** the constructor's options other than given starting centers */
  options?: Omit<KMeansOptions, 'init' | 'nClusters'> & { init?: 'k-means++' | 'random' };
}

const KMEANS_JSON_KEYS = [
  'format', 'version', 'nClusters', 'nFeatures', 'centers', 'labels', 'inertia', 'nIter', 'options',
] as const satisfies readonly (keyof KMeansJSON)[];

/** 'k-means++', 'random', or the starting centers flattened (their shape is checked against the data by fit). */
const init = () =>
  v.pipe(
    v.unknown(),
    v.transform((x): 'k-means++' | 'random' | Float64Array => {
      if (x === 'k-means++' || x === 'random') return x;
      if (typeof x === 'string') throw new InvalidParameterError(`init must be 'k-means++', 'random' or an array of centers, got ${formatValue(x)}`);
      return flattenNumeric('init', x as NumericArray);
    }),
  );

/** KMeans' options (scikit-learn's defaults), checked once; resolved, init is the method or the centers flattened. */
export const kMeansOptions = defineOptions<KMeansOptions>()(
  {
    nClusters: atoms.optional(atoms.nComponents(), 8),
    init: atoms.optional(init(), 'k-means++'),
    // checked by the rule: explicit centers make every run the same, one run as scikit-learn, whatever nInit says
    nInit: atoms.optional(v.unknown()),
    maxIter: atoms.optional(atoms.maxIterations(1), 300),
    tol: atoms.optional(atoms.tolerance(), 1e-4),
    seed: atoms.optional(atoms.seed()),
    // absent is one thread (and stays absent in toJSON(), as before the option existed)
    threads: atoms.optional(threadsOption()),
  },
  (o) => ({ ...o, nInit: o.init instanceof Float64Array ? 1 : requireInteger('nInit', o.nInit ?? 10, 1, LIMITS.nInit) }),
);

export class KMeans {
  static {
    keepClassName(this, 'KMeans');
  }

  readonly nClusters: number;
  readonly init: 'k-means++' | 'random' | Float64Array;
  readonly nInit: number;
  readonly maxIter: number;
  readonly tol: number;
  readonly seed: number | undefined;
  readonly threads: Threads | undefined;
  private fittedState: { centers: Float64Array; labels: Int32Array; inertia: number; nIter: number; d: number } | undefined;
  /** how the last fit ran (fitThreads) */
  private ranOn: FitThreads | undefined;

  /** Options checked here (kMeansOptions), unless they are what its check() returned. */
  constructor(options: KMeansOptions = {}) {
    const o = kMeansOptions.check(options);
    this.nClusters = o.nClusters;
    this.init = o.init;
    this.nInit = o.nInit;
    this.maxIter = o.maxIter;
    this.tol = o.tol;
    this.seed = o.seed;
    this.threads = o.threads;
  }

  /** Clusters X with k-means (scikit-learn's fit) on the calling thread. Returns this. */
  fit(X: MatrixLike): this {
    if (this.threads !== undefined && this.threads !== 1) {
      throw new InvalidParameterError(`fit() runs on the calling thread alone; threads: ${formatValue(this.threads)} needs worker threads, which answer asynchronously: use await fitAsync(X)`);
    }
    return this.fitOnCallingThread(Matrix.from(X));
  }

  /** Given starting centers, checked against X's columns. */
  private checkGivenCenters(x: Matrix): void {
    const k = this.nClusters;
    if (this.init instanceof Float64Array && this.init.length !== k * x.nCols) {
      throw new InvalidParameterError(`init centers have ${this.init.length} values; expected nClusters x nFeatures = ${k} x ${x.nCols}`);
    }
  }

  /** fm_kmeans_fit's options and given centers (0: none), written into `s`. */
  private fitArguments(s: Scope, x: Matrix): { options: number; given: number } {
    const k = this.nClusters;
    const [lo, hi] = seedParts(this.seed);
    const initCode = coreConstant('kmeans_init', this.init instanceof Float64Array ? 'given' : this.init);
    const [given, givenLen] = s.f64Optional(this.init instanceof Float64Array ? this.init : undefined);
    const options = s.struct(KMEANS_FIT_OPTIONS, { n: x.nRows, d: x.nCols, k, init: initCode, centersLen: givenLen, nInit: this.nInit, maxIter: this.maxIter, tol: this.tol, seedLo: lo, seedHi: hi });
    return { options, given };
  }

  private fitOnCallingThread(x: Matrix): this {
    const k = this.nClusters;
    this.checkGivenCenters(x);
    // the rows, and per row: labels (out, current, previous) and distances
    requireWasmMemory(`clustering ${x.nRows} rows of ${x.nCols} features`, 8 * x.data.length + 20 * x.nRows);
    this.fittedState = withScope((s) => {
      const { options, given } = this.fitArguments(s, x);
      const centers = s.f64(k * x.nCols);
      const labels = s.u32(x.nRows);
      const stats = s.f64(2);
      s.check(s.w.fm_kmeans_fit(s.matrix(x), options, given, centers, labels, stats));
      const st = s.readF64(stats, 2);
      return {
        centers: s.readF64(centers, k * x.nCols),
        labels: new Int32Array(s.readU32(labels, x.nRows)),
        inertia: st[0]!,
        nIter: st[1]!,
        d: x.nCols,
      };
    });
    this.ranOn = ONE_THREAD;
    return this;
  }

  /**
   * Clusters X with k-means on the option `threads` (fit() runs on one): the
   * calling thread takes its shard of rows and each other thread (worker_threads
   * in Node, Web Workers in browsers) its own, in a WASM instance of its own;
   * every Lloyd iteration adds the shards' counts and sums in shard order. The
   * starting centers (k-means++ or random, as fit() draws them) are chosen on
   * the calling thread. With one thread (the default) it is fit(). The threads
   * are stopped when it settles. Resolves to this.
   */
  async fitAsync(X: MatrixLike): Promise<this> {
    const x = Matrix.from(X);
    if (this.threads === undefined || this.threads === 1) return this.fitOnCallingThread(x);
    // the threads' code is loaded when a fit asks for threads: programs that never do carry none of it
    const { threadsOf, withRowShards } = await import('../parallel/row-shards.js');
    const threads = threadsOf(x, this.threads);
    if (threads === 1) return this.fitOnCallingThread(x);
    await withRowShards(x, threads, (shards) => this.fitOnShards(shards));
    return this;
  }

  /**
   * fit() with each Lloyd iteration's assignment over the shards of rows (see
   * fitAsync): a federated client fits many models on one set of threads.
   * Whatever its `threads` option says.
   * @internal
   */
  async fitOnShards(shards: RowShards): Promise<void> {
    const { x, ptr } = shards;
    const k = this.nClusters;
    const d = x.nCols;
    this.checkGivenCenters(x);
    const s = new Scope();
    try {
      const { options, given } = this.fitArguments(s, x);
      const start = (run: number): { centers: Float64Array; tolAbs: number } => {
        const [centers, tol] = [s.f64(k * d), s.f64(1)];
        s.check(s.w.fm_kmeans_start(ptr, options, given, run, centers, tol));
        return { centers: s.readF64(centers, k * d), tolAbs: s.readF64(tol, 1)[0]! };
      };
      // the checks (options, data) and the first start before any thread starts
      const first = start(0);
      const [pool, { lloydOverShards }] = await Promise.all([shards.threads(), import('../parallel/kmeans-shard.js')]);
      let best: LloydResult | undefined;
      for (let run = 0; run < this.nInit; run++) {
        const { centers, tolAbs } = run === 0 ? first : start(run);
        const r = await lloydOverShards(centers, tolAbs, k, this.maxIter, shards.kmeans(), pool, shards.bounds);
        if (!best || r.inertia < best.inertia) best = r;
      }
      this.fittedState = { ...best!, d };
      this.ranOn = { threads: shards.bounds.length - 1, exchange: pool.exchange };
    } finally {
      s.free();
    }
  }

  fitPredict(X: MatrixLike): Int32Array {
    return this.fit(X).labels;
  }

  private state() {
    if (!this.fittedState) throw new NotFittedError('this KMeans is not fitted yet; call fit(X) first');
    return this.fittedState;
  }

  /** Nearest center index per row, and the squared distance to it. */
  private assign(X: MatrixLike): { labels: Int32Array; distances: Float64Array } {
    const x = Matrix.from(X);
    const st = this.state();
    if (x.nCols !== st.d) {
      throw new InvalidDataError(`X has ${x.nCols} features but this KMeans was fitted with ${st.d}; pass data with ${st.d} columns`);
    }
    return nearestCenters(x, st.centers, this.nClusters);
  }

  predict(X: MatrixLike): Int32Array {
    return this.assign(X).labels;
  }

  /** Opposite of the inertia of X against the centers (scikit-learn's score). */
  score(X: MatrixLike): number {
    let t = 0;
    for (const v of this.assign(X).distances) t += v;
    return -t;
  }

  /** (k, d) row-major cluster centers */
  get centers(): Float64Array {
    return this.state().centers.slice();
  }
  /** cluster of each training row */
  get labels(): Int32Array {
    return this.state().labels.slice();
  }
  /** sum of squared distances of training rows to their centers */
  get inertia(): number {
    return this.state().inertia;
  }
  get nIter(): number {
    return this.state().nIter;
  }
  /**
   * The threads the last fit ran on and how its iterations' tasks travelled
   * (FitThreads): `threads: 'auto'` resolved, or a fit with too few rows for
   * a second thread. Undefined until this object has fitted (a model read
   * with fromJSON or loadModel reports none).
   */
  get fitThreads(): FitThreads | undefined {
    return this.ranOn && { ...this.ranOn };
  }

  toJSON(): KMeansJSON {
    const st = this.state();
    return {
      format: 'fedmix.KMeans',
      version: 1,
      nClusters: this.nClusters,
      nFeatures: st.d,
      centers: Array.from(st.centers),
      labels: Array.from(st.labels),
      inertia: st.inertia,
      nIter: st.nIter,
      options: {
        ...(this.init instanceof Float64Array ? {} : { init: this.init }),
        nInit: this.nInit,
        maxIter: this.maxIter,
        tol: this.tol,
        ...(this.seed === undefined ? {} : { seed: this.seed }),
        ...(this.threads === undefined ? {} : { threads: this.threads }),
      },
    };
  }

  /** Rebuilds a KMeans saved with toJSON() (the object or its text); predict and score work at once. */
  static fromJSON(json: KMeansJSON | string): KMeans {
    const j = readSavedJSON<KMeansJSON>(json, 'fedmix.KMeans', KMEANS_JSON_KEYS);
    const o = readOptions(j.options, ['init', 'nInit', 'maxIter', 'tol', 'seed', 'threads'] as const, 'options');
    if (o.init !== undefined && o.init !== 'k-means++' && o.init !== 'random') {
      throw new InvalidParameterError(`options.init must be 'k-means++' or 'random' in a saved KMeans, got ${formatValue(o.init)}`);
    }
    const km = new KMeans({ ...o, nClusters: j.nClusters as number });
    const k = km.nClusters;
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.values);
    if (k * d > LIMITS.values) throw new InvalidParameterError(`${k} centers of ${d} features are ${k * d} values; at most ${LIMITS.values} fit`);
    const centers = savedLocations('centers', j.centers, k * d, d);
    if (!isArray('labels', j.labels)) throw new InvalidParameterError(`labels must be an array of cluster indices, got ${formatValue(j.labels)}`);
    const lv = requireVector('labels', j.labels);
    const labels = new Int32Array(lv.length);
    for (let i = 0; i < lv.length; i++) {
      const v = lv[i]!;
      if (!Number.isInteger(v) || v < 0 || v >= k) throw new InvalidParameterError(`labels[${i}] is ${v}; a label is an integer in [0, ${k})`);
      labels[i] = v;
    }
    const inertia = savedNonNegative('inertia', j.inertia);
    const nIter = requireInteger('nIter', j.nIter, 0, LIMITS.maxIter);
    km.fittedState = { centers, labels, inertia, nIter, d };
    return km;
  }

  /** The centers as an Arrow Table of the project's apache-arrow: `cluster` (Int32) and `center` (FixedSizeList<Float64>[d]), one row per cluster. */
  toArrow(): Table {
    arrowLibrary('KMeans.toArrow()');
    const centers = this.centers;
    const k = this.nClusters;
    return tableOf({ cluster: indexVector(k), center: fixedSizeListVector(centers, centers.length / k) });
  }
}

/**
 * The nearest of k centers (k x d, row-major, d = X's columns) for every row of
 * X, first on ties, and the squared distance to it.
 */
export function nearestCenters(X: MatrixLike, centers: ArrayLike<number>, k: number): { labels: Int32Array; distances: Float64Array } {
  const x = Matrix.from(X);
  requireInteger('k', k, 1, LIMITS.components);
  const c = requireVector('centers', centers, InvalidDataError);
  if (c.length !== k * x.nCols) {
    throw new InvalidDataError(`${k} centers of ${x.nCols} features need ${k * x.nCols} values, got ${c.length}`);
  }
  requireWasmMemory(`the nearest centers of ${x.nRows} rows`, 8 * x.data.length + 12 * x.nRows);
  return withScope((s) => {
    const labels = s.u32(x.nRows);
    const dist = s.f64(x.nRows);
    s.check(s.w.fm_kmeans_predict(s.matrix(x), x.nRows, x.nCols, s.f64From(c), k, labels, dist));
    return { labels: new Int32Array(s.readU32(labels, x.nRows)), distances: s.readF64(dist, x.nRows) };
  });
}
