/**
 * The lowest layer of reading what a caller passed, below validate.ts and the
 * Arrow readers (which validate.ts uses, so they cannot import it): guardRead,
 * and the most values one array may hold.
 */
import { FedmixError, formatThrown, InvalidParameterError } from './errors.js';

/**
 * Most values in one Matrix or one array handed to the core: a wasm32
 * allocation holds at most 2^31 - 1 bytes, 2^28 - 1 doubles (2 GiB).
 */
export const MAX_VALUES = 2 ** 28 - 1;

/** A fedmix error class, the kind a check throws. */
export type ErrorClass = new (message: string) => FedmixError;

/**
 * Runs `read`, which reads something the caller passed (its getters and Proxy
 * traps run here), and turns what that throws into an `Err` (by default an
 * InvalidParameterError) saying `what` could not be read. Keep `read` to
 * reading: a fedmix error inside passes through unchanged.
 */
export function guardRead<T>(what: string, read: () => T, Err: ErrorClass = InvalidParameterError): T {
  try {
    return read();
  } catch (e) {
    throw readFailure(what, e, Err);
  }
}

/** What guardRead throws for `e`, thrown while reading `what`: a fedmix error unchanged, anything else an `Err`. */
export function readFailure(what: string, e: unknown, Err: ErrorClass): unknown {
  if (e instanceof FedmixError) return e;
  return new Err(`${what} could not be read (${formatThrown(e)}); pass plain values`);
}
