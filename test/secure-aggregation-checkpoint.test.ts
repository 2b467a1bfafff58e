/**
 * Secure rounds and checkpoints: a run under policy secureAggregation saved
 * after round k (saveCheckpoint, through JSON), stopped there, and resumed in
 * a fresh server role (restoreServer) with the same clients gives the
 * uninterrupted run's history, each round's `secure` record included (the
 * clients dropped per stage, threshold, neighbours, the distributed noise),
 * and its model, bit for bit:
 * - distributed EM with a client that drops out at the masking stage of
 *   round 2 (its mask rebuilt from its neighbours' shares);
 * - DP-FedAvg with distributed noise (the clients' Skellam shares, drawn from
 *   seeded streams that go on across the rounds, as the clients' own would)
 *   and the run's privacy ledger.
 * Over the embedded MQTT broker, serve() with a state directory, stopped
 * after round 2 and started again without secureAggregation, resumes secure
 * and gives the uninterrupted run's history and model.
 * The saved policy keeps secure aggregation: a resumed run not told again
 * still sums securely, and one told to drop it is refused. A tampered
 * `secure` record or secure policy is an InvalidParameterError, like the rest
 * of a tampered checkpoint.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import { Matrix } from '../ts/data/matrix.js';
import { makeClient, makeServer, matrixData, restoreServer, resultJson, saveCheckpoint, type ClientSpec } from '../ts/federated/registry/index.js';
import type { Message } from '../ts/federated/messages/envelope.js';
import { runFederation, type FederationResult, type RoundRecord, type RunCheckpoint, type RunOptions } from '../ts/federated/runtime/run.js';
import { secureAggregationTesting } from '../ts/federated/secure-aggregation/client.js';
import { MASK } from '../ts/federated/secure-aggregation/messages.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import type { Exchange, ExchangeOptions, Transport } from '../ts/federated/transport/transport.js';
import { serve } from '../ts/federated/serve.js';
import { join } from '../ts/federated/transport/mqtt.js';
import { init } from '../ts/wasm/loader.js';
import { blobs } from './helpers.js';
import { xorshift32 } from './support/xorshift.mjs';

beforeAll(async () => {
  await init();
});

const N = 6;
const IDS = Array.from({ length: N }, (_, i) => `c${i}`);
const X = blobs(N * 40, 3, 3, 11, 5).toRows();
const rowsOf = (c: number) => matrixData(Matrix.fromRows(X.slice(c * 40, (c + 1) * 40)));
/** a label per row from the blob it is nearest the origin of, for FedAvg */
const labelsOf = (c: number) => Int32Array.from(X.slice(c * 40, (c + 1) * 40), (r) => (r[0]! > 0 ? 1 : 0) + (r[1]! > 0 ? 1 : 0));

class Crash extends Error {}

interface Case {
  name: string;
  algorithm: string;
  server: Record<string, unknown>;
  clients: () => ClientSpec[];
  policy: RunOptions;
  /** the clients' secure randomness from seeded streams (a noised run's model depends on it) */
  seeded: boolean;
  /** rounds to save after */
  at: number[];
}

const network = { sizes: [3, 4, 3], activation: 'tanh', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 5 };
const CASES: Case[] = [
  {
    name: 'distributed EM, a client dropped at the masking stage of round 2',
    algorithm: 'dem',
    server: { nFeatures: 3, nComponents: 3, init: 'separated', featureRange: [-20, 20], maxRounds: 4, tol: 0, seed: 1 },
    clients: () => IDS.map((id, c) => ({ algorithm: 'dem', id, data: rowsOf(c) })),
    policy: { secureAggregation: { neighbours: 4, threshold: 3 } },
    seeded: false,
    at: [1, 2, 3],
  },
  {
    name: 'DP-FedAvg with distributed noise and a privacy ledger',
    algorithm: 'fedavg',
    server: { network, rounds: 3, epochs: 1, batchSize: 16, dp: { clipNorm: 1, noiseMultiplier: 0.5 } },
    clients: () => IDS.map((id, c) => ({ algorithm: 'fedavg', id, data: rowsOf(c), labels: labelsOf(c), options: { seed: c } })),
    policy: { secureAggregation: { neighbours: 5, threshold: 3 }, privacy: { delta: 1e-5 } },
    seeded: true,
    at: [1, 2],
  },
];

/** c5 drops out when asked for its masked input in round 2 (it never sees the request). */
function droppingC5(inner: InProcessTransport): Transport {
  return {
    name: 'in-process, c5 drops',
    available: () => inner.available(),
    async exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
      const drop = round === 2 && messages.get('c5')?.kind === MASK.kind;
      const out = await inner.exchange(round, drop ? new Map([...messages].filter(([id]) => id !== 'c5')) : messages, options);
      if (drop) out.missing.set('c5', { kind: 'dropout', reason: 'c5 went offline' });
      return out;
    },
  };
}

/** Each client's stream of secure randomness, going on across the rounds (reset: a fresh set). */
function seededStreams(): () => void {
  const streams = new Map<string, (bytes: Uint8Array) => void>();
  secureAggregationTesting.randomOf = (id) => {
    let s = streams.get(id);
    if (!s) {
      const next = xorshift32(1000 + Number(id.slice(1)));
      streams.set(id, (s = (bytes: Uint8Array) => bytes.forEach((_, i) => (bytes[i] = next() & 255))));
    }
    return s;
  };
  return () => (secureAggregationTesting.randomOf = undefined);
}

/** A run to its end or (saveAt) stopped after that round with its checkpoint through JSON; resumed from `resume` when given. */
async function run(c: Case, clients: ReturnType<typeof makeClient>[], o: { saveAt?: number; resume?: unknown; policy?: RunOptions } = {}): Promise<{ result?: FederationResult; saved?: Record<string, unknown> }> {
  let saved: Record<string, unknown> | undefined;
  const server = o.resume === undefined ? makeServer(c.algorithm, c.server) : restoreServer(o.resume, c.server, c.algorithm);
  try {
    const result = await runFederation(server, droppingC5(new InProcessTransport(clients)), {
      ...(o.policy ?? c.policy),
      ...(o.resume === undefined ? {} : { resume: o.resume }),
      onCheckpoint: (cp: RunCheckpoint) => {
        if (cp.round !== o.saveAt) return;
        saved = JSON.parse(JSON.stringify(saveCheckpoint(c.algorithm, cp)));
        throw new Crash();
      },
    });
    return { result };
  } catch (e) {
    if (!(e instanceof Crash)) throw e;
    return { saved };
  } finally {
    server.dispose?.();
  }
}

/**
 * A round's record without its timings (wall time differs from run to run),
 * as JSON has it: a checkpoint keeps metrics as JSON makes them (a secure
 * round's NaN loss is null once saved).
 */
const timeless = ({ ms: _ms, ...r }: RoundRecord) => JSON.parse(JSON.stringify(r)) as unknown;

async function withClients<T>(c: Case, f: (clients: ReturnType<typeof makeClient>[]) => Promise<T>): Promise<T> {
  const clients = c.clients().map(makeClient);
  const reset = c.seeded ? seededStreams() : () => {};
  try {
    return await f(clients);
  } finally {
    reset();
    for (const x of clients) x.dispose();
  }
}

describe('a secure run saved after round k and resumed gives the uninterrupted history, secure records included, and model', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const full = (await withClients(c, (clients) => run(c, clients))).result!;
      const secure = full.history.filter((h) => h.replies).map((h) => h.secure);
      expect(secure.every((s) => s !== undefined)).toBe(true);
      if (c.algorithm === 'dem') expect(secure.map((s) => s!.dropped.mask)).toEqual([0, 1, 0, 0]);
      else expect(secure.every((s) => s!.noise !== undefined && s!.noise.stddev > 0)).toBe(true);
      for (const k of c.at) {
        await withClients(c, async (clients) => {
          const { saved } = await run(c, clients, { saveAt: k });
          expect(saved, `a checkpoint after round ${k}`).toBeDefined();
          // the checkpoint holds the secure records of the rounds so far and the secure policy
          const history = saved!.history as RoundRecord[];
          expect(history.filter((h) => h.replies).map((h) => h.secure)).toEqual(secure.slice(0, k));
          expect((saved!.policy as { secureAggregation?: unknown }).secureAggregation).toEqual({ ...c.policy.secureAggregation as object, clip: expect.any(Number) });
          // resumed without the policy given again: the saved one applies, secure aggregation included
          const resumed = (await run(c, clients, { resume: saved, policy: {} })).result!;
          expect(resumed.history.map(timeless), `resumed after round ${k}`).toEqual(full.history.map(timeless));
          expect(JSON.stringify(resultJson(c.algorithm, resumed.model))).toBe(JSON.stringify(resultJson(c.algorithm, full.model)));
          if (c.policy.privacy) expect(resumed.privacy).toEqual(full.privacy);
        });
      }
    }, 60_000);
  }
});

describe('the secure parts of a checkpoint are checked when read back', () => {
  const c = CASES[0]!;
  let saved: Record<string, unknown>;
  beforeAll(async () => {
    saved = (await withClients(c, (clients) => run(c, clients, { saveAt: 2 }))).saved!;
  });
  const withRound2 = (change: (s: Record<string, unknown>) => void): Record<string, unknown> => {
    const copy = JSON.parse(JSON.stringify(saved)) as Record<string, unknown>;
    change(((copy.history as Record<string, unknown>[])[1]!.secure as Record<string, unknown>));
    return copy;
  };

  test('a tampered secure record is an InvalidParameterError naming it', () => {
    for (const [change, why] of [
      [(s: Record<string, unknown>) => (s.survivors = 'six'), /secure\.survivors/],
      [(s: Record<string, unknown>) => (s.survivors = 7), /survivors/],
      [(s: Record<string, unknown>) => (s.threshold = 0), /threshold/],
      [(s: Record<string, unknown>) => delete (s.dropped as Record<string, unknown>).mask, /dropped\.mask/],
      [(s: Record<string, unknown>) => ((s.dropped as Record<string, unknown>).unmask = -1), /dropped\.unmask/],
      [(s: Record<string, unknown>) => (s.bound = -1), /bound/],
      [(s: Record<string, unknown>) => (s.noise = { noiseMultiplier: 1 }), /noise/],
    ] as [(s: Record<string, unknown>) => void, RegExp][]) {
      const tampered = withRound2(change);
      expect(() => restoreServer(tampered, c.server, c.algorithm)).toThrow(InvalidParameterError);
      expect(() => restoreServer(tampered, c.server, c.algorithm)).toThrow(why);
    }
  });

  test('a tampered secure policy is an InvalidParameterError; a resumed run cannot drop secure aggregation', async () => {
    const policy = saved.policy as Record<string, unknown>;
    for (const secureAggregation of [{ clip: -1 }, { clip: 1, threshold: 'x' }, 'yes']) {
      expect(() => restoreServer({ ...saved, policy: { ...policy, secureAggregation } }, c.server, c.algorithm)).toThrow(InvalidParameterError);
    }
    await withClients(c, async (clients) => {
      await expect(run(c, clients, { resume: saved, policy: { secureAggregation: false as unknown as undefined } })).rejects.toThrow(/saved with secure aggregation/);
    });
  });
});

describe('serve() with a state directory over the embedded broker', () => {
  const dir = mkdtempSync(pathJoin(tmpdir(), 'fedmix-secure-state-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const c = CASES[0]!;

  /** One serve() with its clients joined over MQTT; `crashAt`: the run ends by an error in the hook at that round's checkpoint (its state holds the round before). */
  async function served(state: string, policy: RunOptions, crashAt?: number, onStart?: (run: { resumedAfter?: number }) => void): Promise<FederationResult | undefined> {
    const clients = c.clients().map(makeClient);
    let joins: Promise<unknown>[] = [];
    try {
      const run = serve({
        algorithm: c.algorithm, options: c.server, federation: 'securestate', clients: IDS.map((id) => ({ id, password: `pw-${id}` })),
        listen: { port: 0 }, minClients: N, roundTimeout: 20, joinTimeout: 20, state, ...policy, ...(onStart ? { onStart } : {}),
        onListening: ({ url }) => void (joins = clients.map((client) => join({ url, federation: 'securestate', client, password: `pw-${client.id}`, waitForBroker: 5 }))),
        onCheckpoint: (cp) => {
          if (cp.round === crashAt) throw new Crash();
        },
      });
      try {
        return await run;
      } catch (e) {
        if (!(e instanceof Crash)) throw e;
        return undefined;
      } finally {
        await Promise.allSettled(joins);
      }
    } finally {
      for (const x of clients) x.dispose();
    }
  }

  test('stopped after round 2 and started again without secureAggregation: the secure history and the model of the uninterrupted run', async () => {
    const whole = (await served(pathJoin(dir, 'whole'), c.policy))!;
    const state = pathJoin(dir, 'resumed');
    expect(await served(state, c.policy, 3)).toBeUndefined();
    let after: number | undefined;
    const resumed = (await served(state, {}, undefined, (r) => (after = r.resumedAfter)))!;
    expect(after).toBe(2);
    const rounds = (r: FederationResult) => r.history.map(timeless);
    expect(resumed.history.filter((h) => h.replies).every((h) => h.secure !== undefined)).toBe(true);
    expect(rounds(resumed)).toEqual(rounds(whole));
    expect(JSON.stringify(resultJson(c.algorithm, resumed.model))).toBe(JSON.stringify(resultJson(c.algorithm, whole.model)));
  }, 60_000);
});
