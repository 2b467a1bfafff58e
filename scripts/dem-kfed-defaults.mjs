#!/usr/bin/env node
// DEM's k-FED initialization at the library's defaults (K local clusters,
// count-weighted k-means grouping) against the paper's settings (ceil(sqrt(K))
// local clusters, one seed device), on standardized real data: mean
// log-likelihood per row of the pooled rows, seeds 1-3, against one central fit.
// docs/algorithms/dem.md summarizes a run. Run after npm run build:
//   node scripts/dem-kfed-defaults.mjs
import { readFileSync } from 'node:fs';
import { init, distributedEM, GaussianMixture, Matrix } from '../dist/index.js';
await init();
function load(name) {
  const lines = readFileSync(new URL(`../../shared/datasets/${name}.csv`, import.meta.url), 'utf8').trim().split('\n');
  const head = lines[0].trim().split(',').map((h) => h.trim());
  const rows = lines.slice(1).map((l) => l.trim().split(','));
  const lab = head.indexOf('label');
  // numeric columns other than the label (abalone's sex is text)
  const cols = head.map((h, j) => j).filter((j) => j !== lab && rows.every((r) => r[j] !== '' && Number.isFinite(Number(r[j]))));
  const X = rows.map((r) => cols.map((j) => Number(r[j])));
  const d = cols.length, n = X.length;
  for (let j = 0; j < d; j++) { let m = 0, s = 0; for (const r of X) m += r[j]; m /= n; for (const r of X) s += (r[j] - m) ** 2; s = Math.sqrt(s / n) || 1; for (const r of X) r[j] = (r[j] - m) / s; }
  return { X, y: rows.map((r) => r[lab]) };
}
for (const name of ['abalone', 'satellite', 'letter']) {
  let { X, y } = load(name); if (X.length > 6000) { X = X.slice(0, 6000); y = y.slice(0, 6000); }
  const labels = [...new Set(y)].sort();
  for (const K of name === 'abalone' ? [3, 5, 8] : [4, 6, 9]) for (const C of name === 'abalone' ? [2, 5] : [2, 3, 6]) {
    // abalone: IID (row i to client i % C); the others: each client the rows of its share of the classes
    const parts = Array.from({ length: C }, (_, c) => X.filter((_, i) => (name === 'abalone' ? i : labels.indexOf(y[i])) % C === c));
    const central = new GaussianMixture({ nComponents: K, covarianceType: 'diag', seed: 1 }); central.fit(Matrix.from(X));
    const out = [`${name} K=${K} C=${C} central ${central.score(Matrix.from(X)).toFixed(3)}`];
    for (const opts of [{}, { kfedLocalClusters: Math.ceil(Math.sqrt(K)), kfedGrouping: 'seed-device' }]) {
      const vals = [];
      for (const seed of [1, 2, 3]) { try { const r = distributedEM(parts, { nComponents: K, nFeatures: X[0].length, covarianceType: 'diag', seed, ...opts }); vals.push(r.model.score(Matrix.from(X)).toFixed(3)); } catch (e) { vals.push('ERR'); } }
      out.push(`${JSON.stringify(opts)} ${vals.join('/')}`);
    }
    console.log(out.join(' | '));
  }
}
