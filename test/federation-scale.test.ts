/**
 * Federations at scale over mosquitto (docs/scaling.md):
 * - 500 MQTT clients, each with its own connection, in one federation over
 *   one mosquitto started by startMosquitto: every round gets every reply,
 *   mosquitto holds a socket per client, and the model is the in-process run's;
 * - a federation across two bridged mosquittos (the server on one, the clients
 *   on the other; scripts/mosquitto-bridge.mjs): the same model as in process.
 *
 * The clients join from this process (a process per client is not the point
 * here; bench/fleet.mjs spreads 1,000 over processes for the benchmark).
 * Needs `bash scripts/setup.sh` first (dist/ for the bridge script, mosquitto).
 */
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DemClient, DemServer, init, join, Matrix, MqttTransport, Rng, runFederation, runFederationSync, type JoinResult } from '../ts/index.js';
import { startMosquitto, type RunningMosquitto } from '../ts/federated/transport/mosquitto.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { startBridgedMosquittos } from '../scripts/mosquitto-bridge.mjs';

const FED = 'scale';
const N = 500;
const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`);
const password = (id: string) => `pw-${id}`;
const accounts = (n: number) => [{ username: SERVER_USER, password: 'server-pw', role: 'server' as const }, ...ids(n).map((id) => ({ username: id, password: password(id), role: 'client' as const }))];
const CENTERS = [
  [-6, 0],
  [0, 6],
  [6, 0],
];

/** Client i's 12 rows around three centers, unit noise seeded by i. */
function rows(i: number): Matrix {
  const rng = new Rng(1 + i);
  const noise = rng.normal(24);
  rng.dispose();
  const m = Matrix.zeros(12, 2);
  for (let r = 0; r < 12; r++) for (let j = 0; j < 2; j++) m.data[j * 12 + r] = CENTERS[r % 3]![j]! + noise[j * 12 + r]!;
  return m;
}

const dem = (rounds: number) => new DemServer({ nComponents: 3, nFeatures: 2, covarianceType: 'diag', init: 'separated', featureRange: [-20, 20], maxRounds: rounds, tol: 0, seed: 1 });

/** The model's numbers, to compare runs. */
function numbers(model: { weights: Float64Array; means: Float64Array; covariances: Float64Array }): number[] {
  return [...model.weights, ...model.means, ...model.covariances];
}

/** The model of the same clients run in process. */
function inProcess(n: number, rounds: number): number[] {
  const roles = ids(n).map((id, i) => new DemClient(id, rows(i)));
  try {
    const r = runFederationSync(dem(rounds), roles);
    const out = numbers(r.model);
    r.model.dispose();
    return out;
  } finally {
    for (const c of roles) c.dispose();
  }
}

/**
 * Joins clients 50 at a time (a burst of hundreds of TLS-less logins is fine
 * for mosquitto; the pause keeps this process's event loop responsive).
 */
async function joinAll(url: string, roles: DemClient[]): Promise<Promise<JoinResult>[]> {
  const joins: Promise<JoinResult>[] = [];
  for (let k = 0; k < roles.length; k += 50) {
    for (const role of roles.slice(k, k + 50)) joins.push(join({ url, federation: FED, client: role, password: password(role.id), waitForBroker: 30, connectTimeout: 30 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return joins;
}

/** The sockets a process holds open (Linux: /proc), or undefined where /proc is not there. */
function sockets(pid: number): number | undefined {
  if (!existsSync(`/proc/${pid}/fd`)) return undefined;
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;
}

let mosquitto: RunningMosquitto;

beforeAll(async () => {
  await init();
  mosquitto = await startMosquitto({ federation: FED, users: accounts(N) });
});

afterAll(async () => {
  await mosquitto?.close();
});

test(`mosquitto takes ${N} clients, each with its own connection: every round gets every reply, and the model is the in-process run's`, async () => {
  const roles = ids(N).map((id, i) => new DemClient(id, rows(i)));
  try {
    const transport = await MqttTransport.connect({ url: mosquitto.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: ids(N), connectTimeout: 30 });
    const joins = await joinAll(mosquitto.url, roles);
    expect((await transport.available(N, 60_000)).length).toBe(N);
    let held: number | undefined;
    const result = await runFederation(dem(2), transport, {
      roundTimeout: 60,
      minClients: N,
      onRound: () => void (held ??= sockets(mosquitto.pid)),
    });
    const joined = await Promise.all(joins);
    expect(result.failures).toEqual([]);
    expect(result.history.filter((h) => h.replies).map((h) => h.accepted)).toEqual([N, N]);
    expect(result.history.every((h) => h.asked === N)).toBe(true);
    expect(joined.every((j) => j.ok && j.answered === result.history.length)).toBe(true);
    // a listening socket and one per connection: the clients and the server
    if (held !== undefined) expect(held).toBeGreaterThanOrEqual(N + 2);
    expect(numbers(result.model)).toEqual(inProcess(N, 2));
    result.model.dispose();
  } finally {
    for (const r of roles) r.dispose();
  }
}, 60_000);

test('a federation across two bridged mosquittos (server on one, clients on the other) gives the in-process model', async () => {
  const n = 12;
  const pair = await startBridgedMosquittos({ federation: FED, users: accounts(n) });
  const roles = ids(n).map((id, i) => new DemClient(id, rows(i)));
  try {
    const transport = await MqttTransport.connect({ url: pair.serverBroker.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: ids(n) });
    const joins = await joinAll(pair.edgeBroker.url, roles);
    // the clients' online status crosses the bridge to the server
    expect((await transport.available(n, 20_000)).length).toBe(n);
    const result = await runFederation(dem(4), transport, { roundTimeout: 20, minClients: n });
    // the server's end of run crosses back: every client learns it
    const joined = await Promise.all(joins);
    expect(result.failures).toEqual([]);
    expect(joined.every((j) => j.ok && j.answered === result.history.length)).toBe(true);
    expect(numbers(result.model)).toEqual(inProcess(n, 4));
    result.model.dispose();
  } finally {
    for (const r of roles) r.dispose();
    await pair.close();
  }
}, 40_000);
