// The honest-federation matrix: every algorithm, with every option that changes
// its maths, on real data (../shared/datasets) and generated blobs, dealt to
// clients by the usual partition schemes, every client honest. It measures
//   - honest exclusions, in two kinds: replies a server's check refused (the
//     bar is zero: a check that refuses honest data is wrong), and clients
//     that could not take part (their own data cannot support the model, e.g.
//     one row for a Gaussian mixture, which scikit-learn refuses too: the run
//     says so, it is not silent);
//   - errors: runs that threw;
//   - the quality gap to the central fit on the same rows (log-likelihood,
//     adjusted Rand index, accuracy, reconstruction error, as each method reports).
// Plain JavaScript, as fuzz-servers.mjs: test/honest-matrix.test.ts runs a small
// seeded sample with ts/index.ts, scripts/honest-matrix.mjs the grid with dist/.

import { readFileSync } from 'node:fs';
import { xorshift32 } from './xorshift.mjs';

const CLIENTS = 10;
/** rows kept of each dataset (seeded): the grid runs in minutes */
const ROWS = 2000;

const DATASET_FILES = {
  satellite: { file: 'satellite.csv', options: { label: 'label' } },
  letter: { file: 'letter.csv', options: { label: 'label' } },
  shuttle: { file: 'shuttle.csv', options: { label: 'label' } },
  // the FedGEM paper's abalone: rings grouped into 8 classes, sex one-hot
  abalone: { file: 'abalone.csv', options: { label: 'label', labelGroups: '0-5,6,7,8,9,10,11-12,13-', oneHot: ['sex'] } },
  // anomaly sets: the 0/1 label is the class
  cardio: { file: 'anomaly_cardio.csv', options: { label: 'label' } },
  pendigits: { file: 'anomaly_pendigits.csv', options: { label: 'label' } },
};
/** `NAME-raw`: the same rows unscaled, so that clients' scales differ as raw data's do (what scale checks must not mistake for hostility) */
export const DATASETS = [...Object.keys(DATASET_FILES), 'blobs', 'shuttle-raw', 'cardio-raw', 'abalone-raw'];
export const PARTITIONS = ['iid', 'dirichlet-0.3', 'dirichlet-0.1', 'one-class', 'quantity-skew', 'few-rows'];

function stream(seed) {
  const next = xorshift32(seed);
  return () => (next() + 0.5) / 2 ** 32;
}

/** `n` of `total` indices, sorted, drawn without replacement from `seed`. */
function sample(total, n, seed) {
  const u = stream(seed);
  const idx = Int32Array.from({ length: total }, (_, i) => i);
  for (let i = 0; i < Math.min(n, total - 1); i++) {
    const j = i + Math.floor(u() * (total - i));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, Math.min(n, total)).sort();
}

const cache = new Map();

/**
 * A dataset as the papers prepare it: at most ROWS rows (seeded), features
 * min-max scaled on them (not with the suffix -raw), class indices 0..C-1 (classes with no row dropped),
 * and a held-out test split (20%) for the methods scored on unseen rows.
 */
export function dataset(f, name) {
  if (cache.has(name)) return cache.get(name);
  const raw = name.endsWith('-raw');
  const base = raw ? name.slice(0, -4) : name;
  let X;
  let labels;
  if (base === 'blobs') {
    const b = f.makeBlobs({ nClusters: 10, nFeatures: 5, samplesPerCluster: 150, minDistance: 4, seed: 11 });
    X = b.X;
    labels = Int32Array.from(b.labels);
  } else {
    const spec = DATASET_FILES[base];
    if (!spec) throw new Error(`no dataset ${name}`);
    const text = readFileSync(new URL(`../../../shared/datasets/${spec.file}`, import.meta.url), 'utf8');
    const d = f.labelledFromCsv(text, spec.options);
    const keep = sample(d.X.nRows, ROWS, 7);
    X = d.X.selectRows(keep);
    labels = Int32Array.from(keep, (i) => d.labels[i]);
  }
  // class indices of the rows kept, in order of first appearance of each class value
  const codes = new Map();
  for (const v of [...new Set(labels)].sort((a, b) => a - b)) codes.set(v, codes.size);
  labels = labels.map((v) => codes.get(v));
  const scaled = raw ? X : f.Matrix.from(new f.MinMaxScaler().fitTransform(X));
  const test = sample(scaled.nRows, Math.floor(scaled.nRows / 5), 8);
  const isTest = new Uint8Array(scaled.nRows);
  for (const i of test) isTest[i] = 1;
  const train = Int32Array.from({ length: scaled.nRows }, (_, i) => i).filter((i) => !isTest[i]);
  const lo = [];
  const hi = [];
  for (let j = 0; j < scaled.nCols; j++) {
    const col = scaled.data.subarray(j * scaled.nRows, (j + 1) * scaled.nRows);
    lo.push(Math.min(...col));
    hi.push(Math.max(Math.max(...col), Math.min(...col) + 1e-9));
  }
  const out = {
    name,
    range: [lo, hi],
    X: scaled.selectRows(train),
    labels: Int32Array.from(train, (i) => labels[i]),
    testX: scaled.selectRows(test),
    testLabels: Int32Array.from(test, (i) => labels[i]),
    nClasses: codes.size,
  };
  cache.set(name, out);
  return out;
}

/** Row indices per client of the training rows, by scheme. */
export function deal(f, data, scheme, clients, seed) {
  const { labels, X } = data;
  switch (scheme) {
    case 'iid':
      return f.partition.iid(labels, { clients, seed }).indices;
    case 'dirichlet-0.3':
      return f.partition.dirichlet(labels, { clients, alpha: 0.3, seed }).indices;
    case 'dirichlet-0.1':
      return f.partition.dirichlet(labels, { clients, alpha: 0.1, seed }).indices;
    case 'one-class':
      // each client holds one class (classes may be shared by several clients)
      return f.partition.quantity(labels, { clients, alpha: 1, seed, minSize: 0 }).indices.filter((rows) => rows.length > 0);
    case 'quantity-skew':
      // every class, client sizes from Dir(1, ..., 1)
      return f.partition.quantity(labels, { clients, alpha: data.nClasses, imbalance: 'clients', seed, minSize: 0 }).indices.filter((rows) => rows.length > 0);
    case 'few-rows': {
      // IID, and client 0 keeps fewer rows than there are features (at least 2)
      const parts = f.partition.iid(labels, { clients, seed }).indices;
      parts[0] = parts[0].slice(0, Math.max(2, Math.floor(X.nCols / 2)));
      return parts;
    }
    default:
      throw new Error(`no partition ${scheme}`);
  }
}

/** Accuracy of predicted classes. */
function accuracy(pred, truth) {
  let hit = 0;
  for (let i = 0; i < truth.length; i++) if (pred[i] === truth[i]) hit++;
  return hit / truth.length;
}

/** Argmax of each row of a rows x classes Matrix (column-major). */
function argmaxRows(P) {
  const n = P.nRows;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let k = 1; k < P.nCols; k++) if (P.data[k * n + i] > P.data[best * n + i]) best = k;
    out[i] = best;
  }
  return out;
}

/** Mean squared reconstruction error of rows X by a network's output. */
function reconstructionError(net, X) {
  const Y = net.predict(X);
  let s = 0;
  for (let i = 0; i < X.data.length; i++) s += (Y.data[i] - X.data[i]) ** 2;
  return s / X.data.length;
}

/** Distinct classes a client holds with at least `min` rows (at least 1). */
function clustersHeld(labels, rows, min) {
  const counts = new Map();
  for (const i of rows) counts.set(labels[i], (counts.get(labels[i]) ?? 0) + 1);
  return Math.max(1, [...counts.values()].filter((c) => c >= min).length);
}

/** A federated mixture's result (`r.model`, disposed here) scored against a GaussianMixture fitted on the same rows. */
function againstCentralMixture(f, data, parts, r, centralOptions) {
  const central = new f.GaussianMixture(centralOptions);
  try {
    const used = f.Matrix.vstack(parts.map((rows) => data.X.selectRows(rows)));
    central.fit(used);
    return { excluded: r.excluded, failures: r.federation.failures, metric: 'mean log-likelihood', higherIsBetter: true, federated: r.model.score(used), central: central.score(used) };
  } finally {
    r.model.dispose();
    central.dispose();
  }
}

/**
 * Each algorithm: the variants that change its maths, and how one cell runs.
 * run() returns { excluded, metric, higherIsBetter, federated, central } and
 * disposes what it made. `k` is the number of classes (the global K).
 */
export const ALGORITHMS = {
  dem: {
    // featureRange 'data': the range of the dataset's rows declared, so that what clients send is checked against it
    variants: ['full', 'diag', 'tied', 'spherical'].flatMap((t) => ['kfed', 'subset', 'separated'].map((init) => ({ covarianceType: t, init }))).concat([{ covarianceType: 'full', init: 'kfed', featureRange: 'data' }]),
    run(f, data, parts, v, seed) {
      const k = Math.min(data.nClasses, 10);
      const options = v.featureRange === 'data' ? { ...v, featureRange: data.range } : v;
      const r = f.distributedEM(parts.map((rows) => data.X.selectRows(rows)), { nComponents: k, seed, ...options });
      return againstCentralMixture(f, data, parts, r, { nComponents: k, covarianceType: v.covarianceType, seed });
    },
  },
  fedgengmm: {
    variants: ['full', 'diag', 'tied', 'spherical'].flatMap((t) => ['sample', 'hierarchical'].map((serverStep) => ({ covarianceType: t, serverStep }))),
    run(f, data, parts, v, seed) {
      const k = Math.min(data.nClasses, 10);
      const r = f.fedGenGMM(parts.map((rows) => data.X.selectRows(rows)), { client: { covarianceType: v.covarianceType }, server: { nComponents: k, covarianceType: v.covarianceType, serverStep: v.serverStep, seed } });
      return againstCentralMixture(f, data, parts, r, { nComponents: k, covarianceType: v.covarianceType, seed });
    },
  },
  fedgem: {
    variants: [{ variance: 'estimate' }, { variance: 'clients' }],
    run(f, data, parts, v, seed) {
      const matrices = parts.map((rows) => data.X.selectRows(rows));
      // each client knows how many clusters it holds (the paper's setting): its classes of at least 2 rows and 5% of its rows
      const client = parts.map((rows, c) => {
        const nComponents = clustersHeld(data.labels, rows, Math.max(2, Math.ceil(0.05 * rows.length)));
        const o = { nComponents: Math.min(nComponents, Math.floor(rows.length / 2)) || 1, seed: seed + c };
        if (v.variance === 'clients') o.variance = 0.01;
        return o;
      });
      const r = f.fedGEM(matrices, { client, rounds: 10 });
      const central = new f.GaussianMixture({ nComponents: data.nClasses, covarianceType: 'spherical', seed });
      try {
        const ids = new Set(r.clients.map((c) => c.id));
        const pred = [];
        const truth = [];
        parts.forEach((rows, c) => {
          const client = r.clients.find((x) => x.id === String(c));
          if (!client || !ids.has(String(c))) return;
          pred.push(...client.predict(matrices[c]));
          truth.push(...Array.from(rows, (i) => data.labels[i]));
        });
        const used = f.Matrix.vstack(matrices);
        const allTruth = parts.flatMap((rows) => Array.from(rows, (i) => data.labels[i]));
        central.fit(used);
        return {
          excluded: r.excluded,
          failures: r.federation.failures,
          metric: 'ARI',
          higherIsBetter: true,
          federated: f.adjustedRandScore(truth, pred),
          central: f.adjustedRandScore(allTruth, central.predict(used)),
          note: `K ${r.estimatedK} for ${data.nClasses} classes`,
        };
      } finally {
        for (const c of r.clients) c.dispose();
        central.dispose();
      }
    },
  },
  mdm: {
    // the clients are histograms of their classes; 50 clients, so that there is a distribution to learn
    clients: 50,
    variants: [{ nComponents: 2 }, { nComponents: 2, cohort: 25 }, { nComponents: 3 }, { nComponents: 2, privacy: { noiseMultiplier: 0.5, clip: 5 } }],
    run(f, data, parts, v, seed) {
      const C = data.nClasses;
      const histograms = parts.map((rows) => {
        const h = new Array(C).fill(0);
        for (const i of rows) h[data.labels[i]]++;
        return h;
      });
      // single-class clients only: the Dirichlet-multinomial has no maximum-likelihood estimate (alpha -> 0), a typed error by design
      if (histograms.every((h) => h.filter((x) => x > 0).length <= 1)) return { notApplicable: 'every client holds one class: the Dirichlet-multinomial has no maximum-likelihood estimate' };
      const r = f.fitMdm(histograms, { ...v, rounds: 30, seed, ...(v.privacy ? { noiseSeed: seed } : {}) });
      const central = f.DirichletMultinomialMixture.fit(histograms, { nComponents: v.nComponents, rounds: 30, seed });
      try {
        return { excluded: r.excluded, failures: r.federation.failures, metric: 'mean log-likelihood', higherIsBetter: true, federated: r.model.score(histograms), central: central.score(histograms) };
      } finally {
        r.model.dispose?.();
        central.dispose?.();
      }
    },
  },
  fedavg: {
    variants: ['fedavg', 'fedprox', 'scaffold'].flatMap((algorithm) => ['classifier', 'autoencoder'].map((model) => ({ algorithm, model }))),
    run(f, data, parts, v, seed) {
      const d = data.X.nCols;
      const classifier = v.model === 'classifier';
      const network = classifier
        ? { sizes: [d, 32, data.nClasses], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed }
        : { sizes: [d, 16, Math.max(2, Math.min(8, Math.floor(d / 2))), 16, d], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed };
      const options = { algorithm: v.algorithm, network, ...(v.algorithm === 'fedprox' ? { mu: 0.01 } : {}), seed };
      const clientsOf = (ps) => ps.map((rows) => ({ X: data.X.selectRows(rows), ...(classifier ? { labels: Int32Array.from(rows, (i) => data.labels[i]) } : {}) }));
      const r = f.fedAvg(clientsOf(parts), options);
      // the central fit: the same training, one client holding every row
      const all = Int32Array.from(parts.flatMap((rows) => Array.from(rows)));
      const c = f.fedAvg(clientsOf([all]), options);
      const net = new f.Network(network);
      try {
        const score = (parameters) => {
          net.setParameters(parameters);
          return classifier ? accuracy(argmaxRows(net.predict(data.testX)), data.testLabels) : reconstructionError(net, data.testX);
        };
        return {
          excluded: r.excluded,
          failures: r.federation.failures,
          metric: classifier ? 'test accuracy' : 'test reconstruction MSE',
          higherIsBetter: classifier,
          federated: score(r.parameters),
          central: score(c.parameters),
        };
      } finally {
        net.dispose();
      }
    },
  },
  communities: {
    // the paper's partition: clients per class with a share of one outlier class
    partitions: ['contaminated'],
    variants: [{ kind: 'ocsvm' }, { kind: 'gmm' }, { kind: 'autoencoder' }],
    run(f, data, _parts, v, seed) {
      // the three largest classes, 3 clients each (the paper's p = 3), 10% contamination
      const sizes = new Array(data.nClasses).fill(0);
      for (const c of data.labels) sizes[c]++;
      const classes = sizes.map((n, c) => [n, c]).sort((a, b) => b[0] - a[0]).slice(0, 3).map(([, c]) => c);
      const keep = Int32Array.from({ length: data.labels.length }, (_, i) => i).filter((i) => classes.includes(data.labels[i]));
      const labels = Int32Array.from(keep, (i) => data.labels[i]);
      const X = data.X.selectRows(keep);
      const p = f.partition.contaminated(labels, { clientsPerClass: 3, contamination: 0.1, seed });
      const r = f.associate(p.indices.map((rows) => X.selectRows(rows)), { detector: { kind: v.kind, contamination: 0.1 }, seed });
      // communities as labels of the clients, against the ideal groups (one per inlier class)
      const community = new Int32Array(p.indices.length).fill(-1);
      r.communities.forEach((members, g) => members.forEach((id) => (community[Number(id)] = g)));
      const found = Array.from(community).map((g, i) => (g >= 0 ? g : 1000 + i));
      return { excluded: r.excluded, failures: r.federation.failures, metric: 'ARI of communities', higherIsBetter: true, federated: f.adjustedRandScore(Array.from(p.group), found), central: 1 };
    },
  },
  feddistr: {
    variants: [
      { cost: 'wasserstein', covariance: 'full' },
      { cost: 'bhattacharyya', covariance: 'full' },
      { cost: 'wasserstein', covariance: 'diagonal' },
      { cost: 'bhattacharyya', covariance: 'diagonal' },
    ],
    run(f, data, parts, v, seed) {
      // task labels: classes paired (0+1, 2+3, ...), each class a base distribution
      const task = (c) => c >> 1;
      const clientsOf = (ps) => ps.map((rows) => ({ X: data.X.selectRows(rows), labels: Array.from(rows, (i) => task(data.labels[i])) }));
      const testTasks = Array.from(data.testLabels, task);
      const r = f.fedDistr(clientsOf(parts), { ...v, seed });
      const all = Int32Array.from(parts.flatMap((rows) => Array.from(rows)));
      const c = f.fedDistr(clientsOf([all]), { ...v, seed });
      const scoreOf = (bases) => {
        const m = new f.BaseDistributionClassifier(bases, { encoder: 'identity' });
        try {
          return m.score(data.testX, testTasks);
        } finally {
          m.dispose?.();
        }
      };
      return { excluded: r.excluded, failures: r.federation.failures, metric: 'test accuracy (generative)', higherIsBetter: true, federated: scoreOf(r.bases), central: scoreOf(c.bases) };
    },
  },
};

/** Every cell of the grid, in a fixed order. */
export function cells({ algorithms = Object.keys(ALGORITHMS), datasets = DATASETS, partitions = PARTITIONS, seeds = [1] } = {}) {
  const out = [];
  for (const algorithm of algorithms) {
    const a = ALGORITHMS[algorithm];
    for (const variant of a.variants) {
      for (const ds of datasets) {
        for (const scheme of a.partitions ?? partitions) {
          for (const seed of seeds) out.push({ algorithm, variant, dataset: ds, partition: scheme, seed });
        }
      }
    }
  }
  return out;
}

/**
 * How an exclusion came about: 'cannot-take-part' when the client could not
 * be made (round 0) or refused the request itself (its data cannot support
 * the model), 'refused-by-check' when the server refused its reply.
 */
function kindOf(e, failures) {
  if (e.round === 0) return 'cannot-take-part';
  const f = failures?.find((x) => x.client === e.client && x.round === e.round && x.excluded);
  return f?.kind === 'refused' ? 'cannot-take-part' : 'refused-by-check';
}

/** Runs one cell; never throws (an error is the cell's outcome). */
export function runCell(f, cell) {
  const started = performance.now();
  const a = ALGORITHMS[cell.algorithm];
  const out = { ...cell, excluded: [], error: undefined };
  try {
    const data = dataset(f, cell.dataset);
    const parts = a.partitions ? [] : deal(f, data, cell.partition, a.clients ?? CLIENTS, cell.seed);
    if (!a.partitions) out.clients = parts.length;
    const r = a.run(f, data, parts, cell.variant, cell.seed);
    if (r.notApplicable) {
      out.notApplicable = r.notApplicable;
    } else {
      const { failures, excluded, ...rest } = r;
      Object.assign(out, rest, { excluded: excluded.map((e) => ({ client: e.client, round: e.round, reason: e.reason, kind: kindOf(e, failures) })) });
      out.gap = r.higherIsBetter ? r.central - r.federated : r.federated - r.central;
    }
  } catch (e) {
    out.error = `${e?.constructor?.name ?? 'Error'}: ${String(e?.message ?? e)}`;
  }
  out.seconds = (performance.now() - started) / 1000;
  return out;
}

/**
 * Per algorithm: cells run and not applicable, replies refused by a check
 * (the bar: 0), clients that could not take part, errors, and the gaps.
 */
export function summarize(results) {
  const by = new Map();
  for (const r of results) {
    let s = by.get(r.algorithm);
    if (!s) by.set(r.algorithm, (s = { algorithm: r.algorithm, cells: 0, notApplicable: 0, refusedByCheck: 0, cannotTakePart: 0, errors: 0, gaps: [] }));
    s.cells += 1;
    if (r.notApplicable) s.notApplicable += 1;
    for (const e of r.excluded) s[e.kind === 'refused-by-check' ? 'refusedByCheck' : 'cannotTakePart'] += 1;
    if (r.error) s.errors += 1;
    else if (Number.isFinite(r.gap)) s.gaps.push(r.gap);
  }
  return [...by.values()];
}
