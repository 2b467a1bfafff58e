/**
 * Louvain communities (Blondel et al. 2008) by graphology-communities-louvain
 * on a graphology copy of the graph, resolution 1. The library visits nodes
 * in an order drawn from the random function it is given; that function
 * draws from fedmix's one generator (Rng), so a seed fixes the result.
 */
import { UndirectedGraph } from 'graphology';
import louvain from 'graphology-communities-louvain';
import { Rng } from '../random.js';
import type { ClientGraph } from './client-graph.js';

/** Uniforms in [0, 1) from an Rng, drawn from the core a batch at a time. */
function uniforms(rng: Rng): () => number {
  let batch: Float64Array = new Float64Array(0);
  let next = 0;
  return () => {
    if (next === batch.length) {
      batch = rng.uniform(256);
      next = 0;
    }
    return batch[next++]!;
  };
}

/** Community of each client (by position in graph.nodes), numbered by first client. */
export function louvainMembership(g: ClientGraph, seed: number | undefined): Int32Array {
  const n = g.nodes.length;
  const membership = new Int32Array(n);
  if (g.source.length === 0) {
    for (let i = 0; i < n; i++) membership[i] = i;
    return membership;
  }
  const graph = new UndirectedGraph();
  for (let i = 0; i < n; i++) graph.addNode(String(i));
  for (let e = 0; e < g.source.length; e++) graph.addEdge(String(g.source[e]), String(g.target[e]), { weight: g.weight[e] });
  const rng = new Rng(seed);
  let found: Record<string, number>;
  try {
    found = louvain(graph, { getEdgeWeight: 'weight', resolution: 1, rng: uniforms(rng) });
  } finally {
    rng.dispose();
  }
  const number = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const c = found[String(i)]!;
    let k = number.get(c);
    if (k === undefined) number.set(c, (k = number.size));
    membership[i] = k;
  }
  return membership;
}
