/**
 * The registry with the built-in algorithms in it: what the library's entries,
 * serve(), the worker scripts and the CLI use. Every lookup here registers the
 * built-in descriptors first (once), so no bundler can drop them as an unused
 * import. (./registry.ts alone names no algorithm: the transports use it, and
 * the worker scripts call registerBuiltIns() before they create any client.)
 */
import * as core from './registry.js';
import { BUILT_IN, type AlgorithmName } from './built-in.js';
import type { AnyAlgorithm, ClientSpec } from './registry.js';
import type { ClientRole, ServerRole } from '../runtime/roles.js';
import { readRunCheckpoint, restoreRunServer, saveRunCheckpoint, type SavedRunCheckpoint } from '../runtime/checkpoint.js';
import type { RunCheckpoint } from '../runtime/run.js';
import { formatValue, InvalidParameterError } from '../../errors.js';

let registered = false;

/** Puts the built-in descriptors into this copy's registry (idempotent). */
export function registerBuiltIns(): void {
  if (registered) return;
  registered = true;
  for (const d of BUILT_IN) core.registerBuiltIn(d);
}

/** The built-in algorithms' names, in their order. */
export const ALGORITHMS: readonly AlgorithmName[] = BUILT_IN.map((d) => d.name);
export type { AlgorithmName };

/** The descriptor registered under `name`; an InvalidParameterError listing the registered names when there is none. */
export function algorithm(name: unknown): AnyAlgorithm {
  registerBuiltIns();
  return core.algorithm(name);
}

/** Every registered algorithm: the built-in ones, then the user's in the order registered. */
export function algorithms(): readonly AnyAlgorithm[] {
  registerBuiltIns();
  return core.algorithms();
}

/** The names of every registered algorithm. */
export function algorithmNames(): string[] {
  registerBuiltIns();
  return core.algorithmNames();
}

/**
 * Registers an algorithm of the user's (checked as defineAlgorithm checks it)
 * for every copy of fedmix in this realm; a name already registered, built-in
 * or not, is refused.
 */
export function registerAlgorithm<D extends AnyAlgorithm>(descriptor: D): D {
  registerBuiltIns();
  return core.registerAlgorithm(descriptor);
}

/** The client role a spec describes, made by its algorithm's descriptor. */
export function makeClient(spec: ClientSpec): ClientRole & { dispose(): void } {
  registerBuiltIns();
  return core.makeClient(spec);
}

/** The server role of an algorithm, with its own options (checked by the descriptor). */
export function makeServer(name: string, options: unknown): ServerRole {
  registerBuiltIns();
  return core.makeServer(name, options);
}

/** What a server produced, as JSON a file can hold (the descriptor's artifact.save). */
export function resultJson(name: string, result: unknown): unknown {
  registerBuiltIns();
  return core.resultJson(name, result);
}

/** A saved artifact (resultJson's output, or its text) read back by its algorithm's descriptor (artifact.load). */
export function loadResult(name: string, json: unknown): unknown {
  registerBuiltIns();
  return core.loadResult(name, json);
}

/**
 * A run's checkpoint (what onCheckpoint is given) with its server role's
 * state, saved by `name`'s descriptor, as JSON-safe data: JSON.stringify it
 * to a file, and give it back (parsed, or its text) to restoreServer and
 * RunOptions.resume (or serve's resume). An algorithm whose descriptor has no
 * `state` cannot be checkpointed: an InvalidParameterError says so.
 */
export function saveCheckpoint(name: string, checkpoint: RunCheckpoint): SavedRunCheckpoint {
  return saveRunCheckpoint(algorithm(name), checkpoint);
}

/**
 * The server role of a saved checkpoint, rebuilt with its algorithm's server
 * options (checked as makeServer checks them; give the ones the run was
 * started with): it continues exactly as the saved one would. Run it with
 * `resume` set to the same checkpoint. `expected`: the algorithm the caller
 * means to run (a checkpoint of another is an InvalidParameterError).
 */
export function restoreServer(saved: unknown, options: unknown, expected?: string): ServerRole {
  if (expected !== undefined && typeof expected !== 'string') throw new InvalidParameterError(`expected must be an algorithm's name, got ${formatValue(expected)}`);
  const name = readRunCheckpoint(saved).algorithm;
  if (expected !== undefined && name !== expected) throw new InvalidParameterError(`this checkpoint is of a ${formatValue(name)} run, not ${expected}`);
  return restoreRunServer(algorithm(name), options, saved);
}

export { CHECKPOINT_FORMAT, readRunCheckpoint, type ResumePoint, type SavedRunCheckpoint } from '../runtime/checkpoint.js';

export {
  defineAlgorithm,
  matrixData,
  type AlgorithmDescriptor,
  type AnyAlgorithm,
  type ClientInput,
  type ClientSpec,
  type CliClientContext,
  type CliClientData,
  type CliClientPart,
  type CliContext,
  type CliOption,
  type CliPart,
  type CliTable,
  type CliValues,
  type MatrixData,
} from './registry.js';
