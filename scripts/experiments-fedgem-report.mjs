// Prints the FedGEM tables of EXPERIMENTS.md from bench/results/fedgem/*.json
// (written by scripts/experiments-fedgem.sh).
import { readFileSync } from 'node:fs';

const dir = new URL('../bench/results/fedgem/', import.meta.url);
const load = (name) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const sd = (v) => {
  const m = mean(v);
  return Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, v.length - 1));
};
const ms = (v, d = 3) => `${mean(v).toFixed(d)} ± ${sd(v).toFixed(d)}`;
/** "10 x9, 9 x1": how often each estimated K came out */
const counts = (runs) => {
  const c = new Map();
  for (const r of runs) c.set(r.estimatedK, (c.get(r.estimatedK) ?? 0) + 1);
  return [...c].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([k, n]) => `${k} ×${n}`).join(', ');
};
const phis = (runs) => {
  const c = new Map();
  for (const r of runs) c.set(r.phi, (c.get(r.phi) ?? 0) + 1);
  return [...c].sort((a, b) => a[0] - b[0]).map(([p, n]) => `${p} ×${n}`).join(', ');
};
const row = (cells) => `| ${cells.join(' | ')} |`;

const settings = { none: 'nominal', clients: 'client imbalance', classes: 'cluster imbalance' };
const deltas = [2, 3, 4, 5, 6, 8];

console.log('## (a) Sensitivity: blobs with a minimum center distance\n');
for (const [key, title] of Object.entries(settings)) {
  console.log(`### ${title}\n`);
  console.log(row(['min. distance', 'FedGEM ARI (phi 1)', 'central GMM ARI', 'FedGEM / central', 'central ARI, all test rows', 'K right (phi 1)', 'estimated K (phi 1)', 'FedGEM ARI (tuned)', 'K right (tuned)', 'estimated K (tuned)', 'phi chosen']));
  console.log(row(new Array(11).fill('---')));
  for (const d of deltas) {
    const f = load(`a-${key}-d${d}-phi1.json`).runs;
    const t = load(`a-${key}-d${d}-phitune.json`).runs;
    const fa = f.map((r) => r.ari);
    const ca = f.map((r) => r.centralAri);
    console.log(row([
      `${d} σ`,
      ms(fa),
      ms(ca),
      (mean(fa) / mean(ca)).toFixed(3),
      ms(f.map((r) => r.centralGlobalAri)),
      `${f.filter((r) => r.estimatedK === r.trueK).length}/${f.length}`,
      counts(f),
      ms(t.map((r) => r.ari)),
      `${t.filter((r) => r.estimatedK === r.trueK).length}/${t.length}`,
      counts(t),
      phis(t),
    ]));
  }
  console.log('');
}

console.log('## (b) Real data\n');
console.log(row(['data', 'phi', 'true K', 'estimated K', 'K right', 'FedGEM ARI', 'central GMM ARI', 'central ARI, all test rows', 'FedGEM silhouette', 'central silhouette', 'phi chosen', 'excluded clients']));
console.log(row(new Array(12).fill('---')));
for (const ds of ['abalone', 'satellite']) {
  for (const p of ['1', 'tune']) {
    const r = load(`b-${ds}-phi${p}.json`);
    const runs = r.runs;
    console.log(row([
      `${ds} (${r.data.features ? r.data.features.length : '?'} features)`,
      p,
      String(runs[0].trueK),
      counts(runs),
      `${runs.filter((x) => x.estimatedK === x.trueK).length}/${runs.length}`,
      ms(runs.map((x) => x.ari)),
      ms(runs.map((x) => x.centralAri)),
      ms(runs.map((x) => x.centralGlobalAri)),
      ms(runs.map((x) => x.silhouette)),
      ms(runs.map((x) => x.centralSilhouette)),
      p === 'tune' ? phis(runs) : '-',
      String(runs.reduce((t, x) => t + x.excluded.length, 0)),
    ]));
  }
}

const bar = load('a-none-d6-phi1.json').runs;
const barT = load('a-none-d6-phitune.json').runs;
console.log('\n## The issue\'s bar (minimum distance 6 σ, 10 clusters, 10 clients holding 3-6, nominal)\n');
for (const [name, runs] of [['phi 1', bar], ['phi tuned', barT]]) {
  const right = runs.filter((r) => r.estimatedK === r.trueK).length;
  const ratio = mean(runs.map((r) => r.ari)) / mean(runs.map((r) => r.centralAri));
  console.log(`- ${name}: estimated K = 10 in ${right} of ${runs.length} seeds (bar: 9); ARI ${mean(runs.map((r) => r.ari)).toFixed(4)} against central ${mean(runs.map((r) => r.centralAri)).toFixed(4)}: ${ratio.toFixed(3)} (bar: 0.95)`);
}
