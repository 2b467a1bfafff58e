// FedGEM: (1) the server's final merge over M = 1e3, 1e4, 1e5 components,
// overlaps found through the k-d tree against all pairs, same run, same
// components (their results are identical, tested in test/fedgem.test.ts);
// (2) a whole FedGEM run (clients' local EM, 10 rounds, the merge) against a
// centralized scikit-learn GaussianMixture on the pooled rows of the same
// blobs (bench/peers/fedgem.py), with both ARIs.
import { adjustedRandScore, decodeMessage, FEDGEM_PROTOCOL, FedGEMServer, fedGEM, makeBlobs, partition, Rng } from '../dist/index.js';
import { median, runPeer, table, writeMatrix } from './common.mjs';

const REPEATS = 3;

function time(fn, repeats = REPEATS) {
  if (repeats > 1) fn();
  const t = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

/**
 * Final uploads of M / 10 clients with 10 components each: estimates (noise
 * 0.05) of 10 of K = round(3 sqrt(M)) clusters on a jittered grid of spacing
 * 10 (centers at least 8 apart), so each cluster has about M / K members and
 * the final radius at phi = 0.5 (0.5 delta_c / sqrt(400), a client's own
 * centers at least 8 apart) joins duplicates, never neighbours.
 */
function uploads(m, seed) {
  const k = Math.round(3 * Math.sqrt(m));
  const g = Math.ceil(Math.sqrt(k));
  const rng = new Rng(seed);
  try {
    const jitter = rng.uniform(2 * k);
    const truth = Array.from({ length: 2 * k }, (_, i) => {
      const t = i >> 1;
      return ((i & 1 ? Math.floor(t / g) : t % g) * 10) + 2 * jitter[i] - 1;
    });
    const clients = m / 10;
    const out = [];
    for (let c = 0; c < clients; c++) {
      const held = rng.choice(k, 10);
      const z = rng.normal(20);
      const centers = [];
      held.forEach((t, j) => centers.push(truth[2 * t] + 0.05 * z[2 * j], truth[2 * t + 1] + 0.05 * z[2 * j + 1]));
      out.push(JSON.stringify({ protocol: 'fedmix', version: 1, kind: 'fedgem/final', from: String(c), round: 1,
        payload: { nComponents: 10, nFeatures: 2, centers, counts: new Array(10).fill(40), nSamples: 400 } }));
    }
    return { texts: out, k };
  } finally {
    rng.dispose();
  }
}

/** The server after taking these final uploads, driven by hand as the runtime would (the round's merge at phi = 1 happens here, untimed). */
function withFinals(server, texts) {
  const FINAL = FEDGEM_PROTOCOL.exchanges.get('fedgem/finish').reply;
  const ids = texts.map((_, i) => String(i));
  const ctx = { round: 1, clients: ids, available: ids };
  const requests = server.configure(ctx);
  const accepted = new Map(texts.map((t, i) => [ids[i], server.accept(FINAL.read(decodeMessage(t)), requests.get(ids[i]), ctx)]));
  server.aggregate(ctx, accepted, []);
  return server;
}

export function run() {
  const rows = [];
  const results = [];
  for (const m of [1e3, 1e4, 1e5]) {
    const { texts, k } = uploads(m, 7);
    const servers = {};
    for (const search of ['kdtree', 'all-pairs']) servers[search] = withFinals(new FedGEMServer({ nFeatures: 2, rounds: 0, search, variance: 'clients' }), texts);
    // both merges once before timing, so neither pays the engine's first compilation
    servers.kdtree.merge(0.5);
    if (m < 1e5) servers['all-pairs'].merge(0.5);
    let kTree = 0;
    const tree = time(() => { kTree = servers.kdtree.merge(0.5).estimatedK; });
    // all pairs at 1e5 is ~5e9 pair tests: timed once
    const all = time(() => servers['all-pairs'].merge(0.5), m >= 1e5 ? 1 : REPEATS);
    rows.push([`merge, M = ${m}`, `${tree.toFixed(1)}`, `${all.toFixed(1)}`, `${(all / tree).toFixed(1)}x`, `${kTree} (true ${k})`]);
    results.push({ step: 'merge', components: m, kdtreeMs: tree, allPairsMs: all, speedup: all / tree, estimatedK: kTree, trueK: k });
  }
  console.log('\nFedGEM server merge, ms (median of 3; all pairs once at 1e5), k-d tree against all pairs');
  console.log(table(['step', 'k-d tree', 'all pairs', 'ratio', 'estimated K'], rows));

  // the whole run against centralized scikit-learn on the same blobs
  const blob = makeBlobs({ nClusters: 20, nFeatures: 5, samplesPerCluster: 1000, minDistance: 6, seed: 3 });
  const p = partition.quantity(Array.from(blob.labels), { clients: 20, alpha: [3, 8], seed: 3 });
  const data = p.indices.map((r) => blob.X.selectRows(r));
  const truth = p.indices.map((r) => Array.from(r, (i) => blob.labels[i]));
  let ari = 0;
  let estimatedK = 0;
  const fm = time(() => {
    // the blobs' known sigma^2 = 1, as the paper (the estimate would add one round of k-means per client)
    const r = fedGEM(data, { client: p.classSets.map((s, c) => ({ nComponents: s.length, variance: 1, seed: c })), rounds: 10 });
    let t = 0;
    let n = 0;
    for (const c of r.clients) {
      const i = Number(c.id);
      t += adjustedRandScore(truth[i], c.predict(data[i])) * truth[i].length;
      n += truth[i].length;
      c.dispose();
    }
    ari = t / n;
    estimatedK = r.estimatedK;
  });
  const peer = runPeer('fedgem.py', { data: writeMatrix('fedgem-blobs.f64', blob.X), n: blob.X.nRows, d: 5, k: 20, labels: Array.from(blob.labels), repeats: REPEATS });
  const sk = median(peer.ms);
  console.log(`\nFedGEM run (20 clients holding 3-8 of 20 clusters, 20,000 x 5 rows, 10 rounds) against scikit-learn GaussianMixture(20, 'full') on the pooled rows, ms (median of ${REPEATS})`);
  console.log(table(['method', 'ms', 'ratio', 'ARI', 'K'], [
    ['fedmix FedGEM (all clients and the server, in one process)', fm.toFixed(0), `${(sk / fm).toFixed(2)}x`, ari.toFixed(4), `${estimatedK} (estimated)`],
    ['scikit-learn GaussianMixture, central, true K', sk.toFixed(0), '1.00x', peer.ari.toFixed(4), '20 (given)'],
  ]));
  results.push({ step: 'run', fedmixMs: fm, sklearnMs: sk, speedup: sk / fm, fedgemAri: ari, sklearnAri: peer.ari, estimatedK });
  return results;
}
