/**
 * Checks shared by every public entry point, so that each bad option gets the
 * same kind of message: its name, what it got, what it needs. Values the
 * caller passed are read here, under guard: a getter or a Proxy that throws
 * becomes an InvalidParameterError naming what was being read, and sizes are
 * checked before anything is allocated for them.
 */
import { isVectorNamed, vectorToArray, vectorToFloat64 } from './data/arrow-vector.js';
import { formatValue, InvalidParameterError } from './errors.js';
import { guardRead, MAX_VALUES, readFailure, type ErrorClass } from './read-guard.js';

export { guardRead, MAX_VALUES, type ErrorClass };

/**
 * The documented caps on sizes and work (README, "Limits"). Integers that
 * cross into the core are checked against them before they cross, so none
 * wraps at the wasm32 boundary (2^32) and none asks for work or memory that
 * cannot be had; each refusal is an InvalidParameterError naming the cap.
 */
export const LIMITS = Object.freeze({
  /** values in one Matrix, one array, one result (2^28 - 1: one WASM allocation) */
  values: MAX_VALUES,
  /** GaussianMixture nComponents, KMeans nClusters, PCA nComponents, selectGaussianMixture kMax */
  components: 2 ** 16,
  /** initializations of one fit (GaussianMixture and KMeans nInit) */
  nInit: 1000,
  /** iterations of one fit (maxIter) */
  maxIter: 1_000_000,
  /** models one selectGaussianMixture call fits: (kMax - kMin + 1) x covariance types */
  candidates: 1024,
  /** makeBlobs nClusters (placing centers apart costs nClusters^2 x nFeatures) */
  blobClusters: 10_000,
  /** rows a partition deals (labels, iid's row count, rows dealt in all): its JS arrays must fit the heap */
  partitionRows: 2 ** 26,
  /** clients x classes of one partition (its buckets) */
  partitionCells: 2 ** 24,
  /** the population of Rng.choice (indices come back as Int32) */
  population: 2 ** 31 - 1,
  /** a timeout in seconds (about 24.8 days): timers take at most 2^31 - 1 ms, and fire at once past it */
  timeoutSeconds: Math.floor((2 ** 31 - 1) / 1000),
  /** features of a federated model (as the wire's GMM parameters allow) */
  features: 1 << 20,
  /** communication rounds, EM rounds */
  rounds: 1_000_000,
  /** local steps per round */
  localSteps: 10_000,
  /** restarts of a federated initialization */
  restarts: 1_000,
  /** clients of one in-process federation (a one-call function's list, an in-process transport): each is an object in this heap */
  clients: 2 ** 20,
  /** anything counted in rows or clients (a signed 32-bit count) */
  count: 2 ** 31 - 1,
  /** values in one federated model's parameters (weights, means, covariances): 2^27 doubles, 1 GiB */
  modelValues: 2 ** 27,
  /** layers of a network (weight matrices: widths minus one) */
  networkLayers: 256,
  /** units in one layer of a network, the input and output included */
  layerWidth: 1 << 20,
  /** parameters of a network: 2^27 f32 (512 MiB; with gradients and Adam's moments 2 GiB of WASM memory's 4) */
  networkParameters: 2 ** 27,
  /** clients (nodes) of one graph of clients */
  graphNodes: 2 ** 20,
  /** links (edges) of one graph of clients */
  graphEdges: 2 ** 22,
});

/** Deepest nesting of number arrays read (a (k, d, d) covariance is 3 deep). */
export const MAX_NESTING = 8;


/**
 * What an integer option must be, as its error message says it: "an integer
 * in [min, max]", or "an integer >= min" when max is 2^53 - 1 and the value
 * is not above it (past 2^53 "an integer >= min" would not say what is wrong).
 * The one wording of requireInteger and of the option schemas' atoms.
 */
export function integerNeed(min: number, max: number, value: unknown): string {
  const unbounded = max === Number.MAX_SAFE_INTEGER && !(typeof value === 'number' && value > max);
  return unbounded ? `an integer >= ${min}` : `an integer in [${min}, ${max}]`;
}

export const isIntegerIn = (value: unknown, min: number, max: number): value is number => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

export function requireInteger(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!isIntegerIn(value, min, max)) throw new InvalidParameterError(`${name} must be ${integerNeed(min, max, value)}, got ${formatValue(value)}`);
  return value;
}

export const isNumberAtLeast = (value: unknown, min: number): value is number => typeof value === 'number' && Number.isFinite(value) && value >= min;

export function requireNumber(name: string, value: unknown, min: number): number {
  if (!isNumberAtLeast(value, min)) throw new InvalidParameterError(`${name} must be a finite number >= ${min}, got ${formatValue(value)}`);
  return value;
}

export const isPositive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

export function requirePositive(name: string, value: unknown): number {
  if (!isPositive(value)) throw new InvalidParameterError(`${name} must be a finite number > 0, got ${formatValue(value)}`);
  return value;
}

/** The range of a timeout in seconds, as its message says it. */
export const secondsNeed = (min: number): string => `a number of seconds in ${min === 0 ? '[0' : '(0'}, ${LIMITS.timeoutSeconds}]`;
export const isSeconds = (value: unknown, min: number): value is number => typeof value === 'number' && value >= min && value <= LIMITS.timeoutSeconds;

/** A timeout in seconds: a finite number > 0 and at most LIMITS.timeoutSeconds (`min` 0 allows none). */
export function requireSeconds(name: string, value: unknown, min = Number.MIN_VALUE): number {
  if (!isSeconds(value, min)) throw new InvalidParameterError(`${name} must be ${secondsNeed(min)}, got ${formatValue(value)}`);
  return value;
}

export function requireBoolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw new InvalidParameterError(`${name} must be true or false, got ${formatValue(value)}`);
  return value;
}

/** The allowed strings as a message lists them: 'a', 'b'. */
export const oneOfNeed = (allowed: readonly string[]): string => `one of ${allowed.map((a) => `'${a}'`).join(', ')}`;

export function requireOneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidParameterError(`${name} must be ${oneOfNeed(allowed)}, got ${formatValue(value)}`);
  }
  return value as T;
}

/**
 * Array.isArray of something the caller passed, asked under guardRead: on a
 * revoked Proxy Array.isArray throws a TypeError, which becomes an `Err`
 * naming `name` (as every other read of a caller's value does).
 */
export function isArray(name: string, value: unknown, Err: ErrorClass = InvalidParameterError): value is readonly unknown[] {
  return guardRead(name, () => Array.isArray(value), Err);
}

/**
 * The options object of a public call, read once: undefined gives {}, anything
 * but an object is an InvalidParameterError, and each of `keys` (by default
 * every own enumerable key) is read here, under guardRead, so later code sees
 * plain values that cannot change or throw. A key not listed (with a value
 * other than undefined) is an InvalidParameterError naming it and the known ones.
 */
export function readOptions<O extends object, K extends keyof O & string = keyof O & string>(value: O | undefined, keys?: readonly K[], name = 'options'): Partial<Pick<O, K>> {
  return readObject(value, keys, name, true);
}

/**
 * readOptions for a record of data rather than options (a client's { X, labels },
 * a model's JSON, a message): the listed keys are read the same way, others
 * are dropped, since such records legitimately carry more (makeBlobs' centers,
 * a newer version's fields).
 */
export function readRecord<O extends object, K extends keyof O & string = keyof O & string>(value: O | undefined, keys: readonly K[], name: string): Partial<Pick<O, K>> {
  return readObject(value, keys, name, false);
}

function readObject<O extends object, K extends keyof O & string>(value: O | undefined, keys: readonly K[] | undefined, name: string, strict: boolean): Partial<Pick<O, K>> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') {
    throw new InvalidParameterError(`${name} must be an object${keys ? ` like { ${keys.slice(0, 2).join(', ')} }` : ''}, got ${formatValue(value)}`);
  }
  const names = keys ?? (guardRead(name, () => Object.keys(value)) as K[]);
  if (keys && strict) {
    const own = guardRead(name, () => Object.keys(value));
    // strict, as scikit-learn's keyword arguments: a misspelt option is an error, not a silent default
    const unknown = own.filter((key) => !(keys as readonly string[]).includes(key) && guardRead(`${name}.${key}`, () => (value as Record<string, unknown>)[key]) !== undefined);
    if (unknown.length > 0) {
      const u = unknown[0]!;
      const near = closestName(u, keys);
      throw new InvalidParameterError(
        `${name} has an unknown option ${formatValue(u)}${unknown.length > 1 ? ` (and ${unknown.length - 1} more)` : ''}${near ? `; did you mean ${formatValue(near)}?` : '.'} Known options: ${keys.join(', ')}`,
      );
    }
  }
  const out: Partial<Pick<O, K>> = {};
  for (const key of names) {
    const v = guardRead(`${name}.${key}`, () => value[key]);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/**
 * The keys of an options interface T for readOptions, from a record naming
 * every one of them: the compiler then says when an option is added to T but
 * not here (which would make it an "unknown option").
 */
export function optionKeys<T extends object>(): (all: { [K in keyof Required<T> & string]: true }) => (keyof T & string)[] {
  return (all) => Object.keys(all) as (keyof T & string)[];
}

/** The name in `names` at most 2 edits from `given` (case aside), the nearest first; undefined when none is. */
function closestName(given: string, names: readonly string[]): string | undefined {
  const a = given.toLowerCase();
  let best: string | undefined;
  let bestCost = 3;
  for (const name of names) {
    const b = name.toLowerCase();
    if (Math.abs(a.length - b.length) >= bestCost) continue;
    // Levenshtein distance, one row at a time
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row;
    }
    if (prev[b.length]! < bestCost) {
      bestCost = prev[b.length]!;
      best = name;
    }
  }
  return best;
}

/** Whether a typed array's buffer was transferred away: it then reads as empty, and copying it throws a TypeError. */
export function isDetached(a: { slice(start: number, end: number): unknown }): boolean {
  try {
    a.slice(0, 0);
    return false;
  } catch {
    return true;
  }
}

/** `a` itself, unless its buffer was transferred away: then an `Err` naming `name` (copying it would throw a TypeError). */
export function requireAttached<T extends { slice(start: number, end: number): unknown }>(name: string, a: T, Err: ErrorClass = InvalidParameterError): T {
  if (isDetached(a)) throw new Err(`${name}'s ArrayBuffer was transferred (detached); pass data that stays with this thread`);
  return a;
}

/**
 * Whether `value` is a Float64Array, asked without running a Proxy trap
 * (`instanceof` alone runs getPrototypeOf, which a hostile Proxy makes throw).
 */
export function isFloat64Array(value: unknown): value is Float64Array {
  return ArrayBuffer.isView(value) && value instanceof Float64Array;
}

/**
 * The length of an array-like the caller passed (an array, typed array or
 * `{ length }` object), checked to be at most `max` before anything is
 * allocated for it.
 */
export function requireLength(name: string, value: unknown, max = MAX_VALUES, Err: ErrorClass = InvalidParameterError): number {
  const length = guardRead(
    `${name}.length`,
    () => (value !== null && typeof value === 'object' ? (value as { length?: unknown }).length : undefined),
    Err,
  );
  if (typeof length !== 'number') throw new Err(`${name} must be an array, got ${formatValue(value)}`);
  if (!Number.isSafeInteger(length) || length < 0 || length > max) {
    throw new Err(`${name} must hold at most ${max} values, got a length of ${formatValue(length)}`);
  }
  return length;
}

/**
 * The entries of an array-like the caller passed, copied into a plain array
 * (at most `max` of them). An Arrow vector of any version gives its values
 * (dictionary columns decoded, a null refused).
 */
export function readArray(name: string, value: unknown, max = MAX_VALUES, Err: ErrorClass = InvalidParameterError): unknown[] {
  if (isVectorNamed(value, name, Err)) return vectorToArray(name, value, max, Err);
  const n = requireLength(name, value, max, Err);
  const a = value as ArrayLike<unknown>;
  return guardRead(name, () => Array.from({ length: n }, (_, i) => a[i]), Err);
}

/**
 * A flat array of numbers (array, typed array or numeric Arrow vector) as a
 * Float64Array. Only the type is checked here; the core checks the values and
 * names the bad entry.
 */
export function requireVector(name: string, value: unknown, Err: ErrorClass = InvalidParameterError): Float64Array {
  if (isFloat64Array(value)) return value;
  if (isVectorNamed(value, name, Err)) return vectorToFloat64(name, value, Err);
  const n = requireLength(name, value, MAX_VALUES, Err);
  const a = value as ArrayLike<unknown>;
  const out = new Float64Array(n);
  guardRead(
    name,
    () => {
      for (let i = 0; i < n; i++) {
        const x = a[i];
        if (typeof x !== 'number') throw new Err(`${name} must be a flat array of numbers; ${name}[${i}] is ${formatValue(x)}`);
        out[i] = x;
      }
    },
    Err,
  );
  return out;
}

/** Nested number arrays or typed arrays, flattened row-major to a Float64Array. */
export type NumericArray = ArrayLike<number> | NumericArray[];

/**
 * Nested number arrays or typed arrays flattened row-major, at most
 * MAX_NESTING deep and MAX_VALUES values (checked as it goes, so a cyclic or
 * huge input stops early).
 */
export function flattenNumeric(name: string, value: NumericArray, Err: ErrorClass = InvalidParameterError): Float64Array {
  if (isFloat64Array(value)) return value;
  if (value === null || typeof value !== 'object') {
    throw new Err(`${name} must be a number array (nested arrays or typed arrays), got ${formatValue(value)}`);
  }
  let out = new Float64Array(64);
  let n = 0;
  const push = (x: number) => {
    if (n === out.length) {
      const grown = new Float64Array(Math.min(out.length * 2, MAX_VALUES));
      grown.set(out);
      out = grown;
    }
    out[n++] = x;
  };
  const walk = (v: unknown, path: string, depth: number): void => {
    if (typeof v === 'number') {
      if (n === MAX_VALUES) throw new Err(`${name} holds more than ${MAX_VALUES} values`);
      push(v);
      return;
    }
    if (v === null || typeof v !== 'object') {
      throw new Err(`${name} must contain only numbers (nested arrays or typed arrays); ${path} is ${formatValue(v)}`);
    }
    if (depth === MAX_NESTING) throw new Err(`${name} is nested more than ${MAX_NESTING} arrays deep at ${path}`);
    const len = requireLength(path, v, MAX_VALUES, Err);
    // isView first: it runs no Proxy trap, and instanceof on a real view runs none either
    if (ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array)) {
      if (n + len > MAX_VALUES) throw new Err(`${name} holds more than ${MAX_VALUES} values`);
      const t = v as unknown as ArrayLike<number>;
      for (let i = 0; i < len; i++) push(t[i]!);
      return;
    }
    const a = v as ArrayLike<unknown>;
    // guardRead's rule, inlined: no closure and no path string per element
    // unless an element throws or nests (a detector relays arrays of 10^5-10^6 numbers)
    for (let i = 0; i < len; i++) {
      let x: unknown;
      try {
        x = a[i];
      } catch (e) {
        throw readFailure(`${path}[${i}]`, e, Err);
      }
      if (typeof x === 'number') {
        if (n === MAX_VALUES) throw new Err(`${name} holds more than ${MAX_VALUES} values`);
        push(x);
      } else walk(x, `${path}[${i}]`, depth + 1);
    }
  };
  walk(value, name, 0);
  return out.slice(0, n);
}

/**
 * A seed as the two 32-bit halves the core takes. Without a seed, a fresh one
 * is drawn, so results vary from run to run (scikit-learn's random_state=None).
 */
export function seedParts(seed: number | undefined): [number, number] {
  if (seed === undefined) {
    return [(Math.random() * 2 ** 32) >>> 0, (Math.random() * 2 ** 21) >>> 0];
  }
  const s = requireInteger('seed', seed, 0);
  return [s % 2 ** 32 >>> 0, Math.floor(s / 2 ** 32)];
}
