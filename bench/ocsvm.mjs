// OneClassSVM against scikit-learn on Fashion-MNIST clients of 600 rows x 784
// (the community paper's clients: 90% one class, 10% another), measured in the
// same run: the fit, the decision function of another client's rows, and the
// association phase in small (every client's detector fitted, then every
// client's rows scored by every other client's detector; the issue's bar for
// the full 90-client run is 2x scikit-learn).
import { OneClassSVM } from '../dist/index.js';
import { FASHION_MNIST_DIR, loadFashionMnist } from '../dist/node.js';
import { begin, runPeer, sized, timed } from './common.mjs';

const IMAGES = `${FASHION_MNIST_DIR}/train-images-idx3-ubyte.gz`;
const REPEATS = sized(9, 1);
const CLIENTS = sized(6, 3);
/** a client's rows: 90% of its class, 10% of another */
const ROWS = sized(600, 100);

/** Client c: 90% of its rows of class c and 10% of class (c + 5) % 10, the first not taken by an earlier client. */
function clientIndices(labels) {
  const byClass = Array.from({ length: 10 }, () => []);
  labels.forEach((y, i) => byClass[y].push(i));
  const taken = new Array(10).fill(0);
  const take = (c, k) => byClass[c].slice(taken[c], (taken[c] += k));
  return Array.from({ length: CLIENTS }, (_, c) => [...take(c, ROWS * 0.9), ...take((c + 5) % 10, ROWS * 0.1)].sort((a, b) => a - b));
}

const ms = (fn) => timed(fn, REPEATS).ms;

export async function run() {
  const results = begin('ocsvm', 'npm run bench -- ocsvm');
  // the first 10,000 training rows hold enough of every class
  const { X, labels } = await loadFashionMnist({ n: 10_000 });
  const indices = clientIndices(labels);
  const clients = indices.map((ix) => X.selectRows(ix));
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
    const ours = `${model.nSupport} support vectors, ${model.nIter} iterations`;
    const theirs = `${peer.nSupport} support vectors, ${peer.nIter} iterations`;
    model.dispose();
    const opt = `nu ${options.nu}, gamma '${options.gamma}' (${ours === theirs ? `${ours}, both` : `fedmix ${ours}; scikit-learn ${theirs}`})`;
    lines.push([opt, 'fit', fitMs.toFixed(1), peer.fitMs.toFixed(1), `${(peer.fitMs / fitMs).toFixed(2)}x`]);
    lines.push(['', `decisionFunction (${ROWS} rows)`, decisionMs.toFixed(1), peer.decisionMs.toFixed(1), `${(peer.decisionMs / decisionMs).toFixed(2)}x`]);
    lines.push(['', `${CLIENTS} fits + ${CLIENTS * (CLIENTS - 1)} scorings`, associationMs.toFixed(0), peer.associationMs.toFixed(0), `${(peer.associationMs / associationMs).toFixed(2)}x`]);
  }
  results.print(`OneClassSVM on Fashion-MNIST clients (${ROWS} x 784), ms (median of ${REPEATS}; the ${CLIENTS} fits and scorings once; one thread)`, ['settings', 'work', 'fedmix ms', 'scikit-learn ms', 'speedup'], lines);
  await results.write();
}
