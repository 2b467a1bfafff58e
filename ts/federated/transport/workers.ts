/**
 * Clients in worker threads (Node), so that simulated clients' local work runs
 * on every core. Each lane is a piscina pool of exactly one thread: it queues
 * the lane's tasks, and a thread that dies is not replaced behind the
 * transport's back (its clients are dropouts). See lanes.ts for the rest.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { FederationError, FedmixError, formatThrown, formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, readOptions, requireInteger } from '../../validate.js';
import type { ClientSpec } from '../registry/registry.js';
import type { LaneResult, LaneTask } from './lane.js';
import { LANE_KEYS, LaneTransport, moduleUrls, readSpecs, type LaneOptions } from './lanes.js';
import { keepClassName } from '../../class-name.js';

export interface WorkerTransportOptions extends LaneOptions {
  /** worker threads (default: the machine's available parallelism, at most the number of clients) */
  threads?: number;
  /** the worker module (default: worker.js next to this bundle) */
  workerFile?: string | URL;
}

export class WorkerTransport extends LaneTransport {
  static {
    keepClassName(this, 'WorkerTransport');
  }

  private pools: Piscina<LaneTask, LaneResult>[] = [];

  /** Starts the threads and creates each client in its lane. */
  static async start(given: readonly ClientSpec[], optionsGiven: WorkerTransportOptions = {}): Promise<WorkerTransport> {
    const options = readOptions(optionsGiven, ['threads', 'workerFile', ...LANE_KEYS]);
    const specs = readSpecs(given);
    // a path is the caller's (relative to the working directory); a thread imports URLs
    const modules = moduleUrls(options.algorithmModules, (s) => (/^[a-z][a-z0-9+.-]*:/i.test(s) && !/^[a-z]:[\\/]/i.test(s) ? s : pathToFileURL(resolve(s)).href));
    const threads = Math.min(requireInteger('threads', options.threads ?? availableParallelism(), 1, 1024), Math.max(1, specs.length));
    const file = options.workerFile ?? new URL('./worker.js', import.meta.url);
    if (typeof file !== 'string' && !guardRead('workerFile', () => file instanceof URL)) throw new InvalidParameterError(`workerFile must be a path or a URL, got ${formatValue(file)}`);
    const filename = file instanceof URL ? file.href : file;
    const pools = Array.from({ length: threads }, () => new Piscina<LaneTask, LaneResult>({ filename, minThreads: 1, maxThreads: 1, idleTimeout: Infinity, concurrentTasksPerWorker: 1 }));
    const run = (l: number, task: LaneTask) => pools[l]!.run(task);
    try {
      const { laneOf, born, unborn, encoding } = await LaneTransport.deal(specs, threads, run, options, modules);
      const t = new WorkerTransport('workers', threads, run, laneOf, born, unborn, encoding);
      t.pools = pools;
      return t;
    } catch (e) {
      await Promise.all(pools.map((p) => p.destroy()));
      // a worker file that cannot be loaded, or specs that cannot be cloned to a thread
      throw e instanceof FedmixError ? e : new FederationError(`the worker threads could not start their clients: ${formatThrown(e)}`);
    }
  }

  /** Frees the clients and stops the threads. */
  async close(): Promise<void> {
    await this.disposeLanes();
    await Promise.all(this.pools.map((p) => p.destroy()));
  }
}
