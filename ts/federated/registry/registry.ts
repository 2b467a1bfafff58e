/**
 * The algorithms by name: one descriptor per algorithm (defineAlgorithm), kept
 * in one registry. Everything that builds roles from plain data rather than
 * code goes through it: makeClient/makeServer, serve() and join(), the worker
 * and Web Worker lanes, the `fedmix server` and `fedmix client` commands. This
 * module names no algorithm: the built-in ones are listed in ./built-in.ts,
 * and a user's own registers the same way (registerAlgorithm).
 *
 * A user's registrations live on globalThis (under a Symbol.for key), so that
 * every copy of fedmix in one JavaScript realm sees them: the `fedmix` command
 * and the worker script are bundles of their own, and a module given to them
 * with --algorithm-module or `algorithmModules` registers through the package
 * it imports. The built-in descriptors stay each copy's own (they hold that
 * copy's classes and WASM instance).
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { fromMatrixData, type Matrix, type MatrixData } from '../../data/matrix.js';
import { guardRead, isArray, readArray, readOptions } from '../../validate.js';
import { FEATURES, type Feature } from '../../wasm/modules.js';
import type { ClientRole, Protocol, ServerRole } from '../runtime/roles.js';

export { matrixData, type MatrixData } from '../../data/matrix.js';

/** A command-line option of `fedmix server` or `fedmix client`, declared as the commands declare theirs (ts/cli/args.ts). */
export interface CliOption {
  type: 'int' | 'number' | 'string' | 'flag' | 'range';
  help: string;
  default?: number | string | boolean | [number, number];
  /** for 'string': the accepted values */
  choices?: readonly string[];
  /** a one-letter alias, -x */
  short?: string;
}

/** The parsed command line, by option name. */
export type CliValues = Record<string, number | string | boolean | [number, number] | undefined>;

/** A table read from a data file (CSV, Arrow IPC or Parquet), as a client's CLI part may read it. */
export interface CliTable {
  /** the index of a column by name (throws naming the columns when there is none) */
  column(name: string): number;
  /** a column's values as text */
  texts(j: number): readonly string[];
}

/** What the command gives an algorithm's CLI part while it reads the command line. */
export interface CliContext {
  /** the seed of the role's random choices (--seed; a client's is derived from it and its --id) */
  seed: number;
  /** the option's value, or an InvalidParameterError "--NAME is required" */
  required<T>(name: string): T;
  /** a comma-separated option as its items (undefined when not given) */
  list(name: string): string[] | undefined;
}

export interface CliClientContext extends CliContext {
  /** reads a data file as the command does (--delimiter and the like apply) */
  readTable(path: string): Promise<CliTable>;
  /** reads a data file's rows: its numeric columns, or --columns, less --drop and --label */
  readRows(path: string): Promise<Matrix>;
}

/** A client's data as the CLI reads it from files and options. */
export interface CliClientData {
  data: Matrix;
  validation?: Matrix;
  labels?: Int32Array;
}

/** The part of one command (`fedmix server` or `fedmix client`) an algorithm declares. */
export interface CliPart {
  /** its own options (merged with the other algorithms' under the same name when they agree on type, default and choices) */
  options?: Readonly<Record<string, CliOption>>;
  /** the role's raw options from the command line (before the descriptor's options check); default {} */
  read?(o: CliValues, ctx: CliContext): unknown;
  /** a warning the command prints on stderr before it runs, if any */
  warning?(o: CliValues): string | undefined;
}

export interface CliClientPart extends CliPart {
  /** the client's data (default: the rows of --data, --validation, and the class labels of --label) */
  data?(o: CliValues, ctx: CliClientContext): Promise<CliClientData>;
}

/** What a client factory is given: the client's id, its data and its checked options. */
export interface ClientInput<ClientOptions> {
  id: string;
  data: Matrix;
  validation?: Matrix;
  labels?: Int32Array;
  options: ClientOptions;
}

/**
 * One algorithm: everything a runtime, a transport or a command needs to run
 * it by name. `ServerOptions`/`ClientOptions` are the options as checked
 * (resolved); `Result` is what the server role's result() gives, `Saved` what
 * its artifact loads back as.
 */
export interface AlgorithmDescriptor<Name extends string = string, ServerOptions = unknown, ClientOptions = unknown, Result = unknown, Saved = unknown> {
  readonly name: Name;
  /** the messages its roles exchange (defineProtocol) */
  readonly protocol: Protocol;
  /** one line, for --help and the docs' tables */
  readonly summary: string;
  /** the WASM feature modules its roles may call (init({ features }) with these runs it); [] for the core alone */
  readonly wasmFeatures: readonly Feature[];
  readonly server: {
    /** checks the server options (a check function or a schema's parse): what create() takes */
    options(raw: unknown): ServerOptions;
    create(options: ServerOptions): ServerRole<unknown, Result>;
  };
  readonly client: {
    /** checks a client's options (from its spec) */
    options(raw: unknown): ClientOptions;
    create(input: ClientInput<ClientOptions>): ClientRole & { dispose?(): void };
  };
  readonly artifact: {
    /** the server's result as JSON a file can hold (refuses what is not this algorithm's result) */
    save(result: Result): unknown;
    /** a saved artifact (the object or its text) read back and checked */
    load(json: unknown): Saved;
    /**
     * the model a loaded result holds, as its class (a GaussianMixture, a
     * Network, ...), for loadModel(); none when the result is not one model
     * (communities, matchings). It may be the result itself.
     */
    model?(saved: Saved): unknown;
  };
  /**
   * How its server role's state is saved between rounds and restored, for a
   * run's checkpoint (../runtime/checkpoint.ts). save(server) is called after
   * a complete round (as RunHooks.onCheckpoint sees the server) and gives
   * JSON-safe data: the model so far, the round counters, the generators'
   * states, whatever replies are checked against. restore(options, saved)
   * rebuilds, from the checked server options, a server role that continues
   * exactly as the saved one would; saved data that is not this algorithm's
   * (another algorithm's, other shapes, NaN, cut short) is an
   * InvalidParameterError naming the field. Without it, the algorithm's runs
   * cannot be resumed (saying so is an InvalidParameterError).
   */
  readonly state?: {
    save(server: ServerRole<unknown, Result>): unknown;
    restore(options: ServerOptions, saved: unknown): ServerRole<unknown, Result>;
  };
  /** its options of `fedmix server` and `fedmix client` (none: it takes no option there) */
  readonly cli?: { readonly server?: CliPart; readonly client?: CliClientPart };
}

/** A descriptor of any algorithm, as the registry holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyAlgorithm = AlgorithmDescriptor<string, any, any, any, any>;

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const DESCRIPTOR_KEYS = ['name', 'protocol', 'summary', 'wasmFeatures', 'server', 'client', 'artifact', 'state', 'cli'] as const;
const OPTION_TYPES = ['int', 'number', 'string', 'flag', 'range'];

function requireFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw new InvalidParameterError(`${name} must be a function, got ${formatValue(value)}`);
}

function checkPart<K extends string>(name: string, given: unknown, functions: readonly K[], optional: readonly K[] = []): Record<K, unknown> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`${name} must be an object { ${functions.join(', ')} }, got ${formatValue(given)}`);
  const part = readOptions(given as Record<K, unknown>, [...functions, ...optional], name) as Record<K, unknown>;
  for (const f of functions) requireFunction(`${name}.${f}`, part[f]);
  return part;
}

function checkCliPart(name: string, given: unknown, client: boolean): CliClientPart | undefined {
  if (given === undefined) return undefined;
  const keys = client ? (['options', 'read', 'warning', 'data'] as const) : (['options', 'read', 'warning'] as const);
  const part = checkPart(name, given, [], keys) as Record<string, unknown>;
  for (const f of keys) if (f !== 'options' && part[f] !== undefined) requireFunction(`${name}.${f}`, part[f]);
  if (part.options !== undefined) {
    if (part.options === null || typeof part.options !== 'object') throw new InvalidParameterError(`${name}.options must be a record of options by name, got ${formatValue(part.options)}`);
    const options = readOptions(part.options as Record<string, unknown>, undefined, `${name}.options`);
    for (const [option, spec] of Object.entries(options)) {
      if (!/^[a-z][a-z0-9-]*$/.test(option)) throw new InvalidParameterError(`${name}.options: "${option}" is not an option name (lower case, digits and dashes)`);
      const s = spec === null || typeof spec !== 'object' ? undefined : (readOptions(spec as CliOption, ['type', 'help', 'default', 'choices', 'short'], `${name}.options.${option}`) as CliOption);
      if (!s || !OPTION_TYPES.includes(s.type) || typeof s.help !== 'string') {
        throw new InvalidParameterError(`${name}.options.${option} must be { type: ${OPTION_TYPES.join(' | ')}, help, default?, choices? }, got ${formatValue(spec)}`);
      }
      if (s.choices !== undefined && !(isArray(`${name}.options.${option}.choices`, s.choices) && readArray('choices', s.choices).every((c) => typeof c === 'string'))) {
        throw new InvalidParameterError(`${name}.options.${option}.choices must be an array of strings, got ${formatValue(s.choices)}`);
      }
      options[option] = Object.freeze({ ...s });
    }
    part.options = Object.freeze(options);
  }
  return Object.freeze(part) as CliClientPart;
}

/**
 * A descriptor, checked and frozen: a name (lower case letters, digits, - and
 * _), a protocol, a one-line summary, the WASM features it needs, server and
 * client factories with their option checks, the artifact's save and load,
 * and optionally its CLI options. A malformed one is an InvalidParameterError
 * saying which field.
 */
export function defineAlgorithm<const Name extends string, ServerOptions, ClientOptions, Result, Saved>(
  descriptor: AlgorithmDescriptor<Name, ServerOptions, ClientOptions, Result, Saved>,
): AlgorithmDescriptor<Name, ServerOptions, ClientOptions, Result, Saved> {
  if (descriptor === null || typeof descriptor !== 'object') throw new InvalidParameterError(`an algorithm descriptor must be an object { ${DESCRIPTOR_KEYS.join(', ')} }, got ${formatValue(descriptor)}`);
  const d = readOptions(descriptor, DESCRIPTOR_KEYS, 'the algorithm descriptor') as Partial<AlgorithmDescriptor<Name, ServerOptions, ClientOptions, Result, Saved>>;
  if (typeof d.name !== 'string' || !NAME.test(d.name)) throw new InvalidParameterError(`an algorithm's name must be lower case letters, digits, - and _ (at most 64), got ${formatValue(d.name)}`);
  const what = `algorithm ${d.name}`;
  const protocolOk = guardRead(`${what}'s protocol`, () => d.protocol !== null && typeof d.protocol === 'object' && typeof d.protocol.name === 'string' && d.protocol.exchanges instanceof Map);
  if (!protocolOk) throw new InvalidParameterError(`${what}'s protocol must be what defineProtocol returns, got ${formatValue(d.protocol)}`);
  if (typeof d.summary !== 'string' || d.summary.trim() === '' || /[\r\n]/.test(d.summary)) throw new InvalidParameterError(`${what}'s summary must be one line of text, got ${formatValue(d.summary)}`);
  const features = isArray(`${what}'s wasmFeatures`, d.wasmFeatures) ? readArray(`${what}'s wasmFeatures`, d.wasmFeatures, FEATURES.length) : undefined;
  if (!features || features.some((f) => !FEATURES.includes(f as Feature))) {
    throw new InvalidParameterError(`${what}'s wasmFeatures must list feature modules among ${FEATURES.map((f) => `'${f}'`).join(', ')} ([] for the core alone), got ${formatValue(d.wasmFeatures)}`);
  }
  const server = checkPart(`${what}'s server`, d.server, ['options', 'create'] as const);
  const client = checkPart(`${what}'s client`, d.client, ['options', 'create'] as const);
  const artifact = checkPart(`${what}'s artifact`, d.artifact, ['save', 'load'] as const, ['model'] as const);
  if (artifact.model !== undefined) requireFunction(`${what}'s artifact.model`, artifact.model);
  const state = d.state === undefined ? undefined : checkPart(`${what}'s state`, d.state, ['save', 'restore'] as const);
  let cli: AlgorithmDescriptor['cli'];
  if (d.cli !== undefined) {
    const c = checkPart(`${what}'s cli`, d.cli, [], ['server', 'client'] as const);
    cli = Object.freeze({ server: checkCliPart(`${what}'s cli.server`, c.server, false), client: checkCliPart(`${what}'s cli.client`, c.client, true) });
  }
  return Object.freeze({
    name: d.name,
    protocol: d.protocol!,
    summary: d.summary,
    wasmFeatures: Object.freeze([...(features as Feature[])]),
    server: Object.freeze(server),
    client: Object.freeze(client),
    artifact: Object.freeze(artifact),
    ...(state ? { state: Object.freeze(state) } : {}),
    ...(cli ? { cli } : {}),
  }) as AlgorithmDescriptor<Name, ServerOptions, ClientOptions, Result, Saved>;
}

/** This copy's built-in algorithms (./built-in.ts fills it), in their order. */
const builtIn = new Map<string, AnyAlgorithm>();

/** The user's algorithms, shared by every copy of fedmix in this realm. */
const USER_KEY = Symbol.for('fedmix.algorithms');
function userAlgorithms(): Map<string, AnyAlgorithm> {
  const g = globalThis as { [USER_KEY]?: Map<string, AnyAlgorithm> };
  return (g[USER_KEY] ??= new Map());
}

/** Adds a built-in descriptor (./built-in.ts, once per copy of fedmix). @internal */
export function registerBuiltIn(d: AnyAlgorithm): void {
  if (builtIn.has(d.name)) throw new InvalidParameterError(`the built-in algorithm ${d.name} is listed twice`);
  builtIn.set(d.name, d);
}

/**
 * Registers an algorithm (checked as defineAlgorithm checks it) under its
 * name, for every copy of fedmix in this realm: makeClient, makeServer,
 * serve(), the worker lanes and the CLI then run it by name. A name already
 * registered is refused.
 */
export function registerAlgorithm<D extends AnyAlgorithm>(descriptor: D): D {
  const d = defineAlgorithm(descriptor);
  if (builtIn.has(d.name) || userAlgorithms().has(d.name)) {
    throw new InvalidParameterError(`an algorithm named ${d.name} is already registered (${builtIn.has(d.name) ? 'a built-in one' : 'by registerAlgorithm'}); choose another name`);
  }
  userAlgorithms().set(d.name, d);
  return d as D;
}

/** Every registered algorithm: the built-in ones, then the user's in the order registered. */
export function algorithms(): readonly AnyAlgorithm[] {
  return [...builtIn.values(), ...[...userAlgorithms().values()].filter((d) => !builtIn.has(d.name))];
}

/** The names of every registered algorithm, in algorithms()'s order. */
export function algorithmNames(): string[] {
  return algorithms().map((d) => d.name);
}

/** The descriptor registered under `name`; an InvalidParameterError listing the registered names when there is none. */
export function algorithm(name: unknown): AnyAlgorithm {
  const d = typeof name === 'string' ? (builtIn.get(name) ?? userAlgorithms().get(name)) : undefined;
  if (!d) throw new InvalidParameterError(`algorithm must be one of ${algorithmNames().join(', ')}, got ${formatValue(name)}`);
  return d;
}

/** What a client is made of: its algorithm, id, rows and options. A spec is structured-cloneable (it crosses to workers as is). */
export interface ClientSpec<Name extends string = string> {
  algorithm: Name;
  id: string;
  data: MatrixData;
  /** rows held out for the algorithm's own scoring (e.g. of a hyperparameter's candidates) */
  validation?: MatrixData;
  /** a label per row (classes, tasks), for the algorithms that read them */
  labels?: Int32Array;
  options?: Record<string, unknown>;
}

/** The client role a spec describes, made by its algorithm's descriptor. */
export function makeClient(given: ClientSpec): ClientRole & { dispose(): void } {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`a client spec must be { algorithm, id, data, options? }, got ${formatValue(given)}`);
  const spec = readOptions(given, ['algorithm', 'id', 'data', 'validation', 'labels', 'options'], 'spec') as ClientSpec;
  const data = fromMatrixData(spec.data);
  const d = algorithm(spec.algorithm);
  const options: unknown = d.client.options(spec.options ?? {});
  const role = d.client.create({ id: spec.id, data, validation: spec.validation && fromMatrixData(spec.validation), labels: spec.labels, options });
  if (typeof guardRead('the client role', () => role.dispose) !== 'function') {
    // a role with nothing to free: the lanes and commands call dispose() on every client all the same
    if (!Object.isExtensible(role)) throw new InvalidParameterError(`algorithm ${d.name}'s client.create made a role with no dispose() that cannot take one; give it dispose()`);
    Object.defineProperty(role, 'dispose', { value: () => undefined, configurable: true });
  }
  return role as ClientRole & { dispose(): void };
}

/** The server role of an algorithm, with its own options. */
export function makeServer(name: string, options: unknown): ServerRole {
  const d = algorithm(name);
  return d.server.create(d.server.options(options));
}

/** What a server produced, as JSON a file can hold (a model's toJSON(), with how it was made). */
export function resultJson(name: string, result: unknown): unknown {
  const d = algorithm(name);
  // a result object is read once here; what it holds cannot throw past this
  return guardRead('model', () => d.artifact.save(result));
}

/** A saved artifact (what resultJson made, or its text) read back as its algorithm's result. */
export function loadResult(name: string, json: unknown): unknown {
  return algorithm(name).artifact.load(json);
}
