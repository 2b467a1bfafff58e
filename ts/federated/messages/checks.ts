/**
 * Checks of received payloads that a schema cannot state alone: lengths that
 * depend on other fields or on the receiver's state (K x d), bounds that
 * depend on what was asked. Shared by every role; each throws an
 * InvalidMessageError naming the field.
 */
import { InvalidMessageError } from '../../errors.js';

/** `values` holds exactly `n` entries. */
export function lengthIs(name: string, values: ArrayLike<unknown>, n: number): void {
  if (values.length !== n) throw new InvalidMessageError(`${name} has ${values.length} values; expected ${n}`, `${name} has the wrong length`);
}

/** A count within [min, max], named in the error. */
export function within(name: string, value: number, min: number, max: number, why = ''): void {
  if (!(value >= min && value <= max)) throw new InvalidMessageError(`${name} is ${value}; it must be in [${min}, ${max}]${why}`, `${name} is out of range`);
}

/** Every entry is >= 0. */
export function nonNegative(name: string, values: ArrayLike<number>): void {
  for (let i = 0; i < values.length; i++) {
    if (!(values[i]! >= 0)) throw new InvalidMessageError(`${name}[${i}] is ${values[i]}; it must be >= 0`, `${name} has a negative entry`);
  }
}

/** Starts a reason with `who`, once. */
export function named(who: string, reason: string): string {
  return reason.startsWith(`${who}:`) || reason.startsWith(`${who} `) ? reason : `${who}: ${reason}`;
}
