/**
 * What a fitting thread does (shard-worker.ts in Node, web-shard-worker.ts in
 * browsers): it loads the build the calling thread runs, keeps one shard of
 * rows in its own WASM memory, and answers each model it is sent with that
 * shard's E-step statistics. Errors come back as values with their code.
 */
import { FedmixError, WasmError } from '../errors.js';
import { init, type Backend } from '../wasm/loader.js';
import type { ModuleName } from '../wasm/source.js';
import { allocate, withScope } from '../wasm/memory.js';
import { wasm } from '../wasm/loader.js';
import { modelHandle, shardStats, type ShardModel, type ShardStats } from './gmm-shard.js';

/** The calling thread's build, compiled (runningBuild): the worker runs the same bytes. */
export interface ShardBuild {
  backend: Backend;
  modules: { [M in ModuleName]?: WebAssembly.Module };
}

export type ShardTask =
  | { op: 'load'; build: ShardBuild | undefined; rows: Float64Array; n: number; d: number }
  | { op: 'gmmStats'; model: ShardModel };

/** A task's answer: the statistics, or the error with its class's name (none for a bug). */
export type ShardReply = { ok: true; stats?: ShardStats } | { ok: false; name?: string; message: string };

/** The shard this thread holds in WASM memory. */
let shard: { ptr: number; n: number; d: number } | undefined;

async function run(task: ShardTask): Promise<ShardStats | undefined> {
  if (task.op === 'load') {
    // the core and the 'dem' module (the sharded E-step's exports live there, out of the core every program loads)
    await init(task.build ? { backend: task.build.backend, features: ['dem'], wasm: { [task.build.backend]: { core: task.build.modules.core, dem: task.build.modules.dem } } } : { features: ['dem'] });
    const { rows, n, d } = task;
    const ptr = allocate(wasm(), 8 * Math.max(rows.length, 1));
    new Float64Array(wasm().memory.buffer, ptr, rows.length).set(rows);
    shard = { ptr, n, d };
    return undefined;
  }
  const held = shard;
  if (!held) throw new WasmError('a fitting thread was sent a model before its rows');
  return withScope((s) => {
    const h = modelHandle(s, task.model);
    try {
      return shardStats(s, h, task.model.covType, task.model.k, held.ptr, held.n, held.d);
    } finally {
      s.w.fm_gmm_free(h);
    }
  });
}

/** Runs one task. Never throws: an error comes back with its code (a bug, with none). */
export async function runShardTask(task: ShardTask): Promise<ShardReply> {
  try {
    const stats = await run(task);
    return stats ? { ok: true, stats } : { ok: true };
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

/** The arrays a reply moves to the calling thread instead of copying. */
export function replyTransferables(r: ShardReply): ArrayBuffer[] {
  return r.ok && r.stats ? [r.stats.nk.buffer, r.stats.s1.buffer, r.stats.s2.buffer] as ArrayBuffer[] : [];
}
