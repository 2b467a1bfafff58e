/**
 * What runs inside one worker (a Node worker thread or a browser Web Worker):
 * a lane of clients created from their specs, kept for the whole run, each
 * answering the wire bytes it is sent. The same handler serves both kinds of
 * worker; workers.ts and web-workers.ts only differ in how tasks reach it.
 */
import { FedmixError } from '../../errors.js';
import { init, type Backend, type InitOptions } from '../../wasm/loader.js';
import { makeClient, type ClientSpec } from '../algorithms.js';
import { ClientHost } from '../runtime/client-host.js';

/** The build the main thread runs, compiled: a worker runs the same one, whether it came from a file, the user's bytes or fedmix/inline. */
export interface LaneBuild {
  backend: Backend;
  module: WebAssembly.Module;
}

export type LaneTask =
  | { op: 'create'; specs: ClientSpec[]; maxMessageBytes?: number; build?: LaneBuild }
  | { op: 'handle'; items: { id: string; bytes: Uint8Array }[] }
  | { op: 'dispose' };

/** An error as it crosses back from a worker: the FedmixError code, or undefined for a bug. */
export interface LaneError {
  code?: string;
  message: string;
}

export type LaneReply = { id: string; bytes?: Uint8Array; error?: LaneError };

export type LaneResult = { ok: true; replies?: LaneReply[] } | { ok: false; error: LaneError };

const clients = new Map<string, { host: ClientHost; dispose(): void }>();

function laneError(e: unknown): LaneError {
  return e instanceof FedmixError ? { code: e.code, message: e.message } : { message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
}

/** Runs one task of the lane. Never throws: errors come back as values. */
export async function runLaneTask(task: LaneTask): Promise<LaneResult> {
  try {
    // without a build from the main thread (it had none loaded), the worker loads its own from beside its module
    const build = task.op === 'create' ? task.build : undefined;
    const options: InitOptions = build ? { backend: build.backend, wasm: { [build.backend]: build.module } } : {};
    await init(options);
    switch (task.op) {
      case 'create': {
        // one reply per spec: a client that cannot be made (bad data or options) says why, the others go on
        const replies: LaneReply[] = [];
        for (const spec of task.specs) {
          try {
            if (clients.has(spec.id)) throw new FedmixError('INVALID_PARAMETER', `client ${spec.id} already exists in this worker`);
            const role = makeClient(spec);
            clients.set(spec.id, { host: new ClientHost(role, { maxMessageBytes: task.maxMessageBytes }), dispose: () => role.dispose() });
            replies.push({ id: spec.id });
          } catch (e) {
            replies.push({ id: spec.id, error: laneError(e) });
          }
        }
        return { ok: true, replies };
      }
      case 'handle': {
        const replies: LaneReply[] = [];
        for (const { id, bytes } of task.items) {
          const c = clients.get(id);
          if (!c) {
            replies.push({ id, error: { code: 'FEDERATION', message: `client ${id} is not in this worker (it may have restarted)` } });
            continue;
          }
          try {
            replies.push({ id, bytes: await c.host.handle(bytes) });
          } catch (e) {
            replies.push({ id, error: laneError(e) });
          }
        }
        return { ok: true, replies };
      }
      case 'dispose':
        for (const c of clients.values()) c.dispose();
        clients.clear();
        return { ok: true };
    }
  } catch (e) {
    return { ok: false, error: laneError(e) };
  }
}
