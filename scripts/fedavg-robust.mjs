// Robust aggregation in the FedAvg family against hostile clients (issue 25):
// satellite (2,000 rows, min-max scaled, 20% held out), 10 clients dealt by
// Dirichlet 0.3, FedAvg at its defaults (Adam 0.01, E = 5, B = 32) for 10
// rounds; client 9 honest, or claiming nSamples = 2^48 (rows), or scaling its
// update by 1e6 (scale), or both. Prints test accuracy and the largest |parameter| per rule.
//   node scripts/fedavg-robust.mjs      (after scripts/setup.sh built dist/)
import * as index from '../dist/index.js';
import * as experiments from '../dist/experiments.js';
import { dataset, deal } from '../test/support/honest-matrix.mjs';

const f = { ...index, ...experiments };
const { FedAvgClient, FedAvgServer, InProcessTransport, Network, runFederationSync } = index;
await index.init();
const data = dataset(f, 'satellite');
const parts = deal(f, data, 'dirichlet-0.3', 10, 1).map((r) => Array.from(r));
const network = { sizes: [data.X.nCols, 32, data.nClasses], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 };
const honest = (i) => new FedAvgClient(`c${i}`, data.X.selectRows(parts[i]), { labels: Int32Array.from(parts[i], (r) => data.labels[r]) });
/** client 9 lying: 'rows' claims 2^48 rows, 'scale' scales its update by 1e6, 'both' does both */
function hostile(kind) {
  const inner = honest(9);
  return {
    id: inner.id,
    protocol: inner.protocol,
    respond(m) {
      const reply = inner.respond(m);
      if (!reply) return reply;
      const p = reply.payload;
      return { ...reply, payload: { ...p, nSamples: kind === 'scale' ? p.nSamples : 2 ** 48, parameters: kind === 'rows' ? p.parameters : p.parameters.map((x) => x * 1e6) } };
    },
    dispose: () => inner.dispose?.(),
  };
}
function accuracy(parameters) {
  const net = new Network(network);
  net.setParameters(parameters);
  const p = net.predict(data.testX);
  let hit = 0;
  for (let i = 0; i < p.nRows; i++) {
    let best = 0;
    for (let k = 1; k < p.nCols; k++) if (p.get(i, k) > p.get(i, best)) best = k;
    if (best === data.testLabels[i]) hit++;
  }
  net.dispose();
  return hit / p.nRows;
}
const maxSamples = Math.max(...parts.map((p) => p.length));
const rules = [
  ['mean (default)', {}],
  [`maxSamples ${maxSamples}`, { maxSamples }],
  ['clipNorm 5', { clipNorm: 5 }],
  [`clipNorm 5, maxSamples ${maxSamples}`, { clipNorm: 5, maxSamples }],
  ['median', { aggregation: 'median' }],
  ['trimmed-mean 0.1', { aggregation: 'trimmed-mean' }],
];
console.log('| client 9 | rule | accuracy | largest abs parameter | excluded | clipped per round |');
console.log('|---|---|---|---|---|---|');
for (const who of ['honest', 'rows', 'scale', 'both']) {
  for (const [name, options] of rules) {
    const clients = [...parts.slice(0, 9).map((_, i) => honest(i)), who === 'honest' ? honest(9) : hostile(who)];
    let r;
    try {
      r = runFederationSync(new FedAvgServer({ network, rounds: 10, ...options }), new InProcessTransport(clients), { maxExcludedShare: 0.5 });
    } catch (e) {
      console.log(`| ${who} | ${name} | the run failed: ${String(e.message).slice(0, 90)}... | | | |`);
      continue;
    }
    const p = r.model.parameters;
    const largest = p.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    const clipped = r.model.history.map((h) => h.clipped).filter((x) => x !== undefined);
    console.log(`| ${who} | ${name} | ${accuracy(p).toFixed(3)} | ${largest.toExponential(2)} | ${r.excluded.map((e) => e.client).join(', ') || '-'} | ${clipped.length ? clipped.join(' ') : '-'} |`);
  }
}
