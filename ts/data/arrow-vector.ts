/**
 * Arrow vectors of any apache-arrow version read into numbers or plain values,
 * recognised by their shape (see arrow.ts). Below validate.ts, which reads a
 * caller's Arrow vector wherever it takes an array.
 */
import { FedmixError, formatValue, InvalidDataError } from '../errors.js';
import { guardRead, MAX_VALUES } from '../read-guard.js';

/** An Arrow vector (column) of any apache-arrow version, as fedmix reads it. */
export interface ArrowVectorLike {
  readonly length: number;
  readonly nullCount: number;
  readonly type: { readonly typeId: number };
  get(index: number): unknown;
  isValid(index: number): boolean;
  toArray(): unknown;
}

/** Arrow type ids (Schema.fbs; Dictionary is apache-arrow's -1). */
export const TYPE = { Int: 2, Float: 3, Utf8: 5, Bool: 6, LargeUtf8: 20, Dictionary: -1 } as const;
export const NUMERIC = new Set<number>([TYPE.Int, TYPE.Float]);
export const TEXT = new Set<number>([TYPE.Utf8, TYPE.LargeUtf8]);

export const isObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object';

/** Whether `x` has the shape of an Arrow Vector (any apache-arrow version). */
export function vectorShaped(x: unknown): x is ArrowVectorLike {
  if (!isObject(x) || ArrayBuffer.isView(x) || Array.isArray(x)) return false;
  const type = x.type;
  return (
    typeof x.get === 'function' &&
    typeof x.isValid === 'function' &&
    typeof x.toArray === 'function' &&
    typeof x.length === 'number' &&
    typeof x.nullCount === 'number' &&
    isObject(type) &&
    typeof type.typeId === 'number'
  );
}

/** isArrowVector for an argument called `name`. */
export function isVectorNamed(x: unknown, name: string, Err: new (m: string) => FedmixError = InvalidDataError): x is ArrowVectorLike {
  return guardRead(name, () => vectorShaped(x), Err);
}

export function typeName(type: unknown): string {
  try {
    return String(type);
  } catch {
    return 'an unprintable type';
  }
}

/** The row of a vector's first null, for a message that says where to look. */
function firstNull(v: ArrowVectorLike): number {
  for (let i = 0; i < v.length; i++) if (!v.isValid(i)) return i;
  return -1;
}

export function nullError(what: string, v: ArrowVectorLike, remedy: string): InvalidDataError {
  return new InvalidDataError(`${what} has ${v.nullCount} null value(s), the first at row ${firstNull(v)}; ${remedy}`);
}

/**
 * A numeric vector's values as doubles (Float16/32/64, Int8..64, Uint8..64).
 * Null slots read as NaN; whoever calls decides what nulls mean.
 */
export function numericValues(what: string, v: ArrowVectorLike): Float64Array {
  const typeId = v.type.typeId;
  if (!NUMERIC.has(typeId)) {
    throw new InvalidDataError(`${what} has Arrow type ${typeName(v.type)}, not a number type`);
  }
  const n = v.length;
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_VALUES) throw new InvalidDataError(`${what} holds ${formatValue(n)} values; at most ${MAX_VALUES} are read`);
  const half = typeId === TYPE.Float && (v.type as { precision?: unknown }).precision === 0;
  // Float16 arrays hold raw half-precision bits; get() decodes them
  const values = half ? undefined : v.toArray();
  const held = ArrayBuffer.isView(values) && !(values instanceof DataView) ? (values as unknown as ArrayLike<unknown>).length : undefined;
  if (!half && held !== n) {
    // what a truncated IPC stream makes: a length its buffers do not hold (checked before allocating for it)
    throw new InvalidDataError(`${what} claims ${n} values but its buffers hold ${held ?? 'none'}`);
  }
  const out = new Float64Array(n);
  if (values === undefined) {
    for (let i = 0; i < n; i++) out[i] = Number(v.get(i));
  } else if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    for (let i = 0; i < n; i++) out[i] = Number(values[i]);
  } else {
    out.set(values as unknown as ArrayLike<number>);
  }
  if (v.nullCount > 0) for (let i = 0; i < n; i++) if (!v.isValid(i)) out[i] = NaN;
  return out;
}

/** An Arrow vector as a Float64Array (numbers only; a null is an InvalidDataError naming `name`). */
export function vectorToFloat64(name: string, v: ArrowVectorLike, Err: new (m: string) => FedmixError = InvalidDataError): Float64Array {
  return guardRead(
    name,
    () => {
      if (v.nullCount > 0) throw nullError(name, v, 'fill or drop them first');
      try {
        return numericValues(name, v);
      } catch (e) {
        if (e instanceof InvalidDataError && Err !== InvalidDataError) throw new Err(e.message);
        throw e;
      }
    },
    Err,
  );
}

/**
 * An Arrow vector's values as a plain array: numbers (Int64 as numbers,
 * booleans as 0 and 1) or strings (Utf8, and dictionary-encoded columns
 * decoded to their values). A null is an InvalidDataError naming `name`.
 */
export function vectorToArray(name: string, v: ArrowVectorLike, max: number, Err: new (m: string) => FedmixError = InvalidDataError): unknown[] {
  return guardRead(
    name,
    () => {
      const n = v.length;
      if (!Number.isSafeInteger(n) || n < 0 || n > max) throw new Err(`${name} must hold at most ${max} values, got a length of ${formatValue(n)}`);
      if (v.nullCount > 0) throw nullError(name, v, 'fill or drop them first');
      const typeId = v.type.typeId;
      if (NUMERIC.has(typeId)) return Array.from(numericValues(name, v));
      if (typeId === TYPE.Bool) return Array.from({ length: n }, (_, i) => (v.get(i) ? 1 : 0));
      if (typeId === TYPE.Dictionary || TEXT.has(typeId)) {
        const out = new Array<unknown>(n);
        for (let i = 0; i < n; i++) {
          const x = v.get(i);
          out[i] = typeof x === 'bigint' ? Number(x) : x;
        }
        return out;
      }
      throw new Err(`${name} has Arrow type ${typeName(v.type)}; fedmix reads numbers, booleans, strings and dictionary-encoded columns`);
    },
    Err,
  );
}

