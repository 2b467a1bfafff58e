/**
 * Shamir secret sharing of 32-byte secrets (fedmix_core::secure_aggregation::shamir):
 * over GF(2^61 - 1), the secret in five limbs of at most 7 bytes, a share of
 * party x in 1..65,535 being the five polynomial values at x (40 bytes).
 * Any `threshold` shares reconstruct the secret; fewer are refused with a
 * SecureAggregationError (never a wrong secret), and fewer than threshold
 * carry no information on it.
 */
import { formatValue, InvalidParameterError, SecureAggregationError } from '../../errors.js';
import { requireAttached } from '../../validate.js';
import { withScope, type Scope } from '../../wasm/memory.js';

export const SECRET_BYTES = 32;
export const SHARE_BYTES = 40;
export const MAX_PARTIES = 65_535;

export interface ShamirShare {
  /** the party, 1..65,535 */
  x: number;
  /** 40 bytes: five u64 LE field values */
  value: Uint8Array;
}

/** Fills `bytes` with random bytes (crypto.getRandomValues unless a test seeds it). */
export type RandomSource = (bytes: Uint8Array) => void;

export const cryptoRandom: RandomSource = (bytes) => {
  globalThis.crypto.getRandomValues(bytes);
};

function requireBytes(name: string, v: unknown, length: number): Uint8Array {
  if (!(v instanceof Uint8Array) || v.length !== length) throw new InvalidParameterError(`${name} must be a Uint8Array of ${length} bytes, got ${formatValue(v)}`);
  return requireAttached(name, v);
}

function requireParties(xs: readonly number[]): void {
  const seen = new Set<number>();
  for (const [i, x] of xs.entries()) {
    if (!(Number.isInteger(x) && x >= 1 && x <= MAX_PARTIES)) throw new InvalidParameterError(`party ${i} must be an integer in [1, ${MAX_PARTIES}], got ${formatValue(x)}`);
    if (seen.has(x)) throw new InvalidParameterError(`party ${x} is named twice`);
    seen.add(x);
  }
}

function copyIn(s: Scope, bytes: Uint8Array): number {
  const p = s.alloc(bytes.length);
  new Uint8Array(s.w.memory.buffer, p, bytes.length).set(bytes);
  return p;
}

/**
 * Shares of `secret` for the parties `parties` (distinct, in 1..65,535; a
 * number m means 1..m), any `threshold` of which reconstruct it. The
 * polynomials' coefficients come from 32 bytes of `random`.
 */
export function shamirSplit(secret: Uint8Array, threshold: number, parties: number | readonly number[], random: RandomSource = cryptoRandom): ShamirShare[] {
  requireBytes('secret', secret, SECRET_BYTES);
  let xs: number[];
  if (typeof parties === 'number') {
    if (!(Number.isInteger(parties) && parties >= 1 && parties <= MAX_PARTIES)) throw new InvalidParameterError(`parties must be an integer in [1, ${MAX_PARTIES}] or a list of parties, got ${formatValue(parties)}`);
    xs = Array.from({ length: parties }, (_, i) => i + 1);
  } else {
    if (!Array.isArray(parties) || parties.length < 1 || parties.length > MAX_PARTIES) throw new InvalidParameterError(`parties must be a number or a list of 1 to ${MAX_PARTIES} parties, got ${formatValue(parties)}`);
    xs = [...parties];
    requireParties(xs);
  }
  if (!(Number.isInteger(threshold) && threshold >= 1 && threshold <= xs.length)) throw new InvalidParameterError(`threshold must be an integer in [1, ${xs.length}] (the parties), got ${formatValue(threshold)}`);
  const randomness = new Uint8Array(32);
  random(randomness);
  return withScope((s) => {
    const out = s.alloc(xs.length * SHARE_BYTES);
    s.check(s.w.fm_shamir_split(copyIn(s, secret), threshold, s.u32From(xs), xs.length, copyIn(s, randomness), out));
    const all = new Uint8Array(s.w.memory.buffer, out, xs.length * SHARE_BYTES).slice();
    return xs.map((x, i) => ({ x, value: all.subarray(i * SHARE_BYTES, (i + 1) * SHARE_BYTES) }));
  });
}

function readShares(shares: readonly ShamirShare[]): { xs: number[]; values: Uint8Array } {
  if (!Array.isArray(shares) || shares.length > MAX_PARTIES) throw new InvalidParameterError(`shares must be a list of at most ${MAX_PARTIES} { x, value }, got ${formatValue(shares)}`);
  const xs: number[] = [];
  const values = new Uint8Array(shares.length * SHARE_BYTES);
  for (const [i, sh] of shares.entries()) {
    if (sh === null || typeof sh !== 'object') throw new InvalidParameterError(`shares[${i}] must be { x, value }, got ${formatValue(sh)}`);
    xs.push(sh.x);
    values.set(requireBytes(`shares[${i}].value`, sh.value, SHARE_BYTES), i * SHARE_BYTES);
  }
  requireParties(xs);
  return { xs, values };
}

function requireThreshold(threshold: number, count: number): void {
  if (!(Number.isInteger(threshold) && threshold >= 1 && threshold <= MAX_PARTIES)) throw new InvalidParameterError(`threshold must be an integer in [1, ${MAX_PARTIES}], got ${formatValue(threshold)}`);
  if (count < threshold) throw new SecureAggregationError(`${count} shares cannot reconstruct a secret shared with threshold ${threshold}`);
}

/**
 * The secret from the first `threshold` of `shares`. Fewer than `threshold`
 * shares: a SecureAggregationError. Shares that do not interpolate to a
 * 32-byte secret (some are corrupt): an InvalidDataError. Corrupt shares
 * can also interpolate to a wrong secret: the protocol checks each secret
 * it reconstructs against a commitment.
 */
export function shamirCombine(shares: readonly ShamirShare[], threshold: number): Uint8Array {
  const { xs, values } = readShares(shares);
  requireThreshold(threshold, xs.length);
  return interpolateAt(xs, values, threshold, 0);
}

/**
 * The share of party `at` on the polynomials through the first `threshold`
 * of `shares`: where a share of `at` must lie if those shares are right.
 */
export function shamirShareAt(shares: readonly ShamirShare[], threshold: number, at: number): Uint8Array {
  const { xs, values } = readShares(shares);
  requireThreshold(threshold, xs.length);
  if (!(Number.isInteger(at) && at >= 1 && at <= MAX_PARTIES)) throw new InvalidParameterError(`at must be a party in [1, ${MAX_PARTIES}], got ${formatValue(at)}`);
  return interpolateAt(xs, values, threshold, at);
}

function interpolateAt(xs: number[], values: Uint8Array, threshold: number, at: number): Uint8Array {
  const bytes = at === 0 ? SECRET_BYTES : SHARE_BYTES;
  return withScope((s) => {
    const out = s.alloc(bytes);
    s.check(s.w.fm_shamir_combine(s.u32From(xs), copyIn(s, values), xs.length, threshold, at, out));
    return new Uint8Array(s.w.memory.buffer, out, bytes).slice();
  });
}
