// Honest federations on every shared dataset (test/support/honest-federations.mjs):
// FedGenGMM (both server steps; the sampled one also with a declared feature
// range on min-max scaled rows) and MDM (fitMdm, user groups, K selection,
// privacy with clipping, on the class histograms) at their defaults, under the
// partitions of issue 23, 20 clients each; counts exclusions (the bar is zero)
// and the runs that failed. FedGenGMM's scale suspicion is consulted only when
// the global fit fails; which clients it would name on honest uploads is
// counted by test/honest-federations.test.ts (it needs the sources' internals).
// Build first (bash scripts/setup.sh), then:
//   node scripts/honest-federations.mjs [--datasets satellite,letter] [--json out.json]
//   node scripts/honest-federations.mjs --report out.json [more.json ...]
import { readFileSync, writeFileSync } from 'node:fs';
import * as f from '../dist/index.js';
import { labelledFromCsv } from '../dist/experiments.js';
import { classesOf, histograms, honestFedGenGMM, honestMdm, honestPartition, SCHEMES } from '../test/support/honest-federations.mjs';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const dataDir = process.env.FEDMIX_DATASETS ?? new URL('../../shared/datasets/', import.meta.url).pathname;
const DATASETS = [
  { name: 'satellite', read: { label: 'label' } },
  { name: 'letter', read: { label: 'label' } },
  { name: 'shuttle', read: { label: 'label' } },
  // the rings grouped as in the FedGEM paper: single rings are too rare for one class per client
  { name: 'abalone', read: { label: 'label', oneHot: ['sex'], labelGroups: '0-5,6,7,8,9,10,11-12,13-' } },
  { name: 'anomaly_cardio', read: { anomalyLabel: 'label' } },
  { name: 'anomaly_thyroid', read: { anomalyLabel: 'label' } },
  { name: 'anomaly_pendigits', read: { anomalyLabel: 'label' } },
  { name: 'anomaly_waveform', read: { anomalyLabel: 'label' } },
];
const CLIENTS = 20;
const SEED = 1;

function run(save) {
  const rows = [];
  const only = opt('--datasets')?.split(',');
  for (const ds of DATASETS.filter((d) => !only || only.includes(d.name))) {
    const data = labelledFromCsv(readFileSync(`${dataDir}${ds.name}.csv`, 'utf8'), ds.read);
    const X = data.X;
    const classes = classesOf(f, X, data.labels, SEED);
    const scaled = new f.MinMaxScaler().fit(X).transform(X);
    const nComponents = Math.min(10, new Set(classes).size * 2);
    for (const scheme of SCHEMES) {
      const parts = honestPartition(f, scheme, classes, { clients: CLIENTS, nFeatures: X.nCols, seed: SEED + 1 });
      const sizes = parts.map((p) => p.length);
      const record = (algorithm, variant, r) => {
        rows.push({ dataset: ds.name, scheme, algorithm, variant, clients: r.clients, smallest: Math.min(...sizes), excluded: r.excluded, error: r.error });
        console.error(`${ds.name} ${scheme} ${algorithm} ${variant}: ${r.excluded.length} excluded${r.error ? ` (${r.error.slice(0, 80)})` : ''}`);
      };
      const fed = ({ rows = X, ...o }) => {
        try {
          return honestFedGenGMM(f, rows, parts, { nComponents, seed: SEED + 2, ...o });
        } catch (e) {
          if (!(e instanceof f.FedmixError)) throw e;
          return { clients: parts.length, excluded: [], error: `${e.name}: ${e.message}` };
        }
      };
      record('fedgengmm', 'sample', fed({}));
      record('fedgengmm', 'hierarchical', fed({ serverStep: 'hierarchical' }));
      record('fedgengmm', 'sample, declared range', fed({ rows: scaled, featureRange: [0, 1] }));
      if (data.labels) {
        const hist = histograms(classes, parts);
        for (const variant of ['fit', 'groups', 'select', 'privacy']) record('mdm', variant, honestMdm(f, hist, variant, { seed: SEED + 3 }));
      }
    }
    // written after every dataset: a long run keeps what it has done
    save({ clients: CLIENTS, seed: SEED, rows });
  }
  return { clients: CLIENTS, seed: SEED, rows };
}

function report({ rows }) {
  const runs = rows.length;
  const excluded = rows.reduce((a, r) => a + r.excluded.length, 0);
  const errors = rows.filter((r) => r.error);
  console.log(`${runs} runs (${[...new Set(rows.map((r) => r.dataset))].length} datasets x ${SCHEMES.length} partitions x the variants), ${CLIENTS} clients each: ${excluded} honest clients excluded, ${errors.length} runs ended in a typed error\n`);
  console.log('| algorithm, variant | runs | clients excluded | runs ended in a typed error |');
  console.log('|---|---|---|---|');
  for (const key of [...new Set(rows.map((r) => `${r.algorithm}, ${r.variant}`))]) {
    const rs = rows.filter((r) => `${r.algorithm}, ${r.variant}` === key);
    console.log(`| ${key} | ${rs.length} | ${rs.reduce((a, r) => a + r.excluded.length, 0)} | ${rs.filter((r) => r.error).length} |`);
  }
  for (const r of rows.filter((x) => x.excluded.length)) console.log(`\n- ${r.dataset} ${r.scheme} ${r.algorithm} ${r.variant}: ${r.excluded.map((e) => e.reason).join('; ')}`);
  for (const r of errors) console.log(`\n- error: ${r.dataset} ${r.scheme} ${r.algorithm} ${r.variant}: ${r.error}`);
}

if (args.includes('--report')) {
  const files = args.slice(args.indexOf('--report') + 1).filter((a) => !a.startsWith('--'));
  report({ rows: files.flatMap((file) => JSON.parse(readFileSync(file, 'utf8')).rows) });
} else {
  await f.init();
  const save = (out) => opt('--json') && writeFileSync(opt('--json'), JSON.stringify(out, null, 1) + '\n');
  report(run(save));
}
