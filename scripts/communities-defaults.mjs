// Issue 23, item 4: how well the per-community autoencoders train at the
// library's defaults (trainCommunities / runCommunityExperiment / `fedmix
// communities`), against training settings named on the command line, over
// several seeds, with a central reference (one autoencoder per group trained
// on the group's rows pooled, the same training rule as a client alone).
//
//   digits      scikit-learn's 8x8 digits (Debian's python3-sklearn CSV), the
//               paper's partition with p = 3 clients per class (30 clients of
//               43 rows), d = 0.1, OCSVM detectors, q = 0.08: as `fedmix
//               communities --data digits.csv --label label --p 3 --seed S`
//               (80/20 split seeded by S, min-max scaled on the training rows).
//   anomaly_*   ../shared/datasets/anomaly_NAME.csv (0/1 `label`): 70/30 split,
//               min-max scaled on the training rows, the training rows dealt IID
//               to 10 clients (each with the set's own anomaly rate); every
//               client scores the whole test split. local: each alone; ideal:
//               all ten in one federation (they share one inlier pattern);
//               community: the groups associate() finds at its defaults;
//               central: one autoencoder on all training rows.
//
// usage: node scripts/communities-defaults.mjs [--sets digits,cardio,thyroid,pendigits,waveform]
//          [--seeds 5] [--config NAME=JSON ...] [--json FILE]
//   configs default to before = {"epochs":1,"earlyStopping":"none"} (the defaults
//   up to issue 23) and default = {} (the library's defaults now).
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { parseArgs } from 'node:util';
import { associate, init, Matrix, MinMaxScaler, partition, Rng } from '../dist/index.js';
import { runCommunityExperiment, trainCommunities } from '../dist/experiments.js';
import { loadFashionMnist } from '../dist/node.js';

const DIGITS = '/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz';
const { values } = parseArgs({
  options: {
    sets: { type: 'string', default: 'digits,cardio,thyroid,pendigits,waveform' },
    seeds: { type: 'string', default: '5' },
    config: { type: 'string', multiple: true },
    json: { type: 'string' },
    datasets: { type: 'string', default: new URL('../../shared/datasets/', import.meta.url).pathname },
  },
});
const configs = Object.fromEntries(
  (values.config ?? ['before={"epochs":1,"earlyStopping":"none"}', 'default={}']).map((c) => {
    const k = c.indexOf('=');
    return [c.slice(0, k), JSON.parse(c.slice(k + 1))];
  }),
);
const seeds = Array.from({ length: Number(values.seeds) }, (_, i) => i);

await init();

function readCsv(text, header) {
  const lines = text.trim().split('\n');
  const names = header ? lines.shift().split(',') : undefined;
  const rows = lines.map((l) => l.split(',').map(Number));
  return { names, rows };
}

/** rows split by a seeded permutation (the CLI's rule: the first share of it is the test split), min-max scaled on the training rows */
function split(rows, labels, testShare, seed) {
  const rng = new Rng(seed);
  const order = rng.permutation(rows.length);
  rng.dispose();
  const nTest = Math.round(rows.length * testShare);
  const pick = (idx) => ({ X: Matrix.fromRows(Array.from(idx, (i) => rows[i])), labels: Array.from(idx, (i) => labels[i]) });
  const train = pick(order.subarray(nTest));
  const test = pick(order.subarray(0, nTest));
  const scaler = new MinMaxScaler().fit(train.X);
  return { train: { X: scaler.transform(train.X), labels: train.labels }, test: { X: scaler.transform(test.X), labels: test.labels } };
}

const meanStd = (v) => {
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  return { mean: m, std: Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / v.length) };
};
const pm = (x, d = 3) => `${x.mean.toFixed(d)} ± ${x.std.toFixed(d)}`;

let fmnist;
/** the paper's partition of a labelled set: `options` are runCommunityExperiment's (p, classes, rows per client) */
function paperRun(set, training, seed) {
  let data;
  let options = { clientsPerClass: 3, contamination: 0.1, q: 0.08 };
  if (set === 'digits') {
    const { rows } = readCsv(gunzipSync(readFileSync(DIGITS)).toString(), false);
    data = split(rows.map((r) => r.slice(0, 64)), rows.map((r) => r[64]), 0.2, seed);
  } else {
    data = fmnist;
    // Fashion-MNIST as test/community-training.test.ts: T-shirts, trousers and sneakers, p = 3 clients each of 200 rows, 100 test rows
    options = { ...options, classes: [0, 1, 7], rowsPerClient: 200, testRowsPerClient: 100 };
  }
  const started = performance.now();
  const r = runCommunityExperiment(data, { ...options, training, seed });
  const seconds = (performance.now() - started) / 1000;
  const run = r.runs[0];
  const a = run.associations[0];
  // central: each client scored by one autoencoder fitted to its ideal group's rows pooled (the same partition as the sweep's)
  const kept = options.classes ? new Set(options.classes) : undefined;
  const trainRows = kept ? Array.from(data.train.labels).flatMap((l, i) => (kept.has(l) ? [i] : [])) : undefined;
  const testRows = kept ? Array.from(data.test.labels).flatMap((l, i) => (kept.has(l) ? [i] : [])) : undefined;
  if (kept) data = { train: { X: data.train.X.selectRows(trainRows), labels: trainRows.map((i) => data.train.labels[i]) }, test: { X: data.test.X.selectRows(testRows), labels: testRows.map((i) => data.test.labels[i]) } };
  const part = partition.contaminated(data.train.labels, { clientsPerClass: 3, contamination: 0.1, rowsPerClient: options.rowsPerClient, testLabels: data.test.labels, testRowsPerClient: options.testRowsPerClient, seed });
  const pooled = new Map();
  part.indices.forEach((rows, i) => pooled.set(part.inlierClass[i], [...(pooled.get(part.inlierClass[i]) ?? []), ...rows]));
  const central = trainCommunities(
    part.indices.map((_, i) => {
      const test = part.testIndices[i];
      return { id: String(i), X: data.train.X.selectRows(pooled.get(part.inlierClass[i])), test: { X: data.test.X.selectRows(test), outlier: Array.from(test, (t) => (data.test.labels[t] === part.inlierClass[i] ? 0 : 1)) } };
    }),
    'local',
    { ...training, seed },
  );
  return {
    local: run.local.auc.mean,
    community: a.community.auc.mean,
    ideal: run.idealRun.auc.mean,
    central: central.auc.mean,
    epochs: { local: run.local.epochs?.mean, community: a.community.epochs?.mean, ideal: run.idealRun.epochs?.mean, central: central.epochs?.mean },
    communities: a.communities.length,
    ari: a.ari,
    excluded: a.excluded.length,
    seconds,
  };
}

function anomalyRun(name, training, seed) {
  const { names, rows } = readCsv(readFileSync(`${values.datasets}/anomaly_${name}.csv`, 'utf8'), true);
  const y = names.indexOf('label');
  const data = split(rows.map((r) => r.filter((_, j) => j !== y)), rows.map((r) => r[y]), 0.3, seed);
  const test = { X: data.test.X, outlier: data.test.labels };
  const parts = partition.iid(data.train.X.nRows, { clients: 10, seed }).indices.map((idx) => data.train.X.selectRows(idx));
  const clients = parts.map((X, i) => ({ id: String(i), X, test }));
  const started = performance.now();
  const association = associate(parts, { seed });
  const inGraph = new Set(association.nodes);
  const groups = [...association.communities, ...clients.map((c) => c.id).filter((id) => !inGraph.has(id)).map((id) => [id])];
  const options = { ...training, seed };
  const local = trainCommunities(clients, 'local', options);
  const ideal = trainCommunities(clients, [clients.map((c) => c.id)], options);
  const community = trainCommunities(clients, groups, options);
  const central = trainCommunities([{ id: 'all', X: data.train.X, test }], 'local', options);
  return {
    local: local.auc.mean,
    community: community.auc.mean,
    ideal: ideal.auc.mean,
    central: central.auc.mean,
    epochs: { local: local.epochs?.mean, community: community.epochs?.mean, ideal: ideal.epochs?.mean, central: central.epochs?.mean },
    communities: groups.length,
    excluded: association.excluded.length,
    seconds: (performance.now() - started) / 1000,
  };
}

const out = [];
for (const set of values.sets.split(',')) {
  for (const [label, training] of Object.entries(configs)) {
    if (set === 'fmnist' && !fmnist) {
      const [train, test] = await Promise.all([loadFashionMnist(), loadFashionMnist({ split: 'test' })]);
      fmnist = { train: { X: train.X, labels: Array.from(train.labels) }, test: { X: test.X, labels: Array.from(test.labels) } };
    }
    const runs = seeds.map((seed) => (set === 'digits' || set === 'fmnist' ? paperRun(set, training, seed) : anomalyRun(set, training, seed)));
    const col = (k) => meanStd(runs.map((r) => r[k]));
    const ep = (k) => (runs[0].epochs[k] === undefined ? '-' : meanStd(runs.map((r) => r.epochs[k])).mean.toFixed(1));
    const row = { set, config: label, training, seeds, local: col('local'), community: col('community'), ideal: col('ideal'), central: col('central'), communities: col('communities'), excluded: runs.reduce((n, r) => n + r.excluded, 0), runs };
    out.push(row);
    console.log(
      `${set.padEnd(9)} ${label.padEnd(10)} local ${pm(row.local)}  community ${pm(row.community)}  ideal ${pm(row.ideal)}  central ${pm(row.central)}` +
        `  | epochs per client: local ${ep('local')}, community ${ep('community')}, ideal ${ep('ideal')}, central ${ep('central')}` +
        `  | communities ${row.communities.mean.toFixed(1)}, association exclusions ${row.excluded}, ${meanStd(runs.map((r) => r.seconds)).mean.toFixed(1)} s per seed`,
    );
  }
}
if (values.json) writeFileSync(values.json, JSON.stringify(out, null, 1));
