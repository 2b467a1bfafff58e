/**
 * The global model a client role received, for join()'s result: what the
 * role's savedGlobalModel() gives (a model's toJSON()) once a run ended well.
 * A role without one, or whose method throws, gives none (the run's outcome
 * is not changed by it).
 */
import { guardRead } from '../../validate.js';
import type { ClientRole } from '../runtime/roles.js';

export function receivedModel(role: ClientRole, ok: boolean): { model?: unknown } {
  if (!ok) return {};
  try {
    const model = guardRead('the client role', () => (typeof role.savedGlobalModel === 'function' ? role.savedGlobalModel() : undefined));
    return model === undefined ? {} : { model };
  } catch {
    return {};
  }
}
