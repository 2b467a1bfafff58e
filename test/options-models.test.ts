/**
 * The models' options, declared once (defineOptions + atoms) and checked once,
 * at the public edge (issue 24, item 3), both sides:
 *  - every declared option of Autoencoder, MLPClassifier, the network spec and
 *    optimizer, early stopping, OneClassSVM, LocalDetector and
 *    DirichletMultinomialMixture.fit is refused at a bad value with its typed
 *    message, leaving WASM memory as it was (the table must name every option
 *    a declaration has: a new option without a case fails here);
 *  - every model at its defaults is accepted and learns on real data:
 *    Fashion-MNIST (a stratified sample, 4 x 4 pooled to 7 x 7 pixels) for the
 *    networks, the thyroid anomaly set for the SVM and the detectors, a
 *    Dirichlet partition of satellite's labels for the mixture of histograms;
 *  - resolved options are not checked again: a model's network and
 *    optimizer, a detector's models, a saved model after its schema check,
 *    GaussianMixture.fromHandle, a federated client given checked detector
 *    options (the declaration's schema never runs);
 *  - a seed of 2^40 is accepted by every model that takes one, and gives the
 *    same model twice.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import {
  Autoencoder,
  DirichletMultinomialMixture,
  FedmixError,
  GaussianMixture,
  init,
  InvalidDataError,
  InvalidParameterError,
  KMeans,
  LocalDetector,
  Matrix,
  MLPClassifier,
  Network,
  OneClassSVM,
  type LocalDetectorOptions,
} from '../ts/index.js';
import { loadFashionMnist } from '../ts/node.js';
import { labelledFromCsv } from '../ts/experiments/index.js';
import { CommunitiesClient } from '../ts/federated/communities/client.js';
import { autoencoderOptions } from '../ts/models/autoencoder.js';
import { checkDetectorOptions, localDetectorOptions } from '../ts/models/detectors.js';
import { mdmCentralFitOptions } from '../ts/models/dirichlet-multinomial-mixture.js';
import { resolveEarlyStopping, type EarlyStoppingOptions } from '../ts/models/early-stopping.js';
import { COV_CODE, gaussianMixtureOptions } from '../ts/models/gaussian-mixture.js';
import { mlpClassifierOptions } from '../ts/models/mlp-classifier.js';
import { networkSpecOptions, optimizerOptions, type NetworkSpec, type OptimizerSpec } from '../ts/models/network.js';
import { oneClassSVMOptions } from '../ts/models/one-class-svm.js';
import type { OptionsDeclaration } from '../ts/options/check.js';
import { dirichlet } from '../ts/partition/dirichlet.js';
import { GMM_FROM_COVARIANCES_OPTIONS } from '../ts/wasm/abi.generated.js';
import { wasm } from '../ts/wasm/loader.js';
import { withScope } from '../ts/wasm/memory.js';

const SEED = 2 ** 40;

/** Fashion-MNIST's rows 4 x 4 average-pooled: 7 x 7 pixels in [0, 1]. */
function pooled(X: Matrix): Matrix {
  const n = X.nRows;
  const out = Matrix.zeros(n, 49);
  for (let r = 0; r < 7; r++) {
    for (let c = 0; c < 7; c++) {
      for (let dr = 0; dr < 4; dr++) {
        for (let dc = 0; dc < 4; dc++) {
          const col = (4 * r + dr) * 28 + 4 * c + dc;
          for (let i = 0; i < n; i++) out.data[(7 * r + c) * n + i]! += X.data[col * n + i]! / 16;
        }
      }
    }
  }
  return out;
}

let fashion: { X: Matrix; labels: Int32Array; test: Matrix; testLabels: Int32Array };
const thyroid = labelledFromCsv(readFileSync(new URL('../../shared/datasets/anomaly_thyroid.csv', import.meta.url), 'utf8'), { label: 'label' });
const satellite = labelledFromCsv(readFileSync(new URL('../../shared/datasets/satellite.csv', import.meta.url), 'utf8'), { label: 'label' });
/** thyroid's rows: the first 2,500 to train on (outliers among them, as a client holds them), the others to score */
const thyroidTrain = thyroid.X.selectRows(Array.from({ length: 2500 }, (_, i) => i));
const thyroidTest = thyroid.X.selectRows(Array.from({ length: thyroid.X.nRows - 2500 }, (_, i) => 2500 + i));
const thyroidTestOutlier = Array.from({ length: thyroid.X.nRows - 2500 }, (_, i) => thyroid.labels![2500 + i] === 1);

beforeAll(async () => {
  await init();
  const train = await loadFashionMnist({ split: 'train', n: 1000, sample: 'stratified', seed: 1 });
  const held = await loadFashionMnist({ split: 'test', n: 1000, sample: 'stratified', seed: 2 });
  fashion = { X: pooled(train.X), labels: train.labels, test: pooled(held.X), testLabels: held.labels };
});

/** The area under the ROC curve of scores (higher: more anomalous) against outlier flags. */
function auc(scores: ArrayLike<number>, outlier: boolean[]): number {
  let pairs = 0;
  let right = 0;
  for (let i = 0; i < outlier.length; i++) {
    if (!outlier[i]) continue;
    for (let j = 0; j < outlier.length; j++) {
      if (outlier[j]) continue;
      pairs++;
      right += scores[i]! > scores[j]! ? 1 : scores[i] === scores[j] ? 0.5 : 0;
    }
  }
  return right / pairs;
}

/** `fn` throws an `Err` whose message matches `hint`, and WASM memory is as it was. */
function refused(fn: () => unknown, Err: new (...a: never[]) => FedmixError, hint: RegExp): void {
  const before = wasm().fm_heap_in_use();
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown, `expected ${hint}`).toBeInstanceOf(Err);
  expect((thrown as Error).message).toMatch(hint);
  expect(wasm().fm_heap_in_use()).toBe(before);
}

type Case = [option: string, value: unknown, hint: RegExp, Err?: new (...a: never[]) => FedmixError];

/** Every option of `declaration` has a case; each case is refused by `make` with its message. */
function everyOptionRefused(declaration: Pick<OptionsDeclaration<never, object>, 'keys'>, cases: Case[], make: (o: Record<string, unknown>) => unknown, base: Record<string, unknown> = {}): void {
  expect(new Set(cases.map((c) => c[0]))).toEqual(new Set(declaration.keys));
  for (const [option, value, hint, Err] of cases) refused(() => make({ ...base, [option]: value }), Err ?? InvalidParameterError, hint);
}

const one = (name: string, value: string) => new RegExp(`^${name} must be one of .*, got ${value}$`);

describe('every declared option is refused at a bad value, in its words', () => {
  test('Autoencoder', () => {
    everyOptionRefused(
      autoencoderOptions,
      [
        ['hiddenLayers', [], /^hiddenLayers must hold at least one width \(the code layer\), e\.g\. \[64, 32, 64\]$/],
        ['hiddenLayers', [8, 0], /^hiddenLayers\[1\] must be an integer in \[1, 1048576\], got 0$/],
        ['activation', 'softmax', one('activation', '"softmax"')],
        ['outputActivation', 'softmax', one('outputActivation', '"softmax"')],
        ['loss', 'softmax-cross-entropy', one('loss', '"softmax-cross-entropy"')],
        ['optimizer', 'rmsprop', /^optimizer must be one of 'adam', 'sgd', got "rmsprop"$/],
        ['optimizer', { name: 'adam', learningRate: 1e-3, beta1: 1 }, /^beta1 must be in \[0, 1\), got 1$/],
        ['optimizer', { name: 'adam', lr: 1 }, /^optimizer has an unknown option "lr"/],
        ['learningRate', 0, /^learningRate must be a finite number > 0, got 0$/],
        ['epochs', 0, /^epochs must be an integer in \[1, 1000000\], got 0$/],
        ['batchSize', 1.5, /^batchSize must be an integer in \[1, 2147483647\], got 1\.5$/],
        ['shuffle', 'yes', /^shuffle must be true or false, got "yes"$/],
        ['init', 'he', one('init', '"he"')],
        ['nFeatures', 0, /^nFeatures must be an integer in \[1, 1048576\], got 0$/],
        ['seed', -1, /^seed must be an integer >= 0, got -1$/],
        ['onEpoch', 3, /^onEpoch must be a function \(epoch, loss\) => void, got 3$/],
      ],
      (o) => new Autoencoder(o),
    );
    refused(() => new Autoencoder({ loss: 'bce', outputActivation: 'identity' }), InvalidParameterError, /^loss 'bce' needs outputs in \[0, 1\]/);
    refused(() => new Autoencoder({ epoch: 3 } as never), InvalidParameterError, /^options has an unknown option "epoch"; did you mean "epochs"\?/);
  });

  test('MLPClassifier', () => {
    everyOptionRefused(
      mlpClassifierOptions,
      [
        ['hiddenLayerSizes', [0], /^hiddenLayerSizes\[0\] must be an integer in \[1, 1048576\], got 0$/],
        ['activation', 'sigmoid', one('activation', '"sigmoid"')],
        ['solver', 'lbfgs', /^solver must be one of 'adam', 'sgd', got "lbfgs"$/],
        ['alpha', -1, /^alpha must be a finite number >= 0, got -1$/],
        ['batchSize', 0, /^batchSize must be an integer in \[1, 2147483647\], got 0$/],
        ['batchSize', 'max', /^batchSize must be an integer in \[1, 2147483647\], got "max"$/],
        ['learningRateInit', 0, /^learningRateInit must be a finite number > 0, got 0$/],
        ['maxIter', 0, /^maxIter must be an integer in \[1, 1000000\], got 0$/],
        ['shuffle', 1, /^shuffle must be true or false, got 1$/],
        ['randomState', -1, /^randomState must be an integer >= 0, got -1$/],
        ['seed', 1.5, /^seed must be an integer >= 0, got 1\.5$/],
        ['tol', -1, /^tol must be a finite number >= 0, got -1$/],
        ['nIterNoChange', 0, /^nIterNoChange must be an integer in \[1, 1000000\], got 0$/],
        ['momentum', -0.5, /^momentum must be a finite number >= 0, got -0\.5$/],
        ['nesterovsMomentum', 'no', /^nesterovsMomentum must be true or false, got "no"$/],
        ['beta1', 1, /^beta1 must be in \[0, 1\), got 1$/],
        ['beta2', -0.1, /^beta2 must be in \[0, 1\), got -0\.1$/],
        ['epsilon', -1, /^epsilon must be a finite number >= 0, got -1$/],
        ['warmStart', 1, /^warmStart must be true or false, got 1$/],
        ['init', 'he', one('init', '"he"')],
        ['onEpoch', 'f', /^onEpoch must be a function \(epoch, loss\) => void, got "f"$/],
      ],
      (o) => new MLPClassifier(o),
    );
    refused(() => new MLPClassifier({ seed: 1, randomState: 2 }), InvalidParameterError, /^seed and randomState are the same option; got 1 and 2$/);
  });

  test('the network spec and the optimizer', () => {
    const spec: NetworkSpec = { sizes: [4, 3, 2], activation: 'relu', outputActivation: 'identity', loss: 'mse' };
    everyOptionRefused(
      networkSpecOptions,
      [
        ['sizes', [4], /^sizes must hold at least an input and an output width, got \[4\]$/],
        ['sizes', [4, 2 ** 21], /^sizes\[1\] must be an integer in \[1, 1048576\], got 2097152$/],
        ['activation', 'softmax', one('activation', '"softmax"')],
        ['outputActivation', 'max', one('outputActivation', '"max"')],
        ['loss', 'hinge', one('loss', '"hinge"')],
        ['init', 'he', one('init', '"he"')],
        ['seed', -1, /^seed must be an integer >= 0, got -1$/],
      ],
      (o) => new Network(o as unknown as NetworkSpec),
      { ...spec },
    );
    const net = new Network(spec);
    try {
      everyOptionRefused(
        optimizerOptions,
        [
          ['name', 'rmsprop', /^optimizer name must be one of 'sgd', 'adam', got "rmsprop"$/],
          ['learningRate', -1, /^learningRate must be a finite number > 0, got -1$/],
          ['momentum', NaN, /^momentum must be a finite number >= 0, got NaN$/],
          ['dampening', -1, /^dampening must be a finite number >= 0, got -1$/],
          ['nesterov', 0, /^nesterov must be true or false, got 0$/],
          ['weightDecay', Infinity, /^weightDecay must be a finite number >= 0, got Infinity$/],
          ['beta1', 1, /^beta1 must be in \[0, 1\), got 1$/],
          ['beta2', 1.5, /^beta2 must be in \[0, 1\), got 1\.5$/],
          ['eps', -1, /^eps must be a finite number >= 0, got -1$/],
        ],
        (o) => net.optimizer(o as unknown as OptimizerSpec),
        { name: 'adam', learningRate: 1e-3 },
      );
      refused(() => net.optimizer({ name: 'sgd', learningRate: 0.1, nesterov: true }), InvalidParameterError, /^Nesterov momentum needs momentum > 0 and dampening 0/);
    } finally {
      net.dispose();
    }
  });

  test('early stopping', () => {
    const cases: [EarlyStoppingOptions, RegExp][] = [
      [{ monitor: 'loss' } as never, /^earlyStopping\.monitor must be one of 'validation-loss', 'separation', got "loss"$/],
      [{ monitor: 'separation', contamination: 0.5 }, /^earlyStopping\.contamination must be a number in \(0, 0\.5\), got 0\.5$/],
      [{ monitor: 'validation-loss', validationShare: 0 }, /^earlyStopping\.validationShare must be a number in \(0, 0\.5\), got 0$/],
      [{ monitor: 'separation', patience: 0 }, /^earlyStopping\.patience must be an integer in \[1, 10000\], got 0$/],
      [{ monitor: 'validation-loss', contamination: 0.1 } as never, /^earlyStopping has an unknown option "contamination"/],
    ];
    for (const [given, hint] of cases) refused(() => resolveEarlyStopping(given), InvalidParameterError, hint);
    expect(resolveEarlyStopping({ monitor: 'separation' })).toEqual({ monitor: 'separation', contamination: 0.1, patience: 3 });
    expect(resolveEarlyStopping({ monitor: 'validation-loss', patience: 10_000 })).toEqual({ monitor: 'validation-loss', validationShare: 0.1, patience: 10_000 });
  });

  test('OneClassSVM', () => {
    everyOptionRefused(
      oneClassSVMOptions,
      [
        ['kernel', 'poly', /^kernel must be one of 'rbf', 'linear', got "poly"$/],
        ['gamma', 0, /^gamma must be 'scale', 'auto' or a finite number > 0, got 0$/],
        ['gamma', 'Scale', /^gamma must be 'scale', 'auto' or a finite number > 0, got "Scale"$/],
        ['nu', 0, /^nu must be a number in \(0, 1\], got 0$/],
        ['nu', 1.5, /^nu must be a number in \(0, 1\], got 1\.5$/],
        ['tol', 0, /^tol must be a finite number > 0, got 0$/],
        ['shrinking', 'true', /^shrinking must be true or false, got "true"$/],
        ['cacheSize', -200, /^cacheSize must be a finite number > 0, got -200$/],
        ['maxIter', -2, /^maxIter must be an integer in \[-1, 1000000\], got -2$/],
      ],
      (o) => new OneClassSVM(o),
    );
  });

  test('LocalDetector', () => {
    everyOptionRefused(
      localDetectorOptions,
      [
        ['kind', 'iforest', /^kind must be one of 'ocsvm', 'gmm', 'autoencoder', got "iforest"$/],
        ['contamination', 0.5, /^contamination must be a number in \(0, 0\.5\), got 0\.5$/],
        ['ocsvm', 3, /^ocsvm must be an options object, got 3$/],
        ['ocsvm', { nu: 2 }, /^nu must be a number in \(0, 1\], got 2$/],
        ['ocsvm', { nuu: 1 }, /^ocsvm has an unknown option "nuu"; did you mean "nu"\?/],
        ['gmm', { nComponents: 0 }, /^nComponents must be an integer in \[1, 65536\], got 0$/],
        ['autoencoder', { epochs: 0 }, /^epochs must be an integer in \[1, 1000000\], got 0$/],
        ['noise', { clip: 1, epsilon: 1, delta: 1 }, /delta is 1; it must be below 1/],
        ['noiseSeed', -1, /^noiseSeed must be an integer >= 0, got -1$/],
      ],
      (o) => new LocalDetector(o),
      { kind: 'gmm' },
    );
    refused(() => new LocalDetector({ kind: 'ocsvm', noise: { clip: 1, epsilon: 1, delta: 1e-5 } }), InvalidParameterError, /^noise is for the 'gmm' detector/);
    refused(() => new LocalDetector({ kind: 'gmm', gmm: { covarianceType: 'tied' }, noise: { clip: 1, epsilon: 1, delta: 1e-5 } }), InvalidParameterError, /^noise needs 'full' or 'diag' covariances, got gmm\.covarianceType 'tied'$/);
    // the same declaration where detectors are made later (a federation's clients): said at once, under the caller's name
    refused(() => checkDetectorOptions({ kind: 'gmm', gmm: { seed: -1 } }, 'detector'), InvalidParameterError, /^seed must be an integer >= 0, got -1$/);
    refused(() => checkDetectorOptions({ kinds: 'gmm' } as never, 'detector'), InvalidParameterError, /^detector has an unknown option "kinds"/);
  });

  test('DirichletMultinomialMixture.fit', () => {
    const h = [[3, 1, 0], [0, 2, 2], [1, 1, 1], [4, 0, 1]];
    everyOptionRefused(
      mdmCentralFitOptions,
      [
        ['nComponents', 0, /^nComponents must be an integer in \[1, 2147483647\], got 0$/],
        ['rounds', -1, /^rounds must be an integer in \[0, 1000000\], got -1$/],
        ['maxCount', 0, /^maxCount must be an integer in \[1, 2147483647\], got 0$/],
        ['sizes', [4, 4, 3, 6], /^client 3: its histogram sums to 5 but its size n is 6/, InvalidDataError],
        ['categories', ['a', 'b'], /^categories must be 3 strings, one per column of alpha/],
        ['init', {}, /^init must be a DirichletMultinomialMixture, got \{\}$/],
        ['seed', 2 ** 53, /^seed must be an integer in \[0, 9007199254740991\], got 9007199254740992$/],
      ],
      (o) => DirichletMultinomialMixture.fit(h, o),
    );
  });
});

describe('every model at its defaults learns on real data', () => {
  test('Autoencoder on Fashion-MNIST: reconstructs held-out images better than their mean image', () => {
    const ae = new Autoencoder().fit(fashion.X);
    try {
      const mean = new Float64Array(49);
      for (let j = 0; j < 49; j++) for (let i = 0; i < fashion.X.nRows; i++) mean[j]! += fashion.X.data[j * fashion.X.nRows + i]! / fashion.X.nRows;
      const n = fashion.test.nRows;
      let baseline = 0;
      for (let j = 0; j < 49; j++) for (let i = 0; i < n; i++) baseline += (fashion.test.data[j * n + i]! - mean[j]!) ** 2 / (49 * n);
      const errors = ae.scoreSamples(fashion.test);
      const meanError = errors.reduce((a, b) => a + b, 0) / n;
      console.log(`Autoencoder at its defaults, Fashion-MNIST 7x7: held-out MSE ${meanError.toFixed(4)}, mean image ${baseline.toFixed(4)}; losses ${ae.history.map((l) => l.toFixed(4)).join(' ')}`);
      expect(ae.history).toHaveLength(10);
      expect(ae.history[9]!).toBeLessThan(ae.history[0]!);
      expect(meanError).toBeLessThan(baseline);
    } finally {
      ae.dispose();
    }
  });

  test('MLPClassifier on Fashion-MNIST: held-out accuracy', () => {
    const mlp = new MLPClassifier().fit(fashion.X, fashion.labels);
    try {
      const accuracy = mlp.score(fashion.test, fashion.testLabels);
      console.log(`MLPClassifier at its defaults, Fashion-MNIST 7x7 (1,000 rows): ${mlp.nIter} epochs, held-out accuracy ${accuracy.toFixed(3)}`);
      expect(accuracy).toBeGreaterThan(0.7);
    } finally {
      mlp.dispose();
    }
  });

  test('OneClassSVM and every LocalDetector kind on thyroid: outliers score above inliers', () => {
    const svm = new OneClassSVM().fit(thyroidTrain);
    try {
      const a = auc(Array.from(svm.decisionFunction(thyroidTest), (x) => -x), thyroidTestOutlier);
      console.log(`OneClassSVM at its defaults, thyroid: AUC ${a.toFixed(3)}`);
      expect(a).toBeGreaterThan(0.6);
    } finally {
      svm.dispose();
    }
    for (const kind of ['ocsvm', 'gmm', 'autoencoder'] as const) {
      const det = new LocalDetector({ kind }).fit(thyroidTrain);
      try {
        const a = auc(det.scoreSamples(thyroidTest), thyroidTestOutlier);
        console.log(`LocalDetector '${kind}' at its defaults, thyroid: AUC ${a.toFixed(3)}, training inlier share ${det.trainingInlierShare.toFixed(3)}`);
        expect(det.trainingInlierShare).toBeCloseTo(0.9, 2);
        expect(a).toBeGreaterThan(0.6);
      } finally {
        det.dispose();
      }
    }
  });

  test("DirichletMultinomialMixture.fit on clients' label histograms of satellite (a Dirichlet partition)", () => {
    const labels = satellite.labels!;
    const classes = [...new Set(labels)].sort((a, b) => a - b);
    const { indices } = dirichlet(labels, { clients: 60, alpha: 0.5, seed: 3 });
    const histograms = indices.map((rows) => classes.map((c) => Array.from(rows).filter((i) => labels[i] === c).length));
    const one = DirichletMultinomialMixture.fit(histograms);
    const two = DirichletMultinomialMixture.fit(histograms, { nComponents: 2, seed: 1 });
    console.log(`DirichletMultinomialMixture at its defaults, 60 satellite clients: mean log-pmf ${one.score(histograms).toFixed(3)} (K = 2: ${two.score(histograms).toFixed(3)})`);
    expect(one.nComponents).toBe(1);
    expect(one.tau[0]).toBe(1);
    expect(Number.isFinite(one.score(histograms))).toBe(true);
    expect(one.logPmf(histograms).every(Number.isFinite)).toBe(true);
    // a second component never fits the clients worse (EM from the same data)
    expect(two.score(histograms)).toBeGreaterThanOrEqual(one.score(histograms) - 1e-6);
  });
});

/** Calls of `declaration`'s schema while `fn` runs: how often options were checked. */
function checksDuring(declaration: { schema: object }, fn: () => void): number {
  const schema = declaration.schema as { '~run': (...a: unknown[]) => unknown };
  const spy = vi.spyOn(schema, '~run');
  try {
    fn();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('resolved options are taken as they are', () => {
  test('a public constructor checks once; given what check() returned, not again', () => {
    const pairs: [{ schema: object; check(o: unknown): object }, (o: never) => { options?: unknown }][] = [
      [autoencoderOptions, (o) => new Autoencoder(o)],
      [mlpClassifierOptions, (o) => new MLPClassifier(o)],
      [oneClassSVMOptions, (o) => new OneClassSVM(o)],
    ];
    for (const [declaration, make] of pairs) {
      expect(checksDuring(declaration, () => make({} as never))).toBe(1);
      const resolved = declaration.check({});
      let made: { options?: unknown } | undefined;
      expect(checksDuring(declaration, () => (made = make(resolved as never)))).toBe(0);
      expect(made!.options).toBe(resolved);
    }
  });

  test("a model's network and optimizer are built from its resolved options, not checked again", () => {
    const x = fashion.X.selectRows(Array.from({ length: 100 }, (_, i) => i));
    const y = fashion.labels.subarray(0, 100);
    const ae = new Autoencoder({ epochs: 2, seed: 1 });
    const mlp = new MLPClassifier({ maxIter: 2, randomState: 1 });
    try {
      expect(checksDuring(networkSpecOptions, () => checksDuring(optimizerOptions, () => ae.fit(x)) === 0 || expect.fail('optimizer checked'))).toBe(0);
      expect(checksDuring(networkSpecOptions, () => checksDuring(optimizerOptions, () => mlp.fit(x, y)) === 0 || expect.fail('optimizer checked'))).toBe(0);
      // saved and loaded: the file's options checked once, by the declaration
      expect(checksDuring(autoencoderOptions, () => Autoencoder.fromJSON(JSON.stringify(ae.toJSON())).dispose())).toBe(1);
      expect(checksDuring(mlpClassifierOptions, () => MLPClassifier.fromJSON(JSON.stringify(mlp.toJSON())).dispose())).toBe(1);
    } finally {
      ae.dispose();
      mlp.dispose();
    }
  });

  test("a detector's models take their options as the detector resolved them; so does a federated client's detector", () => {
    const x = thyroidTrain.selectRows(Array.from({ length: 300 }, (_, i) => i));
    // a saved detector's options are the defaults under its kind and contamination: resolved on first use
    const first = new LocalDetector({ kind: 'gmm' }).fit(x);
    LocalDetector.fromJSON(first.toJSON()).dispose();
    first.dispose();
    for (const kind of ['ocsvm', 'gmm', 'autoencoder'] as const) {
      const det = new LocalDetector({ kind, autoencoder: { epochs: 2 } });
      const checks = checksDuring(autoencoderOptions, () => checksDuring(oneClassSVMOptions, () => checksDuring(gaussianMixtureOptions, () => det.fit(x)) === 0 || expect.fail('gmm checked')) === 0 || expect.fail('ocsvm checked'));
      expect(checks, kind).toBe(0);
      const loaded = checksDuring(localDetectorOptions, () => LocalDetector.fromJSON(JSON.stringify(det.toJSON())).dispose());
      expect(loaded, `${kind} loaded`).toBe(0);
      det.dispose();
    }
    const detector: LocalDetectorOptions = checkDetectorOptions({ kind: 'gmm', gmm: { nComponents: 2 } }, 'detector');
    expect(checksDuring(localDetectorOptions, () => checksDuring(gaussianMixtureOptions, () => new CommunitiesClient('a', x, { detector })) === 0 || expect.fail('gmm checked'))).toBe(0);
  });

  test('GaussianMixture.fromHandle takes the options it is given as they are', () => {
    const gm = withScope((s) => {
      const [w, m, c] = [s.f64Optional(Float64Array.of(0.5, 0.5)), s.f64Optional(Float64Array.of(0, 0, 3, 3)), s.f64Optional(Float64Array.of(1, 1, 1, 1))];
      const out = s.u32(1);
      s.check(s.w.fm_gmm_from_covariances(s.struct(GMM_FROM_COVARIANCES_OPTIONS, { covType: COV_CODE.diag, k: 2, d: 2, weightsLen: w[1], meansLen: m[1], covariancesLen: c[1] }), w[0], m[0], c[0], out));
      const handle = s.readU32(out, 1)[0]!;
      let made: GaussianMixture | undefined;
      expect(checksDuring(gaussianMixtureOptions, () => (made = GaussianMixture.fromHandle(s, handle, { nComponents: 2, covarianceType: 'diag', maxIter: 10, tol: 1e-4 })))).toBe(0);
      return made!;
    });
    try {
      expect(gm.options).toMatchObject({ nComponents: 2, covarianceType: 'diag', maxIter: 10, tol: 1e-4, regCovar: 1e-6, nInit: 1 });
      expect(gm.predict([[0, 0], [3, 3]])).toEqual(Int32Array.of(0, 1));
    } finally {
      gm.dispose();
    }
  });
});

describe('a seed of 2^40 is accepted by every model, and gives the same model twice', () => {
  const x = () => thyroidTrain.selectRows(Array.from({ length: 400 }, (_, i) => i));

  test('GaussianMixture (fit and sample), KMeans', () => {
    const fits = [0, 1].map(() => new GaussianMixture({ nComponents: 2, seed: SEED }).fit(x()));
    expect(fits[1]!.means).toEqual(fits[0]!.means);
    expect(fits[0]!.sample(5, { seed: SEED }).X.data).toEqual(fits[1]!.sample(5).X.data);
    fits.forEach((g) => g.dispose());
    const km = [0, 1].map(() => new KMeans({ nClusters: 3, seed: SEED }).fit(x()));
    expect(km[1]!.centers).toEqual(km[0]!.centers);
    expect(km[0]!.seed).toBe(SEED);
  });

  test('Autoencoder, MLPClassifier (seed and randomState), a Network', () => {
    const rows = fashion.X.selectRows(Array.from({ length: 100 }, (_, i) => i));
    const y = fashion.labels.subarray(0, 100);
    const ae = [0, 1].map(() => new Autoencoder({ epochs: 2, seed: SEED }).fit(rows));
    expect(ae[1]!.getParameters()).toEqual(ae[0]!.getParameters());
    ae.forEach((m) => m.dispose());
    const mlp = [new MLPClassifier({ maxIter: 3, seed: SEED }), new MLPClassifier({ maxIter: 3, randomState: SEED })].map((m) => m.fit(rows, y));
    expect(mlp[1]!.getParameters()).toEqual(mlp[0]!.getParameters());
    mlp.forEach((m) => m.dispose());
    const nets = [0, 1].map(() => new Network({ sizes: [4, 3, 2], activation: 'relu', outputActivation: 'identity', loss: 'mse', seed: SEED }));
    expect(nets[1]!.getParameters()).toEqual(nets[0]!.getParameters());
    nets.forEach((n) => n.dispose());
  });

  test("LocalDetector (its models' seeds and its noise seed)", () => {
    const noise = { clip: 1, epsilon: 1, delta: 1e-5 };
    for (const options of [{ kind: 'gmm', gmm: { seed: SEED }, noise, noiseSeed: SEED }, { kind: 'autoencoder', autoencoder: { seed: SEED, epochs: 2 } }] as LocalDetectorOptions[]) {
      const dets = [0, 1].map(() => new LocalDetector(options).fit(x()));
      expect(dets[1]!.threshold).toBe(dets[0]!.threshold);
      expect(dets[1]!.toJSON()).toEqual(dets[0]!.toJSON());
      dets.forEach((d) => d.dispose());
    }
  });

  test('DirichletMultinomialMixture (fit and sample)', () => {
    const h = [[3, 1, 0], [0, 2, 2], [1, 1, 1], [4, 0, 1], [0, 0, 5], [2, 2, 0]];
    const fits = [0, 1].map(() => DirichletMultinomialMixture.fit(h, { nComponents: 2, rounds: 5, seed: SEED }));
    expect(fits[1]!.toJSON()).toEqual(fits[0]!.toJSON());
    expect(fits[0]!.sample(4, { seed: SEED }).histograms.data).toEqual(fits[1]!.sample(4, { seed: SEED }).histograms.data);
  });
});
