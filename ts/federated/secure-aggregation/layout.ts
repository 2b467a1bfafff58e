/**
 * Additive layouts: how a reply of a kind that sums over clients travels
 * under secure aggregation. A protocol declares, for each such reply kind,
 * the numeric fields summed, in order, with their lengths (public: they
 * follow from the request, never from a client's data), and the fields that
 * must not travel (they are not sums: a maximum, a client's own rows). The
 * client flattens its reply into one vector (flatten), the secure sum adds
 * the vectors of the round's survivors, and the server gets back one reply of
 * the same kind (build) standing for all of them.
 */
import { formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import type { Message } from '../messages/envelope.js';
import type { MessageType } from '../messages/schema.js';
import { readArray, readOptions } from '../../validate.js';

/** One summed field: its path in the payload ("summary.absMax") and its number of values. */
export interface AdditiveField {
  readonly name: string;
  readonly length: number;
}

export interface AdditiveLayout {
  /** the reply type it lays out */
  readonly reply: MessageType;
  /** the summed fields, in order, for the reply to `request` (a request the server made: its shapes are public) */
  fields(request: Message): readonly AdditiveField[];
  /** payload fields that never travel under secure aggregation (a client leaves them out of its vector) */
  readonly withheld: readonly string[];
  /** the reply as one vector of the fields' values, in order (InvalidMessageError when a field is missing or of another length) */
  flatten(reply: Message, request: Message): Float64Array;
  /** the payload of the reply standing for `users` users whose vectors summed to `sum` */
  build(sum: Float64Array, request: Message, users: number): unknown;
}

/** The values a layout's fields hold together. */
export function layoutLength(fields: readonly AdditiveField[]): number {
  return fields.reduce((n, f) => n + f.length, 0);
}

function at(payload: unknown, path: string): unknown {
  let x: unknown = payload;
  for (const key of path.split('.')) x = x !== null && typeof x === 'object' ? (x as Record<string, unknown>)[key] : undefined;
  return x;
}

function put(payload: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = payload;
  for (const key of keys.slice(0, -1)) o = (o[key] ??= {}) as Record<string, unknown>;
  o[keys[keys.length - 1]!] = value;
}

/** A field of the reply, copied into `out` at `offset`: a number (length 1) or an array of the declared length. */
function flattenField(payload: unknown, f: AdditiveField, out: Float64Array, offset: number, kind: string): void {
  const x = at(payload, f.name);
  if (typeof x === 'number' && f.length === 1) {
    out[offset] = x;
    return;
  }
  if (x === null || typeof x !== 'object' || typeof (x as ArrayLike<number>).length !== 'number' || (x as ArrayLike<number>).length !== f.length) {
    throw new InvalidMessageError(`its ${kind} reply's ${f.name} must hold ${f.length} values for secure aggregation, got ${formatValue(x)}`);
  }
  const a = x as ArrayLike<number>;
  for (let i = 0; i < f.length; i++) out[offset + i] = a[i]!;
}

export interface SumLayoutOptions {
  /** fields that never travel (see AdditiveLayout.withheld) */
  withheld?: readonly string[];
  /** fields that are whole numbers (counts): rounded back after the sum, which carries the quantization error */
  integers?: readonly string[];
  /** fields that are single numbers rather than arrays */
  scalars?: readonly string[];
}

/** A payload's laid-out fields, in order, as one vector (what a secure round masks). */
export function flattenFields(payload: unknown, fields: readonly AdditiveField[], kind: string): Float64Array {
  const out = new Float64Array(layoutLength(fields));
  let offset = 0;
  for (const f of fields) {
    flattenField(payload, f, out, offset, kind);
    offset += f.length;
  }
  return out;
}

/**
 * The layout of a reply whose fields are all plain sums (sufficient
 * statistics): each field summed as it is; counts rounded back to whole
 * numbers, arrays as Float64Array. What a protocol of your own declares, in
 * defineProtocol's `layouts`, for each reply kind that may run under secure
 * aggregation: `fields(request)` gives the summed fields' paths and lengths,
 * which must follow from the request alone (they are public).
 *
 * @example
 * const ASK = defineMessage('mine/ask', record({ length: wholeNumber(1) }));
 * const SUMS = defineMessage('mine/sums', record({ values: f64Array(), rows: wholeNumber(0) }));
 * const PROTOCOL = defineProtocol('mine', [[ASK, SUMS]], {
 *   layouts: [sumLayout(SUMS, (request) => [{ name: 'values', length: (request.payload as { length: number }).length }, { name: 'rows', length: 1 }], { integers: ['rows'] })],
 * });
 */
export function sumLayout(reply: MessageType, fields: (request: Message) => readonly AdditiveField[], options: SumLayoutOptions = {}): AdditiveLayout {
  if (typeof fields !== 'function') throw new InvalidParameterError(`fields must be a function of the request, got ${formatValue(fields)}`);
  const o = readOptions(options, ['withheld', 'integers', 'scalars']);
  const names = (key: keyof SumLayoutOptions): string[] => {
    const given = o[key];
    if (given === undefined) return [];
    const list = readArray(`options.${key}`, given);
    list.forEach((v, i) => {
      if (typeof v !== 'string') throw new InvalidParameterError(`options.${key}[${i}] must be a field name (a string), got ${formatValue(v)}`);
    });
    return list as string[];
  };
  const integers = new Set(names('integers'));
  const scalars = new Set([...names('scalars'), ...integers]);
  const withheld = names('withheld');
  return {
    reply,
    fields,
    withheld,
    flatten: (m, request) => flattenFields(m.payload, fields(request), reply.kind),
    build(sum, request) {
      const payload: Record<string, unknown> = {};
      let offset = 0;
      for (const f of fields(request)) {
        const v = sum.slice(offset, offset + f.length);
        offset += f.length;
        put(payload, f.name, scalars.has(f.name) ? (integers.has(f.name) ? Math.max(0, Math.round(v[0]!)) : v[0]!) : v);
      }
      return payload;
    },
  };
}
