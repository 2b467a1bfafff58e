/**
 * The fitting threads of one data-parallel fit: worker_threads in Node, module
 * Web Workers in browsers, each running the calling thread's build in a WASM
 * instance of its own with a copy of its shard (the rows are sent once, as a
 * message). A fit starts them, sends each its rows, then a task per iteration
 * (an EM model, a k-means step), and stops them when it ends, however it ends:
 * no thread outlives the fit. The per-iteration tasks go through a
 * SharedArrayBuffer with Atomics where the runtime offers it (Node; browsers
 * in a cross-origin isolated page): shared-channel.ts. Elsewhere they are
 * messages, and the bits are the same.
 */
import { FedmixError, InvalidDataError, InvalidParameterError, NumericalError, WasmAllocationError, WasmError } from '../errors.js';
import { runningBuild } from '../wasm/loader.js';
import type { ShardModel, ShardStats } from './gmm-shard.js';
import type { FarRow, KMeansShardStats } from './kmeans-shard.js';
import type { ShardAnswers, ShardReply, ShardTask } from './shard-task.js';
import {
  Channel, DONE, OP_LEAVE, SEQ, gmmStatsRoom, kmeansStepRoom, readGmmAnswer, readKMeansAnswer, sharedExchangeAvailable, writeGmmStats, writeKMeansStep,
} from './shared-channel.js';
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
  /** the thread itself (tests end one to see a fit fail cleanly) */
  worker?: unknown;
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
    worker: w,
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

/** A failed task's error: its class by name (the others are bugs: a WasmError naming them). */
function replyError(name: string | undefined, message: string): Error {
  const C = name === undefined ? undefined : ERRORS[name];
  return C ? new C(message) : new WasmError(`a fitting thread failed: ${message}`);
}

/** One thread and the answers it owes, in the order the tasks were sent; and its shared channel, while it serves one. */
class ShardThread {
  private readonly waiting: Array<{ resolve: (r: ShardReply) => void; reject: (e: Error) => void }> = [];
  private failed: Error | undefined;
  private channel: Channel | undefined;
  /** whether the thread serves `channel` (from the 'share' task sent until OP_LEAVE) */
  private sharing = false;
  private shareFailed: Error | undefined;

  constructor(private readonly endpoint: Endpoint) {
    endpoint.listen(
      (r) => this.waiting.shift()?.resolve(r),
      (message) => this.fail(new WasmError(`a fitting thread failed: ${message}`)),
    );
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const p of this.waiting.splice(0)) p.reject(this.failed);
    this.wake();
  }

  /** Wakes this thread's own wait for a shared answer, to see a failure. */
  private wake(): void {
    if (this.channel) Atomics.notify(this.channel.ctl, DONE);
  }

  async run<T extends ShardTask>(task: T): Promise<ShardAnswers[T['op']]> {
    if (this.failed) throw this.failed;
    // a message waits in the thread's event loop until it leaves the shared channel
    this.leaveShared();
    const reply = await new Promise<ShardReply>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.endpoint.post(task);
    });
    if (!reply.ok) throw replyError(reply.name, reply.message);
    return reply.value as ShardAnswers[T['op']];
  }

  private leaveShared(): void {
    if (!this.sharing) return;
    this.sharing = false;
    const c = this.channel!;
    c.setTask(OP_LEAVE, []);
    Atomics.store(c.ctl, SEQ, Atomics.load(c.ctl, SEQ) + 1);
    Atomics.notify(c.ctl, SEQ);
  }

  /**
   * A task through the shared channel, which has room for `room` values
   * (made, or made larger, on the way): `write` puts the inputs there, `read`
   * takes the answer out. Posted before it returns its promise, so that the
   * calling thread computes its own shard meanwhile.
   */
  async runShared<T>(room: number, write: (c: Channel) => void, read: (c: Channel) => T): Promise<T> {
    if (this.failed) throw this.failed;
    if (!this.channel || this.channel.values.length < room) {
      this.leaveShared();
      this.channel = Channel.withRoom(Math.max(room, 2 * (this.channel?.values.length ?? 0)));
    }
    const c = this.channel;
    if (!this.sharing) {
      // not awaited: the thread takes the task below as soon as it serves the channel
      const shared = this.run({ op: 'share', buffer: c.buffer, seen: Atomics.load(c.ctl, SEQ) });
      this.sharing = true;
      this.shareFailed = undefined;
      shared.catch((e: Error) => {
        this.sharing = false;
        this.shareFailed = e;
        this.wake();
      });
    }
    write(c);
    const seq = Atomics.load(c.ctl, SEQ) + 1;
    Atomics.store(c.ctl, SEQ, seq);
    Atomics.notify(c.ctl, SEQ);
    while (Atomics.load(c.ctl, DONE) !== seq) {
      if (this.failed) throw this.failed;
      if (this.shareFailed) throw this.shareFailed;
      // Atomics.waitAsync: the event loop runs meanwhile, so that the thread's death is heard (fail wakes this wait)
      const w = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number): { async: boolean; value: Promise<string> | string } }).waitAsync(c.ctl, DONE, Atomics.load(c.ctl, DONE));
      if (w.async) await w.value;
    }
    const failure = c.failure();
    if (failure) throw replyError(failure.name, failure.message);
    return read(c);
  }

  stop(): Promise<void> {
    this.fail(new WasmError('the fitting thread was stopped'));
    // a thread waiting in Atomics.wait ends too (Worker.terminate interrupts it)
    this.sharing = false;
    return this.endpoint.stop();
  }
}

/** The threads of one fit, each holding one shard of rows. */
export class ShardPool {
  /** each thread's rows and their features (load) */
  private rows: number[] = [];
  private d = 0;

  private constructor(
    private readonly threads: ShardThread[],
    /** whether the per-iteration tasks go through shared memory (shared-channel.ts) or as messages */
    private readonly shared: boolean,
  ) {}

  /** How the per-iteration tasks travel: 'shared' (SharedArrayBuffer and Atomics) or 'messages'. */
  get exchange(): 'shared' | 'messages' {
    return this.shared ? 'shared' : 'messages';
  }

  /**
   * Starts one thread per shard (column-major rows of d features) and loads
   * each; on any failure the threads started are stopped before it throws.
   */
  static async start(shards: readonly { rows: Float64Array; n: number }[], d: number): Promise<ShardPool> {
    const exchange = exchangeMode;
    const threads: ShardThread[] = [];
    try {
      for (let i = 0; i < shards.length; i++) {
        threads.push(new ShardThread(typeof __FEDMIX_BROWSER__ === 'undefined' && isNode() ? await nodeEndpoint() : webEndpoint()));
      }
      const pool = new ShardPool(threads, exchange === 'auto' && sharedExchangeAvailable());
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
    this.rows = shards.map((s) => s.n);
    this.d = d;
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
    if (!this.shared) return this.all({ op: 'gmmStats', model });
    const room = gmmStatsRoom(model);
    return Promise.all(this.threads.map((t) => t.runShared(room, (c) => writeGmmStats(c, model), readGmmAnswer)));
  }

  /** Every thread's k-means step under the k centers, in shard order (see KMeansShard.step). */
  kmeansStep(centers: Float64Array, k: number, fresh: boolean, labels: boolean): Promise<KMeansShardStats[]> {
    if (!this.shared) return this.all({ op: 'kmeansStep', centers, k, fresh, labels });
    const d = this.d;
    // room for the labels always, so that the last step of a run does not make the channel again
    return Promise.all(
      this.threads.map((t, i) => t.runShared(kmeansStepRoom(k, d, this.rows[i]!, true), (c) => writeKMeansStep(c, centers, k, fresh, labels), (c) => readKMeansAnswer(c, k, d, this.rows[i]!))),
    );
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

let exchangeMode: 'auto' | 'messages' = 'auto';

/**
 * Pools started from now on send every task as a message ('messages'), or use
 * shared memory where the runtime offers it ('auto', the default): tests
 * compare the two.
 * @internal
 */
export function setExchange(mode: 'auto' | 'messages'): void {
  exchangeMode = mode;
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
