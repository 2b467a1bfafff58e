/**
 * Run identity (issue 25, item 1): every request and reply carries the run's
 * id, and a reply of another run (a dead run's, delivered again by a broker
 * or by a client that reconnects) is dropped and counted in the round's
 * record, never judged against the client. Shown in process, in worker
 * threads and over the embedded MQTT broker: a reply of an earlier run
 * (recorded there, with its own run id) is delivered to a new run in the
 * middle of its first round; the new run finishes with every client, no
 * failure, the reply counted as another run's, and the model of the
 * undisturbed run. Both sides: an undisturbed run counts none, and a reply
 * of the same run for the wrong round is still judged (test/federation-mqtt
 * 'replay').
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Matrix } from '../ts/data/matrix.js';
import { BinaryInProcess, decodeMessage, encodeMessage } from '../ts/federated/messages/codec.js';
import { freshRunId, isRunId, message } from '../ts/federated/messages/envelope.js';
import { makeClient, makeServer, matrixData, type ClientSpec } from '../ts/federated/registry/index.js';
import { runFederation, type FederationResult } from '../ts/federated/runtime/run.js';
import { startBroker } from '../ts/federated/transport/broker.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import { join, MqttTransport, type JoinResult } from '../ts/federated/transport/mqtt.js';
import { OtherRunError } from '../ts/errors.js';
import { federationTopics } from '../ts/federated/transport/topics.js';
import type { Exchange, ExchangeOptions, Transport } from '../ts/federated/transport/transport.js';
import type { Message } from '../ts/federated/messages/envelope.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { init } from '../ts/wasm/loader.js';
import { connectAsync } from 'mqtt';
import { xorshift32 } from './helpers.js';

/** Rows around three centers: two clients of 90 rows. */
function rows(seed: number): number[][] {
  const next = xorshift32(seed);
  const u = () => (next() + 0.5) / 2 ** 32;
  const centers = [[0, 0], [4, 0], [0, 4]];
  return Array.from({ length: 90 }, (_, i) => {
    const c = centers[i % 3]!;
    const g = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
    return [c[0]! + 0.5 * g(), c[1]! + 0.5 * g()];
  });
}
const SPECS: ClientSpec[] = ['c0', 'c1'].map((id, i) => ({ algorithm: 'dem', id, data: matrixData(Matrix.fromRows(rows(11 + i))) }));
/** Two runs that differ (server seed): their replies differ. */
const server = (seed: number) => makeServer('dem', { nFeatures: 2, nComponents: 3, covarianceType: 'diag', init: 'kfed', seed, maxRounds: 4, tol: 0 });

/**
 * A transport that records every reply and, in `injectRound`, delivers
 * `inject` (a reply of another run) to c0 before its own reply: as a broker
 * hands over a dead run's reply queued in a persistent session.
 */
class Meddler implements Transport {
  readonly name: string;
  readonly replies: Uint8Array[][] = [];
  /** c0's request of each round, as sent (with the run's id) */
  readonly requests: Message[] = [];
  injected = 0;
  constructor(
    private readonly inner: Transport,
    private readonly inject?: { round: number; bytes: Uint8Array },
  ) {
    this.name = inner.name;
  }
  /** the run the transport announces (over MQTT, the one clients answer): the runtime takes it */
  get run(): string | undefined {
    return (this.inner as { run?: string }).run;
  }
  available(min: number, timeoutMs: number, excluded?: ReadonlySet<string>) {
    return this.inner.available(min, timeoutMs, excluded);
  }
  async exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    const sent = messages.get('c0');
    if (sent) this.requests[round] = sent;
    const ex = await this.inner.exchange(round, messages, options);
    // in process a binary reply is handed over without its bytes: its message encoded again gives them
    this.replies[round] = (ex.received.get('c0') ?? []).flatMap((r) => (r instanceof Uint8Array ? [r] : r instanceof BinaryInProcess ? [encodeMessage(r.message, 'binary')] : []));
    if (this.inject?.round === round) {
      ex.received.set('c0', [this.inject.bytes, ...(ex.received.get('c0') ?? [])]);
      this.injected += 1;
    }
    return ex;
  }
  users(id: string) {
    return this.inner.users?.(id) ?? 1;
  }
  finish(outcome: { ok: boolean; reason?: string }) {
    return this.inner.finish?.(outcome) ?? Promise.resolve();
  }
}

const numbers = (r: FederationResult) => {
  const m = r.model as { weights: Float64Array; means: Float64Array; covariances: Float64Array };
  return [Array.from(m.weights), Array.from(m.means), Array.from(m.covariances)];
};

/** A run over `transport`, the server disposed after. */
async function run(seed: number, transport: Transport): Promise<FederationResult> {
  const s = server(seed);
  try {
    return await runFederation(s, transport, { roundTimeout: 20 });
  } finally {
    s.dispose?.();
  }
}

beforeAll(async () => {
  await init();
});

test('run ids: fresh ones are 128 random bits; a message carries one through both wire forms, and a malformed one is refused', () => {
  const ids = new Set(Array.from({ length: 100 }, freshRunId));
  expect(ids.size).toBe(100);
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  const m = { ...message('dem/count', 'c0', 2, { rows: 3, features: 2 }), run: 'run-abcdefgh' };
  for (const encoding of ['json', 'binary'] as const) expect(decodeMessage(encodeMessage(m, encoding)).run).toBe('run-abcdefgh');
  expect(decodeMessage(encodeMessage(message('dem/count', 'c0', 2, { rows: 3, features: 2 }), 'json')).run).toBeUndefined();
  for (const bad of ['short', 'x'.repeat(65), 'has space ok', 7]) {
    expect(isRunId(bad)).toBe(false);
    expect(() => decodeMessage(JSON.stringify({ ...m, run: bad }))).toThrow(/"run" must be a run id/);
  }
});

describe('a reply of another run is dropped and counted, never held against its client', () => {
  const transports: [string, () => Promise<Transport & { close?(): Promise<void> }>][] = [
    ['in process', async () => new InProcessTransport(SPECS.map(makeClient))],
    [
      'worker threads',
      async () => {
        // the built package's worker (dist/worker.js): its clients answer from their own ClientHost
        const { WorkerTransport } = await import('../dist/node.js');
        return WorkerTransport.start(SPECS, { threads: 1 });
      },
    ],
  ];
  /** c0's round-3 reply of an earlier run (in process), with its run id, and the undisturbed new run */
  let stale: Uint8Array;
  let reference: FederationResult;
  beforeAll(async () => {
    const earlier = new Meddler(new InProcessTransport(SPECS.map(makeClient)));
    const first = await run(3, earlier);
    stale = earlier.replies[3]![0]!;
    expect(decodeMessage(stale).run).toBe(first.run);
    reference = await run(4, new InProcessTransport(SPECS.map(makeClient)));
    expect(reference.history.every((h) => h.otherRun === undefined)).toBe(true);
    expect(reference.run).not.toBe(first.run);
  });
  for (const [name, make] of transports) {
    test(name, async () => {
      // the new run with the stale reply delivered in its first round
      const t = await make();
      const meddled = new Meddler(t, { round: 1, bytes: stale });
      const r = await run(4, meddled).finally(async () => void (await t.close?.()));
      expect(meddled.injected).toBe(1);
      expect(r.failures).toEqual([]);
      expect(r.excluded).toEqual([]);
      expect(r.history[0]!.otherRun).toBe(1);
      expect(r.history[0]!.accepted).toBe(2);
      expect(r.history.slice(1).every((h) => h.otherRun === undefined)).toBe(true);
      expect(numbers(r)).toEqual(numbers(reference));
    });
  }
});

describe('over the embedded MQTT broker', () => {
  const FED = 'runid';
  const password = (id: string) => `pw-${id}`;
  let broker: Awaited<ReturnType<typeof startBroker>>;
  beforeAll(async () => {
    broker = await startBroker({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }, ...SPECS.map((s) => ({ username: s.id, password: password(s.id), role: 'client' as const }))] });
  });
  afterAll(async () => {
    await broker?.close();
  });

  /** One run over the broker with both clients joined (fresh client roles); `beforeJoin` runs once the server is connected. */
  async function mqttRun(seed: number, options: { record?: boolean; beforeJoin?: () => Promise<void>; joined?: JoinResult[]; onOtherRun?: (e: OtherRunError) => void } = {}): Promise<{ result: FederationResult; transport: Transport }> {
    const t = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: SPECS.map((s) => s.id) });
    await options.beforeJoin?.();
    const roles = SPECS.map(makeClient);
    try {
      const joins = roles.map((role) => join({ url: broker.url, federation: FED, client: role, password: password(role.id), onOtherRun: options.onOtherRun }));
      await t.available(2, 10_000);
      const transport = options.record ? new Meddler(t) : t;
      const result = await run(seed, transport);
      options.joined?.push(...(await Promise.all(joins)));
      return { result, transport };
    } finally {
      for (const r of roles) r.dispose();
    }
  }

  test("a dead run's reply queued for the server is delivered to the next run's first round", async () => {
    const first = await mqttRun(3, { record: true });
    const stale = (first.transport as Meddler).replies[3]![0]!;
    expect(decodeMessage(stale).run).toBe(first.result.run);
    const reference = (await mqttRun(4)).result;
    expect(reference.history.every((h) => h.otherRun === undefined)).toBe(true);
    // on c0's up topic, as c0 (the broker makes the username the MQTT client id): as a broker or the client's own
    // outgoing store delivers an unacknowledged reply of a dead run once the server is back
    const { result } = await mqttRun(4, {
      beforeJoin: async () => {
        const c0 = await connectAsync(broker.url, { clientId: 'c0', username: 'c0', password: password('c0'), reconnectPeriod: 0 });
        await c0.publishAsync(federationTopics(FED).up('c0'), Buffer.from(stale), { qos: 1 });
        await c0.endAsync();
      },
    });
    expect(result.failures).toEqual([]);
    expect(result.excluded).toEqual([]);
    expect(result.history[0]!.otherRun).toBe(1);
    expect(result.history.every((h) => h.accepted === 2 || !h.replies)).toBe(true);
    expect(numbers(result)).toEqual(numbers(reference));
  });

  test("a client refuses a request of another run (a dead run's, kept in its session), typed and told, and answers every request of its own", async () => {
    const first = await mqttRun(3, { record: true });
    const stale = (first.transport as Meddler).requests[1]!;
    expect(stale.run).toBe(first.result.run);
    const refused: OtherRunError[] = [];
    const joined: JoinResult[] = [];
    const { result } = await mqttRun(4, {
      joined,
      onOtherRun: (e) => refused.push(e),
      // c0 is away (its persistent session keeps what comes): the server's account sends it run 3's first request
      beforeJoin: async () => {
        const s = await connectAsync(broker.url, { username: SERVER_USER, password: 'server-pw', reconnectPeriod: 0 });
        await s.publishAsync(federationTopics(FED).down('c0'), Buffer.from(encodeMessage(stale, 'binary')), { qos: 1 });
        await s.endAsync();
      },
    });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(OtherRunError);
    expect([refused[0]!.run, refused[0]!.joined]).toEqual([first.result.run, result.run]);
    expect(refused[0]!.message).toMatch(/client c0 does not answer a \S+ request of round 1 of run \w+: it joined run \w+/);
    // nothing went back: the server saw no reply of another run, and every request of its own run was answered
    expect(result.history.every((h) => h.otherRun === undefined)).toBe(true);
    expect(result.failures).toEqual([]);
    expect(joined.map((j) => [j.ok, j.answered, j.otherRun])).toEqual([[true, result.history.length, 1], [true, result.history.length, undefined]]);
  });
});

test("a round's count of another run's replies is kept by its checkpoint", async () => {
  const { saveCheckpoint, restoreServer } = await import('../ts/federated/registry/index.js');
  const earlier = new Meddler(new InProcessTransport(SPECS.map(makeClient)));
  await run(3, earlier);
  const s = server(4);
  let saved: unknown;
  try {
    await runFederation(s, new Meddler(new InProcessTransport(SPECS.map(makeClient)), { round: 1, bytes: earlier.replies[3]![0]! }), {
      onCheckpoint: (cp) => {
        if (cp.round === 2) saved = JSON.parse(JSON.stringify(saveCheckpoint('dem', cp)));
      },
    });
  } finally {
    s.dispose?.();
  }
  const restored = restoreServer(saved, { nFeatures: 2, nComponents: 3, covarianceType: 'diag', init: 'kfed', seed: 4, maxRounds: 4, tol: 0 });
  try {
    const r = await runFederation(restored, new InProcessTransport(SPECS.map(makeClient)), { resume: saved });
    expect(r.history[0]!.otherRun).toBe(1);
    expect(r.run).toBe((saved as { run: string }).run);
  } finally {
    restored.dispose?.();
  }
});
