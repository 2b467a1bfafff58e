// OneClassSVM against scikit-learn on Fashion-MNIST clients of 600 rows x 784
// (the community paper's clients: 90% one class, 10% another), measured in the
// same run: the fit, the decision function of another client's rows, and the
// association phase in small (every client's detector fitted, then every
// client's rows scored by every other client's detector; the bar for
// the full 90-client run is 2x scikit-learn).
import { OneClassSVM } from '../dist/index.js';
import { FASHION_MNIST_DIR, loadFashionMnist } from '../dist/node.js';
import { median, runPeer, table } from './common.mjs';

const IMAGES = `${FASHION_MNIST_DIR}/train-images-idx3-ubyte.gz`;
const REPEATS = 9;
const CLIENTS = 6;

/** Client c: 540 rows of class c and 60 of class (c + 5) % 10, the first not taken by an earlier client. */
function clientIndices(labels) {
  const byClass = Array.from({ length: 10 }, () => []);
  labels.forEach((y, i) => byClass[y].push(i));
  const taken = new Array(10).fill(0);
  const take = (c, k) => byClass[c].slice(taken[c], (taken[c] += k));
  return Array.from({ length: CLIENTS }, (_, c) => [...take(c, 540), ...take((c + 5) % 10, 60)].sort((a, b) => a - b));
}

function ms(fn) {
  fn();
  const out = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

export async function run() {
  // the first 10,000 training rows hold enough of every class
  const { X, labels } = await loadFashionMnist({ n: 10_000 });
  const indices = clientIndices(labels);
  const clients = indices.map((ix) => X.selectRows(ix));
  const out = [];
  const lines = [];
  for (const options of [{ nu: 0.5, gamma: 'auto' }, { nu: 0.1, gamma: 'scale' }]) {
    const model = new OneClassSVM(options).fit(clients[0]);
    const fitMs = ms(() => new OneClassSVM(options).fit(clients[0]).dispose());
    const decisionMs = ms(() => model.decisionFunction(clients[1]));
    const t0 = performance.now();
    const models = clients.map((x) => new OneClassSVM(options).fit(x));
    clients.forEach((x, i) => models.forEach((m, j) => i !== j && m.predict(x)));
    const associationMs = performance.now() - t0;
    models.forEach((m) => m.dispose());
    const peer = runPeer('ocsvm.py', { images: IMAGES, clients: indices, options, repeats: REPEATS });
    const r = { options, fitMs, decisionMs, associationMs, nIter: model.nIter, nSupport: model.nSupport, sklearn: peer };
    model.dispose();
    out.push(r);
    const opt = `nu ${options.nu}, gamma '${options.gamma}' (${r.nSupport} SVs, ${r.nIter} iterations; scikit-learn ${peer.nSupport}, ${peer.nIter})`;
    lines.push([opt, 'fit (600 x 784)', fitMs.toFixed(1), peer.fitMs.toFixed(1), `${(peer.fitMs / fitMs).toFixed(2)}x`]);
    lines.push([opt, 'decisionFunction (600 rows)', decisionMs.toFixed(1), peer.decisionMs.toFixed(1), `${(peer.decisionMs / decisionMs).toFixed(2)}x`]);
    lines.push([opt, `${CLIENTS} fits + ${CLIENTS * (CLIENTS - 1)} scorings`, associationMs.toFixed(0), peer.associationMs.toFixed(0), `${(peer.associationMs / associationMs).toFixed(2)}x`]);
  }
  console.log(`\nOneClassSVM on Fashion-MNIST clients (600 x 784), ms (median of ${REPEATS}; one thread)`);
  console.log(table(['settings', 'work', 'fedmix ms', 'scikit-learn ms', 'speedup'], lines));
  return out;
}
