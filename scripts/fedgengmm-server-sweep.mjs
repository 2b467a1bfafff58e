// FedGenGMM's server step over a K sweep, scored on held-out rows: the
// sampled step with one EM initialization (the default before issue 23), the
// sampled step at the server's current default, hierarchical EM, and
// centralized EM on the pooled training rows (the reference: 10 starts, the
// best kept). Build first (bash scripts/setup.sh).
//
//   node scripts/fedgengmm-server-sweep.mjs [--set shift|dirichlet] [--repeats 3] [--json out.json] [--variants sample:1,sample:3,sample,hierarchical]
//   node scripts/fedgengmm-server-sweep.mjs --report out.json     (the tables again, from the JSON)
//
// Per dataset and repeat (seed 1000 r): the rows (an anomaly set's inliers)
// split in halves at random, min-max scaling fitted on the training half, and
// the training half dealt to 20 clients by
//   --set shift (default): the paper's WADI scheme (10 parts shifted by
//     m x 0.5 along the diagonal, each client holding 1 part; the same shift
//     applied to the held-out rows) on anomaly_cardio, _thyroid, _waveform,
//     K in 5, 8, 10, 15, 20;
//   --set dirichlet: Dir(0.3) over the classes of satellite and shuttle (and
//     over 10 k-means clusters of anomaly_thyroid), K in 5, 10, 15, 20, 30.
// Each client fits its local mixture once, choosing K_c by BIC over 1..max K
// (Algorithm 4.1's one range for clients and server), and the same uploads
// reach every server step at every K. Score: mean log-likelihood per
// held-out row. A cell (dataset, K) is "within 5%" when the mean over repeats
// is at most 5% of |central| below central's; a repeat counts as a miss when
// it alone is more than 5% below.
import { readFileSync, writeFileSync } from 'node:fs';
import * as f from '../dist/index.js';
import { labelledFromCsv } from '../dist/experiments.js';
import { CLIENTS, SETS, sweepRepeat, sweepScore } from '../test/support/server-sweep.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
// default: the step before issue 23 (one start), three starts, the current default, hierarchical EM
const VARIANTS = 'sample:1,sample:3,sample,hierarchical';
const dataDir = process.env.FEDMIX_DATASETS ?? new URL('../../shared/datasets/', import.meta.url).pathname;

const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const sd = (v) => (v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean(v)) ** 2, 0) / (v.length - 1)) : 0);

/** "sample:1" -> the sampled step with nInit 1; "sample" -> the server's default; "hierarchical"; "central". */
function parseVariant(v) {
  const [step, n] = v.split(':');
  if (!['sample', 'hierarchical', 'central'].includes(step)) throw new Error(`unknown variant ${v}`);
  return { name: v, step, nInit: n === undefined ? undefined : Number(n) };
}

function run() {
  const set = opt('--set', 'shift');
  if (!SETS[set]) throw new Error(`--set is shift or dirichlet, got ${set}`);
  const { datasets, ks } = SETS[set];
  const repeats = Number(opt('--repeats', '3'));
  const variants = opt('--variants', VARIANTS).split(',').map(parseVariant);
  const results = [];
  for (const ds of datasets) {
    const data = labelledFromCsv(readFileSync(`${dataDir}${ds.name}.csv`, 'utf8'), ds.label ? { label: ds.label } : { anomalyLabel: ds.anomaly });
    for (let r = 0; r < repeats; r++) {
      const rep = sweepRepeat(f, data, set, r, Math.max(...ks));
      for (const K of ks) {
        const scores = {};
        const excluded = {};
        const seconds = {};
        for (const v of [...variants, ...(variants.some((v) => v.step === 'central') ? [] : [parseVariant('central')])]) {
          const t0 = performance.now();
          const out = sweepScore(f, rep, K, v.step, v.nInit);
          scores[v.name] = out.score;
          excluded[v.name] = out.excluded;
          seconds[v.name] = (performance.now() - t0) / 1000;
        }
        results.push({ dataset: ds.name, K, repeat: r, scores, excluded, seconds });
        console.error(`${ds.name} K=${K} repeat ${r}: ${Object.entries(scores).map(([k, s]) => `${k} ${s.toFixed(3)}`).join(', ')}`);
      }
      for (const c of rep.clients) c.dispose();
    }
  }
  return { set, variants: variants.map((v) => v.name), repeats, clients: CLIENTS, ks, results };
}

function report({ variants, results }) {
  const gap = (s, c) => (s - c) / Math.abs(c);
  const cells = [];
  for (const ds of [...new Set(results.map((x) => x.dataset))]) {
    for (const K of [...new Set(results.map((x) => x.K))]) {
      const runs = results.filter((x) => x.dataset === ds && x.K === K);
      if (runs.length) cells.push({ ds, K, runs });
    }
  }
  const head = ['data', 'K', 'central', ...variants.flatMap((v) => [`${v}`, 'gap'])];
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const { ds, K, runs } of cells) {
    const c = runs.map((x) => x.scores.central);
    const row = [ds, K, `${mean(c).toFixed(2)} ± ${sd(c).toFixed(2)}`];
    for (const v of variants) {
      const s = runs.map((x) => x.scores[v]);
      const g = gap(mean(s), mean(c));
      row.push(`${mean(s).toFixed(2)} ± ${sd(s).toFixed(2)}`, `${(100 * g).toFixed(1)}%${g < -0.05 ? ' **no**' : ''}`);
    }
    console.log(`| ${row.join(' | ')} |`);
  }
  console.log('');
  const summary = ['| variant | cells within 5% of central | repeats more than 5% below central | worst repeat | mean seconds per run |', '|---|---|---|---|---|'];
  for (const v of variants) {
    const within = cells.filter(({ runs }) => gap(mean(runs.map((x) => x.scores[v])), mean(runs.map((x) => x.scores.central))) >= -0.05).length;
    const repeatGaps = results.map((x) => gap(x.scores[v], x.scores.central));
    const misses = repeatGaps.filter((g) => g < -0.05).length;
    summary.push(`| ${v} | ${within} of ${cells.length} | ${misses} of ${results.length} | ${(100 * Math.min(...repeatGaps)).toFixed(0)}% | ${mean(results.map((x) => x.seconds[v])).toFixed(2)} |`);
  }
  console.log(summary.join('\n'));
}

if (args.includes('--report')) {
  report(JSON.parse(readFileSync(opt('--report'), 'utf8')));
} else {
  await f.init();
  const out = run();
  report(out);
  const json = opt('--json');
  if (json) writeFileSync(json, JSON.stringify(out, null, 1) + '\n');
}
