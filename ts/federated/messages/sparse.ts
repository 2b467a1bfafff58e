/**
 * Mostly-zero numeric arrays on the binary wire. A statistic such as MDM's
 * E^i (K x N, one non-zero column) is a few numbers in a sea of zeros: it
 * travels as the pair (indices of its non-zero entries, their values) and is
 * made dense again on arrival. The receiver also learns where the non-zeros
 * are (nonZeros), so that the checks and sums of a round can skip the rest.
 * A zero travels as +0 (as on the JSON wire).
 */
import { InvalidMessageError } from '../../errors.js';
import type { NumericArray } from './arrow-ipc.js';

/** Arrays shorter than this always travel dense: a sparse pair costs two more columns of framing. */
export const SPARSE_MIN_LENGTH = 64;

/** Where a sparse scan collects indices (grown as needed, reused: the scan runs for every array of every message). */
let scratch = new Uint32Array(1024);

/**
 * The non-zero entries of `a` (indices, values) when sending them instead
 * at least halves its bytes; undefined otherwise (the scan stops as soon as
 * that is clear). NaN and infinities count as non-zero: the sender's
 * finiteness check sees them among the values.
 */
export function sparseForm(a: NumericArray): { indices: Uint32Array; values: NumericArray } | undefined {
  const n = a.length;
  if (n < SPARSE_MIN_LENGTH) return undefined;
  const known = decoded.get(a);
  if (known) return { indices: known, values: gather(a, known) };
  const size = a.BYTES_PER_ELEMENT;
  const limit = Math.floor((n * size) / (2 * (4 + size)));
  if (scratch.length < limit) scratch = new Uint32Array(limit);
  let k = 0;
  for (let i = 0; i < n; i++) {
    if (a[i] !== 0) {
      if (k === limit) return undefined;
      scratch[k++] = i;
    }
  }
  const indices = scratch.slice(0, k);
  return { indices, values: gather(a, indices) };
}

function gather(a: NumericArray, indices: Uint32Array): NumericArray {
  const values = new (a.constructor as new (n: number) => NumericArray)(indices.length);
  for (let j = 0; j < indices.length; j++) values[j] = a[indices[j]!]!;
  return values;
}

/**
 * Dense arrays are carved from shared zeroed chunks: allocating (and zeroing)
 * a buffer of its own for each would cost more than all else a message needs.
 * Like every array the codec decodes (views into the message's bytes), such an
 * array is a view: its `buffer` is shared, so use it with its byteOffset.
 */
const CHUNK_BYTES = 1 << 20;
let chunk = new ArrayBuffer(0);
let used = 0;

function zeros(like: NumericArray, length: number): NumericArray {
  const type = like.constructor as { new (n: number): NumericArray; new (b: ArrayBuffer, at: number, n: number): NumericArray };
  const bytes = length * like.BYTES_PER_ELEMENT;
  if (bytes > CHUNK_BYTES / 8) return new type(length);
  const { buffer, at } = carve(bytes);
  return new type(buffer, at, length);
}

/**
 * `bytes` zeroed bytes, 8-aligned, from the shared chunks (a buffer of their
 * own when large): for the small arrays made for every message.
 */
export function carve(bytes: number): { buffer: ArrayBuffer; at: number } {
  if (bytes > CHUNK_BYTES / 8) return { buffer: new ArrayBuffer(bytes), at: 0 };
  let at = (used + 7) & ~7;
  if (at + bytes > chunk.byteLength) {
    chunk = new ArrayBuffer(CHUNK_BYTES);
    at = 0;
  }
  used = at + bytes;
  return { buffer: chunk, at };
}

/** Arrays made by densify, with the indices of their (possibly) non-zero entries. */
const decoded = new WeakMap<object, Uint32Array>();

/**
 * The dense array of a sparse pair: `values` at `indices` (strictly
 * increasing, below `length`), +0 elsewhere; InvalidMessageError otherwise.
 * It remembers where its non-zeros are (nonZeros), so it must not be written
 * to afterwards: what the codec decodes, or what a client builds to send.
 */
export function densify(indices: Uint32Array, values: NumericArray, length: number): NumericArray {
  const dense = zeros(values, length);
  let last = -1;
  for (let j = 0; j < indices.length; j++) {
    const i = indices[j]!;
    if (i <= last || i >= length) throw new InvalidMessageError('a binary message has sparse indices out of order or out of range', 'its binary message is malformed');
    dense[i] = values[j]!;
    last = i;
  }
  decoded.set(dense, indices);
  return dense;
}

/**
 * For an array that arrived as a sparse pair: the indices of the entries that
 * may be non-zero (every other entry is +0); undefined for any other array.
 */
export function nonZeros(a: ArrayLike<number>): Uint32Array | undefined {
  return decoded.get(a);
}
