// Runs the same network computations on the relaxed-SIMD build and on the SIMD
// build in one process (init({ fresh: true, backend })), and prints what
// test/relaxed-simd.test.ts checks, as JSON: each result's relative difference
// between the builds (normwise: max|a - b| / max|b|) and, for the PyTorch
// fixtures (test/fixtures/nn.json), each build's error against PyTorch.
// Node 20 validates relaxed SIMD only with --experimental-wasm-relaxed-simd,
// so the test runs this file in a child process with that flag. Reads dist/.
//
// Usage: node --experimental-wasm-relaxed-simd test/support/relaxed-agreement.mjs DIGITS.csv.gz
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fedAvg, init, Matrix, MLPClassifier, partition } from '../../dist/index.js';
import { loadFashionMnist } from '../../dist/node.js';
import { Network } from '../../dist/models.network.js';

const F = JSON.parse(readFileSync(new URL('../fixtures/nn.json', import.meta.url), 'utf8'));

function fromRowMajor(values, n, d) {
  const m = Matrix.zeros(n, d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) m.data[j * n + i] = values[i * d + j];
  return m;
}

function rowMajor(m) {
  const out = new Float64Array(m.nRows * m.nCols);
  for (let i = 0; i < m.nRows; i++) for (let j = 0; j < m.nCols; j++) out[i * m.nCols + j] = m.data[j * m.nRows + i];
  return out;
}

function relative(actual, expected) {
  if (actual.length !== expected.length) return Infinity;
  let scale = 0;
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    scale = Math.max(scale, Math.abs(expected[i]));
    const err = Math.abs(actual[i] - expected[i]);
    if (!(err <= worst)) worst = err;
  }
  return worst / scale;
}

function network(c) {
  const net = new Network({ sizes: c.sizes, activation: c.activation, outputActivation: c.outputActivation, loss: c.loss, seed: 0 });
  net.setParameters(c.parameters);
  return net;
}

/** The results compared, by name; `torch` maps a name to PyTorch's values for it. */
function everything(digits, fashion) {
  const out = {};
  const torch = {};
  for (const c of F.gradients) {
    const net = network(c);
    const x = fromRowMajor(c.x, c.rows, c.sizes[0]);
    const targets = c.labels ? Int32Array.from(c.labels) : fromRowMajor(c.targets, c.rows, c.sizes.at(-1));
    const g = net.gradient(x, targets);
    out[`${c.name} gradient`] = g.gradient;
    torch[`${c.name} gradient`] = c.gradient;
    g.outputs.forEach((o, l) => {
      out[`${c.name} outputs ${l}`] = rowMajor(o);
      torch[`${c.name} outputs ${l}`] = c.outputs[l];
    });
    net.dispose();
  }
  for (const c of F.epochs) {
    const net = network(c);
    const n = c.order.length;
    const set = net.attach(fromRowMajor(c.x, n, c.sizes[0]), fromRowMajor(c.targets, n, c.sizes.at(-1)));
    const opt = net.optimizer(c.optimizer);
    const epochLoss = net.trainEpoch(set, opt, { batchSize: c.batchSize, seed: 0, order: c.order });
    out[`${c.name} parameters`] = net.getParameters();
    torch[`${c.name} parameters`] = c.parametersAfter;
    out[`${c.name} losses`] = [epochLoss, net.evaluate(set)];
    torch[`${c.name} losses`] = [c.epochLoss, c.lossAfter];
    opt.dispose();
    set.dispose();
    net.dispose();
  }
  // FedAvg over 4 IID clients of the 8x8 digits: a classifier 64-32-10, the defaults' optimizer, 5 rounds
  const clients = partition.iid(digits.X.nRows, { clients: 4, seed: 1 }).indices.map((rows) => ({ X: digits.X.selectRows(rows), labels: Array.from(rows, (r) => digits.labels[r]) }));
  const fed = fedAvg(clients, { network: { sizes: [64, 32, 10], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 }, rounds: 5, epochs: 2, batchSize: 32 });
  out['fedavg digits parameters'] = fed.parameters;
  out['fedavg digits losses'] = fed.history.map((h) => h.loss);
  // Fashion-MNIST, the classifier 784-128-10 at batch 128, 3 epochs of 2,000 images
  const mlp = new MLPClassifier({ hiddenLayerSizes: [128], batchSize: 128, maxIter: 3, randomState: 1 });
  mlp.fit(fashion.train.X, fashion.train.labels);
  out['fashion-mnist parameters'] = mlp.getParameters();
  out['fashion-mnist probabilities'] = mlp.predictProba(fashion.test.X).data;
  const predicted = mlp.predict(fashion.test.X);
  out['fashion-mnist accuracy'] = [predicted.filter((p, i) => p === fashion.test.labels[i]).length / predicted.length];
  mlp.dispose();
  return { out, torch };
}

// a Matrix lives in the instance's memory, which init({ fresh }) replaces: the data are kept as plain arrays
// and made into matrices again for each build
const rows = gunzipSync(readFileSync(process.argv[2])).toString('utf8').trim().split('\n').map((l) => l.split(',').map(Number));
await init({ backend: 'simd', features: ['nn'] });
const plain = async (split, n) => {
  const f = await loadFashionMnist({ split, n, sample: 'stratified', seed: 1 });
  return { rows: f.X.toRows?.() ?? Array.from({ length: f.X.nRows }, (_, i) => Array.from({ length: f.X.nCols }, (_, j) => f.X.data[j * f.X.nRows + i])), labels: Array.from(f.labels) };
};
const fashionRows = { train: await plain('train', 2000), test: await plain('test', 1000) };
const data = () => ({
  digits: { X: Matrix.fromRows(rows.map((r) => r.slice(0, 64).map((v) => v / 16))), labels: rows.map((r) => r[64]) },
  fashion: {
    train: { X: Matrix.fromRows(fashionRows.train.rows), labels: fashionRows.train.labels },
    test: { X: Matrix.fromRows(fashionRows.test.rows), labels: fashionRows.test.labels },
  },
});

const relaxedInfo = await init({ fresh: true, backend: 'relaxed', features: ['nn'] });
let d = data();
const relaxed = everything(d.digits, d.fashion);
const simdInfo = await init({ fresh: true, backend: 'simd', features: ['nn'] });
d = data();
const simd = everything(d.digits, d.fashion);
const result = { relaxedInfo, simdInfo, builds: {}, identical: [], torch: {} };
for (const key of Object.keys(simd.out)) {
  result.builds[key] = relative(relaxed.out[key], simd.out[key]);
  if (result.builds[key] === 0) result.identical.push(key);
}
for (const key of Object.keys(simd.torch)) result.torch[key] = { relaxed: relative(relaxed.out[key], simd.torch[key]), simd: relative(simd.out[key], simd.torch[key]) };
result.accuracy = { relaxed: relaxed.out['fashion-mnist accuracy'][0], simd: simd.out['fashion-mnist accuracy'][0] };
console.log(JSON.stringify(result));
