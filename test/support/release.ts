/**
 * Freeing what a test call made, for tests that call the whole public API
 * (test/hostile-api.test.ts, test/traps.test.ts).
 */
import { types } from 'node:util';
import { Matrix } from '../../ts/index.js';

/** Frees what a call made: dispose(), close() or stop() on the result, its entries and its values, awaited. */
export async function release(x: unknown, seen = new Set<unknown>(), depth = 0): Promise<void> {
  // results may hold the hostile values themselves (a message around a payload): those are not ours to free
  if (x === null || typeof x !== 'object' || seen.has(x) || depth > 3 || ArrayBuffer.isView(x) || types.isProxy(x)) return;
  seen.add(x);
  try {
    if (x instanceof Matrix) return;
    for (const name of ['dispose', 'close', 'stop'] as const) {
      const d = Object.getOwnPropertyDescriptor(x, name) ?? Object.getOwnPropertyDescriptor(Object.getPrototypeOf(x) ?? {}, name);
      if (d && typeof d.value === 'function') await (d.value as () => unknown).call(x);
    }
    // own enumerable values of plain objects and of instances (a ClientHost's role, a result's model)
    const values = Array.isArray(x) ? x.slice(0, 100) : x instanceof Map ? [...x.values()] : Object.values(x);
    for (const v of values) await release(v, seen, depth + 1);
  } catch {
    // already closed, or never opened, or not a thing to free
  }
}
