/**
 * Where a resumed run starts: the checkpoint restoreRunServer read and
 * checked (checkpoint.ts), kept with the server role it rebuilt. The round
 * loop finds it here by its server role, so that a program that never
 * resumes carries none of the checkpoint's schemas.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead } from '../../validate.js';
import type { ResumePoint } from './checkpoint.js';
import type { ServerRole } from './roles.js';

const points = new WeakMap<object, ResumePoint>();

/** Remembers the checkpoint a restored server role continues. */
export function rememberResumePoint(server: ServerRole, point: ResumePoint): void {
  points.set(server, point);
}

/** The algorithm and round a saved checkpoint (the object or its text) names, read without checking the rest. */
function named(saved: unknown): { algorithm: unknown; round: unknown } {
  let s = saved;
  if (typeof s === 'string') {
    try {
      s = JSON.parse(s);
    } catch {
      throw new InvalidParameterError('resume must be a saved checkpoint (saveCheckpoint) or its JSON text; the text is not JSON');
    }
  }
  if (s === null || typeof s !== 'object') throw new InvalidParameterError(`resume must be a saved checkpoint (saveCheckpoint) or its JSON text, got ${formatValue(s)}`);
  return guardRead('resume', () => ({ algorithm: (s as { algorithm?: unknown }).algorithm, round: (s as { round?: unknown }).round }));
}

/**
 * The checkpoint a run resumed with `resume` starts from: the one its server
 * role was restored from (restoreServer), which must be of the algorithm and
 * round `resume` names.
 */
export function resumePointOf(server: ServerRole, resume: unknown): ResumePoint {
  const given = named(resume);
  const point = guardRead('the server role', () => points.get(server));
  if (!point || point.algorithm !== given.algorithm || point.round !== given.round) {
    throw new InvalidParameterError(
      `a run resumed from a checkpoint (${formatValue(given.algorithm)}, after round ${formatValue(given.round)}) needs the server role restored from that checkpoint (restoreServer(saved, options)), got ${point ? `one restored from a ${point.algorithm} checkpoint after round ${point.round}` : 'a server role not restored from it'}`,
    );
  }
  return point;
}
