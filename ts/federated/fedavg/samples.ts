/**
 * The row counts FedAvg-family clients declare (nSamples), which weight their
 * replies in the mean: a client that claims 2^48 rows would otherwise set the
 * global model to its own parameters. Two checks, both refusing the reply
 * (the client is excluded, the reason in the run's failures):
 *
 *   - a count above `maxSamples` (the operator's bound on any client's rows);
 *   - a count other than the one the client declared in its first accepted
 *     reply: an honest client's rows do not change during a run, so once a
 *     count is known it is pinned (and kept in the server's checkpoint).
 *
 * Honest clients always pass the second check; the first is off unless set.
 */
import { InvalidMessageError } from '../../errors.js';

export class DeclaredSamples {
  private readonly first = new Map<string, number>();

  constructor(readonly max: number | undefined) {}

  /** Refuses (InvalidMessageError) a count above the bound or other than the client's first; pins the first. */
  check(client: string, nSamples: number): void {
    if (this.max !== undefined && nSamples > this.max) {
      throw new InvalidMessageError(`the update declares ${nSamples} rows; the server takes at most ${this.max} (maxSamples)`, 'more rows than maxSamples');
    }
    const known = this.first.get(client);
    if (known !== undefined && known !== nSamples) {
      throw new InvalidMessageError(`the update declares ${nSamples} rows; this client declared ${known} in its first reply, and a client's rows do not change during a run`, 'its row count changed');
    }
    if (known === undefined) this.first.set(client, nSamples);
  }

  /** The pinned counts, by client, as pairs (the server's state). */
  save(): [string, number][] {
    return [...this.first];
  }

  restore(pairs: ReadonlyMap<string, number>): void {
    this.first.clear();
    for (const [id, n] of pairs) this.first.set(id, n);
  }
}
