// One repeat of FedGenGMM's server-step K sweep (scripts/fedgengmm-server-sweep.mjs):
// the held-out split, the partition, clients that fit their local models once
// (so every server step and K of the repeat receives the same uploads), and a
// server step or centralized EM scored on the held-out rows. Plain JavaScript
// on the fedmix module it is handed (`f`): the script runs it with dist/,
// test/fedgengmm.test.ts one seeded cell with ts/index.ts.

export const CLIENTS = 20;

export const SETS = {
  // the paper's WADI scheme on the anomaly sets: 10 parts shifted by m x 0.5 along the diagonal, each client holding one
  shift: {
    datasets: [{ name: 'anomaly_cardio', anomaly: 'label' }, { name: 'anomaly_thyroid', anomaly: 'label' }, { name: 'anomaly_waveform', anomaly: 'label' }],
    ks: [5, 8, 10, 15, 20],
  },
  // Dir(0.3) over the classes (over 10 k-means clusters for an anomaly set)
  dirichlet: {
    datasets: [{ name: 'satellite', label: 'label' }, { name: 'shuttle', label: 'label' }, { name: 'anomaly_thyroid', anomaly: 'label' }],
    ks: [5, 10, 15, 20, 30],
  },
};

/**
 * Repeat r (seed 1000 r) of `set` on `data` (labelledFromCsv's): the rows (an
 * anomaly set's inliers) split in halves at random, min-max scaling fitted on
 * the training half, the training half dealt to 20 clients; each client
 * chooses K_c by BIC over 1..kMax. The caller disposes the clients.
 */
export function sweepRepeat(f, data, set, r, kMax) {
  const seed = 1000 * r;
  const rows = data.anomaly ? Array.from(data.anomaly, (a, i) => (a ? -1 : i)).filter((i) => i >= 0) : Array.from({ length: data.X.nRows }, (_, i) => i);
  const rng = new f.Rng(seed);
  const order = Array.from(rng.permutation(rows.length), (i) => rows[i]);
  rng.dispose();
  const half = Math.floor(order.length / 2);
  const scaler = new f.MinMaxScaler().fit(data.X.selectRows(order.slice(0, half)));
  let train = scaler.transform(data.X.selectRows(order.slice(0, half)));
  let test = scaler.transform(data.X.selectRows(order.slice(half)));
  let indices;
  if (set === 'shift') {
    const s = f.partition.shift(train, { parts: 10, beta: 0.5, clients: CLIENTS, alpha: 1, seed: seed + 2 });
    [train, test, indices] = [s.X, f.partition.applyShift(test, s.shift, { seed: seed + 6 }).X, s.indices];
  } else {
    const classes = data.labels ? Int32Array.from(order.slice(0, half), (i) => data.labels[i]) : Int32Array.from(new f.KMeans({ nClusters: 10, seed: seed + 1 }).fit(train).predict(train));
    indices = f.partition.dirichlet(classes, { clients: CLIENTS, alpha: 0.3, seed: seed + 2 }).indices;
  }
  /** A client that fits its local model once. */
  class TrainedOnce extends f.FedGenGMMClient {
    train() {
      if (!this.trained) {
        super.train();
        this.trained = true;
      }
      return this.model;
    }
  }
  const clients = Array.from(indices, (idx, c) => new TrainedOnce(String(c), train.selectRows(idx), { kMin: 1, kMax, seed: seed + 10 + c }));
  // trained here, so that a server step's time is its own
  for (const c of clients) c.train();
  return { seed, train, test, clients };
}

/** Starts of the centralized reference: one start alone lands in a poor optimum in some repeats (as the sampled step did). */
export const CENTRAL_N_INIT = 10;

/**
 * Mean held-out log-likelihood of K global components: centralized EM on the
 * training rows (`step` 'central', CENTRAL_N_INIT starts unless `nInit`), or
 * the server step ('sample', 'hierarchical') on the clients' uploads, with
 * `nInit` when given (else the server's default).
 */
export function sweepScore(f, { seed, train, test, clients }, K, step, nInit) {
  if (step === 'central') {
    const gm = new f.GaussianMixture({ nComponents: K, covarianceType: 'diag', nInit: nInit ?? CENTRAL_N_INIT, seed: seed + 3 }).fit(train);
    try {
      return { score: gm.score(test), excluded: 0 };
    } finally {
      gm.dispose();
    }
  }
  const server = new f.FedGenGMMServer({ nComponents: K, nFeatures: train.nCols, seed: seed + 4, ...(step === 'hierarchical' ? { serverStep: 'hierarchical' } : {}), ...(nInit === undefined ? {} : { nInit }) });
  try {
    const out = f.runFederationSync(server, new f.InProcessTransport(clients));
    try {
      return { score: out.model.model.score(test), excluded: out.excluded.length };
    } finally {
      out.model.model.dispose();
    }
  } finally {
    server.dispose();
  }
}
