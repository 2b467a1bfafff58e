/**
 * Clients in worker threads (Node), so that simulated clients' local work runs
 * on every core. Clients are stateful (rows resident in WASM memory, models
 * carried from round to round), so each stays in one thread for the whole
 * run: the clients are dealt round-robin to lanes, each lane a piscina pool of
 * exactly one thread, which queues the lane's tasks and restarts nothing
 * behind the transport's back (a thread that dies is a dropout of its
 * clients). Messages cross as wire bytes, in the encoding chosen here; the
 * client side is the same ClientHost as everywhere (lane.ts).
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { InvalidParameterError } from '../../errors.js';
import { requireInteger } from '../../validate.js';
import type { ClientSpec } from '../algorithms.js';
import { encodeMessage, type Encoding } from '../messages/codec.js';
import type { Message } from '../messages/envelope.js';
import type { ExcludedClient } from '../runtime/roles.js';
import type { LaneResult, LaneTask } from './lane.js';
import type { Exchange, ExchangeOptions, Transport } from './transport.js';

export interface WorkerTransportOptions {
  /** worker threads (default: the machine's available parallelism, at most the number of clients) */
  threads?: number;
  /** the wire form between the threads (default 'binary') */
  encoding?: Encoding;
  /** per message, checked before decoding (default 64 MiB) */
  maxMessageBytes?: number;
  /** the worker module (default: worker.js next to this bundle) */
  workerFile?: string | URL;
}

export class WorkerTransport implements Transport {
  readonly name = 'workers';
  /** clients that could not be created in their worker, and why (they never joined) */
  readonly unborn: ExcludedClient[];

  private constructor(
    private readonly lanes: Piscina<LaneTask, LaneResult>[],
    private readonly laneOf: Map<string, number>,
    private readonly ids: string[],
    unborn: ExcludedClient[],
    private readonly encoding: Encoding,
  ) {
    this.unborn = unborn;
  }

  /** Starts the threads and creates each client in its lane. */
  static async start(specs: readonly ClientSpec[], options: WorkerTransportOptions = {}): Promise<WorkerTransport> {
    if (!Array.isArray(specs) || specs.length === 0) throw new InvalidParameterError('a worker transport needs at least one client spec');
    const ids = specs.map((s) => s.id);
    if (new Set(ids).size !== ids.length) throw new InvalidParameterError('client ids must be distinct');
    const threads = Math.min(requireInteger('threads', options.threads ?? availableParallelism(), 1), specs.length);
    const encoding = options.encoding ?? 'binary';
    if (encoding !== 'binary' && encoding !== 'json') throw new InvalidParameterError(`encoding must be 'binary' or 'json', got ${JSON.stringify(encoding)}`);
    const file = options.workerFile ?? new URL('./worker.js', import.meta.url);
    const filename = file instanceof URL ? file.href : file;
    const lanes = Array.from({ length: threads }, () => new Piscina<LaneTask, LaneResult>({ filename, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, concurrentTasksPerWorker: 1 }));
    const laneOf = new Map(ids.map((id, i) => [id, i % threads]));
    try {
      const results = await Promise.all(
        lanes.map((lane, l) => lane.run({ op: 'create', specs: specs.filter((_, i) => i % threads === l), maxMessageBytes: options.maxMessageBytes })),
      );
      const unborn: ExcludedClient[] = [];
      for (const r of results) {
        if (!r.ok) throw new InvalidParameterError(`a worker could not start: ${r.error.message}`);
        for (const c of r.replies ?? []) if (c.error) unborn.push({ client: c.id, round: 0, reason: `${c.id}: creating the client failed: ${c.error.message}` });
      }
      const born = ids.filter((id) => !unborn.some((u) => u.client === id));
      return new WorkerTransport(lanes, laneOf, born, unborn, encoding);
    } catch (e) {
      await Promise.all(lanes.map((l) => l.destroy()));
      throw e;
    }
  }

  available(): Promise<readonly string[]> {
    return Promise.resolve([...this.ids]);
  }

  async exchange(_round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    const out: Exchange = { sent: new Map(), received: new Map(), missing: new Map() };
    // a message for many clients is encoded once
    const encoded = new Map<Message, Uint8Array>();
    const byLane = this.lanes.map(() => [] as { id: string; bytes: Uint8Array }[]);
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
        const task = this.lanes[l]!.run({ op: 'handle', items }).then(
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

  /** Frees the clients and stops the threads. */
  async close(): Promise<void> {
    await Promise.all(this.lanes.map((l) => l.run({ op: 'dispose' }).catch(() => undefined)));
    await Promise.all(this.lanes.map((l) => l.destroy()));
  }
}
