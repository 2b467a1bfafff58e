/**
 * Clients that stop answering leave the quorum (FederationPolicy.maxMissedRounds):
 * one that misses that many rounds in a row (a timeout or a dropout each) is
 * not asked again until it shows it is there: a reply of it arrives (a late
 * one too), or it is seen coming back (absent from a round's available
 * clients, then present again). A round then no longer waits its whole
 * deadline for a client that is connected but never answers (or, on a
 * broker that cannot tell, is not connected at all). Honest clients that are
 * slow once, or reconnect, are not affected: an answer in time resets the
 * count. A client back in the quorum is on probation: one more missed round
 * in a row takes it out again.
 */

/** The policy's default: three rounds in a row. */
export const DEFAULT_MAX_MISSED_ROUNDS = 3;

/** What a run checkpoint keeps of the counts (checkpoint.ts), so that a resumed server goes on with them. */
export interface MissedRoundsState {
  /** rounds missed in a row, by client (only those with a count) */
  streaks: [string, number][];
  /** clients out of the quorum, and whether each has since been seen away */
  out: [string, boolean][];
}

export class MissedRounds {
  /** rounds missed in a row, by client */
  private readonly streak = new Map<string, number>();
  /** clients out of the quorum, and whether each has since been seen absent */
  private readonly out = new Map<string, { away: boolean }>();

  /** `max` 0: never. `saved`: the counts of a checkpoint (a resumed run), checked when it was read. */
  constructor(
    private readonly max: number,
    saved?: MissedRoundsState,
  ) {
    for (const [id, n] of saved?.streaks ?? []) this.streak.set(id, n);
    for (const [id, away] of saved?.out ?? []) this.out.set(id, { away });
  }

  /** The counts and the clients out of the quorum, copied. */
  state(): MissedRoundsState {
    return { streaks: [...this.streak], out: [...this.out].map(([id, s]) => [id, s.away]) };
  }

  /** Whether `id` is out of the quorum (not asked). */
  has(id: string): boolean {
    return this.out.has(id);
  }

  get size(): number {
    return this.out.size;
  }

  /**
   * A round's available clients: a client out of the quorum that was away and
   * is back is reinstated. Returns the clients reinstated.
   */
  seen(available: readonly string[]): string[] {
    if (this.out.size === 0) return [];
    const there = new Set(available);
    const back: string[] = [];
    for (const [id, state] of this.out) {
      if (!there.has(id)) state.away = true;
      else if (state.away) back.push(id);
    }
    for (const id of back) this.reinstate(id);
    return back;
  }

  /** `id` answered a round it was asked in: its count starts again; true when it was out of the quorum (all were asked) and is back. */
  answered(id: string): boolean {
    this.streak.delete(id);
    return this.out.delete(id);
  }

  /** A late reply of `id` (for a round it missed) arrived: true when it was out of the quorum and is back. */
  late(id: string): boolean {
    return this.reinstate(id);
  }

  /** `id` missed a round it was asked in: true when this takes it out of the quorum. */
  missed(id: string): boolean {
    const n = (this.streak.get(id) ?? 0) + 1;
    this.streak.set(id, n);
    if (this.max === 0 || n < this.max || this.out.has(id)) return false;
    this.out.set(id, { away: false });
    return true;
  }

  /** Back in the quorum, on probation: one more missed round takes it out again (an answer in time clears it). */
  private reinstate(id: string): boolean {
    if (!this.out.delete(id)) return false;
    this.streak.set(id, this.max - 1);
    return true;
  }
}
