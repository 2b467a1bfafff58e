// FedGEM: (1) the server's final merge over M = 1e3, 1e4, 1e5 components,
// overlaps found through the k-d tree against all pairs, same run, same
// components (their results are identical, tested in test/fedgem.test.ts);
// (2) a whole FedGEM run (clients' local EM, 10 rounds, the merge) against a
// centralized scikit-learn GaussianMixture on the pooled rows of the same
// blobs (bench/peers/fedgem.py), with both ARIs.
import { adjustedRandScore, decodeMessage, FEDGEM_PROTOCOL, FedGEMServer, fedGEM, makeBlobs, partition, Rng } from '../dist/index.js';
import { begin, median, runPeer, sized, timed, writeMatrix } from './common.mjs';

const REPEATS = sized(3, 1);
const MERGES = sized([1e3, 1e4, 1e5], [200, 1e3]);
/** the whole run: clusters (one per 1,000 rows), rounds */
const RUN = sized({ clusters: 20, rounds: 10 }, { clusters: 6, rounds: 2 });

const time = (fn, repeats = REPEATS) => timed(fn, repeats, { warmUp: repeats > 1 }).ms;

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

export async function run() {
  const results = begin('fedgem', 'npm run bench -- fedgem');
  const rows = [];
  for (const m of MERGES) {
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
    rows.push([`M = ${m.toLocaleString('en-US')}`, `${tree.toFixed(1)}`, `${all.toFixed(1)}${m >= 1e5 ? ' (1 run)' : ''}`, `${(all / tree).toFixed(1)}x`, `${kTree} (true ${k})`]);
  }
  results.print(`FedGEM server merge, ms (median of ${REPEATS}; all pairs once at 1e5), k-d tree against all pairs`, ['merge', 'k-d tree ms', 'all pairs ms', 'ratio', 'estimated K'], rows);

  // the whole run against centralized scikit-learn on the same blobs
  const blob = makeBlobs({ nClusters: RUN.clusters, nFeatures: 5, samplesPerCluster: 1000, minDistance: 6, seed: 3 });
  const p = partition.quantity(Array.from(blob.labels), { clients: RUN.clusters, alpha: sized([3, 8], [2, 3]), seed: 3 });
  const data = p.indices.map((r) => blob.X.selectRows(r));
  const truth = p.indices.map((r) => Array.from(r, (i) => blob.labels[i]));
  let ari = 0;
  let estimatedK = 0;
  const fm = time(() => {
    // the blobs' known sigma^2 = 1, as the paper (the estimate would add one round of k-means per client)
    const r = fedGEM(data, { client: p.classSets.map((s, c) => ({ nComponents: s.length, variance: 1, seed: c })), rounds: RUN.rounds });
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
  const peer = runPeer('fedgem.py', { data: writeMatrix('fedgem-blobs.f64', blob.X), n: blob.X.nRows, d: 5, k: RUN.clusters, labels: Array.from(blob.labels), repeats: REPEATS });
  const sk = median(peer.ms);
  const k = RUN.clusters;
  results.print(
    `FedGEM run (${k} clients holding ${sized('3-8', '2-3')} of ${k} clusters, ${(k * 1000).toLocaleString('en-US')} x 5 rows, ${RUN.rounds} rounds) against scikit-learn GaussianMixture(${k}, 'full') on the pooled rows, ms (median of ${REPEATS})`,
    ['run', 'ms', 'speedup', 'ARI', 'K'],
    [
      ['fedmix FedGEM (all clients and the server, in one process)', fm.toFixed(0), `${(sk / fm).toFixed(2)}x`, ari.toFixed(4), `${estimatedK} (estimated)`],
      ['scikit-learn GaussianMixture, central', sk.toFixed(0), '1.00x', peer.ari.toFixed(4), `${k} (given)`],
    ],
  );
  await results.write();
}
