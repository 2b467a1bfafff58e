/**
 * A crash drill for operators and tests (docs/operations.md): with
 * FEDMIX_CRASH_AT_STAGE in its environment, a client dies when a secure
 * round asks it the named stage, before it answers, as a killed client
 * would: a process by SIGKILL (the broker then publishes its last will), a
 * Node worker thread by ending the thread (its lane's clients are dropouts).
 * The stages a dropout can hit are otherwise not timed from outside.
 *
 *   FEDMIX_CRASH_AT_STAGE=mask                 every client of this process (a `fedmix client` hosts one)
 *   FEDMIX_CRASH_AT_STAGE=c1:advertise,c4:mask the clients named (a process hosting many, e.g. worker threads)
 *
 * Unset or empty, nothing is read further and no client dies; a value that
 * names no stage is an InvalidParameterError when the client is made, so a
 * typo cannot leave a drill silently undone.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { SECURE_PREFIX, STAGES, type StageName } from './messages.js';

export const CRASH_DRILL_VARIABLE = 'FEDMIX_CRASH_AT_STAGE';

interface NodeProcess {
  env?: Record<string, string | undefined>;
  pid: number;
  kill(pid: number, signal: string): void;
  exit(code: number): void;
  getBuiltinModule?: (id: string) => unknown;
}

/** Defined (true) only in fedmix/browser's build (tsup.config.ts), which must name no Node built-in. */
declare const __FEDMIX_BROWSER__: boolean | undefined;

const nodeProcess = (): NodeProcess | undefined => (globalThis as { process?: NodeProcess }).process;

/**
 * The stage request kind at which client `id` is to die (undefined: the
 * environment sets no drill for it; browsers have none).
 */
export function crashDrillFor(id: string): string | undefined {
  if (typeof __FEDMIX_BROWSER__ !== 'undefined') return undefined;
  const value = nodeProcess()?.env?.[CRASH_DRILL_VARIABLE];
  if (value === undefined || value === '') return undefined;
  const names = STAGES.map((s) => s.name) as readonly string[];
  let mine: StageName | undefined;
  for (const entry of value.split(',')) {
    const at = entry.lastIndexOf(':');
    const who = at < 0 ? undefined : entry.slice(0, at);
    const stage = entry.slice(at + 1).trim();
    if (!names.includes(stage)) {
      throw new InvalidParameterError(`${CRASH_DRILL_VARIABLE}=${formatValue(value)}: ${formatValue(stage)} is not a stage of a secure round (${names.join(', ')}); entries are STAGE or CLIENT:STAGE, separated by commas`);
    }
    if (who === undefined || who.trim() === id) mine ??= stage as StageName;
  }
  return mine === undefined ? undefined : `${SECURE_PREFIX}${mine}`;
}

/** Dies as the drill says: the process killed (SIGKILL), or, in a Node worker thread, the thread ended; never resolves. */
export async function crashNow(): Promise<never> {
  const never = new Promise<never>(() => undefined);
  // constant-folded in the browser build (which has no drill), so the Node module's name is left out of it
  if (typeof __FEDMIX_BROWSER__ !== 'undefined') return never;
  const proc = nodeProcess()!;
  const id = 'node:worker_threads';
  const threads = (proc.getBuiltinModule?.(id) ?? (await import(/* webpackIgnore: true */ /* @vite-ignore */ id))) as { isMainThread: boolean };
  // a worker thread's process.exit() ends only its thread; a kill from it would take the whole process
  if (threads.isMainThread) proc.kill(proc.pid, 'SIGKILL');
  else proc.exit(1);
  return never;
}
