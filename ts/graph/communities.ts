/**
 * Communities of a graph of clients, by Louvain (graphology) or by fast
 * greedy (Clauset-Newman-Moore, as igraph's community_fastgreedy), each
 * scored by fedmix's own modularity so that the two are compared alike.
 */
import { readOptions, requireInteger, requireOneOf } from '../validate.js';
import { toClientGraph, type ClientGraph, type GraphInput } from './client-graph.js';
import { fastGreedy } from './fast-greedy.js';
import { louvainMembership } from './louvain.js';
import { modularityOf } from './modularity.js';

export const COMMUNITY_METHODS = ['louvain', 'fast-greedy'] as const;
export type CommunityMethod = (typeof COMMUNITY_METHODS)[number];

export interface CommunitiesOptions {
  /** 'louvain' (default; graphology-communities-louvain) or 'fast-greedy' (Clauset-Newman-Moore, as igraph) */
  method?: CommunityMethod;
  /** Louvain's random visiting order: the same seed, the same communities (without one, a fresh seed each call); fast greedy draws nothing */
  seed?: number;
}

export interface Communities {
  /** the communities, each its client ids sorted, ordered by their first id; a client without links is a community of one */
  communities: string[][];
  /** each client's community: its index in `communities` */
  membership: Map<string, number>;
  /** Newman's modularity of the partition (resolution 1; NaN for a graph without links) */
  modularity: number;
  method: CommunityMethod;
}

/**
 * ```ts
 * const { communities, membership, modularity } = communities(
 *   { nodes: ['a', 'b', 'c', 'd', 'e'], edges: [['a', 'b'], ['b', 'c'], ['a', 'c'], ['d', 'e']] },
 *   { method: 'louvain', seed: 1 },
 * );  // [['a', 'b', 'c'], ['d', 'e']]
 * ```
 */
export function communities(graph: ClientGraph | GraphInput, options?: CommunitiesOptions): Communities {
  const o = readOptions(options, ['method', 'seed']);
  const method = o.method === undefined ? 'louvain' : requireOneOf('method', o.method, COMMUNITY_METHODS);
  const seed = o.seed === undefined ? undefined : requireInteger('seed', o.seed, 0);
  const g = toClientGraph(graph);
  const label = method === 'louvain' ? louvainMembership(g, seed) : fastGreedy(g).membership;
  return describe(g, label, method);
}

/** The partition given by community labels (by client position) as sorted id lists, a membership map and its modularity. */
export function describe(g: ClientGraph, label: Int32Array, method: CommunityMethod): Communities {
  const groups = new Map<number, string[]>();
  g.nodes.forEach((id, i) => {
    const members = groups.get(label[i]!);
    if (members) members.push(id);
    else groups.set(label[i]!, [id]);
  });
  const list = [...groups.values()].map((ids) => ids.sort());
  list.sort((x, y) => (x[0]! < y[0]! ? -1 : x[0]! > y[0]! ? 1 : 0));
  const membership = new Map<string, number>();
  const canonical = new Int32Array(g.nodes.length);
  list.forEach((ids, c) =>
    ids.forEach((id) => {
      membership.set(id, c);
      canonical[g.position.get(id)!] = c;
    }),
  );
  // scored as modularity(graph, communities) scores it, to the last bit
  return { communities: list, membership, modularity: modularityOf(g, canonical), method };
}
