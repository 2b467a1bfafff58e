/**
 * What the descriptors' artifact parts share: the check a result passes before
 * it is saved, and the reading of a saved artifact (the object or its text)
 * against a valibot schema of its fields, with typed errors naming the field.
 */
import * as v from 'valibot';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead, isArray } from '../../validate.js';

/**
 * The check a descriptor's artifact.save starts with: `result` must pass
 * `test` (run under guard), else an InvalidParameterError "a NAME result must
 * be EXPECTED, got ...".
 */
export function expectResult(name: string, expected: string, result: unknown, test: (r: unknown) => boolean): void {
  if (!guardRead('model', () => test(result))) throw new InvalidParameterError(`a ${name} result must be ${expected}, got ${formatValue(result)}`);
}

/** A saved artifact's text parsed, or the object as given: an object, else an InvalidParameterError. */
export function savedObject(name: string, json: unknown, what = 'result'): Record<string, unknown> {
  let parsed = json;
  if (typeof json === 'string') {
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new InvalidParameterError(`not a saved ${name} ${what}: the text is not JSON (it starts ${formatValue(json.slice(0, 20))})`);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || isArray(`the saved ${what}`, parsed)) throw new InvalidParameterError(`a saved ${name} ${what} must be an object, got ${formatValue(parsed)}`);
  return parsed as Record<string, unknown>;
}

/** A saved artifact read against `schema` (the object or its text); a field that fails is named in the InvalidParameterError. */
export function parseSaved<S extends v.GenericSchema>(name: string, schema: S, json: unknown, what = 'result'): v.InferOutput<S> {
  const object = savedObject(name, json, what);
  // what the schema loads into WASM memory (savedModel) is freed when the parse fails after it, anywhere
  const outer = loading;
  const loaded: { dispose(): void }[] = (loading = []);
  let r: v.SafeParseResult<S> | undefined;
  try {
    r = guardRead(`the saved ${what}`, () => v.safeParse(schema, object));
  } finally {
    loading = outer;
    if (!r?.success) for (const m of loaded) m.dispose();
  }
  if (r.success) return r.output;
  const issue = r.issues[0];
  const path = (issue.path ?? []).map((p) => (typeof p.key === 'number' ? `[${p.key}]` : `.${String(p.key)}`)).join('');
  throw new InvalidParameterError(`a saved ${name} ${what} is not valid: ${path ? `${path.slice(path.startsWith('.') ? 1 : 0)}: ` : ''}${issue.message}`);
}

/** Values parseSaved's schema loaded so far (WASM memory), freed if the parse then fails. */
let loading: { dispose(): void }[] = [];

/** A saved model loaded by `load` (its own checks): freed again when the rest of the saved value fails its schema. */
export const savedModel = <T extends { dispose(): void }>(load: (json: unknown) => T) =>
  v.pipe(
    v.unknown(),
    v.transform((json) => {
      const model = load(json);
      loading.push(model);
      return model;
    }),
  );

/** A finite number. */
export const savedNumber = () => v.pipe(v.number(), v.finite());
/** A whole number >= 0. */
export const savedCount = () => v.pipe(v.number(), v.safeInteger(), v.minValue(0));
/** An array of finite numbers, as a Float64Array. */
export const savedFloats = () => v.pipe(v.array(savedNumber()), v.transform((a) => Float64Array.from(a)));
/** An array of whole numbers >= 0, as an Int32Array. */
export const savedIndices = () => v.pipe(v.array(v.pipe(savedCount(), v.maxValue(2 ** 31 - 1))), v.transform((a) => Int32Array.from(a)));
/** A record by client id, as a Map. */
export const savedMap = <S extends v.GenericSchema>(value: S) => v.pipe(v.record(v.string(), value), v.transform((r) => new Map(Object.entries(r) as [string, v.InferOutput<S>][])));

/** A saved server state read against `schema` (parseSaved's checks), for a descriptor's state.restore. */
export function parseState<S extends v.GenericSchema>(name: string, schema: S, json: unknown): v.InferOutput<S> {
  return parseSaved(name, schema, json, 'server state');
}

/** A number or null (what JSON makes of NaN), as a number. */
export const savedOrNaN = () => v.pipe(v.nullable(savedNumber()), v.transform((x) => x ?? NaN));
/** A generator's state (Rng.getState): eight 32-bit halves and the spare normal or null. */
export const savedRng = () =>
  v.object({
    words: v.pipe(v.array(v.pipe(savedCount(), v.maxValue(2 ** 32 - 1))), v.length(8)),
    spare: v.nullable(savedNumber()),
  });
/** An array of finite numbers, as a Float32Array (single-precision parameters, saved exactly as doubles). */
export const savedSingles = () => v.pipe(v.array(savedNumber()), v.transform((a) => Float32Array.from(a)));
/** Pairs [client id, value], as a Map (pairs rather than a record, so that no id can be a prototype key). */
export const savedPairs = <S extends v.GenericSchema>(value: S) => v.pipe(v.array(v.tuple([v.string(), value])), v.transform((a) => new Map(a as [string, v.InferOutput<S>][])));

/** A server role whose state a checkpoint can hold: saveState() gives JSON-safe data, restoreState() puts a checked copy into a new role. */
export interface ResumableServer<State> {
  saveState(): unknown;
  restoreState(state: State): void;
  dispose?(): void;
}

/**
 * A descriptor's state part for a server class with saveState/restoreState:
 * save refuses a role of another class; restore checks the saved data against
 * `schema` (parseState), makes a role with `create` and restores it (freed
 * again when the state does not fit the options).
 */
export function serverState<Options, Role extends ResumableServer<v.InferOutput<S>>, S extends v.GenericSchema>(
  name: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  Class: abstract new (...args: any[]) => Role,
  create: (options: Options) => Role,
  schema: S,
) {
  return {
    save: (server: unknown): unknown => {
      if (!guardRead('the server role', () => server !== null && typeof server === 'object' && Object.getPrototypeOf(server) === Class.prototype)) {
        throw new InvalidParameterError(`a ${name} server state is saved from a ${name} server role (${Class.name}), got ${formatValue(server)}`);
      }
      return (server as Role).saveState();
    },
    restore: (options: Options, saved: unknown): Role => {
      const state = parseState(name, schema, saved);
      let server: Role | undefined;
      try {
        server = create(options);
        server.restoreState(state);
        return server;
      } catch (e) {
        // what the state loaded (a model in WASM memory) is freed with the role, or alone when no role took it
        server?.dispose?.();
        disposeLoaded(state);
        throw e;
      }
    },
  };
}

/** The error of a saved server state that does not fit the server's options. */
export function stateMismatch(name: string, field: string, why: string): InvalidParameterError {
  return new InvalidParameterError(`a saved ${name} server state is not valid: ${field}: ${why}`);
}

/** Frees the WASM-held values (anything with dispose()) a parsed state loaded; a second dispose() of one is harmless. */
function disposeLoaded(value: unknown, depth = 0): void {
  if (depth > 4 || value === null || typeof value !== 'object') return;
  if (typeof (value as { dispose?: unknown }).dispose === 'function') {
    (value as { dispose(): void }).dispose();
    return;
  }
  for (const x of value instanceof Map ? value.values() : Object.values(value)) disposeLoaded(x, depth + 1);
}
