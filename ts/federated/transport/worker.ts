/**
 * The module each worker thread of a WorkerTransport runs (piscina calls its
 * default export): the built-in algorithms registered, plus the user's from
 * the modules a create task names (WorkerTransport's algorithmModules).
 */
import { registerBuiltIns } from '../registry/index.js';
import { FileLedgerStore } from '../ledger-file.js';
import { runLaneTask, setLedgerStore } from './lane.js';
// a worker thread can run any algorithm's clients: every module's files
import '../../wasm/files-all.generated.js';

registerBuiltIns();
setLedgerStore((path) => new FileLedgerStore(path));

export default runLaneTask;
