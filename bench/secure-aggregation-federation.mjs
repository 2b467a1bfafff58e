// Secure aggregation's costs in a federation (issue 26): one distributed EM
// round (separated init, 20 rows of 3-D blobs a client, K = 5 diagonal: 37
// summed values a reply) with secureAggregation at its defaults (SecAgg+:
// O(log n) neighbours, a majority threshold, clip 2^36; X25519 where
// WebCrypto has it) against the same round plain, measured in the same run:
// bytes per client (up and down: every message of the round's five exchanges,
// advertise, share, mask, consistency and unmask, as the transport carried
// it, each once: the run's traffic) and wall time per
// client (the round's time over its clients; in process the clients run one
// after another on one thread, so that is each client's share of the work,
// server included). n = 10, 100 and 1,000 in process; n = 50 over the
// embedded broker (each client its own MQTT connection, joined in this
// process).
//   npm run bench -- secure-aggregation-federation
import { DemClient, DemServer, join, makeBlobs, MqttTransport, runFederation } from '../dist/index.js';
import { SERVER_USER, startBroker } from '../dist/node.js';
import { begin, median, sized } from './common.mjs';

const REPEATS = sized(3, 1);

function setting(n) {
  const b = makeBlobs({ nClusters: 5, nFeatures: 3, samplesPerCluster: 400, minDistance: 6, seed: 9 });
  const rows = Array.from({ length: n }, (_, c) => b.X.selectRows(Array.from({ length: 20 }, (_, i) => (c * 20 + i) % b.X.nRows)));
  return { rows, ids: rows.map((_, i) => `c${i}`) };
}

const DEM = { nComponents: 5, nFeatures: 3, covarianceType: 'diag', init: 'separated', featureRange: [-20, 20], maxRounds: 1, tol: 0, seed: 1 };

/** One round over `transport()`, plain or secure: medians of wall ms, and the bytes, per client; the secure round's record. */
async function measure(n, transport, secure) {
  const ms = [];
  let bytes = 0;
  let record;
  for (let r = 0; r < REPEATS; r++) {
    const { t, close } = await transport();
    const server = new DemServer(DEM);
    try {
      const t0 = performance.now();
      const result = await runFederation(server, t, secure ? { secureAggregation: {}, roundTimeout: 120 } : { roundTimeout: 120 });
      ms.push(performance.now() - t0);
      const round = result.history.find((h) => h.replies);
      if (round.accepted === 0 || (secure && round.secure.survivors !== n)) throw new Error(`a ${n}-client round lost clients: ${JSON.stringify(result.failures.slice(0, 3))}`);
      bytes = (result.traffic.bytesUp + result.traffic.bytesDown) / n;
      record = round.secure;
      result.model.dispose();
    } finally {
      server.dispose();
      await close();
    }
  }
  return { ms: median(ms) / n, bytes, record };
}

function inProcess(n) {
  const { rows, ids } = setting(n);
  return async () => {
    const { InProcessTransport } = await import('../dist/index.js');
    const roles = rows.map((x, i) => new DemClient(ids[i], x));
    return { t: new InProcessTransport(roles), close: async () => roles.forEach((c) => c.dispose()) };
  };
}

function overBroker(n) {
  const { rows, ids } = setting(n);
  const users = [{ username: SERVER_USER, password: 'server', role: 'server' }, ...ids.map((id) => ({ username: id, password: `pw-${id}`, role: 'client' }))];
  return async () => {
    const broker = await startBroker({ federation: 'bench', users });
    const roles = rows.map((x, i) => new DemClient(ids[i], x));
    const t = await MqttTransport.connect({ url: broker.url, federation: 'bench', username: SERVER_USER, password: 'server', clients: ids });
    const joined = roles.map((c) => join({ url: broker.url, federation: 'bench', client: c, password: `pw-${c.id}` }));
    await t.available(n, 60_000);
    return {
      t,
      close: async () => {
        await Promise.all(joined);
        for (const c of roles) c.dispose();
        await broker.close();
      },
    };
  };
}

const kb = (b) => (b / 1024).toFixed(2);

export async function run() {
  const results = begin('secure-aggregation-federation', 'npm run bench -- secure-aggregation-federation');
  const cases = [...sized([10, 100, 1000], [10]).map((n) => ['in process', n, inProcess(n)]), ['embedded broker', sized(50, 10), null]];
  const rows = [];
  for (const [where, n, given] of cases) {
    const transport = given ?? overBroker(n);
    const plain = await measure(n, transport, false);
    const secure = await measure(n, transport, true);
    const r = secure.record;
    rows.push([where, n, `${r.neighbours} / ${r.threshold}`, kb(plain.bytes), kb(secure.bytes), `${(secure.bytes / plain.bytes).toFixed(1)}x`, plain.ms.toFixed(2), secure.ms.toFixed(2), `${(secure.ms / plain.ms).toFixed(1)}x`, r.bound.toExponential(1)]);
    console.log(`(${where}, n = ${n}: done)`);
  }
  results.print(
    'One distributed EM round (37 summed values a reply), secure aggregation at its defaults against plain, same clients and run: KB per client (up and down, every message of the five stages once) and wall ms per client (the round over its clients), medians of ' + REPEATS + ' runs',
    ['transport', 'clients', 'neighbours / threshold', 'plain KB/client', 'secure KB/client', 'bytes ratio', 'plain ms/client', 'secure ms/client', 'time ratio', 'quantization bound'],
    rows,
  );
  await results.write();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { init } = await import('../dist/index.js');
  await init();
  await run();
}
