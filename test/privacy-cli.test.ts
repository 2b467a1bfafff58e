/**
 * `fedmix server --delta --epsilon-budget` with DP-FedAvg (--dp-clip,
 * --dp-noise-multiplier), real processes from dist/ over the embedded broker:
 * each round's JSON line carries the epsilon spent so far; the budget stops
 * the run before the round that would pass it, the server and the clients
 * exit 0 (a budget stop is not a failure), the stop is in the summary and
 * no client was sent that round.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, test } from 'vitest';
import { freePort } from '../ts/federated/transport/ports.js';
import { privacyEpsilon } from '../ts/privacy/accountant.js';
import { init } from '../ts/wasm/loader.js';
import { jsonLines, runNode, xorshift32 } from './helpers.js';

const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));

const start = (...args: string[]) => runNode(cli, ...args);

let dir: string;
beforeAll(async () => {
  await init();
  dir = mkdtempSync(join(tmpdir(), 'fedmix-privacy-cli-'));
  const next = xorshift32(5);
  const u = () => (next() + 0.5) / 2 ** 32;
  for (let c = 0; c < 3; c++) {
    const rows = Array.from({ length: 60 }, (_, i) => [0.2 + 0.3 * (i % 3) + 0.1 * u(), 0.8 - 0.3 * (i % 3) + 0.1 * u(), i % 3].join(','));
    writeFileSync(join(dir, `c${c}.csv`), `x,y,label\n${rows.join('\n')}\n`);
  }
  writeFileSync(join(dir, 'clients.txt'), 'c0:pw0\nc1:pw1\nc2:pw2\n');
});

test('the budget stops a DP-FedAvg run before round 3, exit status 0 everywhere; every round line says the epsilon spent', async () => {
  const eps = (steps: number) => privacyEpsilon({ noiseMultiplier: 1.1, samplingRate: 1, steps, delta: 1e-5 }).epsilon;
  const budget = (eps(2) + eps(3)) / 2;
  const port = await freePort();
  const s = start('server', '--algorithm', 'fedavg', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--layers', '2,8,3', '--loss', 'softmax-cross-entropy',
    '--rounds', '5', '--epochs', '1', '--batch-size', '16', '--round-timeout', '20', '--join-timeout', '30', '--log-format', 'json',
    '--dp-clip', '0.5', '--dp-noise-multiplier', '1.1', '--delta', '1e-5', '--epsilon-budget', String(budget));
  const cs = [0, 1, 2].map((c) => start('client', '--algorithm', 'fedavg', '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--label', 'label', '--log-format', 'json'));
  const r = await s;
  expect(r.code, r.err).toBe(0);
  const rounds = jsonLines(r.err).filter((l) => l.event === 'round');
  expect(rounds.map((l) => l.round)).toEqual([1, 2]);
  rounds.forEach((l, i) => {
    const p = l.privacy as { epsilon: number; delta: number; step: unknown };
    expect(p.step).toEqual({ mechanism: 'gaussian', noiseMultiplier: 1.1, samplingRate: 1 });
    expect(Math.abs(p.epsilon - eps(i + 1))).toBeLessThan(1e-9 * p.epsilon);
    expect((l.metrics as { clipped: number }).clipped).toBeGreaterThanOrEqual(0);
  });
  expect(r.out).toMatch(/stopped early after round 2: privacy budget: round 3 would take the privacy spent to epsilon [\d.]+ at delta 0.00001, past the budget of [\d.]+/);
  expect(r.out).toMatch(/privacy spent: epsilon [\d.]+ at delta 0.00001 \(budget [\d.]+\)/);
  for (const c of await Promise.all(cs)) {
    expect(c.code, c.err).toBe(0);
    expect(jsonLines(c.out).filter((l) => l.event === 'request').map((l) => l.round)).toEqual([1, 2]);
  }
}, 60_000);
