/**
 * What an operator gets from `fedmix server` and `fedmix client` (issue 25,
 * items 7 and 8), with real processes from dist/ over the embedded broker:
 * the one model artifact (server --out and client --out, read by loadModel),
 * per-round JSON lines whose round numbers agree between server and clients,
 * notifications not logged as "0/N accepted", a failed run's non-zero exit
 * status on the client, and the FedAvg family's robust flags neutralising a
 * client that claims 2^48 rows and scales its update by 1e6.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { freePort } from '../ts/federated/transport/ports.js';
import { loadModel } from '../ts/federated/registry/model-file.js';
import { Network } from '../ts/models/network.js';
import { init } from '../ts/wasm/loader.js';
import { jsonLines, runNode, xorshift32 } from './helpers.js';

const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const dist = new URL('../dist/index.js', import.meta.url).href;

const start = runNode;

let dir: string;
const server = (port: number, ...extra: string[]) =>
  start(cli, 'server', '--algorithm', 'fedavg', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--layers', '2,8,3', '--loss', 'softmax-cross-entropy',
    '--rounds', '3', '--epochs', '2', '--batch-size', '16', '--round-timeout', '20', '--join-timeout', '30', ...extra);
const client = (port: number, c: number, ...extra: string[]) =>
  start(cli, 'client', '--algorithm', 'fedavg', '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--label', 'label', ...extra);

beforeAll(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'fedmix-operator-'));
  const next = xorshift32(9);
  const u = () => (next() + 0.5) / 2 ** 32;
  for (let c = 0; c < 4; c++) {
    const rows = Array.from({ length: 60 + 20 * c }, (_, i) => [0.2 + 0.3 * (i % 3) + 0.1 * u(), 0.8 - 0.3 * (i % 3) + 0.1 * u(), i % 3].join(','));
    writeFileSync(join(dir, `c${c}.csv`), `x,y,label\n${rows.join('\n')}\n`);
  }
  // c3's rows have a third feature the network does not take: its replies are refused
  writeFileSync(join(dir, 'wide.csv'), `x,y,z,label\n${Array.from({ length: 30 }, (_, i) => `0.1,0.2,0.3,${i % 3}`).join('\n')}\n`);
  writeFileSync(join(dir, 'clients.txt'), 'c0:pw0\nc1:pw1\nc2:pw2\n');
  // a hostile client: an honest FedAvg client whose updates claim 2^48 rows and are scaled by 1e6
  writeFileSync(
    join(dir, 'hostile.mjs'),
    `import { init, join, FedAvgClient, Matrix } from ${JSON.stringify(dist)};
import { readFileSync } from 'node:fs';
await init();
const [url, csv] = process.argv.slice(2);
const rows = readFileSync(csv, 'utf8').trim().split('\\n').slice(1).map((l) => l.split(',').map(Number));
const inner = new FedAvgClient('c2', Matrix.fromRows(rows.map((r) => r.slice(0, 2))), { labels: rows.map((r) => r[2]) });
const role = {
  id: 'c2', protocol: inner.protocol,
  respond(m) {
    const reply = inner.respond(m);
    if (!reply) return reply;
    return { ...reply, payload: { ...reply.payload, nSamples: 2 ** 48, parameters: reply.payload.parameters.map((x) => x * 1e6) } };
  },
};
const r = await join({ url, federation: 'fedmix', client: role, password: 'pw2', waitForBroker: 30 });
process.stdout.write(JSON.stringify(r) + '\\n');
`,
  );
});

describe('fedmix server and client, as an operator runs them', () => {
  test('--out on both sides is the one artifact loadModel reads; --log-format json gives one object per round, the rounds agreeing', async () => {
    const port = await freePort();
    const model = join(dir, 'model.json');
    const s = server(port, '--out', model, '--log-format', 'json');
    const cs = [0, 1, 2].map((c) => client(port, c, '--out', join(dir, `global-c${c}.json`), '--log-format', 'json'));
    const r = await s;
    const done = await Promise.all(cs);
    expect(r.code, r.err).toBe(0);
    const rounds = jsonLines(r.err).filter((l) => l.event === 'round');
    // three training rounds, then the result sent back: a notification after round 3, not "0/3 accepted"
    expect(rounds.map((l) => [l.round, l.kind, l.notification, l.accepted, l.asked])).toEqual([
      [1, 'fedavg/train', false, 3, 3],
      [2, 'fedavg/train', false, 3, 3],
      [3, 'fedavg/train', false, 3, 3],
      [3, 'fedavg/result', true, 0, 3],
    ]);
    for (const l of rounds) {
      expect(Object.keys(l).sort()).toEqual(['accepted', 'asked', 'bytesDown', 'bytesUp', 'elapsed', 'event', 'excluded', 'failures', 'kind', 'metrics', 'ms', 'notification', 'round', 'users'].filter((k) => k !== 'metrics' || l.metrics !== undefined).sort());
      expect(l.bytesDown).toBeGreaterThan(0);
    }
    expect((rounds[0]!.metrics as { loss: number }).loss).toBeGreaterThan(0);
    const saved = loadModel(readFileSync(model, 'utf8'));
    expect(saved).toMatchObject({ algorithm: 'fedavg', role: 'server', version: 1, options: { network: { sizes: [2, 8, 3] }, rounds: 3, aggregation: 'mean' } });
    expect(saved.history).toHaveLength(4);
    expect(saved.model).toBeInstanceOf(Network);
    const global = (saved.model as Network).getParameters();
    for (const [c, d] of done.entries()) {
      expect(d.code, d.err).toBe(0);
      const lines = jsonLines(d.out);
      // the client names the rounds the server names
      expect(lines.filter((l) => l.event === 'request').map((l) => [l.round, l.kind])).toEqual([[1, 'fedavg/train'], [2, 'fedavg/train'], [3, 'fedavg/train'], [3, 'fedavg/result']]);
      expect(lines.at(-1)).toMatchObject({ event: 'end', client: `c${c}`, ok: true, answered: 4 });
      const mine = loadModel(readFileSync(join(dir, `global-c${c}.json`), 'utf8'));
      expect(mine).toMatchObject({ algorithm: 'fedavg', role: 'client', version: 1 });
      expect(Array.from((mine.model as Network).getParameters())).toEqual(Array.from(global));
      (mine.model as Network).dispose();
    }
    (saved.model as Network).dispose();
  }, 40_000);

  test('a client of a run that failed exits with status 2 and says why on stderr; --out where the server sends no model is refused before joining', async () => {
    const port = await freePort();
    // c2 sends replies of the wrong width: excluded, and with --max-excluded-share 0 the run fails
    const s = server(port, '--max-excluded-share', '0', '--quiet');
    const good = [0, 1].map((c) => client(port, c, '--quiet'));
    const bad = start(cli, 'client', '--algorithm', 'fedavg', '--broker', `mqtt://127.0.0.1:${port}`, '--id', 'c2', '--password', 'pw2', '--data', join(dir, 'wide.csv'), '--label', 'label', '--quiet');
    const r = await s;
    expect(r.code).toBe(2);
    for (const c of [...(await Promise.all(good)), await bad]) {
      expect(c.code, c.out).toBe(2);
      expect(c.err).toMatch(/fedmix client: client c\d: the server's run failed: /);
      expect(c.out).not.toMatch(/the run ended/);
    }
    const dem = spawnSync(process.execPath, [cli, 'client', '--algorithm', 'dem', '--broker', 'mqtt://127.0.0.1:1', '--id', 'c0', '--data', join(dir, 'c0.csv'), '--drop', 'label', '--out', join(dir, 'x.json')], { encoding: 'utf8' });
    expect(dem.status).toBe(2);
    expect(dem.stderr).toMatch(/--out: a dem server sends its clients no global model to save/);
  }, 40_000);

  test('a client claiming 2^48 rows with updates scaled by 1e6: --max-samples excludes it; --clip-norm and --aggregation median keep the model in scale', async () => {
    const run = async (...flags: string[]) => {
      const port = await freePort();
      const model = join(dir, `hostile${flags.join('')}.json`);
      const s = server(port, '--out', model, '--quiet', '--max-excluded-share', '0.5', ...flags);
      const cs = [0, 1].map((c) => client(port, c, '--quiet'));
      const h = start(join(dir, 'hostile.mjs'), `mqtt://127.0.0.1:${port}`, join(dir, 'c2.csv'));
      const r = await s;
      await Promise.all([...cs, h]);
      const saved = loadModel(readFileSync(model, 'utf8'));
      const p = (saved.model as Network).getParameters();
      (saved.model as Network).dispose();
      return { r, largest: p.reduce((m, x) => Math.max(m, Math.abs(x)), 0), saved };
    };
    const capped = await run('--max-samples', '1000');
    // excluded: a warning, in the artifact's history, and exit status 3
    expect(capped.r.code).toBe(3);
    expect(capped.r.err).toMatch(/excluded round 1: c2: .*declares 281474976710656 rows; the server takes at most 1000 \(maxSamples\)/);
    expect(capped.largest).toBeLessThan(50);
    const robust = await run('--clip-norm', '5', '--aggregation', 'median');
    expect(robust.r.code, robust.r.err).toBe(0);
    expect(robust.largest).toBeLessThan(50);
    expect((robust.saved.history as { metrics?: { clipped?: number } }[]).slice(0, 3).map((h) => h.metrics?.clipped)).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
    expect((robust.saved.history[0] as { metrics: { clipped: number } }).metrics.clipped).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
