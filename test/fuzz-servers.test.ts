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
import { federations, fuzzServers, MUTATIONS } from './support/fuzz-servers.mjs';

beforeAll(async () => {
  await fedmix.init();
});

const runs = Number(process.env.FUZZ_RUNS ?? MUTATIONS.length);

test.each(['dem', 'fedgengmm', 'fedgem', 'fedgem-spread', 'mdm'])(`%s: ${runs} mutated first replies of one client, none hurts the run`, (server) => {
  const report = fuzzServers(fedmix, { seed: 7, perServer: runs, servers: [server], heap: () => wasm().fm_heap_in_use() })[server]!;
  expect(report.violations).toEqual([]);
  expect(report.tried).toBe(runs);
  // most mutations are caught; a few are harmless (a field deleted that was optional, a number that stays valid)
  expect(report.excluded).toBeGreaterThan(runs / 2);
}, 120_000);

test.each(['dem', 'fedgengmm', 'fedgem', 'fedgem-spread', 'mdm'])('%s: a message object passed to accept() by hand gets the checks its bytes would', (name) => {
  const fed = federations(fedmix)[name]!;
  const clients = fed.clients();
  const server = fed.server();
  try {
    const ids = clients.map((c) => c.id);
    const ctx = { round: 1, clients: ids, available: ids };
    const request = server.configure(ctx).get(ids[0]!)!;
    const honest = new fedmix.ClientHost(clients[0]!).answerSync(fedmix.decodeMessage(fedmix.encodeMessage(request, 'binary')))!;
    const spoiled: Array<[string, fedmix.Message]> = [
      ['another version', { ...honest, version: 2 } as unknown as fedmix.Message],
      ['an undeclared envelope field', { ...honest, extra: 1 } as unknown as fedmix.Message],
      ['an undeclared payload field', { ...honest, payload: { ...(honest.payload as object), extra: 1 } }],
      ['no sender', { ...honest, from: '' }],
      ['not an object', null as unknown as fedmix.Message],
    ];
    for (const [what, m] of spoiled) expect(() => server.accept(m, request, ctx), what).toThrow(fedmix.InvalidMessageError);
    // and the honest one, read or not, is accepted
    const value = server.accept(honest, request, ctx);
    server.discard?.(value);
  } finally {
    server.dispose?.();
    for (const c of clients) c.dispose?.();
  }
});
