// The time of one round over MQTT (embedded broker, in this process) at N
// clients, with TCP no-delay as fedmix sets it and without it (every
// setNoDelay made a no-op: Nagle's algorithm and delayed ACKs, as before
// issue 25). The federation bench (bench/federation.mjs) measures more; this
// isolates the no-delay effect. Needs dist/ (bash scripts/setup.sh).
//
//   node scripts/mqtt-round-latency.mjs [N=10] [rounds=30]
import { Socket } from 'node:net';
import { DemClient, DemServer, init, join, Matrix, MqttTransport, runFederation } from '../dist/index.js';
import { startBroker } from '../dist/node.js';

const N = Number(process.argv[2] ?? 10);
const ROUNDS = Number(process.argv[3] ?? 30);
await init();

function rows(seed) {
  let s = seed * 2654435761 >>> 0;
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  return Array.from({ length: 40 }, (_, i) => [next() + (i % 2) * 5, next()]);
}

async function roundMs(noDelay) {
  const original = Socket.prototype.setNoDelay;
  if (!noDelay) Socket.prototype.setNoDelay = function () { return this; };
  const ids = Array.from({ length: N }, (_, i) => `c${i}`);
  const users = [{ username: 'fedmix-server', password: 'server-pw', role: 'server' }, ...ids.map((id) => ({ username: id, password: `pw-${id}`, role: 'client' }))];
  const broker = await startBroker({ federation: 'latency', users });
  const clients = ids.map((id, i) => new DemClient(id, Matrix.fromRows(rows(i + 1))));
  try {
    const transport = await MqttTransport.connect({ url: broker.url, federation: 'latency', username: 'fedmix-server', password: 'server-pw', clients: ids });
    const joins = clients.map((client) => join({ url: broker.url, federation: 'latency', client, password: `pw-${client.id}` }));
    await transport.available(N, 30_000);
    const times = [];
    let last = performance.now();
    // tol 0: every round runs; the first rounds (initialization) are left out
    const result = await runFederation(new DemServer({ nComponents: 2, nFeatures: 2, covarianceType: 'diag', init: 'kfed', seed: 1, maxRounds: ROUNDS, tol: 0 }), transport, {
      roundTimeout: 30,
      onRound: () => {
        const now = performance.now();
        times.push(now - last);
        last = now;
      },
    });
    await Promise.all(joins);
    result.model.dispose();
    const steady = times.slice(3).sort((a, b) => a - b);
    return { median: steady[Math.floor(steady.length / 2)], min: steady[0], rounds: times.length };
  } finally {
    Socket.prototype.setNoDelay = original;
    for (const c of clients) c.dispose();
    await broker.close();
  }
}

for (const noDelay of [false, true]) {
  const r = await roundMs(noDelay);
  console.log(`N=${N}, ${r.rounds} rounds, TCP no-delay ${noDelay ? 'on ' : 'off'}: median round ${r.median.toFixed(1)} ms (fastest ${r.min.toFixed(1)} ms)`);
}
