/**
 * Issue 24, item 3, for community association and FedDistr: their options
 * declared once (ts/federated/communities/options.ts,
 * ts/federated/feddistr/options.ts) and checked once, at the public edge.
 * Every declared option is refused at a bad value with its typed message
 * ("<name> must be ..., got ..."); the defaults are accepted on real data (a
 * FedDistr run on letter.csv and an association on satellite.csv, every
 * honest client's upload taken); a role handed resolved options does not
 * check them again, and a one-call function checks each declaration once,
 * not once per client; a seed of 2^40 (FedDistr's bound was 2^32 - 1) and
 * the top of the bound, 2^53 - 1, work in both.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import {
  associate,
  BaseDistributionClassifier,
  CommunitiesClient,
  CommunitiesServer,
  fedDistr,
  FedDistrClient,
  FedDistrServer,
  init,
  InvalidParameterError,
  Matrix,
  partition,
  Rng,
  sampleBaseDistributions,
  type FedDistrClientData,
} from '../ts/index.js';
import { LETTER_TASK_GROUPS, subclassDataFromCsv, type SubclassData } from '../ts/experiments/index.js';
import { MinMaxScaler } from '../ts/data/scale.js';
import { labelledFromCsv } from '../ts/experiments/dataset.js';
import * as communities from '../ts/federated/communities/options.js';
import * as feddistr from '../ts/federated/feddistr/options.js';
import { DESCRIBE } from '../ts/federated/feddistr/messages.js';
import { makeClient, makeServer, matrixData } from '../ts/federated/algorithms.js';

beforeAll(async () => {
  await init();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The message of the InvalidParameterError `f` throws. */
function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidParameterError);
    return (e as Error).message;
  }
  throw new Error('no error was thrown');
}

/** `f` refused, its message "<name> must be <need>, got <value>". */
function refusedAs(name: string, f: () => unknown): void {
  const escaped = name.replace(/[.[\]]/g, (c) => `\\${c}`);
  expect(refusal(f)).toMatch(new RegExp(`^${escaped} must be .+, got .+$`));
}

/** n rows of letter.csv (16 features; task labels: the letter groups), seeded. */
function letters(rows: number, seed: number): SubclassData {
  const text = readFileSync(fileURLToPath(new URL('../../shared/datasets/letter.csv', import.meta.url)), 'utf8');
  const all = subclassDataFromCsv(text, { subclass: 'label', groups: LETTER_TASK_GROUPS });
  const rng = new Rng(seed);
  const idx = Int32Array.from(rng.permutation(all.X.nRows).subarray(0, rows)).sort();
  rng.dispose();
  return { ...all, X: all.X.selectRows(idx), subclasses: Int32Array.from(idx, (i) => all.subclasses[i]!), tasks: Int32Array.from(idx, (i) => all.tasks[i]!) };
}

/** letter.csv's rows dealt IID to `clients` clients, with task labels and (for the evaluation) subclasses. */
function letterClients(rows: number, clients: number, seed: number): FedDistrClientData[] {
  const d = letters(rows, seed);
  return partition.iid(d.X.nRows, { clients, seed }).indices.map((r) => ({
    X: d.X.selectRows(r),
    labels: Array.from(r, (i) => d.tasks[i]!),
    subclasses: Array.from(r, (i) => d.subclasses[i]!),
  }));
}

/** satellite.csv (36 features, 6 classes) min-max scaled, as an RBF kernel's gamma 'auto' expects: `perClass` rows of each class, seeded, and the paper's contaminated partition of them. */
function satelliteClients(perClass: number, clientsPerClass: number, seed: number) {
  const d = labelledFromCsv(readFileSync(new URL('../../shared/datasets/satellite.csv', import.meta.url), 'utf8'), { label: 'label' });
  const labels = Array.from(d.labels!, (l) => String(l));
  const byClass = new Map<string, number[]>();
  labels.forEach((l, i) => byClass.set(l, [...(byClass.get(l) ?? []), i]));
  const rng = new Rng(seed);
  const keep: number[] = [];
  for (const rows of byClass.values()) for (const k of rng.choice(rows.length, Math.min(perClass, rows.length))) keep.push(rows[k]!);
  rng.dispose();
  keep.sort((a, b) => a - b);
  const X = new MinMaxScaler().fitTransform(d.X.selectRows(Int32Array.from(keep)));
  const kept = keep.map((i) => labels[i]!);
  const p = partition.contaminated(kept, { clientsPerClass, contamination: 0.1, seed });
  return { parts: p.indices.map((r) => X.selectRows(r)), inlier: p.inlierClass.map(String) };
}

describe('every declared option refused at a bad value, in its own words', () => {
  test('community association: server, client, associate', () => {
    const server = (o: object) => () => new CommunitiesServer({ nFeatures: 2, ...o });
    refusedAs('nFeatures', server({ nFeatures: 0 }));
    refusedAs('nFeatures', server({ nFeatures: 2.5 }));
    refusedAs('kind', server({ kind: 'svm' }));
    refusedAs('contamination', server({ contamination: 0.5 }));
    refusedAs('contamination', server({ contamination: 0 }));
    refusedAs('q', server({ q: 1.5 }));
    refusedAs('q', server({ q: NaN }));
    refusedAs('partners', server({ partners: 0 }));
    refusedAs('partners', server({ partners: 'some' }));
    refusedAs('partners', server({ partners: 4097 }));
    refusedAs('seed', server({ seed: -1 }));
    refusedAs('seed', server({ seed: 2 ** 53 }));
    refusedAs('method', server({ method: 'girvan' }));
    refusedAs('maxRelayBytes', server({ maxRelayBytes: 0 }));
    expect(refusal(server({ nFeature: 2 }))).toMatch(/unknown option "nFeature"; did you mean "nFeatures"\?/);
    expect(refusal(() => new CommunitiesServer(undefined as never))).toBe('nFeatures must be an integer in [1, 1048576], got undefined');
    expect(refusal(server({ q: 2 }))).toBe('q must be a number in [0, 1], got 2');
    expect(refusal(server({ contamination: 0.7 }))).toBe('contamination must be a number in (0, 0.5), got 0.7');

    const X = Matrix.fromRows([[0, 0], [1, 1], [0, 1]]);
    refusedAs('detector', () => new CommunitiesClient('a', X, { detector: 5 as never }));
    expect(refusal(() => new CommunitiesClient('a', X, { detector: { kinds: 'gmm' } as never }))).toMatch(/^detector has an unknown option "kinds"; did you mean "kind"\?/);
    expect(refusal(() => new CommunitiesClient('a', X, { detectors: {} } as never))).toMatch(/unknown option "detectors"/);
    // the detector's values are the model's to check (LocalDetector), when it is made
    expect(refusal(() => new CommunitiesClient('a', X, { detector: { kind: 'svm' as never } }))).toMatch(/^kind must be one of .+, got "svm"$/);

    const parts = [X, X];
    refusedAs('onInvalidClient', () => associate(parts, { onInvalidClient: 'skip' as never }));
    refusedAs('noiseSeed', () => associate(parts, { noiseSeed: -1 }));
    refusedAs('q', () => associate(parts, { q: -0.1 }));
    refusedAs('partners', () => associate(parts, { partners: 0 }));
    refusedAs('seed', () => associate(parts, { seed: 0.5 }));
    refusedAs('method', () => associate(parts, { method: 'girvan' as never }));
    refusedAs('maxRelayBytes', () => associate(parts, { maxRelayBytes: 2 ** 31 }));
    refusedAs('contamination', () => associate(parts, { detector: { contamination: 0.5 } }));
    expect(refusal(() => associate(parts, { qq: 0.1 } as never))).toMatch(/unknown option "qq"; did you mean "q"\?/);
  });

  test('FedDistr: server, client, spec, fedDistr, the global model', () => {
    const server = (o: object) => () => new FedDistrServer({ dimension: 3, ...o });
    refusedAs('dimension', server({ dimension: 0 }));
    refusedAs('dimension', server({ dimension: 2000 }));
    refusedAs('covariance', server({ covariance: 'diag' }));
    refusedAs('clustering', server({ clustering: 'em' }));
    refusedAs('criterion', server({ criterion: 'aic' }));
    refusedAs('kMin', server({ kMin: 0 }));
    refusedAs('kMax', server({ kMax: 65537 }));
    expect(refusal(server({ kMin: 3, kMax: 2 }))).toBe('kMax must be an integer in [3, 65536], got 2');
    refusedAs('shrinkage', server({ shrinkage: 'lw' }));
    expect(refusal(server({ regCovar: 0 }))).toBe('regCovar must be a finite number > 0, got 0');
    refusedAs('cost', server({ cost: 'kl' }));
    refusedAs('threshold', server({ threshold: -1 }));
    refusedAs('merge', server({ merge: 'mean' }));
    refusedAs('seed', server({ seed: -1 }));
    expect(refusal(server({ seed: 2 ** 53 }))).toBe('seed must be an integer in [0, 9007199254740991], got 9007199254740992');
    refusedAs('encoder', server({ encoder: 'pca' }));
    expect(refusal(server({ clustering: 'kmeans', criterion: 'bic' }))).toMatch(/k-means has no likelihood for BIC/);
    expect(refusal(() => new FedDistrServer({}))).toMatch(/the identity encoder needs `dimension`/);
    expect(refusal(server({ thresold: 1 }))).toMatch(/unknown option "thresold"; did you mean "threshold"\?/);

    const X = Matrix.fromRows([[0, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0]]);
    const labels = [0, 0, 1, 1];
    refusedAs('seed', () => new FedDistrClient('0', X, { labels, seed: -1 }));
    refusedAs('privacy.clip', () => new FedDistrClient('0', X, { labels, privacy: { clip: -1, epsilon: 1, delta: 1e-5 } }));
    refusedAs('labels[1]', () => new FedDistrClient('0', X, { labels: [0, 0.5, 1, 1] }));
    refusedAs('spec.options', () => makeClient({ algorithm: 'feddistr', id: '0', data: matrixData(X), labels: Int32Array.from(labels), options: 5 as never }));
    expect(refusal(() => makeClient({ algorithm: 'feddistr', id: '0', data: matrixData(X), labels: Int32Array.from(labels), options: { seed: -1 } }))).toBe('seed must be an integer >= 0, got -1');

    const data = [{ X, labels }, { X, labels }];
    refusedAs('onInvalidClient', () => fedDistr(data, { onInvalidClient: 'skip' as never }));
    refusedAs('noiseSeed', () => fedDistr(data, { noiseSeed: 1.5 }));
    refusedAs('options.privacy.epsilon', () => fedDistr(data, { privacy: { clip: 1, epsilon: 0, delta: 1e-5 } }));
    refusedAs('kMax', () => fedDistr(data, { kMax: 0 }));
    refusedAs('cost', () => fedDistr(data, { cost: 'kl' as never }));
    expect(() => fedDistr(data, { dimension: 4 })).toThrow(/has 3 columns but dimension is 4/);

    const bases = [{ label: 0, count: 3, mean: [0, 0], covariance: [1, 0, 0, 1] }];
    refusedAs('covariance', () => new BaseDistributionClassifier(bases, { covariance: 'diag' as never }));
    refusedAs('encoder', () => new BaseDistributionClassifier(bases, { encoder: 'pca' as never }));
    refusedAs('n', () => sampleBaseDistributions(bases, { n: 0 }));
    refusedAs('seed', () => sampleBaseDistributions(bases, { n: 2, seed: -1 }));
    refusedAs('covariance', () => sampleBaseDistributions(bases, { n: 2, covariance: 'x' as never }));
  });
});

describe('the defaults accepted on real data', () => {
  test('FedDistr at its defaults on letter.csv (IID to 3 clients): every upload taken, the sets close to the subclasses', () => {
    const r = fedDistr(letterClients(900, 3, 1));
    console.log(`FedDistr defaults, letter.csv 900 rows, 3 clients: ${r.estimatedBaseDistributions} consolidated of ${r.uploaded} uploaded, ARI ${r.evaluation!.adjustedRandIndex.toFixed(3)}, parallel recall ${r.evaluation!.parallelRecall.toFixed(3)}`);
    expect(r.excluded).toEqual([]);
    expect(r.membership.size).toBe(3);
    expect(r.estimatedBaseDistributions).toBeLessThan(r.uploaded);
    // measured: ARI 0.630, parallel recall 0.920
    expect(r.evaluation!.adjustedRandIndex).toBeGreaterThan(0.5);
    expect(r.evaluation!.parallelRecall).toBeGreaterThan(0.8);
  });

  test('association at its defaults (OCSVM, q = 0.08, every pair) on satellite.csv, contaminated partition: every client in the graph', () => {
    const { parts, inlier } = satelliteClients(120, 2, 0);
    const r = associate(parts);
    // pairs of clients in one community: sharing an inlier class, and not
    let same = 0;
    let sameTogether = 0;
    let other = 0;
    let otherTogether = 0;
    for (let i = 0; i < parts.length; i++) {
      for (let j = i + 1; j < parts.length; j++) {
        const together = r.membership.get(String(i)) === r.membership.get(String(j));
        if (inlier[i] === inlier[j]) [same, sameTogether] = [same + 1, sameTogether + (together ? 1 : 0)];
        else [other, otherTogether] = [other + 1, otherTogether + (together ? 1 : 0)];
      }
    }
    console.log(`association defaults, satellite.csv, ${parts.length} clients: ${r.communities.length} communities; pairs together: ${sameTogether}/${same} sharing a class, ${otherTogether}/${other} not`);
    expect(r.excluded).toEqual([]);
    expect(r.nodes).toHaveLength(parts.length);
    expect(r.tests).toBe(parts.length * (parts.length - 1));
    // measured: 3 of 6 pairs sharing a class together, 0 of 60 others
    expect(sameTogether / same).toBeGreaterThan(otherTogether / other);
  });
});

describe('checked once: a role handed resolved options does not check them again', () => {
  test('communities: server and client', () => {
    const server = communities.checkServerOptions({ nFeatures: 2 });
    expect(server).toEqual({ nFeatures: 2, kind: 'ocsvm', contamination: 0.1, q: 0.08, partners: 'all', seed: 0, method: 'fast-greedy', maxRelayBytes: 8 * 2 ** 20 });
    expect(Object.isFrozen(server)).toBe(true);
    const serverRuns = vi.spyOn(communities.serverOptions.schema, '~run');
    new CommunitiesServer(server);
    expect(serverRuns).not.toHaveBeenCalled();
    new CommunitiesServer({ nFeatures: 2 });
    expect(serverRuns).toHaveBeenCalledTimes(1);

    const client = communities.checkClientOptions({ detector: { kind: 'gmm' } });
    const clientRuns = vi.spyOn(communities.clientOptions.schema, '~run');
    const X = Matrix.fromRows([[0, 0], [1, 1], [0, 1]]);
    new CommunitiesClient('a', X, client).dispose();
    expect(clientRuns).not.toHaveBeenCalled();
    new CommunitiesClient('a', X, { detector: { kind: 'gmm' } }).dispose();
    expect(clientRuns).toHaveBeenCalledTimes(1);
  });

  test('FedDistr: server and client', () => {
    const server = feddistr.checkServerOptions({ dimension: 3 });
    expect(server).toMatchObject({ encoder: 'identity', dimension: 3, covariance: 'full', clustering: 'gmm', criterion: 'bic', kMin: 1, kMax: 5, shrinkage: 'oas', regCovar: 1e-6, cost: 'wasserstein', merge: 'weighted', seed: 0 });
    expect(server.describe.encoder).toEqual({ kind: 'identity', dimension: 3 });
    const serverRuns = vi.spyOn(feddistr.serverOptions.schema, '~run');
    const request = new FedDistrServer(server).configure({ round: 1, clients: ['0'], available: ['0'] }).get('0')!;
    expect(serverRuns).not.toHaveBeenCalled();
    expect(DESCRIBE.read(request).payload).toMatchObject({ kMin: 1, kMax: 5, seed: 0 });
    new FedDistrServer({ dimension: 3 });
    expect(serverRuns).toHaveBeenCalledTimes(1);

    const X = Matrix.fromRows([[0, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0]]);
    const client = feddistr.clientOptions.check({ labels: [0, 0, 1, 1], privacy: { clip: 1, epsilon: 1, delta: 1e-5 }, seed: 3 });
    const clientRuns = vi.spyOn(feddistr.clientOptions.schema, '~run');
    new FedDistrClient('0', X, client);
    expect(clientRuns).not.toHaveBeenCalled();
    new FedDistrClient('0', X, { labels: [0, 0, 1, 1] });
    expect(clientRuns).toHaveBeenCalledTimes(1);
  });

  test('the one-call functions and the registry check each declaration once, not once per client', () => {
    const parts = Array.from({ length: 4 }, (_, c) => Matrix.fromRows(Array.from({ length: 12 }, (_, i) => [Math.sin(i + c), Math.cos(3 * i - c)])));
    const runs = (decl: { schema: object }) => vi.spyOn(decl.schema as { '~run': () => unknown }, '~run');
    let server = runs(communities.serverOptions);
    let client = runs(communities.clientOptions);
    const a = associate(parts, { detector: { kind: 'gmm' } });
    expect(a.excluded).toEqual([]);
    expect(server).toHaveBeenCalledTimes(1);
    expect(client).not.toHaveBeenCalled();
    vi.restoreAllMocks();

    server = runs(feddistr.serverOptions);
    client = runs(feddistr.clientOptions);
    const f = fedDistr(parts.map((X) => ({ X, labels: Array.from({ length: X.nRows }, (_, i) => i % 2) })), { kMax: 2, privacy: { clip: 10, epsilon: 1, delta: 1e-5 }, noiseSeed: 1 });
    expect(f.excluded).toEqual([]);
    expect(server).toHaveBeenCalledTimes(1);
    expect(client).not.toHaveBeenCalled();
    vi.restoreAllMocks();

    // makeServer / makeClient: the descriptor's check, and the role takes what it resolved
    server = runs(communities.serverOptions);
    makeServer('communities', { nFeatures: 2 });
    expect(server).toHaveBeenCalledTimes(1);
    server = runs(feddistr.serverOptions);
    makeServer('feddistr', { dimension: 2 });
    expect(server).toHaveBeenCalledTimes(1);
    client = runs(feddistr.clientOptions);
    makeClient({ algorithm: 'feddistr', id: '0', data: matrixData(parts[0]!), labels: Int32Array.from({ length: 12 }, (_, i) => i % 2), options: { seed: 1 } });
    expect(client).not.toHaveBeenCalled();
  });
});

describe('one seed bound, [0, 2^53 - 1], in both', () => {
  test('FedDistr takes a seed of 2^40 (its bound was 2^32 - 1) and sends it to every client; and 2^53 - 1, with noise seeds past it wrapping', () => {
    const data = letterClients(300, 3, 2);
    const r = fedDistr(data, { seed: 2 ** 40, kMax: 3 });
    expect(r.excluded).toEqual([]);
    expect(new FedDistrServer({ dimension: 16, seed: 2 ** 40 }).configure({ round: 1, clients: ['0'], available: ['0'] }).get('0')!.payload).toMatchObject({ seed: 2 ** 40 });
    // every client's privacy noise seeded from the top of the bound: 2^53 - 1, then 0, 1
    const top = fedDistr(data, { seed: 2 ** 53 - 1, kMax: 3, privacy: { clip: 50, epsilon: 1, delta: 1e-5 }, noiseSeed: 2 ** 53 - 1 });
    expect(top.excluded).toEqual([]);
    expect(() => new FedDistrClient('0', data[0]!.X, { labels: data[0]!.labels, seed: 2 ** 40 })).not.toThrow();
  });

  test('community association takes a seed of 2^40: partners drawn and Louvain seeded with it', () => {
    const { parts } = satelliteClients(40, 2, 3);
    const r = associate(parts, { detector: { kind: 'gmm', gmm: { covarianceType: 'diag' } }, seed: 2 ** 40, partners: 3, method: 'louvain' });
    expect(r.excluded).toEqual([]);
    expect(r.nodes).toHaveLength(parts.length);
    expect(new CommunitiesServer({ nFeatures: 2, seed: 2 ** 53 - 1 }).seed).toBe(2 ** 53 - 1);
  });
});
