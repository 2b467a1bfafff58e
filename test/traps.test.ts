/**
 * The traps a new user fell into (issue 15, item 6): blobs whose first two
 * clusters coincide, misspelt options silently ignored, "not fitted" after
 * dispose(), and CSV cells that Number() takes but no numeric column means
 * (the docs' examples are run by test/readme-examples.test.ts and test/docs-examples.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { types } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import {
  Autoencoder,
  csvToMatrix,
  DisposedError,
  GaussianMixture,
  init,
  InvalidDataError,
  InvalidParameterError,
  LocalDetector,
  makeBlobs,
  MLPClassifier,
  NotFittedError,
  OneClassSVM,
  parseCsv,
} from '../ts/index.js';
import { blobs } from './helpers.js';
import { RECIPES } from './support/hostile-recipes.js';
import { release } from './support/release.js';

beforeAll(async () => {
  await init();
});

function distance(centers: Float64Array, d: number, a: number, b: number): number {
  let s = 0;
  for (let j = 0; j < d; j++) s += (centers[a * d + j]! - centers[b * d + j]!) ** 2;
  return Math.sqrt(s);
}

describe('makeBlobs', () => {
  test('without minDistance every center is drawn on its own: clusters 0 and 1 are not the same cluster', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const b = makeBlobs({ nClusters: 4, nFeatures: 2, samplesPerCluster: 10, seed });
      // centers are uniform in [-10, 10]^2; two coinciding ones were the bug
      expect(distance(b.centers, 2, 0, 1)).toBeGreaterThan(1e-6);
      const means = [0, 1].map((c) => [0, 1].map((j) => b.X.data.slice(j * 40 + c * 10, j * 40 + c * 10 + 10).reduce((t, v) => t + v, 0) / 10));
      expect(Math.hypot(means[0]![0]! - b.centers[0]!, means[0]![1]! - b.centers[1]!)).toBeLessThan(1.5);
      expect(Math.hypot(means[1]![0]! - b.centers[2]!, means[1]![1]! - b.centers[3]!)).toBeLessThan(1.5);
    }
  });

  test('with minDistance the planted pair is still exactly that far apart', () => {
    const b = makeBlobs({ nClusters: 3, nFeatures: 3, samplesPerCluster: 5, minDistance: 5, seed: 7 });
    expect(distance(b.centers, 3, 0, 1)).toBeCloseTo(5, 10);
  });
});

/** An object literal the caller wrote (not a Matrix, a typed array, a Map or a Proxy). */
function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !types.isProxy(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** Paths to every object literal in a call's arguments: [argument, key or array index, ...] (an array's first entry only). */
function objectPaths(value: unknown, at: (string | number)[], depth = 0): (string | number)[][] {
  if (depth > 4) return [];
  if (Array.isArray(value)) return value.length > 0 ? objectPaths(value[0], [...at, 0], depth + 1) : [];
  if (!isPlain(value)) return [];
  return [at, ...Object.entries(value).flatMap(([k, v]) => objectPaths(v, [...at, k], depth + 1))];
}

/** `value` with { bogusOption: 1 } added to the object at `path` (copies along the way: the recipe's objects stay as they were). */
function withBogus(value: unknown, path: readonly (string | number)[]): unknown {
  if (path.length === 0) return { ...(value as object), bogusOption: 1 };
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? withBogus(v, rest) : v));
  return { ...(value as object), [head!]: withBogus((value as Record<string | number, unknown>)[head!], rest) };
}

/**
 * Objects that are records, not options: data, a result handed back, a
 * message, a map keyed by names the caller chooses, a saved model (a newer
 * version's fields are left alone). Each pattern is matched against
 * "call [argument.key...]". Anything else that takes { bogusOption: 1 }
 * without naming it fails the test.
 */
const RECORDS: Array<[RegExp, string]> = [
  [/\.fromJSON \[|^loadResult \[1\]$|^restoreServer \[0[\].]/, "a saved model or run checkpoint: a newer version's fields are left alone"],
  [/^saveCheckpoint \[1[\].]/, 'a run checkpoint the round loop made (onCheckpoint), read by its fields'],
  [/^modelArtifact \[[23][\].]|^clientModelArtifact \[[12][\].]/, "a run's options, its history and a model's JSON, saved as they are into the artifact"],
  [/^(defineAlgorithm|registerAlgorithm) \[0\.protocol\]$/, 'a protocol, made by defineProtocol (its messages by the names the caller chooses)'],
  [/^(partitionToArrow|aucByClient|formatCommunityTables|fashionMnistSubclasses) \[0[\].]/, 'a result handed back'],
  [/^(csvToMatrix|fashionMnist) \[0\]$/, 'a parsed CSV table; the files of a split'],
  [/^scoreMixture \[2\]$/, 'test rows { X, anomaly }'],
  [/^(ClientGraph|communities|modularity) \[0\]$/, 'a graph { nodes, edges }'],
  [/^(trainCommunities|fedAvg|fedDistr) \[0\.0[\].]/, "a client's data"],
  [/^(runCommunityExperiment|runFedDistrExperiment|runFedGenGMMExperiment|runFedGenGMMExperimentSync) \[0[\].]/, 'a dataset'],
  [/^(communityMembership|mergedCommunityAuc) \[[12][\].]/, 'a map from client id to a class or an AUC'],
  [/^toArrowTable \[0\]$/, 'columns by the names the caller chooses'],
  [/^(wasserstein2|bhattacharyya) \[[01]\]$|^(BaseDistributionClassifier|sampleBaseDistributions) \[0\.0\]$/, 'a Gaussian { mean, covariance }'],
  [/^roundsToReach \[0\.0\]$/, 'a curve point'],
  [/^(WorkerTransport|WebWorkerTransport)\.start \[0\.0\.data\]$|^makeClient \[0\.data\]$/, 'matrix data { data, nRows, nCols }'],
  [/^(startBroker|startMosquitto|writeMosquittoConfig|mosquittoConfig) \[[01]\.users\.0\]$|^(topicGrants|mayAccess) \[1\]$|^mosquittoAcl \[1\.0\]$/, 'a broker account'],
  [/^mosquittoConfig \[1\]$/, 'the files written (a MosquittoFiles, with its config path, is fine)'],
  [/^(message \[3\]|REFUSAL\.create \[2\]|(checkEnvelope|encodeMessage|copyMessage) \[0\.payload\]|parsePayload \[0[\].])/, "a message's payload: its schema decides (valibot objects inside)"],
  [/^(defineMessage \[1|record \[0\.|listOf \[0|defineProtocol \[1\.|sumLayout \[0[\].])/, 'message schemas: fields by the names the caller chooses (sumLayout: the reply type, made by defineMessage)'],
  [/^ClientHost#\w+ \[0[\].]|#requestDone \[0[\].]/, 'a request message, checked as a message (requestDone: only told it is done)'],
  [/^withPrivacy \[0[\].]|^ClientBudget#(concerns|account) \[0[\].]/, 'a request message (the host checks it as a message before its ledger reads it)'],
  [/^composeReleases \[0\.\d+\]$/, 'a release as reported { epsilon, delta, count }, read by its fields'],
  [/#(accept|discard) \[[0-2][\].]|#(configure|aggregate) \[0\]$/, 'a message, a round context, or a value checked by identity (made by the server itself)'],
];

describe('strict options', () => {
  /**
   * Every object literal in a valid call of every public function, class,
   * static and method (the hostile-API recipes: every export has one) gets
   * { bogusOption: 1 }: an options object must refuse it, naming it.
   */
  const probes: Array<{ name: string; args: () => unknown[] | Promise<unknown[]>; call: (self: unknown, a: unknown[]) => unknown; make?: () => unknown }> = [];
  for (const [name, r] of Object.entries(RECIPES)) {
    if (r.args) probes.push({ name, args: r.args, call: (_s, a) => r.call!(...a) });
    for (const [s, st] of Object.entries(r.statics ?? {})) probes.push({ name: `${name}.${s}`, args: st.args, call: (_s, a) => st.call(...a) });
    const make = () => (r.make ? r.make() : r.call!(...r.args!()));
    for (const [m, args] of Object.entries(r.methods ?? {})) {
      probes.push({ name: `${name}#${m}`, make, args: args as () => unknown[], call: (self, a) => (self as Record<string, (...x: unknown[]) => unknown>)[m]!(...a) });
    }
  }

  let scratch: string;
  let cwd: string;
  beforeAll(() => {
    // recipes write files (Fashion-MNIST folders) under the working directory
    cwd = process.cwd();
    scratch = mkdtempSync(join(tmpdir(), 'fedmix-strict-'));
    process.chdir(scratch);
  });
  afterAll(() => {
    process.chdir(cwd);
    rmSync(scratch, { recursive: true, force: true });
  });

  test('every options object of the public API refuses a key it does not know, naming it', async () => {
    const lenient: string[] = [];
    const refusedRecords = new Set<string>();
    const probed: string[] = [];
    for (const p of probes) {
      const outcome = async (path: (string | number)[] | undefined): Promise<string> => {
        const self = p.make ? await p.make() : undefined;
        const made: unknown[] = [self];
        try {
          const args = await (p.args as (s: unknown) => unknown[] | Promise<unknown[]>)(self);
          made.push(args);
          const result = await p.call(self, path ? (withBogus(args, path) as unknown[]) : args);
          made.push(result);
          return 'accepted';
        } catch (e) {
          if (!(e instanceof fedmix.FedmixError)) return `threw ${String(e)}`;
          return /\bbogusOption\b/.test(e.message) ? (e instanceof InvalidParameterError && /unknown option "bogusOption".*Known options: \w+/.test(e.message) ? 'refused' : 'refused as data') : `failed: ${e.message.slice(0, 120)}`;
        } finally {
          for (const x of made) await release(x);
        }
      };
      // the recipe's own call must not be refused for an option (a stale recipe would hide the rest)
      const plain = await outcome(undefined);
      expect(plain, `${p.name} with the recipe's arguments`).not.toMatch(/unknown option/);
      const self = p.make ? await p.make() : undefined;
      const args = await (p.args as (s: unknown) => unknown[] | Promise<unknown[]>)(self);
      await release(self);
      await release(args);
      for (const path of args.flatMap((a, i) => objectPaths(a, [i]))) {
        const where = `${p.name} [${path.join('.')}]`;
        probed.push(where);
        const got = await outcome(path);
        const record = RECORDS.find(([re]) => re.test(where));
        if (record) {
          if (got === 'refused') refusedRecords.add(record[1]);
          continue;
        }
        if (got !== 'refused' && got !== 'refused as data') lenient.push(`${where}: ${got}`);
      }
    }
    expect(probed.length).toBeGreaterThan(150);
    expect(lenient, 'options objects that took { bogusOption: 1 } without naming it').toEqual([]);
    // a record pattern that no longer matches anything lenient is stale (the call became strict, or the recipe changed)
    const used = new Set(RECORDS.filter(([re]) => probed.some((w) => re.test(w))).map(([, why]) => why));
    expect(RECORDS.map(([, why]) => why).filter((why) => !used.has(why)), 'record patterns that match no probed object').toEqual([]);
  }, 120_000);

  test('a near miss is named: { nComponent: 3 }', () => {
    expect(() => new GaussianMixture({ nComponent: 3 } as never)).toThrow(/unknown option "nComponent"; did you mean "nComponents"\?/);
  });

  test('a key set to undefined is no option at all', () => {
    expect(() => new GaussianMixture({ nComponents: 2, bogusOption: undefined } as never)).not.toThrow();
  });
});

describe('a model used after dispose()', () => {
  const X = blobs(80, 2, 2, 5);
  const y = Int32Array.from({ length: 80 }, (_, i) => i % 2);
  const models: Array<[string, () => { fit(): unknown; use(): unknown; dispose(): void }]> = [
    ['GaussianMixture', () => { const m = new GaussianMixture({ nComponents: 2, seed: 1 }); return { fit: () => m.fit(X), use: () => m.predict(X), dispose: () => m.dispose() }; }],
    ['OneClassSVM', () => { const m = new OneClassSVM(); return { fit: () => m.fit(X), use: () => m.decisionFunction(X), dispose: () => m.dispose() }; }],
    ['LocalDetector', () => { const m = new LocalDetector({ kind: 'gmm' }); return { fit: () => m.fit(X), use: () => m.scoreSamples(X), dispose: () => m.dispose() }; }],
    ['Autoencoder', () => { const m = new Autoencoder({ hiddenLayers: [1], epochs: 1, seed: 1 }); return { fit: () => m.fit(X), use: () => m.encode(X), dispose: () => m.dispose() }; }],
    ['MLPClassifier', () => { const m = new MLPClassifier({ hiddenLayerSizes: [3], maxIter: 1, randomState: 1 }); return { fit: () => m.fit(X, y), use: () => m.predict(X), dispose: () => m.dispose() }; }],
  ];
  test.each(models)('%s says disposed, not "not fitted yet", and fits again', (name, make) => {
    const m = make();
    expect(() => m.use()).toThrow(/not fitted yet/);
    try {
      m.use();
    } catch (e) {
      expect(e).not.toBeInstanceOf(DisposedError);
    }
    m.fit();
    m.use();
    m.dispose();
    let thrown: unknown;
    try {
      m.use();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DisposedError);
    expect(thrown).toBeInstanceOf(NotFittedError); // code that caught NotFittedError still does
    expect((thrown as Error).message).toMatch(new RegExp(`this ${name} was disposed`));
    expect((thrown as Error).name).toBe('DisposedError');
    m.fit();
    expect(() => m.use()).not.toThrow();
    m.dispose();
  });
});

describe('CSV numbers', () => {
  test.each(['Infinity', '-Infinity', '1e999', '-1e999', '0x10', '0b1', '0o7', 'NaN', '1_000', '1,5'])('%s is refused, naming row and column', (cell) => {
    const table = parseCsv(`a;b\n1;2\n3;${cell}\n`, { delimiter: ';' });
    expect(() => csvToMatrix(table)).toThrow(InvalidDataError);
    expect(() => csvToMatrix(table)).toThrow(/column "b", data row 2/);
  });

  test('decimal forms CSV writers print are read', () => {
    const table = parseCsv('a\n1\n-2.5\n+3\n.5\n5.\n1e3\n-1.5E-2\n 7 \n');
    expect(Array.from(csvToMatrix(table).X.data)).toEqual([1, -2.5, 3, 0.5, 5, 1000, -0.015, 7]);
  });

  test('a blank cell is still a missing number', () => {
    expect(() => csvToMatrix(parseCsv('a\n1\n\n'))).not.toThrow(/unknown/);
    const t = parseCsv('a,b\n1,\n');
    expect(() => csvToMatrix(t)).toThrow(/column "b", data row 1/);
  });
});

test('the package ships the license its package.json names', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { license: string };
  const license = readFileSync(new URL('../LICENSE', import.meta.url), 'utf8');
  expect(pkg.license).toBe('MIT');
  expect(license.split('\n')[0]).toBe('MIT License');
  expect(license).toMatch(/Copyright \(c\) \d{4} /);
});
