/**
 * What `fedmix server` logs of a run's identity and of its state directory:
 * the run's id when it starts, whether it resumes (and after which round,
 * from where), and replies of another run it dropped.
 */
import type { RoundRecord } from '../federated/runtime/run.js';

/** The line a server logs when its run starts. */
export function startLine(run: { id: string; resumedAfter?: number; state?: string }): string {
  if (run.resumedAfter !== undefined) return `fedmix server: resuming run ${run.id} after round ${run.resumedAfter}${run.state ? ` (state: ${run.state})` : ''}`;
  return `fedmix server: run ${run.id}${run.state ? `, saved after every round to ${run.state}` : ''}`;
}

/** What a round's log line adds when it dropped replies of another run. */
export function otherRunNote(r: RoundRecord): string {
  return r.otherRun ? `; ${r.otherRun} repl${r.otherRun === 1 ? 'y' : 'ies'} of another run dropped` : '';
}
