/** The module each fitting Web Worker runs in browsers: see shard-task.ts. */
import { replyTransferables, runInOrder, type ShardTask } from './shard-task.js';

const scope = globalThis as unknown as { onmessage: ((e: { data: ShardTask }) => void) | null; postMessage(m: unknown, transfer?: ArrayBuffer[]): void };
scope.onmessage = (e) => {
  void runInOrder(e.data).then((r) => scope.postMessage(r, replyTransferables(r)));
};
