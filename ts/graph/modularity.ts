/**
 * Newman's modularity of a partition of a graph of clients, the one score
 * both community methods are judged by:
 *
 *     Q = sum over communities c of  [ w_c / W  -  (d_c / 2W)^2 ]
 *
 * where W is the total weight of the links (their number when unweighted),
 * w_c the weight of the links inside c and d_c the sum of the (weighted)
 * degrees of c's clients; resolution 1. The same as igraph's `modularity`
 * (and NetworkX's). A graph without links has no modularity: NaN, as igraph.
 */
import { formatValue, InvalidDataError } from '../errors.js';
import { guardRead, LIMITS, readArray } from '../validate.js';
import { toClientGraph, type ClientGraph, type GraphInput } from './client-graph.js';

/** A partition of a graph's clients: its communities as arrays of ids, or each client's community label. */
export type CommunityPartition = readonly (readonly string[])[] | ReadonlyMap<string, number | string>;

/**
 * Newman's modularity Q of `partition` on `graph` (resolution 1, weighted
 * when the graph is). Every client must be in exactly one community.
 *
 * ```ts
 * modularity({ nodes: ['a', 'b', 'c', 'd'], edges: [['a', 'b'], ['c', 'd']] }, [['a', 'b'], ['c', 'd']]);  // 0.5
 * ```
 */
export function modularity(graph: ClientGraph | GraphInput, partition: CommunityPartition): number {
  const g = toClientGraph(graph);
  return modularityOf(g, readPartition(g, partition));
}

/** Modularity of community labels 0..k-1 by client position. */
export function modularityOf(g: ClientGraph, label: Int32Array): number {
  let k = 0;
  for (let i = 0; i < label.length; i++) k = Math.max(k, label[i]! + 1);
  const inside = new Float64Array(k);
  const degree = new Float64Array(k);
  let total = 0;
  for (let e = 0; e < g.source.length; e++) {
    const w = g.weight[e]!;
    const a = label[g.source[e]!]!;
    const b = label[g.target[e]!]!;
    total += w;
    degree[a] += w;
    degree[b] += w;
    if (a === b) inside[a] += w;
  }
  if (total === 0) return Number.NaN;
  let q = 0;
  for (let c = 0; c < k; c++) {
    const share = degree[c]! / (2 * total);
    q += inside[c]! / total - share * share;
  }
  return q;
}

/** Community labels 0..k-1 by client position, from the caller's partition, checked to cover every client once. */
export function readPartition(g: ClientGraph, partition: unknown): Int32Array {
  const n = g.nodes.length;
  const label = new Int32Array(n).fill(-1);
  const where = 'partition';
  const place = (id: unknown, c: number, at: string) => {
    const p = typeof id === 'string' ? g.position.get(id) : undefined;
    if (p === undefined) {
      throw new InvalidDataError(
        typeof id === 'string' ? `${at} is ${formatValue(id)}, which is not a client of the graph` : `${at} must be a client id (a string), got ${formatValue(id)}`,
      );
    }
    if (label[p] !== -1) throw new InvalidDataError(`${at}: client ${formatValue(id)} is in the partition twice; each client belongs to one community`);
    label[p] = c;
  };
  if (isMap(partition)) {
    const size = sizeOf(partition);
    if (size > LIMITS.graphNodes) throw new InvalidDataError(`${where} holds ${size} entries, more than the ${LIMITS.graphNodes} clients a graph may have`);
    const entries = guardRead(where, () => [...Map.prototype.entries.call(partition)] as [unknown, unknown][], InvalidDataError);
    const labels = new Map<number | string, number>();
    for (const [id, c] of entries) {
      if ((typeof c !== 'number' || !Number.isFinite(c)) && typeof c !== 'string') {
        throw new InvalidDataError(`${where} gives client ${formatValue(id)} the community ${formatValue(c)}; a community label is a finite number or a string`);
      }
      let index = labels.get(c);
      if (index === undefined) labels.set(c, (index = labels.size));
      place(id, index, `${where} key ${formatValue(id)}`);
    }
  } else {
    const communities = readArray(where, partition, LIMITS.graphNodes, InvalidDataError);
    communities.forEach((members, c) => {
      const ids = readArray(`${where}[${c}]`, members, LIMITS.graphNodes, InvalidDataError);
      ids.forEach((id, j) => place(id, c, `${where}[${c}][${j}]`));
    });
  }
  const missing = label.indexOf(-1);
  if (missing !== -1) throw new InvalidDataError(`${where} leaves out client ${formatValue(g.nodes[missing])}; every client belongs to one community (a client alone is a community of one)`);
  return label;
}

function isMap(x: unknown): x is ReadonlyMap<unknown, unknown> {
  if (x === null || typeof x !== 'object') return false;
  try {
    // the size getter throws for anything but a real Map, and runs none of the caller's code
    sizeOf(x);
    return true;
  } catch {
    return false;
  }
}

const mapSize = Object.getOwnPropertyDescriptor(Map.prototype, 'size')!.get!;

function sizeOf(x: object): number {
  return mapSize.call(x) as number;
}
