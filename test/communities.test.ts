/**
 * Graphs of clients and their communities, against python-igraph 0.10
 * (test/fixtures/communities.json, from scripts/gen-fixtures.py communities):
 * fedmix's modularity of igraph's partitions, the modularity Louvain and fast
 * greedy find, fast greedy's partition itself where ties do not decide it,
 * isolated clients, determinism, bad input.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { ClientGraph, communities, COMMUNITY_METHODS, init, InvalidDataError, InvalidParameterError, modularity, type GraphEdge } from '../ts/index.js';
import { fastGreedy } from '../ts/graph/fast-greedy.js';
import { expectClean, fixture } from './helpers.js';

interface FixtureGraph {
  name: string;
  n: number;
  edges: [number, number][];
  weights: number[] | null;
  multilevel: { membership: number[]; modularity: number; modularities: number[] };
  fastgreedy: { membership: number[]; modularity: number; merges: number; stable: boolean; cutTie: boolean; nonGreedy: number };
  random: { membership: number[]; modularity: number };
}

const { graphs } = fixture<{ igraph: string; graphs: FixtureGraph[] }>('communities.json');

/** Client ids that do not sort as numbers do, so that sorting is by id, not position. */
const id = (v: number) => `c${v}`;

function graphOf(f: FixtureGraph): ClientGraph {
  return new ClientGraph({
    nodes: Array.from({ length: f.n }, (_, v) => id(v)),
    edges: f.edges.map(([u, v], k): GraphEdge => (f.weights ? [id(u), id(v), f.weights[k]!] : [id(u), id(v)])),
  });
}

/** A partition as sorted lists of sorted ids, whatever numbers its communities. */
function canonical(groups: string[][]): string[][] {
  return groups.map((g) => [...g].sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}

function groupsOf(membership: number[]): string[][] {
  const m = new Map<number, string[]>();
  membership.forEach((c, v) => m.set(c, [...(m.get(c) ?? []), id(v)]));
  return canonical([...m.values()]);
}

beforeAll(async () => {
  await init();
});

describe('modularity against igraph', () => {
  test.each(graphs.map((f) => [f.name, f] as const))('%s: igraph partitions score within 1e-9', (_, f) => {
    const g = graphOf(f);
    for (const { membership, modularity: q } of [f.multilevel, f.fastgreedy, f.random]) {
      expect(Math.abs(modularity(g, groupsOf(membership)) - q)).toBeLessThan(1e-9);
      // as labels too, the same partition
      const labels = new Map(membership.map((c, v) => [id(v), c]));
      expect(Math.abs(modularity(g, labels) - q)).toBeLessThan(1e-9);
    }
  });

  test('small cases by hand; no links: NaN, as igraph', () => {
    const g = { nodes: ['a', 'b', 'c', 'd'], edges: [['a', 'b'], ['c', 'd']] as GraphEdge[] };
    expect(modularity(g, [['a', 'b'], ['c', 'd']])).toBeCloseTo(0.5, 15);
    expect(modularity(g, [['a', 'b', 'c', 'd']])).toBe(0);
    expect(modularity(g, [['a'], ['b'], ['c'], ['d']])).toBeCloseTo(-0.25, 15);
    // weighted: Q = sum w_c / W - (d_c / 2W)^2
    const w = { nodes: ['a', 'b', 'c'], edges: [['a', 'b', 3], ['b', 'c', 1]] as GraphEdge[] };
    expect(modularity(w, [['a', 'b'], ['c']])).toBeCloseTo(3 / 4 - (7 / 8) ** 2 - (1 / 8) ** 2, 15);
    expect(modularity({ nodes: ['a', 'b'], edges: [] }, [['a'], ['b']])).toBeNaN();
    expect(modularity({ nodes: [], edges: [] }, [])).toBeNaN();
  });
});

describe('communities against igraph', () => {
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
  };

  test.each(graphs.map((f) => [f.name, f] as const))('%s', (_, f) => {
    const g = graphOf(f);
    const isolated = g.nodes.filter((v) => g.degree(v) === 0);
    // both Louvains visit nodes in a random order: their medians over 10 seeds are compared
    const runs = Array.from({ length: 10 }, (__, seed) => communities(g, { method: 'louvain', seed }));
    expect(median(runs.map((r) => r.modularity))).toBeGreaterThanOrEqual(median(f.multilevel.modularities) - 0.01);
    const greedy = communities(g, { method: 'fast-greedy' });
    expect(greedy.modularity).toBeGreaterThanOrEqual(f.fastgreedy.modularity - 0.01);
    if (f.fastgreedy.stable && !f.fastgreedy.cutTie) {
      // igraph gives this partition whatever the vertex order: ties did not decide it
      expect(canonical(greedy.communities)).toEqual(groupsOf(f.fastgreedy.membership));
    }
    for (const r of [runs[0]!, greedy]) {
      expect(r.modularity).toBe(modularity(g, r.communities));
      for (const v of isolated) expect(r.communities[r.membership.get(v)!]).toEqual([v]);
      // a partition of the clients, each community sorted, ordered by first id
      expect(r.communities.flat().sort()).toEqual([...g.nodes].sort());
      for (const c of r.communities) expect(c).toEqual([...c].sort());
      expect(r.communities.map((c) => c[0])).toEqual(r.communities.map((c) => c[0]).sort());
      r.communities.forEach((c, k) => c.forEach((v) => expect(r.membership.get(v)).toBe(k)));
    }
  });

  test('igraph decides most graphs without ties, the association-shaped ones all', () => {
    const decided = graphs.filter((f) => f.fastgreedy.stable && !f.fastgreedy.cutTie).map((f) => f.name);
    expect(decided).toEqual(expect.arrayContaining(['karate', 'karate-weighted', 'gnp-60-weighted', 'association-p9', 'association-merged', 'association-p18', 'association-weighted']));
  });
});

/**
 * Fast greedy the slow way: every step recomputes the gain of every linked
 * pair of communities from the links, merges the best (ties to the earliest
 * clients), and the cut is the best modularity, after more merges on a tie.
 */
function greedyReference(g: ClientGraph): number[] {
  const n = g.nodes.length;
  const of = Array.from({ length: n }, (_, i) => i); // community of each client
  const s = 2 * g.weight.reduce((a, b) => a + b, 0);
  const cuts: { q: number; of: number[] }[] = [{ q: 0, of: of.slice() }];
  let q = 0;
  for (;;) {
    const between = new Map<string, number>();
    const degree = new Map<number, number>();
    for (let e = 0; e < g.source.length; e++) {
      const [x, y] = [of[g.source[e]!]!, of[g.target[e]!]!];
      const w = g.weight[e]!;
      degree.set(x, (degree.get(x) ?? 0) + w);
      degree.set(y, (degree.get(y) ?? 0) + w);
      if (x !== y) between.set(`${Math.min(x, y)},${Math.max(x, y)}`, (between.get(`${Math.min(x, y)},${Math.max(x, y)}`) ?? 0) + w);
    }
    let best: { key: number; x: number; y: number } | undefined;
    for (const [k, e] of between) {
      const [x, y] = k.split(',').map(Number) as [number, number];
      const key = s * e - degree.get(x)! * degree.get(y)!;
      // a community is named by its first client here, so (x, y) are the first positions
      if (!best || key > best.key || (key === best.key && (x < best.x || (x === best.x && y < best.y)))) best = { key, x, y };
    }
    if (!best) break;
    for (let i = 0; i < n; i++) if (of[i] === best.y) of[i] = best.x;
    q += best.key;
    cuts.push({ q, of: of.slice() });
  }
  let pick = cuts[0]!;
  for (const c of cuts) if (c.q >= pick.q) pick = c;
  return pick.of;
}

describe('fast greedy is greedy', () => {
  test('the same partitions as the slow way, on random graphs and the small fixtures', () => {
    let state = 12345;
    const next = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const cases: ClientGraph[] = graphs.filter((f) => f.n <= 60).map(graphOf);
    for (let t = 0; t < 40; t++) {
      const n = 5 + Math.floor(next() * 40);
      const p = 0.05 + next() * 0.3;
      const weighted = t % 2 === 1;
      const edges: GraphEdge[] = [];
      for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (next() < p) edges.push(weighted ? [id(i), id(j), 0.1 + next() * 3] : [id(i), id(j)]);
      cases.push(new ClientGraph({ nodes: Array.from({ length: n }, (_, v) => id(v)), edges }));
    }
    for (const g of cases) {
      const ours = fastGreedy(g).membership;
      const slow = greedyReference(g);
      // the same partition: same community exactly when the reference's is the same
      for (let i = 0; i < g.nodes.length; i++) for (let j = 0; j < i; j++) expect(ours[i] === ours[j]).toBe(slow[i] === slow[j]);
    }
  });
});

describe('determinism and ties', () => {
  const f = graphs.find((x) => x.name === 'sbm-120')!;

  test('Louvain: the same seed gives the same communities', () => {
    const a = communities(graphOf(f), { seed: 7 });
    const b = communities(graphOf(f), { seed: 7 });
    expect(b).toEqual(a);
    expect(a.method).toBe('louvain');
  });

  test('fast greedy is deterministic and does not depend on the order of the edges', () => {
    const g = graphOf(f);
    const shuffled = new ClientGraph({ nodes: g.nodes, edges: [...g.edges].reverse().map(([a, b]) => [b, a]) });
    expect(communities(shuffled, { method: 'fast-greedy' })).toEqual(communities(g, { method: 'fast-greedy', seed: 3 }));
  });

  test('fast greedy breaks ties by the clients earliest in nodes', () => {
    // a 6-cycle: every first merge gains the same; the pairs start from the first client
    const ring = ['a', 'b', 'c', 'd', 'e', 'f'];
    const edges = ring.map((v, i): GraphEdge => [v, ring[(i + 1) % 6]!]);
    expect(communities({ nodes: ring, edges }, { method: 'fast-greedy' }).communities).toEqual([['a', 'b'], ['c', 'd'], ['e', 'f']]);
    const rotated = [...ring.slice(1), 'a'];
    expect(communities({ nodes: rotated, edges }, { method: 'fast-greedy' }).communities).toEqual([['a', 'f'], ['b', 'c'], ['d', 'e']]);
    expect(fastGreedy(new ClientGraph({ nodes: ring, edges })).ties).toBeGreaterThan(0);
  });

  test("README's example", () => {
    const graph = new ClientGraph({
      nodes: ['a', 'b', 'c', 'd', 'e', 'f', 'lonely'],
      edges: [['a', 'b'], ['b', 'c'], ['c', 'a'], ['d', 'e'], ['e', 'f'], ['f', 'd'], ['c', 'd']],
    });
    for (const method of COMMUNITY_METHODS) {
      const r = communities(graph, { method, seed: 1 });
      expect(r.communities).toEqual([['a', 'b', 'c'], ['d', 'e', 'f'], ['lonely']]);
      expect(r.membership.get('e')).toBe(1);
      expect(modularity(graph, r.communities)).toBe(r.modularity);
    }
  });

  test('isolated clients and graphs without links: communities of one', () => {
    for (const method of COMMUNITY_METHODS) {
      const r = communities({ nodes: ['z', 'y', 'x'], edges: [] }, { method, seed: 1 });
      expect(r.communities).toEqual([['x'], ['y'], ['z']]);
      expect(r.modularity).toBeNaN();
      expect(communities({ nodes: [], edges: [] }, { method }).communities).toEqual([]);
      const s = communities({ nodes: ['a', 'b', 'c', 'lonely'], edges: [['a', 'b'], ['b', 'c'], ['c', 'a']] }, { method, seed: 1 });
      expect(s.communities).toEqual([['a', 'b', 'c'], ['lonely']]);
    }
  });
});

describe('ClientGraph', () => {
  test('neighbors, degree, order, size, toJSON', () => {
    const g = new ClientGraph({ nodes: ['a', 'b', 'c', 'd'], edges: [['c', 'a', 2], ['a', 'b', 0.5]] });
    expect(g.neighbors('a')).toEqual(['b', 'c']);
    expect(g.neighbors('d')).toEqual([]);
    expect(g.degree('a')).toBe(2.5);
    expect([g.order, g.size, g.weighted]).toEqual([4, 2, true]);
    expect(new ClientGraph(g.toJSON())).toEqual(g);
    expect(new ClientGraph({ nodes: ['a', 'b'], edges: [['a', 'b']] }).toJSON()).toEqual({ nodes: ['a', 'b'], edges: [['a', 'b']] });
    expect(Object.isFrozen(g) && Object.isFrozen(g.nodes) && Object.isFrozen(g.edges)).toBe(true);
    expect(() => g.degree('e')).toThrow(InvalidDataError);
  });
});

describe('bad input: typed errors', () => {
  const nodes = ['a', 'b', 'c'];
  const bad: [string, unknown, RegExp][] = [
    ['a self-loop', { nodes, edges: [['a', 'a']] }, /itself/],
    ['an unknown id', { nodes, edges: [['a', 'q']] }, /"q", which is not in graph.nodes/],
    ['a NaN weight', { nodes, edges: [['a', 'b', Number.NaN]] }, /weight NaN/],
    ['an infinite weight', { nodes, edges: [['a', 'b', Infinity]] }, /weight Infinity/],
    ['a zero weight', { nodes, edges: [['a', 'b', 0]] }, /weight 0/],
    ['a negative weight', { nodes, edges: [['a', 'b', -1]] }, /weight -1/],
    ['a duplicate link', { nodes, edges: [['a', 'b'], ['b', 'c'], ['a', 'b']] }, /again \(first at graph.edges\[0\]\)/],
    ['a duplicate link reversed', { nodes, edges: [['a', 'b'], ['b', 'a']] }, /again/],
    ['a client listed twice', { nodes: ['a', 'b', 'a'], edges: [] }, /twice/],
    ['a number as id', { nodes: ['a', 1], edges: [] }, /strings/],
    ['a link of one id', { nodes, edges: [['a']] }, /\[a, b\] or \[a, b, weight\]/],
    ['a link of four entries', { nodes, edges: [['a', 'b', 1, 2]] }, /at most 3/],
    ['no nodes', { edges: [] }, /graph.nodes must be an array/],
    ['not a graph', 42, /nodes, edges/],
  ];
  test.each(bad)('%s', (_, graph, hint) => {
    for (const call of [() => communities(graph as never), () => modularity(graph as never, [nodes]), () => new ClientGraph(graph as never)]) {
      expect(call).toThrow(InvalidDataError);
      expect(call).toThrow(hint);
    }
  });

  test('bad partitions for modularity', () => {
    const g = { nodes, edges: [['a', 'b']] as GraphEdge[] };
    expect(() => modularity(g, [['a', 'b']])).toThrow(/leaves out client "c"/);
    expect(() => modularity(g, [['a', 'b'], ['c', 'a']])).toThrow(/twice/);
    expect(() => modularity(g, [['a', 'b', 'c', 'x']])).toThrow(/"x", which is not a client/);
    expect(() => modularity(g, new Map([['a', 0], ['b', 0], ['c', Number.NaN]]))).toThrow(InvalidDataError);
    expect(() => modularity(g, 'abc' as never)).toThrow(InvalidDataError);
    expect(modularity(g, new Map<string, number | string>([['a', 'x'], ['b', 'x'], ['c', 2]]))).toBeCloseTo(0.5 - 0.5, 15);
  });

  test('bad options: InvalidParameterError, and the WASM heap as it was', () => {
    const g = { nodes, edges: [['a', 'b']] as GraphEdge[] };
    expectClean(() => communities(g, { method: 'leiden' as never }), InvalidParameterError, /method must be one of 'louvain', 'fast-greedy'/);
    expectClean(() => communities(g, { seed: -1 }), InvalidParameterError, /seed/);
    expectClean(() => communities(g, { seed: 1.5, method: 'fast-greedy' }), InvalidParameterError, /seed/);
    expectClean(() => communities(g, 'louvain' as never), InvalidParameterError, /options/);
  });
});
