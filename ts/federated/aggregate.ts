/**
 * Field-by-field sums of the contributions one party sees: clients'
 * contributions are added field by field and only the totals leave it,
 * optionally with Gaussian noise on every entry (central differential
 * privacy: the party adds the noise once, to the sums, not each client to its
 * own contribution). It protects nothing from that party, which sees every
 * contribution; secure aggregation, where no party sees one, is
 * ts/privacy/secure-aggregation/ (secureSum). Whoever uses it checks each
 * contribution before adding it.
 */
import { formatValue, InvalidMessageError, InvalidParameterError } from '../errors.js';
import { Rng } from '../random.js';
import { guardRead, LIMITS, readOptions, readRecord, requireInteger, requireNumber, requireVector } from '../validate.js';
import { nonZeros } from './messages/sparse.js';

/** Whether every total[i] + v[i] is finite (only at `listed` when given: elsewhere v is +0 and the total finite already). */
function sumsFinite(total: Float64Array, v: ArrayLike<number>, listed: Uint32Array | undefined): boolean {
  if (listed) {
    let s = 0;
    for (let j = 0; j < listed.length; j++) s += (total[listed[j]!]! + v[listed[j]!]!) * 0;
    return s === 0;
  }
  // four running sums, as codec.ts allFinite
  const n = total.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s0 += (total[i]! + v[i]!) * 0;
    s1 += (total[i + 1]! + v[i + 1]!) * 0;
    s2 += (total[i + 2]! + v[i + 2]!) * 0;
    s3 += (total[i + 3]! + v[i + 3]!) * 0;
  }
  for (; i < n; i++) s0 += (total[i]! + v[i]!) * 0;
  return s0 + s1 + s2 + s3 === 0;
}

export class FieldSums {
  private readonly totals = new Map<string, Float64Array>();
  private contributions = 0;

  /** `shape`: each field's number of values. */
  constructor(shape: Record<string, number>) {
    if (shape === null || typeof shape !== 'object') throw new InvalidParameterError(`shape must be an object of field lengths, got ${formatValue(shape)}`);
    for (const [name, len] of Object.entries(readOptions(shape, undefined, 'shape'))) this.totals.set(name, new Float64Array(requireInteger(`shape.${name}`, len, 0, LIMITS.values)));
  }

  /** Contributors added so far: users, where a contribution is a group's sum (add's `users`). */
  get count(): number {
    return this.contributions;
  }

  /**
   * Adds one contribution: every field of the shape, of its length. One that
   * would make a total non-finite (NaN, or past the largest double) is refused
   * with an InvalidMessageError and adds nothing: the totals stay releasable.
   * `users`: how many users the contribution sums (default 1), what `count` adds.
   */
  add(given: Record<string, ArrayLike<number>>, users = 1): void {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError(`a contribution must be an object of arrays, got ${formatValue(given)}`);
    requireInteger('users', users, 1, LIMITS.count);
    const read = readRecord(given, [...this.totals.keys()], 'contribution');
    const contribution: Record<string, Float64Array> = {};
    for (const [name, total] of this.totals) {
      const v = read[name] === undefined ? undefined : requireVector(`contribution.${name}`, read[name]);
      if (!v || v.length !== total.length) throw new InvalidParameterError(`a contribution's ${name} must hold ${total.length} values`);
      contribution[name] = v;
    }
    // every new total is checked before any is kept: a refused contribution changes nothing
    for (const [name, total] of this.totals) {
      const v = contribution[name]!;
      if (!sumsFinite(total, v, nonZeros(v))) {
        let i = 0;
        while (Number.isFinite(total[i]! + v[i]!)) i++;
        throw new InvalidMessageError(`a contribution would make the total of ${name}[${i}] non-finite`, 'its contribution would make a sum non-finite');
      }
    }
    for (const [name, total] of this.totals) {
      const v = contribution[name]!;
      // a contribution that arrived sparse adds only its listed entries (the rest are +0)
      const listed = nonZeros(v);
      if (listed) for (let j = 0; j < listed.length; j++) total[listed[j]!]! += v[listed[j]!]!;
      else for (let i = 0; i < total.length; i++) total[i]! += v[i]!;
    }
    this.contributions += users;
  }

  /**
   * The totals (copies), each entry plus N(0, stddev^2) noise when `noise` is
   * given. The draws come from `noise.rng`, field by field in shape order.
   */
  release(given?: { stddev: number; rng: Rng }): Record<string, Float64Array> {
    let noise: { stddev: number; rng: Rng } | undefined;
    if (given !== undefined) {
      const o = readOptions(given, ['stddev', 'rng'], 'noise');
      if (!guardRead('noise.rng', () => o.rng instanceof Rng)) throw new InvalidParameterError(`noise.rng must be an Rng, got ${formatValue(o.rng)}`);
      noise = { stddev: requireNumber('noise.stddev', o.stddev, 0), rng: o.rng! };
    }
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
