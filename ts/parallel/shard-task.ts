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

/** The calling thread's build, compiled (runningBuild): the worker runs the same bytes. */
export interface ShardBuild {
  backend: Backend;
  modules: { [M in ModuleName]?: WebAssembly.Module };
}

export type ShardTask =
  | { op: 'load'; build: ShardBuild | undefined; rows: Float64Array; n: number; d: number }
  | { op: 'gmmStats'; model: ShardModel }
  | { op: 'kmeansStep'; centers: Float64Array; k: number; fresh: boolean; labels: boolean }
  | { op: 'kmeansFarthest'; m: number };

/** What each task answers. */
export interface ShardAnswers {
  load: undefined;
  gmmStats: ShardStats;
  kmeansStep: KMeansShardStats;
  kmeansFarthest: FarRow[];
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
    case 'gmmStats': {
      const { ptr, n, d } = held();
      return withScope((s) => {
        const h = modelHandle(s, task.model);
        try {
          return shardStats(s, h, task.model.covType, task.model.k, ptr, n, d);
        } finally {
          s.w.fm_gmm_free(h);
        }
      });
    }
    case 'kmeansStep': {
      const h = held();
      // the labels and distances live as long as the rows
      h.kmeans ??= new KMeansShard(h.ptr, h.n, h.d, allocateHeld(4 * Math.max(h.n, 1)), allocateHeld(8 * Math.max(h.n, 1)));
      return h.kmeans.step(task.centers, task.k, task.fresh, task.labels);
    }
    case 'kmeansFarthest': {
      const k = held().kmeans;
      if (!k) throw new WasmError('a fitting thread was asked for its farthest rows before a k-means step');
      return k.farthest(task.m);
    }
  }
}

/** Runs one task. Never throws: an error comes back with its code (a bug, with none). */
export async function runShardTask(task: ShardTask): Promise<ShardReply> {
  try {
    const value = await run(task);
    return value === undefined ? { ok: true } : { ok: true, value };
  } catch (e) {
    return e instanceof FedmixError ? { ok: false, name: e.name, message: e.message } : { ok: false, message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs tasks one after another, in the order they arrive (a model is answered after the rows are loaded). */
export function runInOrder(task: ShardTask): Promise<ShardReply> {
  const r = queue.then(() => runShardTask(task));
  queue = r;
  return r;
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
