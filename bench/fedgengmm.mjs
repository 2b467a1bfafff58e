// FedGenGMM, the whole pipeline for 20 clients on shuttle.csv (58,000 x 9,
// min-max scaled), and the server step alone for 20, 80 and 320 clients, each
// against the same pipeline written with scikit-learn (bench/peers/fedgengmm.py)
// on the same client splits and, for the server step, the same local models.
// The server step also with serverStep 'hierarchical' (hierarchical EM on the
// uploads' parameters, no rows drawn) against the same scikit-learn sampled
// step, and both global models' mean log-likelihood on all of shuttle.
// Issue bars: the fedmix pipeline at least 2x faster than scikit-learn's; the
// hierarchical server step at 320 clients at least 10x faster than
// scikit-learn's sampled one.
import { decodeMessage, FEDGENGMM_PROTOCOL, FedGenGMMServer, fedGenGMM, GaussianMixture } from '../dist/index.js';
import { begin, iidShares, loadShuttle, median, runPeer, sized, timed, writeMatrix } from './common.mjs';

const SETTINGS = sized({ kMin: 1, kMax: 8, globalK: 10, h: 100, tol: 1e-3 }, { kMin: 1, kMax: 3, globalK: 4, h: 20, tol: 1e-3 });
const REPEATS = sized(3, 1);
/** the server step's federations: numbers of clients */
const SERVER_CLIENTS = sized([20, 80, 320], [20, 40]);
/** quick mode: every 10th row of shuttle */
const ROW_STEP = sized(1, 10);

const time = (fn) => timed(fn, REPEATS).ms;

export async function run() {
  const results = begin('fedgengmm', 'npm run bench -- fedgengmm');
  const X = loadShuttle(ROW_STEP);
  const d = X.nCols;
  const rows = [];
  const hierarchical = [];

  // the whole pipeline, 20 clients
  const clients = iidShares(X, 20, 1);
  const fm = time((r = 0) => {
    const res = fedGenGMM(clients, {
      client: { kMin: SETTINGS.kMin, kMax: SETTINGS.kMax, covarianceType: 'diag', tol: SETTINGS.tol, seed: r },
      server: { nComponents: SETTINGS.globalK, h: SETTINGS.h, covarianceType: 'diag', tol: SETTINGS.tol, seed: r },
    });
    res.model.dispose();
  });
  const peer = runPeer('fedgengmm.py', {
    mode: 'pipeline', d, ...SETTINGS, repeats: REPEATS,
    clients: clients.map((c, i) => ({ path: writeMatrix(`fgg-client-${i}.f64`, c), n: c.nRows })),
  });
  const sk = median(peer.ms);
  rows.push(['pipeline, 20 clients', fm.toFixed(0), sk.toFixed(0), `${(sk / fm).toFixed(2)}x`]);

  // the server step alone, on the same local models
  for (const n of SERVER_CLIENTS) {
    const parts = iidShares(X, n, 2);
    const locals = parts.map((part, i) =>
      new GaussianMixture({ nComponents: 4, covarianceType: 'diag', tol: SETTINGS.tol, seed: i }).fit(part),
    );
    const uploads = locals.map((m, i) => ({
      protocol: 'fedmix', version: 1, kind: 'fedgengmm/local-model', from: String(i), round: 1,
      payload: { model: { covarianceType: 'diag', nComponents: m.nComponents, nFeatures: d, weights: Array.from(m.weights), means: Array.from(m.means), covariances: Array.from(m.covariances) }, nSamples: parts[i].nRows },
    }));
    const texts = uploads.map((u) => JSON.stringify(u));
    // the server role driven by hand as the runtime would: each upload decoded and checked, then the aggregation
    const LOCAL_MODEL = FEDGENGMM_PROTOCOL.exchanges.get('fedgengmm/train').reply;
    const ids = texts.map((_, i) => String(i));
    const ctx = { round: 1, clients: ids, available: ids };
    const step = (serverStep, r) => {
      const server = new FedGenGMMServer({ nComponents: SETTINGS.globalK, nFeatures: d, h: SETTINGS.h, covarianceType: 'diag', tol: SETTINGS.tol, seed: r, serverStep });
      const requests = server.configure(ctx);
      const accepted = new Map(texts.map((t, i) => [ids[i], server.accept(LOCAL_MODEL.read(decodeMessage(t)), requests.get(ids[i]), ctx)]));
      server.aggregate(ctx, accepted, []);
      const model = server.result().model;
      server.dispose();
      return model;
    };
    const fms = time((r = 0) => step('sample', r).dispose());
    const hms = time((r = 0) => step('hierarchical', r).dispose());
    // the global models' quality, seed 0: mean log-likelihood per row of all of shuttle (the clients' rows)
    const quality = Object.fromEntries(['sample', 'hierarchical'].map((k) => {
      const m = step(k, 0);
      const ll = m.score(X);
      m.dispose();
      return [k, ll];
    }));
    const p = runPeer('fedgengmm.py', {
      mode: 'server', d, ...SETTINGS, repeats: REPEATS,
      models: uploads.map((u) => u.payload.model), sizes: parts.map((q) => q.nRows),
    });
    const sks = median(p.ms);
    const synthetic = (n * 4 * SETTINGS.h).toLocaleString('en-US');
    rows.push([`server step, ${n} clients (${synthetic} synthetic rows)`, fms.toFixed(0), sks.toFixed(0), `${(sks / fms).toFixed(2)}x`]);
    hierarchical.push([`${n} (${(n * 4).toLocaleString('en-US')})`, fms.toFixed(0), hms.toFixed(1), sks.toFixed(0), `${(sks / hms).toFixed(1)}x`, `${quality.sample.toFixed(3)} / ${quality.hierarchical.toFixed(3)}`]);
    for (const m of locals) m.dispose();
  }
  const shuttle = `shuttle.csv (${X.nRows.toLocaleString('en-US')} x ${d}${ROW_STEP > 1 ? `, every ${ROW_STEP}th row` : ''})`;
  results.print(
    `FedGenGMM on ${shuttle}, diag covariance, client K by BIC in ${SETTINGS.kMin}..${SETTINGS.kMax}, global K = ${SETTINGS.globalK}, H = ${SETTINGS.h}; ms, median of ${REPEATS}; the server step on the same uploads as scikit-learn's`,
    ['step', 'fedmix ms', 'scikit-learn ms', 'speedup'],
    rows,
  );
  results.print(
    `The server step, sampled and sample-free ('hierarchical'), against scikit-learn's sampled step on the same uploads, ms (median of ${REPEATS}); log-lik.: each fedmix global model's mean log-likelihood on all rows, seed 0`,
    ['clients (components)', 'sampled, fedmix ms', 'hierarchical, fedmix ms', 'scikit-learn sampled ms', 'hierarchical vs scikit-learn', 'log-lik. sampled / hierarchical'],
    hierarchical,
  );
  await results.write();
}
