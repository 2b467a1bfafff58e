/**
 * Federations over real MQTT brokers: the embedded one (aedes) and Debian's
 * mosquitto, both started here on 127.0.0.1 with generated accounts and
 * access lists, on free ports. Clients are separate processes (`fedmix client`
 * of the built package, dist/cli.cjs) unless a test needs to reach into one.
 *
 * - every algorithm gives the model of its in-process run at the same seeds;
 * - 30% of the clients killed mid-run: distributed EM, MDM and FedGEM finish
 *   with the rest and report the dropouts; FedGenGMM aggregates the uploads
 *   that arrived before its deadline;
 * - clients publishing garbage on their reply topic are excluded, and the
 *   model is the run's without them;
 * - a client whose connection drops and comes back takes part again;
 * - wrong credentials are refused by the broker.
 *
 * Needs `bash scripts/setup.sh` first (dist/, mosquitto).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DEM_KINDS,
  CommunitiesServer,
  DemServer,
  DirichletMultinomialMixture,
  encodeMessage,
  FederationError,
  FedGEMServer,
  FedGenGMMServer,
  FedAvgServer,
  FedProxServer,
  ScaffoldServer,
  FedDistrServer,
  federationTopics,
  init,
  join,
  MdmServer,
  MqttTransport,
  runFederation,
  runFederationSync,
  decodeMessage,
  ClientHost,
  type FederationResult,
  type Message,
  type RoundRecord,
  type ServerRole,
} from '../ts/index.js';
import { csvToMatrix, parseCsv } from '../ts/data/csv.js';
import { makeClient, matrixData, type AlgorithmName, type ClientSpec } from '../ts/federated/algorithms.js';
import { clientSeed } from '../ts/random.js';
import { startBroker, type RunningBroker } from '../ts/federated/transport/broker.js';
import { startMosquitto } from '../ts/federated/transport/mosquitto.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { xorshift32, csvOf } from './helpers.js';

const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const FED = 'test';
const dir = mkdtempSync(pathJoin(tmpdir(), 'fedmix-mqtt-'));

beforeAll(async () => {
  await init();
});

afterAll(() => {
  for (const p of processes) if (p.exitCode === null) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A client of a run: its spec (what the in-process reference builds) and the command-line arguments of `fedmix client`. */
interface Planned {
  spec: ClientSpec;
  args: string[];
}


const CENTERS = [
  [0, 0],
  [4, 0],
  [0, 4],
  [4, 4],
];

/** The clients of one algorithm's run: CSV files written to `dir`, specs parsed from the same text. */
function plan(algorithm: AlgorithmName, n: number, tag: string): Planned[] {
  // `fedmix client --seed i --id <id>` seeds its role with clientSeed(i, id), so that no two clients of a run share a stream
  return Array.from({ length: n }, (_, i) => {
    const id = `${tag}${i}`;
    if (algorithm === 'mdm') {
      const next = xorshift32(100 + i);
      const size = 10 + (next() % 20);
      const counts = [0, 0, 0];
      for (let t = 0; t < size; t++) counts[i % 2 === 0 ? (next() % 10 < 7 ? 0 : 1 + (next() % 2)) : next() % 3 === 0 ? 0 : 2]! += 1;
      return { spec: { algorithm, id, data: { data: Float64Array.from(counts), nRows: 1, nCols: 3 }, options: { seed: clientSeed(i, id) } }, args: ['--counts', counts.join(','), '--seed', String(i)] };
    }
    const centers = algorithm === 'fedgem' ? [CENTERS[i % 4]!, CENTERS[(i + 1) % 4]!] : [CENTERS[i % 4]!, CENTERS[(i + 2) % 4]!, CENTERS[(i + 3) % 4]!];
    const text = csvOf(algorithm === 'fedgem' ? 80 : 120, centers, 7 + i);
    const file = pathJoin(dir, `${id}.csv`);
    writeFileSync(file, text);
    const X = csvToMatrix(parseCsv(text), { exclude: ['label'] }).X;
    const base = { algorithm, id, data: matrixData(X) };
    switch (algorithm) {
      case 'dem':
        return { spec: base, args: ['--data', file, '--drop', 'label'] };
      case 'fedgengmm':
        return { spec: { ...base, options: { kMin: 1, kMax: 3, covarianceType: 'diag', seed: clientSeed(i, id) } }, args: ['--data', file, '--drop', 'label', '--k-range', '1..3', '--seed', String(i)] };
      case 'fedavg':
      case 'fedprox':
      case 'scaffold':
      case 'feddistr': {
        // a classifier (FedDistr: the task labels): the label column gives the classes
        const labels = Int32Array.from(parseCsv(text).columns[2]!, Number);
        return { spec: { ...base, labels, options: { seed: clientSeed(i, id) } }, args: ['--data', file, '--label', 'label', '--seed', String(i)] };
      }
      case 'communities':
        return { spec: { ...base, options: { detector: { kind: 'gmm', contamination: 0.1 } } }, args: ['--data', file, '--drop', 'label', '--detector', 'gmm', '--contamination', '0.1'] };
      default:
        return { spec: { ...base, options: { nComponents: 2, localSteps: 1, seed: clientSeed(i, id) } }, args: ['--data', file, '--drop', 'label', '--components', '2', '--seed', String(i)] };
    }
  });
}

const CLASSIFIER = { sizes: [2, 8, 3], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 4 } as const;

const SERVERS: Record<AlgorithmName, () => ServerRole> = {
  dem: () => new DemServer({ nComponents: 4, nFeatures: 2, covarianceType: 'diag', init: 'kfed', seed: 3, maxRounds: 6 }),
  fedgengmm: () => new FedGenGMMServer({ nComponents: 4, nFeatures: 2, seed: 2 }),
  fedgem: () => new FedGEMServer({ nFeatures: 2, rounds: 3, phi: [0.5, 1, 2] }),
  mdm: () => new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 30, rounds: 3, seed: 1 }),
  fedavg: () => new FedAvgServer({ network: CLASSIFIER, rounds: 3, epochs: 2, batchSize: 16, optimizer: { name: 'adam', learningRate: 0.01 } }),
  fedprox: () => new FedProxServer({ network: CLASSIFIER, rounds: 3, epochs: 2, batchSize: 16, mu: 0.1 }),
  scaffold: () => new ScaffoldServer({ network: CLASSIFIER, rounds: 3, epochs: 2, batchSize: 16, optimizer: { name: 'sgd', learningRate: 0.05 } }),
  communities: () => new CommunitiesServer({ nFeatures: 2, kind: 'gmm', contamination: 0.1, q: 0.1 }),
  feddistr: () => new FedDistrServer({ dimension: 2, kMax: 2, seed: 1 }),
};

/** What each algorithm's model is, as plain numbers to compare. */
function numbers(a: AlgorithmName, model: unknown): unknown {
  switch (a) {
    case 'dem': {
      const m = model as { weights: Float64Array; means: Float64Array; covariances: Float64Array };
      return [Array.from(m.weights), Array.from(m.means), Array.from(m.covariances)];
    }
    case 'fedgengmm':
      return numbers('dem', (model as { model: unknown }).model);
    case 'fedgem': {
      const o = model as { estimatedK: number; globalCenters: Float64Array; memberships: Map<string, Int32Array> };
      return [o.estimatedK, Array.from(o.globalCenters), [...o.memberships].map(([id, m]) => [id, Array.from(m)])];
    }
    case 'mdm': {
      const m = model as DirichletMultinomialMixture;
      return [Array.from(m.tau), Array.from(m.alpha), Array.from(m.pi)];
    }
    case 'fedavg':
    case 'fedprox':
    case 'scaffold':
      return Array.from((model as { parameters: Float32Array }).parameters);
    case 'communities': {
      const a = model as { communities: string[][]; edges: [string, string][]; decisions: unknown[] };
      return [a.communities, a.edges, a.decisions];
    }
    case 'feddistr':
      return (model as { bases: { mean: Float64Array; covariance: Float64Array; count: number }[] }).bases.map((b) => [b.count, Array.from(b.mean), Array.from(b.covariance)]);
  }
}

const processes: ChildProcess[] = [];

/** `fedmix client` as its own process; resolves its exit code; `answered` counts its "answered" lines. */
function spawnClient(url: string, p: Planned, password: string): { child: ChildProcess; exited: Promise<number | null>; out: string[] } {
  const child = spawn(process.execPath, [CLI, 'client', '--algorithm', p.spec.algorithm, '--broker', url, '--federation', FED, '--id', p.spec.id, '--password', password, ...p.args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  processes.push(child);
  const out: string[] = [];
  child.stdout!.on('data', (d: Buffer) => out.push(...d.toString().split('\n').filter(Boolean)));
  child.stderr!.on('data', (d: Buffer) => out.push(...d.toString().split('\n').filter(Boolean)));
  return { child, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))), out };
}

const password = (id: string) => `pw-${id}-${id.length}`;

interface BrokerKind {
  name: string;
  start(users: { username: string; password: string; role: 'server' | 'client' }[]): Promise<RunningBroker>;
}

const BROKERS: BrokerKind[] = [
  { name: 'embedded broker', start: (users) => startBroker({ federation: FED, users }) },
  { name: 'mosquitto', start: (users) => startMosquitto({ federation: FED, users }) },
];

const SERVER_PASSWORD = 'server-secret';

/** A broker that knows the server and these clients, and the server's transport over it; both closed after `body`. */
async function withBroker<T>(ids: string[], body: (broker: RunningBroker, transport: MqttTransport) => Promise<T>, kind: BrokerKind = BROKERS[0]!, defaultRoundTimeout?: number): Promise<T> {
  const broker = await kind.start([{ username: SERVER_USER, password: SERVER_PASSWORD, role: 'server' }, ...ids.map((id) => ({ username: id, password: password(id), role: 'client' as const }))]);
  try {
    const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: SERVER_PASSWORD, clients: ids, defaultRoundTimeout });
    return await body(broker, transport);
  } finally {
    await broker.close();
  }
}

/** A broker for these clients (and the server), the run's server over it, the clients as processes. */
async function federate(
  kind: BrokerKind,
  algorithm: AlgorithmName,
  clients: Planned[],
  options: { onRound?: (r: RoundRecord, procs: ReturnType<typeof spawnClient>[]) => void; onJoined?: (procs: ReturnType<typeof spawnClient>[]) => void; minClients?: number; roundTimeout?: number; extraIds?: string[]; beforeRun?: (url: string) => Promise<void> } = {},
): Promise<{ result: FederationResult; procs: ReturnType<typeof spawnClient>[]; dropped?: Readonly<Record<string, number>> }> {
  const ids = [...clients.map((c) => c.spec.id), ...(options.extraIds ?? [])];
  return withBroker(
    ids,
    async (broker, transport) => {
      const procs = clients.map((c) => spawnClient(broker.url, c, password(c.spec.id)));
      await options.beforeRun?.(broker.url);
      const minClients = options.minClients ?? ids.length;
      // wait for everyone before round 1, so that no round starts without a client that is merely slow to boot
      await transport.available(minClients, 30_000);
      options.onJoined?.(procs);
      const result = await runFederation(SERVERS[algorithm](), transport, {
        minClients: Math.min(minClients, 2),
        roundTimeout: options.roundTimeout ?? 30,
        onRound: (r) => options.onRound?.(r, procs),
      });
      await Promise.all(procs.map((p) => Promise.race([p.exited, new Promise((r) => setTimeout(r, 10_000))])));
      // the embedded broker's drops for full queues (none for clients that acknowledge)
      return { result, procs, dropped: broker.droppedOffline?.() };
    },
    kind,
    30,
  );
}

/** The same clients' run in process. */
function inProcess(algorithm: AlgorithmName, clients: Planned[]): FederationResult {
  const roles = clients.map((c) => makeClient(c.spec));
  try {
    return runFederationSync(SERVERS[algorithm](), roles);
  } finally {
    for (const r of roles) r.dispose();
  }
}

describe.each(BROKERS)('over the $name', (kind) => {
  test.each(['dem', 'fedgengmm', 'fedgem', 'mdm', 'scaffold', 'communities', 'feddistr'] as const)('%s: client processes give the in-process model', async (algorithm) => {
    const clients = plan(algorithm, algorithm === 'mdm' ? 6 : 4, `${algorithm}-${kind.name === 'mosquitto' ? 'm' : 'e'}`);
    const { result, procs, dropped } = await federate(kind, algorithm, clients);
    // honest clients acknowledge every message at once: the embedded broker's caps (defaults) never drop one
    if (kind === BROKERS[0]) expect(dropped).toEqual({});
    expect(result.excluded).toEqual([]);
    expect(result.failures).toEqual([]);
    expect(numbers(algorithm, result.model)).toEqual(numbers(algorithm, inProcess(algorithm, clients).model));
    // every client process ended by itself when the server said the run was over
    for (const p of procs) expect(p.child.exitCode, p.out.join('\n')).toBe(0);
  });

  test('wrong credentials are refused by the broker', async () => {
    const broker = await kind.start([{ username: 'alice', password: 'right', role: 'client' }]);
    try {
      const role = (id: string) => makeClient({ algorithm: 'mdm', id, data: { data: Float64Array.of(1, 2, 3), nRows: 1, nCols: 3 } });
      const attempt = async (pw: string, id = 'alice') => {
        const r = role(id);
        try {
          return await join({ url: broker.url, federation: FED, client: r, password: pw, connectTimeout: 5 });
        } finally {
          r.dispose();
        }
      };
      await expect(attempt('wrong')).rejects.toThrow(/could not connect to the MQTT broker/);
      // an unknown user, even with a password another user has
      await expect(attempt('right', 'mallory')).rejects.toThrow(FederationError);
    } finally {
      await broker.close();
    }
  });
});

describe('30% of the clients killed mid-run', () => {
  test.each(['dem', 'mdm', 'fedgem'] as const)('%s finishes with the rest and reports the dropouts', async (algorithm) => {
    const clients = plan(algorithm, 7, `${algorithm}-k`);
    const victims = [clients[1]!.spec.id, clients[4]!.spec.id];
    const { result } = await federate(BROKERS[1]!, algorithm, clients, {
      minClients: 7,
      // killed between rounds: asked in round 2, their last will arrives during it
      onRound: (r, procs) => {
        if (r.round === 1) for (const p of procs) if (victims.includes(p.child.spawnargs[p.child.spawnargs.indexOf('--id') + 1]!)) p.child.kill('SIGKILL');
      },
    });
    const dropped = result.failures.filter((f) => f.kind === 'dropout');
    expect(dropped.map((f) => f.client).sort()).toEqual([...victims].sort());
    expect(dropped.every((f) => f.round === 2 && !f.excluded)).toBe(true);
    expect(result.excluded).toEqual([]);
    expect(result.history.filter((h) => h.replies).at(-1)!.accepted).toBe(5);
    expect(result.rounds).toBeGreaterThan(2);
  });

  test('fedgengmm aggregates the uploads that arrived before its deadline', async () => {
    const clients = plan('fedgengmm', 7, 'fgk');
    const victims = [clients[2]!.spec.id, clients[5]!.spec.id];
    const { result } = await federate(BROKERS[1]!, 'fedgengmm', clients, {
      roundTimeout: 4,
      // frozen once they have joined: they never upload, and are killed after the deadline
      onJoined: (procs) => {
        for (const p of procs) if (victims.includes(p.child.spawnargs[p.child.spawnargs.indexOf('--id') + 1]!)) p.child.kill('SIGSTOP');
        setTimeout(() => procs.forEach((p) => p.child.exitCode === null && victims.some((v) => p.child.spawnargs.includes(v)) && p.child.kill('SIGKILL')), 6_000);
      },
    });
    const model = result.model as { clients: string[] };
    expect(model.clients).toEqual(clients.map((c) => c.spec.id).filter((id) => !victims.includes(id)));
    expect(result.failures.map((f) => [f.client, f.kind])).toEqual(victims.map((v) => [v, 'timeout']));
    // the same as aggregating those five in process
    expect(numbers('fedgengmm', result.model)).toEqual(numbers('fedgengmm', inProcess('fedgengmm', clients.filter((c) => !victims.includes(c.spec.id))).model));
  });
});

/** A client that answers every request with garbage of one kind, published on its own reply topic. */
async function rogue(url: string, id: string, garbage: (request: Message, honest: Message) => Uint8Array): Promise<() => Promise<void>> {
  const topics = federationTopics(FED);
  const honest = new ClientHost(makeClient({ ...plan('dem', 1, `${id}-data`)[0]!.spec, id }));
  const client = await connectAsync(url, { username: id, password: password(id), clientId: id, clean: false, reconnectPeriod: 0 });
  client.on('message', (topic, payload) => {
    if (topic !== topics.down(id)) return;
    const request = decodeMessage(Uint8Array.prototype.slice.call(payload));
    const reply = decodeMessage(honest.handleSync(encodeMessage(request, 'binary'))!);
    void client.publishAsync(topics.up(id), Buffer.from(garbage(request, reply)), { qos: 1 });
  });
  await client.subscribeAsync(topics.down(id), { qos: 1 });
  await client.publishAsync(topics.status(id), JSON.stringify({ state: 'online' }), { qos: 1 });
  return () => client.endAsync();
}

test('clients publishing garbage are excluded, and the model is the one without them', async () => {
  const clients = plan('dem', 3, 'h');
  const variants: [string, (request: Message, honest: Message) => Uint8Array, RegExp][] = [
    ['mutated', (_r, h) => encodeMessage(h, 'binary').slice(0, 300), /not a valid fedmix Arrow IPC stream/],
    ['oversize', () => new Uint8Array(3 * 2 ** 20), /over the limit/],
    ['wrong-kind', (_r, h) => encodeMessage({ ...h, kind: DEM_KINDS.count, payload: { rows: 10, features: 2 } }, 'binary'), /expected a dem\/kfed-local message, got dem\/count/],
    ['replay', (r, h) => encodeMessage({ ...h, round: r.round - 1 }, 'binary'), /is for round 0, not 1/],
    ['impostor', (_r, h) => encodeMessage({ ...h, from: 'h0' }, 'binary'), /claims to come from "h0"/],
  ];
  const ids = [...clients.map((c) => c.spec.id), ...variants.map(([v]) => `r-${v}`)];
  await withBroker(ids, async (broker, transport) => {
    const stops: (() => Promise<void>)[] = [];
    try {
      for (const [v, garbage] of variants) stops.push(await rogue(broker.url, `r-${v}`, garbage));
      for (const c of clients) spawnClient(broker.url, c, password(c.spec.id));
      await transport.available(ids.length, 30_000);
      // five rogues among eight clients: more than the default share of exclusions, allowed here (the share has its own tests)
      const result = await runFederation(SERVERS.dem(), transport, { roundTimeout: 30, maxMessageBytes: 2 ** 20, maxExcludedShare: 1 });
      expect(result.excluded.map((e) => e.client)).toEqual(variants.map(([v]) => `r-${v}`));
      variants.forEach(([v, , reason], i) => expect(result.excluded[i]!.reason, v).toMatch(reason));
      expect(numbers('dem', result.model)).toEqual(numbers('dem', inProcess('dem', clients).model));
    } finally {
      await Promise.all(stops.map((s) => s()));
    }
  });
});

test('a client whose connection drops and comes back within the run takes part again', async () => {
  const clients = plan('dem', 3, 'j');
  const ids = clients.map((c) => c.spec.id);
  const roles = clients.map((c) => makeClient(c.spec));
  try {
    await withBroker(ids, async (broker, transport) => {
      const drop = new AbortController();
      const joins = roles.map((role, i) => join({ url: broker.url, federation: FED, client: role, password: password(role.id), signal: i === 1 ? drop.signal : undefined }));
      const dropped = joins[1]!.catch((e: unknown) => e);
      let back: Promise<unknown> | undefined;
      await transport.available(3, 10_000);
      const result = await runFederation(new DemServer({ nComponents: 4, nFeatures: 2, covarianceType: 'diag', init: 'kfed', seed: 3, maxRounds: 8, tol: 0 }), transport, {
        roundTimeout: 10,
        onRound: (r) => {
          if (r.round === 2) drop.abort();
          if (r.round === 4) back = join({ url: broker.url, federation: FED, client: roles[1]!, password: password(roles[1]!.id) });
        },
      });
      expect(await dropped).toBeInstanceOf(FederationError);
      await back;
      // out for a round or two (a dropout, or simply not online when a round began), then asked again
      const asked = result.history.map((h) => h.asked);
      expect(asked.slice(0, 2)).toEqual([3, 3]);
      expect(Math.min(...asked.slice(2, 5))).toBe(2);
      expect(asked.at(-1)).toBe(3);
      expect(result.excluded).toEqual([]);
    });
  } finally {
    for (const r of roles) r.dispose();
  }
});

test('a request the broker delivers twice (QoS 1) is answered once: the copy gets the same reply and the model is unchanged', async () => {
  const clients = plan('mdm', 3, 'q');
  const ids = clients.map((c) => c.spec.id);
  const roles = clients.map((c) => makeClient(c.spec));
  try {
    await withBroker(ids, async (broker, transport) => {
      // as after a reconnect of a persistent session: the second client's first request arrives twice
      const mqttClient = (transport as unknown as { client: { publishAsync: (t: string, p: Uint8Array, o: object) => Promise<unknown> } }).client;
      const publish = mqttClient.publishAsync.bind(mqttClient);
      let doubled = false;
      mqttClient.publishAsync = async (topic, payload, options) => {
        const r = await publish(topic, payload, options);
        if (!doubled && topic === federationTopics(FED).down(ids[1]!)) {
          doubled = true;
          await publish(topic, payload, options);
        }
        return r;
      };
      const joins = roles.map((role) => join({ url: broker.url, federation: FED, client: role, password: password(role.id) }));
      await transport.available(3, 10_000);
      const result = await runFederation(SERVERS.mdm(), transport, { roundTimeout: 10 });
      const answered = await Promise.all(joins);
      expect(doubled).toBe(true);
      expect(result.failures).toEqual([]);
      // the copy was not handled as a request of its own
      expect(answered[1]!.answered).toBe(answered[0]!.answered);
      expect(numbers('mdm', result.model)).toEqual(numbers('mdm', inProcess('mdm', clients).model));
    });
  } finally {
    for (const r of roles) r.dispose();
  }
});
