// The threads' per-iteration exchange, A/B in one run (not a suite of run.mjs):
// ms per EM (Lloyd) iteration, wall and CPU of all threads, on 1 thread, on 2
// with the tasks as messages, and on 2 through shared memory (the default in
// Node), interleaved so that the machine's other load hits all three alike.
// node --expose-gc bench/threads-exchange.mjs kmeans|diag|full (REP, HI in the environment).
import { GaussianMixture, KMeans, init as fmInit } from '../dist/index.js';
import { setExchange } from '../dist/parallel.pool.js';
import { blobs } from './common.mjs';
import { emStart } from './gmm-em.mjs';
await fmInit();
const [n, d, k] = [100000, 10, 15];
const LO = 2, HI = Number(process.env.HI ?? 12), REP = Number(process.env.REP ?? 5);
const which = process.argv[2] ?? 'kmeans';
let fit;
if (which === 'kmeans') {
  const X = blobs(n, d, k, 11);
  const init = Array.from({ length: k }, (_, c) => Array.from({ length: d }, (_, j) => X.data[j * n + c * 7]));
  fit = async (t, it) => { const km = new KMeans({ nClusters: k, init, nInit: 1, tol: 0, maxIter: it, threads: t }); await km.fitAsync(X); if (km.nIter !== it) throw new Error('early'); };
} else {
  const X = blobs(n, d, k, 7);
  const init = emStart(X, k, which);
  fit = async (t, it) => { const g = new GaussianMixture({ nComponents: k, covarianceType: which, tol: 0, maxIter: it, threads: t, ...init }); await g.fitAsync(X); g.dispose(); };
}
const meas = async (t, it) => { const c0 = process.cpuUsage(); const t0 = performance.now(); await fit(t, it); const c = process.cpuUsage(c0); return [performance.now() - t0, (c.user + c.system) / 1000]; };
const modes = [['1', 1, 'auto'], ['2 messages', 2, 'messages'], ['2 shared', 2, 'auto']];
for (const [, t, m] of modes) { setExchange(m); await meas(t, LO); }
const res = Object.fromEntries(modes.map(([name]) => [name, []]));
for (let r = 0; r < REP; r++) for (const [name, t, m] of modes) {
  setExchange(m);
  const a = await meas(t, LO), b = await meas(t, HI);
  res[name].push([(b[0] - a[0]) / (HI - LO), (b[1] - a[1]) / (HI - LO)]);
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const one = med(res['1'].map((x) => x[0]));
for (const [name] of modes) { const w = med(res[name].map((x) => x[0])); console.log(which.padEnd(6), `threads ${name}`.padEnd(20), `wall ${w.toFixed(2)} ms/iter`, `cpu ${med(res[name].map((x) => x[1])).toFixed(2)} ms/iter`, `speed-up ${(one / w).toFixed(2)}x`); }
