/**
 * Broker faults and honest liveness (issue 25, items 3 and 4), with real
 * brokers and, where a process is the point, `fedmix server` and `fedmix
 * client` processes of the built package (dist/cli.cjs):
 * - mosquitto killed mid-run and started again on its port: the server and
 *   its clients reconnect, the round in flight is repeated, and the model is
 *   the uninterrupted run's; gone for longer than the reconnect window, the
 *   run fails with a BrokerError and the processes exit non-zero;
 * - a client that publishes a retained `online` and disconnects is not
 *   counted as online, on both brokers (the embedded one refuses the publish);
 * - a client that stops answering leaves the quorum after maxMissedRounds
 *   rounds and comes back when it is back; honest clients slow once, or that
 *   reconnect, never leave it (real data, default settings).
 *
 * Needs `bash scripts/setup.sh` first (dist/, mosquitto).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DemServer, federationTopics, init, join, MqttTransport, runFederation, runFederationSync, type ClientRole, type Message } from '../ts/index.js';
import { parseOptions } from '../ts/cli/args.js';
import { clientOptions, clientRoleOptions, serverOptions, serverRoleOptions } from '../ts/cli/federation.js';
import { csvToMatrix, parseCsv } from '../ts/data/csv.js';
import { makeClient, makeServer, matrixData, resultJson } from '../ts/federated/algorithms.js';
import { startBroker, type RunningBroker } from '../ts/federated/transport/broker.js';
import { startMosquitto, type RunningMosquitto } from '../ts/federated/transport/mosquitto.js';
import { SERVER_USER } from '../ts/federated/serve.js';

const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const ABALONE = fileURLToPath(new URL('../../shared/datasets/abalone.csv', import.meta.url));
const FED = 'faults';
const SERVER_PASSWORD = 'server-secret';
const dir = mkdtempSync(pathJoin(tmpdir(), 'fedmix-faults-'));
const processes: ChildProcess[] = [];

beforeAll(async () => {
  await init();
});

afterAll(() => {
  for (const p of processes) if (p.exitCode === null) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const password = (id: string) => `pw-${id}`;
const accounts = (ids: string[]) => [{ username: SERVER_USER, password: SERVER_PASSWORD, role: 'server' as const }, ...ids.map((id) => ({ username: id, password: password(id), role: 'client' as const }))];

/** Abalone's seven measurements (real data), rows [from, to) as a CSV a client reads. */
const abalone = (() => {
  const lines = readFileSync(ABALONE, 'utf8').trim().split('\n');
  const header = lines[0]!.split(',').slice(1, 8).join(',');
  return (from: number, to: number) => [header, ...lines.slice(1 + from, 1 + to).map((l) => l.split(',').slice(1, 8).join(','))].join('\n') + '\n';
})();

const CLIENTS = ['c0', 'c1', 'c2'];
for (const [i, id] of CLIENTS.entries()) writeFileSync(pathJoin(dir, `${id}.csv`), abalone(300 * i, 300 * (i + 1)));
writeFileSync(pathJoin(dir, 'clients.txt'), CLIENTS.join('\n') + '\n');

/** A command of the built CLI in the background: its output as it comes, and its exit. */
function run(args: string[]): { child: ChildProcess; err: () => string; out: () => string; exited: Promise<number | null>; saw: (pattern: RegExp) => Promise<void> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  processes.push(child);
  let out = '';
  let err = '';
  const waiting: { pattern: RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of waiting.splice(0)) (w.pattern.test(err) ? w.resolve() : waiting.push(w));
  };
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => ((err += d.toString()), check()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    err: () => err,
    out: () => out,
    exited,
    saw: (pattern) => new Promise<void>((resolve, reject) => {
      waiting.push({ pattern, resolve });
      check();
      void exited.then(() => reject(new Error(`exited before ${pattern}: ${err}`)));
    }),
  };
}

/** The command lines of the run: `fedmix server` over `url` (dem on abalone, many rounds) and each client's. */
const DEM = ['--algorithm', 'dem', '--features', '7', '--components', '3', '--covariance', 'diag', '--tol', '0', '--max-rounds', '30', '--round-timeout', '20', '--join-timeout', '60'];
const serverArgs = (url: string) => ['--federation', FED, '--broker', url, '--username', SERVER_USER, '--password', SERVER_PASSWORD, '--clients', pathJoin(dir, 'clients.txt'), ...DEM];
const clientArgs = (url: string, id: string) => ['--algorithm', 'dem', '--federation', FED, '--broker', url, '--id', id, '--password', password(id), '--data', pathJoin(dir, `${id}.csv`)];

/** `fedmix server` and the processes of `ids`. */
function federation(url: string, model: string, extra: { server?: string[]; client?: string[]; ids?: string[] } = {}) {
  const server = run(['server', ...serverArgs(url), '--out', model, ...(extra.server ?? [])]);
  const clients = (extra.ids ?? CLIENTS).map((id) => run(['client', ...clientArgs(url, id), ...(extra.client ?? [])]));
  return { server, clients };
}

/** The same run in process, from the same command lines: the uninterrupted model, as `--out` writes it. */
function uninterrupted(): unknown {
  const o = parseOptions(serverArgs('mqtt://unused:1'), serverOptions);
  const roles = CLIENTS.map((id, i) => {
    const c = parseOptions(clientArgs('mqtt://unused:1', id), clientOptions);
    return makeClient({ algorithm: 'dem', id, data: matrixData(csvToMatrix(parseCsv(abalone(300 * i, 300 * (i + 1)))).X), options: clientRoleOptions('dem', c) });
  });
  const server = makeServer('dem', serverRoleOptions('dem', o));
  try {
    return JSON.parse(JSON.stringify(resultJson('dem', runFederationSync(server, roles).model)));
  } finally {
    server.dispose?.();
    for (const r of roles) r.dispose();
  }
}

/** The mixture of a saved model: its weights, means and covariances. */
function mixture(saved: unknown): unknown {
  const m = saved as { model?: unknown; weights?: unknown; means?: unknown; covariances?: unknown };
  if (m.means === undefined && m.model !== undefined) return mixture(m.model);
  return [m.weights, m.means, m.covariances];
}

/** Kills mosquitto at once (as a crash would) and waits until it is gone. */
async function crash(m: RunningMosquitto): Promise<void> {
  process.kill(m.pid, 'SIGKILL');
  await m.close();
}

describe('a broker restart', () => {
  test('mosquitto killed mid-run and back 1.5 s later: server and clients reconnect, the round in flight is repeated, the model is the uninterrupted one', async () => {
    let broker = await startMosquitto({ federation: FED, users: accounts(CLIENTS) });
    const port = broker.port;
    try {
      const faulted = federation(broker.url, pathJoin(dir, 'faulted.json'));
      await faulted.server.saw(/round 3 \(/);
      await crash(broker);
      await new Promise((r) => setTimeout(r, 1500));
      broker = await startMosquitto({ federation: FED, users: accounts(CLIENTS), port });
      const code = await faulted.server.exited;
      const log = faulted.server.err();
      expect(code, log).toBe(0);
      expect(log).toMatch(/fedmix server: the connection to the MQTT broker was lost; reconnecting for up to 60 s/);
      expect(log).toMatch(/fedmix server: connected to the MQTT broker again after \d+\.\d s/);
      // the round in flight, repeated: in its record and its log line
      expect(log).toMatch(/round \d+ \(dem\/[^)]+\): 3\/3 accepted; repeated: the connection to the broker was lost for \d+\.\d s, \d+ requests? sent again/);
      expect(log).not.toMatch(/timeout|dropout/);
      for (const c of faulted.clients) {
        expect(await c.exited, c.err()).toBe(0);
        expect(c.err()).toMatch(/connected to the MQTT broker again/);
        expect(c.out()).toMatch(/the run ended well/);
      }
      const model = JSON.parse(readFileSync(pathJoin(dir, 'faulted.json'), 'utf8'));
      expect((mixture(model) as unknown[])[1]).toHaveLength(21);
      expect(mixture(model)).toEqual(mixture(uninterrupted()));
    } finally {
      await broker.close();
    }
  }, 120_000);

  test('a broker gone for longer than the reconnect window fails the run with a BrokerError and a non-zero exit, for the server and its clients', async () => {
    const broker = await startMosquitto({ federation: FED, users: accounts(CLIENTS) });
    const faulted = federation(broker.url, pathJoin(dir, 'never.json'), { server: ['--reconnect-for', '2', '--min-clients', '1'], client: ['--reconnect-for', '2'], ids: ['c0'] });
    await faulted.server.saw(/round 2 \(/);
    await crash(broker);
    const code = await faulted.server.exited;
    expect(code).toBe(2);
    expect(faulted.server.err()).toMatch(/fedmix server: the connection to the MQTT broker was lost and did not come back within 2 s/);
    expect(() => readFileSync(pathJoin(dir, 'never.json'))).toThrow();
    for (const c of faulted.clients) {
      expect(await c.exited).not.toBe(0);
      expect(c.err()).toMatch(/did not come back within 2 s/);
    }
  }, 120_000);
});

/** A client that says it is online in a retained message and disconnects cleanly (no last will). */
async function ghost(url: string, id: string): Promise<boolean> {
  const client = await connectAsync(url, { username: id, password: password(id), clientId: id, clean: true, reconnectPeriod: 0 });
  let refused = false;
  client.on('close', () => (refused = true));
  await Promise.race([client.publishAsync(federationTopics(FED).status(id), JSON.stringify({ state: 'online' }), { qos: 1, retain: true }).catch(() => (refused = true)), new Promise((r) => setTimeout(r, 1000))]);
  const wasRefused = refused;
  await client.endAsync(true);
  return wasRefused;
}

/** A DEM server of a few rounds on abalone's seven measurements. */
const demServer = (maxRounds = 4) => new DemServer({ nComponents: 3, nFeatures: 7, covarianceType: 'diag', init: 'kfed', seed: 3, maxRounds, tol: 0 });
const roles = (ids: string[]) => ids.map((id, i) => makeClient({ algorithm: 'dem', id, data: matrixData(csvToMatrix(parseCsv(abalone(300 * i, 300 * (i + 1)))).X) }));

const BROKERS: { name: string; start: (ids: string[]) => Promise<RunningBroker> }[] = [
  { name: 'embedded broker', start: (ids) => startBroker({ federation: FED, users: accounts(ids) }) },
  { name: 'mosquitto', start: (ids) => startMosquitto({ federation: FED, users: accounts(ids) }) },
];

describe.each(BROKERS)('honest liveness over the $name', (kind) => {
  test('a client that left a retained "online" and disconnected is not online: not counted, not asked, not waited for', async () => {
    const ids = [...CLIENTS, 'ghost'];
    const broker = await kind.start(ids);
    const clients = roles(CLIENTS);
    try {
      const refused = await ghost(broker.url, 'ghost');
      // the embedded broker refuses a client's retained publish (closing its connection); mosquitto takes it
      expect(refused).toBe(kind.name === 'embedded broker');
      const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: SERVER_PASSWORD, clients: ids });
      const joins = clients.map((role) => join({ url: broker.url, federation: FED, client: role, password: password(role.id) }));
      expect(await transport.available(3, 20_000)).toEqual(CLIENTS);
      // four listed, three there: the ghost does not make a fourth
      expect(await transport.available(4, 1500)).toEqual(CLIENTS);
      expect(transport.staleStatus).toBe(kind.name === 'mosquitto' ? 1 : 0);
      const result = await runFederation(demServer(), transport, { minClients: 3, roundTimeout: 20 });
      await Promise.all(joins);
      expect(result.failures).toEqual([]);
      expect(result.history.filter((h) => h.replies).map((h) => h.asked)).toEqual([3, 3, 3, 3, 3]);
    } finally {
      for (const r of clients) r.dispose();
      await broker.close();
    }
  }, 40_000);
});

/** `role`, but slow once: it answers round `round` after `ms` (an honest client on a busy machine). */
function slowOnce(role: ClientRole, round: number, ms: number): ClientRole {
  let slept = false;
  return {
    id: role.id,
    protocol: role.protocol,
    respond: async (m: Message) => {
      if (m.round === round && !slept) {
        slept = true;
        await new Promise((r) => setTimeout(r, ms));
      }
      return role.respond(m);
    },
    requestDone: (m: Message) => role.requestDone?.(m),
  };
}

describe('missed rounds (maxMissedRounds)', () => {
  test('a connected client that never answers leaves the quorum after maxMissedRounds rounds, and is back once it reconnects', async () => {
    const ids = [...CLIENTS, 'mute'];
    const broker = await startBroker({ federation: FED, users: accounts(ids) });
    const clients = roles(CLIENTS);
    const topics = federationTopics(FED);
    try {
      const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: SERVER_PASSWORD, clients: ids });
      const joins = clients.map((role) => join({ url: broker.url, federation: FED, client: role, password: password(role.id) }));
      // connected, says it is online, never answers
      const muteOptions = { username: 'mute', password: password('mute'), clientId: 'mute', clean: false, reconnectPeriod: 0, will: { topic: topics.status('mute'), payload: Buffer.from('{"state":"offline"}'), qos: 1 as const, retain: false } };
      let mute = await connectAsync(broker.url, muteOptions);
      await mute.subscribeAsync(topics.down('mute'), { qos: 1 });
      await mute.publishAsync(topics.status('mute'), JSON.stringify({ state: 'online' }), { qos: 1 });
      await transport.available(4, 20_000);
      const result = await runFederation(demServer(9), transport, {
        minClients: 4,
        roundTimeout: 1,
        maxMissedRounds: 2,
        // away after round 4 (a crash: its last will) and back after round 5 (a restart): then asked again
        onCheckpoint: async ({ round }) => {
          if (round === 4) await mute.endAsync(true);
          if (round === 5) {
            mute = await connectAsync(broker.url, muteOptions);
            await mute.publishAsync(topics.status('mute'), JSON.stringify({ state: 'online' }), { qos: 1 });
          }
          // the will or the status reaches the server before the next round looks who is there
          if (round === 4 || round === 5) await new Promise((r) => setTimeout(r, 300));
        },
      });
      await Promise.all(joins);
      await mute.endAsync(true);
      const rounds = result.history.filter((h) => h.replies);
      const asked = rounds.map((h) => h.asked);
      // asked in rounds 1 and 2 (two timeouts), then not: rounds stop waiting for it
      expect(asked.slice(0, 4)).toEqual([4, 4, 3, 3]);
      expect(rounds[1]!.sidelined).toEqual(['mute']);
      expect(result.failures.filter((f) => f.round <= 4).map((f) => [f.client, f.round, f.kind])).toEqual([['mute', 1, 'timeout'], ['mute', 2, 'timeout']]);
      // back once it was seen away and present again, then out again after one more missed round (on probation)
      const back = rounds.findIndex((h) => h.reinstated?.includes('mute'));
      expect(back).toBe(5);
      expect(rounds[back]!.asked).toBe(4);
      expect(rounds[back]!.sidelined).toEqual(['mute']);
      expect(rounds.at(-1)!.asked).toBe(3);
      expect(result.excluded).toEqual([]);
    } finally {
      for (const r of clients) r.dispose();
      await broker.close();
    }
  }, 40_000);

  test('at the defaults, honest clients slow once or reconnecting never leave the quorum (real data)', async () => {
    const broker = await startBroker({ federation: FED, users: accounts(CLIENTS) });
    const clients = roles(CLIENTS);
    try {
      const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: SERVER_PASSWORD, clients: CLIENTS });
      const drop = new AbortController();
      const joins = [
        join({ url: broker.url, federation: FED, client: slowOnce(clients[0]!, 3, 2500), password: password('c0') }),
        join({ url: broker.url, federation: FED, client: clients[1]!, password: password('c1'), signal: drop.signal }).catch((e: unknown) => e),
        join({ url: broker.url, federation: FED, client: clients[2]!, password: password('c2') }),
      ];
      let back: Promise<unknown> | undefined;
      await transport.available(3, 20_000);
      // the defaults but a round timeout short enough for the test (the slow client misses round 3's)
      const result = await runFederation(demServer(8), transport, {
        minClients: 3,
        roundTimeout: 2,
        onRound: (r) => {
          if (r.round === 4) drop.abort();
          if (r.round === 5) back = join({ url: broker.url, federation: FED, client: clients[1]!, password: password('c1') });
        },
      });
      await Promise.all(joins);
      await back;
      const rounds = result.history.filter((h) => h.replies);
      expect(result.failures.some((f) => f.client === 'c0' && f.round === 3 && f.kind === 'timeout')).toBe(true);
      expect(rounds.every((h) => h.sidelined === undefined)).toBe(true);
      expect(rounds.at(-1)!.asked).toBe(3);
      expect(rounds.at(-1)!.accepted).toBe(3);
      expect(result.excluded).toEqual([]);
    } finally {
      for (const r of clients) r.dispose();
      await broker.close();
    }
  }, 40_000);
});
