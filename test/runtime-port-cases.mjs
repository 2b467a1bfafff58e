// The cases of test/runtime-port.test.ts and scripts/record-runtime-port.mjs:
// each public one-call function of the four federated algorithms at fixed
// seeds, summarized as plain JSON (every number as computed). `f` is the
// library's public API (ts/index.ts in the test, dist/ in the recorder).

import { xorshift32 } from './support/xorshift.mjs';

/** xorshift32 uniforms in (0, 1): test data independent of the library's generator. */
function uniforms(seed) {
  const next = xorshift32(seed);
  return () => (next() + 0.5) / 2 ** 32;
}

/** n rows around `center` with spread s. */
function blob(f, n, center, s, seed) {
  const u = uniforms(seed);
  const g = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  return f.Matrix.fromRows(Array.from({ length: n }, () => center.map((c) => c + s * g())));
}

const list = (v) => Array.from(v);

function gmm(m) {
  return { k: m.nComponents, weights: list(m.weights), means: list(m.means), covariances: list(m.covariances), nIter: m.nIter, lowerBound: m.lowerBound, converged: m.converged };
}

/** Four non-IID clients over three clusters in 2-D, min-max scaled (the paper's preprocessing). */
function gmmClients(f) {
  const A = [0, 0];
  const B = [6, 0];
  const C = [0, 6];
  const raw = [
    f.Matrix.vstack([blob(f, 400, A, 1, 1)]),
    f.Matrix.vstack([blob(f, 150, A, 1, 2), blob(f, 150, B, 1, 3)]),
    f.Matrix.vstack([blob(f, 300, C, 1, 4)]),
    f.Matrix.vstack([blob(f, 200, B, 1, 5), blob(f, 100, C, 1, 6)]),
  ];
  const scaler = new f.MinMaxScaler().fit(f.Matrix.vstack(raw));
  return raw.map((x) => scaler.transform(x));
}

function fedGenGMMCase(f, clients, options) {
  const r = f.fedGenGMM(clients, options);
  const out = { model: gmm(r.model), syntheticRows: r.syntheticRows, incomingComponents: r.incomingComponents, excluded: r.excluded };
  r.model.dispose();
  return out;
}

function demCase(f, clients, options) {
  const r = f.distributedEM(clients, options);
  const out = { model: gmm(r.model), rounds: r.rounds, initRounds: r.initRounds, emRounds: r.emRounds, converged: r.converged, history: r.history, excluded: r.excluded };
  r.model.dispose();
  return out;
}

/** 10 separated clusters dealt to 8 clients holding 3 to 6 each. */
function fedgemFederation(f, seed) {
  const b = f.makeBlobs({ nClusters: 10, nFeatures: 2, samplesPerCluster: 120, minDistance: 6, seed });
  const p = f.partition.quantity(Array.from(b.labels), { clients: 8, alpha: [3, 6], seed });
  const data = p.indices.map((rows) => b.X.selectRows(rows));
  // variance 1 given: the default when these were recorded (now absent means estimated)
  const options = p.classSets.map((set, c) => ({ nComponents: set.length, variance: 1, seed: seed * 100 + c }));
  return { data, options };
}

function fedgemCase(f, data, options) {
  // the paper's merge alone: the default when these were recorded (now the separation step follows it)
  const r = f.fedGEM(data, { ...options, server: { separation: false } });
  const out = {
    estimatedK: r.estimatedK,
    phi: r.phi,
    phiScores: r.phiScores ?? null,
    globalCenters: list(r.globalCenters),
    memberships: Object.fromEntries([...r.memberships].map(([id, m]) => [id, list(m)])),
    clientMeans: Object.fromEntries(r.clients.map((c) => [c.id, list(c.means)])),
    history: r.history,
    excluded: r.excluded,
  };
  for (const c of r.clients) c.dispose();
  return out;
}

/** Histograms of 400 clients from a two-component mixture (C = 6, sizes 20..60). */
function mdmHistograms(f) {
  const nMax = 60;
  const truth = new f.DirichletMultinomialMixture({
    tau: [0.4, 0.6],
    alpha: [
      [0.2, 0.5, 1.0, 2.0, 0.3, 0.4],
      [2.0, 2.5, 1.5, 0.5, 3.0, 1.0],
    ],
    pi: [0, 1].map(() => Array.from({ length: nMax }, (_, i) => (i >= 19 ? 1 / (nMax - 19) : 0))),
  });
  const { histograms } = truth.sample(400, { seed: 11 });
  return histograms;
}

function mdmModel(m) {
  return { tau: list(m.tau), alpha: list(m.alpha), pi: list(m.pi) };
}

/** FedGenGMM's defaults when the fixture was recorded (issue 23 changed them): one start of the sampled step, clients K = 1. */
const FEDGENGMM_THEN = { server: { nInit: 1 }, client: { kMin: 1, kMax: 1 } };

export function runtimePortCases(f) {
  return {
    'fedgengmm full K=3': () =>
      fedGenGMMCase(f, gmmClients(f), { client: { kMin: 1, kMax: 3, seed: 1 }, server: { nComponents: 3, seed: 2, covarianceType: 'full', ...FEDGENGMM_THEN.server } }),
    'fedgengmm BIC, a client of the wrong dimension': () => {
      const clients = gmmClients(f);
      clients.splice(2, 0, blob(f, 50, [0, 0, 0], 1, 9));
      const rest = clients.slice(2).map(() => FEDGENGMM_THEN.client);
      return fedGenGMMCase(f, clients, { client: [{ kMin: 1, kMax: 2, seed: 3 }, { kMin: 1, kMax: 3, seed: 4 }, ...rest], server: { kMin: 1, kMax: 4, seed: 5, h: 50, ...FEDGENGMM_THEN.server } });
    },
    // k-FED as it was when these were recorded (the paper's: ceil(sqrt(K)) local clusters, one seed device)
    'dem kfed full': () => demCase(f, gmmClients(f), { nComponents: 3, covarianceType: 'full', init: 'kfed', kfedLocalClusters: 2, kfedGrouping: 'seed-device', seed: 1 }),
    'dem subset diag': () => demCase(f, gmmClients(f), { nComponents: 3, covarianceType: 'diag', init: 'subset', seed: 2 }),
    'dem separated spherical': () => demCase(f, gmmClients(f), { nComponents: 3, covarianceType: 'spherical', init: 'separated', seed: 3, maxRounds: 30 }),
    'dem kfed tied, a client of the wrong dimension': () => {
      const clients = gmmClients(f);
      clients.splice(1, 0, blob(f, 50, [0, 0, 0], 1, 9));
      return demCase(f, clients, { nComponents: 3, covarianceType: 'tied', init: 'kfed', kfedLocalClusters: 2, kfedGrouping: 'seed-device', seed: 4 });
    },
    'fedgem phi 1': () => {
      const { data, options } = fedgemFederation(f, 1);
      return fedgemCase(f, data, { client: options, rounds: 6 });
    },
    'fedgem tuned phi, validation rows, a client of the wrong dimension': () => {
      const { data, options } = fedgemFederation(f, 2);
      data.splice(3, 0, blob(f, 60, [0, 0, 0], 1, 9));
      options.splice(3, 0, { nComponents: 2, variance: 1, seed: 7 });
      const validation = data.map((x) => x.selectRows(Array.from({ length: Math.floor(x.nRows / 3) }, (_, i) => 3 * i)));
      return fedgemCase(f, data, { client: options, rounds: 5, phi: f.PHI_GRID, validation });
    },
    'fedgem privacy': () => {
      const { data, options } = fedgemFederation(f, 3);
      const scaled = data.map((x) => {
        const m = x.data.slice();
        for (let i = 0; i < m.length; i++) m[i] /= 40;
        return new f.Matrix(m, x.nRows, x.nCols);
      });
      const privacy = { epsilon: 0.5, delta: 1e-5, bound: 1 };
      return fedgemCase(f, scaled, { client: options.map((o, c) => ({ ...o, variance: 0.001, privacy, noiseSeed: 50 + c })), rounds: 4 });
    },
    'mdm full batch K=2': () => {
      const r = f.fitMdm(mdmHistograms(f), { nComponents: 2, rounds: 15, seed: 1 });
      return { model: mdmModel(r.model), history: r.history, initGuards: r.initGuards, excluded: r.excluded };
    },
    'mdm cohorts K=2': () => {
      const r = f.fitMdm(mdmHistograms(f), { nComponents: 2, rounds: 10, cohort: 100, initCohort: 150, seed: 2 });
      return { model: mdmModel(r.model), history: r.history, initGuards: r.initGuards, excluded: r.excluded };
    },
    'mdm privacy': () => {
      const histograms = mdmHistograms(f);
      // before the noise got a seed of its own, fitMdm derived it from `seed` (the draw after the clients' seeds): the same noise, now asked for
      const legacy = new f.Rng(3);
      legacy.uniform(histograms.nRows);
      const noiseSeed = Math.floor(legacy.uniform(2)[1] * 2 ** 32);
      legacy.dispose();
      const r = f.fitMdm(histograms, { nComponents: 2, rounds: 5, cohort: 200, seed: 3, noiseSeed, privacy: { noiseMultiplier: 0.5, clip: 20 } });
      return { model: mdmModel(r.model), history: r.history, initGuards: r.initGuards, excluded: r.excluded };
    },
    'mdm select K': () => {
      const r = f.selectMdm(mdmHistograms(f), { kRange: [1, 3], rounds: 8, seed: 4 });
      return {
        k: r.k,
        model: mdmModel(r.model),
        candidates: r.candidates.map((c) => ({ k: c.k, meanLogLikelihood: c.meanLogLikelihood, model: mdmModel(c.fit.model), history: c.fit.history })),
        validationClients: r.validationClients,
        scoredClients: r.scoredClients,
        excluded: r.excluded,
      };
    },
  };
}
