/**
 * k-means over row shards (KMeans' `threads`): each shard's half of a Lloyd
 * iteration (fm_kmeans_shard_step), as the calling thread runs it on its own
 * shard and each worker on its shard, and the Lloyd iterations themselves on
 * the calling thread, which adds the shards' counts and sums in shard order
 * and moves the centers as the core's lloyd does (scikit-learn's rules).
 */
import { withScope } from '../wasm/memory.js';
import { wasm } from '../wasm/loader.js';
import type { ShardPool } from './pool.js';

/** One shard's step: the clusters' row counts (k) and sums of rows (k x d), whether a label changed, the sum of squared distances; with labels, the rows' nearest centers. */
export interface KMeansShardStats {
  counts: Float64Array;
  sums: Float64Array;
  changed: boolean;
  inertia: number;
  labels?: Uint32Array;
}

/** A row far from its nearest center (which seeds an empty cluster): its squared distance, index in its shard, label and values. */
export interface FarRow {
  dist: number;
  index: number;
  label: number;
  row: Float64Array;
}

/** One shard held in WASM memory: its rows (column-major, n x d), the labels of its last step and their distances. */
export class KMeansShard {
  constructor(
    readonly ptr: number,
    readonly n: number,
    readonly d: number,
    private readonly labels: number,
    private readonly dist: number,
  ) {}

  /** The step under the k centers (k x d, row-major); `fresh` at a run's start (every label counts as changed). */
  step(centers: Float64Array, k: number, fresh: boolean, withLabels: boolean): KMeansShardStats {
    const { n, d } = this;
    return withScope((s) => {
      if (fresh) new Uint32Array(s.w.memory.buffer, this.labels, n).fill(0xffffffff);
      const len = k + k * d + 2;
      const out = s.f64(len);
      s.check(s.w.fm_kmeans_shard_step(this.ptr, n, d, s.f64From(centers), k, this.labels, this.dist, out));
      const v = s.readF64(out, len);
      return {
        counts: v.slice(0, k),
        sums: v.slice(k, k + k * d),
        changed: v[k + k * d] === 1,
        inertia: v[k + k * d + 1]!,
        ...(withLabels ? { labels: s.readU32(this.labels, n) } : {}),
      };
    });
  }

  /** The m rows of the last step farthest from their centers, farthest first, the first row on ties (the core's order). */
  farthest(m: number): FarRow[] {
    const { n, d } = this;
    const buffer = wasm().memory.buffer;
    const dist = new Float64Array(buffer, this.dist, n);
    const top: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = dist[i]!;
      if (top.length === m && !(v > dist[top[m - 1]!]!)) continue;
      let at = top.length;
      while (at > 0 && v > dist[top[at - 1]!]!) at--;
      top.splice(at, 0, i);
      if (top.length > m) top.pop();
    }
    const labels = new Uint32Array(buffer, this.labels, n);
    const rows = new Float64Array(buffer, this.ptr, n * d);
    return top.map((i) => ({ dist: dist[i]!, index: i, label: labels[i]!, row: Float64Array.from({ length: d }, (_, j) => rows[j * n + i]!) }));
  }
}

/** A run of Lloyd iterations over the shards, and its result: centers (k x d), every row's label, inertia, iterations. */
export interface LloydResult {
  centers: Float64Array;
  labels: Int32Array;
  inertia: number;
  nIter: number;
}

/**
 * Lloyd iterations from `start` over the calling thread's shard `own` (the
 * first) and the pool's, whose first rows are `bounds` (shardBounds): the
 * core's lloyd with every row-wise sum split by shard and added in shard
 * order. Stops on unchanged labels or a squared center shift at most `tolAbs`.
 */
export async function lloydOverShards(start: Float64Array, tolAbs: number, k: number, maxIter: number, own: KMeansShard, pool: ShardPool, bounds: readonly number[]): Promise<LloydResult> {
  const d = own.d;
  const steps = async (centers: Float64Array, fresh: boolean, withLabels: boolean): Promise<KMeansShardStats[]> => {
    const theirs = pool.kmeansStep(centers, k, fresh, withLabels);
    // awaited below, so a failure of the calling thread's shard must not leave it unhandled
    theirs.catch(() => undefined);
    const mine = own.step(centers, k, fresh, withLabels);
    return [mine, ...(await theirs)];
  };
  let centers = start.slice();
  let nIter = 0;
  for (let it = 0; it < maxIter; it++) {
    const all = await steps(centers, it === 0, false);
    const counts = new Float64Array(k);
    const sums = new Float64Array(k * d);
    let changed = false;
    for (const st of all) {
      for (let c = 0; c < k; c++) counts[c]! += st.counts[c]!;
      for (let i = 0; i < k * d; i++) sums[i]! += st.sums[i]!;
      changed ||= st.changed;
    }
    const empty: number[] = [];
    for (let c = 0; c < k; c++) if (counts[c] === 0) empty.push(c);
    if (empty.length > 0) {
      // the rows farthest from their own centers over all shards seed the empty clusters
      const far = await farthestOverShards(empty.length, own, pool, bounds);
      empty.forEach((c, i) => {
        const { label: old, row } = far[i]!;
        for (let j = 0; j < d; j++) {
          sums[old * d + j]! -= row[j]!;
          sums[c * d + j] = row[j]!;
        }
        counts[old]! -= 1;
        counts[c] = 1;
      });
    }
    let shift = 0;
    const next = centers.slice();
    for (let c = 0; c < k; c++) {
      // a cluster drained by re-seeding keeps its center
      if (counts[c] === 0) continue;
      for (let j = 0; j < d; j++) {
        const v = sums[c * d + j]! / counts[c]!;
        const delta = v - centers[c * d + j]!;
        shift += delta * delta;
        next[c * d + j] = v;
      }
    }
    centers = next;
    nIter = it + 1;
    if (!changed || shift <= tolAbs) break;
  }
  // labels and inertia consistent with the final centers
  const last = await steps(centers, false, true);
  const labels = new Int32Array(bounds[bounds.length - 1]!);
  let inertia = 0;
  last.forEach((st, i) => {
    labels.set(st.labels!, bounds[i]!);
    inertia += st.inertia;
  });
  return { centers, labels, inertia, nIter };
}

/** The m rows farthest from their centers over every shard, farthest first, the first row of the whole data on ties. */
async function farthestOverShards(m: number, own: KMeansShard, pool: ShardPool, bounds: readonly number[]): Promise<FarRow[]> {
  const theirs = pool.kmeansFarthest(m);
  theirs.catch(() => undefined);
  const all = [own.farthest(m), ...(await theirs)].flatMap((rows, s) => rows.map((r) => ({ ...r, index: r.index + bounds[s]! })));
  return all.sort((a, b) => b.dist - a.dist || a.index - b.index).slice(0, m);
}
