/**
 * What the two worker transports share: clients dealt round-robin to lanes
 * (one worker each, where a client stays for the whole run: clients are
 * stateful), wire bytes to and from the lanes, and the turning of what the
 * lanes return into an exchange: replies, timeouts, and dropouts when a
 * worker fails. Node threads (workers.ts, with piscina) and browser Web
 * Workers (web-workers.ts) differ only in how a task reaches a lane.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, isArray, readArray, readOptions } from '../../validate.js';
import type { ClientSpec } from '../registry/registry.js';
import { encodeMessage, type Encoding } from '../messages/codec.js';
import type { Message } from '../messages/envelope.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runningBuild } from '../../wasm/loader.js';
import type { LaneResult, LaneTask } from './lane.js';
import type { Exchange, ExchangeOptions, Transport } from './transport.js';

export interface LaneOptions {
  /** the wire form between the threads (default 'binary') */
  encoding?: Encoding;
  /** per message, checked before decoding (default 64 MiB) */
  maxMessageBytes?: number;
  /**
   * Modules each worker imports before it creates its clients: the user's
   * algorithms (each module calls registerAlgorithm). Node: paths or file
   * URLs; browsers: URLs (resolved against the page). The built-in
   * algorithms need none.
   */
  algorithmModules?: readonly (string | URL)[];
  /**
   * Clients' own privacy budgets, by client id, each opened in its client's
   * worker over its ledger (runtime/client-budget.ts): `ledger` is a file
   * path in Node's worker threads, an IndexedDB ledger's name in browsers'
   * Web Workers. A client with one refuses requests past its budget.
   */
  budgets?: Readonly<Record<string, LaneBudget>>;
}

/** A client's budget as it crosses to its worker: ClientBudgetOptions with the ledger named. */
export interface LaneBudget {
  epsilon: number;
  delta: number;
  /** a file path (Node) or an IndexedDB ledger's name (browsers) */
  ledger: string;
  trustSamplingRate?: boolean;
  requireDeclaredPrivacy?: boolean;
}

/** The keys of LaneOptions, for readOptions. */
export const LANE_KEYS = ['encoding', 'maxMessageBytes', 'algorithmModules', 'budgets'] as const;

/** options.budgets read into plain objects (cloneable) for the clients of `ids`; the budgets themselves are checked where they are opened. */
function readBudgets(given: unknown, ids: readonly string[]): Record<string, LaneBudget> | undefined {
  if (given === undefined) return undefined;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw new InvalidParameterError(`budgets must be an object from client id to { epsilon, delta, ledger }, got ${formatValue(given)}`);
  const out: Record<string, LaneBudget> = {};
  for (const [id, b] of Object.entries(given as Record<string, unknown>)) {
    if (!ids.includes(id)) throw new InvalidParameterError(`budgets names ${formatValue(id)}, which is not among the clients`);
    if (b === null || typeof b !== 'object') throw new InvalidParameterError(`budgets[${JSON.stringify(id)}] must be { epsilon, delta, ledger }, got ${formatValue(b)}`);
    const o = readOptions(b as LaneBudget, ['epsilon', 'delta', 'ledger', 'trustSamplingRate', 'requireDeclaredPrivacy'], `budgets[${JSON.stringify(id)}]`) as LaneBudget;
    if (typeof o.ledger !== 'string' || o.ledger.length === 0) throw new InvalidParameterError(`budgets[${JSON.stringify(id)}].ledger must name the ledger (a path, or an IndexedDB name), got ${formatValue(o.ledger)}`);
    out[id] = { ...o };
  }
  return out;
}

/**
 * options.algorithmModules as URLs a worker can import (hrefs): URLs as they
 * are, strings through `resolve` (a path in Node, a URL relative to the page
 * in browsers).
 */
export function moduleUrls(given: unknown, resolve: (s: string) => string): string[] {
  if (given === undefined) return [];
  const list = isArray('algorithmModules', given) ? readArray('algorithmModules', given, 1024) : undefined;
  if (!list) throw new InvalidParameterError(`algorithmModules must be an array of module paths or URLs, got ${formatValue(given)}`);
  return list.map((m, i) => {
    if (typeof m === 'string' && m.length > 0) return resolve(m);
    if (guardRead(`algorithmModules[${i}]`, () => m instanceof URL)) return (m as URL).href;
    throw new InvalidParameterError(`algorithmModules[${i}] must be a module path or URL, got ${formatValue(m)}`);
  });
}

/** Runs one task on lane `l`; rejects when the lane's worker has failed. */
export type RunOnLane = (l: number, task: LaneTask) => Promise<LaneResult>;

/** The client specs of a lane transport, read once into plain objects (what crosses to a thread must be cloneable). */
export function readSpecs(given: unknown): ClientSpec[] {
  const specs = isArray('specs', given) ? readArray('specs', given) : [];
  if (specs.length === 0) throw new InvalidParameterError('a worker transport needs at least one client spec');
  return specs.map((s, i) => {
    if (s === null || typeof s !== 'object') throw new InvalidParameterError(`specs[${i}] must be { algorithm, id, data, validation?, labels?, options? }, got ${formatValue(s)}`);
    // every key makeClient reads: labels and validation rows cross as they are
    const spec = readOptions(s as ClientSpec, ['algorithm', 'id', 'data', 'validation', 'labels', 'options'], `specs[${i}]`) as ClientSpec;
    if (typeof spec.id !== 'string') throw new InvalidParameterError(`specs[${i}].id must be a string, got ${formatValue(spec.id)}`);
    return spec;
  });
}

export class LaneTransport implements Transport {
  readonly name: string;
  /** clients that could not be created in their worker, and why (they never joined) */
  readonly unborn: ExcludedClient[];

  protected constructor(
    name: string,
    private readonly lanes: number,
    private readonly run: RunOnLane,
    private readonly laneOf: ReadonlyMap<string, number>,
    private readonly ids: readonly string[],
    unborn: ExcludedClient[],
    private readonly encoding: Encoding,
  ) {
    this.name = name;
    this.unborn = unborn;
  }

  /** Deals `specs` to `lanes` lanes and creates each client in its lane; what a LaneTransport is built from. */
  protected static async deal(
    specs: readonly ClientSpec[],
    lanes: number,
    run: RunOnLane,
    options: LaneOptions,
    modules: string[] = [],
  ): Promise<{ laneOf: Map<string, number>; born: string[]; unborn: ExcludedClient[]; encoding: Encoding }> {
    if (!Array.isArray(specs) || specs.length === 0) throw new InvalidParameterError('a worker transport needs at least one client spec');
    const ids = specs.map((s) => s.id);
    if (new Set(ids).size !== ids.length) throw new InvalidParameterError('client ids must be distinct');
    const encoding = options.encoding ?? 'binary';
    if (encoding !== 'binary' && encoding !== 'json') throw new InvalidParameterError(`encoding must be 'binary' or 'json', got ${JSON.stringify(encoding)}`);
    const laneOf = new Map(ids.map((id, i) => [id, i % lanes]));
    const build = runningBuild();
    const budgets = readBudgets(options.budgets, ids);
    const results = await Promise.all(
      Array.from({ length: lanes }, (_, l) => {
        const mine = specs.filter((_, i) => i % lanes === l);
        const theirs = budgets && Object.fromEntries(mine.filter((s) => budgets[s.id] !== undefined).map((s) => [s.id, budgets[s.id]!]));
        return run(l, { op: 'create', specs: mine, maxMessageBytes: options.maxMessageBytes, build, ...(modules.length ? { modules } : {}), ...(theirs ? { budgets: theirs } : {}) });
      }),
    );
    const unborn: ExcludedClient[] = [];
    for (const r of results) {
      if (!r.ok) throw new InvalidParameterError(`a worker could not start: ${r.error.message}`);
      for (const c of r.replies ?? []) if (c.error) unborn.push({ client: c.id, round: 0, reason: `${c.id}: creating the client failed: ${c.error.message}` });
    }
    return { laneOf, born: ids.filter((id) => !unborn.some((u) => u.client === id)), unborn, encoding };
  }

  available(): Promise<readonly string[]> {
    return Promise.resolve([...this.ids]);
  }

  async exchange(_round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    const out: Exchange = { sent: new Map(), received: new Map(), missing: new Map() };
    // a message for many clients is encoded once
    const encoded = new Map<Message, Uint8Array>();
    const byLane = Array.from({ length: this.lanes }, () => [] as { id: string; bytes: Uint8Array }[]);
    for (const [id, m] of messages) {
      let bytes = encoded.get(m);
      if (!bytes) encoded.set(m, (bytes = encodeMessage(m, this.encoding)));
      out.sent.set(id, bytes.length);
      const lane = this.laneOf.get(id);
      if (lane === undefined || !this.ids.includes(id)) out.missing.set(id, { kind: 'dropout', reason: `${id} is not among the clients` });
      else byLane[lane]!.push({ id, bytes });
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      if (options.timeoutMs !== undefined) timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
    });
    await Promise.all(
      byLane.map(async (items, l) => {
        if (items.length === 0) return;
        const task = this.run(l, { op: 'handle', items }).then(
          (r) => r,
          (e: unknown): LaneResult => ({ ok: false, error: { message: e instanceof Error ? e.message : String(e) } }),
        );
        const r = await (options.timeoutMs === undefined ? task : Promise.race([task, deadline]));
        if (r === 'timeout') {
          for (const { id } of items) out.missing.set(id, { kind: 'timeout', reason: `did not answer within ${options.timeoutMs} ms` });
          return;
        }
        if (!r.ok) {
          for (const { id } of items) out.missing.set(id, { kind: 'dropout', reason: `its worker failed: ${r.error.message}` });
          return;
        }
        for (const reply of r.replies ?? []) {
          if (reply.error) out.missing.set(reply.id, { kind: 'dropout', reason: `its worker failed: ${reply.error.message}` });
          else if (options.replies && reply.bytes) out.received.set(reply.id, [reply.bytes]);
        }
      }),
    );
    clearTimeout(timer);
    return out;
  }

  /** Frees the clients in every lane (the subclass then stops the workers). */
  protected async disposeLanes(): Promise<void> {
    await Promise.all(Array.from({ length: this.lanes }, (_, l) => this.run(l, { op: 'dispose' }).catch(() => undefined)));
  }
}
