/**
 * The rows of one dataset cut into contiguous shards for a data-parallel fit:
 * all of them and the first shard in the calling thread's WASM memory, the
 * others held by the pool's threads. A fit runs on them (GaussianMixture's
 * and KMeans' fitOnShards); a session keeps its threads for the fits of
 * several datasets (a selection over K, a client's clusterings), sending
 * them new rows instead of starting threads again.
 */
import type { Matrix } from '../data/matrix.js';
import { requireWasmMemory, Scope } from '../wasm/memory.js';
import { KMeansShard } from './kmeans-shard.js';
import { ShardPool } from './pool.js';
import { MIN_SHARD_ROWS, shardBounds, shardRows, threadsFor, type Threads } from './threads.js';
import { availableCores } from './pool.js';

export class RowShards {
  private kmeansShard: KMeansShard | undefined;
  private loaded: Promise<ShardPool> | undefined;

  private constructor(
    private readonly s: Scope,
    /** the matrix the shards cut */
    readonly x: Matrix,
    /** all rows, column-major, in this thread's WASM memory */
    readonly ptr: number,
    /** shard i holds rows [bounds[i], bounds[i + 1]); shard 0 is the calling thread's */
    readonly bounds: readonly number[],
    readonly own: { ptr: number; n: number },
    private pool: ShardPool | undefined,
  ) {}

  get n(): number {
    return this.x.nRows;
  }

  get d(): number {
    return this.x.nCols;
  }

  /**
   * The threads, holding the other shards: started (or sent the rows) on the
   * first call, so that a fit makes its checks on the calling thread first.
   */
  threads(): Promise<ShardPool> {
    const theirs = ShardPool.theirShards(this.x.data, this.n, this.d, this.bounds);
    const pool = this.pool;
    this.loaded ??= pool ? pool.load(theirs, this.d).then(() => pool) : ShardPool.start(theirs, this.d).then((p) => (this.pool = p));
    return this.loaded;
  }

  /** The threads once started (undefined before threads() or when it failed). */
  get started(): ShardPool | undefined {
    return this.pool;
  }

  /** Stops the threads started by threads() (once they have started), if any. */
  async stopThreads(): Promise<void> {
    if (this.loaded) await this.loaded.then((p) => p.close(), () => undefined);
  }

  /** The calling thread's shard as k-means steps it (its labels and distances allocated once). */
  kmeans(): KMeansShard {
    return (this.kmeansShard ??= new KMeansShard(this.own.ptr, this.own.n, this.d, this.s.u32(this.own.n), this.s.f64(this.own.n)));
  }

  /** x cut at `bounds` (shardBounds) into this thread's memory; the other shards go to `pool` (or to threads started) on threads(). */
  static cut(x: Matrix, bounds: readonly number[], pool: ShardPool | undefined): RowShards {
    const { nRows: n, nCols: d } = x;
    const own = bounds[1]!;
    // the rows, their first shard's copy, its k-means labels and distances
    requireWasmMemory(`holding ${n} rows of ${d} features in ${bounds.length - 1} shards`, 8 * d * (n + own) + 12 * own);
    const s = new Scope();
    try {
      const ptr = s.matrix(x);
      return new RowShards(s, x, ptr, bounds, { ptr: s.f64From(shardRows(x.data, n, d, 0, own)), n: own }, pool);
    } catch (e) {
      s.free();
      throw e;
    }
  }

  /** Frees this thread's copies (the threads stay with their owner). */
  free(): void {
    this.s.free();
  }
}

/** The threads a fit of x on `threads` runs on ('auto': the cores the runtime reports). */
export function threadsOf(x: Matrix, threads: Threads): number {
  return threadsFor(threads, x.nRows, MIN_SHARD_ROWS, availableCores);
}

/** Runs `fit` on x cut into `count` shards (count >= 2), on threads started for it and stopped when it settles. */
export async function withRowShards<T>(x: Matrix, count: number, fit: (shards: RowShards) => Promise<T>): Promise<T> {
  const shards = RowShards.cut(x, shardBounds(x.nRows, count), undefined);
  try {
    return await fit(shards);
  } finally {
    await shards.stopThreads();
    shards.free();
  }
}

/**
 * Threads kept for the fits of several datasets: each fit of a matrix with
 * rows enough for more than one thread runs on its shards (the threads are
 * sent its rows when it differs from the last matrix's); a smaller one runs
 * on the calling thread. close() stops the threads.
 */
export class ShardSession {
  private pool: ShardPool | undefined;
  private current: RowShards | undefined;

  constructor(private readonly threads: Threads) {}

  /** x's shards, or undefined when x is to be fitted on the calling thread. */
  async shardsOf(x: Matrix): Promise<RowShards | undefined> {
    const count = threadsOf(x, this.threads);
    if (count === 1) return undefined;
    this.keepThreads();
    if (this.current?.x === x) return this.current;
    this.current?.free();
    this.current = undefined;
    if (this.pool && this.pool.size !== count - 1) {
      await this.pool.close();
      this.pool = undefined;
    }
    this.current = RowShards.cut(x, shardBounds(x.nRows, count), this.pool);
    return this.current;
  }

  /** After a fit on x's shards: keeps the threads it started for the next. */
  keepThreads(): void {
    this.pool ??= this.current?.started;
  }

  async close(): Promise<void> {
    this.keepThreads();
    this.current?.free();
    this.current = undefined;
    await this.pool?.close();
    this.pool = undefined;
  }
}
