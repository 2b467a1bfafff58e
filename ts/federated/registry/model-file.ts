/**
 * One saved-model format for every algorithm: what `fedmix server --out`,
 * `fedmix client --out` and modelArtifact() write, and what loadModel() reads
 * back into the right class.
 *
 *   { kind: 'fedmix.model', version: 1, algorithm, role, options, model, history }
 *
 * `role` 'server': `model` is the algorithm's result as its descriptor saves
 * it (artifact.save), `options` the server options the run was given,
 * `history` one record per round. `role` 'client': `model` is the global
 * model a client received, as its class's toJSON() (a fedmix.Network, a
 * fedmix.GaussianMixture), `options` the client's.
 *
 * Files fedmix wrote before this format (a bare model, a FedGenGMM or FedAvg
 * result, ...) are still read: loadModel() recognises each by its fields and
 * says so (`version: 0`). Anything else is an InvalidParameterError saying
 * what the file is.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { GaussianMixture } from '../../models/gaussian-mixture.js';
import { Network } from '../../models/network.js';
import { guardRead, isArray } from '../../validate.js';
import { savedObject } from './artifact.js';
import { algorithm, loadResult, resultJson } from './index.js';

export const MODEL_KIND = 'fedmix.model';
export const MODEL_VERSION = 1;

/** A saved model as a file holds it. */
export interface ModelArtifact {
  kind: typeof MODEL_KIND;
  version: typeof MODEL_VERSION;
  algorithm: string;
  /** who saved it: the server (its result) or a client (the global model it received) */
  role: 'server' | 'client';
  /** the role's options as the run was given them (JSON-safe: callbacks left out) */
  options: unknown;
  /** server: the descriptor's artifact of the result; client: the model's toJSON() */
  model: unknown;
  /** server: one record per round (RoundRecord, JSON-safe); client: [] */
  history: unknown[];
}

/** What loadModel() gives back. */
export interface LoadedModel {
  algorithm: string;
  role: 'server' | 'client';
  /** the artifact's version; 0 for a file written before the artifact format */
  version: number;
  options: unknown;
  history: unknown[];
  /** server: the algorithm's result as its descriptor loads it (e.g. a FedAvg outcome); client: the model */
  result: unknown;
  /** the model as its class (GaussianMixture, Network, DirichletMultinomialMixture), or undefined when the result is not one model; dispose() it */
  model: unknown;
}

/** Values JSON can hold: typed arrays as arrays, Maps as objects, non-finite numbers as null, functions left out. */
export function jsonSafe(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) => {
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>);
      if (v instanceof Map) return Object.fromEntries(v);
      if (typeof v === 'number' && !Number.isFinite(v)) return null;
      return v;
    }) ?? 'null',
  );
}

/**
 * The artifact of a server's run: `result` saved by `name`'s descriptor
 * (refused when it is not that algorithm's result), with the options the run
 * was given and its per-round history.
 */
export function modelArtifact(name: string, result: unknown, options: unknown = {}, history: readonly unknown[] = []): ModelArtifact {
  const a = algorithm(name).name;
  const model = resultJson(a, result);
  return { kind: MODEL_KIND, version: MODEL_VERSION, algorithm: a, role: 'server', options: guardRead('options', () => jsonSafe(options)), model, history: jsonSafe(history) as unknown[] };
}

/** The artifact of a client: the global model it received (its class's toJSON()), with the client's options. */
export function clientModelArtifact(name: string, model: unknown, options: unknown = {}): ModelArtifact {
  const a = algorithm(name).name;
  if (model === null || typeof model !== 'object' || typeof guardRead('model', () => (model as { format?: unknown }).format) !== 'string') {
    throw new InvalidParameterError(`a client's model is a model's toJSON() (with its format), got ${formatValue(model)}`);
  }
  return { kind: MODEL_KIND, version: MODEL_VERSION, algorithm: a, role: 'client', options: guardRead('options', () => jsonSafe(options)), model: jsonSafe(model), history: [] };
}

/** The model classes a client's artifact may hold, by their JSON's format. */
const MODEL_CLASSES: Record<string, (json: unknown) => unknown> = {
  'fedmix.Network': (j) => Network.fromJSON(j as string),
  'fedmix.GaussianMixture': (j) => GaussianMixture.fromJSON(j as string),
  'fedmix.DirichletMultinomialMixture': (j) => DirichletMultinomialMixture.fromJSON(j as string),
};

function formatOf(model: unknown): unknown {
  return model !== null && typeof model === 'object' ? guardRead('model', () => (model as { format?: unknown }).format) : undefined;
}

/**
 * A saved model (the object or its text) read back: the artifact's algorithm
 * loads its result (checked field by field) and, where the result is one
 * model, gives it as its class. Files written before the artifact format are
 * recognised by their fields (version 0); anything else is an
 * InvalidParameterError saying what it is.
 */
export function loadModel(json: unknown): LoadedModel {
  const o = savedObject('fedmix', json, 'model');
  const kind = guardRead('the saved model', () => o.kind);
  if (kind === MODEL_KIND) {
    const version = guardRead('the saved model', () => o.version);
    if (version !== MODEL_VERSION) throw new InvalidParameterError(`a saved fedmix model of version ${formatValue(version)}; this fedmix reads version ${MODEL_VERSION} (and files written before the artifact format)`);
    const [name, role, options, model, history] = guardRead('the saved model', () => [o.algorithm, o.role, o.options, o.model, o.history]);
    const d = algorithm(name);
    if (!isArray('history', history)) throw new InvalidParameterError(`a saved fedmix model is not valid: history must be an array, got ${formatValue(history)}`);
    if (role === 'client') {
      const load = MODEL_CLASSES[String(formatOf(model))];
      if (!load) throw new InvalidParameterError(`a saved fedmix client model is not valid: model must be one of ${Object.keys(MODEL_CLASSES).join(', ')}, got format ${formatValue(formatOf(model))}`);
      const m = load(model);
      return { algorithm: d.name, role, version, options, history: history as unknown[], result: m, model: m };
    }
    if (role !== 'server') throw new InvalidParameterError(`a saved fedmix model is not valid: role must be 'server' or 'client', got ${formatValue(role)}`);
    return loaded(d.name, 'server', version, options, history as unknown[], model);
  }
  if (kind !== undefined) throw new InvalidParameterError(`not a saved fedmix model: kind must be "${MODEL_KIND}", got ${formatValue(kind)}`);
  return loadLegacy(o);
}

function loaded(name: string, role: 'server' | 'client', version: number, options: unknown, history: unknown[], saved: unknown): LoadedModel {
  const d = algorithm(name);
  const result = loadResult(d.name, saved);
  let model: unknown;
  try {
    model = d.artifact.model ? d.artifact.model(result) : undefined;
  } catch (e) {
    disposeOf(result);
    throw e;
  }
  return { algorithm: d.name, role, version, options, history, result, model };
}

function disposeOf(value: unknown): void {
  if (value !== null && typeof value === 'object') {
    const m = value as { dispose?: unknown; model?: { dispose?: unknown } };
    if (typeof m.dispose === 'function') (m as { dispose(): void }).dispose();
    else if (m.model && typeof m.model.dispose === 'function') (m.model as { dispose(): void }).dispose();
  }
}

/**
 * A file written before the artifact format, by its fields: a bare
 * GaussianMixture (distributed EM's --out), a bare Dirichlet-multinomial
 * mixture (MDM's), a FedGenGMM result, a FedAvg-family result (it names its
 * algorithm), a FedGEM, FedDistr or communities result.
 */
function loadLegacy(o: Record<string, unknown>): LoadedModel {
  const has = (k: string) => guardRead('the saved model', () => Object.prototype.hasOwnProperty.call(o, k));
  const format = guardRead('the saved model', () => o.format);
  let name: string | undefined;
  if (format === 'fedmix.GaussianMixture') name = 'dem';
  else if (format === 'fedmix.DirichletMultinomialMixture') name = 'mdm';
  else if (typeof format === 'string') {
    throw new InvalidParameterError(`this is a saved ${format.replace(/^fedmix\./, '')} (${format}), not a federation's model: load it with ${format.replace(/^fedmix\./, '')}.fromJSON()`);
  } else if (has('incomingComponents') && has('syntheticRows')) name = 'fedgengmm';
  else if (has('network') && has('parameters')) {
    const a = guardRead('the saved model', () => o.algorithm);
    name = a === 'fedprox' || a === 'scaffold' ? a : 'fedavg';
  } else if (has('estimatedK') && has('globalCenters')) name = 'fedgem';
  else if (has('estimatedBaseDistributions')) name = 'feddistr';
  else if (has('communities') && has('membership')) name = 'communities';
  if (!name) {
    throw new InvalidParameterError(`not a saved fedmix model: it has no kind "${MODEL_KIND}" and is none of the files fedmix wrote before (its keys: ${guardRead('the saved model', () => Object.keys(o).slice(0, 8).join(', ')) || 'none'})`);
  }
  const history = name === 'fedavg' || name === 'fedprox' || name === 'scaffold' ? (guardRead('the saved model', () => o.history) as unknown[]) : [];
  return loaded(name, 'server', 0, undefined, Array.isArray(history) ? history : [], o);
}
