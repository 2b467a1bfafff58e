// One fedmix client on a small Linux device (Raspberry Pi class), measured
// here: the client runs in its own Node process with the JavaScript heap
// capped as a device would cap it (--max-old-space-size), joins a federation
// that this process serves over MQTT (the embedded broker, TCP), and reports
// the time of each request it answered and its peak resident memory (RSS).
// Both builds: SIMD128 and the scalar twin (init({ backend: 'scalar' }), what
// an engine without SIMD128 runs). Needs dist/ (bash scripts/setup.sh) and
// Fashion-MNIST (Debian's dataset-fashion-mnist, installed by setup.sh).
//
//   node scripts/edge-device.mjs [heapMB=128]
//
// DEM: a client holding a tenth of the shuttle set (5,800 rows, 9 sensor
// features), 7 full-covariance components. FedAvg: a client holding 6,000
// Fashion-MNIST images, the 784-128-10 classifier, one local epoch of
// batches of 32 per round.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { csvToMatrix, DemClient, DemServer, FedAvgClient, FedAvgServer, init, join, MqttTransport, parseCsv, runFederation } from '../dist/index.js';
import { loadFashionMnist, SERVER_USER, startBroker } from '../dist/node.js';

const FED = 'device';
const DEM = { nComponents: 7, nFeatures: 9, covarianceType: 'full', init: 'kfed', seed: 3, maxRounds: 8, tol: 0 };
const NETWORK = { sizes: [784, 128, 10], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 };
const FEDAVG = { network: NETWORK, rounds: 3, epochs: 1, batchSize: 32 };

async function clientData(algorithm) {
  if (algorithm === 'dem') {
    // the shared datasets folder beside the repository; the device's share only (every tenth row) is parsed
    const [header, ...lines] = readFileSync(new URL('../../shared/datasets/shuttle.csv', import.meta.url), 'utf8').trim().split('\n');
    const { X } = csvToMatrix(parseCsv([header, ...lines.filter((_, i) => i % 10 === 0)].join('\n')), { exclude: ['label'] });
    return { rows: X.toRows() };
  }
  // the test split's file (10,000 images): a device holds its share, not the 60,000 of the training file
  const { X, labels } = await loadFashionMnist({ split: 'test', n: 6000 });
  return { X, labels };
}

/** The child: one client, timing each request it answers. */
async function client(algorithm, backend, url) {
  await init({ backend });
  const { Matrix } = await import('../dist/index.js');
  const data = await clientData(algorithm);
  const role = algorithm === 'dem' ? new DemClient('device', Matrix.fromRows(data.rows)) : new FedAvgClient('device', data.X, { labels: data.labels, seed: 1 });
  const answered = [];
  const respond = role.respond.bind(role);
  // the same role, its answers timed (the transport's own time is not the client's compute)
  const timed = new Proxy(role, {
    get(target, key) {
      if (key === 'respond') {
        return async (request) => {
          const t = performance.now();
          const reply = await respond(request);
          answered.push({ kind: request.kind, ms: performance.now() - t });
          return reply;
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  // what the process holds before the first round (runtime, WASM instance, the client's data), and its peak over the run
  const beforeMB = process.memoryUsage().rss / 2 ** 20;
  const r = await join({ url, federation: FED, client: timed, password: 'pw-device' });
  console.log(JSON.stringify({ ok: r.ok, answered, beforeMB, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
}

/** The parent: a federation of that one client, served here. */
async function measure(algorithm, backend, heapMB) {
  const broker = await startBroker({ federation: FED, users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }, { username: 'device', password: 'pw-device', role: 'client' }] });
  try {
    const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: ['device'] });
    const child = spawn(process.execPath, [`--max-old-space-size=${heapMB}`, fileURLToPath(import.meta.url), 'client', algorithm, backend, broker.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise((resolve) => child.on('close', resolve));
    await transport.available(1, 60_000);
    const server = algorithm === 'dem' ? new DemServer(DEM) : new FedAvgServer(FEDAVG);
    const result = await runFederation(server, transport, { roundTimeout: 300 });
    result.model.dispose?.();
    const code = await exited;
    if (code !== 0) throw new Error(`the client exited with ${code}`);
    return JSON.parse(out.trim().split('\n').pop());
  } finally {
    await broker.close();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === 'client') {
  await client(process.argv[3], process.argv[4], process.argv[5]);
} else {
  const heapMB = Number(process.argv[2] ?? 128);
  await init();
  console.log(`node ${process.version}, JavaScript heap capped at ${heapMB} MB (--max-old-space-size); one client in its own process`);
  console.log('| algorithm | build | the client\'s time per request (median ms, count) | RSS before round 1 (MB) | peak RSS (MB) |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const algorithm of ['dem', 'fedavg']) {
    for (const backend of ['simd', 'scalar']) {
      const r = await measure(algorithm, backend, heapMB);
      if (!r.ok) throw new Error(`${algorithm} ${backend}: the run did not end well`);
      const kinds = [...new Set(r.answered.map((a) => a.kind))];
      const cells = kinds.map((k) => {
        const ms = r.answered.filter((a) => a.kind === k).map((a) => a.ms);
        return `${k}: ${median(ms).toFixed(1)} (${ms.length})`;
      });
      console.log(`| ${algorithm} | ${backend} | ${cells.join('; ')} | ${r.beforeMB.toFixed(0)} | ${r.maxRssMB.toFixed(0)} |`);
    }
  }
}
