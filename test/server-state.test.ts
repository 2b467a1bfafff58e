/**
 * Saving and resuming a run (issue 24, the descriptor's server state): for
 * every built-in algorithm, on abalone's seven measurements dealt to in-process
 * clients, a run checkpointed after round r (saveCheckpoint, through
 * JSON.stringify and JSON.parse), stopped there, and resumed in a fresh server
 * role (restoreServer) with the same clients gives the artifact the
 * uninterrupted run gives at the same seeds, bit for bit, and the same
 * per-round history of who answered. Tampered checkpoints are typed errors,
 * and an algorithm without a state part says it cannot be resumed.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import { Matrix } from '../ts/data/matrix.js';
import { Rng } from '../ts/random.js';
import { defineAlgorithm, makeClient, makeServer, matrixData, restoreServer, resultJson, saveCheckpoint, type ClientSpec } from '../ts/federated/registry/index.js';
import { DEM_PROTOCOL } from '../ts/federated/dem/messages.js';
import { restoreRunServer, saveRunCheckpoint } from '../ts/federated/runtime/checkpoint.js';
import { runFederationSync, type FederationResult, type RunCheckpoint } from '../ts/federated/runtime/run.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import type { Exchange, ExchangeOptions, SyncTransport } from '../ts/federated/transport/transport.js';
import type { Message } from '../ts/federated/messages/envelope.js';
import { init } from '../ts/wasm/loader.js';

const lines = readFileSync(new URL('../../shared/datasets/abalone.csv', import.meta.url), 'utf8').trim().split(/\r?\n/);
const header = lines[0]!.split(',');
const FEATURES = ['length', 'diameter', 'height', 'whole_weight', 'shucked_weight', 'viscera_weight', 'shell_weight'];
const cols = FEATURES.map((f) => header.indexOf(f));
const sexOf = header.indexOf('sex');
const rows = lines.slice(1, 901).map((l) => l.split(','));
const X = rows.map((r) => cols.map((j) => Number(r[j])));
const SEX = ['M', 'F', 'I'];
const sex = rows.map((r) => SEX.indexOf(r[sexOf]!));

/** Three clients of unequal sizes (1/6, 1/3, 1/2 of the 900 rows). */
const bounds = [0, 150, 450, 900];
const part = (c: number) => ({ data: matrixData(Matrix.fromRows(X.slice(bounds[c], bounds[c + 1]))), labels: Int32Array.from(sex.slice(bounds[c], bounds[c + 1])) });
const three = (algorithm: string, options: (c: number) => Record<string, unknown> = () => ({}), labels = false): ClientSpec[] =>
  [0, 1, 2].map((c) => {
    const { data, labels: l } = part(c);
    return { algorithm, id: `c${c}`, data, options: options(c), ...(labels ? { labels: l } : {}) };
  });
/** MDM: 30 clients, each the histogram of sex over 30 rows (each seeded: an unseeded client draws its Algorithm 1 component from fresh entropy). */
const histograms = (): ClientSpec[] =>
  Array.from({ length: 30 }, (_, c) => {
    const h = [0, 0, 0];
    for (let i = c * 30; i < (c + 1) * 30; i++) h[sex[i]!]! += 1;
    return { algorithm: 'mdm', id: `u${c}`, data: matrixData(Matrix.fromRows([h])), options: { seed: 100 + c } };
  });

const network = { sizes: [7, 3, 7], activation: 'tanh', outputActivation: 'identity', loss: 'mse', seed: 5 };

class Crash extends Error {}

interface Case {
  name: string;
  server: Record<string, unknown>;
  clients: () => ClientSpec[];
  /** rounds to save after (each below the run's last) */
  at: number[];
}

const CASES: Case[] = [
  { name: 'fedgengmm', server: { nFeatures: 7, nComponents: 3, seed: 1 }, clients: () => three('fedgengmm', (c) => ({ kMin: 1, kMax: 3, seed: 10 + c })), at: [1] },
  { name: 'dem', server: { nFeatures: 7, nComponents: 3, maxRounds: 5, seed: 1 }, clients: () => three('dem'), at: [1, 3] },
  { name: 'fedgem', server: { nFeatures: 7, rounds: 3, phi: [0.5, 1, 2] }, clients: () => three('fedgem', (c) => ({ nComponents: 3, seed: 20 + c }), false).map((s, c) => ({ ...s, validation: part(c).data })), at: [1, 3] },
  { name: 'mdm', server: { nCategories: 3, maxCount: 30, nComponents: 2, rounds: 4, cohort: 20, seed: 3 }, clients: histograms, at: [1, 3] },
  { name: 'fedavg', server: { network, rounds: 3, epochs: 1 }, clients: () => three('fedavg', (c) => ({ seed: 30 + c })), at: [1, 2] },
  { name: 'fedprox', server: { network, rounds: 3, epochs: 1, mu: 0.1 }, clients: () => three('fedprox', (c) => ({ seed: 30 + c })), at: [1, 2] },
  { name: 'scaffold', server: { network, rounds: 3, epochs: 1 }, clients: () => three('scaffold', (c) => ({ seed: 30 + c })), at: [1, 2] },
  { name: 'communities', server: { nFeatures: 7, kind: 'gmm', partners: 1, seed: 2 }, clients: () => three('communities', () => ({ detector: { kind: 'gmm', gmm: { nComponents: 2, seed: 4 } } })), at: [1] },
  { name: 'feddistr', server: { dimension: 7, kMax: 3 }, clients: () => three('feddistr', (c) => ({ seed: 40 + c }), true), at: [1] },
];

/** A run to its end, or (saveAt) stopped after that round with its checkpoint through JSON. */
function run(c: Case, clients: ReturnType<typeof makeClient>[], saveAt?: number, resume?: unknown, options: Record<string, unknown> = {}): { result: FederationResult; saved?: unknown } {
  let saved: unknown;
  const server = resume === undefined ? makeServer(c.name, c.server) : restoreServer(resume, c.server);
  try {
    const result = runFederationSync(server, clients, {
      ...options,
      ...(resume === undefined ? {} : { resume }),
      ...(saveAt === undefined
        ? {}
        : {
            // saved, then the run ends there as a crash would end it
            onCheckpoint: (cp: RunCheckpoint) => {
              if (cp.round !== saveAt) return;
              saved = JSON.parse(JSON.stringify(saveCheckpoint(c.name, cp)));
              throw new Crash();
            },
          }),
    });
    return { result, saved };
  } catch (e) {
    if (!(e instanceof Crash)) throw e;
    return { result: undefined as unknown as FederationResult, saved };
  } finally {
    server.dispose?.();
  }
}

/** What a run produced, as its artifact's JSON text, and who answered each round. */
function outcome(name: string, r: FederationResult): { artifact: string; rounds: unknown[] } {
  return { artifact: JSON.stringify(resultJson(name, r.model)), rounds: r.history.map((h) => [h.round, h.kind, h.asked, h.accepted, h.failures.length, h.bytesUp, h.bytesDown]) };
}

function withClients<T>(c: Case, f: (clients: ReturnType<typeof makeClient>[]) => T): T {
  const clients = c.clients().map(makeClient);
  try {
    return f(clients);
  } finally {
    for (const x of clients) x.dispose();
  }
}

beforeAll(async () => {
  await init();
});

describe('a run saved after round r and resumed in a fresh server role gives the uninterrupted result', () => {
  for (const c of CASES) {
    test(`${c.name}, saved after round ${c.at.join(' and after round ')}`, () => {
      const full = withClients(c, (clients) => outcome(c.name, run(c, clients).result));
      expect(full.rounds.length).toBeGreaterThan(Math.max(...c.at));
      for (const r of c.at) {
        withClients(c, (clients) => {
          const { saved } = run(c, clients, r);
          expect(saved, `a checkpoint after round ${r}`).toBeDefined();
          const resumed = run(c, clients, undefined, saved).result;
          expect(outcome(c.name, resumed), `resumed after round ${r}`).toEqual(full);
        });
      }
    });
  }

  test('with client sampling (fraction 0.5, sampleSeed): the sampler goes on where it was', () => {
    const c = CASES.find((x) => x.name === 'dem')!;
    const options = { fraction: 0.67, sampleSeed: 9 };
    const full = withClients(c, (clients) => outcome(c.name, run(c, clients, undefined, undefined, options).result));
    withClients(c, (clients) => {
      const { saved } = run(c, clients, 2, undefined, options);
      expect(outcome(c.name, run(c, clients, undefined, saved, options).result)).toEqual(full);
      // the sampling cannot change on resume
      expect(() => run(c, clients, undefined, saved, { fraction: 1 })).toThrow(/fraction/);
    });
  });
});

/** The clients in process, and 'mute': there in every round, it never answers (a timeout each round it is asked). */
function withMute(clients: ReturnType<typeof makeClient>[]): SyncTransport {
  const inner = new InProcessTransport(clients);
  const there = () => [...inner.availableSync(), 'mute'];
  const exchange = (round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Exchange => {
    const out = inner.exchangeSync(round, new Map([...messages].filter(([id]) => id !== 'mute')), options);
    if (messages.has('mute')) {
      out.sent.set('mute', 0);
      if (options.replies) out.missing.set('mute', { kind: 'timeout', reason: 'mute did not answer' });
    }
    return out;
  };
  return { name: 'in-process', available: async () => there(), availableSync: there, exchange: async (r, m, o) => exchange(r, m, o), exchangeSync: exchange };
}

test('missed rounds: a client out of the quorum stays out after a resume, and a count under the limit goes on (maxMissedRounds 2)', () => {
  const c = CASES.find((x) => x.name === 'dem')!;
  const policy = { maxMissedRounds: 2 };
  const quorum = (r: FederationResult) => r.history.filter((h) => h.replies).map((h) => [h.round, h.asked, h.sidelined ?? []]);
  const once = (saveAt?: number, resume?: unknown) =>
    withClients(c, (clients) => {
      const server = resume === undefined ? makeServer('dem', c.server) : restoreServer(resume, c.server);
      let saved: unknown;
      try {
        const result = runFederationSync(server, withMute(clients), {
          ...policy,
          ...(resume === undefined ? {} : { resume }),
          onCheckpoint: (cp) => {
            if (cp.round !== saveAt) return;
            saved = JSON.parse(JSON.stringify(saveCheckpoint('dem', cp)));
            throw new Crash();
          },
        });
        return { result, saved };
      } catch (e) {
        if (!(e instanceof Crash)) throw e;
        return { result: undefined, saved };
      } finally {
        server.dispose?.();
      }
    });
  const full = once().result!;
  // asked in rounds 1 and 2 (two timeouts), out of the quorum after round 2, not asked from round 3 on
  expect(quorum(full).slice(0, 3)).toEqual([[1, 4, []], [2, 4, ['mute']], [3, 3, []]]);
  for (const r of [1, 2]) {
    const { saved } = once(r);
    const resumed = once(undefined, saved).result!;
    expect(quorum(resumed), `resumed after round ${r}`).toEqual(quorum(full));
    expect(outcome('dem', resumed)).toEqual(outcome('dem', full));
  }
  // a checkpoint saved before the counts were kept still resumes: they start again from zero
  const { saved } = once(2);
  delete (saved as { quorum?: unknown }).quorum;
  expect(quorum(once(undefined, saved).result!)[2]).toEqual([3, 4, []]);
});

describe('a tampered or foreign checkpoint is a typed error naming what is wrong', () => {
  const c = CASES.find((x) => x.name === 'dem')!;
  let saved: Record<string, unknown>;
  beforeAll(() => {
    withClients(c, (clients) => {
      saved = run(c, clients, 3).saved as Record<string, unknown>;
    });
  });
  const edit = (f: (s: any) => void) => {
    const s = JSON.parse(JSON.stringify(saved));
    f(s);
    return s;
  };

  test('another algorithm, another shape, NaN, cut short, not JSON', () => {
    expect(() => restoreServer(saved, { ...c.server, nComponents: 4 })).toThrow(/saved dem server state is not valid: model: 3 full components/);
    expect(() => restoreServer(saved, c.server, 'fedavg')).toThrow(/checkpoint is of a "dem" run, not fedavg/);
    expect(() => restoreServer(edit((s) => (s.algorithm = 'fedavg')), CASES.find((x) => x.name === 'fedavg')!.server)).toThrow(InvalidParameterError);
    expect(() => restoreServer(edit((s) => (s.server.model.means[2] = NaN)), c.server)).toThrow(/means/);
    expect(() => restoreServer(edit((s) => (s.server.history[0] = null)), c.server)).toThrow(/saved dem server state is not valid: history\[0\]/);
    expect(() => restoreServer(edit((s) => (s.server.rng.words = [0, 0, 0, 0, 0, 0, 0, 0])), c.server)).toThrow(/all zeros/);
    expect(() => restoreServer(edit((s) => delete s.server.summaries), c.server)).toThrow(/summaries/);
    expect(() => restoreServer(edit((s) => (s.round = 2)), c.server)).toThrow(/after round 2 but its history and traffic count 3/);
    const text = JSON.stringify(saved);
    expect(() => restoreServer(text.slice(0, text.length / 2), c.server)).toThrow(/not JSON/);
    for (const bad of [null, 7, [], {}]) expect(() => restoreServer(bad, c.server)).toThrow(InvalidParameterError);
    // the honest one passes, as its text too
    restoreServer(text, c.server).dispose?.();
  });

  test('a resumed run needs the server restored from that checkpoint', () => {
    withClients(c, (clients) => {
      const fresh = makeServer('dem', c.server);
      expect(() => runFederationSync(fresh, clients, { resume: saved })).toThrow(/needs the server role restored from that checkpoint/);
      fresh.dispose?.();
    });
  });
});

test('an algorithm without a state part cannot be checkpointed or resumed, and says so', () => {
  const plain = defineAlgorithm({
    name: 'no-state',
    protocol: DEM_PROTOCOL,
    summary: 'a descriptor with no server state',
    wasmFeatures: [],
    server: { options: (raw) => raw, create: () => makeServer('dem', { nFeatures: 1, nComponents: 1 }) },
    client: { options: (raw) => raw, create: () => makeClient({ algorithm: 'dem', id: 'x', data: matrixData(Matrix.fromRows([[1]])) }) },
    artifact: { save: (r) => r, load: (j) => j },
  });
  expect(plain.state).toBeUndefined();
  expect(() => saveRunCheckpoint(plain, {} as RunCheckpoint)).toThrow(/no-state declares no server state .* cannot be checkpointed or resumed/);
  expect(() => restoreRunServer(plain, {}, {})).toThrow(/cannot be checkpointed or resumed/);
  expect(() => defineAlgorithm({ ...plain, state: { save: () => 1 } as never })).toThrow(/state.restore must be a function/);
});

test('Rng.getState/setState continue the stream exactly, and refuse a state no generator can be in', () => {
  const a = new Rng(3);
  a.normal(3);
  const state = JSON.parse(JSON.stringify(a.getState()));
  const b = new Rng(99);
  b.setState(state);
  expect(Array.from(b.normal(5))).toEqual(Array.from(a.normal(5)));
  expect(Array.from(b.choice(50, 7))).toEqual(Array.from(a.choice(50, 7)));
  expect(() => b.setState({ words: [1, 2, 3], spare: null })).toThrow(InvalidParameterError);
  expect(() => b.setState({ words: [2 ** 32, 0, 0, 0, 0, 0, 0, 0], spare: null })).toThrow(InvalidParameterError);
  expect(() => b.setState({ words: [1, 0, 0, 0, 0, 0, 0, 0], spare: NaN })).toThrow(InvalidParameterError);
  a.dispose();
  b.dispose();
});
