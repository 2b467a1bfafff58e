/**
 * Secure aggregation across threads and processes (issue 26): distributed EM
 * on abalone (real data, four clients) gives the plain model within the
 * quantization bound with its clients in worker threads, and as `fedmix
 * client` processes of `fedmix server --secure-aggregation` over the embedded
 * broker and over mosquitto; with too few honest clients left the server
 * fails typed, with a nonzero exit status, and releases no model.
 *
 * Needs `bash scripts/setup.sh` first (dist/, mosquitto).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as pathJoin } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as f from '../dist/index.js';
import { WorkerTransport, type ClientSpec } from '../dist/node.js';
import { startBroker, type RunningBroker } from '../ts/federated/transport/broker.js';
import { startMosquitto } from '../ts/federated/transport/mosquitto.js';
import { SERVER_USER } from '../ts/federated/serve.js';

const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const ABALONE = fileURLToPath(new URL('../../shared/datasets/abalone.csv', import.meta.url));
const FED = 'secagg';
const SERVER_PASSWORD = 'server-secret';
const dir = mkdtempSync(pathJoin(tmpdir(), 'fedmix-secagg-'));
const processes: ChildProcess[] = [];
const brokers: RunningBroker[] = [];

/** Abalone's seven measurements, 300 rows per client. */
const ROWS = readFileSync(ABALONE, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((l) => l.split(',').slice(1, 8).map(Number));
const HEADER = 'length,diameter,height,whole,shucked,viscera,shell';
const CLIENTS = ['c0', 'c1', 'c2', 'c3'];
const part = (i: number) => ROWS.slice(300 * i, 300 * (i + 1));
for (const [i, id] of CLIENTS.entries()) writeFileSync(pathJoin(dir, `${id}.csv`), [HEADER, ...part(i).map((r) => r.join(','))].join('\n') + '\n');
writeFileSync(pathJoin(dir, 'clients.txt'), CLIENTS.join('\n') + '\n');
// a client whose data has one row far outside any honest statistic: its second moments pass the clip (2^36), so it refuses at the masking stage
const OUTLIER = 'bad';
writeFileSync(pathJoin(dir, `${OUTLIER}.csv`), [HEADER, ...part(4).map((r) => r.join(',')), Array(7).fill(1e6).join(',')].join('\n') + '\n');

const DEM = { nComponents: 3, nFeatures: 7, covarianceType: 'diag', init: 'separated', tol: 0, maxRounds: 3 } as const;
const DEM_ARGS = ['--algorithm', 'dem', '--features', '7', '--components', '3', '--covariance', 'diag', '--init', 'separated', '--tol', '0', '--max-rounds', '3'];

beforeAll(async () => {
  await f.init();
});

afterAll(async () => {
  for (const p of processes) if (p.exitCode === null) p.kill('SIGKILL');
  await Promise.all(brokers.map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** The plain run in process: the model secure aggregation must reproduce. */
function plainModel(): { weights: number[]; means: number[]; covariances: number[] } {
  const server = new f.DemServer(DEM);
  const clients = CLIENTS.map((id, i) => new f.DemClient(id, f.Matrix.from(part(i))));
  try {
    return JSON.parse(JSON.stringify(f.runFederationSync(server, clients).model.toJSON()));
  } finally {
    server.dispose();
    for (const c of clients) c.dispose();
  }
}

/**
 * The largest difference of any weight, mean or covariance entry. Every
 * entry of a round's sums is within the round's bound of the plain sums, and
 * the model divides them by component counts in the hundreds: the model
 * moves by less than the bound itself.
 */
function worstDifference(a: { weights: number[]; means: number[]; covariances: number[] }, b: typeof a): number {
  let worst = 0;
  for (const k of ['weights', 'means', 'covariances'] as const) a[k].forEach((x, i) => (worst = Math.max(worst, Math.abs(x - b[k][i]!))));
  return worst;
}

test('worker threads: the secure run gives the plain model within the bound', async () => {
  const specs: ClientSpec[] = CLIENTS.map((id, i) => {
    const x = f.Matrix.from(part(i));
    return { algorithm: 'dem', id, data: { data: x.data, nRows: x.nRows, nCols: x.nCols } };
  });
  const transport = await WorkerTransport.start(specs, { threads: 2 });
  const server = new f.DemServer(DEM);
  try {
    const r = await f.runFederation(server, transport, { secureAggregation: {} });
    expect(r.history).toHaveLength(3);
    for (const h of r.history) expect(h.secure).toMatchObject({ clients: 4, survivors: 4, dropped: { advertise: 0, share: 0, mask: 0, unmask: 0 } });
    const bound = Math.max(...r.history.map((h) => h.secure!.bound));
    expect(worstDifference(JSON.parse(JSON.stringify(r.model.toJSON())), plainModel())).toBeLessThanOrEqual(bound);
  } finally {
    server.dispose();
    await transport.close();
  }
});

/** A command of the built CLI: its stderr and its exit. */
function run(args: string[]): { err: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  processes.push(child);
  let err = '';
  child.stdout!.on('data', () => {});
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { err: () => err, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

const password = (id: string) => `pw-${id}`;
const accounts = [{ username: SERVER_USER, password: SERVER_PASSWORD, role: 'server' as const }, ...[...CLIENTS, OUTLIER].map((id) => ({ username: id, password: password(id), role: 'client' as const }))];

/** `fedmix server --secure-aggregation` and a `fedmix client` process per id, over `url`. */
async function secureFederation(url: string, ids: string[], tag: string) {
  const out = pathJoin(dir, `${tag}.json`);
  writeFileSync(pathJoin(dir, `${tag}-clients.txt`), ids.join('\n') + '\n');
  const server = run(['server', '--federation', FED, '--broker', url, '--username', SERVER_USER, '--password', SERVER_PASSWORD, '--clients', pathJoin(dir, `${tag}-clients.txt`), ...DEM_ARGS, '--secure-aggregation', '--log-format', 'json', '--round-timeout', '20', '--join-timeout', '30', '--out', out]);
  const clients = ids.map((id) => run(['client', '--algorithm', 'dem', '--federation', FED, '--broker', url, '--id', id, '--password', password(id), '--data', pathJoin(dir, `${id}.csv`)]));
  const code = await server.exited;
  await Promise.all(clients.map((c) => c.exited));
  const rounds = server
    .err()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { event: string; secure?: { survivors: number; bound: number; clip: number } })
    .filter((l) => l.event === 'round');
  return { code, err: server.err(), rounds, out };
}

const BROKERS = [
  { name: 'embedded broker', start: () => startBroker({ federation: FED, users: accounts }) },
  { name: 'mosquitto', start: () => startMosquitto({ federation: FED, users: accounts }) },
];

describe.each(BROKERS)('client processes over the $name', ({ name, start }) => {
  let broker: RunningBroker;
  beforeAll(async () => {
    broker = await start();
    brokers.push(broker);
  });

  test('fedmix server --secure-aggregation: the plain model within the quantization bound', async () => {
    const r = await secureFederation(broker.url, CLIENTS, `honest-${name.replace(/ /g, '-')}`);
    expect(r.code, r.err).toBe(0);
    expect(r.rounds).toHaveLength(3);
    for (const round of r.rounds) expect(round.secure).toMatchObject({ survivors: 4, clip: 2 ** 36 });
    const bound = Math.max(...r.rounds.map((round) => round.secure!.bound));
    const saved = JSON.parse(readFileSync(r.out, 'utf8')) as { model: { weights: number[]; means: number[]; covariances: number[] } };
    expect(worstDifference(saved.model, plainModel())).toBeLessThanOrEqual(bound);
  });

  if (name === 'mosquitto') {
    test('below the threshold: a typed error, a nonzero exit, no model', async () => {
      // three clients, all pairs, threshold 2 (the default): the outlier refuses at the masking stage, one survivor is too few
      const r = await secureFederation(broker.url, ['c0', 'c1', OUTLIER], 'below');
      expect(r.code).toBe(2);
      // two survivors hold one share each of the other's self mask, fewer than the 2 needed: the sum is not released
      expect(r.err).toMatch(/fedmix server: after the masked inputs: 2 clients are left; each one's self-mask needs 2 shares from the others, so at least 3 must survive; the round's sum cannot be released/);
      expect(existsSync(r.out)).toBe(false);
    });
  }
});
