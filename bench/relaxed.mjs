// Issue 27 item 3: the relaxed-SIMD build's networks (fused multiply-adds in the
// GEMM, docs/wasm.md) against the SIMD build's and PyTorch's, interleaved: each
// round runs PyTorch (bench/peers/nn.py, one epoch of each case after its
// warm-up epoch), then one epoch of each case on the relaxed build, then on the
// SIMD build (init({ fresh: true, backend }) between them, a warm-up epoch on
// each), so that the machine's load hits all three alike. The cases are
// bench/nn.mjs's (Fashion-MNIST, 60,000 rows, Adam lr 1e-3). Medians over the
// rounds; the load average is printed at the start and the end.
//
// Node 20 validates relaxed SIMD only with a flag:
//   node --experimental-wasm-relaxed-simd bench/relaxed.mjs [--quick] [--rounds N]
// GaussianMixture's EM is not in the relaxed build (its kernels are the core
// module's, which the relaxed build takes from the SIMD build): nothing to compare there.
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import * as fedmix from '../dist/index.js';
import * as fedmixNode from '../dist/node.js';
import { Network } from '../dist/models.network.js';
import { begin, median, runPeer, sized } from './common.mjs';
import { CASES } from './nn.mjs';

/** rounds of the interleaving (`--rounds N`; 3 by default, 1 in quick mode) */
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : sized(3, 1);
const ROWS = sized(undefined, 2_000);
const ADAM = { name: 'adam', learningRate: 1e-3 };

/** Seconds of one epoch of case `c` on the running build, after a warm-up epoch. */
function epochSeconds(data, c) {
  const net = new Network(c.network);
  const set = net.attach(data.X, c.target === 'x' ? data.X : data.labels);
  const opt = net.optimizer(ADAM);
  try {
    net.trainEpoch(set, opt, { batchSize: c.batchSize, seed: 1 });
    const t0 = performance.now();
    const loss = net.trainEpoch(set, opt, { batchSize: c.batchSize, seed: 2 });
    return { seconds: (performance.now() - t0) / 1000, loss };
  } finally {
    opt.dispose();
    set.dispose();
    net.dispose();
  }
}

export async function run() {
  const probe = await fedmix.init({ features: ['nn'] });
  if (probe.backend !== 'relaxed') {
    throw new Error(`this engine does not validate relaxed SIMD (init() chose '${probe.backend}'); run: node --experimental-wasm-relaxed-simd bench/relaxed.mjs`);
  }
  const results = begin('relaxed', 'node --experimental-wasm-relaxed-simd bench/relaxed.mjs');
  const data = await fedmixNode.loadFashionMnist({ split: 'train', ...(ROWS ? { n: ROWS } : {}) });
  const times = new Map(CASES.map((c) => [c.name, { torch: [], relaxed: [], simd: [], loss: {} }]));
  let peer;
  for (let r = 0; r < ROUNDS; r++) {
    peer = runPeer('nn.py', { folder: fedmixNode.FASHION_MNIST_DIR, repeats: 1, cases: CASES.map((c) => c.name), ...(ROWS ? { rows: ROWS } : {}) });
    for (const p of peer.cases) times.get(p.name).torch.push(median(p.seconds));
    for (const backend of ['relaxed', 'simd']) {
      const info = await fedmix.init({ fresh: true, backend, features: ['nn'] });
      if (info.backend !== backend) throw new Error(`asked for ${backend}, running ${info.backend}`);
      for (const c of CASES) {
        const e = epochSeconds(data, c);
        times.get(c.name)[backend].push(e.seconds);
        times.get(c.name).loss[backend] = e.loss;
      }
    }
    console.log(`round ${r + 1} of ${ROUNDS} done, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  }
  const rows = CASES.map((c) => {
    const t = times.get(c.name);
    const [torch, relaxed, simd] = [median(t.torch), median(t.relaxed), median(t.simd)];
    return [c.label, relaxed.toFixed(2), simd.toFixed(2), torch.toFixed(2), `${(simd / relaxed).toFixed(2)}x`, `${(torch / relaxed).toFixed(2)}x`, `${(torch / simd).toFixed(2)}x`];
  });
  results.print(
    `Networks, relaxed-SIMD build against SIMD and PyTorch ${peer.torch} (1 thread): seconds per epoch over ${peer.rows} Fashion-MNIST rows, median of ${ROUNDS} interleaved rounds`,
    ['case', 'relaxed s', 'SIMD s', 'PyTorch s', 'relaxed vs SIMD', 'PyTorch / relaxed', 'PyTorch / SIMD'],
    rows,
  );
  for (const c of CASES) {
    const l = times.get(c.name).loss;
    console.log(`${c.label}: last epoch's mean loss, relaxed ${l.relaxed.toFixed(5)}, SIMD ${l.simd.toFixed(5)}`);
  }
  await results.write();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run();
}
