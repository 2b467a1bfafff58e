/**
 * The fitting threads of one data-parallel fit: worker_threads in Node, module
 * Web Workers in browsers, each running the calling thread's build in a WASM
 * instance of its own with a copy of its shard (so they need no
 * SharedArrayBuffer, and no cross-origin isolation in browsers). A fit starts
 * them, sends each its rows once, then a task per iteration (an EM model, a
 * k-means step), and stops them when it ends, however it ends: no thread
 * outlives the fit.
 */
import { FedmixError, InvalidDataError, InvalidParameterError, NumericalError, WasmAllocationError, WasmError } from '../errors.js';
import { runningBuild } from '../wasm/loader.js';
import type { ShardModel, ShardStats } from './gmm-shard.js';
import type { FarRow, KMeansShardStats } from './kmeans-shard.js';
import type { ShardAnswers, ShardReply, ShardTask } from './shard-task.js';
import { MAX_THREADS, shardRows } from './threads.js';

/** Defined (true) only in fedmix/browser's build (tsup.config.ts), which must name no Node built-in. */
declare const __FEDMIX_BROWSER__: boolean | undefined;

/** What the pool needs of a thread, whichever kind it is. */
interface Endpoint {
  post(task: ShardTask): void;
  /** replies in order; `fail` when the thread dies or cannot start */
  listen(reply: (r: ShardReply) => void, fail: (message: string) => void): void;
  /** resolves once the thread is gone */
  stop(): Promise<void>;
}

/** The errors a thread sends back, by their class's name (the others are bugs: a WasmError naming them). */
const ERRORS: Record<string, new (message: string) => FedmixError> = {
  InvalidDataError,
  InvalidParameterError,
  NumericalError,
  WasmAllocationError,
  WasmError,
};

/** The Node worker's file, beside this module in dist/ (a variable, so that browser bundlers do not emit it). */
const NODE_WORKER_FILE = './shard-worker.js';

function isNode(): boolean {
  return typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node === 'string';
}

async function nodeEndpoint(): Promise<Endpoint> {
  // fedmix/browser's build names no Node built-in: there this is never reached, and the rest is left out
  if (typeof __FEDMIX_BROWSER__ !== 'undefined') throw new WasmError('fedmix/browser starts Web Workers, not Node worker threads');
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const id = 'node:worker_threads';
  type NodeWorker = { postMessage(m: unknown): void; on(e: string, f: (x: never) => void): void; terminate(): Promise<number> };
  const wt = (typeof proc?.getBuiltinModule === 'function' ? proc.getBuiltinModule(id) : await import(/* webpackIgnore: true */ /* @vite-ignore */ id)) as {
    Worker: new (url: URL) => NodeWorker;
  };
  const w = new wt.Worker(new URL(NODE_WORKER_FILE, import.meta.url));
  let stopped = false;
  return {
    post: (task) => w.postMessage(task),
    listen(reply, fail) {
      w.on('message', reply as (x: never) => void);
      w.on('error', ((e: Error) => fail(e.message)) as (x: never) => void);
      w.on('exit', ((code: number) => stopped || fail(`it exited with code ${code}`)) as (x: never) => void);
    },
    async stop() {
      stopped = true;
      await w.terminate();
    },
  };
}

function webEndpoint(): Endpoint {
  const W = (globalThis as { Worker?: unknown }).Worker;
  if (typeof W !== 'function') throw new InvalidParameterError("threads > 1 needs worker threads (Node) or Web Workers, and this runtime has neither; use threads: 1");
  type WebWorker = { postMessage(m: unknown): void; terminate(): void; onmessage: ((e: { data: unknown }) => void) | null; onerror: ((e: { message?: string; preventDefault?(): void }) => void) | null };
  // written out so that bundlers see the worker and emit it (Vite: new Worker(new URL(...), { type: 'module' }))
  const w: WebWorker = new Worker(new URL('./web-shard-worker.js', import.meta.url), { type: 'module' }) as unknown as WebWorker;
  return {
    post: (task) => w.postMessage(task),
    listen(reply, fail) {
      w.onmessage = (e) => reply(e.data as ShardReply);
      w.onerror = (e) => {
        e.preventDefault?.();
        fail(e.message ?? 'it failed to load or threw');
      };
    },
    stop: () => Promise.resolve(w.terminate()),
  };
}

/** One thread and the answers it owes, in the order the tasks were sent. */
class ShardThread {
  private readonly waiting: Array<{ resolve: (r: ShardReply) => void; reject: (e: Error) => void }> = [];
  private failed: Error | undefined;

  constructor(private readonly endpoint: Endpoint) {
    endpoint.listen(
      (r) => this.waiting.shift()?.resolve(r),
      (message) => {
        this.failed ??= new WasmError(`a fitting thread failed: ${message}`);
        for (const p of this.waiting.splice(0)) p.reject(this.failed);
      },
    );
  }

  async run<T extends ShardTask>(task: T): Promise<ShardAnswers[T['op']]> {
    if (this.failed) throw this.failed;
    const reply = await new Promise<ShardReply>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.endpoint.post(task);
    });
    if (!reply.ok) {
      const C = reply.name === undefined ? undefined : ERRORS[reply.name];
      throw C ? new C(reply.message) : new WasmError(`a fitting thread failed: ${reply.message}`);
    }
    return reply.value as ShardAnswers[T['op']];
  }

  stop(): Promise<void> {
    this.failed ??= new WasmError('the fitting thread was stopped');
    for (const p of this.waiting.splice(0)) p.reject(this.failed);
    return this.endpoint.stop();
  }
}

/** The threads of one fit, each holding one shard of rows. */
export class ShardPool {
  private constructor(private readonly threads: ShardThread[]) {}

  /**
   * Starts one thread per shard (column-major rows of d features) and loads
   * each; on any failure the threads started are stopped before it throws.
   */
  static async start(shards: readonly { rows: Float64Array; n: number }[], d: number): Promise<ShardPool> {
    const threads: ShardThread[] = [];
    try {
      for (let i = 0; i < shards.length; i++) {
        threads.push(new ShardThread(typeof __FEDMIX_BROWSER__ === 'undefined' && isNode() ? await nodeEndpoint() : webEndpoint()));
      }
      const pool = new ShardPool(threads);
      await pool.load(shards, d);
      return pool;
    } catch (e) {
      await Promise.all(threads.map((t) => t.stop()));
      throw e;
    }
  }

  /** The threads' count. */
  get size(): number {
    return this.threads.length;
  }

  /** Sends each thread its shard (one per thread), in place of the rows it held: the threads are started once for fits of several datasets. */
  async load(shards: readonly { rows: Float64Array; n: number }[], d: number): Promise<void> {
    const build = runningBuild();
    await Promise.all(this.threads.map((t, i) => t.run({ op: 'load', build, rows: shards[i]!.rows, n: shards[i]!.n, d })));
  }

  /** Each shard but the first of a column-major n x d matrix, cut at `bounds` (shardBounds): what the threads hold. */
  static theirShards(data: Float64Array, n: number, d: number, bounds: readonly number[]): { rows: Float64Array; n: number }[] {
    return bounds.slice(1, -1).map((b, i) => ({ rows: shardRows(data, n, d, b, bounds[i + 2]!), n: bounds[i + 2]! - b }));
  }

  /** Every thread's answer to `task`, in shard order. */
  private all<T extends ShardTask>(task: T): Promise<ShardAnswers[T['op']][]> {
    return Promise.all(this.threads.map((t) => t.run(task)));
  }

  /** Every thread's E-step under `model`, in shard order. */
  gmmStats(model: ShardModel): Promise<ShardStats[]> {
    return this.all({ op: 'gmmStats', model });
  }

  /** Every thread's k-means step under the k centers, in shard order (see KMeansShard.step). */
  kmeansStep(centers: Float64Array, k: number, fresh: boolean, labels: boolean): Promise<KMeansShardStats[]> {
    return this.all({ op: 'kmeansStep', centers, k, fresh, labels });
  }

  /** Every thread's m rows farthest from their centers at its last step, in shard order (indices within each shard). */
  kmeansFarthest(m: number): Promise<FarRow[][]> {
    return this.all({ op: 'kmeansFarthest', m });
  }

  /** Stops every thread; resolves once they are gone. */
  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.stop()));
  }
}

/** The cores the runtime reports (1 when it reports none): what threads 'auto' takes. Here, with the other Node-only code, loaded only when a fit asks for threads. */
export function availableCores(): number {
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator;
  if (typeof nav?.hardwareConcurrency === 'number' && nav.hardwareConcurrency >= 1) return Math.floor(nav.hardwareConcurrency);
  // fedmix/browser's build names no Node built-in (navigator answered above in browsers)
  if (typeof __FEDMIX_BROWSER__ !== 'undefined') return 1;
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const os = typeof proc?.getBuiltinModule === 'function' ? (proc.getBuiltinModule('node:os') as { availableParallelism?: () => number } | undefined) : undefined;
  const n = os?.availableParallelism?.();
  return typeof n === 'number' && n >= 1 ? Math.min(n, MAX_THREADS) : 1;
}
