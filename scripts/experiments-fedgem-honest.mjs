// The other side of FedGEM's checks (EXPERIMENTS.md, FedGEM part d): honest
// clients on real data and real partitions, at fedGEM's defaults (variance
// estimated, phi 1, the separation step) and with phi tuned, counting the
// clients the server excluded. Zero is the bar: every check of
// ts/federated/fedgem/messages.ts says why an honest client cannot trip it.
//
// Partitions of each set's rows (standardized): IID over 10 clients,
// Dirichlet 0.1 and 0.3 over 10 clients (at least 30 rows each, 10 on glass), one class per
// client (as many clients as classes), and quantity skew (IID rows, 10
// clients whose sizes are 2%, 4%, 6% or 10% of the rows). A client's K_c is
// the number of classes holding at least two of its rows.
//
// usage: node scripts/experiments-fedgem-honest.mjs OUT.json [seeds (default 3)]
// (the UCI sets from scripts/setup.sh in .datasets/, the shared ones in ../shared/datasets)
import { readFileSync, writeFileSync } from 'node:fs';
import { fedGEM, init, partition, PHI_GRID, StandardScaler } from '../dist/index.js';
import { labelledFromCsv } from '../dist/experiments.js';

await init();
const [out, seedsArg = '3'] = process.argv.slice(2);
if (!out) throw new Error('usage: node scripts/experiments-fedgem-honest.mjs OUT.json [seeds]');
const shared = process.env.FEDMIX_DATASETS ?? new URL('../../shared/datasets/', import.meta.url).pathname;
const local = new URL('../.datasets/', import.meta.url).pathname;
const sets = [
  ['glass', `${local}glass.csv`, {}],
  ['vowel', `${local}vowel.csv`, {}],
  ['vehicle', `${local}vehicle.csv`, {}],
  ['digits', `${local}digits.csv`, {}],
  ['satellite', `${shared}/satellite.csv`, {}],
  ['abalone', `${shared}/abalone.csv`, { labelGroups: '0-5,6,7,8,9,10,11-12,13-', oneHot: ['sex'] }],
];

function schemes(labels, n, classes, seed) {
  const sizes = [0.02, 0.04, 0.06, 0.1].map((s) => Math.floor(s * n));
  // at least 30 rows per client, or half of a tenth of the rows (glass's 214 rows: 10)
  const minSize = Math.min(30, Math.floor(n / 20));
  return [
    ['IID', () => partition.iid(labels, { clients: 10, seed }).indices],
    ['Dirichlet 0.1', () => partition.dirichlet(labels, { clients: 10, alpha: 0.1, seed, minSize }).indices],
    ['Dirichlet 0.3', () => partition.dirichlet(labels, { clients: 10, alpha: 0.3, seed, minSize }).indices],
    ['one class per client', () => partition.quantity(labels, { clients: classes, alpha: 1, seed }).indices],
    ['quantity skew', () => partition.fullyIid(labels, { sizes, clients: 10, seed, disjoint: true }).indices],
  ];
}

const runs = [];
for (const [name, file, options] of sets) {
  const t = labelledFromCsv(readFileSync(file, 'utf8'), { label: 'label', ...options });
  const X = new StandardScaler().fit(t.X).transform(t.X);
  const labels = t.labels;
  const classes = new Set(labels).size;
  for (let s = 0; s < Number(seedsArg); s++) {
    for (const [scheme, make] of schemes(labels, X.nRows, classes, 1000 * s + 1)) {
      const indices = make();
      const data = indices.map((rows) => X.selectRows(rows));
      const client = indices.map((rows, c) => {
        const count = new Map();
        for (const i of rows) count.set(labels[i], (count.get(labels[i]) ?? 0) + 1);
        return { nComponents: Math.max(1, [...count.values()].filter((k) => k >= 2).length), seed: 1000 * s + c };
      });
      for (const phi of [1, PHI_GRID]) {
        const r = fedGEM(data, { client, phi });
        runs.push({
          data: name,
          scheme,
          seed: 1000 * s + 1,
          phi: phi === 1 ? '1' : 'tune',
          clients: indices.length,
          classes,
          estimatedK: r.estimatedK,
          separationJoins: r.separationJoins,
          uncounted: r.uncounted,
          excluded: r.excluded.map((e) => `client ${e.client}, round ${e.round}: ${e.reason}`),
        });
        for (const c of r.clients) c.dispose();
        process.stderr.write(`${name} ${scheme} seed ${s} phi ${phi === 1 ? 1 : 'tune'}: K ${r.estimatedK} (${classes} classes), excluded ${r.excluded.length}\n`);
      }
    }
  }
}
const excluded = runs.reduce((t, r) => t + r.excluded.length, 0);
writeFileSync(out, JSON.stringify({ runs, excluded, clientsSeen: runs.reduce((t, r) => t + r.clients, 0) }, null, 1));
console.log(`${runs.length} runs, ${runs.reduce((t, r) => t + r.clients, 0)} clients, ${excluded} excluded`);
if (excluded > 0) process.exitCode = 1;
