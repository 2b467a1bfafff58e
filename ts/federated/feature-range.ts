/**
 * A federation's declared feature range: every client's rows lie in
 * [lo_j, hi_j] for each feature j (min-max normalized data: [0, 1]). What a
 * client sends about such rows is then bounded, and a claim outside the bounds
 * is refused before it can reach an aggregate: a weighted mean of rows lies in
 * the range, a second moment about a point c is at most the farthest end's
 * squared distance from c, a variance at most (hi - lo)^2 / 4 (the largest any
 * distribution on an interval has). Honest clients meet these bounds exactly,
 * so they are checked up to rounding only.
 */
import { InvalidMessageError, InvalidParameterError } from '../errors.js';
import { flattenNumeric, isArray, readArray, type NumericArray } from '../validate.js';
import { keepClassName } from '../class-name.js';

/** Relative slack of every bound (rounding of sums over many rows). */
const SLACK = 1e-9;

export class FeatureRange {
  static {
    keepClassName(this, 'FeatureRange');
  }

  private constructor(
    readonly lo: Float64Array,
    readonly hi: Float64Array,
  ) {}

  /** [min, max], each one number or one per feature; an InvalidParameterError naming `name` otherwise. */
  static from(name: string, range: unknown, d: number): FeatureRange {
    // read once, under guard: a Proxy's traps run here, not later
    const pair = isArray(name, range) ? readArray(name, range, 3) : [];
    if (pair.length !== 2) throw new InvalidParameterError(`${name} must be [min, max]`);
    const side = (i: 0 | 1): Float64Array => {
      const v = pair[i] as number | ArrayLike<number>;
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) throw new InvalidParameterError(`${name}[${i}] is ${v}; it must be a finite number`);
        return new Float64Array(d).fill(v);
      }
      const a = flattenNumeric(`${name}[${i}]`, v as NumericArray);
      if (a.length !== d) throw new InvalidParameterError(`${name}[${i}] has ${a.length} values; expected one number or ${d}, one per feature`);
      return a;
    };
    const lo = side(0);
    const hi = side(1);
    for (let j = 0; j < d; j++) {
      if (!(lo[j]! < hi[j]!)) throw new InvalidParameterError(`${name} of feature ${j} is [${lo[j]}, ${hi[j]}]; min must be below max`);
    }
    return new FeatureRange(lo, hi);
  }

  get nFeatures(): number {
    return this.lo.length;
  }

  private width(j: number): number {
    return this.hi[j]! - this.lo[j]!;
  }

  /** `value` of feature j within [lo_j, hi_j], up to rounding and `extra` (what its computation may add); `what` names it in the reason. */
  inside(what: string, j: number, value: number, extra = 0): void {
    const s = SLACK * this.width(j) + extra;
    if (!(value >= this.lo[j]! - s && value <= this.hi[j]! + s)) {
      throw new InvalidMessageError(`${what} is ${value}, outside feature ${j}'s declared range [${this.lo[j]}, ${this.hi[j]}]`, 'a value lies outside the declared feature range');
    }
  }

  /** Rows (row-major, d values each) within the range. */
  rows(what: string, values: ArrayLike<number>): void {
    const d = this.nFeatures;
    for (let i = 0; i < values.length; i++) this.inside(`${what}[${i}]`, i % d, values[i]!);
  }

  /** The farther end of feature j's range from c: how far a row can be from it. */
  farthest(j: number, c: number): number {
    return Math.max(Math.abs(this.lo[j]! - c), Math.abs(this.hi[j]! - c));
  }

  /** A second moment of feature j's rows about `c` (a mean of (x - c)^2): at most the farther end's squared distance from c, up to rounding and `extra`. */
  secondMoment(what: string, j: number, c: number, moment: number, extra = 0): void {
    const far = this.farthest(j, c);
    if (!(moment <= far * far * (1 + SLACK) + SLACK * this.width(j) ** 2 + extra)) {
      throw new InvalidMessageError(
        `${what} is ${moment}, more than rows in feature ${j}'s declared range [${this.lo[j]}, ${this.hi[j]}] can have about ${c} (${far * far})`,
        'a moment exceeds what the declared feature range allows',
      );
    }
  }

  /** The largest magnitude of feature j's rows: at most the larger of |lo_j| and |hi_j|. */
  magnitude(what: string, j: number, value: number): void {
    const bound = Math.max(Math.abs(this.lo[j]!), Math.abs(this.hi[j]!));
    if (!(value <= bound * (1 + SLACK) + SLACK * this.width(j))) {
      throw new InvalidMessageError(`${what} is ${value}, more than feature ${j}'s declared range [${this.lo[j]}, ${this.hi[j]}] allows`, 'a value lies outside the declared feature range');
    }
  }

  /** One variance for every feature (a spherical covariance: the mean of theirs): at most the mean of their bounds, plus `extra`. */
  sharedVariance(what: string, v: number, extra: number): void {
    let bound = 0;
    for (let j = 0; j < this.nFeatures; j++) bound += this.width(j) ** 2 / 4 / this.nFeatures;
    if (!(v <= bound * (1 + SLACK) + extra * (1 + SLACK))) {
      throw new InvalidMessageError(`${what} is ${v}, more than distributions on the declared feature ranges have (${bound}${extra > 0 ? ` + ${extra}` : ''})`, 'a variance exceeds what the declared feature range allows');
    }
  }

  /** A variance of feature j, `extra` (a regularization) included: at most (hi - lo)^2 / 4 + extra. */
  variance(what: string, j: number, v: number, extra: number): void {
    const bound = this.width(j) ** 2 / 4;
    if (!(v <= bound * (1 + SLACK) + extra * (1 + SLACK))) {
      throw new InvalidMessageError(
        `${what} is ${v}, more than any distribution on feature ${j}'s declared range [${this.lo[j]}, ${this.hi[j]}] has (${bound}${extra > 0 ? ` + ${extra}` : ''})`,
        'a variance exceeds what the declared feature range allows',
      );
    }
  }
}
