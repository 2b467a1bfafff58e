/**
 * How many threads a data-parallel fit uses (the `threads` option of
 * GaussianMixture and KMeans): a count, or 'auto' for the cores the runtime reports
 * (navigator.hardwareConcurrency, or Node's availableParallelism), and how
 * its rows are cut into one contiguous shard per thread.
 */
import * as atoms from '../options/atoms.js';
import { integerNeed, isIntegerIn } from '../validate.js';

/** The most threads a fit starts (each is a WASM instance with its own copy of a shard). */
export const MAX_THREADS = 256;

/** The fewest rows a fitting thread takes: a shard smaller than this is not worth a thread. */
export const MIN_SHARD_ROWS = 256;

/** A fit's `threads`: 1 (the default: the calling thread alone), more, or 'auto'. */
export type Threads = number | 'auto';

/**
 * How a fit ran (GaussianMixture's and KMeans' `fitThreads`): the threads
 * its iterations used and how their tasks travelled. A fit of fewer than
 * 2 x MIN_SHARD_ROWS rows runs on the calling thread whatever `threads` says,
 * and 'auto' becomes the cores the runtime reports: this says which happened.
 */
export interface FitThreads {
  /** the threads the fit ran on, the calling thread included */
  threads: number;
  /**
   * how each iteration's task and answer travelled between threads: 'shared'
   * (a SharedArrayBuffer with Atomics: Node, or a cross-origin isolated page),
   * 'messages' (postMessage: a page that is not cross-origin isolated), or
   * 'none' (one thread)
   */
  exchange: 'none' | 'shared' | 'messages';
}

/** What a fit on the calling thread alone reports. */
export const ONE_THREAD: Readonly<FitThreads> = Object.freeze({ threads: 1, exchange: 'none' });

/** The option's schema: an integer in [1, MAX_THREADS] or 'auto'. */
export const threadsOption = () =>
  atoms.atom<Threads>((x) => x === 'auto' || isIntegerIn(x, 1, MAX_THREADS), (input) => `must be 'auto' or ${integerNeed(1, MAX_THREADS, input)}`);

/** The threads a fit of n rows runs on: the option resolved ('auto': `cores()`), and never more than one per `minRows` rows. */
export function threadsFor(threads: Threads, n: number, minRows: number, cores: () => number): number {
  const wanted = threads === 'auto' ? cores() : threads;
  return Math.max(1, Math.min(wanted, Math.floor(n / minRows)));
}

/** The first row of each of `shards` contiguous shards of n rows, then n: sizes differ by at most one row. */
export function shardBounds(n: number, shards: number): number[] {
  return Array.from({ length: shards + 1 }, (_, i) => Math.floor((i * n) / shards));
}

/** Rows [a, b) of a column-major n x d matrix, column-major. */
export function shardRows(data: Float64Array, n: number, d: number, a: number, b: number): Float64Array {
  const out = new Float64Array((b - a) * d);
  for (let j = 0; j < d; j++) out.set(data.subarray(j * n + a, j * n + b), j * (b - a));
  return out;
}

/**
 * Runs a computation that asks for fits (a generator yielding each fit to
 * make; a failure is thrown back in at the yield), every fit by `fit`: the
 * same loop runs its fits on the calling thread (runFits) or on threads
 * (runFitsAsync).
 */
export function runFits<R, T>(g: Generator<R, T, void>, fit: (request: R) => void): T {
  for (let r = g.next(); ; ) {
    if (r.done) return r.value;
    let failure: { error: unknown } | undefined;
    try {
      fit(r.value);
    } catch (error) {
      failure = { error };
    }
    r = failure ? g.throw(failure.error) : g.next();
  }
}

/** runFits with fits that answer asynchronously. */
export async function runFitsAsync<R, T>(g: Generator<R, T, void>, fit: (request: R) => Promise<void>): Promise<T> {
  for (let r = g.next(); ; ) {
    if (r.done) return r.value;
    let failure: { error: unknown } | undefined;
    try {
      await fit(r.value);
    } catch (error) {
      failure = { error };
    }
    r = failure ? g.throw(failure.error) : g.next();
  }
}
