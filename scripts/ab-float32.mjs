// GaussianMixture's precision 'float32' EM of two or more builds of dist/ in one
// process, interleaved (the order rotating every repeat): ms of CPU per EM
// iteration ((HI - LO) iterations' difference, as bench/gmm-float32.mjs), median
// and min per build and their ratios to the first. Each argument is a copy of
// dist/ that resolves apache-arrow (inside the checkout), e.g.
//   cp -r dist node_modules/.ab/base  (then rebuild, cp -r dist node_modules/.ab/new)
//   node scripts/ab-float32.mjs node_modules/.ab/base,node_modules/.ab/new [repeats] [diag,full]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const tags = process.argv[2].split(',');
const REPS = Number(process.argv[3] ?? 5);
const TYPES = (process.argv[4] ?? 'diag').split(',');
const N = Number(process.env.AB_N ?? 100_000);
const libs = {};
for (const t of tags) { libs[t] = await import(pathToFileURL(resolve(t, 'index.js')).href); await libs[t].init(); }
const { blobs, median } = await import('../bench/common.mjs');
const [LO, HI] = [2, 8];
for (const { n, d, k } of [{ n: N, d: 10, k: 15 }, { n: N, d: 38, k: 10 }]) {
  const X0 = blobs(n, d, k, 7);
  for (const type of TYPES) {
    const res = {};
    const run = {};
    for (const t of tags) {
      const L = libs[t];
      const X = new L.Matrix(X0.data, n, d);
      const g0 = new L.GaussianMixture({ nComponents: k, covarianceType: type, maxIter: 1, seed: 0 }).fit(X);
      const init = { weightsInit: g0.weights, meansInit: g0.means, precisionsInit: g0.precisions };
      g0.dispose();
      const time = (iters) => {
        const t0 = process.cpuUsage();
        const g = new L.GaussianMixture({ nComponents: k, covarianceType: type, tol: 0, maxIter: iters, precision: 'float32', ...init }).fit(X);
        const dt = process.cpuUsage(t0);
        // the fitted model's bits, so that builds meant to agree to the bit can be checked
        const lb = `${g.lowerBound} ${Array.from(g.means).concat(Array.from(g.precisions)).reduce((h, v) => (h * 31 + Math.round(v * 1e12)) % 1e15, 0)}`;
        g.dispose();
        return [(dt.user + dt.system) / 1000, lb];
      };
      run[t] = () => {
        const [a] = time(LO);
        const [b, lb] = time(HI);
        return [(b - a) / (HI - LO), lb];
      };
      run[t]();
      res[t] = [];
    }
    const lbs = {};
    for (let r = 0; r < REPS; r++) for (const t of [...tags.slice(r % tags.length), ...tags.slice(0, r % tags.length)]) {
      const [ms, lb] = run[t]();
      res[t].push(ms);
      lbs[t] = lb;
    }
    const m0 = median(res[tags[0]]);
    const min0 = Math.min(...res[tags[0]]);
    console.log(`${n}x${d} K=${k} ${type}: ` + tags.map((t) => `${t} med ${median(res[t]).toFixed(2)} (${(m0 / median(res[t])).toFixed(3)}x) min ${Math.min(...res[t]).toFixed(2)} (${(min0 / Math.min(...res[t])).toFixed(3)}x) lb ${lbs[t]}`).join(' | '));
  }
}
