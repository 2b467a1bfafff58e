/**
 * Secure aggregation as a simulation sees it: clients' contributions are added
 * field by field and only the totals leave the aggregator, optionally with
 * Gaussian noise on every entry (central differential privacy: the aggregator
 * adds the noise once, to the sums, not each client to its own contribution).
 * Whoever uses it checks each contribution before adding it (a real secure
 * aggregator would do so with input-validation proofs).
 */
import { InvalidMessageError, InvalidParameterError } from '../errors.js';
import type { Rng } from '../random.js';

export class SecureSum {
  private readonly totals = new Map<string, Float64Array>();
  /** the next totals, computed in full before any is kept (a refused contribution changes nothing) */
  private readonly scratch = new Map<string, Float64Array>();
  private contributions = 0;

  /** `shape`: each field's number of values. */
  constructor(shape: Record<string, number>) {
    for (const [name, len] of Object.entries(shape)) {
      this.totals.set(name, new Float64Array(len));
      this.scratch.set(name, new Float64Array(len));
    }
  }

  /** Contributions added so far. */
  get count(): number {
    return this.contributions;
  }

  /**
   * Adds one contribution: every field of the shape, of its length. One that
   * would make a total non-finite (NaN, or past the largest double) is refused
   * with an InvalidMessageError and adds nothing: the totals stay releasable.
   */
  add(contribution: Record<string, ArrayLike<number>>): void {
    for (const [name, total] of this.totals) {
      const v = contribution[name];
      if (!v || v.length !== total.length) throw new InvalidParameterError(`a contribution's ${name} must hold ${total.length} values`);
    }
    for (const [name, total] of this.totals) {
      const v = contribution[name]!;
      const next = this.scratch.get(name)!;
      let check = 0;
      for (let i = 0; i < total.length; i++) check += (next[i] = total[i]! + v[i]!) * 0;
      if (check !== 0) {
        const i = next.findIndex((x) => !Number.isFinite(x));
        throw new InvalidMessageError(`a contribution would make the total of ${name}[${i}] non-finite`, 'its contribution would make a sum non-finite');
      }
    }
    for (const [name, total] of this.totals) total.set(this.scratch.get(name)!);
    this.contributions += 1;
  }

  /**
   * The totals (copies), each entry plus N(0, stddev^2) noise when `noise` is
   * given. The draws come from `noise.rng`, field by field in shape order.
   */
  release(noise?: { stddev: number; rng: Rng }): Record<string, Float64Array> {
    const out: Record<string, Float64Array> = {};
    for (const [name, total] of this.totals) {
      const v = total.slice();
      if (noise && noise.stddev > 0 && v.length > 0) {
        const z = noise.rng.normal(v.length);
        for (let i = 0; i < v.length; i++) v[i]! += noise.stddev * z[i]!;
      }
      out[name] = v;
    }
    return out;
  }
}
