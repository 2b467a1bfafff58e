/** The module each fitting Web Worker runs in browsers: see shard-task.ts. */
import { onTask, type ShardTask } from './shard-task.js';
// what a fitting thread loads when the calling thread sends no build of its own: the core and 'dem' (the shards' exports)
import '../wasm/files-core.generated.js';
import '../wasm/files-dem.generated.js';

const scope = globalThis as unknown as { onmessage: ((e: { data: ShardTask }) => void) | null; postMessage(m: unknown, transfer?: ArrayBuffer[]): void };
scope.onmessage = (e) => onTask(e.data, (r, transfer) => scope.postMessage(r, transfer));
