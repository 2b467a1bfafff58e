/**
 * Fast greedy modularity communities (Clauset, Newman, Moore 2004, "Finding
 * community structure in very large networks"), the method the
 * anomaly-communities paper's code takes from igraph (community_fastgreedy).
 * No maintained npm package implements it, so it is written here.
 *
 * Every client starts alone; each step merges the two linked communities
 * whose merge raises modularity most (or lowers it least), until no two
 * communities are linked. That is a dendrogram; the partition returned is its
 * cut at the highest modularity, and among equally high cuts the one after
 * more merges (igraph's `as_clustering()`). Clients without links are never
 * merged.
 *
 * The gain of merging communities i and j is dQ = (S e_ij - a_i a_j) / (S^2 / 2),
 * with S twice the total link weight, e_ij the weight of the links between i
 * and j and a_i the summed degrees of i; the code compares S e_ij - a_i a_j,
 * which for an unweighted graph is a whole number, so equal gains are equal
 * exactly. **Ties** (equal gains) go to the pair whose communities hold the
 * clients earliest in `graph.nodes`: the pair whose smaller first position is
 * smaller, then whose larger first position is smaller (a community's first
 * position is that of its earliest client). igraph breaks ties by the state
 * of its heap instead, so where ties decide, the two may return different
 * partitions of about the same modularity.
 *
 * Data structures: per community a sparse map from each linked community to
 * e_ij; one binary max-heap of candidate pairs, filled lazily (a pair whose
 * community has merged since is skipped when it surfaces). Merging moves the
 * smaller map into the larger one and pushes the merged community's pairs
 * anew: O(m d log m) for m links and a dendrogram of depth d.
 */
import type { ClientGraph } from './client-graph.js';

/** The dendrogram's cut at its best modularity, and how the greedy steps up to it went. */
export interface FastGreedyResult {
  /** community of each client (by position in graph.nodes), numbered by first client */
  membership: Int32Array;
  /** merges up to the cut */
  merges: number;
  /** merges in the whole dendrogram */
  joins: number;
  /** merges up to the cut at which another pair had the same gain (so the node order decided) */
  ties: number;
}

interface Pair {
  key: number;
  lo: number;
  hi: number;
  a: number;
  b: number;
  va: number;
  vb: number;
}

/** Whether pair x goes before pair y: larger gain, then earlier first clients. */
function before(x: Pair, y: Pair): boolean {
  if (x.key !== y.key) return x.key > y.key;
  return x.lo !== y.lo ? x.lo < y.lo : x.hi < y.hi;
}

class PairHeap {
  private readonly items: Pair[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Pair | undefined {
    return this.items[0];
  }

  push(p: Pair): void {
    const h = this.items;
    let i = h.length;
    h.push(p);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(p, h[parent]!)) break;
      h[i] = h[parent]!;
      i = parent;
    }
    h[i] = p;
  }

  pop(): Pair | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= h.length) break;
      if (child + 1 < h.length && before(h[child + 1]!, h[child]!)) child++;
      if (!before(h[child]!, last)) break;
      h[i] = h[child]!;
      i = child;
    }
    h[i] = last;
    return top;
  }
}

export function fastGreedy(g: ClientGraph): FastGreedyResult {
  const n = g.nodes.length;
  const m = g.source.length;
  let total = 0;
  for (let e = 0; e < m; e++) total += g.weight[e]!;
  const s = 2 * total;
  const a = new Float64Array(n);
  const links: Map<number, number>[] = Array.from({ length: n }, () => new Map());
  for (let e = 0; e < m; e++) {
    const i = g.source[e]!;
    const j = g.target[e]!;
    const w = g.weight[e]!;
    a[i] += w;
    a[j] += w;
    links[i]!.set(j, w);
    links[j]!.set(i, w);
  }
  const first = Int32Array.from({ length: n }, (_, i) => i);
  const version = new Int32Array(n);
  const alive = new Uint8Array(n).fill(1);
  const heap = new PairHeap();
  const pair = (i: number, j: number, eij: number): Pair => ({
    key: s * eij - a[i]! * a[j]!,
    lo: Math.min(first[i]!, first[j]!),
    hi: Math.max(first[i]!, first[j]!),
    a: i,
    b: j,
    va: version[i]!,
    vb: version[j]!,
  });
  for (let e = 0; e < m; e++) heap.push(pair(g.source[e]!, g.target[e]!, g.weight[e]!));
  const current = (p: Pair) => alive[p.a] === 1 && alive[p.b] === 1 && version[p.a] === p.va && version[p.b] === p.vb;
  const nextCurrent = (): Pair | undefined => {
    for (let p = heap.peek(); p !== undefined; p = heap.peek()) {
      if (current(p)) return p;
      heap.pop();
    }
    return undefined;
  };
  const exact = !g.weighted;
  const tied = (x: number, y: number) => (exact ? x === y : Math.abs(x - y) <= 1e-12 * Math.max(Math.abs(x), Math.abs(y)));

  const kept: number[] = []; // survivor, absorbed, per merge
  const tieAt: boolean[] = [];
  let q = 0; // modularity gained so far, in units of S^2 / 2
  let bestQ = 0;
  let best = 0;
  for (let p = nextCurrent(); p !== undefined; p = nextCurrent()) {
    heap.pop();
    const next = nextCurrent();
    tieAt.push(next !== undefined && tied(next.key, p.key));
    // the community with more links absorbs the other: fewer map updates
    const [keep, gone] = links[p.a]!.size >= links[p.b]!.size ? [p.a, p.b] : [p.b, p.a];
    const into = links[keep]!;
    for (const [l, e] of links[gone]!) {
      if (l === keep) continue;
      const sum = (into.get(l) ?? 0) + e;
      into.set(l, sum);
      const theirs = links[l]!;
      theirs.delete(gone);
      theirs.set(keep, sum);
    }
    into.delete(gone);
    links[gone] = new Map();
    alive[gone] = 0;
    a[keep] += a[gone]!;
    a[gone] = 0;
    first[keep] = Math.min(first[keep]!, first[gone]!);
    version[keep]++;
    for (const [l, e] of into) heap.push(pair(keep, l, e));
    kept.push(keep, gone);
    q += p.key;
    if (q >= bestQ) {
      bestQ = q;
      best = kept.length / 2;
    }
  }

  // replay the merges up to the cut
  const parent = Int32Array.from({ length: n }, (_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  for (let t = 0; t < best; t++) parent[root(kept[2 * t + 1]!)] = root(kept[2 * t]!);
  const membership = new Int32Array(n);
  const number = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = root(i);
    let c = number.get(r);
    if (c === undefined) number.set(r, (c = number.size));
    membership[i] = c;
  }
  let ties = 0;
  for (let t = 0; t < best; t++) if (tieAt[t]) ties++;
  return { membership, merges: best, joins: kept.length / 2, ties };
}
