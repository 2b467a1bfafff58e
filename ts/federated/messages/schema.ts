/**
 * Messages declared once: each kind's payload is a valibot schema, from which
 * come both its TypeScript type and its structural check on receipt. Numeric
 * arrays are declared as typed arrays (`f64Array()` ...): they may arrive as
 * JSON arrays or as Arrow IPC vectors, and always come out as typed arrays, so
 * decoding either encoding gives the same object. Checks that depend on other
 * fields or on the receiver's state (lengths of K x d, counts within bounds)
 * are in checks.ts and in the receiving roles.
 */
import * as v from 'valibot';
import { formatThrown, formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { guardRead, readArray, readOptions, requireInteger } from '../../validate.js';
import { allFinite } from './codec.js';
import { checkEnvelope, message, type Message } from './envelope.js';
import { nonZeros } from './sparse.js';

export type AnySchema = v.GenericSchema<unknown, unknown>;

type TypedArray = Float64Array | Float32Array | Int32Array | Uint32Array | Uint8Array;
type TypedArrayConstructor<T extends TypedArray> = { new (n: number): T; readonly name: string };

const describe = (x: unknown): string => formatValue(x);

/**
 * A numeric array field: the typed array `T` (binary wire, or in process) or a
 * plain array of numbers (JSON wire), checked element by element in one pass
 * and returned as a `T`. Floating-point values must be finite; integer types
 * take whole numbers within their range.
 */
function typedArray<T extends TypedArray>(type: TypedArrayConstructor<T>, element: (x: number) => boolean, need: string): v.GenericSchema<ArrayLike<number>, T> {
  let problem = '';
  const accepts = (input: unknown): boolean => {
    if (input instanceof type) {
      // the common case first: floats all finite, in one tight loop (over the non-zeros only, when it came sparse)
      if (element === finite && finiteAt(input, nonZeros(input))) return true;
      for (let i = 0; i < input.length; i++) {
        if (!element(input[i]!)) return ((problem = `[${i}] is ${input[i]}; ${need}`), false);
      }
      return true;
    }
    if (!Array.isArray(input)) return ((problem = ` must be an array of numbers, got ${Array.isArray(input) ? 'an array' : input === null ? 'null' : typeof input}`), false);
    for (let i = 0; i < input.length; i++) {
      const x: unknown = input[i];
      if (typeof x !== 'number' || !element(x)) return ((problem = `[${i}] is ${describe(x)}; ${need}`), false);
    }
    return true;
  };
  return v.pipe(
    v.custom<ArrayLike<number>>(accepts, () => problem),
    v.transform((input): T => {
      if (input instanceof type) return input as T;
      const out = new type(input.length);
      for (let i = 0; i < input.length; i++) out[i] = input[i]!;
      return out;
    }),
  );
}

const finite = (x: number) => Number.isFinite(x);

/** Whether the entries at `indices` (all of them when undefined) are finite. */
function finiteAt(a: ArrayLike<number>, indices: Uint32Array | undefined): boolean {
  if (!indices) return allFinite(a);
  let s = 0;
  for (let j = 0; j < indices.length; j++) s += a[indices[j]!]! * 0;
  return s === 0;
}
const int32 = (x: number) => Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31;
const uint32 = (x: number) => Number.isInteger(x) && x >= 0 && x < 2 ** 32;

/** Doubles: Float64Array out. */
export const f64Array = () => typedArray<Float64Array>(Float64Array, finite, 'values must be finite numbers');
/** Single-precision values (network parameters): Float32Array out. */
export const f32Array = () => typedArray<Float32Array>(Float32Array, finite, 'values must be finite numbers');
export const i32Array = () => typedArray<Int32Array>(Int32Array, int32, 'values must be 32-bit integers');
export const u32Array = () => typedArray<Uint32Array>(Uint32Array, uint32, 'values must be unsigned 32-bit integers');
/** Bytes (keys, ciphertexts, masked vectors): Uint8Array out. */
export const u8Array = () => typedArray<Uint8Array>(Uint8Array, (x) => Number.isInteger(x) && x >= 0 && x < 256, 'values must be bytes (0 to 255)');

/** A finite number. */
export const finiteNumber = () => v.custom<number>((x) => typeof x === 'number' && Number.isFinite(x), (i) => ` is ${describe(i.input)}; it must be a finite number`);

/** A whole number in [min, max] (max: 2^53 - 1, the largest whole number a double holds exactly, unless given). */
export const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) => {
  for (const [name, bound] of [['min', min], ['max', max]] as const) {
    if (typeof bound !== 'number' || !Number.isSafeInteger(bound) && bound !== Infinity && bound !== -Infinity) throw new InvalidParameterError(`wholeNumber's ${name} must be an integer, got ${formatValue(bound)}`);
  }
  return v.custom<number>(
    (x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= min && x <= max,
    (i) => {
      if (max !== Number.MAX_SAFE_INTEGER) return ` is ${describe(i.input)}; it must be a whole number in [${min}, ${max}]`;
      const huge = typeof i.input === 'number' && i.input > max;
      return ` is ${describe(i.input)}; it must be a whole number ${huge ? 'at most 2^53 - 1' : `>= ${min}`}`;
    },
  );
};

/** One of the given strings. */
export const oneOf = <const T extends readonly string[]>(given: T) => {
  const values = readArray('values', given) as unknown as T;
  if (values.length === 0 || values.some((s) => typeof s !== 'string')) throw new InvalidParameterError(`oneOf takes a non-empty array of strings, got ${formatValue(given)}`);
  return v.custom<T[number]>((x) => typeof x === 'string' && values.includes(x), (i) => ` is ${describe(i.input)}; it must be one of ${values.map((s) => JSON.stringify(s)).join(', ')}`);
};

export const flag = () => v.custom<boolean>((x) => typeof x === 'boolean', (i) => ` is ${describe(i.input)}; it must be true or false`);

/** An object with exactly these fields (unknown fields are refused: a message carries only what it declares). */
export const record = <const E extends v.ObjectEntries>(given: E) => {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`record takes an object of field schemas, got ${formatValue(given)}`);
  const entries = readOptions(given) as E;
  for (const [key, schema] of Object.entries(entries)) checkSchema(`field ${key}`, schema);
  return v.strictObject(entries, (i) => {
    if (i.expected === 'never') return ' is a field the message does not declare';
    // a declared field that is absent: the issue's path ends at its key
    if (i.input === undefined && (i.path?.length ?? 0) > 0) return ' is missing';
    return ` must be an object, got ${describe(i.input)}`;
  });
};

/** Whether `s` is a schema (what f64Array(), record() and the others make), asked without running a Proxy's traps. */
function checkSchema(name: string, s: unknown): void {
  const ok = guardRead(name, () => s !== null && typeof s === 'object' && (s as { kind?: unknown }).kind === 'schema' && typeof (s as { '~run'?: unknown })['~run'] === 'function');
  if (!ok) throw new InvalidParameterError(`${name} must be a schema (f64Array(), record({...}), ...), got ${formatValue(s)}`);
}

/** A list whose items follow `item`, at most `max` long. */
export const listOf = <S extends AnySchema>(item: S, max: number) => {
  checkSchema('item', item);
  requireInteger('max', max, 0);
  return v.pipe(
    v.array(item, (i) => ` must be an array, got ${describe(i.input)}`),
    v.maxLength(max, (i) => ` has ${(i.input as unknown[]).length} entries; at most ${max} are accepted`),
  );
};

export const optional = v.optional;
export const nullable = v.nullable;
export const literal = v.literal;

/** Where in the payload an issue is: "nk[3]", "summary.absMax". */
function where(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const p of issue.path ?? []) {
    const key = p.key;
    out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? 'the payload' : out;
}

export interface MessageType<K extends string = string, S extends AnySchema = AnySchema> {
  readonly kind: K;
  readonly payload: S;
  /** A message of this kind, as its sender builds it (`users`: how many users a reply of an additive protocol stands for). */
  create(from: string, round: number, payload: v.InferInput<S>, users?: number): Message<K, v.InferInput<S>>;
  /**
   * A received message of this kind with its payload checked against the
   * declaration (typed arrays out); InvalidMessageError naming the field.
   */
  read(m: Message): Message<K, v.InferOutput<S>>;
}

/** The payload type a receiver gets. */
export type PayloadOf<T extends MessageType> = v.InferOutput<T['payload']>;
/** The payload type a sender gives. */
export type PayloadIn<T extends MessageType> = v.InferInput<T['payload']>;
/** A checked message of type T. */
export type MessageOf<T extends MessageType> = Message<T['kind'], PayloadOf<T>>;

/**
 * `value` checked against `schema` (typed arrays out); an InvalidMessageError
 * naming the field otherwise, after `who` when given. Anything thrown while
 * reading it (a throwing getter or proxy handed over in process) is one too.
 */
export function parsePayload<S extends AnySchema>(schema: S, value: unknown, who?: string): v.InferOutput<S> {
  checkSchema('schema', schema);
  if (who !== undefined && typeof who !== 'string') throw new InvalidParameterError(`who must name the sender (a string) or be undefined, got ${formatValue(who)}`);
  const prefix = who === undefined ? '' : `${who}: `;
  let r: v.SafeParseResult<S>;
  try {
    r = v.safeParse(schema, value, { abortEarly: true });
  } catch (e) {
    throw new InvalidMessageError(`${prefix}the payload could not be read: ${formatThrown(e)}`, 'its payload could not be read');
  }
  if (!r.success) {
    const issue = r.issues[0];
    throw new InvalidMessageError(`${prefix}${where(issue)}${issue.message}`, `${where(issue)} is malformed`);
  }
  return r.output;
}

/** The messages MessageType.read made: a role handed one need not read it again (see readRequest). */
const readMessages = new WeakSet<object>();

/** Whether `m` is what a MessageType.read returned (its envelope and payload checked). */
export function wasRead(m: unknown): m is Message {
  return m !== null && typeof m === 'object' && readMessages.has(m);
}

/** Declares a message kind: its name and its payload's schema. */
export function defineMessage<const K extends string, S extends AnySchema>(kind: K, payload: S): MessageType<K, S> {
  if (typeof kind !== 'string' || kind.length === 0) throw new InvalidParameterError(`a message kind must be a non-empty string, got ${formatValue(kind)}`);
  checkSchema('payload', payload);
  // what this type's read() returned: reading it again (a role's public method behind the runtime's check) costs nothing
  const checked = new WeakSet<object>();
  return {
    kind,
    payload,
    create: (from, round, p, users) => message(kind, from, round, p, users),
    read(m) {
      if (m !== null && typeof m === 'object' && checked.has(m)) return m as Message<K, v.InferOutput<S>>;
      const e = checkEnvelope(m, kind);
      const out = { ...e, payload: parsePayload(payload, e.payload) } as Message<K, v.InferOutput<S>>;
      checked.add(out);
      readMessages.add(out);
      return out;
    },
  };
}
