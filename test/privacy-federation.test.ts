/**
 * Accounting a federation (issue 26, items 3 and 4): the run's RDP ledger
 * composes the privacy step every noisy round declares (MDM's aggregator,
 * DP-FedAvg), each round's record, log line and JSON carry the epsilon spent
 * so far, and it equals privacyEpsilon for the same steps; a budget stops the
 * run before the round that would pass it (that round's requests never go
 * out) and never stops a run within it; the ledger is part of the checkpoint.
 * DP-FedAvg: clients clip, the server refuses an unclipped update and adds
 * noise of the declared scale; without dp nothing on the wire changes.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { FederationError, InvalidMessageError, InvalidParameterError } from '../ts/errors.js';
import { Matrix } from '../ts/data/matrix.js';
import { privacyEpsilon } from '../ts/privacy/accountant.js';
import { makeClient, makeServer, matrixData, restoreServer, saveCheckpoint, type ClientSpec } from '../ts/federated/registry/index.js';
import { runFederationSync, type FederationResult, type RunCheckpoint, type RunOptions } from '../ts/federated/runtime/run.js';
import { withPrivacy, type Message } from '../ts/federated/messages/envelope.js';
import type { ClientRole, RoundContext, ServerRole } from '../ts/federated/runtime/roles.js';
import { FedAvgClient } from '../ts/federated/fedavg/client.js';
import { FedAvgServer } from '../ts/federated/fedavg/server.js';
import { TRAIN, UPDATE } from '../ts/federated/fedavg/messages.js';
import { roundLine, roundObject } from '../ts/cli/federation-log.js';
import { stamping } from './helpers.js';
import { init } from '../ts/wasm/loader.js';
import { composeReleases } from '../ts/privacy/gaussian-noise.js';
import { LocalDetector } from '../ts/models/detectors.js';
import { fedDistr } from '../ts/federated/feddistr/run.js';
import { Recording } from './helpers.js';

beforeAll(async () => {
  await init();
});

const lines = readFileSync(new URL('../../shared/datasets/abalone.csv', import.meta.url), 'utf8').trim().split(/\r?\n/);
const header = lines[0]!.split(',');
const FEATURES = ['length', 'diameter', 'height', 'whole_weight', 'shucked_weight', 'viscera_weight', 'shell_weight'];
const cols = FEATURES.map((f) => header.indexOf(f));
const sexOf = header.indexOf('sex');
const rows = lines.slice(1, 1201).map((l) => l.split(','));
const X = rows.map((r) => cols.map((j) => Number(r[j])));
const sex = rows.map((r) => ['M', 'F', 'I'].indexOf(r[sexOf]!));

/** MDM: 40 users, each the histogram of sex over 30 rows of abalone. */
const mdmClients = (): ClientSpec[] =>
  Array.from({ length: 40 }, (_, c) => {
    const h = [0, 0, 0];
    for (let i = c * 30; i < (c + 1) * 30; i++) h[sex[i]!]! += 1;
    return { algorithm: 'mdm', id: `u${c}`, data: matrixData(Matrix.fromRows([h])), options: { seed: 100 + c } };
  });
const MDM = { nComponents: 2, rounds: 4, nCategories: 3, maxCount: 30, seed: 1, privacy: { noiseMultiplier: 1.5, clip: 5 } };

/** FedAvg: 12 clients of 100 abalone rows (an autoencoder of the seven measurements). */
const network = { sizes: [7, 3, 7], activation: 'tanh', outputActivation: 'identity', loss: 'mse', seed: 5 };
const fedavgClients = (): ClientSpec[] => Array.from({ length: 12 }, (_, c) => ({ algorithm: 'fedavg', id: `c${c}`, data: matrixData(Matrix.fromRows(X.slice(c * 100, (c + 1) * 100))), options: { seed: c } }));
const DP = { clipNorm: 0.05, noiseMultiplier: 1.1 };
const FEDAVG = { network, rounds: 4, epochs: 1, batchSize: 32, dp: DP };

function run(algorithm: string, server: Record<string, unknown>, clients: () => ClientSpec[], options: RunOptions = {}): FederationResult {
  const s = makeServer(algorithm, server);
  const cs = clients().map((c) => makeClient(c));
  try {
    return runFederationSync(s, cs, options);
  } finally {
    s.dispose?.();
    for (const c of cs) c.dispose?.();
  }
}

const DELTA = 1e-5;
const epsAfter = (noiseMultiplier: number, samplingRate: number, steps: number) => privacyEpsilon({ noiseMultiplier, samplingRate, steps, delta: DELTA });

describe('the run composes every declared step into one ledger', () => {
  test('MDM (central noise, every client): each round record is privacyEpsilon of the rounds so far; the result has the total', () => {
    const r = run('mdm', MDM, mdmClients, { privacy: { delta: DELTA } });
    // Algorithm 1's round and four of Algorithm 2: five releases, each noised
    expect(r.history.length).toBe(5);
    r.history.forEach((rec, i) => {
      expect(rec.privacy?.step).toEqual({ mechanism: 'gaussian', noiseMultiplier: 1.5, samplingRate: 1 });
      const want = epsAfter(1.5, 1, i + 1);
      expect(Math.abs(rec.privacy!.epsilon! - want.epsilon)).toBeLessThan(1e-9 * want.epsilon);
      expect(rec.privacy!.order).toBe(want.order);
      expect(rec.privacy!.delta).toBe(DELTA);
    });
    expect(r.privacy!.epsilon).toBe(r.history[4]!.privacy!.epsilon);
    expect(r.privacy!.steps).toEqual([{ noiseMultiplier: 1.5, samplingRate: 1, steps: 5 }]);
    expect(r.stoppedEarly).toBeUndefined();
  });

  test("MDM with a cohort: the declared sampling rate is the cohort's share, and the ledger composes it", () => {
    const r = run('mdm', { ...MDM, cohort: 10, initCohort: 20 }, mdmClients, { privacy: { delta: DELTA } });
    expect(r.history.map((h) => h.privacy!.step)).toEqual([
      { mechanism: 'gaussian', noiseMultiplier: 1.5, samplingRate: 0.5 },
      ...Array.from({ length: 4 }, () => ({ mechanism: 'gaussian', noiseMultiplier: 1.5, samplingRate: 0.25 })),
    ]);
    expect(r.privacy!.steps).toEqual([
      { noiseMultiplier: 1.5, samplingRate: 0.5, steps: 1 },
      { noiseMultiplier: 1.5, samplingRate: 0.25, steps: 4 },
    ]);
    // subsampling spends less than asking everyone
    expect(r.privacy!.epsilon).toBeLessThan(epsAfter(1.5, 1, 5).epsilon);
  });

  test("DP-FedAvg with the policy's fraction: samplingRate k/n, epsilon as privacyEpsilon", () => {
    const r = run('fedavg', FEDAVG, fedavgClients, { privacy: { delta: DELTA }, fraction: 0.25, sampleSeed: 3 });
    const train = r.history.filter((h) => h.replies);
    expect(train.length).toBe(4);
    train.forEach((rec, i) => {
      expect(rec.asked).toBe(3);
      expect(rec.privacy!.step).toEqual({ mechanism: 'gaussian', noiseMultiplier: 1.1, samplingRate: 3 / 12 });
      expect(Math.abs(rec.privacy!.epsilon! - epsAfter(1.1, 0.25, i + 1).epsilon)).toBeLessThan(1e-9 * rec.privacy!.epsilon!);
    });
    // an honest run: nobody refused, no exclusion
    expect(r.failures).toEqual([]);
  });

  test('without privacy.delta the step is recorded but not composed; without noise nothing is recorded', () => {
    const r = run('mdm', MDM, mdmClients);
    expect(r.history[0]!.privacy).toEqual({ step: { mechanism: 'gaussian', noiseMultiplier: 1.5, samplingRate: 1 } });
    expect(r.privacy).toBeUndefined();
    expect(roundLine({ ...r.history[0]!, excluded: [], elapsed: 0 }, 'text', 3)).toMatch(/noise multiplier 1.5, sampling rate 1 \(not accounted: no privacy.delta\)$/);
    const plain = run('mdm', { ...MDM, privacy: undefined }, mdmClients, { privacy: { delta: DELTA } });
    expect(plain.history.every((h) => h.privacy?.step === undefined && h.privacy?.epsilon === 0)).toBe(true);
    expect(plain.privacy!.epsilon).toBe(0);
  });

  test('the round log line and its JSON carry the epsilon spent so far', () => {
    const r = run('mdm', MDM, mdmClients, { privacy: { delta: DELTA } });
    const rec = { ...r.history[2]!, excluded: [], elapsed: 1 };
    const eps = rec.privacy!.epsilon!;
    expect(roundLine(rec, 'text', 3)).toContain(`; epsilon ${Number(eps.toPrecision(4))} spent (delta 0.00001, order ${rec.privacy!.order})`);
    const json = JSON.parse(roundLine(rec, 'json', 3));
    expect(json.privacy).toEqual({ step: { mechanism: 'gaussian', noiseMultiplier: 1.5, samplingRate: 1 }, epsilon: eps, delta: DELTA, order: rec.privacy!.order });
    expect(roundObject(rec).privacy).toEqual(json.privacy);
  });
});

describe('the budget', () => {
  for (const [algorithm, server, clients, z] of [
    ['mdm', MDM, mdmClients, 1.5],
    ['fedavg', FEDAVG, fedavgClients, 1.1],
  ] as const) {
    test(`${algorithm}: stops before the round that would pass it, whose requests never go out`, () => {
      const budget = (epsAfter(z, 1, 2).epsilon + epsAfter(z, 1, 3).epsilon) / 2;
      const s = makeServer(algorithm, server);
      const recordings = clients().map((c) => new Recording(makeClient(c)));
      try {
        const r = runFederationSync(s, recordings, { privacy: { delta: DELTA, epsilonBudget: budget } });
        expect(r.history.length).toBe(2);
        expect(r.stoppedEarly?.round).toBe(2);
        expect(r.stoppedEarly?.reason).toMatch(/^privacy budget: round 3 would take the privacy spent to epsilon [\d.]+ at delta 0.00001, past the budget of [\d.]+ \(spent so far: [\d.]+\); the round was not sent$/);
        expect(r.privacy!.epsilon).toBeLessThanOrEqual(budget);
        expect(r.privacy!.epsilonBudget).toBe(budget);
        // round 3 never reached a client, nor did a result
        for (const c of recordings) expect(c.received.map((m) => m.round)).toEqual([1, 2]);
        // what the server made of two rounds
        expect(r.model).toBeDefined();
      } finally {
        s.dispose?.();
        for (const c of recordings) c.inner.dispose?.();
      }
    });

    test(`${algorithm}: a run within its budget runs to the end (a budget equal to what it spends included)`, () => {
      const rounds = algorithm === 'mdm' ? 5 : 4;
      const spent = epsAfter(z, 1, rounds).epsilon;
      for (const budget of [spent * (1 + 1e-9), 100]) {
        const r = run(algorithm, server, clients, { privacy: { delta: DELTA, epsilonBudget: budget } });
        expect(r.stoppedEarly).toBeUndefined();
        expect(r.history.filter((h) => h.replies).length).toBe(rounds);
        expect(r.failures).toEqual([]);
      }
    });
  }

  test('a budget that allows not even the first round is a FederationError, before any request goes out', () => {
    const recordings = mdmClients().map((c) => new Recording(makeClient(c)));
    const s = makeServer('mdm', MDM);
    try {
      expect(() => runFederationSync(s, recordings, { privacy: { delta: DELTA, epsilonBudget: epsAfter(1.5, 1, 1).epsilon / 2 } })).toThrow(FederationError);
      expect(() => runFederationSync(makeServer('mdm', MDM), recordings, { privacy: { delta: DELTA, epsilonBudget: 0.01 } })).toThrow(/the privacy budget allows not even the first round/);
      expect(recordings.every((c) => c.received.length === 0)).toBe(true);
    } finally {
      s.dispose?.();
      for (const c of recordings) c.inner.dispose?.();
    }
  });

  test('privacy options are checked', () => {
    for (const privacy of [{}, { delta: 0 }, { delta: 1 }, { delta: 1e-5, epsilonBudget: 0 }, { delta: 1e-5, epsilonBudget: Infinity }, { delta: 1e-5, other: 1 }]) {
      expect(() => run('mdm', MDM, mdmClients, { privacy: privacy as never })).toThrow(InvalidParameterError);
    }
  });
});

/** A server whose requests declare what `step` makes of the round (a wrapped FedAvg server under DP). */
function declaring(step: (ctx: RoundContext, id: string) => unknown): ServerRole {
  const inner = makeServer('fedavg', FEDAVG) as ServerRole;
  return {
    protocol: inner.protocol,
    get done() {
      return inner.done;
    },
    configure: (ctx) => {
      const out = new Map<string, Message>();
      for (const [id, m] of inner.configure(ctx)) {
        const s = step(ctx, id);
        out.set(id, s === undefined ? { ...m, privacy: undefined } : withPrivacy(m, s as never));
      }
      return out;
    },
    accept: (r, q, c) => inner.accept(r, q, c),
    aggregate: (c, a, f) => inner.aggregate(c, a, f),
    result: () => inner.result(),
    dispose: () => inner.dispose?.(),
  };
}

describe("the runtime checks the server's declarations", () => {
  const clients = () => fedavgClients().map((c) => makeClient(c));
  test('a sampling rate below the share of clients asked, two steps in one round: typed errors before anything is sent', () => {
    const cases: [(ctx: RoundContext, id: string) => unknown, RegExp][] = [
      [() => ({ mechanism: 'gaussian', noiseMultiplier: 1, samplingRate: 0.1 }), /declares a sampling rate of 0.1, but it asked 1 of the clients/],
      [(_c, id) => ({ mechanism: 'gaussian', noiseMultiplier: id === 'c0' ? 2 : 1, samplingRate: 1 }), /declare different privacy steps/],
      [(_c, id) => (id === 'c0' ? undefined : { mechanism: 'gaussian', noiseMultiplier: 1, samplingRate: 1 }), /declare different privacy steps/],
    ];
    for (const [step, message] of cases) {
      const recordings = clients().map((c) => new Recording(c));
      expect(() => runFederationSync(declaring(step), recordings, { privacy: { delta: DELTA } })).toThrow(message);
      expect(recordings.every((c) => c.received.length === 0)).toBe(true);
    }
  });
});

test("a skellam step (distributed DP) is composed into the run's ledger as the accountant composes it", () => {
  const step = { mechanism: 'skellam', mu: 400, l1: 3, l2: 2 } as const;
  const recordings = fedavgClients().map((c) => new Recording(makeClient(c)));
  const r = runFederationSync(stamping(makeServer('fedavg', FEDAVG) as ServerRole, step), recordings, { privacy: { delta: DELTA } });
  expect(r.privacy!.steps).toEqual([{ ...step, steps: r.rounds }]);
  expect(r.privacy!.epsilon).toBeCloseTo(privacyEpsilon({ ...step, steps: r.rounds, delta: DELTA }).epsilon, 12);
});

describe('the ledger is part of the checkpoint', () => {
  for (const [algorithm, server, clients] of [
    ['mdm', MDM, mdmClients],
    ['fedavg', FEDAVG, fedavgClients],
  ] as const) {
    test(`${algorithm}: a run resumed after round 2 spends what the uninterrupted run spends, round by round`, () => {
      const policy = { privacy: { delta: DELTA, epsilonBudget: 50 }, fraction: 0.5, sampleSeed: 9 };
      const whole = run(algorithm, server, clients, policy);
      let saved: string | undefined;
      class Stop extends Error {}
      expect(() =>
        run(algorithm, server, clients, {
          ...policy,
          onCheckpoint: (c: RunCheckpoint) => {
            if (c.round === 2) {
              saved = JSON.stringify(saveCheckpoint(algorithm, c));
              throw new Stop();
            }
          },
        }),
      ).toThrow(Stop);
      const json = JSON.parse(saved!);
      expect(json.accountant.kind).toBe('RdpAccountant');
      expect(json.policy.privacy).toEqual({ delta: DELTA, epsilonBudget: 50 });
      const restored = restoreServer(saved, server, algorithm);
      const cs = clients().map((c) => makeClient(c));
      try {
        const resumed = runFederationSync(restored, cs, { resume: saved });
        expect(resumed.privacy).toEqual(whole.privacy);
        expect(resumed.history.map((h) => h.privacy)).toEqual(whole.history.map((h) => h.privacy));
      } finally {
        restored.dispose?.();
        for (const c of cs) c.dispose?.();
      }
      // the ledger goes on at its delta; a tampered ledger does not load
      expect(() => runFederationSync(restoreServer(saved, server, algorithm), [], { resume: saved, privacy: { delta: 1e-6 } })).toThrow(/keeps its ledger at that delta/);
      const tampered = { ...json, accountant: { ...json.accountant, history: [{ noiseMultiplier: 'x', samplingRate: 1, steps: 1 }] } };
      expect(() => restoreServer(tampered, server, algorithm)).toThrow(InvalidParameterError);
      const dropped = { ...json, accountant: undefined };
      expect(() => restoreServer(dropped, server, algorithm)).toThrow(/accountant: a run accounts its privacy/);
    });
  }
});

describe('DP-FedAvg', () => {
  const x0 = () => (makeServer('fedavg', FEDAVG) as FedAvgServer).globalParameters;

  test("a client clips its update to clipNorm and says whether it did; the server's history counts them", () => {
    const c = new FedAvgClient('a', Matrix.fromRows(X.slice(0, 100)), { seed: 1 });
    const x = x0();
    const request = (clipNorm: number) =>
      TRAIN.create('server', 1, { network: { sizes: [7, 3, 7], activation: 'tanh', outputActivation: 'identity', loss: 'mse' }, parameters: x, epochs: 2, batchSize: 16, optimizer: { name: 'adam', learningRate: 0.01 }, clipNorm });
    for (const clipNorm of [1e-3, 0.05, 100]) {
      const reply = UPDATE.read(c.respond(request(clipNorm))!);
      let sq = 0;
      for (let j = 0; j < x.length; j++) sq += (reply.payload.parameters[j]! - x[j]!) ** 2;
      expect(Math.sqrt(sq)).toBeLessThanOrEqual(clipNorm * (1 + 1e-5));
      expect(reply.payload.clipped).toBe(clipNorm < 100);
    }
    c.dispose();
    const r = run('fedavg', FEDAVG, fedavgClients, { privacy: { delta: DELTA } });
    const h = (r.model as { history: { clipped?: number; noiseStddev?: number }[] }).history;
    expect(h.every((round) => round.clipped! >= 0 && round.clipped! <= 12)).toBe(true);
    expect(h[0]!.clipped).toBeGreaterThan(0);
    expect(h[0]!.noiseStddev).toBeCloseTo((1.1 * 0.05) / 12, 15);
  });

  test('the server refuses an update longer than the clip bound (the check, not the values, in the reason); honest clients are never refused', () => {
    class Unclipped implements ClientRole {
      readonly protocol;
      constructor(private readonly inner: FedAvgClient) {
        this.protocol = inner.protocol;
      }
      get id() {
        return this.inner.id;
      }
      respond(m: Message) {
        const q = m.kind === TRAIN.kind ? { ...m, payload: { ...(m.payload as object), clipNorm: 1e6 } } : m;
        return this.inner.respond(q);
      }
      dispose() {
        this.inner.dispose();
      }
    }
    const s = makeServer('fedavg', FEDAVG);
    const cs = fedavgClients().map((c, i) => (i === 0 ? new Unclipped(makeClient(c) as FedAvgClient) : makeClient(c)));
    try {
      const r = runFederationSync(s, cs, { privacy: { delta: DELTA } });
      expect(r.excluded.map((e) => [e.client, e.reason])).toEqual([['c0', 'c0: its update is longer than the clip bound']]);
      expect(r.failures.length).toBe(1);
    } finally {
      s.dispose?.();
      for (const c of cs) c.dispose?.();
    }
  });

  test("the noise on the average has standard deviation noiseMultiplier x clipNorm / the round's clients (within sampling error)", () => {
    const wide = { sizes: [40, 30, 40], activation: 'tanh', outputActivation: 'identity', loss: 'mse', seed: 2 };
    const dp = { clipNorm: 0.5, noiseMultiplier: 2 };
    const server = new FedAvgServer({ network: wide as never, rounds: 1, dp });
    const x = server.globalParameters;
    const ctx = { round: 1, clients: ['a', 'b', 'c', 'd', 'e'], available: ['a', 'b', 'c', 'd', 'e'] };
    const request = server.configure(ctx).get('a')!;
    // three of five answer with no change: the average moves by the noise alone, over the five expected
    const accepted = new Map(['a', 'b', 'c'].map((id) => [id, server.accept(UPDATE.create(id, 1, { parameters: x, nSamples: 10, loss: 0, epochs: 1, clipped: false }), request)]));
    const round = server.aggregate(ctx, accepted);
    const moved = Array.from(server.globalParameters, (v, j) => v - x[j]!);
    const n = moved.length;
    const mean = moved.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(moved.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
    const want = (dp.noiseMultiplier * dp.clipNorm) / 5;
    expect(round!.noiseStddev).toBeCloseTo(want, 15);
    // n = 2,470 coordinates: the sample sd within 5 standard errors (sd / sqrt(2n)), the mean within 5 (sd / sqrt(n))
    expect(Math.abs(sd - want)).toBeLessThan((5 * want) / Math.sqrt(2 * n));
    expect(Math.abs(mean)).toBeLessThan((5 * want) / Math.sqrt(n));
    server.dispose();
  });

  test('options: no row-count weights, robust rules, server-side clip or SCAFFOLD under dp; dp values checked', () => {
    expect(() => makeServer('fedavg', { ...FEDAVG, weighting: 'samples' })).toThrow(/weighted equally under DP-FedAvg/);
    expect(() => makeServer('fedavg', { ...FEDAVG, aggregation: 'median' })).toThrow(/aggregation must be 'mean'/);
    expect(() => makeServer('fedavg', { ...FEDAVG, clipNorm: 1 })).toThrow(/give one or the other/);
    expect(() => makeServer('scaffold', { ...FEDAVG, optimizer: { name: 'sgd', learningRate: 0.1 } })).toThrow(/SCAFFOLD's control variates are not clipped/);
    for (const dp of [{ clipNorm: 0, noiseMultiplier: 1 }, { clipNorm: 1, noiseMultiplier: -1 }, { clipNorm: 1 }, { clipNorm: 1, noiseMultiplier: 1, extra: 1 }]) {
      expect(() => makeServer('fedavg', { ...FEDAVG, dp })).toThrow(InvalidParameterError);
    }
    // 'uniform' given explicitly is what DP uses
    expect(() => makeServer('fedavg', { ...FEDAVG, weighting: 'uniform' }).dispose?.()).not.toThrow();
  });

  test('without dp the wire carries no clip bound, no clipped flag and no privacy step', () => {
    const s = makeServer('fedavg', { ...FEDAVG, dp: undefined });
    const recordings = fedavgClients().map((c) => new Recording(makeClient(c)));
    try {
      const r = runFederationSync(s, recordings);
      for (const c of recordings) {
        for (const m of c.received) {
          expect(m.privacy).toBeUndefined();
          expect((m.payload as { clipNorm?: number }).clipNorm).toBeUndefined();
        }
        for (const m of c.sent) expect((m.payload as { clipped?: boolean }).clipped).toBeUndefined();
      }
      expect(r.history.every((h) => h.privacy === undefined)).toBe(true);
      expect((r.model as { history: { noiseStddev?: number }[] }).history.every((h) => h.noiseStddev === undefined)).toBe(true);
    } finally {
      s.dispose?.();
      for (const c of recordings) c.inner.dispose?.();
    }
  });

  test('a DP reply without its clipped flag, or a plain one with it, is refused', () => {
    const server = makeServer('fedavg', FEDAVG) as FedAvgServer;
    const x = server.globalParameters;
    const ctx = { round: 1, clients: ['a'], available: ['a'] };
    const request = server.configure(ctx).get('a')!;
    expect(() => server.accept(UPDATE.create('a', 1, { parameters: x, nSamples: 10, loss: 0, epochs: 1 }), request)).toThrow(/a DP-FedAvg update says whether it clipped/);
    server.dispose();
    const plain = makeServer('fedavg', { ...FEDAVG, dp: undefined }) as FedAvgServer;
    const asked = plain.configure(ctx).get('a')!;
    expect(() => plain.accept(UPDATE.create('a', 1, { parameters: x, nSamples: 10, loss: 0, epochs: 1, clipped: false }), asked)).toThrow(InvalidMessageError);
  });
});

describe('releases calibrated per (epsilon, delta), composed by RDP', () => {
  const z = (epsilon: number, delta: number) => Math.sqrt(2 * Math.log(1.25 / delta)) / epsilon;

  test("composeReleases is the accountant's epsilon for Gaussian mechanisms of noise multiplier sqrt(2 ln(1.25/delta_i))/epsilon_i, tighter than adding the epsilons", () => {
    const p = composeReleases([{ epsilon: 0.5, delta: 5e-6, count: 2 }]);
    const want = privacyEpsilon({ noiseMultiplier: z(0.5, 5e-6), samplingRate: 1, steps: 2, delta: 1e-5 });
    expect(p.epsilon).toBeCloseTo(want.epsilon, 12);
    expect(p.order).toBe(want.order);
    expect(p).toMatchObject({ delta: 1e-5, basicEpsilon: 1, releases: 2 });
    expect(p.epsilon).toBeLessThan(1);
    // many small releases: RDP's advantage grows (a detector's K = 8 mixture)
    const K = 8;
    const many = composeReleases([
      { epsilon: 1 / 3, delta: 1e-5 / 3, count: 1 },
      { epsilon: 1 / (3 * K), delta: 1e-5 / (3 * K), count: 2 * K },
    ]);
    expect(many.basicEpsilon).toBeCloseTo(1, 12);
    expect(many.epsilon).toBeLessThan(0.5);
    expect(() => composeReleases([])).toThrow(InvalidParameterError);
  });

  test('a GMM detector with noise, and fedDistr with privacy, report both epsilons; without noise nothing', () => {
    const rowsOf = (from: number, to: number) => Matrix.fromRows(X.slice(from, to));
    const noise = { clip: 1, epsilon: 1, delta: 1e-5 };
    const one = new LocalDetector({ kind: 'gmm', noise, noiseSeed: 1 }).fit(rowsOf(0, 300));
    expect(one.privacy).toEqual(composeReleases([{ epsilon: 0.5, delta: 5e-6, count: 2 }]));
    const three = new LocalDetector({ kind: 'gmm', gmm: { nComponents: 3, covarianceType: 'diag', seed: 1 }, noise, noiseSeed: 1 }).fit(rowsOf(0, 300));
    expect(three.privacy!.releases).toBe(7);
    expect(three.privacy!.basicEpsilon).toBeCloseTo(1, 12);
    expect(three.privacy!.epsilon).toBeLessThan(1);
    expect(new LocalDetector({ kind: 'gmm' }).fit(rowsOf(0, 300)).privacy).toBeUndefined();
    for (const d of [one, three]) d.dispose();
    const data = [0, 1, 2].map((c) => ({ X: rowsOf(c * 200, (c + 1) * 200), labels: sex.slice(c * 200, (c + 1) * 200) }));
    const r = fedDistr(data, { kMax: 2, seed: 1, privacy: noise, noiseSeed: 3 });
    expect(r.privacy).toEqual(composeReleases([{ epsilon: 0.5, delta: 5e-6, count: 2 }]));
    expect(fedDistr(data, { kMax: 2, seed: 1 }).privacy).toBeUndefined();
  });
});
