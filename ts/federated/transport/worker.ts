/** The module each worker thread of a WorkerTransport runs (piscina calls its default export). */
import { runLaneTask } from './lane.js';

export default runLaneTask;
