/**
 * What a fitting thread does (shard-worker.ts in Node, web-shard-worker.ts in
 * browsers): it loads the build the calling thread runs, keeps one shard of
 * rows in its own WASM memory, and answers each task with that shard's part
 * of a fit: an EM iteration's E-step statistics (GaussianMixture), a Lloyd
 * iteration's counts and sums or its farthest rows (KMeans). Errors come back
 * as values with their code.
 */
import { FedmixError, WasmError } from '../errors.js';
import { init, type Backend } from '../wasm/loader.js';
import type { ModuleName } from '../wasm/source.js';
import { allocate, withScope } from '../wasm/memory.js';
import { wasm } from '../wasm/loader.js';
import { modelHandle, shardStats, type ShardModel, type ShardStats } from './gmm-shard.js';
import { KMeansShard, type FarRow, type KMeansShardStats } from './kmeans-shard.js';
import {
  Channel, DONE, OP_GMM_STATS, OP_KMEANS_STEP, OP_LEAVE, SEQ,
  readGmmStats, readKMeansStep, writeGmmAnswer, writeKMeansAnswer,
} from './shared-channel.js';

/** The calling thread's build, compiled (runningBuild): the worker runs the same bytes. */
export interface ShardBuild {
  backend: Backend;
  modules: { [M in ModuleName]?: WebAssembly.Module };
}

export type ShardTask =
  | { op: 'load'; build: ShardBuild | undefined; rows: Float64Array; n: number; d: number }
  | { op: 'gmmStats'; model: ShardModel }
  | { op: 'kmeansStep'; centers: Float64Array; k: number; fresh: boolean; labels: boolean }
  | { op: 'kmeansFarthest'; m: number }
  /** from now on take tasks from this buffer (shared-channel.ts) until told to leave, the last task posted there being `seen` */
  | { op: 'share'; buffer: SharedArrayBuffer; seen: number };

/** What each task answers. */
export interface ShardAnswers {
  load: undefined;
  gmmStats: ShardStats;
  kmeansStep: KMeansShardStats;
  kmeansFarthest: FarRow[];
  share: undefined;
}

/** A task's answer: its value, or the error with its class's name (none for a bug). */
export type ShardReply = { ok: true; value?: ShardAnswers[keyof ShardAnswers] } | { ok: false; name?: string; message: string };

/** The shard this thread holds in WASM memory (and, once a k-means step asked, its labels and distances), with what to free when rows replace it. */
let shard: { ptr: number; n: number; d: number; kmeans?: KMeansShard; allocations: Array<[number, number]> } | undefined;
let ready = false;

function allocateHeld(bytes: number): number {
  const ptr = allocate(wasm(), bytes);
  held().allocations.push([ptr, bytes]);
  return ptr;
}

function held(): NonNullable<typeof shard> {
  if (!shard) throw new WasmError('a fitting thread was sent a task before its rows');
  return shard;
}

async function run(task: ShardTask): Promise<ShardAnswers[keyof ShardAnswers]> {
  switch (task.op) {
    case 'load': {
      // the core and the 'dem' module (the shards' exports live there, out of the core every program loads)
      if (!ready) await init(task.build ? { backend: task.build.backend, features: ['dem'], wasm: { [task.build.backend]: { core: task.build.modules.core, dem: task.build.modules.dem } } } : { features: ['dem'] });
      ready = true;
      // new rows replace the ones held (the threads of a session fit several datasets)
      for (const [ptr, bytes] of shard?.allocations ?? []) wasm().fm_free(ptr, bytes);
      shard = undefined;
      const { rows, n, d } = task;
      const bytes = 8 * Math.max(rows.length, 1);
      const ptr = allocate(wasm(), bytes);
      new Float64Array(wasm().memory.buffer, ptr, rows.length).set(rows);
      shard = { ptr, n, d, allocations: [[ptr, bytes]] };
      return undefined;
    }
    case 'gmmStats':
      return gmmStats(task.model);
    case 'kmeansStep':
      return kmeansStep(task.centers, task.k, task.fresh, task.labels);
    case 'kmeansFarthest': {
      const k = held().kmeans;
      if (!k) throw new WasmError('a fitting thread was asked for its farthest rows before a k-means step');
      return k.farthest(task.m);
    }
    case 'share':
      // checked here, so that a bad buffer fails as a reply; the worker then serves it (serveShared)
      held();
      // SharedArrayBuffer is not even named in a browser page that is not cross-origin isolated
      if (typeof SharedArrayBuffer === 'undefined' || !(task.buffer instanceof SharedArrayBuffer)) throw new WasmError('a fitting thread was sent no shared buffer');
      return undefined;
  }
}

/** The shard's E-step under `model` (the model copied into WASM memory for the step). */
function gmmStats(model: ShardModel): ShardStats {
  const { ptr, n, d } = held();
  return withScope((s) => {
    const h = modelHandle(s, model);
    try {
      return shardStats(s, h, model.covType, model.k, ptr, n, d);
    } finally {
      s.w.fm_gmm_free(h);
    }
  });
}

/** The shard's k-means step under the k centers. */
function kmeansStep(centers: Float64Array, k: number, fresh: boolean, labels: boolean): KMeansShardStats {
  const h = held();
  // the labels and distances live as long as the rows
  h.kmeans ??= new KMeansShard(h.ptr, h.n, h.d, allocateHeld(4 * Math.max(h.n, 1)), allocateHeld(8 * Math.max(h.n, 1)));
  return h.kmeans.step(centers, k, fresh, labels);
}

/** An error as a reply carries it: its class's name (none for a bug) and message. */
function failureOf(e: unknown): { name?: string; message: string } {
  return e instanceof FedmixError ? { name: e.name, message: e.message } : { message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}

/**
 * Serves the tasks posted to `buffer` (shared-channel.ts) until one says
 * leave, blocking this thread in Atomics.wait between them: its event loop
 * (and any message sent meanwhile) waits until then. A task's failure is
 * written back as its answer; the thread goes on serving.
 */
export function serveShared(buffer: SharedArrayBuffer, seen: number): void {
  const c = new Channel(buffer);
  for (;;) {
    Atomics.wait(c.ctl, SEQ, seen);
    const seq = Atomics.load(c.ctl, SEQ);
    if (seq === seen) continue;
    seen = seq;
    const op = c.op;
    if (op !== OP_LEAVE) {
      try {
        if (op === OP_KMEANS_STEP) {
          const t = readKMeansStep(c, held().d);
          writeKMeansAnswer(c, kmeansStep(t.centers, t.k, t.fresh, t.labels), t.k, held().d);
        } else if (op === OP_GMM_STATS) {
          writeGmmAnswer(c, gmmStats(readGmmStats(c)));
        } else {
          throw new WasmError(`a fitting thread was posted the unknown task ${op}`);
        }
        c.setAnswered();
      } catch (e) {
        const f = failureOf(e);
        c.setFailure(f.name, f.message);
      }
    }
    Atomics.store(c.ctl, DONE, seq);
    Atomics.notify(c.ctl, DONE);
    if (op === OP_LEAVE) return;
  }
}

/** Runs one task. Never throws: an error comes back with its code (a bug, with none). */
export async function runShardTask(task: ShardTask): Promise<ShardReply> {
  try {
    const value = await run(task);
    return value === undefined ? { ok: true } : { ok: true, value };
  } catch (e) {
    return { ok: false, ...failureOf(e) };
  }
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs tasks one after another, in the order they arrive (a model is answered after the rows are loaded). */
export function runInOrder(task: ShardTask): Promise<ShardReply> {
  const r = queue.then(() => runShardTask(task));
  queue = r;
  return r;
}

/**
 * A worker's handling of one message (shard-worker.ts, web-shard-worker.ts):
 * the task run in order and its reply posted; after a 'share' task's reply,
 * the thread serves the shared buffer until told to leave.
 */
export function onTask(task: ShardTask, post: (r: ShardReply, transfer: ArrayBuffer[]) => void): void {
  void runInOrder(task).then((r) => {
    post(r, replyTransferables(r));
    if (task.op === 'share' && r.ok) serveShared(task.buffer, task.seen);
  });
}

/** The arrays a reply moves to the calling thread instead of copying (each answer's typed arrays, one level into lists). */
export function replyTransferables(r: ShardReply): ArrayBuffer[] {
  if (!r.ok || r.value === undefined) return [];
  const out = new Set<ArrayBuffer>();
  const take = (o: object) => {
    for (const x of Object.values(o)) if (ArrayBuffer.isView(x)) out.add(x.buffer as ArrayBuffer);
  };
  if (Array.isArray(r.value)) r.value.forEach(take);
  else take(r.value);
  return [...out];
}
