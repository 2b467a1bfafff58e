/**
 * Masks: a 32-byte (256-bit) seed expanded by ChaCha20 (RFC 8439; key = the
 * seed, nonce 0, block counter from 0) in the core, read as little-endian u64
 * words and added to (or subtracted from) a vector mod 2^64. A mask word is
 * uniform on Z_{2^64}, so a masked word is uniform whatever the value under it.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead } from '../../read-guard.js';
import { requireAttached } from '../../validate.js';
import { withScope } from '../../wasm/memory.js';

export const SEED_BYTES = 32;

function requireSeed(name: string, seed: unknown): Uint8Array {
  if (!(ArrayBuffer.isView(seed) && seed instanceof Uint8Array) || seed.length !== SEED_BYTES) throw new InvalidParameterError(`${name} must be a Uint8Array of ${SEED_BYTES} bytes, got ${formatValue(seed)}`);
  return requireAttached(name, seed);
}

/** One mask: its seed and whether it is added (1) or subtracted (-1). */
export interface Mask {
  seed: Uint8Array;
  sign: 1 | -1;
}

/** vector += sign * ChaCha20(seed) mod 2^64, in place, for each mask in turn (one copy in and out of WASM memory). */
export function applyMasks(vector: Uint8Array, masks: readonly Mask[]): void {
  if (!(ArrayBuffer.isView(vector) && vector instanceof Uint8Array) || vector.length % 8 !== 0) throw new InvalidParameterError(`vector must be a Uint8Array of u64 words (a multiple of 8 bytes), got ${formatValue(vector)}`);
  requireAttached('vector', vector);
  const checked = guardRead('masks', () => {
    if (!Array.isArray(masks)) throw new InvalidParameterError(`masks must be a list of { seed, sign }, got ${formatValue(masks)}`);
    return masks.map((m, i) => {
      if (m === null || typeof m !== 'object' || (m.sign !== 1 && m.sign !== -1)) throw new InvalidParameterError(`masks[${i}] must be { seed, sign: 1 | -1 }, got ${formatValue(m)}`);
      return { seed: requireSeed(`masks[${i}].seed`, m.seed), sign: m.sign };
    });
  });
  if (vector.length === 0 || checked.length === 0) return;
  withScope((s) => {
    const v = s.alloc(vector.length);
    const k = s.alloc(SEED_BYTES);
    new Uint8Array(s.w.memory.buffer, v, vector.length).set(vector);
    for (const m of checked) {
      new Uint8Array(s.w.memory.buffer, k, SEED_BYTES).set(m.seed);
      s.w.fm_secagg_mask(v, vector.length / 8, k, m.sign === -1 ? 1 : 0);
    }
    vector.set(new Uint8Array(s.w.memory.buffer, v, vector.length));
  });
}

/** vector += sign * ChaCha20(seed) read as u64 LE words, mod 2^64, in place (in the core). */
export function applyMask(vector: Uint8Array, seed: Uint8Array, sign: 1 | -1): void {
  if (sign !== 1 && sign !== -1) throw new InvalidParameterError(`sign must be 1 or -1, got ${formatValue(sign)}`);
  applyMasks(vector, [{ seed, sign }]);
}
