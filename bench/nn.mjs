// Issue 12, item 6: one epoch over the 60,000 Fashion-MNIST training rows of
// the 784-64-32-64-784 autoencoder (ReLU, sigmoid output, MSE, Adam lr 1e-3) at
// batch 32 and at batch 128, and of a 784-128-10 classifier (ReLU, softmax
// cross-entropy, Adam) at batch 128: fedmix's Network against PyTorch 1.13 on
// one thread (bench/peers/nn.py), same files, same run. Each side trains one
// epoch to warm up, then times REPEATS epochs (median). GFLOP/s counts forward
// + backward as 3 x the forward multiply-adds x 2 flops (the peer's figure).
// The bar: at least as fast as PyTorch at batch 32, at least 0.6x at 128.
//
// `node bench/nn.mjs` runs it alone; `npm run bench -- nn` with the others.
// While the engine (branch nn-core) has not landed, `Network` is not exported:
// the bench then prints PyTorch's side and says so, and exits 0.
import { pathToFileURL } from 'node:url';
import * as fedmix from '../dist/index.js';
import * as fedmixNode from '../dist/node.js';
import { begin, median, runPeer, sized, table } from './common.mjs';
import { wasm } from './wasm-handle.mjs';

const REPEATS = sized(3, 1);
/** quick mode: the first 2,000 training rows (normally all 60,000) */
const ROWS = sized(undefined, 2_000);
const ADAM = { name: 'adam', learningRate: 1e-3 };

/** The three cases, named as the peer names them. */
export const CASES = [
  { name: 'autoencoder-32', label: 'autoencoder 784-64-32-64-784, batch 32', bar: 1.0, batchSize: 32, target: 'x',
    network: { sizes: [784, 64, 32, 64, 784], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 } },
  { name: 'autoencoder-128', label: 'autoencoder 784-64-32-64-784, batch 128', bar: 0.6, batchSize: 128, target: 'x',
    network: { sizes: [784, 64, 32, 64, 784], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 } },
  // a softmax output with softmax cross-entropy (PyTorch: CrossEntropyLoss on the logits); the two names
  // are the engine's work-in-progress ones (crates/fedmix-core/src/nn), the only ones not in the agreed API
  { name: 'classifier-128', label: 'classifier 784-128-10, batch 128', bar: undefined, batchSize: 128, target: 'labels',
    network: { sizes: [784, 128, 10], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 } },
];

/** fedmix's internal Network class, from the public exports or fedmix/node; undefined until the engine lands. */
export function networkClass() {
  return fedmix.Network ?? fedmixNode.Network;
}

/**
 * The measured f32x4 multiply-add peak of the SIMD build, in GFLOP/s, or
 * undefined: the hook for a probe the WASM core does not export yet. The
 * contract it waits for: `fm_peak_probe_f32x4(iterations) -> f64`, a loop of
 * `iterations` steps over independent f32x4 accumulators (enough of them to
 * hide the latency of a multiply and an add), returning the number of flops it
 * performed (a multiply and an add count 2 per lane); this times it and divides.
 * No number is made up where the core cannot measure one.
 */
export function measuredF32x4Peak() {
  const w = wasm();
  if (typeof w.fm_peak_probe_f32x4 !== 'function') return undefined;
  w.fm_peak_probe_f32x4(1e6); // warm up: tier-up to optimized code
  const gflops = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    const flops = w.fm_peak_probe_f32x4(sized(5e7, 1e6));
    gflops.push(flops / ((performance.now() - t0) / 1000) / 1e9);
  }
  return median(gflops);
}

/** Seconds per epoch (median of REPEATS after one warm-up epoch) and the mean losses, or undefined without Network. */
function fedmixEpochs(Network, data, c) {
  const net = new Network(c.network);
  const set = net.attach(data.X, c.target === 'x' ? data.X : data.labels);
  const opt = net.optimizer(ADAM);
  try {
    const seconds = [];
    const loss = [];
    net.trainEpoch(set, opt, { batchSize: c.batchSize, seed: 1 }); // warm-up
    for (let r = 0; r < REPEATS; r++) {
      const t0 = performance.now();
      loss.push(net.trainEpoch(set, opt, { batchSize: c.batchSize, seed: 2 + r }));
      seconds.push((performance.now() - t0) / 1000);
    }
    return { seconds: median(seconds), loss };
  } finally {
    opt.dispose();
    set.dispose();
    net.dispose();
  }
}

/** `Network` may be passed in, to try the bench on another implementation of the same API. */
export async function run({ Network = networkClass() } = {}) {
  const results = begin('nn', 'node bench/nn.mjs');
  const peer = runPeer('nn.py', { folder: fedmixNode.FASHION_MNIST_DIR, repeats: REPEATS, cases: CASES.map((c) => c.name), ...(ROWS ? { rows: ROWS } : {}) });
  const byName = new Map(peer.cases.map((p) => [p.name, p]));
  const peak = measuredF32x4Peak();
  const gf = (flops, s) => flops / s / 1e9;
  const title = `Networks: one epoch over the ${peer.rows} Fashion-MNIST training rows, Adam lr 1e-3, float32; seconds per epoch (median of ${REPEATS} after a warm-up epoch); PyTorch ${peer.torch}, ${peer.threads} thread`;
  if (!Network) {
    console.log(`\n${title}`);
    console.log(table(['case', 'PyTorch s', 'PyTorch GFLOP/s', 'PyTorch loss'], CASES.map((c) => {
      const p = byName.get(c.name);
      const s = median(p.seconds);
      return [c.label, s.toFixed(3), gf(p.flopsPerEpoch, s).toFixed(2), p.loss.at(-1).toFixed(4)];
    })));
    console.log('fedmix: Network is not exported by dist/index.js or dist/node.js yet (the engine is on branch nn-core); build with it (npx tsup) to compare. PyTorch alone above.');
    return;
  }
  const data = await fedmixNode.loadFashionMnist({ split: 'train', ...(ROWS ? { n: ROWS } : {}) });
  const rows = [];
  const losses = [];
  for (const c of CASES) {
    const p = byName.get(c.name);
    const torchS = median(p.seconds);
    let ours;
    try {
      ours = fedmixEpochs(Network, data, c);
    } catch (e) {
      // one case the engine refuses (an option it names otherwise) does not hide the others
      console.log(`fedmix could not run ${c.label}: ${e?.message ?? e}`);
      rows.push([c.label, '-', torchS.toFixed(2), '-', c.bar === undefined ? '-' : `${c.bar.toFixed(1)}x`, '-', '-']);
      continue;
    }
    const ratio = torchS / ours.seconds;
    const ourGf = gf(p.flopsPerEpoch, ours.seconds);
    rows.push([
      c.label,
      ours.seconds.toFixed(2),
      torchS.toFixed(2),
      `${ratio.toFixed(2)}x`,
      c.bar === undefined ? '-' : `${c.bar.toFixed(1)}x, ${ratio >= c.bar ? 'met' : 'NOT met'}`,
      ourGf.toFixed(0),
      peak === undefined ? '-' : `${((100 * ourGf) / peak).toFixed(0)}%`,
    ]);
    losses.push(`${c.label}: fedmix ${ours.loss.at(-1).toFixed(4)}, PyTorch ${p.loss.at(-1).toFixed(4)} (PyTorch ${gf(p.flopsPerEpoch, torchS).toFixed(2)} GFLOP/s)`);
  }
  results.print(title, ['case', 'fedmix s', 'PyTorch s', 'speed vs PyTorch', 'issue bar', 'fedmix GFLOP/s', 'of f32x4 peak'], rows);
  console.log(`last epoch's mean loss:\n${losses.join('\n')}`);
  console.log(
    peak === undefined
      ? 'f32x4 peak: not measured (the WASM core exports no fm_peak_probe_f32x4; see measuredF32x4Peak in bench/nn.mjs)'
      : `f32x4 multiply-add peak, measured: ${peak.toFixed(2)} GFLOP/s (SIMD build, one thread)`,
  );
  await results.write();
}

// run alone: node bench/nn.mjs
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await fedmix.init();
  await run();
}
