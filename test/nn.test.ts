/**
 * Autoencoder, MLPClassifier and Network: what they do, and every bad input
 * of issue 12's item 7 (NaN or Inf in data or parameters, labels outside the
 * classes, a parameter vector of the wrong length, a learning rate <= 0, a
 * batch larger than the data, layers too large for WASM memory). Each bad
 * input is a typed error that says what to change; the WASM heap is where it
 * was afterwards and the same object works normally. 1,000 fit/dispose
 * cycles leave the heap flat. Agreement with PyTorch is nn-parity.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  Autoencoder,
  FedmixError,
  init,
  InvalidDataError,
  InvalidParameterError,
  Matrix,
  MLPClassifier,
  Network,
  NotFittedError,
  NumericalError,
  WasmAllocationError,
} from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { blobs, thrown, xorshift32 } from './helpers.js';

/** n rows of d features in [0, 1] near a 2-dimensional surface (what an autoencoder compresses well). */
function surface(n: number, d: number, seed: number): Matrix {
  const next = xorshift32(seed);
  const u = () => next() / 2 ** 32;
  return Matrix.fromRows(
    Array.from({ length: n }, () => {
      const a = u();
      const b = u();
      return Array.from({ length: d }, (_, j) => 0.5 + 0.4 * Math.sin(3 * a * (j + 1) / d + b * 2) * Math.cos(b * j));
    }),
  );
}

/** Rows with a value replaced. */
function spoiled(x: Matrix, i: number, j: number, v: number): Matrix {
  const data = x.data.slice();
  data[j * x.nRows + i] = v;
  return new Matrix(data, x.nRows, x.nCols);
}

function labelsOf(n: number, k: number): number[] {
  return Array.from({ length: n }, (_, i) => i % k);
}

const X = surface(300, 12, 1);
/** three separated blobs in 6 dimensions, labels by blob */
const B = blobs(240, 6, 3, 2, 6);
const BY = labelsOf(240, 3).map((c) => ['cat', 'dog', 'owl'][c]!);

const heap = () => wasm().fm_heap_in_use();

/**
 * `fn` throws a `type` error whose message matches `hint`; the heap is then
 * back where it was, and `works` (the same object used normally) succeeds.
 */
function refused(fn: () => unknown, type: new (...a: never[]) => FedmixError, hint: RegExp, works?: () => void): FedmixError {
  const before = heap();
  const e = thrown(fn);
  expect(e).toBeInstanceOf(type);
  expect(e.message).toMatch(hint);
  expect(heap(), 'WASM heap after the error').toBe(before);
  works?.();
  return e as FedmixError;
}

beforeAll(async () => {
  await init();
});

describe('Autoencoder', () => {
  test('learns to reconstruct, encodes through the narrowest layer, and scores anomalies above normal rows', () => {
    const calls: [number, number][] = [];
    const ae = new Autoencoder({ hiddenLayers: [8, 3, 8], epochs: 40, batchSize: 16, learningRate: 1e-2, seed: 1, onEpoch: (e, l) => void calls.push([e, l]) });
    ae.fit(X);
    expect(calls.map((c) => c[0])).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(ae.history).toEqual(calls.map((c) => c[1]));
    expect(ae.history.at(-1)!).toBeLessThan(0.5 * ae.history[0]!);
    expect(ae.nFeatures).toBe(12);
    expect(ae.codeLayer).toBe(2);
    const code = ae.encode(X);
    expect([code.nRows, code.nCols]).toEqual([300, 3]);
    const r = ae.reconstruct(X);
    expect([r.nRows, r.nCols]).toEqual([300, 12]);
    // scoreSamples is the per-row mean squared error of the reconstruction
    const s = ae.scoreSamples(X);
    for (const i of [0, 17, 299]) {
      let e = 0;
      for (let j = 0; j < 12; j++) e += (r.data[j * 300 + i]! - X.data[j * 300 + i]!) ** 2;
      // from the f32 rows the network reads: the error of the rounding is below 1e-8
      expect(s[i]).toBeCloseTo(e / 12, 8);
    }
    // noise rows are reconstructed much worse than rows like the training data
    const next = xorshift32(9);
    const noise = Matrix.fromRows(Array.from({ length: 50 }, () => Array.from({ length: 12 }, () => next() / 2 ** 32)));
    const mean = (v: Float64Array) => v.reduce((a, b) => a + b, 0) / v.length;
    expect(mean(ae.scoreSamples(noise))).toBeGreaterThan(3 * mean(ae.scoreSamples(surface(50, 12, 2))));
    ae.dispose();
  });

  test('defaults are the community paper\'s network; onEpoch returning false stops; fit goes on from the current parameters', () => {
    const ae = new Autoencoder({ epochs: 5, seed: 2, onEpoch: (e) => e < 2 });
    expect(ae.options.hiddenLayers).toEqual([64, 32, 64]);
    expect([ae.options.activation, ae.options.outputActivation, ae.options.loss, ae.options.optimizer.name, ae.options.learningRate]).toEqual(['relu', 'sigmoid', 'mse', 'adam', 1e-3]);
    ae.fit(X);
    expect(ae.history).toHaveLength(2);
    const p = ae.getParameters();
    expect(p).toHaveLength(12 * 64 + 64 + 64 * 32 + 32 + 32 * 64 + 64 + 64 * 12 + 12);
    ae.fit(X);
    expect(ae.history).toHaveLength(4);
    expect(ae.getParameters()).not.toEqual(p);
    ae.dispose();
  });

  test('the same seed gives the same model; parameters and JSON carry it', () => {
    const make = () => new Autoencoder({ hiddenLayers: [6, 2, 6], epochs: 3, batchSize: 10, seed: 5 }).fit(X);
    const a = make();
    const b = make();
    expect(b.getParameters()).toEqual(a.getParameters());
    const json = JSON.parse(JSON.stringify(a.toJSON()));
    const c = Autoencoder.fromJSON(json);
    expect(c.scoreSamples(X)).toEqual(a.scoreSamples(X));
    expect(c.history).toEqual(a.history);
    expect(Autoencoder.fromJSON(JSON.stringify(a)).getParameters()).toEqual(a.getParameters());
    // a new model given nFeatures takes parameters before any fit (a federated client's start)
    const d = new Autoencoder({ hiddenLayers: [6, 2, 6], nFeatures: 12 });
    d.setParameters(a.getParameters());
    expect(d.scoreSamples(X)).toEqual(a.scoreSamples(X));
    for (const m of [a, b, c, d]) m.dispose();
  });

  test('bce with a sigmoid output; an identity output for unbounded data; SGD', () => {
    const bce = new Autoencoder({ hiddenLayers: [5], loss: 'bce', epochs: 10, seed: 1, learningRate: 1e-2 }).fit(X);
    expect(bce.history.at(-1)!).toBeLessThan(bce.history[0]!);
    const Z = blobs(200, 5, 2, 3);
    const lin = new Autoencoder({ hiddenLayers: [4], outputActivation: 'identity', optimizer: { name: 'sgd', learningRate: 1e-2, momentum: 0.9 }, epochs: 20, seed: 1 }).fit(Z);
    expect(lin.history.at(-1)!).toBeLessThan(0.5 * lin.history[0]!);
    bce.dispose();
    lin.dispose();
  });
});

describe('MLPClassifier', () => {
  test('string labels: classes sorted, predictions are labels, probabilities sum to 1, accuracy', () => {
    const m = new MLPClassifier({ hiddenLayerSizes: [16], maxIter: 30, randomState: 1 }).fit(B, BY);
    expect(m.classes).toEqual(['cat', 'dog', 'owl']);
    const p = m.predictProba(B);
    expect([p.nRows, p.nCols]).toEqual([240, 3]);
    for (const i of [0, 100, 239]) expect(p.data[i]! + p.data[240 + i]! + p.data[480 + i]!).toBeCloseTo(1, 6);
    const pred = m.predict(B);
    expect(new Set(pred)).toEqual(new Set(['cat', 'dog', 'owl']));
    expect(m.score(B, BY)).toBeGreaterThan(0.95);
    // a label the model never saw counts as wrong, as in scikit-learn
    expect(m.score(B, BY.map((y, i) => (i === 0 ? 'emu' : y)))).toBeLessThan(m.score(B, BY));
    expect(m.nIter).toBe(m.lossCurve.length);
    expect(m.loss).toBe(m.lossCurve.at(-1));
    m.dispose();
  });

  test('stops after nIterNoChange epochs without a tol improvement; warmStart goes on; JSON round trip', () => {
    const m = new MLPClassifier({ hiddenLayerSizes: [8], maxIter: 2000, tol: 1e-2, nIterNoChange: 3, learningRateInit: 1e-2, randomState: 2 }).fit(B, labelsOf(240, 3));
    expect(m.nIter).toBeLessThan(2000);
    expect(m.nIter).toBeGreaterThan(4);
    const warm = new MLPClassifier({ hiddenLayerSizes: [8], maxIter: 3, warmStart: true, randomState: 2 });
    warm.fit(B, labelsOf(240, 3));
    const first = warm.getParameters();
    warm.fit(B, labelsOf(240, 3));
    expect(warm.nIter).toBe(6);
    expect(warm.getParameters()).not.toEqual(first);
    const copy = MLPClassifier.fromJSON(JSON.parse(JSON.stringify(warm.toJSON())));
    expect(copy.predict(B)).toEqual(warm.predict(B));
    expect(copy.classes).toEqual([0, 1, 2]);
    expect(copy.nIter).toBe(6);
    // without warmStart, fit starts over
    const cold = new MLPClassifier({ hiddenLayerSizes: [8], maxIter: 3, randomState: 2 });
    cold.fit(B, labelsOf(240, 3));
    cold.fit(B, labelsOf(240, 3));
    expect(cold.nIter).toBe(3);
    expect(cold.getParameters()).toEqual(first);
    for (const x of [m, warm, copy, cold]) x.dispose();
  });

  test('SGD with Nesterov momentum, logistic and tanh activations, batch sizes', () => {
    for (const activation of ['logistic', 'tanh', 'identity'] as const) {
      const m = new MLPClassifier({ hiddenLayerSizes: [10, 5], activation, solver: 'sgd', learningRateInit: 0.05, batchSize: 32, maxIter: 40, randomState: 3 }).fit(B, BY);
      expect(m.score(B, BY), activation).toBeGreaterThan(0.9);
      m.dispose();
    }
  });

  test('seed and randomState are one option', () => {
    const a = new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 2, seed: 4 }).fit(B, BY);
    const b = new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 2, randomState: 4 }).fit(B, BY);
    expect(a.getParameters()).toEqual(b.getParameters());
    expect(() => new MLPClassifier({ seed: 1, randomState: 2 })).toThrow(InvalidParameterError);
    a.dispose();
    b.dispose();
  });
});

describe('bad input (issue 12, item 7): typed errors, the heap as it was, the object still working', () => {
  test('NaN or Inf in the data', () => {
    const ae = new Autoencoder({ hiddenLayers: [4], epochs: 2, seed: 1 });
    const works = () => {
      ae.fit(X);
      expect(ae.scoreSamples(X).every(Number.isFinite)).toBe(true);
    };
    refused(() => ae.fit(spoiled(X, 7, 3, NaN)), InvalidDataError, /X row 7, column 3 is NaN/, works);
    const fitted = ae.getParameters();
    refused(() => ae.fit(spoiled(X, 0, 0, Infinity)), InvalidDataError, /row 0, column 0 is Infinity/);
    // a failed fit leaves the model as it was
    expect(ae.getParameters()).toEqual(fitted);
    refused(() => ae.fit(spoiled(X, 2, 1, 1e39)), InvalidDataError, /1e\+39, beyond the f32 range/, works);
    refused(() => ae.scoreSamples(spoiled(X, 299, 11, -Infinity)), InvalidDataError, /row 299, column 11 is -Infinity/, works);
    refused(() => ae.encode(spoiled(X, 5, 5, NaN)), InvalidDataError, /row 5, column 5/);
    refused(() => ae.reconstruct(spoiled(X, 5, 5, NaN)), InvalidDataError, /row 5, column 5/);
    ae.dispose();
    const m = new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 2, randomState: 1 });
    refused(() => m.fit(spoiled(B, 3, 2, NaN), BY), InvalidDataError, /row 3, column 2 is NaN/, () => m.fit(B, BY));
    refused(() => m.predict(spoiled(B, 1, 1, Infinity)), InvalidDataError, /row 1, column 1/, () => m.predict(B));
    refused(() => m.fit(B, BY.map((_, i) => (i === 9 ? NaN : 1)) as unknown as string[]), InvalidDataError, /y\[0\] is 1|y\[9\]/);
    m.dispose();
    const net = new Network({ sizes: [6, 3], activation: 'relu', outputActivation: 'identity', loss: 'mse', seed: 1 });
    refused(() => net.attach(B, spoiled(Matrix.zeros(240, 3), 4, 1, NaN)), InvalidDataError, /the targets row 4, column 1 is NaN/);
    net.dispose();
  });

  test('NaN or Inf in parameters, and a parameter vector of the wrong length', () => {
    const ae = new Autoencoder({ hiddenLayers: [4], epochs: 1, seed: 1 }).fit(X);
    const p = ae.getParameters();
    const works = () => {
      ae.setParameters(p);
      expect(ae.getParameters()).toEqual(p);
    };
    const bad = p.slice();
    bad[13] = NaN;
    refused(() => ae.setParameters(bad), InvalidParameterError, /parameters\[13\] is NaN/, works);
    bad[13] = Infinity;
    refused(() => ae.setParameters(bad), InvalidParameterError, /parameters\[13\] is Infinity/, works);
    refused(() => ae.setParameters([...p, 1e39].slice(1)), InvalidParameterError, /must be finite \(as f32\)/, works);
    refused(() => ae.setParameters(p.subarray(1)), InvalidParameterError, new RegExp(`parameters has ${p.length - 1} values; the network has ${p.length}`), works);
    refused(() => ae.setParameters([...p, 0]), InvalidParameterError, /has \d+ values; the network has/, works);
    refused(() => ae.setParameters('nope' as unknown as number[]), InvalidParameterError, /must be an array/, works);
    const json = ae.toJSON();
    refused(() => Autoencoder.fromJSON({ ...json, parameters: json.parameters.slice(2) }), InvalidParameterError, /values; the network has/);
    refused(() => Autoencoder.fromJSON({ ...json, parameters: json.parameters.map((v, i) => (i === 3 ? null : v)) as number[] }), InvalidParameterError, /parameters\[3\] is null/);
    refused(() => Autoencoder.fromJSON('{"format":"fedmix.Autoencoder"'), InvalidParameterError, /not JSON/);
    const m = new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 1, randomState: 1 }).fit(B, BY);
    refused(() => m.setParameters(new Float32Array(3)), InvalidParameterError, /has 3 values/, () => m.setParameters(m.getParameters()));
    refused(() => new MLPClassifier().setParameters([1]), NotFittedError, /not fitted/);
    refused(() => new Autoencoder().setParameters([1]), NotFittedError, /pass nFeatures/);
    ae.dispose();
    m.dispose();
  });

  test('labels outside the classes', () => {
    const net = new Network({ sizes: [6, 4, 3], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 });
    const labels = Int32Array.from(labelsOf(240, 3));
    const works = () => {
      const set = net.attach(B, labels);
      const opt = net.optimizer({ name: 'adam', learningRate: 1e-2 });
      expect(Number.isFinite(net.trainEpoch(set, opt, { batchSize: 32, seed: 1 }))).toBe(true);
      opt.dispose();
      set.dispose();
    };
    refused(() => net.attach(B, labels.map((v, i) => (i === 11 ? 3 : v))), InvalidDataError, /label 3 \(row 11\) is outside the network's 3 classes/, works);
    refused(() => net.attach(B, labels.map((v, i) => (i === 5 ? -1 : v))), InvalidDataError, /label -1 \(row 5\) is negative/, works);
    refused(() => net.attach(B, labels.subarray(1)), InvalidDataError, /239 labels for 240 rows/, works);
    refused(() => net.attach(B, B), InvalidDataError, /columns but the network|class labels/, works);
    net.dispose();
    const m = new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 2, warmStart: true, randomState: 1 }).fit(B, BY);
    refused(() => m.fit(B, BY.map((y, i) => (i === 30 ? 'emu' : y))), InvalidDataError, /y\[30\] is "emu", not one of the classes/, () => m.fit(B, BY));
    refused(() => new MLPClassifier().fit(B, labelsOf(240, 1)), InvalidDataError, /only one class/);
    refused(() => new MLPClassifier().fit(B, labelsOf(239, 3)), InvalidDataError, /239 labels for 240 rows/);
    m.dispose();
  });

  test('zero or negative learning rates', () => {
    for (const lr of [0, -1e-3, NaN, Infinity]) {
      refused(() => new Autoencoder({ learningRate: lr }), InvalidParameterError, /learningRate must be a finite number > 0/);
      refused(() => new Autoencoder({ optimizer: { name: 'sgd', learningRate: lr } }), InvalidParameterError, /learningRate must be a finite number > 0/);
      refused(() => new MLPClassifier({ learningRateInit: lr }), InvalidParameterError, /learningRateInit must be a finite number > 0/);
    }
    const net = new Network({ sizes: [2, 1], activation: 'relu', outputActivation: 'identity', loss: 'mse', seed: 1 });
    refused(() => net.optimizer({ name: 'adam', learningRate: 0 }), InvalidParameterError, /learningRate/, () => net.optimizer({ name: 'adam', learningRate: 1e-3 }).dispose());
    refused(() => net.optimizer({ name: 'sgd', learningRate: 0.1, nesterov: true }), InvalidParameterError, /Nesterov momentum needs momentum > 0/);
    refused(() => net.optimizer({ name: 'adam', learningRate: 0.1, beta1: 1 }), InvalidParameterError, /beta1 must be in \[0, 1\)/);
    net.dispose();
  });

  test('a batch larger than the data', () => {
    const ae = new Autoencoder({ hiddenLayers: [4], epochs: 1, batchSize: 301, seed: 1 });
    refused(() => ae.fit(X), InvalidParameterError, /batchSize 301 is larger than the 300 rows of X; use at most 300/, () => ae.fit(X.selectRows(Array.from({ length: 301 }, (_, i) => i % 300))));
    ae.dispose();
    const m = new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 1, batchSize: 241 });
    refused(() => m.fit(B, BY), InvalidParameterError, /batchSize 241 is larger than the 240 rows/);
    m.dispose();
    // defaults shrink to small data, as Keras' and scikit-learn's do
    const small = new Autoencoder({ hiddenLayers: [2], epochs: 1, seed: 1 }).fit(X.selectRows([0, 1, 2]));
    expect(small.history).toHaveLength(1);
    small.dispose();
    const net = new Network({ sizes: [12, 2, 12], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 });
    const set = net.attach(X, X);
    const opt = net.optimizer({ name: 'adam', learningRate: 1e-3 });
    refused(() => net.trainEpoch(set, opt, { batchSize: 1000, seed: 1 }), InvalidParameterError, /batchSize 1000 is larger than the training set's 300 rows/, () => net.trainEpoch(set, opt, { batchSize: 300, seed: 1 }));
    for (const v of [0, 1.5, -3, NaN]) refused(() => net.trainEpoch(set, opt, { batchSize: v, seed: 1 }), InvalidParameterError, /batchSize must be an integer/);
    opt.dispose();
    set.dispose();
    net.dispose();
  });

  test('layers too large: a cap that names itself, and WASM memory that cannot hold them', () => {
    refused(() => new Network({ sizes: [100_000, 100_000, 10], activation: 'relu', outputActivation: 'identity', loss: 'mse' }), InvalidParameterError, /has 10001100010 parameters; at most 134217728 fit.*narrower layers/);
    refused(() => new Network({ sizes: [10, 2 ** 21], activation: 'relu', outputActivation: 'identity', loss: 'mse' }), InvalidParameterError, /sizes\[1\] must be an integer in \[1, 1048576\]/);
    refused(() => new Autoencoder({ hiddenLayers: [0] }), InvalidParameterError, /hiddenLayers\[0\]/);
    const ae = new Autoencoder({ hiddenLayers: [20_000, 20_000], epochs: 1 });
    refused(() => ae.fit(X), InvalidParameterError, /at most 134217728 fit/, () => expect(ae.isFitted).toBe(false));
    // fill WASM memory (untouched pages: the process stays small), then ask for a network it cannot hold
    const w = wasm();
    const blocks: number[][] = [];
    for (const size of [256 * 2 ** 20, 16 * 2 ** 20]) {
      for (;;) {
        const p = w.fm_alloc(size) >>> 0;
        if (p === 0) break;
        blocks.push([p, size]);
      }
    }
    try {
      const e = refused(() => new Network({ sizes: [4096, 4096, 10], activation: 'relu', outputActivation: 'identity', loss: 'mse' }), WasmAllocationError, /out of WASM memory: a 4096-4096-10 network needs at least/);
      expect(e.code).toBe('WASM');
      refused(() => new MLPClassifier({ hiddenLayerSizes: [4096] }).fit(Matrix.zeros(2, 4096), [0, 1]), WasmAllocationError, /out of WASM memory/);
    } finally {
      for (const [p, size] of blocks) w.fm_free(p!, size!);
    }
    const net = new Network({ sizes: [4096, 4096, 10], activation: 'relu', outputActivation: 'identity', loss: 'mse', seed: 1 });
    expect(net.nParameters).toBe(4096 * 4096 + 4096 + 4096 * 10 + 10);
    net.dispose();
  });

  test('options of the wrong type or range, and a diverging fit', () => {
    refused(() => new Autoencoder({ loss: 'bce', outputActivation: 'identity' }), InvalidParameterError, /loss 'bce' needs outputs in \[0, 1\]/);
    refused(() => new Autoencoder({ activation: 'softmax' as 'relu' }), InvalidParameterError, /activation must be one of/);
    refused(() => new Autoencoder({ hiddenLayers: [] }), InvalidParameterError, /at least one width/);
    refused(() => new Autoencoder({ onEpoch: 3 as unknown as () => void }), InvalidParameterError, /onEpoch must be a function/);
    refused(() => new MLPClassifier({ solver: 'lbfgs' as 'adam' }), InvalidParameterError, /solver must be one of 'adam', 'sgd'/);
    refused(() => new MLPClassifier({ batchSize: 0 }), InvalidParameterError, /batchSize must be an integer in \[1/);
    refused(() => new MLPClassifier({ beta2: 1 }), InvalidParameterError, /beta2 must be in \[0, 1\)/);
    refused(() => new Network({ sizes: [3, 2], activation: 'relu', outputActivation: 'softmax', loss: 'mse' }), InvalidParameterError, /'softmax' goes with loss 'softmax-cross-entropy'/);
    refused(() => new Network({ sizes: [3, 2], activation: 'relu', outputActivation: 'identity', loss: 'softmax-cross-entropy' }), InvalidParameterError, /needs outputActivation 'softmax'/);
    refused(() => new Network({ sizes: [3], activation: 'relu', outputActivation: 'identity', loss: 'mse' }), InvalidParameterError, /at least an input and an output/);
    // data an output layer cannot reach: bce on values outside [0, 1]
    refused(() => new Autoencoder({ hiddenLayers: [3], loss: 'bce', epochs: 1 }).fit(blobs(50, 4, 2, 1)), InvalidDataError, /loss 'bce' needs targets in \[0, 1\]/);
    // a learning rate that blows up: a NumericalError, and the model keeps its parameters
    const big = Matrix.fromRows(Array.from({ length: 64 }, (_, i) => [i * 100, -i * 50, 3]));
    const ae = new Autoencoder({ hiddenLayers: [3], outputActivation: 'identity', optimizer: { name: 'sgd', learningRate: 10 }, epochs: 50, seed: 1 });
    const before = heap();
    expect(() => ae.fit(big)).toThrow(NumericalError);
    expect(ae.isFitted).toBe(false);
    expect(heap()).toBe(before);
    ae.dispose();
  });

  test('disposed models and networks say so', () => {
    const ae = new Autoencoder({ hiddenLayers: [2], epochs: 1, seed: 1 }).fit(X);
    ae.dispose();
    expect(() => ae.scoreSamples(X)).toThrow(NotFittedError);
    const net = new Network({ sizes: [2, 1], activation: 'relu', outputActivation: 'identity', loss: 'mse' });
    net.dispose();
    net.dispose();
    expect(() => net.getParameters()).toThrow(/this network was disposed; make a new one/);
  });
});

describe('memory', () => {
  let base = 0;
  beforeAll(() => {
    base = heap();
  });
  afterAll(() => {
    expect(heap()).toBe(base);
  });

  test('1,000 fit/dispose cycles leave the WASM heap flat', () => {
    const x = X.selectRows(Array.from({ length: 40 }, (_, i) => i));
    const b = B.selectRows(Array.from({ length: 30 }, (_, i) => i));
    const y = BY.slice(0, 30);
    const before = heap();
    for (let i = 0; i < 1000; i++) {
      const ae = new Autoencoder({ hiddenLayers: [5, 2, 5], epochs: 1, batchSize: 8, seed: i });
      ae.fit(x);
      ae.scoreSamples(x);
      ae.dispose();
      const m = new MLPClassifier({ hiddenLayerSizes: [6], maxIter: 1, randomState: i });
      m.fit(b, y);
      m.predict(b);
      m.dispose();
      if (i === 9) expect(heap()).toBe(before);
    }
    expect(heap()).toBe(before);
  }, 60_000);
});
