/**
 * The packed package (test/support/packed.ts) in the JavaScript runtimes of the
 * edge, from their npm packages (devDependencies `deno`, `bun`, `workerd`):
 * each runs test/support/edge-runtimes/ in one process, which calls init(),
 * fits a GaussianMixture, runs fedGenGMM and a DEM federation in process, and
 * then joins, as a client, a DEM federation that Node serves through the
 * embedded broker: Deno over MQTT on TCP, Bun over MQTT over WebSockets, and
 * workerd (no TCP client in mqtt.js's browser build) over WebSockets from
 * inside a request handler. Every number must equal Node's bit for bit: the
 * same WASM and the same JavaScript arithmetic, whatever the engine.
 *
 * workerd compiles no WebAssembly from bytes at run time, so its Worker is
 * bundled as wrangler would (esbuild, the browser conditions) with the .wasm
 * modules as "wasm" modules of its configuration, handed to init({ wasm }).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import { DemClient, DemServer, init, Matrix, MqttTransport, runFederation, runFederationSync } from '../ts/index.js';
import { startBroker, type RunningBroker } from '../ts/federated/transport/broker.js';
import { freePort } from '../ts/federated/transport/ports.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { DEM, inProcess, modelOf, type InProcessResult } from './support/edge-runtimes/checks.mjs';
import { installPacked, packedTarball, REPO } from './support/packed.js';

const FED = 'edge';
const BIN = join(REPO, 'node_modules', '.bin');
const SUPPORT = join(REPO, 'test', 'support', 'edge-runtimes');
/** The modules the Worker imports: the core and what fedGenGMM and DEM need. */
const WORKERD_MODULES = ['fedmix-simd.wasm', 'fedmix-simd-dem.wasm', 'fedmix-simd-fedgem.wasm'];

/** Three clients' rows: the thyroid set shipped with fedmix (real data), 200 rows each. */
const ROWS = (() => {
  const lines = readFileSync(join(REPO, 'ts', 'data', 'datasets', 'anomaly_thyroid.csv'), 'utf8').trim().split('\n').slice(1);
  const rows = lines.map((l) => l.split(',').slice(0, 6).map(Number));
  return [0, 1, 2].map((c) => rows.slice(c * 200, (c + 1) * 200));
})();

/** Who joins the federation, from which runtime, over what. */
const JOINERS = [
  { id: 'deno-0', runtime: 'deno', over: 'tcp' },
  { id: 'bun-0', runtime: 'bun', over: 'ws' },
  { id: 'workerd-0', runtime: 'workerd', over: 'ws' },
] as const;
type Runtime = (typeof JOINERS)[number]['runtime'];

interface Outcome {
  checks?: InProcessResult & { runtime: string };
  joined?: { ok: boolean; answered: number; reason?: string };
  /** what went wrong: the process's exit and its stderr, or the Worker's error */
  problem?: string;
}

/** Every process started here: a run that fails half-way must not leave a client waiting for rounds. */
const children: ChildProcess[] = [];

/** A child's exit, its stdout's lines and its stderr. */
function finished(child: ChildProcess): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, lines: out.trim().split('\n').filter(Boolean), stderr: err.slice(-3000) })));
}

/** Deno and Bun: main.mjs does the checks, prints them, joins, prints what join() said. */
async function runScript(runtime: 'deno' | 'bun', url: string, id: string, slice: number, app: string): Promise<Outcome> {
  const args = [url, id, FED, `pw-${id}`, String(slice)];
  const child =
    runtime === 'deno'
      ? spawn(join(BIN, 'deno'), ['run', '--no-lock', '--allow-read', '--allow-env', '--allow-net=127.0.0.1', 'main.mjs', ...args], { cwd: app, env: { ...process.env, NO_COLOR: '1' } })
      : spawn(join(BIN, 'bun'), ['--no-install', 'main.mjs', ...args], { cwd: app });
  children.push(child);
  const r = await finished(child);
  const [checks, joined] = r.lines.map((l) => JSON.parse(l) as never);
  return { checks, joined, ...(r.code === 0 ? {} : { problem: `exit ${r.code}: ${r.stderr}` }) };
}

/** workerd serves the bundled Worker; its checks and its join are two requests. */
async function startWorkerd(app: string): Promise<{ child: ChildProcess; origin: string; exit: Promise<{ code: number | null; stderr: string }> }> {
  await build({
    entryPoints: [join(app, 'worker.mjs')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    outfile: join(app, 'workerd', 'worker.js'),
    external: ['node:*'],
    logLevel: 'error',
    // each .wasm import names a module of the configuration, which workerd compiles before the Worker starts
    plugins: [{ name: 'wasm-modules', setup: (b) => void b.onResolve({ filter: /\.wasm$/ }, (a) => ({ path: `./${a.path.slice(a.path.lastIndexOf('/') + 1)}`, external: true })) }],
  });
  for (const f of WORKERD_MODULES) copyFileSync(join(app, 'node_modules', 'fedmix', 'dist', f), join(app, 'workerd', f));
  writeFileSync(
    join(app, 'workerd', 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker), (name = "loopback", network = (allow = ["local"]))],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js"), ${WORKERD_MODULES.map((f) => `(name = "${f}", wasm = embed "${f}")`).join(', ')}],
  compatibilityDate = "2026-11-01",
  # the broker is on this machine: outbound connections to local addresses only
  globalOutbound = "loopback",
);
`,
  );
  const port = await freePort();
  const child = spawn(join(BIN, 'workerd'), ['serve', 'config.capnp', '--socket-addr', `http=127.0.0.1:${port}`], { cwd: join(app, 'workerd') });
  children.push(child);
  const done = finished(child);
  const origin = `http://127.0.0.1:${port}`;
  // listening once it answers
  for (let i = 0; ; i++) {
    const up = await fetch(`${origin}/`).then(() => true, () => false);
    if (up) break;
    if (i > 300) throw new Error(`workerd did not listen on ${origin}: ${(await done).stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, origin, exit: done };
}

async function askWorker(origin: string, path: string): Promise<{ body?: never; problem?: string }> {
  const res = await fetch(`${origin}${path}`);
  const text = await res.text();
  if (!res.ok) return { problem: `HTTP ${res.status}: ${text.slice(0, 3000)}` };
  return { body: JSON.parse(text) as never };
}

const outcomes = new Map<Runtime, Outcome>();
let nodeChecks: InProcessResult;
let served: { rounds: number; excluded: number; model: ReturnType<typeof modelOf>; answered: Map<string, number> };
let app = '';
let broker: RunningBroker | undefined;
let workerd: Awaited<ReturnType<typeof startWorkerd>> | undefined;

beforeAll(async () => {
  await init();
  nodeChecks = await inProcess(fedmix, { rows: ROWS });
  app = mkdtempSync(join(tmpdir(), 'fedmix-edge-'));
  installPacked(app, packedTarball().tarball);
  for (const f of ['checks.mjs', 'main.mjs', 'worker.mjs']) copyFileSync(join(SUPPORT, f), join(app, f));
  writeFileSync(join(app, 'data.json'), JSON.stringify({ rows: ROWS }));

  const accounts = [{ username: SERVER_USER, password: 'server-pw', role: 'server' as const }, ...JOINERS.map((j) => ({ username: j.id, password: `pw-${j.id}`, role: 'client' as const }))];
  broker = await startBroker({ federation: FED, users: accounts, webSocketPort: 0 });
  const transport = await MqttTransport.connect({ url: broker.url, federation: FED, username: SERVER_USER, password: 'server-pw', clients: JOINERS.map((j) => j.id) });
  const urlOf = (over: 'tcp' | 'ws') => (over === 'tcp' ? broker!.url : broker!.wsUrl!);
  const scripts = JOINERS.map((j, slice) => (j.runtime === 'workerd' ? undefined : runScript(j.runtime, urlOf(j.over), j.id, slice, app)));
  workerd = await startWorkerd(app);
  const w = JOINERS[2];
  const checked = await askWorker(workerd.origin, '/check');
  const query = new URLSearchParams({ url: urlOf(w.over), id: w.id, federation: FED, password: `pw-${w.id}`, slice: '2' });
  const joining = askWorker(workerd.origin, `/join?${query}`);

  await transport.available(JOINERS.length, 90_000);
  const result = await runFederation(new DemServer(DEM), transport, { roundTimeout: 60 });
  served = {
    rounds: result.rounds,
    excluded: result.excluded.length,
    model: modelOf(result.model),
    answered: new Map(JOINERS.map((j) => [j.id, result.clientTraffic.get(j.id)?.messagesUp ?? 0])),
  };
  result.model.dispose();
  for (const [i, j] of JOINERS.entries()) if (j.runtime !== 'workerd') outcomes.set(j.runtime, await scripts[i]!);
  const joined = await joining;
  outcomes.set('workerd', { checks: checked.body, joined: joined.body, ...((checked.problem ?? joined.problem) ? { problem: [checked.problem, joined.problem].filter(Boolean).join('\n') } : {}) });
}, 240_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill();
  await broker?.close();
  if (app) rmSync(app, { recursive: true, force: true });
});

describe.each(JOINERS)('$runtime runs the packed package', ({ runtime, id, over }) => {
  test('init, a GaussianMixture fit, fedGenGMM and DEM in process: the numbers Node gets', () => {
    const o = outcomes.get(runtime)!;
    expect(o.problem, `${runtime}`).toBeUndefined();
    const { runtime: version, info, missing, ...numbers } = o.checks! as Outcome['checks'] & { missing?: string };
    console.log(`${version}: ${JSON.stringify(info)}`);
    expect(version.startsWith(runtime)).toBe(true);
    // workerd loads the modules it was given (SIMD); Deno and Bun validate relaxed SIMD and take that build (Node 20 without its flag does not), with every module, as Node does
    expect(info).toEqual(runtime === 'workerd' ? { simd: true, backend: 'simd', features: ['dem', 'fedgem'] } : { ...nodeChecks.info, backend: 'relaxed' });
    const { info: _, ...reference } = nodeChecks;
    expect(numbers).toEqual(reference);
    if (runtime === 'workerd') {
      // a module the Worker did not import: a typed error that says what to pass, not a failed URL parse
      expect(missing).toMatch(/^WasmError: the simd build's svm module has no URL to load it from here \(.*\): this runtime gives fedmix's code no file URL \(import\.meta\.url\)\. Pass the compiled module in init\(\{ wasm: \{ simd: \{ svm: \.\.\. \} \} \}\), or leave 'svm' out of init\(\{ features \}\)$/);
    }
  });

  test(`a client joins the federation Node serves, over ${over === 'tcp' ? 'MQTT on TCP' : 'MQTT over WebSockets'}`, () => {
    const o = outcomes.get(runtime)!;
    expect(o.joined, o.problem).toEqual({ ok: true, answered: served.rounds });
    expect(served.answered.get(id)).toBe(served.rounds);
  });
});

test('the federation of the three runtimes gives the model Node gets in process from the same clients', () => {
  expect(served.excluded).toBe(0);
  // the same as fitting in process, which the runtimes also did (above)
  expect(nodeChecks.dem.rounds).toBeGreaterThan(1);
  const roles = JOINERS.map((j, i) => new DemClient(j.id, Matrix.fromRows(ROWS[i]!)));
  try {
    const r = runFederationSync(new DemServer(DEM), roles);
    expect(served.rounds).toBe(r.rounds);
    expect(served.model).toEqual(modelOf(r.model));
    r.model.dispose();
  } finally {
    for (const c of roles) c.dispose();
  }
});
