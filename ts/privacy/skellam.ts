/**
 * Skellam noise shares for distributed differential privacy (Agarwal, Kairouz
 * and Liu 2021): each client adds Sk(mu) = Poisson(mu) - Poisson(mu), an
 * integer of mean 0 and variance 2 mu, to every word of its quantized vector
 * before masking. The sum of independent Sk(mu_i) is Sk(sum mu_i) exactly, so
 * the securely aggregated sum holds Skellam noise of the total, and only the
 * noised sum is ever seen by anyone.
 *
 * The draws are the core's (crates/fedmix-core/src/privacy/skellam.rs): exact
 * Poisson draws (inversion below mu = 10, Hörmann's PTRS above) from a
 * ChaCha20 keystream keyed by 256 bits from crypto.getRandomValues, fresh for
 * every call (a seed is taken only when a test passes one).
 */
import { formatValue, InvalidParameterError } from '../errors.js';
import { guardRead, MAX_VALUES } from '../read-guard.js';
import { readOptions } from '../validate.js';
import { withScope } from '../wasm/memory.js';

/** The largest mu of one share (2^48): Poisson draws stay exact in f64 below it. */
export const MAX_SKELLAM_MU = 2 ** 48;

/** Options of a noise draw. */
export interface SkellamNoiseOptions {
  /**
   * 32 bytes keying the ChaCha20 stream; only for tests that need a
   * reproducible draw. Default: 32 fresh bytes from crypto.getRandomValues.
   */
  seed?: Uint8Array;
}

function checkMu(mu: unknown): number {
  if (!(typeof mu === 'number' && mu >= 0 && mu <= MAX_SKELLAM_MU)) {
    throw new InvalidParameterError(`mu (a Skellam share's Poisson mean) must be a number in [0, 2^48], got ${formatValue(mu)}`);
  }
  return mu;
}

function keyOf(options: SkellamNoiseOptions | undefined): Uint8Array {
  const seed = guardRead('options', () => {
    const given = readOptions(options, ['seed'], 'options').seed;
    if (given === undefined) return undefined;
    if (!(given instanceof Uint8Array) || given.length !== 32) throw new InvalidParameterError(`seed must be a Uint8Array of 32 bytes, got ${formatValue(given)}`);
    return given.slice();
  });
  return seed ?? globalThis.crypto.getRandomValues(new Uint8Array(32));
}

/**
 * Adds an independent Sk(mu) to every little-endian u64 word of `vector`
 * (a quantized vector in Z_2^64, 8 bytes per value) in place, mod 2^64: what a
 * client does to its quantized input before masking it. mu 0 leaves it as is.
 */
export function addSkellamNoise(vector: Uint8Array, mu: number, options?: SkellamNoiseOptions): void {
  const bytes = guardRead('the vector', () => {
    if (!(vector instanceof Uint8Array) || vector.length % 8 !== 0) {
      throw new InvalidParameterError(`the vector must be a Uint8Array of u64 words (a multiple of 8 bytes), got ${vector instanceof Uint8Array ? `${vector.length} bytes` : formatValue(vector)}`);
    }
    return vector.length;
  });
  const m = checkMu(mu);
  const key = keyOf(options);
  try {
    withScope((s) => {
      const keyPtr = s.alloc(32);
      new Uint8Array(s.w.memory.buffer, keyPtr, 32).set(key);
      const words = s.alloc(Math.max(bytes, 8));
      new Uint8Array(s.w.memory.buffer, words, bytes).set(vector);
      try {
        s.check(s.w.fm_skellam_add(keyPtr, m, words, bytes / 8));
        vector.set(new Uint8Array(s.w.memory.buffer, words, bytes));
      } finally {
        // the key and the noised words do not outlive the call in WASM memory
        new Uint8Array(s.w.memory.buffer, keyPtr, 32).fill(0);
        new Uint8Array(s.w.memory.buffer, words, bytes).fill(0);
      }
    });
  } finally {
    key.fill(0);
  }
}

/** `length` independent Sk(mu) draws as signed 64-bit integers (for tests and central use). */
export function skellamNoise(length: number, mu: number, options?: SkellamNoiseOptions): BigInt64Array {
  if (!(Number.isSafeInteger(length) && length >= 0 && length <= MAX_VALUES)) throw new InvalidParameterError(`length must be an integer in [0, ${MAX_VALUES}], got ${formatValue(length)}`);
  const words = new Uint8Array(8 * length);
  addSkellamNoise(words, mu, options);
  return new BigInt64Array(words.buffer);
}
