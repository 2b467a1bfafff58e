// Prints the FedGEM tables of EXPERIMENTS.md from bench/results/fedgem/*.json
// (written by scripts/experiments-fedgem.sh). Parts c and d are printed when
// their files are there; part d compares the blobs with the results committed
// before the separation step (git show BEFORE:..., BEFORE below).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** The commit whose committed results are "before" (the paper's merge alone, every component counted). */
const BEFORE = '94eb170';

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

// part c: sigma^2 estimated federatedly
const there = (name) => existsSync(new URL(name, dir));
const right = (runs) => `${runs.filter((r) => r.estimatedK === r.trueK).length}/${runs.length}`;
const g3 = (v) => (v >= 0.1 ? v.toFixed(3) : v.toPrecision(3));
const est = (runs) => {
  const v = runs.map((r) => r.varianceEstimate.variance);
  return `${g3(mean(v))} ± ${g3(sd(v))}`;
};
if (there('c-none-none-d2-phi1.json')) {
  console.log('\n## (c) The variance estimated federatedly\n');
  for (const [scale, title] of [['none', 'blobs as drawn (true sigma^2 = 1)'], ['standard', 'blobs standardized (features z-scored on the training rows)']]) {
    console.log(`### ${title}\n`);
    const known = scale === 'none' ? 'a-' : 'c-standard-known-';
    console.log(row(['setting', 'min. distance', 'sigma^2 estimated', 'K right (phi 1): estimated / sigma^2 = 1', 'estimated K (phi 1, estimated sigma^2)', 'FedGEM ARI (phi 1): estimated / sigma^2 = 1', 'K right (tuned): estimated / sigma^2 = 1', 'FedGEM ARI (tuned): estimated / sigma^2 = 1']));
    console.log(row(new Array(8).fill('---')));
    for (const [key, name] of Object.entries(settings)) {
      for (const d of deltas) {
        const f = load(`c-${scale}-${key}-d${d}-phi1.json`).runs;
        const t = load(`c-${scale}-${key}-d${d}-phitune.json`).runs;
        const kf = there(`${known}${key}-d${d}-phi1.json`) ? load(`${known}${key}-d${d}-phi1.json`).runs : undefined;
        const kt = there(`${known}${key}-d${d}-phitune.json`) ? load(`${known}${key}-d${d}-phitune.json`).runs : undefined;
        console.log(row([
          name,
          `${d} σ`,
          est(f),
          `${right(f)} / ${kf ? right(kf) : '-'}`,
          counts(f),
          `${mean(f.map((r) => r.ari)).toFixed(3)} / ${kf ? mean(kf.map((r) => r.ari)).toFixed(3) : '-'}`,
          `${right(t)} / ${kt ? right(kt) : '-'}`,
          `${mean(t.map((r) => r.ari)).toFixed(3)} / ${kt ? mean(kt.map((r) => r.ari)).toFixed(3) : '-'}`,
        ]));
      }
    }
    console.log('');
  }
  console.log('### real data (standardized), sigma^2 estimated against sigma^2 = 1 (part b)\n');
  console.log(row(['data', 'phi', 'sigma^2 estimated', 'estimated K (true K)', 'K right: estimated / sigma^2 = 1', 'FedGEM ARI: estimated / sigma^2 = 1', 'central GMM ARI', 'FedGEM silhouette: estimated / sigma^2 = 1', 'phi chosen (estimated)']));
  console.log(row(new Array(9).fill('---')));
  for (const ds of ['abalone', 'satellite']) {
    for (const p of ['1', 'tune']) {
      const c = load(`c-${ds}-phi${p}.json`).runs;
      const b = load(`b-${ds}-phi${p}.json`).runs;
      console.log(row([
        ds,
        p,
        est(c),
        `${counts(c)} (${c[0].trueK})`,
        `${right(c)} / ${right(b)}`,
        `${ms(c.map((x) => x.ari))} / ${ms(b.map((x) => x.ari))}`,
        ms(c.map((x) => x.centralAri)),
        `${mean(c.map((x) => x.silhouette)).toFixed(3)} / ${mean(b.map((x) => x.silhouette)).toFixed(3)}`,
        p === 'tune' ? phis(c) : '-',
      ]));
    }
  }
}

// part d: real data at the defaults, before and after the separation step
if (there('d-glass.json')) {
  const sets = ['glass', 'vowel', 'vehicle', 'digits', 'satellite', 'abalone', 'letter', 'shuttle'].filter((n) => there(`d-${n}.json`));
  const range = (runs) => `${Math.min(...runs.map((r) => r.estimatedK))}-${Math.max(...runs.map((r) => r.estimatedK))}`;
  const k = (runs) => `${ms(runs.map((r) => r.estimatedK), 1)} (${range(runs)})`;
  const within = (runs) => `${runs.filter((r) => r.estimatedK <= 1.5 * r.trueK && r.estimatedK >= r.trueK / 1.5).length}/${runs.length}`;
  console.log('\n## (d) The number of clusters on real data at the defaults\n');
  console.log(row(['data', 'classes', 'estimated K before', 'estimated K, paper\'s merge alone', 'estimated K (default)', 'within 1.5x (default)', 'joined / uncounted', 'central BIC K (full)', 'central BIC K (spherical)']));
  console.log(row(new Array(9).fill('---')));
  for (const n of sets) {
    const on = load(`d-${n}.json`).runs;
    const off = load(`d-${n}-off.json`).runs;
    const before = there(`d-${n}-before.json`) ? load(`d-${n}-before.json`).runs : undefined;
    const bic = there(`d-${n}-central-bic.json`) ? load(`d-${n}-central-bic.json`) : undefined;
    const peer = (cov) => (bic?.covariance[cov] ? `${bic.covariance[cov].meanK.toFixed(1)} ± ${bic.covariance[cov].stdK.toFixed(1)}${bic.covariance[cov].hitMaxK ? ` (max ${bic.maxK} ×${bic.covariance[cov].hitMaxK})` : ''}` : '-');
    console.log(row([
      `${n} (${on.length} seeds)`,
      String(on[0].trueK),
      before ? k(before) : '-',
      k(off),
      k(on),
      within(on),
      `${mean(on.map((r) => r.separationJoins)).toFixed(1)} / ${mean(on.map((r) => r.uncounted)).toFixed(1)}`,
      peer('full'),
      peer('spherical'),
    ]));
  }
  console.log('');
  console.log(row(['data', 'FedGEM ARI before', 'FedGEM ARI, paper\'s merge alone', 'FedGEM ARI (default)', 'central GMM ARI, true K (per client)', 'central ARI, true K, all test rows', 'central BIC ARI (full), held-out rows', 'excluded clients']));
  console.log(row(new Array(8).fill('---')));
  for (const n of sets) {
    const on = load(`d-${n}.json`).runs;
    const off = load(`d-${n}-off.json`).runs;
    const before = there(`d-${n}-before.json`) ? load(`d-${n}-before.json`).runs : undefined;
    const bic = there(`d-${n}-central-bic.json`) ? load(`d-${n}-central-bic.json`) : undefined;
    const full = bic?.covariance.full;
    console.log(row([
      n,
      before ? ms(before.map((r) => r.ari)) : '-',
      ms(off.map((r) => r.ari)),
      ms(on.map((r) => r.ari)),
      ms(on.map((r) => r.centralAri)),
      ms(on.map((r) => r.centralGlobalAri)),
      full ? `${full.meanAri.toFixed(3)} ± ${full.stdAri.toFixed(3)}` : '-',
      String([...on, ...off].reduce((t, r) => t + r.excluded.length, 0)),
    ]));
  }
  // the blobs: K right per cell, before (the results committed at BEFORE) and now
  const committed = (name) => {
    try {
      return JSON.parse(execFileSync('git', ['show', `${BEFORE}:bench/results/fedgem/${name}`], { encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] })).runs;
    } catch {
      return undefined;
    }
  };
  console.log(`\n### The blobs: K right (phi 1) before (the results of commit ${BEFORE}) / now\n`);
  console.log(row(['part', 'setting', ...deltas.map((d) => `${d} σ`)]));
  console.log(row(new Array(2 + deltas.length).fill('---')));
  for (const [part, prefix] of [['a (sigma^2 = 1)', 'a-'], ['c (estimated, as drawn)', 'c-none-'], ['c (estimated, standardized)', 'c-standard-']]) {
    for (const [key, name] of Object.entries(settings)) {
      const cells = deltas.map((d) => {
        const file = `${prefix}${key}-d${d}-phi1.json`;
        const old = committed(file);
        return `${old ? right(old) : '-'} / ${there(file) ? right(load(file).runs) : '-'}`;
      });
      console.log(row([part, name, ...cells]));
    }
  }
  if (there('d-honest.json')) {
    const h = load('d-honest.json');
    const by = new Map();
    for (const r of h.runs) {
      const e = by.get(r.scheme) ?? { runs: 0, clients: 0, excluded: 0 };
      e.runs += 1;
      e.clients += r.clients;
      e.excluded += r.excluded.length;
      by.set(r.scheme, e);
    }
    console.log('\n### Honest clients on real partitions: exclusions\n');
    console.log(row(['partition', 'runs', 'clients', 'excluded']));
    console.log(row(new Array(4).fill('---')));
    for (const [scheme, e] of by) console.log(row([scheme, String(e.runs), String(e.clients), String(e.excluded)]));
    console.log(row(['all', String(h.runs.length), String(h.clientsSeen), String(h.excluded)]));
  }
}
