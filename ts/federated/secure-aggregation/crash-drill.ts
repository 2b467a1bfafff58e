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
 * The client host reads the variable when it is made and loads this module
 * at a secure round's first stage only when it is set: honest clients never
 * run any of it. A value that names no stage is an InvalidParameterError
 * there, which ends the client loudly: a typo cannot leave a drill silently
 * undone.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { SECURE_PREFIX, STAGES, type StageName } from './messages.js';

export const CRASH_DRILL_VARIABLE = 'FEDMIX_CRASH_AT_STAGE';

/** Defined (true) only in fedmix/browser's build (tsup.config.ts), which must name no Node built-in. */
declare const __FEDMIX_BROWSER__: boolean | undefined;

interface NodeProcess {
  pid: number;
  kill(pid: number, signal: string): void;
  exit(code: number): void;
  getBuiltinModule?: (id: string) => unknown;
}

const nodeProcess = (): NodeProcess | undefined => (globalThis as { process?: NodeProcess }).process;

/** The stage request kind at which client `id` is to die under the drill `value` (undefined: none for it). */
export function crashDrillFor(value: string, id: string): string | undefined {
  const names = STAGES.map((s) => s.name) as readonly string[];
  let mine: StageName | undefined;
  for (const entry of value.split(',')) {
    const at = entry.lastIndexOf(':');
    const who = at < 0 ? undefined : entry.slice(0, at).trim();
    const stage = entry.slice(at + 1).trim();
    if (!names.includes(stage)) {
      throw new InvalidParameterError(`${CRASH_DRILL_VARIABLE}=${formatValue(value)}: ${formatValue(stage)} is not a stage of a secure round (${names.join(', ')}); entries are STAGE or CLIENT:STAGE, separated by commas`);
    }
    if (who === undefined || who === id) mine ??= stage as StageName;
  }
  return mine === undefined ? undefined : `${SECURE_PREFIX}${mine}`;
}

/** Client `id`, asked a stage request of `kind`: dies there when the drill `value` says so (never resolving), else returns. */
export async function crashDrill(value: string, id: string, kind: string): Promise<void> {
  if (crashDrillFor(value, id) !== kind) return;
  const proc = nodeProcess();
  // constant-folded in the browser build (which has no drill), so the Node module's name is left out of it
  if (typeof __FEDMIX_BROWSER__ !== 'undefined' || !proc) return;
  const module = 'node:worker_threads';
  const threads = (proc.getBuiltinModule?.(module) ?? (await import(/* webpackIgnore: true */ /* @vite-ignore */ module))) as { isMainThread: boolean };
  // a worker thread's process.exit() ends only its thread; a kill from it would take the whole process
  if (threads.isMainThread) proc.kill(proc.pid, 'SIGKILL');
  else proc.exit(1);
  await new Promise<never>(() => undefined);
}
