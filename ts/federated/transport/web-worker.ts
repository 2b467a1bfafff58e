/**
 * The module each Web Worker of a WebWorkerTransport or a FedmixWorker runs:
 * one lane's tasks, in order, with the built-in algorithms registered (and the
 * user's from the modules a create task names).
 */
import { registerBuiltIns } from '../registry/index.js';
import { IndexedDbLedgerStore } from '../ledger-indexeddb.js';
import { laneTransferables, runLaneTask, setLedgerStore, type LaneTask } from './lane.js';
// a Web Worker can run any algorithm's clients: every module's files
import '../../wasm/files-all.generated.js';

registerBuiltIns();
setLedgerStore((name) => new IndexedDbLedgerStore(name));

const scope = globalThis as unknown as { onmessage: ((e: { data: { id: number; task: LaneTask } }) => void) | null; postMessage(m: unknown, transfer?: ArrayBuffer[]): void };
let queue = Promise.resolve();
scope.onmessage = (e) => {
  const { id, task } = e.data;
  queue = queue.then(async () => {
    const result = await runLaneTask(task);
    // a fit's arrays move to the main thread instead of being copied
    scope.postMessage({ id, result }, laneTransferables(result));
  });
};
