/**
 * apache-arrow, loaded only by programs that read or write Arrow data: the
 * one place that holds the library. Reading a Table, RecordBatch or vector a
 * caller already has needs none of it (arrow.ts reads them by their shape);
 * writing Tables (toArrow, toArrowTable, toArrowVector) and reading IPC bytes
 * do. `await loadArrow()` loads it (init() does not: it would put the chunk
 * in every program), with an
 * import() that bundlers split into a chunk of its own; Node's entries hand
 * over their static import at once (provideArrow), since Node downloads
 * nothing. The library is the project's own apache-arrow (a peer dependency).
 */
import type * as ApacheArrow from 'apache-arrow';
import { ArrowNotLoadedError, formatThrown } from '../errors.js';

export type ArrowLibrary = typeof ApacheArrow;

let library: ArrowLibrary | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads apache-arrow for fedmix's Arrow output and IPC input (toArrow,
 * toArrowTable, toArrowVector, partitionToArrow, Matrix.fromArrow of bytes).
 * Idempotent; in Node (fedmix and fedmix/node) it is loaded already.
 */
export function loadArrow(): Promise<void> {
  if (library) return Promise.resolve();
  loading ??= import('apache-arrow').then(
    (m) => {
      library ??= m;
    },
    (e: unknown) => {
      loading = undefined;
      throw new ArrowNotLoadedError(`apache-arrow could not be loaded (${formatThrown(e)}): it is a peer dependency of fedmix; install it (npm install apache-arrow)`);
    },
  );
  return loading;
}

/** @internal Node's entries: their static import of apache-arrow, so that nothing needs loading. */
export function provideArrow(m: ArrowLibrary): void {
  library ??= m;
}

/** The loaded library; an ArrowNotLoadedError saying what to call when `what` (a call's name) runs before loadArrow(). */
export function arrowLibrary(what: string): ArrowLibrary {
  if (library) return library;
  throw new ArrowNotLoadedError(`${what} needs apache-arrow, which fedmix loads on demand: call await loadArrow() once before`);
}

/** Whether apache-arrow is loaded (toArrow and IPC bytes work synchronously). */
export function arrowLoaded(): boolean {
  return library !== undefined;
}

/** @internal Forgets the library, for a test of the not-loaded error. */
export function unloadArrowForTests(): ArrowLibrary | undefined {
  const m = library;
  library = undefined;
  loading = undefined;
  return m;
}
