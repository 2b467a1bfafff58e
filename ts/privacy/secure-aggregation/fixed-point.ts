/**
 * Fixed point in Z_{2^64}: what secure aggregation sums. A vector of reals,
 * each in [-clip, clip], becomes a vector of integers round(v * scale) stored
 * as little-endian u64 words (8 bytes a value, two's complement for negative
 * values); masked vectors and sums are these words mod 2^64.
 *
 * Overflow is impossible by construction. `scale` is a power of two with
 * contributors * (ceil(clip * scale) + 1) < 2^63 (checked exactly, in BigInt).
 * One quantized value has |round(v * scale)| <= clip * scale + 1/2 for
 * |v| <= clip, so the sum of at most `contributors` of them has
 *   |S| <= contributors * (clip * scale + 1/2) < contributors * (ceil(clip * scale) + 1) < 2^63:
 * S read as a signed 64-bit integer is the exact sum, whatever order the
 * words mod 2^64 (masks included) were added in, since masks cancel exactly
 * mod 2^64 and the true sum lies in (-2^63, 2^63). A value past clip is
 * refused (never clipped silently), so the bound holds for every input that
 * reaches a sum.
 */
import { formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import { isFloat64Array, readOptions, requireAttached } from '../../validate.js';
import { withScope } from '../../wasm/memory.js';

export interface FixedPoint {
  /** the largest absolute value of one entry of one contribution */
  readonly clip: number;
  /** the most contributions a sum adds */
  readonly contributors: number;
  /** the power of two values are multiplied by before rounding */
  readonly scale: number;
}

const TWO_32 = 2 ** 32;
const LIMIT = 2n ** 63n;
/** The most contributors: shares are addressed to clients 1..65,535 (shamir.ts). */
export const MAX_CONTRIBUTORS = 65_535;

function fits(clip: number, contributors: number, e: number): boolean {
  const x = clip * 2 ** e; // exact: a power-of-two multiple of a double, as long as it is finite
  return Number.isFinite(x) && BigInt(contributors) * (BigInt(Math.ceil(x)) + 1n) < LIMIT;
}

/**
 * The fixed point for sums of `contributors` vectors with entries of
 * magnitude at most `clip`: the largest power of two `scale` >= 1 with
 * contributors * (clip * scale + 1) < 2^63 (see the file's comment).
 */
export function fixedPoint(clip: number, contributors: number): FixedPoint {
  if (!(typeof clip === 'number' && Number.isFinite(clip) && clip > 0)) throw new InvalidParameterError(`clip must be a finite number > 0, got ${formatValue(clip)}`);
  if (!(Number.isInteger(contributors) && contributors >= 1 && contributors <= MAX_CONTRIBUTORS)) {
    throw new InvalidParameterError(`contributors must be an integer in [1, ${MAX_CONTRIBUTORS}], got ${formatValue(contributors)}`);
  }
  if (!fits(clip, contributors, 0)) {
    throw new InvalidParameterError(
      `no fixed point with scale >= 1 sums ${contributors} values of up to ${clip} in 64 bits (${contributors} * (${clip} + 1) must be < 2^63); lower clip`,
    );
  }
  // a first guess from logarithms, then exact steps (at most a few)
  let e = Math.min(1000, Math.max(0, Math.floor(Math.log2((2 ** 63 / contributors - 1) / clip))));
  while (e > 0 && !fits(clip, contributors, e)) e--;
  while (e < 1000 && fits(clip, contributors, e + 1)) e++;
  return Object.freeze({ clip, contributors, scale: 2 ** e });
}

function checkFixedPoint(given: FixedPoint): FixedPoint {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`a fixed point must come from fixedPoint(clip, contributors), got ${formatValue(given)}`);
  const q = readOptions(given, ['clip', 'contributors', 'scale'], 'the fixed point') as FixedPoint;
  const ok =
    typeof q.scale === 'number' &&
    typeof q.clip === 'number' &&
    typeof q.contributors === 'number' &&
    q.scale >= 1 &&
    Number.isFinite(q.scale) &&
    Number.isInteger(Math.log2(q.scale)) &&
    q.clip > 0 &&
    Number.isInteger(q.contributors) &&
    q.contributors >= 1 &&
    q.contributors <= MAX_CONTRIBUTORS &&
    fits(q.clip, q.contributors, Math.log2(q.scale));
  if (!ok) throw new InvalidParameterError(`a fixed point must come from fixedPoint(clip, contributors), got ${formatValue(q)}`);
  return q;
}

/**
 * round(v * scale) of each value as u64 words (8 bytes each). A value that is
 * not finite or exceeds clip in absolute value is refused, naming its index.
 */
export function quantize(values: Float64Array, q: FixedPoint): Uint8Array {
  const { clip, scale } = checkFixedPoint(q);
  if (!isFloat64Array(values)) throw new InvalidParameterError(`values must be a Float64Array, got ${formatValue(values)}`);
  requireAttached('values', values);
  const n = values.length;
  const out = new Uint8Array(8 * n);
  const words = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (!(Math.abs(v) <= clip)) throw new InvalidDataError(`values[${i}] is ${formatValue(v)}, outside [-clip, clip] with clip ${clip}: clip it before aggregating, or raise clip`);
    // |x| < 2^63 is an integer double: its high and low 32-bit halves are exact
    const x = Math.round(v * scale);
    const hi = Math.floor(x / TWO_32);
    words[2 * i] = x - hi * TWO_32;
    words[2 * i + 1] = hi >>> 0;
  }
  return out;
}

function requireWords(name: string, v: unknown): Uint8Array {
  if (!(ArrayBuffer.isView(v) && v instanceof Uint8Array)) throw new InvalidParameterError(`${name} must be a Uint8Array of u64 words, got ${formatValue(v)}`);
  requireAttached(name, v);
  if (v.length % 8 !== 0) throw new InvalidParameterError(`${name} must hold whole u64 words (a multiple of 8 bytes), got ${v.length} bytes`);
  return v;
}

/** The i64 words of `sum` over scale: the sum of the reals quantized into it. */
export function dequantize(sum: Uint8Array, q: FixedPoint): Float64Array {
  const { scale } = checkFixedPoint(q);
  requireWords('sum', sum);
  const view = new DataView(sum.buffer, sum.byteOffset, sum.byteLength);
  const n = sum.length / 8;
  const out = new Float64Array(n);
  const hiScale = TWO_32 / scale;
  for (let i = 0; i < n; i++) out[i] = view.getInt32(8 * i + 4, true) * hiScale + view.getUint32(8 * i, true) / scale;
  return out;
}

/**
 * The largest absolute error of one entry of dequantize(sum of `contributors`
 * quantized vectors) against the exact sum of the reals: half a unit of
 * 1 / scale per contributor (rounding), plus, where the integer sum can pass
 * 2^53, the half ulp of reading it as a double.
 */
export function quantizationBound(q: FixedPoint, contributors: number): number {
  const { clip, scale } = checkFixedPoint(q);
  if (!(Number.isInteger(contributors) && contributors >= 0 && contributors <= q.contributors)) {
    throw new InvalidParameterError(`contributors must be an integer in [0, ${q.contributors}] (the fixed point's), got ${formatValue(contributors)}`);
  }
  const largest = contributors * (clip * scale + 0.5);
  const reading = largest >= 2 ** 53 ? 2 ** (Math.floor(Math.log2(largest)) - 53) : 0;
  return (contributors / 2 + reading) / scale;
}

function wordsOp(acc: Uint8Array, v: Uint8Array, subtract: 0 | 1): void {
  requireWords('acc', acc);
  requireWords('v', v);
  if (acc.length !== v.length) throw new InvalidParameterError(`acc and v must be of one length, got ${acc.length} and ${v.length} bytes`);
  if (acc.length === 0) return;
  withScope((s) => {
    const a = s.alloc(acc.length);
    const b = s.alloc(v.length);
    new Uint8Array(s.w.memory.buffer, a, acc.length).set(acc);
    new Uint8Array(s.w.memory.buffer, b, v.length).set(v);
    s.w.fm_secagg_add(a, b, acc.length / 8, subtract);
    acc.set(new Uint8Array(s.w.memory.buffer, a, acc.length));
  });
}

/** acc += v mod 2^64, word by word (in the core). */
export function addInto(acc: Uint8Array, v: Uint8Array): void {
  wordsOp(acc, v, 0);
}

/** acc -= v mod 2^64, word by word (in the core). */
export function subtractInto(acc: Uint8Array, v: Uint8Array): void {
  wordsOp(acc, v, 1);
}

/** The sum mod 2^64 of vectors of u64 words, all of `bytes` bytes (in the core, one copy of each in). */
export function sumWords(vectors: readonly Uint8Array[], bytes: number): Uint8Array {
  if (!Array.isArray(vectors) || !(Number.isInteger(bytes) && bytes >= 0 && bytes % 8 === 0)) throw new InvalidParameterError('sumWords takes a list of u64 vectors and their length in bytes');
  for (const [i, v] of vectors.entries()) {
    requireWords(`vectors[${i}]`, v);
    if (v.length !== bytes) throw new InvalidParameterError(`vectors[${i}] holds ${v.length} bytes, not ${bytes}`);
  }
  if (bytes === 0 || vectors.length === 0) return new Uint8Array(bytes);
  return withScope((s) => {
    const acc = s.alloc(bytes);
    const next = s.alloc(bytes);
    new Uint8Array(s.w.memory.buffer, acc, bytes).fill(0);
    for (const v of vectors) {
      new Uint8Array(s.w.memory.buffer, next, bytes).set(v);
      s.w.fm_secagg_add(acc, next, bytes / 8, 0);
    }
    return new Uint8Array(s.w.memory.buffer, acc, bytes).slice();
  });
}
