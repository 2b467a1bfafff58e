/**
 * A sample of the fuzz harness (test/support/fuzz-servers.mjs; the large runs
 * are scripts/fuzz-servers.mjs): every mutation once per server, and after
 * each run the error stayed with its sender, the model is the run without it
 * (or finite, when the mutation was harmless), nothing polluted
 * Object.prototype and the WASM heap is balanced. FUZZ_RUNS=N runs N per server.
 */
import { beforeAll, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { fuzzServers, MUTATIONS } from './support/fuzz-servers.mjs';

beforeAll(async () => {
  await fedmix.init();
});

const runs = Number(process.env.FUZZ_RUNS ?? MUTATIONS.length);

test.each(['dem', 'fedgengmm', 'fedgem', 'mdm'])(`%s: ${runs} mutated first replies of one client, none hurts the run`, (server) => {
  const report = fuzzServers(fedmix, { seed: 7, perServer: runs, servers: [server], heap: () => wasm().fm_heap_in_use() })[server]!;
  expect(report.violations).toEqual([]);
  expect(report.tried).toBe(runs);
  // most mutations are caught; a few are harmless (a field deleted that was optional, a number that stays valid)
  expect(report.excluded).toBeGreaterThan(runs / 2);
}, 120_000);
