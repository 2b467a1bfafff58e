/** The module each fitting thread runs in Node (worker_threads): see shard-task.ts. */
import { parentPort } from 'node:worker_threads';
import { onTask, type ShardTask } from './shard-task.js';
// what a fitting thread loads when the calling thread sends no build of its own: the core and 'dem' (the shards' exports)
import '../wasm/files-core.generated.js';
import '../wasm/files-dem.generated.js';

const port = parentPort!;
port.on('message', (task: ShardTask) => onTask(task, (r, transfer) => port.postMessage(r, transfer)));
