/**
 * Clients in Web Workers (browsers): the same lanes as the Node worker
 * threads (lanes.ts), each lane one module worker running web-worker.js,
 * which bundles the library so that it needs no import map.
 */
import { FederationError, formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, readOptions, requireInteger } from '../../validate.js';
import type { ClientSpec } from '../registry/registry.js';
import type { LaneResult, LaneTask } from './lane.js';
import { LANE_KEYS, LaneTransport, moduleUrls, readSpecs, type LaneOptions } from './lanes.js';
import { keepClassName } from '../../class-name.js';

export interface WebWorkerTransportOptions extends LaneOptions {
  /** workers (default: navigator.hardwareConcurrency, at most the number of clients) */
  workers?: number;
  /** the worker module (default: web-worker.js next to this bundle) */
  workerUrl?: string | URL;
}

/** @internal */
export interface BrowserWorker {
  postMessage(message: unknown): void;
  terminate(): void;
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: ((e: { message?: string }) => void) | null;
}

/** One module worker and the tasks it has not answered yet (a FedmixWorker is one too). @internal */
export class Lane {
  private next = 0;
  private readonly pending = new Map<number, { resolve: (r: LaneResult) => void; reject: (e: Error) => void }>();
  private failed: Error | undefined;

  constructor(private readonly worker: BrowserWorker) {
    worker.onmessage = (e) => {
      const { id, result } = e.data as { id: number; result: LaneResult };
      this.pending.get(id)?.resolve(result);
      this.pending.delete(id);
    };
    worker.onerror = (e) => {
      // a worker that fails takes its clients with it: every task it holds, and later ones, fail
      this.failed = new FederationError(`a web worker failed: ${e.message ?? 'unknown error'}`);
      for (const p of this.pending.values()) p.reject(this.failed);
      this.pending.clear();
    };
  }

  run(task: LaneTask): Promise<LaneResult> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, task });
    });
  }

  /** Stops the worker; what it had not answered fails. */
  terminate(): void {
    this.worker.terminate();
    this.failed ??= new FederationError('the web worker was stopped');
    for (const p of this.pending.values()) p.reject(this.failed);
    this.pending.clear();
  }
}

/**
 * A module worker running web-worker.js (next to this bundle, so it needs no
 * import map) or `workerUrl`. @internal
 */
export function startLane(workerUrl: string | URL | undefined): Lane {
  const Worker = (globalThis as { Worker?: new (url: string | URL, o: { type: 'module' }) => BrowserWorker }).Worker;
  if (typeof Worker !== 'function') throw new InvalidParameterError('Web Workers are not available here; in Node use WorkerTransport from fedmix/node');
  // in the form bundlers recognise as a worker (Vite, webpack, Parcel): they build and emit web-worker.js only
  // for a program that can reach this line, where a URL made apart from `new Worker` would be emitted into every one
  if (workerUrl === undefined) return new Lane(new Worker(new URL('./web-worker.js', import.meta.url), { type: 'module' }));
  // Worker() would coerce anything to a relative URL (5 becomes "/5"): a string or URL only
  if (typeof workerUrl !== 'string' && !guardRead('workerUrl', () => workerUrl instanceof URL)) throw new InvalidParameterError(`workerUrl must be a string or a URL, got ${formatValue(workerUrl)}`);
  return new Lane(new Worker(workerUrl, { type: 'module' }));
}

/** A module URL as a worker imports it: absolute, resolved against the page (a worker's own base is its script). */
function pageUrl(s: string): string {
  const base = (globalThis as { location?: { href?: unknown } }).location?.href;
  try {
    return new URL(s, typeof base === 'string' ? base : undefined).href;
  } catch {
    throw new InvalidParameterError(`algorithmModules: ${formatValue(s)} is not a URL, and there is no page to resolve it against`);
  }
}

export class WebWorkerTransport extends LaneTransport {
  static {
    keepClassName(this, 'WebWorkerTransport');
  }

  private workers: Lane[] = [];

  /** Starts the workers and creates each client in its lane. */
  static async start(given: readonly ClientSpec[], optionsGiven: WebWorkerTransportOptions = {}): Promise<WebWorkerTransport> {
    const options = readOptions(optionsGiven, ['workers', 'workerUrl', ...LANE_KEYS]) as WebWorkerTransportOptions;
    const hardware = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 2;
    const specs = readSpecs(given);
    const n = Math.min(requireInteger('workers', options.workers ?? hardware, 1, 1024), Math.max(1, specs.length));
    const lanes = Array.from({ length: n }, () => startLane(options.workerUrl));
    try {
      const t = await WebWorkerTransport.onLanes(lanes, specs, options);
      t.workers = lanes;
      return t;
    } catch (e) {
      for (const l of lanes) l.terminate();
      throw e;
    }
  }

  /**
   * Clients dealt to lanes that are already running (a FedmixWorker's): the
   * transport's close() frees its clients but leaves the workers to their owner.
   * @internal
   */
  static async onLanes(lanes: readonly Lane[], specs: ClientSpec[], options: LaneOptions): Promise<WebWorkerTransport> {
    const run = (l: number, task: LaneTask) => lanes[l]!.run(task);
    const modules = moduleUrls(options.algorithmModules, pageUrl);
    const { laneOf, born, unborn, encoding } = await LaneTransport.deal(specs, lanes.length, run, options, modules);
    return new WebWorkerTransport('web-workers', lanes.length, run, laneOf, born, unborn, encoding);
  }

  /** Frees the clients and stops the workers it started. */
  async close(): Promise<void> {
    await this.disposeLanes();
    for (const l of this.workers) l.terminate();
  }
}
