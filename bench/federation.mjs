// The federation runtime, each figure against its baseline measured in the same run:
//
// 1. one MDM round (Algorithm 2) of 10,000 clients (C = 62, K = 3, N = 400, FEMNIST's
//    shape, as bench/mdm.mjs) through the runtime in process, with binary (Arrow IPC)
//    messages against JSON messages and against the kernel alone (every client's
//    statistics summed in one WASM call, plus the update). Issue bar: binary at
//    least 10x faster than the JSON path and within 5x of the kernel. Per-client
//    messages cannot meet the second (the codec alone costs ~10 us a message,
//    5x the kernel for 10,000); the same 10,000 users simulated in groups
//    (MdmUserGroup: one runtime client, one WASM call and one message per group,
//    as pfl-research and Flower simulations run many users) can, and give the
//    same update.
// 2. bytes per round, JSON against binary, for each algorithm on the same clients.
// 3. FedGenGMM with 20 clients (shuttle.csv) on worker threads against in process.
//    Issue bar: at least 1.6x on 2 cores.
// 4. round latency (median and 95th percentile) of distributed EM with 10, 50 and 100
//    clients over the embedded broker and over mosquitto on loopback, against in
//    process, with the sockets as fedmix sets them and with TCP no-delay forced.
// 5. 1,000 MQTT clients in a few processes (bench/fleet.mjs) in one federation over
//    each broker: rounds per second, server, broker and client-process RSS.
// first, so that every socket opened afterwards goes through its wrappers
import { forceNoDelay } from './no-delay.mjs';
import { availableParallelism } from 'node:os';
import {
  decodeMessage,
  DemClient,
  DemServer,
  DirichletMultinomialMixture,
  encodeMessage,
  FedGEMClient,
  FedGEMServer,
  FedGenGMMClient,
  FedGenGMMServer,
  InProcessTransport,
  join,
  makeBlobs,
  MdmClient,
  MdmServer,
  MdmUserGroup,
  message,
  MinMaxScaler,
  MqttTransport,
  partition,
  runFederation,
  runFederationSync,
} from '../dist/index.js';
import { freePort, makeClient, SERVER_USER, startBroker, startMosquitto, WorkerTransport } from '../dist/node.js';
import { fleetRun, fleetUsers, startMosquittoWith, startRole } from './fleet.mjs';
import { begin, iidShares, loadShuttle, median, sized, timed } from './common.mjs';
import { C, clients as mdmClients, K, kernelRound, M, N_MAX } from './mdm.mjs';
import { wasm } from './wasm-handle.mjs';

// --- 1. one MDM round of 10,000 clients (the setting and the kernel of bench/mdm.mjs) ----

const REPEATS = sized(9, 1);
const CLIENT_REPEATS = sized(3, 1);

export function mdmRound(results) {
  const { counts, model } = mdmClients();
  const kernel = timed(kernelRound(wasm(), counts, model), REPEATS);
  const roles = Array.from({ length: M }, (_, i) => new MdmClient(`client-${i}`, counts.subarray(i * C, (i + 1) * C), { seed: i }));
  const through = (encoding) => {
    const transport = new InProcessTransport(roles, { encoding });
    return timed(() => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N_MAX, rounds: 1, init: model, seed: 1 });
      try {
        const r = runFederationSync(server, transport);
        return { alpha: r.model.alpha, bytes: r.traffic.bytesUp + r.traffic.bytesDown };
      } finally {
        server.dispose();
      }
    }, CLIENT_REPEATS);
  };
  const binary = through('binary');
  const json = through('json');
  for (const r of roles) r.dispose();
  /** the same users in g groups of consecutive rows (each user with its per-client seed) */
  const grouped = (g) => {
    const groups = Array.from({ length: g }, (_, j) => {
      const [from, to] = [Math.floor((j * M) / g), Math.floor(((j + 1) * M) / g)];
      const rows = Array.from({ length: to - from }, (_, i) => counts.subarray((from + i) * C, (from + i + 1) * C));
      return new MdmUserGroup(`group-${j}`, rows, { seeds: Array.from({ length: to - from }, (_, i) => from + i) });
    });
    const transport = new InProcessTransport(groups, { encoding: 'binary' });
    const out = timed(() => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N_MAX, rounds: 1, init: model, seed: 1 });
      try {
        const r = runFederationSync(server, transport);
        if (r.traffic.users !== M) throw new Error(`the groups stood for ${r.traffic.users} users, not ${M}`);
        return { alpha: r.model.alpha, bytes: r.traffic.bytesUp + r.traffic.bytesDown, messages: r.traffic.messagesUp };
      } finally {
        server.dispose();
      }
    }, REPEATS);
    for (const x of groups) x.dispose();
    return out;
  };
  const groups2 = grouped(2);
  const groups100 = grouped(100);
  const worst = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]) / Math.abs(b[i])), 0);
  const agree = Math.max(worst(binary.out.alpha, kernel.out), worst(json.out.alpha, kernel.out), worst(groups2.out.alpha, kernel.out), worst(groups100.out.alpha, kernel.out));
  if (!(agree < 1e-9)) throw new Error(`the runtime's updated alpha differs from the kernel's by ${agree}`);
  const mb = (b) => (b / 1e6 < 1 ? (b / 1e6).toFixed(2) : (b / 1e6).toFixed(0));
  const users = M.toLocaleString('en-US');
  results.print(
    `MDM: one Algorithm 2 round of ${users} clients (C = ${C}, K = ${K}, N = ${N_MAX}), in process, ms (median; the kernel and the groups of ${REPEATS}, per-client runs of ${CLIENT_REPEATS}); the updated alpha agrees within ${agree.toExponential(1)}`,
    [`one MDM round, ${users} users (C = ${C}, K = ${K}, N = ${N_MAX}), in process`, 'ms', 'MB on the wire', 'vs kernel', 'vs JSON per client', 'us per user beyond the kernel'],
    [
      ['kernel: every client in one WASM call + update', kernel.ms.toFixed(1), '-', '1.00x', '-', '-'],
      ['runtime, one client per user, binary (Arrow IPC)', binary.ms.toFixed(0), mb(binary.out.bytes), `${(binary.ms / kernel.ms).toFixed(1)}x slower`, `${(json.ms / binary.ms).toFixed(2)}x faster`, beyond(binary.ms, kernel.ms, M)],
      ['runtime, one client per user, JSON', json.ms.toFixed(0), mb(json.out.bytes), `${(json.ms / kernel.ms).toFixed(1)}x slower`, '1.00x', beyond(json.ms, kernel.ms, M)],
      [`runtime, ${users} users in 2 groups (\`MdmUserGroup\`), binary`, groups2.ms.toFixed(1), mb(groups2.out.bytes), `${(groups2.ms / kernel.ms).toFixed(1)}x slower`, `${(json.ms / groups2.ms).toFixed(0)}x faster`, beyond(groups2.ms, kernel.ms, M)],
      [`runtime, ${users} users in 100 groups, binary`, groups100.ms.toFixed(1), mb(groups100.out.bytes), `${(groups100.ms / kernel.ms).toFixed(1)}x slower`, `${(json.ms / groups100.ms).toFixed(0)}x faster`, beyond(groups100.ms, kernel.ms, M)],
    ],
  );
  // the cost of a message as such: 10,000 replies without E (omega, u, v), encoded and decoded, nothing else
  const bare = Array.from({ length: M }, (_, i) => message('mdm/stats', `client-${i}`, 1, { omega: new Float64Array([0.2, 0.3, 0.5]), u: new Float64Array(K * C).fill(0.1), v: new Float64Array(K).fill(1) }));
  const codec = timed(() => {
    for (const m of bare) decodeMessage(encodeMessage(m, 'binary'));
  }, CLIENT_REPEATS);
  console.log(`The codec alone: ${M} messages of three small arrays (${K + K * C + K} numbers), encoded and decoded (binary): ${codec.ms.toFixed(0)} ms, ${((1000 * codec.ms) / M).toFixed(1)} us a message, ${(codec.ms / kernel.ms).toFixed(1)}x the kernel's round`);
}

/** The runtime's time per client (or user) and round beyond the kernel's, in microseconds. */
function beyond(ms, kernelMs, clients, rounds = 1) {
  return ((1000 * (ms - kernelMs)) / (clients * rounds)).toFixed(1);
}

// --- 1b. the runtime's cost per client and round: distributed EM ------------------------

/**
 * Distributed EM rounds of 2,000 clients of 20 rows each (d = 10, K = 5, diag) in
 * process, against the same rounds with every row in one client (the clients'
 * statistics in one WASM call, the server's EM step the same): the difference,
 * per client and round, is what the runtime costs beyond the kernels (messages,
 * their checks, the per-client calls).
 */
export function demPerClient(results) {
  const clients = sized(2000, 200);
  const rowsEach = 20;
  const [d, k, rounds] = [10, 5, 5];
  const b = makeBlobs({ nClusters: k, nFeatures: d, samplesPerCluster: (clients * rowsEach) / k, clusterStd: 0.05, boxHalfWidth: 0.4, seed: 7 });
  // each client's rows from every cluster (rows come cluster by cluster): an IID split
  const order = Array.from({ length: clients * rowsEach }, (_, i) => (i % k) * ((clients * rowsEach) / k) + Math.floor(i / k));
  const X = b.X.selectRows(order);
  const roles = Array.from({ length: clients }, (_, i) => new DemClient(`client-${i}`, X.selectRows(Array.from({ length: rowsEach }, (_, r) => i * rowsEach + r))));
  const one = [new DemClient('everyone', X)];
  const through = (who, encoding) => {
    const transport = new InProcessTransport(who, { encoding });
    return timed(() => {
      const server = new DemServer({ nComponents: k, nFeatures: d, covarianceType: 'diag', init: 'separated', featureRange: [-1, 1], tol: 0, maxRounds: rounds, seed: 1 });
      try {
        const r = runFederationSync(server, transport);
        return { ll: r.model.lowerBound ?? r.rounds?.at(-1)?.metrics?.logLikelihood, weights: r.model.weights };
      } finally {
        server.dispose();
      }
    }, CLIENT_REPEATS);
  };
  const kernel = through(one, 'none');
  const binary = through(roles, 'binary');
  const copies = through(roles, 'none');
  for (const r of [...roles, ...one]) r.dispose();
  const agree = Math.max(...binary.out.weights.map((w, j) => Math.abs(w - kernel.out.weights[j])));
  if (!(agree < 1e-9)) throw new Error(`the federated weights differ from one client's by ${agree}`);
  results.print(
    `distributed EM: ${rounds} rounds of ${clients.toLocaleString('en-US')} clients of ${rowsEach} rows (d = ${d}, K = ${k}, diag), in process, ms (median of ${CLIENT_REPEATS}); the weights agree within ${agree.toExponential(1)}`,
    [`distributed EM, ${clients.toLocaleString('en-US')} clients x ${rowsEach} rows, ${rounds} rounds`, 'ms', 'vs kernel', 'us per client and round beyond the kernel'],
    [
      ['kernel: every row in one client (one WASM call a round) + the EM step', kernel.ms.toFixed(1), '1.00x', '-'],
      ['runtime, binary messages (Arrow IPC)', binary.ms.toFixed(0), `${(binary.ms / kernel.ms).toFixed(1)}x slower`, beyond(binary.ms, kernel.ms, clients, rounds)],
      ["runtime, messages copied (encoding 'none')", copies.ms.toFixed(0), `${(copies.ms / kernel.ms).toFixed(1)}x slower`, beyond(copies.ms, kernel.ms, clients, rounds)],
    ],
  );
}

// --- 2. bytes per round, JSON against binary ---------------------------------------------

export function bytesPerRound(results) {
  const b = makeBlobs({ nClusters: 6, nFeatures: 4, samplesPerCluster: 200, minDistance: 6, seed: 3 });
  const p = partition.quantity(Array.from(b.labels), { clients: 10, alpha: [2, 4], seed: 3 });
  const data = p.indices.map((rows) => b.X.selectRows(rows));
  const scaled = new MinMaxScaler().fit(b.X);
  const unit = data.map((x) => scaled.transform(x));
  const hist = new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [Array.from({ length: 20 }, () => 0.3), Array.from({ length: 20 }, (_, j) => (j < 5 ? 3 : 0.5))], pi: [0, 1].map(() => Array.from({ length: 100 }, (_, i) => (i >= 29 ? 1 / 71 : 0))) }).sample(200, { seed: 4 }).histograms;
  const settings = {
    'FedGenGMM (10 clients, d = 4)': () => [new FedGenGMMServer({ nComponents: 6, nFeatures: 4, seed: 1 }), unit.map((x, i) => new FedGenGMMClient(String(i), x, { kMin: 1, kMax: 4, seed: i }))],
    'distributed EM, k-FED (10 clients, K = 6, full)': () => [new DemServer({ nComponents: 6, nFeatures: 4, covarianceType: 'full', init: 'kfed', seed: 1 }), unit.map((x, i) => new DemClient(`client-${i}`, x))],
    'FedGEM, phi tuned (10 clients)': () => [new FedGEMServer({ nFeatures: 4, rounds: 5, phi: [0.5, 1, 2, 4], variance: 'clients' }), data.map((x, i) => new FedGEMClient(String(i), x, { nComponents: p.classSets[i].length, variance: 1, seed: i }))],
    'MDM (200 clients, C = 20, K = 2, N = 100)': () => [
      new MdmServer({ nComponents: 2, nCategories: 20, maxCount: 100, rounds: 5, seed: 1 }),
      Array.from({ length: 200 }, (_, i) => new MdmClient(`client-${i}`, Array.from({ length: 20 }, (_, j) => hist.data[j * 200 + i]), { seed: i })),
    ],
  };
  const rows = [];
  for (const [name, make] of Object.entries(settings)) {
    const per = {};
    for (const encoding of ['json', 'binary']) {
      const [server, clients] = make();
      const r = runFederationSync(server, new InProcessTransport(clients, { encoding }));
      per[encoding] = (r.traffic.bytesUp + r.traffic.bytesDown) / r.rounds;
      server.dispose?.();
      for (const c of clients) c.dispose();
      if (r.model?.dispose) r.model.dispose();
      else if (r.model?.model?.dispose) r.model.model.dispose();
    }
    const bytes = (b) => b.toLocaleString('en-US', { maximumFractionDigits: 0 });
    rows.push([name, bytes(per.json), bytes(per.binary), `${(per.json / per.binary).toFixed(2)}x`]);
  }
  results.print('Bytes per round, both ways, in process (the same run in each encoding)', ['bytes per round, both ways (same run in each encoding)', 'JSON', 'binary', 'JSON / binary'], rows);
}

// --- 3. FedGenGMM on worker threads ------------------------------------------------------

export async function fedGenGMMOnWorkers(results) {
  const clients = iidShares(loadShuttle(sized(1, 10)), 20, 1);
  const kMax = sized(8, 3);
  const specs = clients.map((x, i) => ({ algorithm: 'fedgengmm', id: `client-${i}`, data: { data: x.data, nRows: x.nRows, nCols: x.nCols }, options: { kMin: 1, kMax, covarianceType: 'diag', seed: i } }));
  const server = () => new FedGenGMMServer({ nComponents: 10, nFeatures: 9, covarianceType: 'diag', seed: 1 });
  // the pool is started once and serves every run (each run trains the clients afresh)
  let t0 = performance.now();
  const transport = await WorkerTransport.start(specs);
  const startMs = performance.now() - t0;
  const roles = specs.map((s) => makeClient(s));
  const inProcess = [];
  const threaded = [];
  let same = true;
  try {
    for (let r = 0; r < 1 + CLIENT_REPEATS; r++) {
      t0 = performance.now();
      const a = runFederationSync(server(), roles);
      const ipMs = performance.now() - t0;
      t0 = performance.now();
      const b = await runFederation(server(), transport);
      const thMs = performance.now() - t0;
      // the first run of each warms up (JIT, WASM compilation in each thread)
      if (r > 0) {
        inProcess.push(ipMs);
        threaded.push(thMs);
      }
      same &&= a.model.model.means.every((v, i) => v === b.model.model.means[i]);
      a.model.model.dispose();
      b.model.model.dispose();
    }
  } finally {
    for (const c of roles) c.dispose();
    await transport.close();
  }
  const [ip, th] = [median(inProcess), median(threaded)];
  if (!same) throw new Error('the worker threads gave another model');
  results.print(
    `FedGenGMM, 20 clients of shuttle.csv (K by BIC in 1..${kMax}, global K = 10), ms (median of ${CLIENT_REPEATS} after a warm-up run); ${availableParallelism()} cores; the pool started once in ${startMs.toFixed(0)} ms; the same model both ways`,
    [`FedGenGMM, 20 clients of shuttle.csv (K by BIC in 1..${kMax}, global K = 10)`, 'ms', 'speedup'],
    [['in process', ip.toFixed(0), '1.00x'], [`worker threads (${Math.min(availableParallelism(), 20)})`, th.toFixed(0), `${(ip / th).toFixed(2)}x`]],
  );
}

// --- 4. round latency over brokers -------------------------------------------------------

/** The 95th percentile of v (nearest rank). */
const p95 = (v) => [...v].sort((a, c) => a - c)[Math.min(v.length - 1, Math.ceil(0.95 * v.length) - 1)];
const mb = (kb) => (kb / 1024).toFixed(0);

/**
 * Distributed EM round latency with N = 10, 50, 100 clients: in process, over
 * the embedded broker and over mosquitto, each broker as fedmix sets up its
 * sockets and with TCP no-delay forced by the bench on every socket (the
 * clients', the server's, aedes' and, through set_tcp_nodelay, mosquitto's),
 * so that the table shows what Nagle's algorithm costs whatever the library does.
 */
export async function brokerLatency(results) {
  const sizes = sized([10, 50, 100], [10]);
  const emRounds = sized(20, 3);
  const b = makeBlobs({ nClusters: 5, nFeatures: 3, samplesPerCluster: 400, minDistance: 6, seed: 9 });
  const dem = { nComponents: 5, nFeatures: 3, covarianceType: 'diag', init: 'separated', featureRange: [-20, 20], maxRounds: emRounds, tol: 0, seed: 1 };
  /** per-round milliseconds of the EM rounds: the runtime's own record (configure, exchange, judging, aggregate) */
  const latencies = (r) => r.history.filter((h) => h.replies).map((h) => h.ms.configure + h.ms.exchange + h.ms.accept + h.ms.aggregate);
  const table = [];
  for (const n of sizes) {
    const rows = Array.from({ length: n }, (_, c) => b.X.selectRows(Array.from({ length: 20 }, (_, i) => (c * 20 + i) % b.X.nRows)));
    const ids = rows.map((_, i) => `c${i}`);
    const users = [{ username: SERVER_USER, password: 'server', role: 'server' }, ...ids.map((id) => ({ username: id, password: `pw-${id}`, role: 'client' }))];
    const overBroker = async (start, noDelay) => {
      forceNoDelay(noDelay);
      const broker = await start();
      const roles = rows.map((x, i) => new DemClient(ids[i], x));
      try {
        const transport = await MqttTransport.connect({ url: broker.url, federation: 'bench', username: SERVER_USER, password: 'server', clients: ids });
        const joined = roles.map((c) => join({ url: broker.url, federation: 'bench', client: c, password: `pw-${c.id}` }));
        await transport.available(n, 60_000);
        const r = await runFederation(new DemServer(dem), transport, { roundTimeout: 60 });
        await Promise.all(joined);
        r.model.dispose();
        return latencies(r);
      } finally {
        forceNoDelay(false);
        for (const c of roles) c.dispose();
        await broker.close();
      }
    };
    const roles = rows.map((x, i) => new DemClient(ids[i], x));
    const local = runFederationSync(new DemServer(dem), roles);
    local.model.dispose();
    for (const c of roles) c.dispose();
    const mosquittoNoDelay = async () => startMosquittoWith({ federation: 'bench', users, port: await freePort('127.0.0.1'), extra: ['set_tcp_nodelay true'] });
    const latency = {
      'in process (binary)': latencies(local),
      'embedded broker (aedes), sockets as fedmix sets them': await overBroker(() => startBroker({ federation: 'bench', users }), false),
      'embedded broker (aedes), no-delay forced on every socket': await overBroker(() => startBroker({ federation: 'bench', users }), true),
      'mosquitto, config of writeMosquittoConfig': await overBroker(() => startMosquitto({ federation: 'bench', users }), false),
      'mosquitto + set_tcp_nodelay, no-delay forced on every client socket': await overBroker(mosquittoNoDelay, true),
    };
    const base = median(latency['in process (binary)']);
    for (const [k, v] of Object.entries(latency)) table.push([k, String(n), median(v).toFixed(1), p95(v).toFixed(1), `${(median(v) / base).toFixed(1)}x`]);
  }
  results.print(
    `Distributed EM (separated init, ${emRounds} EM rounds, 20 rows a client): per-round latency, ms, on loopback; the clients join in this process, each with its own MQTT connection; "no-delay forced" is the bench setting TCP_NODELAY itself (bench/no-delay.mjs), the other broker rows are what the library does`,
    ['distributed EM round latency', 'clients', 'median ms', '95th percentile ms', 'vs in process'],
    table,
  );
}

// --- 5. a thousand MQTT clients ----------------------------------------------------------

/**
 * One federation of 1,000 MQTT clients (bench/fleet.mjs: 4 processes of 250
 * join() clients, connecting 50 at a time; the server in a fifth process; the
 * embedded broker in a sixth, so that each RSS is its own), distributed EM on
 * 12 rows a client for a few rounds: rounds per second, the server's, the
 * broker's and a client process's RSS. Over aedes and mosquitto, each as the
 * library sets its sockets and with no-delay forced.
 */
export async function thousandClients(results) {
  const nClients = sized(1000, 100);
  const processes = sized(4, 2);
  const rounds = sized(5, 2);
  const federation = 'fleet';
  const rows = [];
  for (const brokerName of ['aedes', 'mosquitto']) {
    for (const noDelay of [false, true]) {
      let brokerRole;
      let broker;
      if (brokerName === 'aedes') {
        brokerRole = startRole('broker', { federation, nClients }, { noDelay });
        const listening = await brokerRole.next();
        broker = { url: listening.url, pid: listening.pid, close: async () => (brokerRole.child.kill('SIGTERM'), await brokerRole.exited) };
      } else {
        broker = await startMosquittoWith({ federation, users: fleetUsers(nClients), port: await freePort('127.0.0.1'), extra: noDelay ? ['set_tcp_nodelay true'] : [] });
      }
      try {
        const r = await fleetRun({ broker, federation, nClients, processes, rounds, noDelay });
        // a client whose connection is lost in a round is a dropout of that round: counted, not hidden
        if (r.accepted === 0) throw new Error(`a ${nClients}-client round accepted no reply: ${r.failures.join('; ')}`);
        if (r.accepted < nClients) console.log(`(${brokerName}: fewest replies in a round ${r.accepted}; ${r.failures.join('; ')})`);
        // the first round warms up (JIT, each client's first WASM call)
        const steady = r.roundMs.slice(1);
        rows.push([
          brokerName === 'aedes' ? 'embedded broker (aedes, own process)' : 'mosquitto',
          noDelay ? 'forced on' : 'as fedmix sets it',
          `${nClients} (${processes} processes)`,
          (r.connectMs / 1000).toFixed(1),
          r.roundMs[0].toFixed(0),
          median(steady).toFixed(0),
          (1000 / median(steady)).toFixed(2),
          mb(r.serverPeakKb),
          mb(r.brokerRssKb),
          mb(Math.max(...r.clientPeakKb)),
          String(r.accepted),
          `${r.closed.reduce((s, c) => s + c.rounds, 0)} (${r.closed.reduce((s, c) => s + c.connecting, 0)})`,
        ]);
      } finally {
        await broker.close();
      }
    }
  }
  results.print(
    `${nClients} MQTT clients in one federation (distributed EM, 12 rows a client, ${rounds} rounds; clients in ${processes} processes of join(), the server in its own, the broker in its own): rounds per second after the first round, peak RSS of the server and of the largest client process, broker RSS at the end of the rounds; a connection lost in a round makes its client a dropout of that round`,
    ['broker', 'TCP no-delay', 'clients', 'all online, s', 'first round ms', 'round median ms', 'rounds / s', 'server peak RSS MB', 'broker RSS MB', 'client process peak RSS MB', 'fewest replies in a round', 'connections lost in the rounds (connect attempts retried)'],
    rows,
  );
}

export async function run() {
  const results = begin('federation', 'npm run bench -- federation');
  mdmRound(results);
  demPerClient(results);
  bytesPerRound(results);
  await fedGenGMMOnWorkers(results);
  await brokerLatency(results);
  await thousandClients(results);
  await results.write();
}
