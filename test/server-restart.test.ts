/**
 * Checkpoint and resume as an operator runs it (issue 25, item 2): for every
 * algorithm of the registry, `fedmix server --state DIR` over its embedded
 * broker with two `fedmix client` processes, the server SIGKILLed once its
 * state directory holds the checkpoint of round N (N varies: 5 for distributed
 * EM, as the "SIGKILLed after round 5"), and started again with the
 * same arguments. It resumes after the last complete round with the same run
 * id, the clients (which reconnect by themselves) carry on and exit 0, and
 * the --out model is the uninterrupted run's at the same seeds, bit for bit
 * (the reference runs in process, from the same command lines read by the
 * CLI's own option readers). A finished run's directory, another run's and
 * a damaged one are refused with a typed error (exit status 2).
 *
 * Needs `bash scripts/setup.sh` first (dist/cli.cjs).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { parseOptions } from '../ts/cli/args.js';
import { clientRoleOptions, federationOptions, serverRoleOptions } from '../ts/cli/federation.js';
import { csvToMatrix, parseCsv } from '../ts/data/csv.js';
import { Matrix } from '../ts/data/matrix.js';
import { makeClient, makeServer, matrixData, resultJson, type ClientSpec } from '../ts/federated/registry/index.js';
import { runFederation, runFederationSync } from '../ts/federated/runtime/run.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { STATE_FILE } from '../ts/federated/state-dir.js';
import { startMosquitto } from '../ts/federated/transport/mosquitto.js';
import { init } from '../ts/wasm/loader.js';
import { csvOf } from './helpers.js';

const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'fedmix-restart-'));
const processes: ChildProcess[] = [];
/** the run id of each algorithm's run (the finished directories are checked by the second test) */
const ids = new Map<string, string>();

beforeAll(async () => {
  await init();
});
afterAll(() => {
  for (const p of processes) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const CENTERS = [[0, 0], [4, 0], [0, 4]];

const NETWORK = ['--layers', '2,6,3', '--loss', 'softmax-cross-entropy', '--rounds', '4', '--epochs', '1', '--batch-size', '16'];

/** Each algorithm's server arguments, its clients' own, and the checkpoint round after which the server is killed. */
const CASES: { name: string; server: string[]; client: (i: number) => string[]; killAfter: number }[] = [
  { name: 'dem', server: ['--features', '2', '--components', '3', '--max-rounds', '6', '--tol', '0'], client: () => ['--drop', 'label'], killAfter: 5 },
  { name: 'fedgengmm', server: ['--features', '2', '--components', '3'], client: (i) => ['--drop', 'label', '--k-range', '1..3', '--seed', String(i)], killAfter: 1 },
  { name: 'fedgem', server: ['--features', '2', '--rounds', '3', '--phi', '0.5,1,2'], client: (i) => ['--drop', 'label', '--components', '2', '--seed', String(i)], killAfter: 2 },
  { name: 'mdm', server: ['--components', '2', '--categories', '3', '--max-count', '30', '--rounds', '4'], client: (i) => ['--counts', i === 0 ? '12,3,5' : '2,4,14', '--seed', String(i)], killAfter: 2 },
  { name: 'fedavg', server: NETWORK, client: (i) => ['--label', 'label', '--seed', String(i)], killAfter: 2 },
  { name: 'fedprox', server: [...NETWORK, '--mu', '0.1'], client: (i) => ['--label', 'label', '--seed', String(i)], killAfter: 1 },
  { name: 'scaffold', server: NETWORK, client: (i) => ['--label', 'label', '--seed', String(i)], killAfter: 3 },
  { name: 'communities', server: ['--features', '2', '--detector', 'gmm'], client: () => ['--drop', 'label', '--detector', 'gmm'], killAfter: 1 },
  { name: 'feddistr', server: ['--features', '2', '--k-range', '1..2'], client: (i) => ['--label', 'label', '--seed', String(i)], killAfter: 1 },
];

/** algorithms of a single round: killed by the server's crash drill (FEDMIX_CRASH_AFTER_CHECKPOINT) */
const ONE_ROUND = new Set(['fedgengmm', 'communities', 'feddistr']);

const IDS = ['c0', 'c1'];
const texts = IDS.map((_, i) => csvOf(60, [CENTERS[i]!, CENTERS[(i + 1) % 3]!, CENTERS[(i + 2) % 3]!], 7 + i));
const files = IDS.map((id, i) => {
  const f = join(dir, `${id}.csv`);
  writeFileSync(f, texts[i]!);
  return f;
});
const clientsFile = join(dir, 'clients.txt');
writeFileSync(clientsFile, IDS.map((id) => `${id}:pw-${id}`).join('\n') + '\n');

/** A free port for the embedded broker (kept across the restart). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; err: string[]; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  processes.push(child);
  const err: string[] = [];
  child.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  child.stdout!.on('data', () => undefined);
  return { child, err, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/** The model of an --out artifact (kind fedmix.model: the algorithm's result JSON is its `model`). */
const modelOf = (file: string): unknown => (JSON.parse(readFileSync(file, 'utf8')) as { model: unknown }).model;

/** The in-process run of the same command lines (the CLI's readers give the options): its artifact as JSON. */
function reference(c: (typeof CASES)[number]): unknown {
  const o = parseOptions(['--algorithm', c.name, ...c.server], federationOptions('server'));
  const server = makeServer(c.name, serverRoleOptions(c.name, o));
  const roles = IDS.map((id, i) => {
    const co = parseOptions(['--algorithm', c.name, '--id', id, ...c.client(i)], federationOptions('client'));
    const table = parseCsv(texts[i]!);
    const data = c.name === 'mdm' ? Matrix.fromRows([String(co.counts).split(',').map(Number)]) : csvToMatrix(table, { exclude: ['label'] }).X;
    const spec: ClientSpec = { algorithm: c.name, id, data: matrixData(data), options: clientRoleOptions(c.name, co) };
    if (co.label !== undefined) spec.labels = Int32Array.from(table.columns[2]!, Number);
    return makeClient(spec);
  });
  try {
    return JSON.parse(JSON.stringify(resultJson(c.name, runFederationSync(server, roles).model)));
  } finally {
    server.dispose?.();
    for (const r of roles) r.dispose();
  }
}

/** `reference` under secure aggregation at its defaults: the uninterrupted secure run's model (the sums' fixed-point rounding included). */
async function secureReference(c: (typeof CASES)[number], serverArgs: string[]): Promise<unknown> {
  const o = parseOptions(['--algorithm', c.name, ...serverArgs], federationOptions('server'));
  const server = makeServer(c.name, serverRoleOptions(c.name, o));
  const roles = IDS.map((id, i) => {
    const co = parseOptions(['--algorithm', c.name, '--id', id, ...c.client(i)], federationOptions('client'));
    return makeClient({ algorithm: c.name, id, data: matrixData(csvToMatrix(parseCsv(texts[i]!), { exclude: ['label'] }).X), options: clientRoleOptions(c.name, co) });
  });
  try {
    const r = await runFederation(server, new InProcessTransport(roles), { secureAggregation: {} });
    return JSON.parse(JSON.stringify(resultJson(c.name, r.model)));
  } finally {
    server.dispose?.();
    for (const r of roles) r.dispose();
  }
}

/** The round of the checkpoint in a state directory (0: none yet), read as the server left it. */
function savedRound(state: string): number {
  try {
    return (JSON.parse(readFileSync(join(state, STATE_FILE), 'utf8')) as { checkpoint: { round: number } | null }).checkpoint?.round ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Kills the server with SIGKILL once its state directory holds the checkpoint
 * of round `n` and it starts writing the next file (the next round's
 * checkpoint, or the mark that the run finished): a kill in the middle of the
 * next round, or of the end of the run. Resolves with the checkpoint's round.
 */
function killAfter(child: ChildProcess, state: string, n: number): Promise<number> {
  return new Promise((resolve) => {
    let saved = 0;
    const watcher = watch(state, (_event, name) => {
      if (saved < n) saved = savedRound(state);
      else if (typeof name === 'string' && name.endsWith('.tmp')) {
        child.kill('SIGKILL');
        watcher.close();
        resolve(saved);
      }
    });
  });
}

test('every algorithm: SIGKILLed after a complete round and started again with its --state, the server resumes and gives the uninterrupted model', async () => {
  const t0 = performance.now();
  // three algorithms at a time: each run waits mostly on its processes and the network, not on the CPU
  const runCase = async (c: (typeof CASES)[number]) => {
    const port = String(await freePort());
    const state = join(dir, `state-${c.name}`);
    const out = join(dir, `${c.name}.json`);
    const serverArgs = ['server', '--algorithm', c.name, '--clients', clientsFile, '--port', port, '--round-timeout', '20', '--join-timeout', '30', '--state', state, '--out', out, ...c.server];
    mkdirSync(state);
    // a run of one round ends right after its only checkpoint: the server's crash drill kills it there (no outside
    // kill can be timed to that moment); the others are killed from outside, while they write the next round's
    const drill = ONE_ROUND.has(c.name);
    const first = start(serverArgs, drill ? { FEDMIX_CRASH_AFTER_CHECKPOINT: String(c.killAfter) } : {});
    const clients = IDS.map((id, i) => start(['client', '--algorithm', c.name, '--broker', `mqtt://127.0.0.1:${port}`, '--id', id, '--password', `pw-${id}`, ...(c.name === 'mdm' ? [] : ['--data', files[i]!]), ...c.client(i)]));
    const at = drill ? c.killAfter : await killAfter(first.child, state, c.killAfter);
    expect(await first.exited, c.name).toBe(null);
    const id = /fedmix server: run ([0-9a-f]{32})/.exec(first.err.join(''))?.[1];
    expect(id, `${c.name}: the first server's log names its run`).toBeDefined();
    // started again with the same arguments: it resumes after the last complete round, with the same run id
    const second = start(serverArgs);
    expect(await second.exited, `${c.name}: ${second.err.join('')}`).toBe(0);
    const log = second.err.join('');
    const resumed = /fedmix server: resuming run ([0-9a-f]{32}) after round (\d+)/.exec(log);
    expect(resumed?.[1], `${c.name}: ${log}`).toBe(id);
    expect(Number(resumed?.[2]), c.name).toBeGreaterThanOrEqual(at);
    // the clients carried on and saw the run end well
    for (const cl of clients) expect(await cl.exited, `${c.name}: ${cl.err.join('')}`).toBe(0);
    expect(modelOf(out), `${c.name}: the resumed run's model`).toEqual(reference(c));
    ids.set(c.name, id!);
  };
  for (let i = 0; i < CASES.length; i += 3) await Promise.all(CASES.slice(i, i + 3).map(runCase));
  // eslint-disable-next-line no-console
  console.log(`server-restart: ${CASES.length} algorithms in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}, 240_000);

test('over mosquitto, which outlives the killed server and holds what its clients sent meanwhile: distributed EM SIGKILLed after round 5 resumes and gives the uninterrupted model', async () => {
  const c = CASES.find((x) => x.name === 'dem')!;
  const federation = 'restart';
  const broker = await startMosquitto({
    federation,
    users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' as const }, ...IDS.map((id) => ({ username: id, password: `pw-${id}`, role: 'client' as const }))],
  });
  try {
    const state = join(dir, 'state-dem-mosquitto');
    const out = join(dir, 'dem-mosquitto.json');
    mkdirSync(state);
    const serverArgs = ['server', '--algorithm', 'dem', '--federation', federation, '--broker', broker.url, '--username', SERVER_USER, '--password', 'server-pw', '--clients', clientsFile, '--round-timeout', '20', '--join-timeout', '30', '--state', state, '--out', out, ...c.server];
    const first = start(serverArgs);
    const clients = IDS.map((id, i) => start(['client', '--algorithm', 'dem', '--federation', federation, '--broker', broker.url, '--id', id, '--password', `pw-${id}`, '--data', files[i]!, ...c.client(i)]));
    const at = await killAfter(first.child, state, 5);
    expect(await first.exited).toBe(null);
    const second = start(serverArgs);
    expect(await second.exited, second.err.join('')).toBe(0);
    const log = second.err.join('');
    expect(Number(/fedmix server: resuming run [0-9a-f]{32} after round (\d+)/.exec(log)?.[1]), log).toBeGreaterThanOrEqual(at);
    // nothing the dead server's clients sent was held against them
    expect(log).not.toMatch(/excluded/);
    for (const cl of clients) expect(await cl.exited, cl.err.join('')).toBe(0);
    expect(modelOf(out)).toEqual(reference(c));
  } finally {
    await broker.close();
  }
}, 120_000);

test('under secure aggregation: distributed EM SIGKILLed after round 3\'s checkpoint and started again without --secure-aggregation resumes with it (its clients were promised sums only) and gives the uninterrupted secure model', async () => {
  const c = CASES.find((x) => x.name === 'dem')!;
  const port = String(await freePort());
  const state = join(dir, 'state-dem-secure');
  const out = join(dir, 'dem-secure.json');
  mkdirSync(state);
  // an initialization whose rounds only sum (k-FED's local clusterings are not sums)
  const dem = [...c.server, '--init', 'separated'];
  const common = ['server', '--algorithm', 'dem', '--clients', clientsFile, '--port', port, '--round-timeout', '20', '--join-timeout', '30', '--state', state, '--out', out, '--log-format', 'json', ...dem];
  // killed between rounds, right after round 3's checkpoint (the crash drill): a secure round cut in the middle is
  // not resumed, because its clients answer each of its stages once (docs/operations.md)
  const at = 3;
  const first = start([...common, '--secure-aggregation'], { FEDMIX_CRASH_AFTER_CHECKPOINT: String(at) });
  const clients = IDS.map((id, i) => start(['client', '--algorithm', 'dem', '--broker', `mqtt://127.0.0.1:${port}`, '--id', id, '--password', `pw-${id}`, '--data', files[i]!, ...c.client(i)]));
  expect(await first.exited, first.err.join('')).toBe(null);
  expect(savedRound(state)).toBe(at);
  // the operator forgets the flag: the saved run keeps it
  const second = start(common);
  expect(await second.exited, second.err.join('')).toBe(0);
  const rounds = second
    .err.join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { event: string; round?: number; secure?: { clients: number; survivors: number } })
    .filter((l) => l.event === 'round');
  // every round the resumed server ran was a secure sum of both clients
  expect(rounds.length).toBeGreaterThan(0);
  expect(rounds[0]!.round).toBeGreaterThan(at);
  for (const r of rounds) expect(r.secure, `round ${r.round}`).toMatchObject({ clients: 2, survivors: 2 });
  for (const cl of clients) expect(await cl.exited, cl.err.join('')).toBe(0);
  expect(modelOf(out)).toEqual(await secureReference(c, dem));
}, 120_000);

test("a finished run's state directory, another run's and a damaged one are refused with a typed error naming why; nothing is started", () => {
  const state = join(dir, 'state-dem');
  const base = ['server', '--algorithm', 'dem', '--clients', clientsFile, '--port', '0', '--state', state, '--features', '2'];
  const run = (...extra: string[]) => spawnSync(process.execPath, [CLI, ...base, ...extra], { encoding: 'utf8' });
  let r = run('--components', '3', '--max-rounds', '6', '--tol', '0');
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(new RegExp(`run ${ids.get('dem')} finished at .* after 7 rounds; there is nothing to resume`));
  r = run('--components', '4', '--max-rounds', '6', '--tol', '0');
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/holds the state of another run \(options\.nComponents is 3 there and 4 here\)/);
  r = spawnSync(process.execPath, [CLI, ...base.map((a) => (a === 'dem' ? 'fedgengmm' : a)), '--components', '3'], { encoding: 'utf8' });
  expect(r.stderr).toMatch(/holds the state of another run \(algorithm dem, not fedgengmm\)/);
  const file = join(state, STATE_FILE);
  const text = readFileSync(file, 'utf8');
  for (const [damage, why] of [
    [text.slice(0, text.length >> 1), /not JSON \(cut short\?\)/],
    [text.replace(/"round":(\d+)/, (_m, n) => `"round":${Number(n) + 1}`), /digest does not match/],
    ['', /it is empty/],
  ] as const) {
    writeFileSync(file, damage);
    r = run('--components', '3', '--max-rounds', '6', '--tol', '0');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(why);
  }
});
