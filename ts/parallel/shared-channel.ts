/**
 * The per-iteration exchange of a data-parallel fit through shared memory:
 * one SharedArrayBuffer per fitting thread that holds the task's inputs (a
 * k-means step's centers, an E-step's model) and its answer (the shard's
 * statistics), with Atomics to post a task and to say it is answered. The
 * thread waits for tasks with Atomics.wait and never goes through its event
 * loop, and nothing is cloned: the exchange costs a few copies of k x d
 * numbers and two futex wake-ups instead of two messages. Where shared memory
 * is not offered (browsers without cross-origin isolation, runtimes without
 * Atomics.waitAsync), the pool sends the same tasks as messages; either way
 * the thread runs the same code on the same numbers, so the bits agree.
 *
 * The buffer: HEADER_INTS Int32 words, then ERROR_BYTES for a failed task's
 * error, then Float64 values: the inputs from offset 0, the answer after them.
 */
import type { ShardModel, ShardStats } from './gmm-shard.js';
import { wireS2Length } from './gmm-shard.js';
import type { KMeansShardStats } from './kmeans-shard.js';

/** Int32 words of the header: the last task posted, the last answered, the task's code, its status, and its arguments. */
export const SEQ = 0;
export const DONE = 1;
const OP = 2;
const STATUS = 3;
const ARGS = 4;
const ERROR_LEN = 15;
const HEADER_INTS = 16;
const ERROR_BYTES = 4096;
const VALUES_AT = 4 * HEADER_INTS + ERROR_BYTES;

/** What a task is (the header's OP word). */
export const OP_LEAVE = 1;
export const OP_KMEANS_STEP = 2;
export const OP_GMM_STATS = 3;

/** Whether this runtime offers the shared exchange: SharedArrayBuffer, Atomics.waitAsync for the calling thread, and, in browsers, cross-origin isolation. */
export function sharedExchangeAvailable(): boolean {
  const g = globalThis as { SharedArrayBuffer?: unknown; Atomics?: { waitAsync?: unknown }; crossOriginIsolated?: unknown; process?: { versions?: { node?: unknown } } };
  if (typeof g.SharedArrayBuffer !== 'function' || typeof g.Atomics?.waitAsync !== 'function') return false;
  // Node shares memory between worker_threads unconditionally; browsers only in a cross-origin isolated page
  return typeof g.process?.versions?.node === 'string' || g.crossOriginIsolated === true;
}

/** The views of one channel's buffer. */
export class Channel {
  readonly ctl: Int32Array;
  readonly values: Float64Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.ctl = new Int32Array(buffer, 0, HEADER_INTS);
    this.values = new Float64Array(buffer, VALUES_AT, (buffer.byteLength - VALUES_AT) / 8);
  }

  /** A new channel with room for `values` Float64 values. */
  static withRoom(values: number): Channel {
    return new Channel(new SharedArrayBuffer(VALUES_AT + 8 * values));
  }

  get op(): number {
    return this.ctl[OP]!;
  }

  /** The i-th argument word of the task. */
  arg(i: number): number {
    return this.ctl[ARGS + i]!;
  }

  /** Writes the task's code and arguments (the inputs are written to `values` by the caller). */
  setTask(op: number, args: readonly number[]): void {
    this.ctl[OP] = op;
    args.forEach((a, i) => (this.ctl[ARGS + i] = a));
  }

  /** The thread's side: the task failed with this error (its class's name, none for a bug), kept to ERROR_BYTES. */
  setFailure(name: string | undefined, message: string): void {
    const bytes = new TextEncoder().encode(JSON.stringify({ name, message }));
    const n = bytes.length <= ERROR_BYTES ? bytes.length : 0;
    // an error too long to keep is told as a bug with its first characters
    const kept = n > 0 ? bytes : new TextEncoder().encode(JSON.stringify({ message: message.slice(0, ERROR_BYTES / 4 - 32) }));
    new Uint8Array(this.buffer, 4 * HEADER_INTS, kept.length).set(kept);
    this.ctl[ERROR_LEN] = kept.length;
    this.ctl[STATUS] = 1;
  }

  setAnswered(): void {
    this.ctl[STATUS] = 0;
  }

  /** The calling thread's side: the error of a failed task, or undefined when it was answered. */
  failure(): { name?: string; message: string } | undefined {
    if (this.ctl[STATUS] === 0) return undefined;
    // copied out of shared memory first: TextDecoder does not read shared views everywhere
    const bytes = new Uint8Array(this.buffer, 4 * HEADER_INTS, this.ctl[ERROR_LEN]!).slice();
    return JSON.parse(new TextDecoder().decode(bytes)) as { name?: string; message: string };
  }
}

/** Values a k-means step's answer takes: counts (k), sums (k x d), changed, inertia, then with labels the n labels two to a value. */
function kmeansAnswerLength(k: number, d: number, n: number, labels: boolean): number {
  return k + k * d + 2 + (labels ? Math.ceil(n / 2) : 0);
}

/** Values a k-means step takes in all: its k x d centers and its answer. */
export function kmeansStepRoom(k: number, d: number, n: number, labels: boolean): number {
  return k * d + kmeansAnswerLength(k, d, n, labels);
}

/** Posts-side: the step's inputs into the channel. */
export function writeKMeansStep(c: Channel, centers: Float64Array, k: number, fresh: boolean, labels: boolean): void {
  c.setTask(OP_KMEANS_STEP, [k, fresh ? 1 : 0, labels ? 1 : 0]);
  c.values.set(centers, 0);
}

/** The thread's side: the step's inputs, as its task. */
export function readKMeansStep(c: Channel, d: number): { centers: Float64Array; k: number; fresh: boolean; labels: boolean } {
  const k = c.arg(0);
  return { centers: c.values.subarray(0, k * d), k, fresh: c.arg(1) === 1, labels: c.arg(2) === 1 };
}

/** The thread's side: the step's answer into the channel. */
export function writeKMeansAnswer(c: Channel, st: KMeansShardStats, k: number, d: number): void {
  const v = c.values;
  let at = k * d;
  v.set(st.counts, at);
  v.set(st.sums, (at += k));
  v[(at += k * d)] = st.changed ? 1 : 0;
  v[at + 1] = st.inertia;
  if (st.labels) new Uint32Array(c.buffer, v.byteOffset + 8 * (at + 2), st.labels.length).set(st.labels);
}

/** The calling thread's side: the step's answer, copied out of the channel (the next task overwrites it). */
export function readKMeansAnswer(c: Channel, k: number, d: number, n: number): KMeansShardStats {
  const v = c.values;
  const at = k * d;
  const end = at + k + k * d;
  const withLabels = c.arg(2) === 1;
  return {
    counts: v.slice(at, at + k),
    sums: v.slice(at + k, end),
    changed: v[end] === 1,
    inertia: v[end + 1]!,
    ...(withLabels ? { labels: new Uint32Array(c.buffer, v.byteOffset + 8 * (end + 2), n).slice() } : {}),
  };
}

/** Values an E-step takes in all: the model's parts and the statistics. */
export function gmmStatsRoom(m: ShardModel): number {
  return m.weights.length + m.means.length + m.precisionsCholesky.length + m.covariances.length + m.k + m.k * m.d + wireS2Length(m.covType, m.k, m.d) + 1;
}

/** The calling thread's side: the model into the channel. */
export function writeGmmStats(c: Channel, m: ShardModel): void {
  const parts = [m.weights, m.means, m.precisionsCholesky, m.covariances];
  c.setTask(OP_GMM_STATS, [m.covType, m.k, m.d, ...parts.map((p) => p.length)]);
  let at = 0;
  for (const p of parts) {
    c.values.set(p, at);
    at += p.length;
  }
}

/** Where the E-step's statistics start: after the model's parts. */
function gmmAnswerAt(c: Channel): number {
  return c.arg(3) + c.arg(4) + c.arg(5) + c.arg(6);
}

/** The thread's side: the model, as its task (views of the channel, copied into WASM memory by modelHandle). */
export function readGmmStats(c: Channel): ShardModel {
  const [covType, k, d] = [c.arg(0), c.arg(1), c.arg(2)];
  const parts: Float64Array[] = [];
  let at = 0;
  for (let i = 3; i < 7; i++) {
    parts.push(c.values.subarray(at, at + c.arg(i)));
    at += c.arg(i);
  }
  return { covType, k, d, weights: parts[0]!, means: parts[1]!, precisionsCholesky: parts[2]!, covariances: parts[3]! };
}

/** The thread's side: the statistics into the channel. */
export function writeGmmAnswer(c: Channel, st: ShardStats): void {
  let at = gmmAnswerAt(c);
  for (const p of [st.nk, st.s1, st.s2]) {
    c.values.set(p, at);
    at += p.length;
  }
  c.values[at] = st.loglik;
}

/** The calling thread's side: the statistics, copied out of the channel. */
export function readGmmAnswer(c: Channel): ShardStats {
  const [covType, k, d] = [c.arg(0), c.arg(1), c.arg(2)];
  const at = gmmAnswerAt(c);
  const [a, b, l2] = [k, k * d, wireS2Length(covType, k, d)];
  const v = c.values;
  return { nk: v.slice(at, at + a), s1: v.slice(at + a, at + a + b), s2: v.slice(at + a + b, at + a + b + l2), loglik: v[at + a + b + l2]! };
}
