/**
 * An undirected graph of clients: the mutual-association graph of the
 * anomaly-communities paper (two clients linked when each accepts the
 * other), on which communities are found. Clients are string ids; a link is
 * unweighted (weight 1) or carries a finite positive weight. Clients without
 * links stay in the graph, each its own community.
 *
 * Policies, checked when the graph is made (an InvalidDataError says which
 * entry is wrong): ids are strings, each client listed once; a link names
 * two different listed clients (no self-loops: a client is not its own
 * partner); each pair is linked at most once, in either order (list a
 * mutual pair once, or merge the weights of its duplicates first); a weight
 * is a finite number > 0 (leave a pair out rather than give it weight 0).
 */
import { formatValue, InvalidDataError } from '../errors.js';
import { guardRead, LIMITS, readArray } from '../validate.js';

/** A link: two client ids, and optionally its weight (default 1). */
export type GraphEdge = readonly [string, string] | readonly [string, string, number];

/** A graph as plain values: every client (isolated ones too) and the links between them. */
export interface GraphInput {
  nodes: readonly string[];
  edges: readonly GraphEdge[];
}

/** The graphs this module made, so that an object dressed up as one is read as plain input. */
const MADE = new WeakSet<object>();

export class ClientGraph {
  /** The clients, in the order given: positions in this array number them in the core algorithms. */
  readonly nodes: readonly string[];
  /** The links, each once, as [a, b, weight] in the order given (weight 1 when none was given). */
  readonly edges: readonly (readonly [string, string, number])[];
  /** Whether any link was given a weight. */
  readonly weighted: boolean;
  /** @internal the links by client position and their weights */
  readonly source: Int32Array;
  /** @internal */
  readonly target: Int32Array;
  /** @internal */
  readonly weight: Float64Array;
  /** @internal client id -> position in `nodes` */
  readonly position: ReadonlyMap<string, number>;

  /**
   * ```ts
   * const g = new ClientGraph({ nodes: ['a', 'b', 'c', 'd'], edges: [['a', 'b'], ['b', 'c']] });  // d: isolated
   * new ClientGraph({ nodes, edges: [['a', 'b', 0.8], ['b', 'c', 1.5]] });                         // weighted
   * ```
   */
  constructor(graph: GraphInput) {
    const what = 'graph';
    if (graph === null || typeof graph !== 'object') {
      throw new InvalidDataError(`${what} must be { nodes, edges } (client ids and the pairs linked), got ${formatValue(graph)}`);
    }
    const nodesIn = guardRead(`${what}.nodes`, () => graph.nodes, InvalidDataError);
    const edgesIn = guardRead(`${what}.edges`, () => graph.edges, InvalidDataError);
    const nodes = readArray(`${what}.nodes`, nodesIn, LIMITS.graphNodes, InvalidDataError);
    const position = new Map<string, number>();
    nodes.forEach((id, i) => {
      if (typeof id !== 'string') throw new InvalidDataError(`${what}.nodes must be client ids (strings); ${what}.nodes[${i}] is ${formatValue(id)}`);
      const earlier = position.get(id);
      if (earlier !== undefined) throw new InvalidDataError(`${what}.nodes lists ${formatValue(id)} twice (at ${earlier} and ${i}); list each client once`);
      position.set(id, i);
    });
    const list = readArray(`${what}.edges`, edgesIn, LIMITS.graphEdges, InvalidDataError);
    const m = list.length;
    const source = new Int32Array(m);
    const target = new Int32Array(m);
    const weight = new Float64Array(m);
    const edges: (readonly [string, string, number])[] = new Array(m);
    const seen = new Map<number, number>();
    const n = nodes.length;
    let weighted = false;
    for (let k = 0; k < m; k++) {
      const name = `${what}.edges[${k}]`;
      const e = readArray(name, list[k], 3, InvalidDataError);
      if (e.length < 2) throw new InvalidDataError(`${name} must be [a, b] or [a, b, weight], got ${formatValue(list[k])}`);
      const [a, b] = e;
      const i = typeof a === 'string' ? position.get(a) : undefined;
      const j = typeof b === 'string' ? position.get(b) : undefined;
      if (i === undefined || j === undefined) {
        const bad = i === undefined ? a : b;
        throw new InvalidDataError(
          typeof bad === 'string'
            ? `${name} links ${formatValue(bad)}, which is not in ${what}.nodes; list every client in nodes`
            : `${name} must link two client ids (strings), got ${formatValue(bad)}`,
        );
      }
      if (i === j) throw new InvalidDataError(`${name} links ${formatValue(a)} to itself; a graph of clients has no self-loops`);
      let w = 1;
      if (e.length === 3) {
        const x = e[2];
        if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0) {
          throw new InvalidDataError(`${name} has weight ${formatValue(x)}; a weight must be a finite number > 0 (leave the pair out instead of weight 0)`);
        }
        w = x;
        weighted = true;
      }
      const pair = Math.min(i, j) * n + Math.max(i, j);
      const first = seen.get(pair);
      if (first !== undefined) {
        throw new InvalidDataError(`${name} links ${formatValue(a)} and ${formatValue(b)} again (first at ${what}.edges[${first}]); list each pair once, or merge the weights of its duplicates`);
      }
      seen.set(pair, k);
      source[k] = i;
      target[k] = j;
      weight[k] = w;
      edges[k] = Object.freeze([a as string, b as string, w] as const);
    }
    this.nodes = Object.freeze(nodes as string[]);
    this.edges = Object.freeze(edges);
    this.weighted = weighted;
    this.source = source;
    this.target = target;
    this.weight = weight;
    this.position = position;
    MADE.add(this);
    Object.freeze(this);
  }

  /** The number of clients. */
  get order(): number {
    return this.nodes.length;
  }

  /** The number of links. */
  get size(): number {
    return this.edges.length;
  }

  /** The clients linked to `id`, in the order of `nodes`. */
  neighbors(id: string): string[] {
    const p = this.positionOf(id);
    const out: number[] = [];
    for (let k = 0; k < this.source.length; k++) {
      if (this.source[k] === p) out.push(this.target[k]!);
      else if (this.target[k] === p) out.push(this.source[k]!);
    }
    return out.sort((x, y) => x - y).map((q) => this.nodes[q]!);
  }

  /** The sum of the weights of `id`'s links (its number of links when unweighted). */
  degree(id: string): number {
    const p = this.positionOf(id);
    let d = 0;
    for (let k = 0; k < this.source.length; k++) if (this.source[k] === p || this.target[k] === p) d += this.weight[k]!;
    return d;
  }

  /** The graph as plain values (weights only when it is weighted); `new ClientGraph(json)` makes it again. */
  toJSON(): GraphInput {
    return {
      nodes: this.nodes.slice(),
      edges: this.edges.map(([a, b, w]) => (this.weighted ? [a, b, w] : [a, b])),
    };
  }

  private positionOf(id: unknown): number {
    const p = typeof id === 'string' ? this.position.get(id) : undefined;
    if (p === undefined) throw new InvalidDataError(`${formatValue(id)} is not a client of this graph`);
    return p;
  }
}

/** A ClientGraph as it is, or one made from plain { nodes, edges }. */
export function toClientGraph(graph: ClientGraph | GraphInput): ClientGraph {
  return isClientGraph(graph) ? graph : new ClientGraph(graph as GraphInput);
}

/** Whether `x` is a graph this module made (asked without running a Proxy's traps). */
export function isClientGraph(x: unknown): x is ClientGraph {
  return x !== null && typeof x === 'object' && MADE.has(x);
}
