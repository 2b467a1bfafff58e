/**
 * The traps a new user fell into (issue 15, item 6): blobs whose first two
 * clusters coincide, misspelt options silently ignored, "not fitted" after
 * dispose(), and CSV cells that Number() takes but no numeric column means.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import {
  Autoencoder,
  csvToMatrix,
  DisposedError,
  DemClient,
  DemServer,
  distributedEM,
  fedGEM,
  fedGenGMM,
  fitMdm,
  InProcessTransport,
  runFederationSync,
  GaussianMixture,
  gaussianNoiseOod,
  init,
  InvalidDataError,
  InvalidParameterError,
  KMeans,
  linearSumAssignment,
  LocalDetector,
  makeBlobs,
  Matrix,
  MLPClassifier,
  NotFittedError,
  OneClassSVM,
  parseCsv,
  partition,
  PCA,
  selectGaussianMixture,
  type FedmixError,
} from '../ts/index.js';
import { blobs } from './helpers.js';

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

describe('strict options', () => {
  const X = blobs(60, 2, 2, 3);
  const labels = Int32Array.from({ length: 60 }, (_, i) => i % 3);
  const csv = parseCsv('a,b\n1,2\n3,4\n');
  // every main public class and function that takes an options object, called with one unknown key
  const calls: Array<[string, (bogus: Record<string, unknown>) => unknown]> = [
    ['GaussianMixture', (o) => new GaussianMixture(o)],
    ['KMeans', (o) => new KMeans(o)],
    ['PCA', (o) => new PCA({ nComponents: 1, ...o })],
    ['OneClassSVM', (o) => new OneClassSVM(o)],
    ['Autoencoder', (o) => new Autoencoder(o)],
    ['MLPClassifier', (o) => new MLPClassifier(o)],
    ['LocalDetector', (o) => new LocalDetector(o)],
    ['selectGaussianMixture', (o) => selectGaussianMixture(X, { kMin: 1, kMax: 2, ...o })],
    ['makeBlobs', (o) => makeBlobs({ nClusters: 2, nFeatures: 2, samplesPerCluster: 5, ...o })],
    ['partition.iid', (o) => partition.iid(labels, { clients: 2, ...o })],
    ['partition.dirichlet', (o) => partition.dirichlet(labels, { clients: 2, alpha: 1, ...o })],
    ['partition.quantity', (o) => partition.quantity(labels, { clients: 2, alpha: 1, ...o })],
    ['distributedEM', (o) => distributedEM([X, X], { nComponents: 2, ...o })],
    ['fedGEM', (o) => fedGEM([X, X], { client: { nComponents: 2 }, ...o })],
    ['fedGenGMM', (o) => fedGenGMM([X, X], { client: { kMin: 1, kMax: 2 }, server: { nComponents: 2 }, ...o })],
    ['fitMdm', (o) => fitMdm(new Matrix(new Float64Array([1, 2, 3, 4]), 2, 2), { nComponents: 1, ...o })],
    ['runFederationSync', (o) => runFederationSync(new DemServer({ nComponents: 2, nFeatures: 2 }), new InProcessTransport([new DemClient('a', X)]), { onRound: () => {}, ...o })],
    ['parseCsv', (o) => parseCsv('a\n1\n', o)],
    ['csvToMatrix', (o) => csvToMatrix(csv, o)],
    ['gaussianNoiseOod', (o) => gaussianNoiseOod(X, o)],
    ['linearSumAssignment', (o) => linearSumAssignment([[1, 2], [3, 4]], o)],
  ];
  test.each(calls)('%s refuses { bogusOption: 1 }, naming the key and the known ones', (_name, call) => {
    let thrown: unknown;
    try {
      call({ bogusOption: 1 });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidParameterError);
    expect((thrown as FedmixError).message).toMatch(/unknown option "bogusOption".*Known options: \w+/);
    // and the same call without it is fine (or fails for another reason than the option)
    try {
      call({});
    } catch (e) {
      expect((e as Error).message).not.toMatch(/unknown option/);
    }
  });

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

describe('README examples', () => {
  // every fedmix export an example calls (`Name.x`, `Name(`, `new Name`) is in its import lines
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const blocks = [...readme.matchAll(/```(?:ts|js|typescript|javascript|mjs)\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => /from 'fedmix(\/node)?'/.test(b));
  test('there are examples to check', () => {
    expect(blocks.length).toBeGreaterThan(3);
  });
  test.each(blocks.map((b, i) => [i, b] as const))('example %i imports what it uses', async (_i, block) => {
    const exported = new Set([...Object.keys(fedmix), ...Object.keys(await import('../ts/node.js'))]);
    const imported = new Set<string>();
    for (const m of block.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'fedmix(?:\/node)?'/g)) {
      for (const part of m[1]!.split(',')) {
        const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!.trim();
        if (name) imported.add(name);
      }
    }
    const code = block.split('\n').filter((l) => !l.trim().startsWith('//') && !l.trim().startsWith('import')).join('\n').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').replace(/'[^'\n]*'|"[^"\n]*"|`[^`]*`/g, "''");
    const declared = new Set([...code.matchAll(/\b(?:const|let|var|function|class)\s+\{?\s*([A-Za-z_$][\w$]*)/g)].map((m) => m[1]!));
    const used = [...code.matchAll(/(?<![.\w$])([A-Za-z_$][\w$]*)\s*(?=[.(])|\bnew\s+([A-Za-z_$][\w$]*)/g)].map((m) => m[1] ?? m[2]!);
    const missing = [...new Set(used.filter((n) => exported.has(n) && !imported.has(n) && !declared.has(n)))];
    expect(missing).toEqual([]);
  });
});

test('the package ships the license its package.json names', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { license: string };
  const license = readFileSync(new URL('../LICENSE', import.meta.url), 'utf8');
  expect(pkg.license).toBe('MIT');
  expect(license.split('\n')[0]).toBe('MIT License');
  expect(license).toMatch(/Copyright \(c\) \d{4} /);
});
