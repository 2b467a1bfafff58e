/**
 * A toy protocol for the round loop's tests (test/runtime.test.ts,
 * test/round-loop.test.ts): each round the server asks the round's clients
 * for `width` numbers and sums what it accepts; after the last round it may
 * send the total back (notifications). Its records say what the loop did:
 * every configure and aggregate call, every discarded reply, every message a
 * client got.
 */
import {
  ContributionError,
  defineMessage,
  defineProtocol,
  f64Array,
  InProcessTransport,
  InvalidMessageError,
  record,
  wholeNumber,
  type ClientRole,
  type Exchange,
  type ExchangeOptions,
  type Failure,
  type Message,
  type RoundContext,
  type ServerRole,
} from '../../ts/index.js';

/** The protocol `name`: `name/ask` (how many numbers) answered by `name/value`, then `name/total`, a notification. */
export function sumProtocol(name: string) {
  const ASK = defineMessage(`${name}/ask`, record({ length: wholeNumber(1, 100) }));
  const VALUE = defineMessage(`${name}/value`, record({ values: f64Array() }));
  const TOTAL = defineMessage(`${name}/total`, record({ values: f64Array() }));
  const protocol = defineProtocol(name, [
    [ASK, VALUE],
    [TOTAL, null],
  ]);
  return { ASK, VALUE, TOTAL, protocol };
}

export type SumProtocol = ReturnType<typeof sumProtocol>;

export interface SumServerOptions {
  rounds: number;
  /** numbers per client and round */
  width: number;
  /** after the last round, send the total back to the round's clients ('sampled') or to every available one */
  notify?: false | 'sampled' | 'available';
  /**
   * May name a client whose contribution breaks the aggregate: aggregate then
   * throws a ContributionError for it, as a robust server would.
   */
  blame?: (round: number, accepted: ReadonlyMap<string, Float64Array>) => string | undefined;
}

/** Asks every client of the round for `width` non-negative numbers, `rounds` times, and sums them. */
export class SumServer implements ServerRole<Float64Array, Float64Array> {
  readonly protocol;
  readonly total: Float64Array;
  /** every configure call: its round and the clients it may ask */
  readonly asked: { round: number; clients: readonly string[] }[] = [];
  /** every aggregate call: its round, the round's clients, the replies it was given and the failures */
  readonly seen: { round: number; clients: readonly string[]; accepted: string[]; failures: Failure[] }[] = [];
  discarded = 0;
  private round = 0;
  private notified = false;
  constructor(
    private readonly messages: SumProtocol,
    private readonly options: SumServerOptions,
  ) {
    this.protocol = messages.protocol;
    this.total = new Float64Array(options.width);
  }
  get done(): boolean {
    return this.round >= this.options.rounds && (!this.options.notify || this.notified);
  }
  configure(ctx: RoundContext): Map<string, Message> {
    this.asked.push({ round: ctx.round, clients: ctx.clients });
    if (this.round >= this.options.rounds) {
      this.notified = true;
      const m = this.messages.TOTAL.create('server', this.round, { values: this.total });
      return new Map((this.options.notify === 'available' ? ctx.available : ctx.clients).map((id) => [id, m]));
    }
    const m = this.messages.ASK.create('server', ctx.round, { length: this.options.width });
    return new Map(ctx.clients.map((id) => [id, m]));
  }
  accept(reply: Message): Float64Array {
    const v = (reply.payload as { values: Float64Array }).values;
    if (v.length !== this.options.width) throw new InvalidMessageError(`values has ${v.length} entries; expected ${this.options.width}`);
    if (v.some((x) => !(x >= 0))) throw new InvalidMessageError('values must be non-negative', 'a value is negative');
    return v;
  }
  discard(): void {
    this.discarded += 1;
  }
  aggregate(ctx: RoundContext, accepted: ReadonlyMap<string, Float64Array>, failures: readonly Failure[]): { sum: number } {
    this.seen.push({ round: ctx.round, clients: ctx.clients, accepted: [...accepted.keys()], failures: [...failures] });
    const culprit = this.options.blame?.(ctx.round, accepted);
    if (culprit !== undefined) throw new ContributionError(culprit, `its value ${Array.from(accepted.get(culprit)!).join(', ')} is far off the others'`, 'its value is far off');
    for (const v of accepted.values()) for (let i = 0; i < v.length; i++) this.total[i]! += v[i]!;
    this.round += 1;
    return { sum: this.total.reduce((a, b) => a + b, 0) };
  }
  result(): Float64Array {
    return this.total.slice();
  }
}

/** Answers with `width` copies of `base` each round; `misbehave` may replace the honest reply or refuse (undefined). */
export class SumClient implements ClientRole {
  readonly protocol;
  readonly got: Message[] = [];
  constructor(
    private readonly messages: SumProtocol,
    readonly id: string,
    private readonly base: number,
    private readonly misbehave?: (m: Message, honest: Message) => Message | undefined,
  ) {
    this.protocol = messages.protocol;
  }
  respond(m: Message): Message | undefined {
    this.got.push(m);
    if (m.kind === this.messages.TOTAL.kind) return undefined;
    const length = (m.payload as { length: number }).length;
    const honest = this.messages.VALUE.create(this.id, m.round, { values: new Float64Array(length).fill(this.base) });
    return this.misbehave ? this.misbehave(m, honest) : honest;
  }
}

/** An in-process transport whose exchanges a test can edit (duplicates, strays, lost replies), and that records how the run finished. */
export class EditedTransport extends InProcessTransport {
  finished?: { ok: boolean; reason?: string };
  constructor(
    roles: ClientRole[],
    private readonly edit: (round: number, ex: Exchange) => void = () => undefined,
    encoding: 'binary' | 'json' = 'binary',
  ) {
    super(roles, { encoding });
  }
  override exchangeSync(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Exchange {
    const ex = super.exchangeSync(round, messages, options);
    this.edit(round, ex);
    return ex;
  }
  async finish(outcome: { ok: boolean; reason?: string }): Promise<void> {
    this.finished = outcome;
  }
}
