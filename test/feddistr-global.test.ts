/**
 * FedDistr's global model and experiment (issue 14, items 4-6): the
 * generative classifier against a hand-checked case and against
 * scikit-learn's GaussianNB and QDA posteriors and scipy's mixture posterior
 * (test/fixtures/feddistr_bayes.json, scripts/gen-feddistr-fixtures.py); rows
 * drawn from base distributions and an MLP trained on them; the experiment's
 * curves, bytes and rounds to match; the datasets with task classes made of
 * subclasses. Small configurations only.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  BaseDistributionClassifier,
  fedDistr,
  init,
  InvalidDataError,
  InvalidParameterError,
  Matrix,
  MLPClassifier,
  PCA,
  sampleBaseDistributions,
  type LabelledGaussian,
} from '../ts/index.js';
import {
  fashionMnistSubclasses,
  groupSubclasses,
  LETTER_TASK_GROUPS,
  parseTaskGroups,
  roundsToReach,
  runFedDistrExperiment,
  subclassDataFromCsv,
} from '../ts/experiments/index.js';
import { loadFashionMnist } from '../ts/node.js';
import { blobs, fixture, maxAbsoluteError } from './helpers.js';

beforeAll(async () => {
  await init();
});

const letterCsv = () => readFileSync(fileURLToPath(new URL('../../shared/datasets/letter.csv', import.meta.url)), 'utf8');

interface BayesCase {
  covariance: 'full' | 'diagonal';
  bases: LabelledGaussian[];
  test: number[][];
  proba: number[][];
}

describe('the generative classifier (Bayes over class-conditional Gaussian mixtures)', () => {
  test('a hand-checked case: two classes in one dimension, one of them a mixture', () => {
    // class 0: N(0, 1) of 30 rows; class 1: N(2, 4) of 10 rows and N(-3, 0.25) of 20 rows
    const model = new BaseDistributionClassifier([
      { label: 0, count: 30, mean: [0], covariance: [1] },
      { label: 1, count: 10, mean: [2], covariance: [4] },
      { label: 1, count: 20, mean: [-3], covariance: [0.25] },
    ]);
    expect(model.classes).toEqual([0, 1]);
    expect(Array.from(model.priors)).toEqual([0.5, 0.5]);
    const N = (z: number, m: number, v: number) => Math.exp(-((z - m) ** 2) / (2 * v)) / Math.sqrt(2 * Math.PI * v);
    const zs = [-4, -2, -1, 0, 1, 2.5, 6];
    const P = model.predictProba(zs.map((z) => [z]));
    zs.forEach((z, i) => {
      const a = (30 / 60) * N(z, 0, 1);
      const b = (10 / 60) * N(z, 2, 4) + (20 / 60) * N(z, -3, 0.25);
      expect(P.get(i, 0)).toBeCloseTo(a / (a + b), 12);
      expect(P.get(i, 1)).toBeCloseTo(b / (a + b), 12);
    });
    // z = 0: class 0 (its density 0.399 x 1/2 against 0.06 x 1/6); z = -3: the narrow base of class 1
    expect(model.predict([[0], [-3], [6]])).toEqual([0, 1, 1]);
    expect(model.score([[0], [-3], [6]], [0, 1, 0])).toBeCloseTo(2 / 3, 14);
  });

  test.each(['gaussianNB', 'qda', 'mixture'])('%s: the posterior equals the reference (scikit-learn, scipy)', (name) => {
    const c = fixture<Record<string, BayesCase>>('feddistr_bayes.json')[name]!;
    const model = new BaseDistributionClassifier(c.bases, { covariance: c.covariance });
    const P = model.predictProba(c.test);
    const got = c.test.flatMap((_, i) => model.classes.map((_, k) => P.get(i, k)));
    expect(maxAbsoluteError(got, c.proba.flat())).toBeLessThan(1e-10);
    // the covariance form read from the lengths gives the same
    expect(maxAbsoluteError(new BaseDistributionClassifier(c.bases).predictProba(c.test).data, P.data)).toBe(0);
  });

  test('with an encoder it classifies the rows as the clients held them (a PCA here)', () => {
    const X = blobs(300, 6, 3, 5);
    const y = Array.from({ length: 300 }, (_, i) => i % 3);
    const pca = new PCA({ nComponents: 2 }).fit(X);
    const clients = [0, 1, 2].map((c) => {
      const idx = Array.from({ length: 100 }, (_, i) => 3 * i + c).filter((i) => i % 2 === 0 || c === 0);
      return { X: X.selectRows(idx), labels: idx.map((i) => y[i]!) };
    });
    const r = fedDistr(clients, { encoder: pca, kMax: 1 });
    const encoded = new BaseDistributionClassifier(r.bases, { encoder: pca });
    const latent = new BaseDistributionClassifier(r.bases);
    expect(encoded.dimension).toBe(2);
    expect(maxAbsoluteError(encoded.predictProba(X).data, latent.predictProba(pca.transform(X)).data)).toBeLessThan(1e-12);
    expect(encoded.score(X, y)).toBeGreaterThan(0.95);
    // rows of the wrong width, or not finite: typed errors
    expect(() => encoded.predict(X.selectColumns([0, 1, 2]))).toThrow(InvalidDataError);
    const bad = X.selectRows([0, 1]);
    bad.data[0] = NaN;
    expect(() => encoded.predict(bad)).toThrow(InvalidDataError);
  });

  test('bad bases are typed errors', () => {
    const ok = { label: 0, count: 5, mean: [0, 0], covariance: [1, 0, 0, 1] };
    expect(() => new BaseDistributionClassifier([])).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([ok, { ...ok, covariance: [1, 2, 2, 1] }])).toThrow(/positive definite/);
    expect(() => new BaseDistributionClassifier([ok, { ...ok, covariance: [1, 0.5, 0, 1] }])).toThrow(/symmetric/);
    expect(() => new BaseDistributionClassifier([ok, { ...ok, mean: [0, 0, 0] }])).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([ok, { ...ok, mean: [NaN, 0] }])).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([ok, { ...ok, count: 0 }])).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([ok, { ...ok, label: 0.5 }])).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([ok], { covariance: 'diagonal' })).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([{ ...ok, covariance: [1, -1] }], { covariance: 'diagonal' })).toThrow(/> 0/);
    expect(() => new BaseDistributionClassifier([ok], { encoder: 'nonsense' as never })).toThrow(InvalidParameterError);
    expect(() => new BaseDistributionClassifier([ok]).predict([[1, 2, 3]])).toThrow(InvalidDataError);
  });
});

describe('synthetic rows from the consolidated set, and an MLP trained on them', () => {
  const bases: LabelledGaussian[] = [
    { label: 4, count: 30, mean: [1, -2], covariance: [2, 0.8, 0.8, 1] },
    { label: 9, count: 10, mean: [-3, 0], covariance: [0.5, -0.2, -0.2, 0.3] },
    { label: 4, count: 20, mean: [5, 5], covariance: [1, 0, 0, 1] },
  ];

  test('rows per base in proportion to its count, with its mean and covariance; the same seed the same rows', () => {
    const s = sampleBaseDistributions(bases, { n: 60_001, seed: 3 });
    // 60,001 x (1/2, 1/6, 1/3) = 30000.5, 10000.17, 20000.33: the one row left goes to the largest remainder
    expect(s.counts).toEqual([30001, 10000, 20000]);
    expect(s.counts.reduce((a, b) => a + b, 0)).toBe(60_001);
    expect(s.X.nRows).toBe(60_001);
    let at = 0;
    s.counts.forEach((m, k) => {
      const b = bases[k]!;
      const idx = Array.from({ length: m }, (_, i) => at + i);
      at += m;
      expect(idx.every((i) => s.labels[i] === b.label)).toBe(true);
      const part = s.X.selectRows(idx);
      const mean = [0, 1].map((j) => part.column(j).reduce((a, v) => a + v, 0) / m);
      const cov = [0, 1].flatMap((a) => [0, 1].map((c) => part.column(a).reduce((t, v, i) => t + (v - mean[a]!) * (part.column(c)[i]! - mean[c]!), 0) / m));
      // a mean's standard error is sqrt(v / m) <= 0.015 here; a covariance's about 2 sqrt(2 / m) x v
      expect(maxAbsoluteError(mean, Array.from(b.mean))).toBeLessThan(0.06);
      expect(maxAbsoluteError(cov, Array.from(b.covariance))).toBeLessThan(0.1);
    });
    const again = sampleBaseDistributions(bases, { n: 60_001, seed: 3 });
    expect(again.X.data).toEqual(s.X.data);
    expect(sampleBaseDistributions(bases, { n: 100, seed: 4 }).X.data).not.toEqual(sampleBaseDistributions(bases, { n: 100, seed: 3 }).X.data);
    // a diagonal covariance: the variances per coordinate
    const d = sampleBaseDistributions([{ label: 0, count: 1, mean: [0, 10], covariance: [4, 0.25] }], { n: 20_000, seed: 1 });
    const sd = [0, 1].map((j) => {
      const c = d.X.column(j);
      const m = c.reduce((a, v) => a + v, 0) / c.length;
      return Math.sqrt(c.reduce((a, v) => a + (v - m) ** 2, 0) / c.length);
    });
    expect(sd[0]).toBeCloseTo(2, 1);
    expect(sd[1]).toBeCloseTo(0.5, 1);
    expect(() => sampleBaseDistributions(bases, { n: 0 })).toThrow(InvalidParameterError);
    expect(() => sampleBaseDistributions(bases, null as never)).toThrow(InvalidParameterError);
  });

  test('an MLP trained on rows drawn from a consolidation classifies the real rows about as the generative classifier does', () => {
    const X = blobs(600, 3, 6, 2, 3);
    // six blobs, two task classes of three each
    const sub = Array.from({ length: 600 }, (_, i) => i % 6);
    const task = sub.map((s) => s % 2);
    const clients = [0, 1, 2].map((c) => {
      const idx = Array.from({ length: 600 }, (_, i) => i).filter((i) => sub[i]! % 3 === c);
      return { X: X.selectRows(idx), labels: idx.map((i) => task[i]!), subclasses: idx.map((i) => sub[i]!) };
    });
    const r = fedDistr(clients, { kMax: 1, covariance: 'full' });
    const generative = new BaseDistributionClassifier(r.bases).score(X, task);
    const { X: Z, labels } = sampleBaseDistributions(r.bases, { n: 3000, seed: 1 });
    const mlp = new MLPClassifier({ hiddenLayerSizes: [32], maxIter: 60, randomState: 1 }).fit(Z, labels);
    const trained = mlp.score(X, task);
    mlp.dispose();
    console.log(`blobs: generative ${generative.toFixed(3)}, MLP on 3000 synthetic rows ${trained.toFixed(3)}`);
    expect(generative).toBeGreaterThan(0.97);
    expect(trained).toBeGreaterThan(generative - 0.05);
  });
});

describe('data whose task classes are made of subclasses', () => {
  test('a grouping, a superclass column, and their mistakes', () => {
    expect(parseTaskGroups('A+B, C+D+E')).toEqual([['A', 'B'], ['C', 'D', 'E']]);
    expect(() => parseTaskGroups('A+,B')).toThrow(InvalidParameterError);
    const X = Matrix.fromRows([[0], [1], [2], [3], [4]]);
    const g = groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { groups: [['a', 'c'], ['b', 'd']] });
    expect(g.subclassNames).toEqual(['a', 'b', 'c', 'd']);
    expect(Array.from(g.subclasses)).toEqual([1, 0, 2, 0, 3]);
    expect(g.taskNames).toEqual(['a+c', 'b+d']);
    expect(Array.from(g.tasks)).toEqual([1, 0, 0, 0, 1]);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { groups: [['a', 'c'], ['b']] })).toThrow(/in no group/);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { groups: [['a', 'c'], ['b', 'd', 'a']] })).toThrow(/two groups/);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { groups: [['a', 'c'], ['b', 'd', 'z']] })).toThrow(/no row has/);
    // neither groups nor superclasses (an array, say), a member that is no name, a huge sparse group: typed errors, read no further
    const sparse: unknown[] = [];
    sparse.length = 1e8;
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], sparse as never)).toThrow(InvalidParameterError);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { groups: [['a', 'c'], ['b', {} as never]] })).toThrow(/groups\[1\]\[1\] must be a name/);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { groups: [sparse as never, ['b', 'd']] })).toThrow(InvalidParameterError);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { superclasses: ['x', 'y', 'x', 'x', null as never] })).toThrow(InvalidDataError);
    const s = groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { superclasses: ['y', 'x', 'x', 'x', 'y'] });
    expect(Array.from(s.tasks)).toEqual([1, 0, 0, 0, 1]);
    expect(() => groupSubclasses(X, ['b', 'a', 'c', 'a', 'd'], { superclasses: ['y', 'x', 'x', 'y', 'y'] })).toThrow(/one task class/);
    const csv = 'f1,f2,sub,sup\n1,2,a,x\n3,4,b,y\n5,6,a,x\n7,8,c,y\n';
    const fromColumn = subclassDataFromCsv(csv, { subclass: 'sub', superclass: 'sup' });
    expect(fromColumn.X.nCols).toBe(2);
    expect(Array.from(fromColumn.tasks)).toEqual([0, 1, 0, 1]);
    const fromGroups = subclassDataFromCsv(csv, { subclass: 'sub', groups: 'a+c,b', drop: ['sup'] });
    expect(Array.from(fromGroups.tasks)).toEqual([0, 1, 0, 0]);
    expect(() => subclassDataFromCsv(csv, { subclass: 'sub' })).toThrow(InvalidParameterError);
  });

  test('letter.csv: 26 letters in 13 task classes of alphabetical neighbours', () => {
    const d = subclassDataFromCsv(letterCsv(), { subclass: 'label', groups: LETTER_TASK_GROUPS });
    expect(d.X.nCols).toBe(16);
    expect(d.subclassNames).toHaveLength(26);
    expect(d.taskNames[0]).toBe('A+B');
    expect(d.taskNames).toHaveLength(13);
    for (let i = 0; i < 50; i++) expect(d.tasks[i]).toBe(d.subclasses[i]! >> 1);
  });
});

describe('the experiment: FedDistr one round against the FedAvg family', () => {
  test('letter.csv, a quick run: curves with growing bytes, rounds to match read off them, plain JSON', () => {
    const all = subclassDataFromCsv(letterCsv(), { subclass: 'label', groups: LETTER_TASK_GROUPS });
    const keep = Array.from({ length: 4000 }, (_, i) => i);
    const train = { ...all, X: all.X.selectRows(keep), subclasses: all.subclasses.slice(0, 4000), tasks: all.tasks.slice(0, 4000) };
    const seen: string[] = [];
    const report = runFedDistrExperiment({ train }, { clients: 5, entanglement: 0.003, rounds: 6, kMax: 2, seed: 2, mlpEpochs: 30, onProgress: (_d, _t, what) => seen.push(what) });
    expect(seen).toEqual(['repeat 1/1, feddistr', 'repeat 1/1, fedavg', 'repeat 1/1, fedprox', 'repeat 1/1, scaffold', 'repeat 1/1, central']);
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    expect(report.dataset).toMatchObject({ clientRows: 2800, testRows: 800, publicRows: 400, features: 16, latent: 16, subclasses: 26, tasks: 13 });
    const run = report.runs[0]!;
    expect(Math.abs(run.coefficient - 0.003)).toBeLessThan(0.003);
    expect(run.clientRows.reduce((a, b) => a + b, 0)).toBe(2800);
    const fd = run.feddistr;
    expect(fd.rounds).toBe(1);
    expect(fd.bytes).toBe(fd.bytesUp + fd.bytesDown);
    expect(fd.accuracy.generative).toBeGreaterThan(0.5);
    expect(fd.accuracy.mlp).toBeGreaterThan(0.4);
    for (const b of run.baselines) {
      if (b.method === 'central') {
        expect(b.curve).toEqual([{ round: 0, accuracy: b.finalAccuracy, bytes: 0 }]);
        continue;
      }
      expect(b.curve.map((p) => p.round)).toEqual([1, 2, 3, 4, 5, 6]);
      for (let i = 1; i < b.curve.length; i++) expect(b.curve[i]!.bytes).toBeGreaterThan(b.curve[i - 1]!.bytes);
      // every round sends each client the parameters and gets them back: about the same bytes each round (the envelopes' numbers vary by a few);
      // SCAFFOLD's first control variates are zero, sent sparse, so its first round is cheaper
      if (b.method !== 'scaffold') expect(Math.abs(b.curve[5]!.bytes / (6 * b.curve[0]!.bytes) - 1)).toBeLessThan(0.01);
      expect(b.finalAccuracy).toBe(b.curve[5]!.accuracy);
      for (const m of ['generative', 'mlp'] as const) {
        const hit = b.curve.find((p) => p.accuracy >= fd.accuracy[m]!);
        expect(b.roundsToMatch[m]).toBe(hit ? hit.round : null);
        expect(b.bytesToMatch[m]).toBe(hit ? hit.bytes : null);
      }
    }
    const sum = report.summary.baselines.find((b) => b.method === 'fedavg')!;
    expect(sum.curve).toEqual(run.baselines[0]!.curve);
    console.log(
      `letter 4000 rows, 5 clients, coefficient ${run.coefficient.toFixed(4)}: FedDistr generative ${fd.accuracy.generative!.toFixed(3)}, MLP ${fd.accuracy.mlp!.toFixed(3)}, ${fd.bytes} bytes; ` +
        run.baselines.map((b) => `${b.method} ${b.finalAccuracy.toFixed(3)} after ${b.curve.length} rounds (${b.curve[b.curve.length - 1]!.bytes} bytes)`).join('; '),
    );
  }, 120_000);

  test('with privacy noise on the uploads, no baselines: FedDistr alone', () => {
    const all = subclassDataFromCsv(letterCsv(), { subclass: 'label', groups: LETTER_TASK_GROUPS });
    const keep = Array.from({ length: 3000 }, (_, i) => i);
    const train = { ...all, X: all.X.selectRows(keep), subclasses: all.subclasses.slice(0, 3000), tasks: all.tasks.slice(0, 3000) };
    const config = { clients: 4, entanglement: 0, kMax: 1, baselines: [], models: ['generative' as const], covariance: 'diagonal' as const, seed: 5 };
    const plain = runFedDistrExperiment({ train }, config);
    const noisy = runFedDistrExperiment({ train }, { ...config, privacy: { clip: 40, epsilon: 0.5, delta: 1e-5 } });
    expect(noisy.runs[0]!.baselines).toEqual([]);
    expect(noisy.summary.baselines).toEqual([]);
    const a = plain.runs[0]!.feddistr.accuracy.generative!;
    const b = noisy.runs[0]!.feddistr.accuracy.generative!;
    console.log(`letter 3000 rows, diagonal, k = 1: generative ${a.toFixed(3)} without noise, ${b.toFixed(3)} with clip 40, epsilon 0.5`);
    // the second moment's noise scales with clip^2 / rows: at these sizes it drowns the covariances (measured: 0.617 without, 0.07 and 0.11 in two runs: the noise is fresh every run)
    expect(b).not.toBe(a);
    expect(b).toBeGreaterThanOrEqual(0);
    expect(b).toBeLessThan(a);
  }, 60_000);

  test('roundsToReach: the first round at or above the target, or null', () => {
    const curve = [
      { round: 1, accuracy: 0.1, bytes: 10 },
      { round: 2, accuracy: 0.5, bytes: 20 },
      { round: 3, accuracy: 0.4, bytes: 30 },
      { round: 4, accuracy: 0.7, bytes: 40 },
    ];
    expect(roundsToReach(curve, 0.5)).toEqual({ round: 2, bytes: 20 });
    expect(roundsToReach(curve, 0.6)).toEqual({ round: 4, bytes: 40 });
    expect(roundsToReach(curve, 0.8)).toEqual({ round: null, bytes: null });
    expect(roundsToReach([], 0)).toEqual({ round: null, bytes: null });
  });

  test('Fashion-MNIST, five task classes of two articles, an Autoencoder fitted on a public split', async () => {
    const [trainFm, testFm] = await Promise.all([loadFashionMnist({ n: 1600, sample: 'stratified', seed: 1 }), loadFashionMnist({ split: 'test', n: 400, sample: 'stratified', seed: 1 })]);
    const all = fashionMnistSubclasses(trainFm);
    expect(all.taskNames).toEqual(['T-shirt/top+Shirt', 'Trouser+Dress', 'Pullover+Coat', 'Sandal+Sneaker', 'Bag+Ankle boot']);
    // the public split: the first 400 of the training rows, never dealt nor evaluated on
    const pub = Array.from({ length: 400 }, (_, i) => i);
    const rest = Array.from({ length: 1200 }, (_, i) => 400 + i);
    const train = { ...all, X: all.X.selectRows(rest), subclasses: Int32Array.from(rest, (i) => all.subclasses[i]!), tasks: Int32Array.from(rest, (i) => all.tasks[i]!) };
    const test = fashionMnistSubclasses(testFm);
    const report = runFedDistrExperiment(
      { train, test: { X: test.X, tasks: test.tasks }, public: all.X.selectRows(pub) },
      { clients: 5, entanglement: 0, encoder: 'autoencoder', latent: 8, autoencoderLayers: [32, 8, 32], autoencoderEpochs: 5, kMax: 2, covariance: 'diagonal', rounds: 3, baselines: ['fedavg'], mlpEpochs: 20, seed: 1 },
    );
    const run = report.runs[0]!;
    expect(report.dataset).toMatchObject({ clientRows: 1200, testRows: 400, publicRows: 400, features: 784, latent: 8, subclasses: 10, tasks: 5 });
    expect(run.coefficient).toBe(0);
    // the encoder's network travels in the request: the most of FedDistr's bytes down
    expect(run.feddistr.describeBytes).toBeGreaterThan(5 * 4 * (784 * 32 + 32 * 8));
    expect(run.feddistr.accuracy.generative).toBeGreaterThan(0.4);
    console.log(`Fashion-MNIST 1200 rows, AE code 8: FedDistr generative ${run.feddistr.accuracy.generative!.toFixed(3)}, MLP ${run.feddistr.accuracy.mlp?.toFixed(3)}, ARI ${run.feddistr.adjustedRandIndex?.toFixed(3)}; FedAvg after 3 rounds ${run.baselines[0]!.finalAccuracy.toFixed(3)}`);
  }, 120_000);

  test('data.train is read once, as a record: a throwing getter on a key it does not use is never run', () => {
    // found by test/hostile-api.test.ts, seed 5 at 6000 runs: the train split was copied with a spread, which ran every getter
    const X = blobs(40, 2, 2, 1);
    const train = groupSubclasses(X, Array.from({ length: 40 }, (_, i) => `s${i % 4}`), { groups: [['s0', 's1'], ['s2', 's3']] });
    const hostile = Object.defineProperty({ ...train }, 'extra', {
      enumerable: true,
      get() {
        throw new Error('getter of extra throws');
      },
    });
    const config = { clients: 2, entanglement: 0, kMax: 1, rounds: 1, hiddenLayers: [2], mlpEpochs: 1, syntheticRows: 20, baselines: ['central' as const], seed: 1 };
    const strip = (r: ReturnType<typeof runFedDistrExperiment>) => r.runs.map((run) => ({ ...run, feddistr: { ...run.feddistr, seconds: 0 }, baselines: run.baselines.map((b) => ({ ...b, seconds: 0 })) }));
    expect(strip(runFedDistrExperiment({ train: hostile }, config))).toEqual(strip(runFedDistrExperiment({ train }, config)));
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(() => runFedDistrExperiment({ train: revoked.proxy as never }, config)).toThrow(InvalidParameterError);
  });

  test('bad configurations are typed errors', () => {
    const X = blobs(40, 2, 2, 1);
    const train = groupSubclasses(X, Array.from({ length: 40 }, (_, i) => `s${i % 4}`), { groups: [['s0', 's1'], ['s2', 's3']] });
    expect(() => runFedDistrExperiment({ train }, { clients: 2, entanglement: 2 })).toThrow(InvalidParameterError);
    expect(() => runFedDistrExperiment({ train }, { clients: 2, entanglement: 0, baselines: ['moon' as never] })).toThrow(InvalidParameterError);
    expect(() => runFedDistrExperiment({ train }, { clients: 2, entanglement: 0, testFraction: 1 })).toThrow(InvalidParameterError);
    expect(() => runFedDistrExperiment({} as never, { clients: 2, entanglement: 0 })).toThrow(InvalidParameterError);
    expect(() => runFedDistrExperiment({ train }, null as never)).toThrow(InvalidParameterError);
    // found by test/hostile-api.test.ts, seeds 18 and 20 at 6000 runs: a list option that was not an array met .map unchecked
    for (const key of ['baselines', 'models', 'hiddenLayers']) expect(() => runFedDistrExperiment({ train }, { clients: 2, entanglement: 0, [key]: 1e300 })).toThrow(new RegExp(`${key} must be an array`));
    expect(() => runFedDistrExperiment({ train: { ...train, tasks: train.tasks.slice(1) } }, { clients: 2, entanglement: 0 })).toThrow(InvalidDataError);
    expect(() => runFedDistrExperiment({ train: { ...train, subclasses: train.subclasses.map(() => 7) } }, { clients: 2, entanglement: 0 })).toThrow(/codes run from 0 to 3/);
    expect(() => runFedDistrExperiment({ train, test: { X: blobs(5, 3, 1, 1), tasks: new Int32Array(5) } }, { clients: 2, entanglement: 0 })).toThrow(/2 features/);
  });
});
