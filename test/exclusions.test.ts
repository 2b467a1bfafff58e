/**
 * Exclusions are never silent (issue 23): every one-call function runs its
 * federation under the runtime's maxExcludedShare (default 0.5), so a run
 * that lost more than that share of its clients fails with a FederationError
 * naming the reasons, one that lost fewer lists them in `excluded`, and an
 * honest run on real data at the defaults excludes nobody. Hostile clients are
 * honest client roles whose replies are tampered with (claimed for another
 * round) on their way out. A client whose data has another column count, or
 * an empty client list, is the caller's error before any client is asked.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import {
  associate,
  CommunitiesClient,
  DemClient,
  distributedEM,
  fedAvg,
  FedAvgClient,
  fedDistr,
  FedDistrClient,
  FederationError,
  fedGEM,
  FedGEMClient,
  fedGenGMM,
  FedGenGMMClient,
  fitMdm,
  init,
  InvalidDataError,
  InvalidParameterError,
  Matrix,
  MdmClient,
  MinMaxScaler,
  partition,
  selectMdm,
  type Message,
} from '../ts/index.js';
import { labelledFromCsv } from '../ts/experiments/index.js';

/** Satellite (6,435 rows x 36 features, 6 soil classes), min-max scaled; the first 2,000 rows dealt IID to 5 clients. */
let X: Matrix;
let labels: Int32Array;
let parts: number[][];
const CLIENTS = 5;

beforeAll(async () => {
  await init();
  const d = labelledFromCsv(readFileSync(new URL('../../shared/datasets/satellite.csv', import.meta.url), 'utf8'), { label: 'label' });
  const rows = Array.from({ length: 2000 }, (_, i) => i);
  X = new MinMaxScaler().fitTransform(Matrix.from(d.X).selectRows(rows));
  labels = Int32Array.from(rows, (i) => d.labels![i]!);
  parts = partition.iid(rows.length, { clients: CLIENTS, seed: 1 }).indices.map((p) => Array.from(p));
});

afterEach(() => {
  vi.restoreAllMocks();
});

const clientRows = () => parts.map((p) => X.selectRows(p));
const clientLabels = () => parts.map((p) => Int32Array.from(p, (i) => labels[i]!));

/** Client roles of `Role` whose ids are in `ids` claim every reply is for another round: the runtime refuses it and excludes them. */
function tamper(Role: { prototype: { id: string; respond(m: Message): Message | undefined } }, ids: readonly string[]): void {
  const respond = Role.prototype.respond;
  vi.spyOn(Role.prototype, 'respond').mockImplementation(function (this: { id: string }, m: Message) {
    const honest = respond.call(this, m);
    return honest && ids.includes(this.id) ? { ...honest, round: honest.round + 7 } : honest;
  });
}

/** The thrown error, for assertions on its class and message. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (e) {
    return e;
  }
  throw new Error('expected the run to throw');
}

/** What each one-call function's exclusions look like: its client ids, and a run with a dispose of what it returned. */
interface Case {
  Role: Parameters<typeof tamper>[0];
  ids: string[];
  run(options: { maxExcludedShare?: number }): { excluded: { client: string; round: number; reason: string }[] };
}

const cases: Record<string, () => Case> = {
  distributedEM: () => ({
    Role: DemClient,
    ids: parts.map((_, i) => `client-${i}`),
    run: (o) => {
      const r = distributedEM(clientRows(), { nComponents: 6, covarianceType: 'diag', init: 'kfed', seed: 1, maxRounds: 20, ...o });
      r.model.dispose();
      return r;
    },
  }),
  fedGenGMM: () => ({
    Role: FedGenGMMClient as Parameters<typeof tamper>[0], // without threads it answers synchronously
    ids: parts.map((_, i) => String(i)),
    run: (o) => {
      const r = fedGenGMM(clientRows(), { client: { kMin: 1, kMax: 4, covarianceType: 'diag', seed: 1 }, server: { nComponents: 6, covarianceType: 'diag', seed: 2 }, ...o });
      r.model.dispose();
      return r;
    },
  }),
  fedGEM: () => ({
    Role: FedGEMClient,
    ids: parts.map((_, i) => String(i)),
    run: (o) => {
      const r = fedGEM(clientRows(), { client: { nComponents: 6, seed: 1 }, rounds: 3, ...o });
      for (const c of r.clients) c.dispose();
      return r;
    },
  }),
  fitMdm: () => ({
    Role: MdmClient,
    ids: Array.from({ length: 40 }, (_, i) => `client-${i}`),
    run: (o) => fitMdm(mdmHistograms(), { nComponents: 2, rounds: 3, seed: 1, ...o }),
  }),
  fedAvg: () => ({
    Role: FedAvgClient,
    ids: parts.map((_, i) => String(i)),
    run: (o) => {
      const data = clientRows().map((x, i) => ({ X: x, labels: clientLabels()[i]! }));
      return fedAvg(data, { network: { sizes: [36, 16, 6], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 }, rounds: 2, epochs: 1, batchSize: 32, optimizer: { name: 'adam', learningRate: 0.01 }, seed: 1, ...o });
    },
  }),
  associate: () => ({
    Role: CommunitiesClient,
    ids: parts.map((_, i) => String(i)),
    run: (o) => associate(clientRows(), { detector: { kind: 'gmm', contamination: 0.1 }, seed: 1, ...o }),
  }),
  fedDistr: () => ({
    Role: FedDistrClient as Parameters<typeof tamper>[0], // without threads it answers synchronously
    ids: parts.map((_, i) => String(i)),
    run: (o) => fedDistr(clientRows().map((x, i) => ({ X: x, labels: clientLabels()[i]! })), { kMax: 3, seed: 1, ...o }),
  }),
};

/** 40 clients' histograms of the satellite classes (Dir(0.5) over the 2,000 rows). */
function mdmHistograms(): Matrix {
  const p = partition.dirichlet(labels, { clients: 40, alpha: 0.5, seed: 3 });
  return Matrix.fromRows(p.histograms.map((h) => Array.from(h)));
}

describe.each(Object.keys(cases))('%s under maxExcludedShare', (name) => {
  test('honest clients on real data at the defaults: nobody excluded, no failure', () => {
    const c = cases[name]!();
    expect(c.run({}).excluded).toEqual([]);
  });

  test('more than half of the clients excluded: a FederationError naming every reason; with the share raised the run finishes and lists them', () => {
    const c = cases[name]!();
    const over = c.ids.slice(0, Math.floor(c.ids.length / 2) + 1);
    tamper(c.Role, over);
    const e = thrown(() => c.run({}));
    expect(e).toBeInstanceOf(FederationError);
    const message = (e as Error).message;
    expect(message).toMatch(new RegExp(`^round \\d+: ${over.length} of the run's ${c.ids.length} clients are excluded, more than maxExcludedShare \\(0\\.5\\) allows: `));
    // each reason names its client and what was wrong (the first ten, then how many more)
    for (const id of over.slice(0, 10)) expect(message).toContain(`${id}: its reply is for round`);
    if (over.length > 10) expect(message).toMatch(new RegExp(`; and ${over.length - 10} more$`));
    // the same run with the share raised finishes, every exclusion in its result
    const r = c.run({ maxExcludedShare: 1 });
    expect(r.excluded.map((x) => x.client).sort()).toEqual([...over].sort());
    expect(r.excluded.every((x) => x.round >= 1 && x.reason.startsWith(`${x.client}: its reply is for round`))).toBe(true);
  });

  test('a minority excluded: the run finishes and says who and why; a share of 0 refuses it; a share outside [0, 1] is a typed error', () => {
    const c = cases[name]!();
    const few = c.ids.slice(1, 3);
    tamper(c.Role, few);
    const r = c.run({});
    expect(r.excluded.map((x) => x.client)).toEqual(few);
    expect(thrown(() => c.run({ maxExcludedShare: 0 }))).toBeInstanceOf(FederationError);
    expect(() => c.run({ maxExcludedShare: 1.5 })).toThrow(InvalidParameterError);
    expect(() => c.run({ maxExcludedShare: 1.5 })).toThrow('maxExcludedShare must be in [0, 1], got 1.5');
  });
});

test('selectMdm: the fits and the validation round take the share', () => {
  const h = mdmHistograms();
  const r = selectMdm(h, { kValues: [1, 2], rounds: 2, validationCohort: 10, seed: 1 });
  expect(r.excluded).toEqual([]);
  for (const c of r.candidates) expect(c.fit.excluded).toEqual([]);
  // every client claims other rounds: the first fit fails naming them
  tamper(MdmClient, Array.from({ length: 40 }, (_, i) => `client-${i}`));
  expect(thrown(() => selectMdm(h, { kValues: [1, 2], rounds: 2, validationCohort: 10, seed: 1 }))).toBeInstanceOf(FederationError);
  expect(() => selectMdm(h, { kValues: [1, 2], maxExcludedShare: -1 })).toThrow(InvalidParameterError);
});

describe('a client with another column count, or no client at all, is the caller\'s error before the run', () => {
  test('each one-call function names the client and both column counts', () => {
    const data = clientRows();
    const odd = [...data.slice(0, 3), data[3]!.selectColumns(Array.from({ length: 35 }, (_, j) => j)), data[4]!];
    const who = (id: string) => `${id} (`;
    const checks: [string, () => unknown, string][] = [
      ['distributedEM', () => distributedEM(odd, { nComponents: 2 }), who('client-3')],
      ['fedGenGMM', () => fedGenGMM(odd, { server: { nComponents: 2 } }), who('client 3')],
      ['fedGEM', () => fedGEM(odd, { client: { nComponents: 2 } }), who('client 3')],
      ['associate', () => associate(odd, { detector: { kind: 'gmm' } }), who('client 3')],
      ['fedDistr', () => fedDistr(odd.map((x, i) => ({ X: x, labels: clientLabels()[i]! })), { kMax: 2 }), who('client 3')],
    ];
    for (const [name, run, id] of checks) {
      const e = thrown(run);
      expect(e, name).toBeInstanceOf(InvalidDataError);
      expect((e as Error).message, name).toContain(`${id}`);
      expect((e as Error).message, name).toMatch(/has 35 columns but client(-| )0 \((clientData|data)\[0\]\) has 36: every client's data needs the same columns/);
    }
    // FedAvg: the network's input layer says how many columns
    const e = thrown(() => fedAvg(odd.map((x) => ({ X: x })), { network: { sizes: [36, 8, 36], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse' }, rounds: 1 }));
    expect(e).toBeInstanceOf(InvalidDataError);
    expect((e as Error).message).toBe("client 3 (data[3]) has 35 columns but the network's input width (network.sizes[0]) is 36: every client's data needs that many columns");
  });

  test('an empty client list says so, for every one-call function', () => {
    const checks: [string, () => unknown, RegExp, typeof InvalidParameterError][] = [
      ['distributedEM', () => distributedEM([], { nComponents: 2 }), /^clientData must be a non-empty array, one data matrix per client$/, InvalidParameterError],
      ['fedGenGMM', () => fedGenGMM([], { server: { nComponents: 2 } }), /^clientData is empty: give one data matrix per client$/, InvalidParameterError],
      ['fedGEM', () => fedGEM([], { client: { nComponents: 2 } }), /^clientData is empty: give one data matrix per client$/, InvalidParameterError],
      ['fedAvg', () => fedAvg([], { network: { sizes: [2, 2], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse' }, rounds: 1 }), /^data is empty: give one data matrix per client$/, InvalidParameterError],
      ['associate', () => associate([]), /^data is empty: give one data matrix per client$/, InvalidParameterError],
      ['fedDistr', () => fedDistr([]), /^data is empty: give one data matrix per client$/, InvalidParameterError],
      ['fitMdm', () => fitMdm(Matrix.fromRows([])), /^no histograms: give one/, InvalidDataError],
      ['selectMdm', () => selectMdm(Matrix.fromRows([])), /^no histograms: give one/, InvalidDataError],
    ];
    // rows without columns are no data either
    checks.push(['fedGenGMM, a row of nothing', () => fedGenGMM([[[]]], { server: { nComponents: 2 } }), /^client 0 \(clientData\[0\]\) has 1 row but no columns$/, InvalidDataError]);
    for (const [name, run, message, ErrorClass] of checks) {
      const e = thrown(run);
      expect(e, name).toBeInstanceOf(ErrorClass);
      expect((e as Error).message, name).toMatch(message);
    }
  });
});
