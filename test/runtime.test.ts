/**
 * The federation runtime on a toy protocol (each round the server asks for a
 * vector and sums what it accepts): the round loop in both drivers, the
 * failure policy (refusals, invalid replies, duplicates, strays, stale and
 * late replies, timeouts), minimums, sampling, notifications, size limits and
 * the accounting of rounds and bytes.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  encodeMessage,
  FederationError,
  init,
  InProcessTransport,
  InvalidDataError,
  ContributionError,
  InvalidParameterError,
  runFederation,
  runFederationSync,
  type Exchange,
  type Failure,
  type Message,
  type RoundContext,
  type SyncTransport,
} from '../ts/index.js';
import { decodeMessage } from '../ts/federated/messages/codec.js';
import { encodeArrow } from '../ts/federated/messages/arrow-ipc.js';
import { EditedTransport as Edited, SumClient, sumProtocol, SumServer as ToySumServer } from './support/sum-protocol.js';

beforeAll(async () => {
  await init();
});

const TOY = sumProtocol('toy');
const { ASK, VALUE, TOTAL } = TOY;

/** Asks every client of the round for 3 numbers, `rounds` times; then, with `notify`, sends the total back. */
class SumServer extends ToySumServer {
  constructor(rounds: number, notify = false) {
    super(TOY, { rounds, width: 3, notify: notify && 'sampled' });
  }
}

/** Answers with (base, base, base) each round; `misbehave` may replace or refuse. */
class Client extends SumClient {
  constructor(id: string, base: number, misbehave?: (m: Message, honest: Message) => Message | undefined) {
    super(TOY, id, base, misbehave);
  }
}

const clients = (n: number) => Array.from({ length: n }, (_, i) => new Client(`c${i}`, i + 1));

describe('the round loop', () => {
  test('sync and async drivers give the same run; rounds, bytes and messages are counted per client', async () => {
    const a = runFederationSync(new SumServer(3, true), clients(4));
    const b = await runFederation(new SumServer(3, true), clients(4));
    expect(Array.from(a.model)).toEqual([30, 30, 30]);
    expect(Array.from(b.model)).toEqual(Array.from(a.model));
    expect(a.rounds).toBe(3);
    // three rounds of requests, then notifications: the end of round 3, no round of their own
    expect(a.history.map((r) => [r.round, r.replies])).toEqual([
      [1, true],
      [2, true],
      [3, true],
      [3, false],
    ]);
    // every message carries the run's id (32 hex digits in both runs)
    expect(b.run).not.toBe(a.run);
    const run = a.run;
    const ask = encodeMessage({ ...ASK.create('server', 1, { length: 3 }), run }, 'binary').length;
    const reply = encodeMessage({ ...VALUE.create('c0', 1, { values: new Float64Array(3) }), run }, 'binary').length;
    const total = encodeMessage({ ...TOTAL.create('server', 3, { values: new Float64Array(3) }), run }, 'binary').length;
    for (const [, t] of a.clientTraffic) {
      expect(t).toEqual({ bytesDown: 3 * ask + total, bytesUp: 3 * reply, messagesDown: 4, messagesUp: 3 });
    }
    expect(a.traffic).toEqual({ rounds: 3, bytesDown: 4 * (3 * ask + total), bytesUp: 12 * reply, messagesDown: 16, messagesUp: 12 });
    expect(b.traffic).toEqual(a.traffic);
    expect(a.history[2]!.metrics).toEqual({ sum: 90 });
    expect(a.excluded).toEqual([]);
  });

  test('JSON and binary encodings give the same run, in different bytes', () => {
    const json = runFederationSync(new SumServer(2), new InProcessTransport(clients(3), { encoding: 'json' }));
    const bin = runFederationSync(new SumServer(2), new InProcessTransport(clients(3), { encoding: 'binary' }));
    const none = runFederationSync(new SumServer(2), new InProcessTransport(clients(3), { encoding: 'none' }));
    expect(Array.from(json.model)).toEqual(Array.from(bin.model));
    expect(Array.from(none.model)).toEqual(Array.from(bin.model));
    expect(json.traffic.bytesUp).not.toBe(bin.traffic.bytesUp);
    expect(none.traffic.messagesUp).toBe(bin.traffic.messagesUp);
  });

  test('a broadcast is decoded once in process: its clients share one read-only request, apart from the server', () => {
    const cs = clients(2);
    const server = new SumServer(1, true);
    runFederationSync(server, cs);
    const [a, b] = [cs[0]!.got.at(-1)!, cs[1]!.got.at(-1)!];
    expect(a.kind).toBe('toy/total');
    expect(Array.from((a.payload as { values: Float64Array }).values)).toEqual([3, 3, 3]);
    expect((a.payload as { values: Float64Array }).values).toBe((b.payload as { values: Float64Array }).values);
    expect((a.payload as { values: Float64Array }).values).not.toBe(server.total);
    // bytes are still counted for every client it went to
    expect(runFederationSync(new SumServer(1, true), clients(2)).traffic.messagesDown).toBe(4);
  });

  test("a request to one client is encoded when delivered and released (requestDone) once it answered; a broadcast once all have", () => {
    const log: string[] = [];
    class Logged extends Client {
      override respond(m: Message): Message | undefined {
        log.push(`respond ${this.id}`);
        return super.respond(m);
      }
      requestDone(): void {
        log.push(`done ${this.id}`);
      }
    }
    /** The first round: a distinct request object per client (as a communities relay); then the broadcast total. */
    class Distinct extends SumServer {
      private first = true;
      override configure(ctx: RoundContext): Map<string, Message> {
        if (!this.first) return super.configure(ctx);
        this.first = false;
        return new Map(ctx.clients.map((id) => [id, ASK.create('server', ctx.round, { length: 3 })]));
      }
    }
    const cs = [0, 1, 2].map((i) => new Logged(`c${i}`, i + 1));
    const run = runFederationSync(new Distinct(1, true), cs);
    expect(log).toEqual(['respond c0', 'done c0', 'respond c1', 'done c1', 'respond c2', 'done c2', 'respond c0', 'respond c1', 'respond c2', 'done c0', 'done c1', 'done c2']);
    // every request's bytes counted, in the order the requests were made
    expect([...run.clientTraffic.keys()]).toEqual(['c0', 'c1', 'c2']);
    expect(run.traffic.messagesDown).toBe(6);
    expect(run.traffic.bytesDown).toBe(runFederationSync(new SumServer(1, true), clients(3)).traffic.bytesDown);
  });
});

describe('failures and the policy', () => {
  test('a client that refuses is excluded with its reason and asked no more; with onInvalid fail the run throws its error', () => {
    const refusing = (m: Message) => {
      throw new InvalidDataError(`cannot answer round ${m.round}`);
    };
    const make = () => [...clients(2), new Client('bad', 100, refusing)];
    const r = runFederationSync(new SumServer(3), make());
    expect(Array.from(r.model)).toEqual([9, 9, 9]);
    expect(r.excluded).toEqual([{ client: 'bad', round: 1, reason: 'bad: cannot answer round 1' }]);
    expect(r.failures[0]).toMatchObject({ kind: 'refused', excluded: true });
    expect(r.history.map((h) => h.asked)).toEqual([3, 2, 2]);
    expect(() => runFederationSync(new SumServer(3), make(), { onInvalid: 'fail' })).toThrow(InvalidDataError);
    expect(() => runFederationSync(new SumServer(3), make(), { onInvalid: 'fail' })).toThrow(/bad: cannot answer round 1/);
  });

  test.each([
    ['a reply the server refuses', (_m: Message, h: Message) => ({ ...h, payload: { values: [1, -1, 1] } }) as Message, /values must be non-negative/],
    ['another sender', (_m: Message, h: Message) => ({ ...h, from: 'c0' }), /claims to come from "c0"/],
    ['another round', (_m: Message, h: Message) => ({ ...h, round: h.round + 5 }), /is for round 6, not 1/],
    ['another kind', (_m: Message, h: Message) => ({ ...h, kind: 'toy/total' }), /expected a toy\/value message, got toy\/total/],
    ['a field the message does not declare', (_m: Message, h: Message) => ({ ...h, payload: { ...(h.payload as object), extra: 1 } }), /does not declare/],
    ['a NaN', (_m: Message, h: Message) => ({ ...h, payload: { values: [1, NaN, 1] } }) as Message, /cannot send NaN/],
  ])('%s: the client is excluded and the result equals the run without it', (_what, corrupt, reason) => {
    for (const encoding of ['binary', 'json'] as const) {
      const withBad = runFederationSync(new SumServer(2), new InProcessTransport([...clients(3), new Client('bad', 50, corrupt)], { encoding }));
      const without = runFederationSync(new SumServer(2), new InProcessTransport(clients(3), { encoding }));
      expect(Array.from(withBad.model)).toEqual(Array.from(without.model));
      expect(withBad.excluded.map((e) => e.client)).toEqual(['bad']);
      expect(withBad.excluded[0]!.reason).toMatch(reason);
    }
  });

  test('a reply nesting 10,000 levels deep (20 kB of JSON) is refused before anything walks it: its sender is excluded, the round completes', () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    for (const encoding of ['json', 'binary'] as const) {
      const t = new Edited(
        clients(3),
        (round, ex) => {
          if (round !== 1) return;
          // c1's reply replaced by one whose payload nests deeply, as text or as a binary message's header
          const text = `{"protocol":"fedmix","version":1,"kind":"toy/value","from":"c1","round":1,"payload":{"values":${deep}}}`;
          ex.received.set('c1', [encoding === 'json' ? new TextEncoder().encode(text) : encodeArrow(text, [])]);
        },
        encoding,
      );
      const r = runFederationSync(new SumServer(2), t);
      expect(r.excluded.map((e) => e.reason)).toEqual(['c1: a message nests deeper than 64 levels']);
      expect(Array.from(r.model)).toEqual(Array.from(runFederationSync(new SumServer(2), [new Client('c0', 1), new Client('c2', 3)]).model));
    }
  });

  test("message objects get the envelope checks their bytes would (encoding 'none'); a reply that is not a message is the client's fault", () => {
    const bad = [
      new Client('wrong-version', 1, (_m, h) => ({ ...h, version: 2 }) as unknown as Message),
      new Client('no-round', 1, (_m, h) => ({ ...h, round: 'one' }) as unknown as Message),
      new Client('null', 1, () => null as unknown as Message),
      new Client('deep', 1, (_m, h) => {
        let v: unknown = [1];
        for (let i = 0; i < 200; i++) v = [v];
        return { ...h, payload: { values: v } } as Message;
      }),
    ];
    // four of six excluded: more than the default share, allowed here
    const r = runFederationSync(new SumServer(1), [...clients(2), ...bad], { maxExcludedShare: 1 });
    const none = runFederationSync(new SumServer(1), new InProcessTransport([...clients(2), ...bad], { encoding: 'none' }), { maxExcludedShare: 1 });
    for (const run of [r, none]) {
      expect(run.excluded.map((e) => e.client)).toEqual(['wrong-version', 'no-round', 'null', 'deep']);
      expect(Array.from(run.model)).toEqual([3, 3, 3]);
    }
    expect(none.excluded[1]!.reason).toMatch(/non-negative integer "round"/);
    expect(none.excluded[2]!.reason).toMatch(/a message must be a JSON object, got null/);
    expect(none.excluded[3]!.reason).toMatch(/nesting deeper than 64 levels/);
  });

  test('a contribution that breaks the aggregate (ContributionError) excludes its client; the others are aggregated again, the state as if it never answered', () => {
    /** A sum whose total may not pass 30: the server blames the largest contribution when it would. */
    class CappedServer extends SumServer {
      attempts = 0;
      override aggregate(ctx: RoundContext, accepted: ReadonlyMap<string, Float64Array>, failures: readonly Failure[]): { sum: number } {
        this.attempts += 1;
        const sum = [...accepted.values()].reduce((t, v) => t + v[0]!, 0);
        if (this.total[0]! + sum > 30) {
          const [worst] = [...accepted].sort((a, b) => b[1][0]! - a[1][0]!)[0]!;
          throw new ContributionError(worst, `its values make the total pass 30`, 'its values break the total');
        }
        return super.aggregate(ctx, accepted, failures);
      }
    }
    const big = new Client('big', 90);
    const server = new CappedServer(2);
    const r = runFederationSync(server, [...clients(3), big]);
    expect(r.excluded).toEqual([{ client: 'big', round: 1, reason: 'big: its values make the total pass 30' }]);
    expect(r.failures.map((f) => [f.client, f.kind, f.excluded])).toEqual([['big', 'invalid', true]]);
    expect(Array.from(r.model)).toEqual([12, 12, 12]);
    expect(server.seen.map((s) => s.accepted)).toEqual([['c0', 'c1', 'c2'], ['c0', 'c1', 'c2']]);
    expect(server.discarded).toBe(1);
    expect(r.history[0]!.accepted).toBe(3);
    // under the 'fail' policy the run throws, and nothing accepted is kept
    const strict = new CappedServer(2);
    expect(() => runFederationSync(strict, [...clients(3), big], { onInvalid: 'fail' })).toThrow(/big: its values make the total pass 30/);
    expect(strict.discarded).toBe(4);
    // too few left: a FederationError
    expect(() => runFederationSync(new CappedServer(1), [new Client('a', 1), big], { minReplies: 2 })).toThrow(/1 usable reply of 2 once big's contribution was taken out/);
  });

  test('a server under privacy passes on which check failed, never the values', () => {
    const server = new SumServer(1);
    Object.defineProperty(server, 'detailedReasons', { value: false });
    const r = runFederationSync(server, [...clients(2), new Client('bad', 1, (_m, h) => ({ ...h, payload: { values: [7, -3.25, 7] } }) as Message)]);
    expect(r.excluded[0]!.reason).toBe('bad: a value is negative');
    expect(r.excluded[0]!.reason).not.toMatch(/3\.25/);
  });

  test('QoS 1 duplicates: an identical copy is ignored, a different second reply excludes its sender', () => {
    const dup = new Edited(clients(3), (_r, ex) => {
      const first = ex.received.get('c0')![0]!;
      ex.received.get('c0')!.push(first);
      const c1 = ex.received.get('c1')!;
      const other = encodeMessage(VALUE.create('c1', (c1[0] instanceof Uint8Array ? decodeMessage(c1[0]) : c1[0]!.message).round, { values: new Float64Array([9, 9, 9]) }), 'binary');
      c1.push(other);
    });
    const server = new SumServer(1);
    const r = runFederationSync(server, dup);
    expect(r.excluded.map((e) => [e.client, e.reason])).toEqual([['c1', 'c1: sent more than one reply in round 1']]);
    expect(server.seen[0]!.accepted).toEqual(['c0', 'c2']);
    expect(Array.from(r.model)).toEqual([4, 4, 4]);
    // both copies counted as traffic
    expect(r.traffic.messagesUp).toBe(5);
  });

  test('a message nobody asked for excludes a known sender; a late reply after a timeout is dropped, even before the real one; unknown senders are ignored', () => {
    let lost: Uint8Array | undefined;
    const t = new Edited(clients(3), (round, ex) => {
      if (round === 1) {
        // c2's reply of round 1 is late: it arrives in round 2, when c2 is asked again
        lost = ex.received.get('c2')![0] as Uint8Array;
        ex.received.delete('c2');
        ex.missing.set('c2', { kind: 'timeout', reason: 'did not answer round 1 in time' });
      } else if (round === 2) {
        ex.received.get('c2')!.unshift(lost!);
        ex.received.set('stranger', [lost!]);
      }
    });
    const server = new SumServer(2);
    const r = runFederationSync(server, t);
    // the late copy of round 1 came first: it is dropped, and c2's round-2 reply counts; the stranger is ignored
    expect(r.failures.map((f) => [f.client, f.kind, f.excluded])).toEqual([['c2', 'timeout', false]]);
    expect(server.seen.map((s) => s.accepted)).toEqual([
      ['c0', 'c1'],
      ['c0', 'c1', 'c2'],
    ]);
    expect(r.clientTraffic.has('stranger')).toBe(false);
  });

  test('a stale reply of a round the client missed, arriving while it is not asked, is dropped', () => {
    let lost: Uint8Array | undefined;
    const roles = clients(3);
    const t = new Edited(roles, (round, ex) => {
      if (round === 1) {
        lost = ex.received.get('c2')![0] as Uint8Array;
        ex.received.delete('c2');
        ex.missing.set('c2', { kind: 'timeout', reason: 'did not answer round 1 in time' });
      } else if (round === 2) {
        ex.received.set('c2', [...(ex.received.get('c2') ?? []), lost!]);
      }
    });
    // round 2 asks only c0 and c1 (fraction), so c2's late copy is a stray of a round it missed
    const server = new SumServer(2);
    const original = server.configure.bind(server);
    server.configure = (ctx) => {
      const m = original(ctx);
      if (ctx.round === 2) m.delete('c2');
      return m;
    };
    const r = runFederationSync(server, t);
    expect(r.excluded).toEqual([]);
    expect(r.failures.map((f) => f.kind)).toEqual(['timeout']);
  });

  test('a timeout or a dropout costs the client its round only', () => {
    const t = new Edited(clients(3), (round, ex) => {
      if (round === 1) {
        ex.received.delete('c0');
        ex.missing.set('c0', { kind: 'dropout', reason: 'its connection closed' });
      }
    });
    const server = new SumServer(2);
    const r = runFederationSync(server, t);
    expect(r.excluded).toEqual([]);
    expect(r.failures).toEqual([{ client: 'c0', round: 1, kind: 'dropout', reason: 'c0: its connection closed', excluded: false }]);
    expect(server.seen.map((s) => s.accepted)).toEqual([
      ['c1', 'c2'],
      ['c0', 'c1', 'c2'],
    ]);
  });

  test('too few clients or replies fail the run with a FederationError; what was accepted is discarded', () => {
    expect(() => runFederationSync(new SumServer(1), clients(2), { minClients: 3 })).toThrow(FederationError);
    expect(() => runFederationSync(new SumServer(1), clients(2), { minClients: 3 })).toThrow(/2 clients available, fewer than the 3 required/);
    const refusing = () => {
      throw new InvalidDataError('no');
    };
    const server = new SumServer(1);
    expect(() => runFederationSync(server, [new Client('a', 1), new Client('b', 1, refusing)], { minReplies: 2 })).toThrow(
      /round 1: 1 usable reply of 2, fewer than the 2 required \(b: no\)/,
    );
    expect(server.discarded).toBe(1);
    expect(server.total).toEqual(new Float64Array(3));
  });

  test('an oversize reply is refused before it is decoded', () => {
    const big = new Client('big', 1, (_m, h) => ({ ...h, payload: { values: new Float64Array(20_000).fill(1) } }) as Message);
    const r = runFederationSync(new SumServer(1), [...clients(2), big], { maxMessageBytes: 64 * 1024 });
    expect(r.excluded[0]!.reason).toMatch(/big: a message of \d+ bytes is over the limit of 65536 bytes/);
  });

  test('a small binary reply whose sparse arrays would decode beyond the limit is refused while decoding', () => {
    // 20,000 zeros travel as an empty sparse pair: a few hundred bytes that claim 160 kB
    const bomb = new Client('bomb', 1, (_m, h) => ({ ...h, payload: { values: new Float64Array(20_000) } }) as Message);
    const r = runFederationSync(new SumServer(1), [...clients(2), bomb], { maxMessageBytes: 64 * 1024 });
    expect(r.traffic.bytesUp).toBeLessThan(64 * 1024);
    expect(r.excluded.map((e) => e.reason)).toEqual(['bomb: a binary message expands beyond the size limit once its sparse arrays are decoded']);
  });

  test('policy and server mistakes are typed errors', () => {
    expect(() => runFederationSync(new SumServer(1), clients(2), { fraction: 0 })).toThrow(InvalidParameterError);
    expect(() => runFederationSync(new SumServer(1), clients(2), { onInvalid: 'ignore' as never })).toThrow(/onInvalid must be one of/);
    expect(() => runFederationSync(new SumServer(1), [new Client('a', 1), new Client('a', 2)])).toThrow(/two clients have the id "a"/);
    const stray = new SumServer(1);
    stray.configure = () => new Map([['nobody', ASK.create('server', 1, { length: 3 })]]);
    expect(() => runFederationSync(stray, clients(2))).toThrow(/asked nobody, which is not among this round's clients/);
  });
});

describe('maxExcludedShare: a run that loses more than its share of clients fails, naming why', () => {
  const refusing = (m: Message) => {
    throw new InvalidDataError(`cannot answer round ${m.round}`);
  };
  /** n clients, the first `bad` of them refusing in round `from` and after. */
  const mixed = (n: number, bad: number, from = 1) =>
    Array.from({ length: n }, (_, i) => new Client(`c${i}`, i + 1, i < bad ? (m, h) => (m.round >= from ? refusing(m) : h) : undefined));

  test('more than half excluded (the default): a FederationError with every reason, what was accepted discarded; exactly half goes on', async () => {
    const server = new SumServer(3);
    const thrown = (() => {
      try {
        runFederationSync(server, mixed(5, 3, 2));
      } catch (e) {
        return e;
      }
    })();
    expect(thrown).toBeInstanceOf(FederationError);
    expect((thrown as Error).message).toBe(
      "round 2: 3 of the run's 5 clients are excluded, more than maxExcludedShare (0.5) allows: c0: cannot answer round 2; c1: cannot answer round 2; c2: cannot answer round 2",
    );
    // round 2's two accepted replies were discarded, not aggregated
    expect(server.seen.map((s) => s.round)).toEqual([1]);
    expect(server.discarded).toBe(2);
    // the async driver fails the same way
    await expect(runFederation(new SumServer(3), mixed(5, 3, 2))).rejects.toThrow(/^round 2: 3 of the run's 5 clients are excluded/);
    // two of four is not more than half: the run finishes and lists them
    const half = runFederationSync(new SumServer(2), mixed(4, 2));
    expect(half.excluded.map((e) => e.client)).toEqual(['c0', 'c1']);
    expect(Array.from(half.model)).toEqual([14, 14, 14]);
  });

  test('the share is an option in [0, 1]: 0 fails on the first exclusion, 1 never on exclusions; the reasons beyond ten are counted', () => {
    expect(() => runFederationSync(new SumServer(2), mixed(10, 1), { maxExcludedShare: 0 })).toThrow(/^round 1: 1 of the run's 10 clients are excluded, more than maxExcludedShare \(0\) allows: c0: cannot answer round 1$/);
    const all = runFederationSync(new SumServer(2), mixed(30, 29), { maxExcludedShare: 1 });
    expect(all.excluded).toHaveLength(29);
    expect(() => runFederationSync(new SumServer(2), mixed(30, 29))).toThrow(/: c0: cannot answer round 1; .*c9: cannot answer round 1; and 19 more$/);
    for (const bad of [-0.1, 1.5, NaN, '0.5']) {
      expect(() => runFederationSync(new SumServer(1), clients(2), { maxExcludedShare: bad as number })).toThrow(InvalidParameterError);
      expect(() => runFederationSync(new SumServer(1), clients(2), { maxExcludedShare: bad as number })).toThrow(/^maxExcludedShare must be in \[0, 1\], got /);
    }
  });

  test('timeouts and dropouts only cost a round: never counted as exclusions', () => {
    const t = new Edited(clients(3), (round, ex) => {
      for (const id of ['c0', 'c1']) {
        ex.received.delete(id);
        ex.missing.set(id, { kind: round === 1 ? 'timeout' : 'dropout', reason: 'gone for now' });
      }
    });
    const r = runFederationSync(new SumServer(3), t, { maxExcludedShare: 0 });
    expect(r.excluded).toEqual([]);
    expect(r.failures).toHaveLength(6);
  });

  test('a contribution that breaks the aggregate counts as an exclusion', () => {
    class Blaming extends SumServer {
      override aggregate(ctx: RoundContext, accepted: ReadonlyMap<string, Float64Array>, failures: readonly Failure[]): { sum: number } {
        const [first] = accepted.keys();
        if (first !== undefined && accepted.size > 1) throw new ContributionError(first, 'its values break the total');
        return super.aggregate(ctx, accepted, failures);
      }
    }
    expect(() => runFederationSync(new Blaming(1), clients(3))).toThrow(
      "round 1: 2 of the run's 3 clients are excluded, more than maxExcludedShare (0.5) allows: c0: its values break the total; c1: its values break the total",
    );
  });

  test('excludedBefore: clients left out before the run are never asked, listed first (round 0, named), and counted', () => {
    const before = [{ client: 'u1', round: 0, reason: 'creating the client failed: no rows' }];
    const server = new SumServer(2);
    const r = runFederationSync(server, [...clients(2), new Client('bad', 1, refusing)], { excludedBefore: before });
    expect(r.excluded).toEqual([
      { client: 'u1', round: 0, reason: 'u1: creating the client failed: no rows' },
      { client: 'bad', round: 1, reason: 'bad: cannot answer round 1' },
    ]);
    expect(server.seen[0]!.clients).toEqual(['c0', 'c1', 'bad']);
    // two of the run's four clients (three it saw, one before): not more than half; one more is
    expect(() => runFederationSync(new SumServer(2), [...clients(2), new Client('bad', 1, refusing)], { excludedBefore: [...before, { client: 'u2', round: 0, reason: 'no rows' }] })).toThrow(
      /^round 1: 3 of the run's 5 clients are excluded/,
    );
    // a client given as excluded is not asked even when the transport has it
    const listed = new SumServer(1);
    runFederationSync(listed, clients(3), { excludedBefore: [{ client: 'c2', round: 0, reason: 'left out' }] });
    expect(listed.seen[0]!.clients).toEqual(['c0', 'c1']);
    // more than half left out before the run: it fails before the server configures anything
    const early = new SumServer(1);
    expect(() => runFederationSync(early, clients(1), { excludedBefore: [{ client: 'a', round: 0, reason: 'x' }, { client: 'b', round: 0, reason: 'y' }] })).toThrow(
      "before round 1: 2 of the run's 3 clients are excluded, more than maxExcludedShare (0.5) allows: a: x; b: y",
    );
    expect(early.seen).toEqual([]);
    expect(() => runFederationSync(new SumServer(1), clients(1), { excludedBefore: [{ client: 'a', reason: 'x' }] as never })).toThrow(InvalidParameterError);
    expect(() => runFederationSync(new SumServer(1), clients(1), { excludedBefore: 'a' as never })).toThrow(InvalidParameterError);
  });
});

describe('sampling', () => {
  test('a seeded fraction of the clients each round: reproducible, varying, in join order', () => {
    const run = (seed: number) => {
      const server = new SumServer(4);
      runFederationSync(server, clients(10), { fraction: 0.3, sampleSeed: seed });
      return server.seen.map((s) => s.clients);
    };
    const a = run(7);
    expect(a).toEqual(run(7));
    expect(a.every((c) => c.length === 3)).toBe(true);
    expect(new Set(a.map((c) => c.join())).size).toBeGreaterThan(1);
    for (const c of a) expect([...c].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1)))).toEqual(c);
    expect(run(8)).not.toEqual(a);
  });

  test('at least minReplies clients are asked', () => {
    const server = new SumServer(1);
    runFederationSync(server, clients(10), { fraction: 0.1, sampleSeed: 1, minReplies: 4 });
    expect(server.seen[0]!.clients.length).toBe(4);
  });
});

/** A transport for the sync driver that never answers: every client times out. */
class Silent implements SyncTransport {
  readonly name = 'silent';
  availableSync() {
    return ['x', 'y'];
  }
  available() {
    return Promise.resolve(this.availableSync());
  }
  exchangeSync(_round: number, messages: ReadonlyMap<string, Message>): Exchange {
    return { sent: new Map([...messages.keys()].map((id) => [id, 10])), received: new Map(), missing: new Map() };
  }
  exchange(round: number, messages: ReadonlyMap<string, Message>): Promise<Exchange> {
    return Promise.resolve(this.exchangeSync(round, messages));
  }
}

test('a round in which every client times out fails the run, naming the timeouts', () => {
  expect(() => runFederationSync(new SumServer(1), new Silent())).toThrow(/round 1: 0 usable replies of 2, fewer than the 1 required \(x: did not answer round 1; y: did not answer round 1\)/);
});
