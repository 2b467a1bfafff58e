// The E-step (GaussianMixture.score: sq_dist + log_normalize) of two or more builds of
// dist/ in one process, interleaved, rotating the order every repeat: min and 10th
// percentile of many short runs, which a loaded machine disturbs least. Each argument
// is a copy of dist/ inside the checkout (so that apache-arrow resolves), e.g.
//   cp -r dist .ab/base  (then rebuild, cp -r dist .ab/new)
//   node --no-liftoff scripts/ab-estep.mjs .ab/base,.ab/new 400
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const tags = process.argv[2].split(',');
const REPS = Number(process.argv[3] ?? 30);
const libs = {};
for (const t of tags) { libs[t] = await import(pathToFileURL(resolve(t, 'index.js')).href); await libs[t].init(); }
const { blobs, median } = await import('../bench/common.mjs');
const CONFIGS = [ { n: 4096, d: 10, k: 15, type: 'diag' }, { n: 4096, d: 38, k: 10, type: 'diag' }, { n: 4096, d: 9, k: 4, type: 'diag' }, { n: 4096, d: 10, k: 15, type: 'full' }, { n: 4096, d: 38, k: 10, type: 'full' }, { n: 4096, d: 38, k: 10, type: 'tied' } ];
for (const { n, d, k, type } of CONFIGS) {
  const X0 = blobs(n, d, k, 7);
  const ms = {}, Xs = {}, res = {}, sc = {};
  for (const t of tags) {
    const L = libs[t];
    Xs[t] = new L.Matrix(X0.data, n, d);
    ms[t] = new L.GaussianMixture({ nComponents: k, covarianceType: type, maxIter: 3, seed: 0 }).fit(Xs[t]);
    res[t] = [];
  }
  for (let r = 0; r < REPS; r++) for (const t of [...tags.slice(r % tags.length), ...tags.slice(0, r % tags.length)]) {
    const t0 = performance.now(); sc[t] = ms[t].score(Xs[t]); res[t].push(performance.now() - t0);
  }
  const min = (a) => Math.min(...a); const p10 = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 10)];
  const [b0, m0] = [min(res[tags[0]]), median(res[tags[0]])];
  console.log(`${n}x${d} K=${k} ${type}: ` + tags.map((t) => `${t} min ${min(res[t]).toFixed(3)} (${(b0 / min(res[t])).toFixed(3)}x) p10 ${p10(res[t]).toFixed(3)} (${(p10(res[tags[0]]) / p10(res[t])).toFixed(3)}x) score ${sc[t]}`).join(' | '));
  for (const t of tags) ms[t].dispose();
}
