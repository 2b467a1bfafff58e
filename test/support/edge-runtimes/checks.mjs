/**
 * What test/edge-runtimes.test.ts asks of fedmix in each runtime (Deno, Bun,
 * workerd): the same calls as Node makes there, so that the numbers can be
 * compared bit for bit. `fedmix` is the packed package's module namespace as
 * the runtime loaded it; `rows` are the clients' rows (real data, from the
 * test); `wasm` is init()'s wasm option where the runtime cannot read files or
 * compile bytes (workerd).
 */

/** init, a GaussianMixture fit, and two one-shot federations in process. */
export async function inProcess(fedmix, { rows, wasm }) {
  const { init, GaussianMixture, Matrix, fedGenGMM, DemServer, DemClient, runFederationSync } = fedmix;
  const info = await init(wasm === undefined ? undefined : { wasm, features: Object.keys(wasm.simd).filter((m) => m !== 'core') });
  const all = Matrix.fromRows(rows.flat());
  const gm = new GaussianMixture({ nComponents: 3, covarianceType: 'full', seed: 1 }).fit(all);
  const fit = modelOf(gm, { lowerBound: gm.lowerBound, nIter: gm.nIter });
  gm.dispose();
  const clients = rows.map((r) => Matrix.fromRows(r));
  const gen = fedGenGMM(clients, { client: { kMin: 1, kMax: 4, covarianceType: 'diag' }, server: { nComponents: 3, seed: 2 } });
  const fedgengmm = modelOf(gen.model, { excluded: gen.excluded.length });
  gen.model.dispose();
  const roles = clients.map((m, i) => new DemClient(`client-${i}`, m));
  const run = runFederationSync(new DemServer(DEM), roles);
  const dem = modelOf(run.model, { rounds: run.rounds, excluded: run.excluded.length });
  run.model.dispose();
  for (const r of roles) r.dispose();
  return { info, fit, fedgengmm, dem };
}

/** The DEM run both in process and over the broker (the Node test's server uses it too). */
export const DEM = { nComponents: 3, nFeatures: 6, covarianceType: 'diag', init: 'kfed', seed: 5, maxRounds: 6 };

/** One client joining the federation a Node server runs: returns what join() said. */
export async function joinFederation(fedmix, { rows, url, federation, id, password }) {
  const client = new fedmix.DemClient(id, fedmix.Matrix.fromRows(rows));
  try {
    const r = await fedmix.join({ url, federation, client, password, waitForBroker: 10 });
    return { ok: r.ok, answered: r.answered, ...(r.reason ? { reason: r.reason } : {}) };
  } finally {
    client.dispose();
  }
}

export function modelOf(m, extra = {}) {
  return { weights: Array.from(m.weights), means: Array.from(m.means), covariances: Array.from(m.covariances), ...extra };
}
