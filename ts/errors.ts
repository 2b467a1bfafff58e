/**
 * Every error fedmix throws is a FedmixError; the subclass (and `code`) says
 * what kind of problem it is, the message says what to change.
 */
import { keepClassName } from './class-name.js';

export type FedmixErrorCode = 'INVALID_DATA' | 'INVALID_PARAMETER' | 'INVALID_MESSAGE' | 'FEDERATION' | 'NUMERICAL' | 'NOT_FITTED' | 'PRIVACY_BUDGET' | 'WASM' | 'SECURE_AGGREGATION' | 'ARROW_NOT_LOADED';

export class FedmixError extends Error {
  readonly code: FedmixErrorCode;
  constructor(code: FedmixErrorCode, message: string) {
    // a message that is not a string (a caller's value) is formatted, not coerced: coercion can throw
    super(typeof message === 'string' ? message : formatValue(message));
    this.code = code;
    this.name = new.target.name;
  }
}

/** The data cannot be used as given: NaN/Inf, empty, wrong shape, too few rows. */
export class InvalidDataError extends FedmixError {
  constructor(message: string) {
    super('INVALID_DATA', message);
  }
}

/** An option or initial parameter is out of range, of the wrong type or shape. */
export class InvalidParameterError extends FedmixError {
  constructor(message: string) {
    super('INVALID_PARAMETER', message);
  }
}

/**
 * A federated message that cannot be accepted: malformed envelope, wrong shapes,
 * NaN/Inf, negative counts or weights, a covariance that is not positive
 * definite. The receiving role rejects it without changing its state.
 */
export class InvalidMessageError extends FedmixError {
  /**
   * Which check failed, without the sender's values or its id (e.g. "u has a
   * negative entry"), where `message` gives them: what a private aggregator
   * passes on. Undefined when the message holds nothing of the sender's data.
   */
  readonly check: string | undefined;
  constructor(message: string, check?: string) {
    super('INVALID_MESSAGE', message);
    this.check = check === undefined || typeof check === 'string' ? check : formatValue(check);
  }
}

/**
 * A client was sent a request of a run other than the one it joined (a dead
 * run's, kept for it by a broker, or another server's on the same
 * federation): it does not answer it, so that the other run cannot move its
 * state. `run` is the request's run id, `joined` the client's.
 */
export class OtherRunError extends InvalidMessageError {
  constructor(
    message: string,
    readonly run: string,
    readonly joined: string,
  ) {
    super(message);
  }
}

/**
 * What one client contributed made a round's aggregate fail (a numerical
 * breakdown its removal cures), found by the server while aggregating: the
 * server's state is unchanged, and the runtime excludes `client` as it would
 * for an invalid reply, then aggregates the others again.
 */
export class ContributionError extends InvalidMessageError {
  constructor(
    readonly client: string,
    message: string,
    check?: string,
  ) {
    super(message, check);
  }
}

/**
 * A federation cannot go on: too few clients joined or answered a round, a
 * client failed under the 'fail' policy, a transport closed. The server's
 * state is as it was after the last complete round.
 */
export class FederationError extends FedmixError {
  constructor(message: string) {
    super('FEDERATION', message);
  }
}

/**
 * A broker could not be started or stopped: a port in use, a missing or
 * failing mosquitto, a configuration it refused. The message carries the
 * broker's own words (mosquitto's log) where there are any.
 */
export class BrokerError extends FederationError {}

/**
 * The broker's TLS certificate is not trusted (no trusted CA signed it, or it
 * names another host): the connection is refused before any password is sent,
 * and trying again cannot change that. Trust the CA that signed it (join's
 * `ca`, `fedmix client --tls-ca`).
 */
export class UntrustedBrokerError extends FederationError {}

/**
 * A client refused a request because of its own privacy ledger
 * (runtime/client-budget.ts): answering would take what it has spent past its
 * budget, or the request declares a privacy step the client cannot account
 * (or none, where the client requires one). Nothing was spent; the client
 * stays usable for requests that fit.
 */
export class PrivacyBudgetError extends FedmixError {
  constructor(message: string) {
    super('PRIVACY_BUDGET', message);
  }
}

/**
 * Secure aggregation cannot release a correct sum: a stage left fewer than
 * the threshold of clients, a client's secret could not be reconstructed from
 * enough valid shares, or a client was asked for what would unmask one of its
 * neighbours. Never a wrong sum instead: the round's sum is not released.
 */
export class SecureAggregationError extends FedmixError {
  constructor(message: string) {
    super('SECURE_AGGREGATION', message);
  }
}

/** Fitting broke down numerically (a singular covariance, a non-finite likelihood). */
export class NumericalError extends FedmixError {
  constructor(message: string) {
    super('NUMERICAL', message);
  }
}

/** A method that needs a fitted model was called before fit() or after dispose(). */
export class NotFittedError extends FedmixError {
  constructor(message: string) {
    super('NOT_FITTED', message);
  }
}

/**
 * A method that needs a fitted model was called after dispose() freed it: a
 * NotFittedError (fit again, or load, to use the object), told apart so the
 * message says what happened.
 */
export class DisposedError extends NotFittedError {}

/**
 * What a model's method throws when it has no fitted state: a DisposedError
 * after dispose(), else a NotFittedError. `remedy` says how to get one ("call fit(X)").
 */
export function notFitted(model: string, disposed: boolean, remedy: string): NotFittedError {
  return disposed
    ? new DisposedError(`this ${model} was disposed (dispose() freed its memory); ${remedy} to use it again`)
    : new NotFittedError(`this ${model} is not fitted yet; ${remedy} first`);
}

/** The WebAssembly core is not initialized, failed to load or trapped. */
export class WasmError extends FedmixError {
  constructor(message: string) {
    super('WASM', message);
  }
}

/**
 * apache-arrow, which fedmix loads on demand, is needed but not loaded (or
 * could not be): writing Arrow tables and reading IPC bytes need it; the
 * message names the call that loads it (await loadArrow()).
 */
export class ArrowNotLoadedError extends FedmixError {
  constructor(message: string) {
    super('ARROW_NOT_LOADED', message);
  }
}

/**
 * WASM memory cannot hold what a call needs: refused before the call by
 * TypeScript's estimate, or reported by the core, whose large allocations
 * fail with a status instead of a trap. Unlike after a trap the instance is
 * intact: every model made before it keeps working, and the same request
 * succeeds once memory is freed. The code stays 'WASM': like a trap it is the
 * machine's limit, not the input's fault, so nothing retells it as an input
 * error (restated) and federated runs do not blame a client's message for it
 * (a client host turns it into the client's refusal).
 */
export class WasmAllocationError extends WasmError {}

// an error's name (which new.target.name gives it) is its class's name, whatever a user's minifier does to the classes
for (const [cls, name] of [
  [FedmixError, 'FedmixError'],
  [InvalidDataError, 'InvalidDataError'],
  [InvalidParameterError, 'InvalidParameterError'],
  [InvalidMessageError, 'InvalidMessageError'],
  [ContributionError, 'ContributionError'],
  [OtherRunError, 'OtherRunError'],
  [FederationError, 'FederationError'],
  [BrokerError, 'BrokerError'],
  [UntrustedBrokerError, 'UntrustedBrokerError'],
  [PrivacyBudgetError, 'PrivacyBudgetError'],
  [SecureAggregationError, 'SecureAggregationError'],
  [NumericalError, 'NumericalError'],
  [NotFittedError, 'NotFittedError'],
  [DisposedError, 'DisposedError'],
  [WasmError, 'WasmError'],
  [WasmAllocationError, 'WasmAllocationError'],
  [ArrowNotLoadedError, 'ArrowNotLoadedError'],
] as const) {
  keepClassName(cls, name);
}

/**
 * Maps a failed status of the C ABI to its class, by the status's name in the
 * core's table (ErrorKind in fedmix-core; see ts/wasm/constants.ts).
 */
export function errorFromStatus(status: number, name: string | undefined, message: string): FedmixError {
  switch (name) {
    case 'invalid_data':
      return new InvalidDataError(message);
    case 'invalid_parameter':
      return new InvalidParameterError(message);
    case 'numerical':
      return new NumericalError(message);
    case 'allocation':
      return new WasmAllocationError(message);
    default:
      return new WasmError(`unexpected status ${status} from the WASM core: ${message}`);
  }
}

/**
 * `e` told again by `restate` when it is a fedmix error about the input (any
 * code but WASM: a trap or a failed allocation is the machine's, not the
 * input's, and stays as it is); anything else untouched. For catch blocks
 * that add context or turn a check's verdict into another kind of error.
 */
export function restated(e: unknown, restate: (error: FedmixError) => FedmixError): unknown {
  return e instanceof FedmixError && e.code !== 'WASM' ? restate(e) : e;
}

/** `e` as the same kind of error with `context` before its message (see restated). */
export function inContext(e: unknown, context: string): unknown {
  return restated(e, (x) => new (x.constructor as new (message: string) => FedmixError)(`${context}: ${x.message}`));
}

/** Longest text formatValue returns, and how deep and wide it looks into arrays and objects. */
const SHOWN_CHARS = 80;
const SHOWN_DEPTH = 2;
const SHOWN_ENTRIES = 4;

/**
 * A value as an error message shows it: at most 80 characters, two levels
 * and four entries deep, strings quoted (so that "5" and 5 differ), -0 as -0.
 * It never throws and runs no code of the value's: no toString, no getters
 * (property descriptors only), so a Proxy that throws on every trap, a
 * revoked one, a Symbol, a BigInt or a cyclic array all format. The one
 * formatter of values for messages (see DESIGN.md: every error a FedmixError).
 */
export function formatValue(value: unknown, maxChars = SHOWN_CHARS): string {
  let text: string;
  try {
    text = show(value, 0);
  } catch {
    text = 'an unreadable value';
  }
  return clip(text, maxChars);
}

/** What a caller's code threw (a getter, a Proxy trap), for a message: its message if it is an Error, else the value. */
export function formatThrown(thrown: unknown): string {
  try {
    if (thrown instanceof Error) {
      const m = Object.getOwnPropertyDescriptor(thrown, 'message');
      return typeof m?.value === 'string' ? clip(m.value, SHOWN_CHARS) : 'an Error';
    }
  } catch {
    // a Proxy around an Error: formatted as a value below
  }
  return formatValue(thrown);
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

function show(v: unknown, depth: number): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(clip(v, SHOWN_CHARS));
    case 'number':
      return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint': {
      // decimal text of a huge BigInt costs time and space; its size says enough
      const hex = v.toString(16).replace('-', '');
      return hex.length <= 24 ? `${v.toString()}n` : `a BigInt of ${hex.length * 4} bits`;
    }
    case 'symbol':
      return clip(Symbol.prototype.toString.call(v), SHOWN_CHARS);
    case 'undefined':
    case 'boolean':
      return String(v);
    case 'function':
      return 'a function';
    default:
      break;
  }
  if (v === null) return 'null';
  const o = v as object;
  if (ArrayBuffer.isView(o)) {
    const tag = Object.prototype.toString.call(o).slice(8, -1);
    const n = o instanceof DataView ? o.byteLength : (o as unknown as ArrayLike<unknown>).length;
    return `${tag}(${n})${depth < SHOWN_DEPTH && n > 0 ? ` ${entries(o, n, depth)}` : ''}`;
  }
  if (Array.isArray(o)) {
    const n = Object.getOwnPropertyDescriptor(o, 'length')?.value as number;
    return depth < SHOWN_DEPTH || n === 0 ? entries(o, n, depth) : `an array of ${n}`;
  }
  const name = constructorName(o);
  const keys = depth >= SHOWN_DEPTH ? [] : Object.keys(o);
  if (keys.length === 0 && name !== 'Object') return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
  if (depth >= SHOWN_DEPTH) return 'an object';
  const parts = keys.slice(0, SHOWN_ENTRIES).map((k) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${property(o, k, depth)}`);
  if (keys.length > SHOWN_ENTRIES) parts.push(`… ${keys.length - SHOWN_ENTRIES} more`);
  const body = parts.length ? `{ ${parts.join(', ')} }` : '{}';
  return name === 'Object' ? body : `${name} ${body}`;
}

/** [a, b, …] of an array or typed array of n entries, from descriptors (holes show as <empty>). */
function entries(o: object, n: number, depth: number): string {
  const parts: string[] = [];
  for (let i = 0; i < Math.min(n, SHOWN_ENTRIES); i++) parts.push(property(o, String(i), depth, '<empty>'));
  if (n > SHOWN_ENTRIES) parts.push(`… ${n} values`);
  return `[${parts.join(', ')}]`;
}

function property(o: object, key: string, depth: number, missing = 'undefined'): string {
  let d: PropertyDescriptor | undefined;
  try {
    d = Object.getOwnPropertyDescriptor(o, key);
  } catch {
    return '<unreadable>';
  }
  if (d === undefined) {
    // typed arrays' elements are not own properties of a Proxy's target; of a real one they are
    return missing;
  }
  if (!('value' in d)) return '<getter>';
  try {
    return show(d.value, depth + 1);
  } catch {
    return '<unreadable>';
  }
}

function constructorName(o: object): string {
  try {
    const proto = Object.getPrototypeOf(o);
    if (proto === null) return 'Object';
    const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor')?.value;
    const name = typeof ctor === 'function' ? Object.getOwnPropertyDescriptor(ctor, 'name')?.value : undefined;
    return typeof name === 'string' && name !== '' ? clip(name, 40) : 'Object';
  } catch {
    return 'Object';
  }
}

/** `x instanceof FedmixError`, asked without letting a Proxy's getPrototypeOf trap throw. */
export function isFedmixError(x: unknown): x is FedmixError {
  try {
    return x instanceof FedmixError;
  } catch {
    return false;
  }
}
