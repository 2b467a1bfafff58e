/**
 * The client role of federated MDM inference: it holds its own histogram (the
 * counts of one categorical feature over its data points) and answers each
 * server message with its term of a sum, computed in WASM: Algorithm 1's
 * E^i, P^i, Q^i for a component it picks at random itself (the server never
 * learns which), Algorithm 2's omega^i, E^i, u^i, v^i, or its log-likelihood
 * under candidate models. It is a group of one user (MdmUserGroup, group.ts,
 * answers for it); what is its own is how it reads its histogram and how its
 * errors name it.
 */
import { formatValue, InvalidDataError } from '../../errors.js';
import { requireVector } from '../../validate.js';
import { requireClientId } from '../runtime/roles.js';
import { MdmUserGroup } from './group.js';
import { clientOptions, userGroupOptions, type MdmClientOptions, type ResolvedMdmClientOptions } from './options.js';

export type { MdmClientOptions } from './options.js';

export class MdmClient extends MdmUserGroup {
  /** @internal a client's histogram is checked against each model's C when a request arrives */
  protected static override readonly minCategories: number = 1;

  /**
   * `counts`: the client's histogram, one non-negative integer per category.
   * Checked here (non-negative integers, at least one data point, the size if
   * given) and against each model's C and N when a message arrives.
   */
  constructor(id: string, counts: ArrayLike<number>, given: MdmClientOptions | ResolvedMdmClientOptions = {}) {
    requireClientId(id);
    // checked once (clientOptions), unless they are what its check returned
    const options = clientOptions.check(given);
    if (counts === null || typeof counts !== 'object') throw new InvalidDataError(`${id}: its histogram must be an array of counts, got ${formatValue(counts)}`);
    const histogram = requireVector(`${id}: its histogram`, counts, InvalidDataError);
    histogram.forEach((v, j) => {
      if (!(v >= 0) || !Number.isInteger(v)) throw new InvalidDataError(`${id}: count ${j} is ${formatValue(v)}; counts must be non-negative integers`);
    });
    const sum = histogram.reduce((a, b) => a + b, 0);
    if (options.size !== undefined && options.size !== sum) {
      throw new InvalidDataError(`${id}: its histogram sums to ${sum} but its size n is ${formatValue(options.size)}; n is the number of data points, the sum of the counts`);
    }
    if (sum < 1) throw new InvalidDataError(`${id}: its histogram is empty (n = 0); a client needs at least one data point`);
    // its own generator draws as a one-user group's user of this seed
    const seeds = options.seed === undefined ? undefined : Float64Array.of(options.seed);
    super(id, [histogram], userGroupOptions.trust({ seeds, maxCells: options.maxCells }));
  }

  /** n, the number of data points */
  get size(): number {
    // its one user's n, kept as a number (sizes is a copy)
    return this.largest;
  }

  /** Its data against a model of C categories and sizes up to N: a typed error naming what to change. */
  protected override fits(c: number, nMax: number): void {
    if (this.nCategories !== c) throw new InvalidDataError(`${this.id}: its histogram has ${this.nCategories} categories but the model has ${c}`);
    if (this.size > nMax) {
      throw new InvalidDataError(`${this.id}: n = ${this.size} exceeds N = ${nMax}, the largest client size the model covers; raise N (maxCount) to at least ${this.size}`);
    }
  }
}
