/**
 * The round loop's rules one by one (runtime/run.ts, its stages): sampling,
 * minClients, exclusion and maxExcludedShare, re-aggregation without a reply
 * that breaks the aggregate, the per-round accounting; and its hooks:
 * onRound's reports, onCheckpoint's content, stopWhen's early stop, the order
 * they are called in, through runFederation, runFederationSync, and a
 * one-call function's `hooks` option.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  distributedEM,
  InvalidMessageError,
  FederationError,
  init,
  InvalidParameterError,
  makeBlobs,
  runFederation,
  runFederationSync,
  type Message,
  type RoundReport,
  type RunCheckpoint,
} from '../ts/index.js';
import { fedAvg, fedAvgSimulation } from '../ts/federated/fedavg/run.js';
import { simulateOverMqtt } from '../ts/federated/simulate-mqtt.js';
import { Rng } from '../ts/random.js';
import { EditedTransport as Edited, SumClient, sumProtocol, SumServer as ToySumServer } from './support/sum-protocol.js';

beforeAll(async () => {
  await init();
});

const LOOP = sumProtocol('loop');

/**
 * Sums one number per client and round, `rounds` times, then sends the total
 * back to every available client. `blame(round, accepted)` may name a client
 * whose contribution breaks the aggregate (a ContributionError), as a robust
 * server would.
 */
class SumServer extends ToySumServer {
  constructor(rounds: number, blame?: (round: number, accepted: ReadonlyMap<string, Float64Array>) => string | undefined) {
    super(LOOP, { rounds, width: 1, notify: 'available', blame });
  }
}

/** Answers `value`; `bad` rounds it answers -1 instead (an invalid reply). */
class Client extends SumClient {
  constructor(id: string, value: number, bad: (round: number) => boolean = () => false) {
    super(LOOP, id, value, (m, honest) => (bad(m.round) ? LOOP.VALUE.create(id, m.round, { values: Float64Array.of(-1) }) : honest));
  }
}

const clients = (n: number) => Array.from({ length: n }, (_, i) => new Client(`c${i}`, i + 1));
/** what a client got, as kind@round */
const got = (c: SumClient) => c.got.map((m: Message) => `${m.kind}@${m.round}`);

describe('the loop\'s rules', () => {
  test('sampling: a fraction of the available clients, at least minReplies, drawn with sampleSeed; the checkpoint keeps the draws, which replay the sampler', () => {
    const run = (seed: number) => {
      const server = new SumServer(4);
      const checkpoints: RunCheckpoint[] = [];
      const r = runFederationSync(server, clients(10), { fraction: 0.3, sampleSeed: seed, minReplies: 2, onCheckpoint: (c) => void checkpoints.push(c) });
      return { server, r, checkpoints };
    };
    const a = run(7);
    const asked = a.server.asked.filter((x) => x.round <= 4);
    // ceil(0.3 * 10) = 3 of the 10, sorted in the transport's order, and not all the same
    for (const x of asked) {
      expect(x.clients).toHaveLength(3);
      expect([...x.clients].sort((p, q) => Number(p.slice(1)) - Number(q.slice(1)))).toEqual(x.clients);
    }
    expect(new Set(asked.map((x) => x.clients.join())).size).toBeGreaterThan(1);
    expect(a.r.history.filter((h) => h.replies).map((h) => h.asked)).toEqual([3, 3, 3, 3]);
    // the same seed, the same clients; another seed, another draw
    expect(run(7).server.asked).toEqual(a.server.asked);
    expect(run(8).server.asked.map((x) => x.clients.join())).not.toEqual(asked.map((x) => x.clients.join()));
    // the draws [available, asked] replayed from sampleSeed give the same clients
    const draws = a.checkpoints.at(-1)!.sampleDraws;
    expect(draws).toEqual([[10, 3], [10, 3], [10, 3], [10, 3]]);
    const rng = new Rng(7);
    const ids = clients(10).map((c) => c.id);
    const replayed = draws.map(([n, k]) => Array.from(rng.choice(n, k)).sort((p, q) => p - q).map((i) => ids[i]!).join());
    rng.dispose();
    expect(replayed).toEqual(asked.map((x) => x.clients.join()));
    // minReplies raises the sample: at least 5 of the 10
    const server = new SumServer(2);
    runFederationSync(server, clients(10), { fraction: 0.1, sampleSeed: 1, minReplies: 5 });
    expect(server.asked[0]!.clients).toHaveLength(5);
    // no sampling without a fraction: every client, no draws
    const all = new SumServer(2);
    const seen: RunCheckpoint[] = [];
    runFederationSync(all, clients(4), { onCheckpoint: (c) => void seen.push(c) });
    expect(all.asked[0]!.clients).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(seen[1]!.sampleDraws).toEqual([]);
  });

  test('minClients counts the clients there before round 1; fewer fail the run, exactly as many run it', () => {
    expect(() => runFederationSync(new SumServer(1), clients(2), { minClients: 3 })).toThrow(FederationError);
    expect(() => runFederationSync(new SumServer(1), clients(2), { minClients: 3 })).toThrow(/round 1: 2 clients available, fewer than the 3 required \(minClients\)/);
    const r = runFederationSync(new SumServer(1), clients(3), { minClients: 3 });
    expect(Array.from(r.model)).toEqual([6]);
    // clients excluded before the run do not count towards it
    expect(() => runFederationSync(new SumServer(1), clients(3), { minClients: 3, excludedBefore: [{ client: 'c2', round: 0, reason: 'could not be made' }] })).toThrow(/2 clients available/);
  });

  test('exclusion: an invalid reply excludes its client for the rest of the run (never asked again); maxExcludedShare fails the run past its share; onInvalid fail throws the client\'s error', () => {
    const roles = [new Client('c0', 1), new Client('c1', 2, (r) => r === 2), new Client('c2', 3), new Client('c3', 4)];
    const reports: RoundReport[] = [];
    const server = new SumServer(3);
    const r = runFederationSync(server, roles, { onRound: (x) => void reports.push(x) });
    expect(r.excluded).toEqual([{ client: 'c1', round: 2, reason: expect.stringMatching(/^c1: values must be non-negative$/) }]);
    expect(reports.map((x) => x.excluded.map((e) => e.client))).toEqual([[], ['c1'], [], []]);
    expect(server.asked.map((x) => x.clients.includes('c1'))).toEqual([true, true, false, false]);
    expect(got(roles[1]!)).toEqual(['loop/ask@1', 'loop/ask@2']);
    expect(Array.from(r.model)).toEqual([1 + 2 + 3 + 4 + (1 + 3 + 4) * 2]);
    expect(r.history[1]!.failures).toEqual([{ client: 'c1', round: 2, kind: 'invalid', reason: expect.any(String), excluded: true }]);
    // one of four excluded is 0.25: over a share of 0.2, within 0.25
    const again = () => [new Client('c0', 1), new Client('c1', 2, (r) => r === 2), new Client('c2', 3), new Client('c3', 4)];
    expect(() => runFederationSync(new SumServer(3), again(), { maxExcludedShare: 0.2 })).toThrow(/round 2: 1 of the run's 4 clients are excluded, more than maxExcludedShare \(0\.2\) allows: c1: values must be non-negative/);
    expect(runFederationSync(new SumServer(3), again(), { maxExcludedShare: 0.25 }).excluded).toHaveLength(1);
    // the clients excluded before the run count too: 2 of 4 is over 0.25
    expect(() => runFederationSync(new SumServer(3), again(), { maxExcludedShare: 0.25, excludedBefore: [{ client: 'c9', round: 0, reason: 'could not be made' }] })).toThrow(/round 2: 2 of the run's 5 clients are excluded/);
    // onInvalid 'fail': the client's error, the accepted replies discarded
    const failing = new SumServer(3);
    expect(() => runFederationSync(failing, again(), { onInvalid: 'fail' })).toThrow(InvalidMessageError);
    expect(() => runFederationSync(new SumServer(3), again(), { onInvalid: 'fail' })).toThrow(/^c1: values must be non-negative$/);
    expect(failing.discarded).toBe(1);
    // a timeout is not an exclusion: the client is asked again the next round
    const lost = new SumServer(3);
    const t = runFederationSync(lost, new Edited(clients(3), (round, ex) => round === 1 && ex.received.delete('c0')), { maxExcludedShare: 0 });
    expect(t.excluded).toEqual([]);
    expect(t.failures).toEqual([{ client: 'c0', round: 1, kind: 'timeout', reason: 'c0: did not answer round 1', excluded: false }]);
    expect(lost.asked[1]!.clients).toContain('c0');
  });

  test('re-aggregation: a ContributionError takes the blamed reply out, excludes its client and aggregates the others again; the policy still applies', () => {
    const blameC2 = (round: number, accepted: ReadonlyMap<string, unknown>) => (round === 2 && accepted.has('c2') ? 'c2' : undefined);
    const server = new SumServer(3, blameC2);
    const reports: RoundReport[] = [];
    const r = runFederationSync(server, clients(4), { onRound: (x) => void reports.push(x) });
    // round 2 aggregated twice: with c2, then without it (its failure given to the second call)
    expect(server.seen.filter((c) => c.round === 2).map((c) => c.accepted)).toEqual([['c0', 'c1', 'c2', 'c3'], ['c0', 'c1', 'c3']]);
    expect(server.seen.filter((c) => c.round === 2)[1]!.failures.map((f) => f.client)).toEqual(['c2']);
    expect(server.discarded).toBe(1);
    expect(r.excluded).toEqual([{ client: 'c2', round: 2, reason: "c2: its value 3 is far off the others'" }]);
    expect(r.history[1]!.accepted).toBe(3);
    expect(r.history[1]!.failures).toEqual([{ client: 'c2', round: 2, kind: 'invalid', reason: "c2: its value 3 is far off the others'", excluded: true }]);
    expect(reports[1]!.excluded.map((e) => e.client)).toEqual(['c2']);
    expect(Array.from(r.model)).toEqual([10 + 7 + 7]);
    // under 'fail' the blamed client's reply ends the run as an invalid one would
    expect(() => runFederationSync(new SumServer(3, blameC2), clients(4), { onInvalid: 'fail' })).toThrow(/^c2: its value 3 is far off/);
    // too few replies once it is out
    const short = new SumServer(3, blameC2);
    expect(() => runFederationSync(short, clients(3), { minReplies: 3, maxExcludedShare: 1 })).toThrow(/round 2: 2 usable replies of 3 once c2's contribution was taken out, fewer than the 3 required/);
    expect(short.discarded).toBe(3);
    // and past maxExcludedShare
    expect(() => runFederationSync(new SumServer(3, blameC2), clients(4), { maxExcludedShare: 0.1 })).toThrow(/round 2: 1 of the run's 4 clients are excluded/);
  });

  test('accounting: each round\'s record (asked, accepted, bytes, timings) adds up to the run\'s traffic and the clients\'; notifications count bytes but no round', async () => {
    const r = await runFederation(new SumServer(3), clients(3));
    expect(r.rounds).toBe(3);
    expect(r.traffic.rounds).toBe(3);
    expect(r.history.map((h) => [h.round, h.kind, h.replies, h.asked, h.accepted, h.users])).toEqual([
      [1, 'loop/ask', true, 3, 3, 3],
      [2, 'loop/ask', true, 3, 3, 3],
      [3, 'loop/ask', true, 3, 3, 3],
      [3, 'loop/total', false, 3, 0, 0],
    ]);
    const sum = (f: (h: (typeof r.history)[number]) => number) => r.history.reduce((t, h) => t + f(h), 0);
    expect(r.traffic.bytesUp).toBe(sum((h) => h.bytesUp));
    expect(r.traffic.bytesDown).toBe(sum((h) => h.bytesDown));
    expect(r.traffic.messagesDown).toBe(12);
    expect(r.traffic.messagesUp).toBe(9);
    expect(r.traffic.users).toBeUndefined();
    const per = [...r.clientTraffic.values()];
    expect(per.reduce((t, c) => t + c.bytesUp, 0)).toBe(r.traffic.bytesUp);
    expect(per.reduce((t, c) => t + c.bytesDown, 0)).toBe(r.traffic.bytesDown);
    expect(per.map((c) => [c.messagesUp, c.messagesDown])).toEqual([[3, 4], [3, 4], [3, 4]]);
    expect(r.history[3]!.bytesUp).toBe(0);
    for (const h of r.history) for (const ms of Object.values(h.ms)) expect(ms).toBeGreaterThanOrEqual(0);
    expect(r.history.map((h) => h.metrics)).toEqual([{ sum: 6 }, { sum: 12 }, { sum: 18 }, undefined]);
  });
});

describe('the hooks', () => {
  test('callbacks order: onRound, onCheckpoint, stopWhen after each complete round; a round of notifications gets onRound only', async () => {
    for (const drive of ['sync', 'async'] as const) {
      const log: string[] = [];
      const options = {
        onRound: (x: RoundReport) => void log.push(`round ${x.round}${x.replies ? '' : ' (notifications)'}`),
        onCheckpoint: (c: RunCheckpoint) => void log.push(`checkpoint ${c.round}`),
        stopWhen: (x: RoundReport) => void log.push(`stop? ${x.round}`),
      };
      const server = new SumServer(2);
      const r = drive === 'sync' ? runFederationSync(server, clients(2), options) : await runFederation(server, clients(2), options);
      expect(log).toEqual(['round 1', 'checkpoint 1', 'stop? 1', 'round 2', 'checkpoint 2', 'stop? 2', 'round 2 (notifications)']);
      expect(r.stoppedEarly).toBeUndefined();
    }
    // the reports are the records, with the round's exclusions and the time so far
    const reports: RoundReport[] = [];
    const r = runFederationSync(new SumServer(2), clients(2), { onRound: (x) => void reports.push(x) });
    reports.forEach((x, i) => {
      const { excluded, elapsed, ...rest } = x;
      expect(rest).toEqual(r.history[i]);
      expect(excluded).toEqual([]);
      expect(elapsed).toBeGreaterThanOrEqual(0);
      expect(elapsed).toBeLessThanOrEqual(r.seconds);
    });
    expect(reports.map((x) => x.metrics)).toEqual([{ sum: 3 }, { sum: 6 }, undefined]);
    // hooks are checked: functions or nothing
    expect(() => runFederationSync(new SumServer(1), clients(1), { onCheckpoint: 'save' as never })).toThrow(InvalidParameterError);
    expect(() => runFederationSync(new SumServer(1), clients(1), { stopWhen: 3 as never })).toThrow(/stopWhen must be a function/);
    // a hook's error ends the run with it
    expect(() => runFederationSync(new SumServer(3), clients(2), { onCheckpoint: (c) => { if (c.round === 2) throw new Error('disk full'); } })).toThrow('disk full');
  });

  test('checkpoint content: each round\'s number, the server role, the policy and its counters, the traffic and the history, as copies', () => {
    const got: RunCheckpoint[] = [];
    const server = new SumServer(4);
    const roles = [new Client('c0', 1), new Client('c1', 2, (r) => r === 2), new Client('c2', 3), new Client('c3', 4)];
    const transport = new Edited(roles, (round, ex) => round === 3 && ex.received.delete('c3'));
    /** the server's state when each checkpoint was taken: what saving it would keep */
    const totals: number[] = [];
    const onCheckpoint = (c: RunCheckpoint) => {
      got.push(c);
      totals.push((c.server as SumServer).total[0]!);
    };
    const r = runFederationSync(server, transport, { excludedBefore: [{ client: 'c9', round: 0, reason: 'could not be made' }], maxExcludedShare: 0.5, onCheckpoint });
    expect(got.map((c) => c.round)).toEqual([1, 2, 3, 4]);
    for (const c of got) {
      expect(c.server).toBe(server);
      expect(c.history.filter((h) => h.replies)).toHaveLength(c.round);
      expect(c.traffic.rounds).toBe(c.round);
      expect(c.policy).toMatchObject({ onInvalid: 'exclude', minClients: 1, minReplies: 1, fraction: 1, maxExcludedShare: 0.5 });
      expect(c.seen.sort()).toEqual(['c0', 'c1', 'c2', 'c3', 'c9']);
      expect(c.elapsed).toBeGreaterThanOrEqual(0);
    }
    // the counters as they were after each round: exclusions, failures, missed rounds
    expect(got.map((c) => c.excluded.map((e) => e.client))).toEqual([['c9'], ['c9', 'c1'], ['c9', 'c1'], ['c9', 'c1']]);
    expect(got.map((c) => c.failures.map((f) => `${f.client}@${f.round}:${f.kind}`))).toEqual([[], ['c1@2:invalid'], ['c1@2:invalid', 'c3@3:timeout'], ['c1@2:invalid', 'c3@3:timeout']]);
    expect(got.map((c) => [...c.missed])).toEqual([[], [], [['c3', [3]]], [['c3', [3]]]]);
    // the server between rounds holds the total so far, as the history's metrics say (round 3 without c1, excluded, and c3, timed out)
    expect(totals).toEqual([10, 18, 22, 30]);
    expect(got.map((c) => (c.history.at(-1)!.metrics as { sum: number }).sum)).toEqual(totals);
    // copies: the run going on does not change a checkpoint kept earlier
    expect(got[0]!.traffic.bytesUp).toBeLessThan(r.traffic.bytesUp);
    expect(got[0]!.clientTraffic.get('c0')!.messagesUp).toBe(1);
    expect(r.clientTraffic.get('c0')!.messagesUp).toBe(4);
  });

  test('checkpoint: runFederation waits for an asynchronous hook before the next round; runFederationSync refuses one', async () => {
    const server = new SumServer(3);
    const events: string[] = [];
    const configure = server.configure.bind(server);
    server.configure = (ctx) => {
      events.push(`configure ${ctx.round}`);
      return configure(ctx);
    };
    await runFederation(server, clients(2), {
      onCheckpoint: async (c) => {
        events.push(`saving ${c.round}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`saved ${c.round}`);
      },
    });
    expect(events).toEqual(['configure 1', 'saving 1', 'saved 1', 'configure 2', 'saving 2', 'saved 2', 'configure 3', 'saving 3', 'saved 3', 'configure 4']);
    expect(() => runFederationSync(new SumServer(2), clients(2), { onCheckpoint: async () => undefined })).toThrow(/onCheckpoint returned a promise, which runFederationSync/);
  });

  test('early stop: stopWhen ends the run after the round it says, with the server\'s result so far; the result and the transport say why', async () => {
    const server = new SumServer(10);
    const roles = clients(3);
    const transport = new Edited(roles);
    const calls: number[] = [];
    const r = await runFederation(server, transport, {
      stopWhen: (x) => {
        calls.push(x.round);
        return (x.metrics as { sum: number }).sum >= 15 && 'the sum reached 15';
      },
    });
    expect(calls).toEqual([1, 2, 3]);
    expect(r.rounds).toBe(3);
    expect(Array.from(r.model)).toEqual([18]);
    expect(r.stoppedEarly).toEqual({ round: 3, reason: 'the sum reached 15' });
    expect(r.history).toHaveLength(3);
    // no result went back to the clients; the transport told them the run ended, and why
    expect(got(roles[0]!)).toEqual(['loop/ask@1', 'loop/ask@2', 'loop/ask@3']);
    expect(transport.finished).toEqual({ ok: true, reason: 'stopped early after round 3: the sum reached 15' });
    // true stops with a reason that says so; a run to its end has no stoppedEarly
    expect(runFederationSync(new SumServer(5), clients(1), { stopWhen: (x) => x.round === 2 }).stoppedEarly).toEqual({ round: 2, reason: 'stopWhen returned true after round 2' });
    const full = new Edited(clients(2));
    const all = await runFederation(new SumServer(2), full, { stopWhen: () => false });
    expect(all.stoppedEarly).toBeUndefined();
    expect(full.finished).toEqual({ ok: true, reason: undefined });
    // anything but true, a reason, false or undefined is an error
    expect(() => runFederationSync(new SumServer(3), clients(1), { stopWhen: () => 1 as never })).toThrow(/stopWhen must return true or a reason/);
  });

  test('a one-call function passes its hooks option on: distributedEM stopped early, and unchanged by hooks that do not stop', () => {
    const { X } = makeBlobs({ nClusters: 2, nFeatures: 2, samplesPerCluster: 60, seed: 3 });
    const parts = [X.selectRows(Int32Array.from({ length: 40 }, (_, i) => i)), X.selectRows(Int32Array.from({ length: 40 }, (_, i) => 40 + i)), X.selectRows(Int32Array.from({ length: 40 }, (_, i) => 80 + i))];
    // 'separated' starts from the corners of the feature range, so EM runs several rounds
    const options = { nComponents: 2, seed: 4, featureRange: [-50, 50] as [number, number], init: 'separated' as const };
    const plain = distributedEM(parts, options);
    const reports: RoundReport[] = [];
    const watched = distributedEM(parts, { ...options, hooks: { onRound: (x) => void reports.push(x), onCheckpoint: () => undefined } });
    expect(watched.model.means).toEqual(plain.model.means);
    expect(watched.rounds).toBe(plain.rounds);
    expect(reports.filter((x) => x.replies).map((x) => x.round)).toEqual(Array.from({ length: plain.rounds }, (_, i) => i + 1));
    expect(plain.rounds).toBeGreaterThan(plain.initRounds + 2);
    const stopAt = plain.initRounds + 2;
    const stopped = distributedEM(parts, { ...options, hooks: { stopWhen: (x) => x.round >= stopAt && 'two EM rounds are enough here' } });
    expect(stopped.rounds).toBe(stopAt);
    expect(stopped.emRounds).toBe(2);
    expect(stopped.federation.stoppedEarly).toEqual({ round: stopAt, reason: 'two EM rounds are enough here' });
    expect(plain.federation.stoppedEarly).toBeUndefined();
    expect(() => distributedEM(parts, { ...options, hooks: { onRound: 1 as never } })).toThrow(InvalidParameterError);
    expect(() => distributedEM(parts, { ...options, hooks: { onround: () => undefined } as never })).toThrow(InvalidParameterError);
    for (const r of [plain, watched, stopped]) r.model.dispose();
  });

  test('over the embedded MQTT broker: fedAvg\'s hooks option stops the run there as in process, and the clients see it end well', async () => {
    const { X, labels } = makeBlobs({ nClusters: 3, nFeatures: 4, samplesPerCluster: 40, seed: 5 });
    const rows = (from: number) => Int32Array.from({ length: 40 }, (_, i) => from + i);
    const data = [0, 40, 80].map((from) => ({ X: X.selectRows(rows(from)), labels: labels.subarray(from, from + 40) }));
    const options = (hooks: Parameters<typeof fedAvg>[1]['hooks']) => ({
      network: { sizes: [4, 8, 3], activation: 'relu' as const, outputActivation: 'softmax' as const, loss: 'softmax-cross-entropy' as const, seed: 1 },
      rounds: 6,
      epochs: 1,
      batchSize: 16,
      seed: 1,
      hooks,
    });
    const seen: number[] = [];
    const stop = { onRound: (x: RoundReport) => void seen.push(x.round), stopWhen: (x: RoundReport) => x.round === 2 && 'two rounds for the test' };
    const here = fedAvg(data, options(stop));
    expect(here.rounds).toBe(2);
    expect(here.federation.stoppedEarly).toEqual({ round: 2, reason: 'two rounds for the test' });
    seen.length = 0;
    const there = await simulateOverMqtt(fedAvgSimulation(data, options(stop)), { federation: 'hooks-test' });
    expect(seen).toEqual([1, 2]);
    expect(there.federation.stoppedEarly).toEqual({ round: 2, reason: 'two rounds for the test' });
    expect(Array.from(there.parameters)).toEqual(Array.from(here.parameters));
  }, 60_000);
});
