/**
 * FedDistr's experiment over MQTT (issue 14, item 8): every federation of it
 * (FedDistr's one round, the baselines' rounds) run by simulateOverMqtt, the
 * simulated clients MQTT clients of the embedded broker, gives the report of
 * the in-process run, timings aside; `fedmix feddistr --broker embedded` says
 * where it ran. A client refused by the broker ends the run at once.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { FederationError, InvalidParameterError, init } from '../ts/index.js';
import { LETTER_TASK_GROUPS, runFedDistrExperiment, subclassDataFromCsv, type FedDistrExperimentReport } from '../ts/experiments/index.js';
import { runFedDistrExperimentWith } from '../ts/experiments/feddistr/run.js';
import { fedDistrSimulation } from '../ts/federated/feddistr/run.js';
import { simulateOverMqtt } from '../ts/federated/simulate-mqtt.js';
import { startBroker } from '../ts/federated/transport/broker.js';
import { SERVER_USER } from '../ts/federated/serve.js';

const letterPath = fileURLToPath(new URL('../../shared/datasets/letter.csv', import.meta.url));
const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));

beforeAll(async () => {
  await init();
});

/** The first n rows of letter.csv, letters as subclasses of 13 task classes. */
function letters(n: number) {
  const all = subclassDataFromCsv(readFileSync(letterPath, 'utf8'), { subclass: 'label', groups: LETTER_TASK_GROUPS });
  const keep = Array.from({ length: n }, (_, i) => i);
  return { ...all, X: all.X.selectRows(keep), subclasses: all.subclasses.slice(0, n), tasks: all.tasks.slice(0, n) };
}

/** The report without its wall times (the only thing a transport may change). */
function timeless(r: FedDistrExperimentReport): unknown {
  return JSON.parse(JSON.stringify(r, (k, v) => (k === 'seconds' ? undefined : v)));
}

describe('FedDistr experiment over the embedded MQTT broker', () => {
  test('FedDistr and every baseline round over MQTT give the in-process report', async () => {
    const train = letters(1500);
    const config = { clients: 3, entanglement: 0.06, rounds: 3, kMax: 2, seed: 4, mlpEpochs: 10, baselines: ['fedavg', 'scaffold', 'central'] as ('fedavg' | 'scaffold' | 'central')[] };
    const here = runFedDistrExperiment({ train }, config);
    let simulations = 0;
    const there = await runFedDistrExperimentWith({ train }, config, (s) => {
      simulations++;
      return simulateOverMqtt(s, { federation: 'fd-test' });
    });
    // FedDistr's round, FedAvg's and SCAFFOLD's runs crossed the broker; central has no federation
    expect(simulations).toBe(3);
    expect(timeless(there)).toEqual(timeless(here));
    // not vacuous: the run did something, and its bytes were counted on the broker's side as in process
    expect(there.runs[0]!.feddistr.bytes).toBeGreaterThan(0);
    expect(there.runs[0]!.baselines[0]!.curve).toHaveLength(3);
    expect(there.runs[0]!.feddistr.accuracy.generative).toBeGreaterThan(0.3);
  }, 120_000);

  test('a client refused by an existing broker ends the run at once, with a FederationError', async () => {
    const train = letters(600);
    const rows = [Int32Array.from({ length: 300 }, (_, i) => i), Int32Array.from({ length: 300 }, (_, i) => 300 + i)];
    const data = rows.map((idx) => ({ X: train.X.selectRows(idx), labels: Int32Array.from(idx, (i) => train.tasks[i]!) }));
    // the broker knows the server and client 0, not client 1
    const broker = await startBroker({ federation: 'fd-refused', users: [{ username: SERVER_USER, password: 'server-pw', role: 'server' }, { username: '0', password: 'client-pw', role: 'client' }] });
    try {
      const t0 = Date.now();
      await expect(simulateOverMqtt(fedDistrSimulation(data, { kMax: 2 }), { federation: 'fd-refused', broker: { url: broker.url, username: SERVER_USER, password: 'server-pw', clientPassword: 'client-pw' } })).rejects.toThrow(FederationError);
      // well before the runtime's join timeout (60 s)
      expect(Date.now() - t0).toBeLessThan(30_000);
    } finally {
      await broker.close();
    }
    await expect(simulateOverMqtt(fedDistrSimulation(data, { kMax: 2, encoding: 'none' }))).rejects.toThrow(InvalidParameterError);
    await expect(simulateOverMqtt(fedDistrSimulation(data, { kMax: 2 }), { federation: 'bad/name' })).rejects.toThrow(InvalidParameterError);
  }, 60_000);

  test('fedmix feddistr --broker embedded: the same tables, and the JSON says where it ran', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-fd-mqtt-'));
    try {
      const groups = LETTER_TASK_GROUPS.map((g) => g.join('+')).join(',');
      const args = ['feddistr', '--data', letterPath, '--groups', groups, '--clients', '3', '--entanglement', '0', '--rounds', '2', '--baselines', 'fedavg', '--base-k-range', '1..2', '--mlp-epochs', '5', '--seed', '2'];
      const run = (...more: string[]) => spawnSync(process.execPath, [CLI, ...args, ...more], { encoding: 'utf8' });
      const a = run('--json', join(dir, 'a.json'));
      const b = run('--broker', 'embedded', '--json', join(dir, 'b.json'));
      expect(a.status, a.stderr).toBe(0);
      expect(b.status, b.stderr).toBe(0);
      expect(b.stdout).toMatch(/over MQTT \(the embedded broker\)/);
      const ja = JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8'));
      const jb = JSON.parse(readFileSync(join(dir, 'b.json'), 'utf8'));
      expect(ja.run).toEqual({ transport: 'in-process' });
      expect(jb.run).toEqual({ transport: 'mqtt', broker: 'embedded', federation: 'feddistr' });
      expect(timeless(jb)).toEqual({ ...(timeless(ja) as object), run: jb.run });
      const bad = run('--broker', 'embedded', '--client-password', 'x');
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/--client-password is for an existing broker/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
