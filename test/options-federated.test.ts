/**
 * FedGEM's, MDM's and the FedAvg family's options declared once (their
 * options.ts): every option refused at a bad value with its typed message,
 * the defaults taken on real data, a caller's object read once, resolved
 * options taken by a role as they are, and one seed bound for the three.
 */
import { beforeAll, describe, expect, test, vi } from 'vitest';
import {
  DirichletMultinomialMixture,
  fedAvg,
  FedAvgServer,
  fedGEM,
  FedGEMServer,
  fitMdm,
  init,
  Matrix,
  MdmAggregator,
  MdmClient,
  MdmServer,
  MdmUserGroup,
  ScaffoldServer,
} from '../ts/index.js';
import * as fedavgOptions from '../ts/federated/fedavg/options.js';
import * as fedgemOptions from '../ts/federated/fedgem/options.js';
import * as mdmOptions from '../ts/federated/mdm/options.js';
import { accuracyOf, blobs, refusal } from './helpers.js';
import { dataset, deal } from './support/honest-matrix.mjs';

beforeAll(async () => {
  await init();
});


const AE = { sizes: [4, 3, 4], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 3 } as const;

/** [option, bad value, the whole message]: each refused by the declaration with its own words. */
type Case = [string, unknown, RegExp];

function refusesEach(check: (o: Record<string, unknown>) => unknown, base: Record<string, unknown>, cases: Case[]) {
  for (const [name, bad, message] of cases) {
    test(`${name}: ${String(bad)}`, () => {
      expect(refusal(() => check(base))).toBeUndefined();
      expect(refusal(() => check({ ...base, [name]: bad }))).toMatch(message);
    });
  }
}

describe('FedGEM server options: each refused with its message', () => {
  refusesEach((o) => new FedGEMServer(o as never), { nFeatures: 2 }, [
    ['nFeatures', 0, /^nFeatures must be an integer in \[1, \d+\], got 0$/],
    ['rounds', -1, /^rounds must be an integer in \[0, 1000000\], got -1$/],
    ['tol', 0, /^tol must be a finite number > 0, got 0$/],
    ['phi', [], /^phi must be a number or a non-empty list of candidates \(e\.g\. PHI_GRID; at most 256\), got \[\]$/],
    ['phi', [1, -2], /^phi\[1\] must be a finite number > 0, got -2$/],
    ['phi', 0, /^phi must be a finite number > 0, got 0$/],
    ['phiTolerance', -1, /^the phi tolerance must be a finite number >= 0, got -1$/],
    ['search', 'grid', /^search must be one of 'kdtree', 'all-pairs', got "grid"$/],
    ['separation', 1, /^separation must be true or false, got 1$/],
    ['onInvalidClient', 'drop', /^onInvalidClient must be one of 'exclude', 'throw', got "drop"$/],
    ['variance', -1, /^variance must be a finite number > 0, got -1$/],
    ['variance', 'guess', /^variance must be one of 'estimate', 'clients', got "guess"$/],
    ['clientVariance', 0, /^clientVariance must be a finite number > 0, got 0$/],
    ['clientVariance', 1, /^clientVariance is the variance of a server whose variance is 'clients'; this one's is "estimate"$/],
    ['nFeatuers', 2, /^options has an unknown option "nFeatuers"; did you mean "nFeatures"\?/],
  ]);
});

describe('FedGEM client options: each refused with its message', () => {
  refusesEach((o) => fedgemOptions.checkClientOptions(o), { nComponents: 2 }, [
    ['nComponents', 0, /^nComponents must be an integer in \[1, 4096\], got 0$/],
    ['nComponents', 4097, /^nComponents must be an integer in \[1, 4096\], got 4097$/],
    ['variance', 0, /^variance must be a finite number > 0, got 0$/],
    ['localSteps', 0, /^localSteps must be an integer in \[1, 10000\], got 0$/],
    ['bisectionIterations', 1001, /^bisectionIterations must be an integer in \[1, 1000\], got 1001$/],
    ['radius', 'exact', /^radius must be one of 'closed-form', 'bisection', got "exact"$/],
    ['seed', -1, /^seed must be an integer >= 0, got -1$/],
    ['nInit', 0, /^nInit must be an integer in \[1, 1000\], got 0$/],
    ['init', 'random', /^init must be one of 'k-means\+\+', 'kmeans', got "random"$/],
    ['noiseSeed', 1.5, /^noiseSeed must be an integer >= 0, got 1.5$/],
    ['privacy', { epsilon: 2, delta: 0.1, bound: 1 }, /^privacy\.epsilon must be in \(0, 1\), got 2$/],
    ['privacy', 5, /^privacy must be \{ epsilon, delta, bound \}, got 5$/],
  ]);
});

describe('MDM server options: each refused with its message', () => {
  refusesEach((o) => new MdmServer(o as never).dispose(), { nCategories: 3, maxCount: 10 }, [
    ['init', {}, /^init must be a DirichletMultinomialMixture, got \{\}$/],
    ['privacy', 5, /^privacy must be \{ noiseMultiplier, clip \}$/],
    ['privacy', { noiseMultiplier: -1, clip: 1 }, /^privacy\.noiseMultiplier must be a finite number >= 0, got -1$/],
    ['privacy', { noiseMultiplier: 1, clip: 0 }, /^privacy\.clip must be a finite number > 0, got 0$/],
    ['onRound', 5, /^onRound must be a function, got 5$/],
    ['nComponents', 0, /^nComponents must be an integer in \[1, 2147483647\], got 0$/],
    ['nComponents', 2e6, /exceed the limit of 10000000 cells \(K x C and K x N each\) that clients accept; lower K or N$/],
    ['nCategories', 1, /^nCategories must be an integer in \[2, 2147483647\], got 1$/],
    ['maxCount', 0, /^maxCount must be an integer in \[1, 2147483647\], got 0$/],
    ['rounds', -1, /^rounds must be an integer in \[0, 1000000\], got -1$/],
    ['cohort', 0, /^cohort must be an integer in \[1, 2147483647\], got 0$/],
    ['initCohort', 0.5, /^initCohort must be an integer in \[1, 2147483647\], got 0.5$/],
    ['onInvalidClient', 'drop', /^onInvalidClient must be one of 'exclude', 'throw', got "drop"$/],
    ['seed', -1, /^seed must be an integer >= 0, got -1$/],
    ['noiseSeed', 2 ** 53, /^noiseSeed must be an integer in \[0, 9007199254740991\], got 9007199254740992$/],
  ]);
  test('the rules across options: a cohort below K, a given model of another shape', () => {
    expect(refusal(() => new MdmServer({ nCategories: 3, maxCount: 10, nComponents: 3, cohort: 2 }))).toMatch(/^K = 3 components is larger than the cohort of 2 clients; lower K or use a larger cohort$/);
    const model = new DirichletMultinomialMixture({ tau: [1], alpha: [[1, 1, 1]], pi: [Array(10).fill(1 / 10)] });
    expect(refusal(() => new MdmServer({ nCategories: 3, maxCount: 9, init: model }))).toMatch(/^init has K = 1, C = 3, N = 10; this run has K = 1, C = 3, N = 9$/);
    // the given model's K is the default
    const server = new MdmServer({ nCategories: 3, maxCount: 10, init: model });
    expect(server.nComponents).toBe(1);
    server.dispose();
  });
});

describe('MDM client, user group and aggregator options: each refused with its message', () => {
  refusesEach((o) => new MdmClient('a', [1, 2, 3], o).dispose(), {}, [
    ['seed', -1, /^seed must be an integer >= 0, got -1$/],
    ['maxCells', 1e8, /^maxCells must be an integer in \[1, 10000000\], got 100000000$/],
    ['maxCell', 1, /^options has an unknown option "maxCell"; did you mean "maxCells"\?/],
  ]);
  refusesEach((o) => new MdmUserGroup('g', [[1, 2], [3, 4]], o).dispose(), {}, [
    ['seeds', [1, -1], /^seeds\[1\] must be an integer >= 0, got -1$/],
    ['seed', 1.5, /^seed must be an integer >= 0, got 1.5$/],
    ['maxCells', 0, /^maxCells must be an integer in \[1, 10000000\], got 0$/],
  ]);
  refusesEach((o) => new MdmAggregator(o), {}, [
    ['noiseMultiplier', -1, /^noiseMultiplier must be a finite number >= 0, got -1$/],
    ['detailedReasons', 1, /^detailedReasons must be true or false, got 1$/],
    ['exactEvaluation', 'yes', /^exactEvaluation must be true or false, got "yes"$/],
    ['minExactClients', 0, /^minExactClients must be an integer in \[1, 2147483647\], got 0$/],
    ['seed', -1, /^seed must be an integer >= 0, got -1$/],
  ]);
});

describe('FedAvg family options: each refused with its message', () => {
  refusesEach((o) => new FedAvgServer(o as never), { network: AE }, [
    ['network', undefined, /^the server needs the network its clients train: \{ sizes, activation, outputActivation, loss \}$/],
    ['rounds', -1, /^rounds must be an integer in \[0, 1000000\], got -1$/],
    ['epochs', 0, /^epochs must be an integer in \[1, 10000\], got 0$/],
    ['batchSize', 0, /^batchSize must be an integer in \[1, 2147483647\], got 0$/],
    ['optimizer', { name: 'rmsprop', learningRate: 1 }, /^optimizer\.name must be one of 'sgd', 'adam', got "rmsprop"$/],
    ['optimizer', { name: 'adam', learningRate: 0 }, /^optimizer\.learningRate must be a finite number > 0, got 0$/],
    ['optimizer', { name: 'adam', learningRate: 0.1, beta1: 1 }, /^optimizer\.beta1 must be in \[0, 1\), got 1$/],
    ['weighting', 'rows', /^weighting must be one of 'samples', 'uniform', got "rows"$/],
    ['aggregation', 'mode', /^aggregation must be one of 'mean', 'median', 'trimmed-mean', got "mode"$/],
    ['trim', -1, /^trim must be a finite number >= 0, got -1$/],
    ['trim', 0.5, /^trim is 0.5; it must be below 0.5, or nothing is left to average$/],
    ['earlyStopping', { monitor: 'held-out' }, /^earlyStopping\.monitor must be one of/],
    ['evaluate', 5, /^evaluate must be a function \(parameters, round\) => metrics, got 5$/],
    ['mu', 0.1, /^options has an unknown option "mu"/],
  ]);
  test("FedProx's mu, SCAFFOLD's eta_g and its rules", () => {
    const check = (decl: { check(o: unknown, name?: string): object }, o: object) => refusal(() => fedavgOptions.checkServerOptions(decl, { network: AE, ...o }));
    expect(check(fedavgOptions.fedProxServerOptions, {})).toBe('mu must be a finite number >= 0, got undefined');
    expect(check(fedavgOptions.fedProxServerOptions, { mu: -1 })).toBe('mu must be a finite number >= 0, got -1');
    expect(check(fedavgOptions.scaffoldServerOptions, { serverLearningRate: 0 })).toBe('serverLearningRate must be a finite number > 0, got 0');
    expect(check(fedavgOptions.scaffoldServerOptions, { optimizer: { name: 'adam', learningRate: 0.01 } })).toMatch(/optimizer\.name must be 'sgd'$/);
    expect(check(fedavgOptions.scaffoldServerOptions, { earlyStopping: { monitor: 'validation-loss' } })).toMatch(/earlyStopping is for FedAvg and FedProx$/);
    expect(refusal(() => new ScaffoldServer({ network: AE }))).toBeUndefined();
  });
  test("the client's and the one-call function's own", () => {
    expect(refusal(() => fedavgOptions.clientOptions.check({ seed: -1 }))).toBe('seed must be an integer >= 0, got -1');
    const X = blobs(20, 4, 2, 1);
    expect(refusal(() => fedAvg([{ X }], { network: AE, algorithm: 'fedsgd' as never }))).toBe(`algorithm must be one of 'fedavg', 'fedprox', 'scaffold', got "fedsgd"`);
    expect(refusal(() => fedAvg([{ X }], { network: AE, onInvalidClient: 'drop' as never }))).toBe(`onInvalidClient must be one of 'exclude', 'throw', got "drop"`);
    expect(refusal(() => fedAvg([{ X }], { network: AE, rounds: -1 }))).toBe('rounds must be an integer in [0, 1000000], got -1');
  });
});

describe('the defaults are taken, on real data', () => {
  test('every declaration resolves its defaults from the required options alone', () => {
    expect(fedgemOptions.serverOptions.check({ nFeatures: 2 })).toEqual({ nFeatures: 2, rounds: 10, phi: [1], search: 'kdtree', separation: true, variance: 'estimate' });
    expect(fedgemOptions.clientOptions.check({ nComponents: 2 })).toEqual({ nComponents: 2, localSteps: 1, bisectionIterations: 60, radius: 'closed-form', nInit: 3, init: 'k-means++' });
    expect(mdmOptions.serverOptions.check({ nCategories: 3, maxCount: 5 })).toEqual({ nCategories: 3, maxCount: 5, nComponents: 1, rounds: 100 });
    expect(mdmOptions.aggregatorOptions.check(undefined)).toEqual({ noiseMultiplier: 0, exactEvaluation: false, minExactClients: 10 });
    expect(fedavgOptions.scaffoldServerOptions.check({ network: AE })).toEqual({
      network: AE, rounds: 10, epochs: 5, batchSize: 32, optimizer: { name: 'sgd', learningRate: 0.3 }, weighting: 'uniform', aggregation: 'mean', trim: 0.1, serverLearningRate: 1,
    });
  });

  const real = async (name: string) => {
    const f = { ...(await import('../ts/index.js')), ...(await import('../ts/experiments/index.js')) };
    return { f, data: dataset(f, name) as { X: Matrix; labels: Int32Array; testX: Matrix; testLabels: Int32Array; nClasses: number } };
  };

  test('FedGEM at its defaults on satellite.csv (5 IID clients, K_c their classes): no client excluded', async () => {
    const { f, data } = await real('satellite');
    const parts = deal(f, data, 'iid', 5, 1) as Int32Array[];
    const client = parts.map((rows) => ({ nComponents: new Set(Array.from(rows, (i) => data.labels[i])).size, seed: 1 }));
    const r = fedGEM(parts.map((rows) => data.X.selectRows(rows)), { client });
    try {
      expect(r.excluded).toEqual([]);
      expect(r.clients).toHaveLength(5);
      expect(r.varianceEstimate!.variance).toBeGreaterThan(0);
      expect(r.estimatedK).toBeGreaterThanOrEqual(1);
    } finally {
      for (const c of r.clients) c.dispose();
    }
  }, 60_000);

  test('FedAvg at its defaults on satellite.csv (5 IID clients, a classifier): no client excluded, above 0.75 test accuracy', async () => {
    const { f, data } = await real('satellite');
    const parts = deal(f, data, 'iid', 5, 1) as Int32Array[];
    const network = { sizes: [data.X.nCols, 32, data.nClasses], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 } as const;
    const r = fedAvg(parts.map((rows) => ({ X: data.X.selectRows(rows), labels: Int32Array.from(rows, (i) => data.labels[i]!) })), { network, seed: 1 });
    expect(r.excluded).toEqual([]);
    expect([r.rounds, r.epochs, r.batchSize]).toEqual([10, 5, 32]);
    expect(accuracyOf(network, r.parameters, data.testX, data.testLabels)).toBeGreaterThan(0.75);
  }, 60_000);

  test("MDM at its defaults on letter.csv (80 clients, each the histogram of its 20 letters' classes): no client excluded, every round run", async () => {
    const { data } = await real('letter');
    const c = data.nClasses;
    const rows = Array.from({ length: 80 }, (_, i) => {
      const h = new Array<number>(c).fill(0);
      for (let j = 0; j < 20; j++) h[data.labels[i * 20 + j]!]! += 1;
      return h;
    });
    const r = fitMdm(Matrix.fromRows(rows), { seed: 1 });
    expect(r.excluded).toEqual([]);
    expect(r.history).toHaveLength(100);
    expect(Number.isFinite(r.history[99]!.meanLogLikelihood)).toBe(true);
  }, 60_000);
});

describe('checked once', () => {
  /** An options object whose `key` counts the reads of it. */
  function counting<T extends object>(o: T, key: keyof T & string): { options: T; reads: () => number } {
    let n = 0;
    const value = o[key];
    const options = { ...o };
    Object.defineProperty(options, key, { enumerable: true, get: () => (n++, value) });
    return { options, reads: () => n };
  }

  test("fedGEM reads each client's options once (main read them twice: the one-call function, then the client)", () => {
    const data = [blobs(60, 2, 2, 1), blobs(60, 2, 2, 2)];
    const a = counting({ nComponents: 2, seed: 1 }, 'nComponents');
    const b = counting({ nComponents: 2, seed: 2 }, 'nComponents');
    const r = fedGEM(data, { client: [a.options, b.options], rounds: 2 });
    for (const c of r.clients) c.dispose();
    expect([a.reads(), b.reads()]).toEqual([1, 1]);
  });

  test('a role handed resolved options takes them as they are: the declaration returns them, its schema does not run', () => {
    const server = fedgemOptions.serverOptions.check({ nFeatures: 2, rounds: 3 });
    const spy = vi.spyOn(fedgemOptions.serverOptions, 'check');
    try {
      new FedGEMServer(server);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.results[0]!.value).toBe(server);
    } finally {
      spy.mockRestore();
    }
    // what the library marks resolved (trust) is not checked again: a value the schema refuses passes (internal use only)
    const trusted = mdmOptions.aggregatorOptions.trust({ noiseMultiplier: 0, exactEvaluation: false, minExactClients: 0 });
    expect(new MdmAggregator(trusted).minExactClients).toBe(0);
    expect(refusal(() => new MdmAggregator({ minExactClients: 0 }))).toMatch(/^minExactClients must be/);
    // MdmClient hands its group resolved options: the group's check returns them as they are
    const group = vi.spyOn(mdmOptions.userGroupOptions, 'check');
    try {
      new MdmClient('a', [1, 2], { seed: 3 }).dispose();
      expect(group).toHaveBeenCalledTimes(1);
      expect(mdmOptions.userGroupOptions.isResolved(group.mock.calls[0]![0])).toBe(true);
      expect(group.mock.results[0]!.value).toBe(group.mock.calls[0]![0]);
    } finally {
      group.mockRestore();
    }
    // the FedAvg family: a resolved options object is the server's, as given
    const fedavg = fedavgOptions.fedAvgServerOptions.check({ network: AE, rounds: 0 });
    expect(fedavgOptions.checkServerOptions(fedavgOptions.fedAvgServerOptions, fedavg)).toBe(fedavg);
    expect(new FedAvgServer(fedavg).rounds).toBe(0);
  });
});

test('one seed bound for the three: 2^40 taken by fedGEM, fitMdm and fedAvg (fedAvg refused it on main), 2^53 refused by each in the same words', () => {
  const big = 2 ** 40;
  const refused = /^seed must be an integer in \[0, 9007199254740991\], got 9007199254740992$/;
  const points = [blobs(40, 2, 2, 1), blobs(40, 2, 2, 2)];
  const gem = fedGEM(points, { client: { nComponents: 2, seed: big }, rounds: 1 });
  expect(gem.excluded).toEqual([]);
  for (const c of gem.clients) c.dispose();
  expect(refusal(() => fedGEM(points, { client: { nComponents: 2, seed: 2 ** 53 } }))).toMatch(refused);

  const histograms = Matrix.fromRows([[3, 1, 0], [0, 2, 2], [1, 1, 2], [4, 0, 0]]);
  const mdm = fitMdm(histograms, { seed: big, rounds: 2 });
  expect(mdm.excluded).toEqual([]);
  expect(refusal(() => fitMdm(histograms, { seed: 2 ** 53 }))).toMatch(refused);

  const X = blobs(30, 4, 2, 1);
  // the largest seed too: client i's seed + i wraps below 2^53, every client's still distinct and whole
  for (const seed of [big, Number.MAX_SAFE_INTEGER]) {
    const r = fedAvg([{ X }, { X: blobs(30, 4, 2, 2) }], { network: AE, rounds: 1, epochs: 1, seed });
    expect(r.excluded).toEqual([]);
  }
  expect(refusal(() => fedAvg([{ X }], { network: AE, seed: 2 ** 53 }))).toMatch(refused);
});
