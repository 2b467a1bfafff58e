// FedDistr's one-shot pipeline on letter.csv (20,000 x 16; the 26 letters are
// the base distributions, 13 task classes of two letters), for 20 and 100
// clients, against the same pipeline written with scikit-learn and scipy
// (bench/peers/feddistr.py) on the same client splits, in the same run:
//   clients  each client clusters the rows of every task label it holds
//            (GaussianMixture, full covariances, k = 1..5 by BIC of the
//            shrunk Gaussians it would upload) and describes each cluster by
//            its count, mean and OAS-shrunk covariance;
//   server   every pair of clients' base distributions matched by
//            linearSumAssignment on 2-Wasserstein costs (different task
//            labels forbidden), parallel pairs (within the sampling-noise
//            bound) joined by complete linkage, each set the members'
//            count-weighted merge: fedmix's defaults.
// The fedmix roles are driven by hand as the runtime would (configure,
// respond, accept, aggregate) without the wire encoding, so both sides time
// the same work. Agreement: the number of consolidated base distributions
// and the adjusted Rand index of the rows' consolidated base against their
// letter (the GMM initializations differ, so close, not equal).
// Partition: partition.entangled at a low coefficient (target 0.003). It gives
// every client a letter of its own, so it deals at most 26 clients; for 100,
// each of its 20 clients is split at random into 5 (the same letters seen by
// 5 clients: many truly parallel pairs). The achieved coefficients are printed.
// Issue bar: fedmix at least 2x faster than the peer.
import { readFileSync } from 'node:fs';
import { adjustedRandScore, averageEntanglement, FedDistrClient, FedDistrServer, Matrix, parseCsv, partition, Rng } from '../dist/index.js';
import { begin, median, runPeer, sized, writeF64, writeMatrix } from './common.mjs';

const SETTINGS = { kMin: 1, kMax: sized(5, 2), seed: 0 };
const TARGET = 0.003;
const REPEATS = sized(3, 1);
/** the federations' numbers of clients (above 26: each of n / 5 clients split in 5) */
const FEDERATIONS = sized([20, 100], [6, 30]);
/** quick mode: every 5th row of letter */
const ROW_STEP = sized(1, 5);

function loadLetter() {
  const t = parseCsv(readFileSync(new URL('../../shared/datasets/letter.csv', import.meta.url), 'utf8'));
  const names = t.names.filter((n) => n !== 'label');
  const keep = (column) => column.filter((_, i) => i % ROW_STEP === 0);
  const letters = keep(t.columns[t.names.indexOf('label')]);
  const sub = Int32Array.from(letters, (l) => l.charCodeAt(0) - 65);
  const X = Matrix.fromColumns(names.map((n) => Float64Array.from(keep(t.columns[t.names.indexOf(n)]), Number)));
  return { X, sub, task: sub.map((s) => s >> 1) };
}

/** Row indices per client: the entangled partition, each client split at random into `shards`. */
function clientRows(sub, task, nClients, seed) {
  const base = nClients <= 26 ? nClients : nClients / 5;
  const p = partition.entangled(sub, { clients: base, target: TARGET, tasks: task, seed });
  if (base === nClients) return p.indices;
  const rng = new Rng(seed + 1);
  const out = [];
  for (const rows of p.indices) {
    const shards = Array.from({ length: nClients / base }, () => []);
    const pick = rng.uniform(rows.length);
    rows.forEach((r, i) => shards[Math.min(shards.length - 1, Math.floor(pick[i] * shards.length))].push(r));
    for (const s of shards) out.push(Int32Array.from(s));
  }
  rng.dispose();
  return out;
}

/** One fedmix run: the client phase, the server phase, and what came out. */
function fedmixRun(X, parts) {
  const ids = parts.map((_, i) => `c${i}`);
  const ctx = { round: 1, clients: ids, available: ids };
  const server = new FedDistrServer({ dimension: X.nCols, covariance: 'full', clustering: 'gmm', criterion: 'bic', ...SETTINGS });
  const requests = server.configure(ctx);
  const t0 = performance.now();
  const clients = parts.map((p, i) => new FedDistrClient(ids[i], p.X, { labels: p.task }));
  const replies = clients.map((c, i) => c.respond(requests.get(ids[i])));
  const t1 = performance.now();
  const accepted = new Map(replies.map((m, i) => [ids[i], server.accept(m, requests.get(ids[i]))]));
  server.aggregate(ctx, accepted, []);
  const t2 = performance.now();
  const outcome = server.result();
  // each row's consolidated base, against its letter
  const predicted = [];
  const truth = [];
  clients.forEach((c, i) => {
    const sets = outcome.membership.get(ids[i]);
    for (const a of c.assignments) predicted.push(sets[a]);
    for (const s of parts[i].sub) truth.push(s);
  });
  return { clients: t1 - t0, server: t2 - t1, consolidated: outcome.estimatedBaseDistributions, uploaded: outcome.uploaded, ari: adjustedRandScore(truth, predicted) };
}

export async function run() {
  const results = begin('feddistr', 'npm run bench -- feddistr');
  const { X, sub, task } = loadLetter();
  const rows = [];
  const agreement = [];
  for (const n of FEDERATIONS) {
    const indices = clientRows(sub, task, n, 1);
    const parts = indices.map((idx) => ({ X: X.selectRows(idx), task: Int32Array.from(idx, (i) => task[i]), sub: Int32Array.from(idx, (i) => sub[i]) }));
    const counts = parts.map((p) => {
      const h = new Float64Array(26);
      for (const s of p.sub) h[s]++;
      return h;
    });
    const coefficient = averageEntanglement(counts);
    // warm-up, then the median of REPEATS runs per phase
    fedmixRun(X, parts);
    const runs = Array.from({ length: REPEATS }, () => fedmixRun(X, parts));
    const fm = { clients: median(runs.map((r) => r.clients)), server: median(runs.map((r) => r.server)) };
    const last = runs[REPEATS - 1];
    const peer = runPeer('feddistr.py', {
      d: X.nCols, ...SETTINGS, repeats: REPEATS,
      clients: parts.map((p, i) => ({
        path: writeMatrix(`fd-${n}-${i}.f64`, p.X), n: p.X.nRows,
        labels: writeF64(`fd-${n}-${i}-labels.i32`, p.task), subclasses: writeF64(`fd-${n}-${i}-sub.i32`, p.sub),
      })),
    });
    const sk = { clients: median(peer.ms.clients), server: median(peer.ms.server) };
    const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
    rows.push([`${n} clients (coefficient ${coefficient.toFixed(4)})`, 'clients', fm.clients.toFixed(0), sk.clients.toFixed(0), ratio(sk.clients, fm.clients)]);
    rows.push(['', 'server', fm.server.toFixed(0), sk.server.toFixed(0), ratio(sk.server, fm.server)]);
    rows.push(['', 'pipeline', (fm.clients + fm.server).toFixed(0), (sk.clients + sk.server).toFixed(0), ratio(sk.clients + sk.server, fm.clients + fm.server)]);
    agreement.push([`${n} clients`, `${last.uploaded} / ${peer.uploaded}`, `${last.consolidated} / ${peer.consolidated}`, `${last.ari.toFixed(3)} / ${peer.ari.toFixed(3)}`]);
  }
  const letter = `letter.csv (${X.nRows.toLocaleString('en-US')} x ${X.nCols}${ROW_STEP > 1 ? `, every ${ROW_STEP}th row` : ''})`;
  results.print(
    `FedDistr one-shot pipeline, ${letter} (full covariances shrunk by OAS, k ${SETTINGS.kMin}..${SETTINGS.kMax} by BIC, W2 matching), median of ${REPEATS} runs, ms`,
    ['federation', 'phase', 'fedmix', 'scikit-learn + scipy', 'speedup'],
    rows,
  );
  results.print('Agreement (fedmix / peer; the last run of each)', ['federation', 'uploaded base distributions', 'consolidated', 'ARI against the letters'], agreement);
  await results.write();
}
