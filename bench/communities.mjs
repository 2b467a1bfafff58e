// Issue 13, item 10: the community-based federated anomaly detection pipeline
// (Nardi, Valerio, Passarella) on Fashion-MNIST, fedmix against the paper's
// public pipeline rebuilt with scikit-learn's OneClassSVM, python3-igraph's
// fast greedy and a PyTorch autoencoder (bench/peers/communities.py, one
// thread), on the same clients (the partition is dealt here and the peer reads
// the same row indices), in the same run.
//
// Both sides: every client fits OneClassSVM(nu 0.5, gamma 'auto') thresholded
// at the (1 - d) quantile of its training scores (pyod's rule); all pairs:
// each client applies every other client's detector to its own rows and
// accepts it when |in_ji - in_ii| <= q; mutual pairs link; fast-greedy
// communities; per community FedAvg of the d-64-32-64-d autoencoder (10 rounds
// of 1 epoch, batch 32, Adam 1e-3); each client's test ROC-AUC. fedmix runs
// its federated roles in process (associate(): CommunitiesServer and
// CommunitiesClients over the in-process transport with the binary wire
// encoding, so the detectors are encoded, relayed and decoded as on a real
// transport), then communities() and trainCommunities().
//
// Timed (data loading excluded on both sides): the fits (fedmix: the FIT
// round, fits + thresholds + the detectors' upload), the association phase
// (fits, n (n - 1) scorings, decisions; fedmix's also builds the graph), the
// community detection, the per-community training with the test scoring, and
// the whole pipeline. The bar: association at least 2x faster than the
// scikit-learn pipeline, and the whole run faster.
//
//   node bench/communities.mjs                    p = 3 (30 clients), 500 rows each: a few minutes for both
//   node bench/communities.mjs --p 9 --rows-per-client 300
//   node bench/communities.mjs --full             the setting: p = 9 (90 clients), every row the partition allows (666)
//   npm run bench -- communities                  with the others, at the default size
// Options: --p, --rows-per-client, --full, --d (0.1), --q (0.08), --rounds (10), --seed (1), --json FILE.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { adjustedRandScore, associate, communities, init, partition, trainCommunities } from '../dist/index.js';
import { FASHION_MNIST_DIR, loadFashionMnist } from '../dist/node.js';
import { runPeer, table } from './common.mjs';

export const DEFAULTS = { p: 3, rowsPerClient: 500, d: 0.1, q: 0.08, rounds: 10, seed: 1 };
const OCSVM = { nu: 0.5, gamma: 'auto' };
const HIDDEN = [64, 32, 64];

function parse(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      p: { type: 'string' },
      'rows-per-client': { type: 'string' },
      full: { type: 'boolean', default: false },
      d: { type: 'string' },
      q: { type: 'string' },
      rounds: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const num = (name, v, fallback) => {
    if (v === undefined) return fallback;
    const x = Number(v);
    if (!Number.isFinite(x)) throw new Error(`--${name} must be a number, got ${v}`);
    return x;
  };
  const full = values.full;
  return {
    p: num('p', values.p, full ? 9 : DEFAULTS.p),
    // --full: no cap, the partition's largest equal share (666 rows at p = 9)
    rowsPerClient: values['rows-per-client'] === undefined ? (full ? undefined : DEFAULTS.rowsPerClient) : num('rows-per-client', values['rows-per-client']),
    d: num('d', values.d, DEFAULTS.d),
    q: num('q', values.q, DEFAULTS.q),
    rounds: num('rounds', values.rounds, DEFAULTS.rounds),
    seed: num('seed', values.seed, DEFAULTS.seed),
    json: values.json,
  };
}

const load = () => loadavg().map((v) => v.toFixed(2)).join(' ');

/** Client position -> community index, from lists of ids '0', '1', ... */
function labelsOf(groups, n) {
  const out = new Int32Array(n).fill(-1);
  groups.forEach((g, k) => g.forEach((id) => (out[Number(id)] = k)));
  return out;
}

/** The communities as lists of inlier classes, e.g. {1, 3} for a group of classes 1 and 3. */
function classSets(labels, inlier) {
  const by = new Map();
  labels.forEach((g, i) => (by.get(g) ?? by.set(g, new Set()).get(g)).add(inlier[i]));
  return [...by.values()].map((s) => `{${[...s].sort((a, b) => a - b).join(', ')}}`).sort();
}

function meanStd(v) {
  const m = v.reduce((s, x) => s + x, 0) / v.length;
  return { mean: m, std: Math.sqrt(v.reduce((s, x) => s + (x - m) ** 2, 0) / v.length) };
}

export async function run(options = {}) {
  const o = { ...DEFAULTS, ...options };
  const train = await loadFashionMnist({ split: 'train' });
  const test = await loadFashionMnist({ split: 'test' });
  const part = partition.contaminated(train.labels, {
    clientsPerClass: o.p,
    contamination: o.d,
    ...(o.rowsPerClient === undefined ? {} : { rowsPerClient: o.rowsPerClient }),
    testLabels: test.labels,
    seed: o.seed,
  });
  const n = part.indices.length;
  const rows = part.indices[0].length;
  const inlier = part.inlierClass.map(Number);
  const trainX = part.indices.map((ix) => train.X.selectRows(ix));
  const clients = part.testIndices.map((ix, i) => ({
    id: String(i),
    X: trainX[i],
    test: { X: test.X.selectRows(ix), outlier: Array.from(ix, (r) => (test.labels[r] === inlier[i] ? 0 : 1)) },
  }));
  console.log(`\nCommunity pipeline on Fashion-MNIST: p = ${o.p} (${n} clients of ${rows} rows x 784), d = ${o.d}, q = ${o.q}, ${o.rounds} FedAvg rounds of 1 epoch; one thread each, run one after the other`);

  // the peer first, on its own; then fedmix (the machine is shared: the load average is printed for each)
  const loadPeer = load();
  const peer = runPeer('communities.py', {
    folder: FASHION_MNIST_DIR,
    train: part.indices.map((ix) => Array.from(ix)),
    test: part.testIndices.map((ix) => Array.from(ix)),
    inlierClass: inlier,
    ...OCSVM,
    contamination: o.d,
    q: o.q,
    rounds: o.rounds,
    epochs: 1,
    batch: 32,
    lr: 1e-3,
    hidden: HIDDEN,
    seed: o.seed,
  });

  const loadOurs = load();
  const t0 = performance.now();
  const assoc = associate(trainX, { detector: { kind: 'ocsvm', contamination: o.d, ocsvm: OCSVM }, q: o.q, method: 'fast-greedy', onInvalidClient: 'throw' });
  const t1 = performance.now();
  const found = communities({ nodes: assoc.nodes, edges: assoc.edges }, { method: 'fast-greedy' });
  const t2 = performance.now();
  const trained = trainCommunities(clients, found.communities, { detector: 'autoencoder', rounds: o.rounds, epochs: 1, batchSize: 32, learningRate: 1e-3, hiddenLayers: HIDDEN, seed: o.seed });
  const t3 = performance.now();
  const fitRound = assoc.federation.history.find((r) => r.kind === 'communities/fit');
  const ours = {
    fitMs: fitRound.ms.configure + fitRound.ms.exchange + fitRound.ms.accept + fitRound.ms.aggregate,
    associationMs: t1 - t0,
    communityMs: t2 - t1,
    trainingMs: t3 - t2,
    totalMs: t3 - t0,
  };

  const ourLabels = labelsOf(found.communities, n);
  const peerLabels = Int32Array.from(peer.membership);
  const ideal = Int32Array.from(part.group);
  const ourAuc = meanStd(trained.clients.map((c) => c.auc));
  const peerAuc = meanStd(peer.auc);
  const sameEdges = (() => {
    const a = new Set(assoc.edges.map(([x, y]) => `${x}-${y}`));
    const b = new Set(peer.edges.map(([x, y]) => `${x}-${y}`));
    let both = 0;
    for (const e of a) if (b.has(e)) both++;
    return { fedmix: a.size, peer: b.size, both };
  })();
  const aucDiff = trained.clients.map((c, i) => Math.abs(c.auc - peer.auc[i]));

  const ratio = (a, b) => `${(b / a).toFixed(2)}x`;
  const lines = [
    ['OneClassSVM fits (all clients, thresholds)', ours.fitMs, peer.fitMs],
    ['association (fits + all-pairs scorings + decisions)', ours.associationMs, peer.associationMs],
    ['community detection (fast greedy)', ours.communityMs, peer.communityMs],
    ['per-community FedAvg training + test scoring', ours.trainingMs, peer.trainingMs],
    ['whole pipeline', ours.totalMs, peer.totalMs],
  ].map(([what, a, b]) => [what, (a / 1000).toFixed(a < 100 ? 4 : 2), (b / 1000).toFixed(b < 100 ? 4 : 2), ratio(a, b)]);
  console.log(`load average (1, 5, 15 min) before the peer: ${loadPeer}; before fedmix: ${loadOurs}; peer: scikit-learn ${peer.versions.sklearn}, igraph ${peer.versions.igraph}, torch ${peer.versions.torch}, ${peer.threads} thread`);
  console.log(table(['phase', 'fedmix s', 'sklearn + igraph + torch s', 'fedmix faster by'], lines));
  const assocRatio = peer.associationMs / ours.associationMs;
  const totalRatio = peer.totalMs / ours.totalMs;
  console.log(`issue bar: association >= 2x: ${assocRatio.toFixed(2)}x ${assocRatio >= 2 ? 'met' : 'NOT met'}; whole run faster: ${totalRatio.toFixed(2)}x ${totalRatio > 1 ? 'met' : 'NOT met'}`);
  console.log(table(['agreement', 'fedmix', 'Python pipeline'], [
    ['mutual links (in both: ' + sameEdges.both + ')', sameEdges.fedmix, sameEdges.peer],
    ['communities (by inlier classes)', classSets(ourLabels, inlier).join(' '), classSets(peerLabels, inlier).join(' ')],
    ['ARI against the ideal groups', adjustedRandScore(ideal, ourLabels).toFixed(3), adjustedRandScore(ideal, peerLabels).toFixed(3)],
    ['community test ROC-AUC, mean ± std', `${ourAuc.mean.toFixed(3)} ± ${ourAuc.std.toFixed(3)}`, `${peerAuc.mean.toFixed(3)} ± ${peerAuc.std.toFixed(3)}`],
  ]));
  const ari = adjustedRandScore(peerLabels, ourLabels);
  console.log(`ARI between the two pipelines' communities: ${ari.toFixed(3)}; per-client |AUC difference|: mean ${meanStd(aucDiff).mean.toFixed(3)}, max ${Math.max(...aucDiff).toFixed(3)}; association bytes (fedmix, binary wire): up ${assoc.federation.traffic.bytesUp}, down ${assoc.federation.traffic.bytesDown}`);
  const result = {
    settings: { ...o, clients: n, rowsPerClient: rows },
    load: { beforePeer: loadPeer, beforeFedmix: loadOurs },
    fedmix: { ...ours, edges: assoc.edges.length, communities: found.communities, auc: ourAuc, traffic: assoc.federation.traffic },
    peer: { fitMs: peer.fitMs, associationMs: peer.associationMs, communityMs: peer.communityMs, trainingMs: peer.trainingMs, totalMs: peer.totalMs, edges: peer.edges.length, membership: peer.membership, auc: peerAuc, versions: peer.versions },
    ratios: { association: assocRatio, total: totalRatio },
    agreement: { ari, edgesInBoth: sameEdges.both, ariIdeal: { fedmix: adjustedRandScore(ideal, ourLabels), peer: adjustedRandScore(ideal, peerLabels) }, aucDiffMean: meanStd(aucDiff).mean, aucDiffMax: Math.max(...aucDiff) },
  };
  if (o.json) writeFileSync(o.json, JSON.stringify(result, null, 2));
  return result;
}

// run alone: node bench/communities.mjs [--p N] [--rows-per-client R] [--full]
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const options = parse(process.argv.slice(2));
  await init();
  await run(options);
}
