/** The module each Web Worker of a WebWorkerTransport runs: one lane's tasks, in order. */
import { runLaneTask, type LaneTask } from './lane.js';

const scope = globalThis as unknown as { onmessage: ((e: { data: { id: number; task: LaneTask } }) => void) | null; postMessage(m: unknown): void };
let queue = Promise.resolve();
scope.onmessage = (e) => {
  const { id, task } = e.data;
  queue = queue.then(async () => scope.postMessage({ id, result: await runLaneTask(task) }));
};
