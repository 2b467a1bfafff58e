// FedGenGMM's server step over a K sweep, scored on held-out rows: the
// sampled step with one EM initialization (the default before issue 23), the
// sampled step at the server's current default, hierarchical EM, and
// centralized EM on the pooled training rows. Build first (bash scripts/setup.sh).
//
//   node scripts/fedgengmm-server-sweep.mjs [--repeats 3] [--json out.json] [--variants sample:1,sample,hierarchical]
//   node scripts/fedgengmm-server-sweep.mjs --report out.json     (the tables again, from the JSON)
//
// Per dataset and repeat (seed 1000 r): the rows (an anomaly set's inliers)
// split in halves at random, min-max scaling fitted on the training half, the
// training half dealt to 20 clients by Dir(0.3) over its classes (an anomaly
// set has none: its 10 k-means clusters stand in); each client fits its local
// mixture once, choosing K_c by BIC over 1..30 (Algorithm 4.1's one range for
// clients and server, up to the sweep's largest K), and the same uploads reach
// every server step at every K. Score: mean log-likelihood per held-out row. A cell (dataset, K) is
// "within 5%" when the mean over repeats is at most 5% of |central| below
// central's; a repeat counts as a miss when it alone is more than 5% below.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  FedGenGMMClient,
  FedGenGMMServer,
  GaussianMixture,
  init,
  InProcessTransport,
  KMeans,
  labelledFromCsv,
  MinMaxScaler,
  partition,
  Rng,
  runFederationSync,
} from '../dist/index.js';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const dataDir = process.env.FEDMIX_DATASETS ?? new URL('../../shared/datasets/', import.meta.url).pathname;
const DATASETS = [
  { name: 'satellite', label: 'label' },
  { name: 'shuttle', label: 'label' },
  { name: 'anomaly_thyroid', anomaly: 'label' },
];
const KS = [5, 10, 15, 20, 30];
const CLIENTS = 20;
const ALPHA = 0.3;

const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const sd = (v) => (v.length > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean(v)) ** 2, 0) / (v.length - 1)) : 0);

/** A client that fits its local model once: every server step and K of a repeat receives the same upload. */
class TrainedOnce extends FedGenGMMClient {
  train() {
    if (!this.trained) {
      super.train();
      this.trained = true;
    }
    return this.model;
  }
}

/** "sample:1" -> the sampled step with nInit 1; "sample" -> the server's default; "hierarchical"; "central". */
function parseVariant(v) {
  const [step, n] = v.split(':');
  if (!['sample', 'hierarchical', 'central'].includes(step)) throw new Error(`unknown variant ${v}`);
  return { name: v, step, nInit: n === undefined ? undefined : Number(n) };
}

function run() {
  const repeats = Number(opt('--repeats', '3'));
  const variants = opt('--variants', 'sample:1,sample,hierarchical').split(',').map(parseVariant);
  const results = [];
  for (const ds of DATASETS) {
    const data = labelledFromCsv(readFileSync(`${dataDir}${ds.name}.csv`, 'utf8'), ds.label ? { label: ds.label } : { anomalyLabel: ds.anomaly });
    const rows = data.anomaly ? Array.from(data.anomaly, (a, i) => (a ? -1 : i)).filter((i) => i >= 0) : Array.from({ length: data.X.nRows }, (_, i) => i);
    for (let r = 0; r < repeats; r++) {
      const seed = 1000 * r;
      const rng = new Rng(seed);
      const order = Array.from(rng.permutation(rows.length), (i) => rows[i]);
      rng.dispose();
      const half = Math.floor(order.length / 2);
      const scaler = new MinMaxScaler().fit(data.X.selectRows(order.slice(0, half)));
      const train = scaler.transform(data.X.selectRows(order.slice(0, half)));
      const test = scaler.transform(data.X.selectRows(order.slice(half)));
      const classes = data.labels ? Int32Array.from(order.slice(0, half), (i) => data.labels[i]) : Int32Array.from(new KMeans({ nClusters: 10, seed: seed + 1 }).fit(train).predict(train));
      const { indices } = partition.dirichlet(classes, { clients: CLIENTS, alpha: ALPHA, seed: seed + 2 });
      const parts = indices.map((idx) => train.selectRows(idx));
      const clients = parts.map((x, c) => new TrainedOnce(String(c), x, { kMin: 1, kMax: Math.max(...KS), seed: seed + 10 + c }));
      for (const K of KS) {
        const scores = {};
        const excluded = {};
        const seconds = {};
        for (const v of variants) {
          const t0 = performance.now();
          if (v.step === 'central') {
            const gm = new GaussianMixture({ nComponents: K, covarianceType: 'diag', seed: seed + 3 }).fit(train);
            scores[v.name] = gm.score(test);
            gm.dispose();
          } else {
            const server = new FedGenGMMServer({ nComponents: K, nFeatures: train.nCols, seed: seed + 4, ...(v.step === 'hierarchical' ? { serverStep: 'hierarchical' } : {}), ...(v.nInit === undefined ? {} : { nInit: v.nInit }) });
            try {
              const out = runFederationSync(server, new InProcessTransport(clients));
              scores[v.name] = out.model.model.score(test);
              excluded[v.name] = out.excluded.length;
              out.model.model.dispose();
            } finally {
              server.dispose();
            }
          }
          seconds[v.name] = (performance.now() - t0) / 1000;
        }
        if (!('central' in scores)) {
          const gm = new GaussianMixture({ nComponents: K, covarianceType: 'diag', seed: seed + 3 }).fit(train);
          scores.central = gm.score(test);
          gm.dispose();
        }
        results.push({ dataset: ds.name, K, repeat: r, scores, excluded, seconds });
        console.error(`${ds.name} K=${K} repeat ${r}: ${Object.entries(scores).map(([k, s]) => `${k} ${s.toFixed(3)}`).join(', ')}`);
      }
      for (const c of clients) c.dispose();
    }
  }
  return { variants: variants.map((v) => v.name), repeats, clients: CLIENTS, alpha: ALPHA, ks: KS, results };
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
  await init();
  const out = run();
  report(out);
  const json = opt('--json');
  if (json) writeFileSync(json, JSON.stringify(out, null, 1) + '\n');
}
