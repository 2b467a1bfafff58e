/**
 * What `fedmix server` and `fedmix client` leave behind: the model artifact
 * (the one format loadModel() reads: ts/federated/registry/model-file.ts) and
 * the client's outcome, a failed run being an error (stderr, exit status 2)
 * rather than a line on stdout.
 */
import { FederationError, InvalidParameterError } from '../errors.js';
import type { ClientRole } from '../federated/runtime/roles.js';
import type { FederationResult } from '../federated/runtime/run.js';
import { clientModelArtifact, modelArtifact, type ModelArtifact } from '../federated/registry/model-file.js';
import type { JoinResult } from '../federated/transport/mqtt.js';
import type { Options } from './args.js';
import { endObject, type LogFormat } from './federation-log.js';
import { result, type CommandResult } from './io.js';

/** The server's artifact: the result, the options the run was given, and its history (one record per round). */
export function serverArtifact(algorithm: string, run: FederationResult, options: unknown): ModelArtifact {
  return modelArtifact(algorithm, run.model, options, run.history);
}

/** `fedmix client --out` with an algorithm whose server sends its clients no global model: refused before joining. */
export function requireClientModel(algorithm: string, role: ClientRole): void {
  if (typeof role.savedGlobalModel !== 'function') {
    throw new InvalidParameterError(`--out: a ${algorithm} server sends its clients no global model to save; the server's --out writes the model`);
  }
}

/**
 * The client's outcome: a run that failed is a FederationError (the command
 * writes it on stderr and exits with status 2), unless this client refused
 * requests for its privacy budget (`refused`): it did what its budget asks,
 * and its refusals may be why the run failed, so the failure is reported
 * (nothing written with --out) and the refusals give the exit status
 * (budgetOutcome). One that ended well writes the global model with --out
 * (it must have come) and reports.
 */
export function clientOutcome(algorithm: string, id: string, r: JoinResult, role: ClientRole, o: Options, write: (path: string, text: string) => void, refused = false): CommandResult {
  if (!r.ok) {
    const failed = `client ${id}: the server's run failed: ${r.reason ?? 'no reason given'} (${r.answered} requests answered)`;
    if (!refused) throw new FederationError(failed);
    if (o['log-format'] === ('json' satisfies LogFormat)) result(JSON.stringify(endObject(id, r)));
    return { text: `fedmix ${failed}`, json: r };
  }
  const out = typeof o.out === 'string' ? o.out : undefined;
  if (out) {
    const model = role.savedGlobalModel?.();
    if (model === undefined) throw new FederationError(`client ${id}: the run ended without the server sending this client its global model; nothing written to ${out}`);
    write(out, JSON.stringify(clientModelArtifact(algorithm, model, {})) + '\n');
  }
  if (o['log-format'] === ('json' satisfies LogFormat)) result(JSON.stringify(endObject(id, r, out)));
  return { text: `fedmix client ${id}: the run ended well; ${r.answered} requests answered${out ? `; global model written to ${out}` : ''}`, json: { ...r, ...(out ? { out } : {}) } };
}
