/**
 * Clients' own privacy budgets (runtime/client-budget.ts): a client refuses a
 * request whose declared privacy step would take its ledger past its budget,
 * spending nothing, and the run goes on without it; the ledger survives a
 * restart (a file), a request sent again is accounted once, a damaged ledger
 * is refused; a client with ample budget is never refused.
 *
 * The server here is distributed EM with every request stamped with a
 * gaussian step (withPrivacy), as a server adding central noise declares it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  ClientBudget,
  ClientHost,
  DemClient,
  DemServer,
  InProcessTransport,
  InvalidParameterError,
  MemoryLedgerStore,
  PrivacyBudgetError,
  REFUSAL,
  decodeMessage,
  encodeMessage,
  init,
  join,
  MqttTransport,
  privacyEpsilon,
  runFederation,
  type Message,
} from '../ts/index.js';
import { withPrivacy, type PrivacyStep } from '../ts/federated/messages/envelope.js';
import { FileLedgerStore } from '../ts/node.js';
import { startBroker } from '../ts/federated/transport/broker.js';
import { SERVER_USER } from '../ts/federated/serve.js';
import { main } from '../ts/cli/main.js';
import * as built from '../dist/index.js';
import { WorkerTransport } from '../dist/node.js';
import { blobs, csvOf, stamping } from './helpers.js';

const DELTA = 1e-5;
/** what the server declares: sigma 2, and a sampling rate the clients do not take on trust by default */
const STEP: PrivacyStep = { mechanism: 'gaussian', noiseMultiplier: 2, samplingRate: 0.1 };
/** what a server that asks every client declares (the run's own ledger refuses a rate below the share it asked) */
const RUN_STEP: PrivacyStep = { ...STEP, samplingRate: 1 };
const DEM = { nComponents: 3, nFeatures: 2, covarianceType: 'diag' as const, init: 'kfed' as const, seed: 5, maxRounds: 6, tol: 0 };

/** epsilon after n steps at sigma 2 without amplification (what a client accounts by default) */
const epsilonAfter = (n: number, samplingRate = 1) => privacyEpsilon({ noiseMultiplier: 2, samplingRate, steps: n, delta: DELTA }).epsilon;
/** a budget that allows exactly n such steps */
const budgetFor = (n: number) => (epsilonAfter(n) + epsilonAfter(n + 1)) / 2;

const clients = (ids: string[]) => ids.map((id, i) => new DemClient(id, blobs(120, 2, 3, 40 + i, 5)));

let dir: string;
beforeAll(async () => {
  await init();
  dir = mkdtempSync(joinPath(tmpdir(), 'fedmix-ledger-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One run in process of three clients, `budgets` by id. */
async function run(budgets: Map<string, ClientBudget>, ids = ['a', 'b', 'c']) {
  const roles = clients(ids);
  try {
    const result = await runFederation(stamping(new DemServer(DEM), RUN_STEP), new InProcessTransport(roles, { budgets }));
    return { result };
  } finally {
    for (const r of roles) r.dispose();
  }
}

describe('a client with a small budget', () => {
  test('answers until the next request would pass its budget, then refuses it, spending nothing; the run goes on without it', async () => {
    const small = await ClientBudget.open({ epsilon: budgetFor(3), delta: DELTA });
    const ample = await ClientBudget.open({ epsilon: 1e6, delta: DELTA });
    const { result } = await run(new Map([['c', small], ['a', ample]]));
    // c answered three requests and refused the fourth
    expect(small.accounted).toBe(3);
    expect(small.spent().epsilon).toBeCloseTo(epsilonAfter(3), 10);
    expect(small.spent().epsilon).toBeLessThanOrEqual(small.epsilon);
    expect(small.refusals).toHaveLength(1);
    expect(small.refusals[0]!.reason).toMatch(/^c: refused round 4's .* for its privacy budget: .* would bring its epsilon to [\d.]+, past its budget of [\d.]+ at delta 0\.00001; it has spent [\d.]+ over 3 requests$/);
    // the server sees a refusal for the budget, excludes c, and the run goes on with a and b to its end
    const failure = result.failures.find((f) => f.client === 'c');
    expect(failure).toMatchObject({ round: 4, kind: 'refused', excluded: true });
    expect(failure!.reason).toMatch(/privacy budget/);
    expect(result.excluded.map((e) => e.client)).toEqual(['c']);
    expect(result.rounds).toBeGreaterThan(4);
    // the client with ample budget: every request accounted, none refused (the server asked it every round)
    expect(ample.refusals).toEqual([]);
    expect(ample.accounted).toBe(result.rounds);
    expect(result.failures.filter((f) => f.client !== 'c')).toEqual([]);
    result.model.dispose();
  });

  test('a sampling rate is taken on trust only when asked: by default the step counts at rate 1', async () => {
    const roles = clients(['a']);
    const trusting = await ClientBudget.open({ epsilon: 1e6, delta: DELTA, trustSamplingRate: true });
    const wary = await ClientBudget.open({ epsilon: 1e6, delta: DELTA });
    const request = withPrivacy(new DemServer(DEM).configure({ round: 1, clients: ['a'], available: ['a'] }).get('a')!, STEP);
    const stamped = { ...request, run: 'run-sampling-1' } as Message;
    for (const b of [trusting, wary]) await new ClientHost(roles[0]!, { budget: b }).handle(encodeMessage(stamped, 'json'));
    expect(wary.spent().epsilon).toBeCloseTo(epsilonAfter(1), 10);
    expect(trusting.spent().epsilon).toBeCloseTo(epsilonAfter(1, 0.1), 10);
    expect(trusting.spent().epsilon).toBeLessThan(wary.spent().epsilon / 3);
    roles[0]!.dispose();
  });
});

/** A request of round `round` of run `run` declaring `step`, for client a, as wire bytes. */
function requestBytes(run: string, round: number, step: PrivacyStep | null = STEP): Uint8Array {
  const m = new DemServer(DEM).configure({ round: 1, clients: ['a'], available: ['a'] }).get('a')!;
  const r = { ...m, round, run } as Message;
  return encodeMessage(step === null ? r : withPrivacy(r, step), 'binary');
}

const refusalOf = (bytes: Uint8Array | undefined) => {
  const m = decodeMessage(bytes!);
  return m.kind === REFUSAL.kind ? REFUSAL.read(m).payload : undefined;
};

describe('the ledger in a file', () => {
  test('survives a restart of the client: spent, counted and refused as before, and composed over runs', async () => {
    const path = joinPath(dir, 'restart.json');
    const first = await ClientBudget.open({ epsilon: budgetFor(5), delta: DELTA, store: new FileLedgerStore(path) });
    const r1 = await run(new Map([['c', first]]));
    // a seven-round run: five answered, the sixth refused
    expect(r1.result.rounds).toBe(7);
    expect(first.accounted).toBe(5);
    r1.result.model.dispose();
    // the client restarts: the same file, a fresh budget object
    const again = await ClientBudget.open({ epsilon: budgetFor(5), delta: DELTA, store: new FileLedgerStore(path) });
    expect(again.accounted).toBe(5);
    expect(again.spent().epsilon).toBe(first.spent().epsilon);
    // a new run: its first private request is already past the budget
    const r2 = await run(new Map([['c', again]]));
    expect(again.accounted).toBe(5);
    expect(again.refusals.map((r) => r.round)).toEqual([1]);
    expect(r2.result.failures.find((f) => f.client === 'c')).toMatchObject({ round: 1, kind: 'refused' });
    r2.result.model.dispose();
    // a larger budget over the same ledger: the earlier spend still counts
    const raised = await ClientBudget.open({ epsilon: budgetFor(7), delta: DELTA, store: new FileLedgerStore(path) });
    const r3 = await run(new Map([['c', raised]]));
    expect(raised.accounted).toBe(7);
    expect(raised.refusals.map((r) => r.round)).toEqual([3]);
    r3.result.model.dispose();
  });

  test('a request sent again (same run, round and kind) is accounted once, across a restart too; another round is not', async () => {
    const path = joinPath(dir, 'resent.json');
    const [role] = clients(['a']);
    const open = () => ClientBudget.open({ epsilon: budgetFor(2), delta: DELTA, store: new FileLedgerStore(path) });
    const budget = await open();
    const host = new ClientHost(role!, { budget });
    const bytes = requestBytes('run-resent-01', 1);
    expect(refusalOf(await host.handle(bytes))).toBeUndefined();
    // the broker delivers it again after an outage: answered, not counted
    expect(refusalOf(await host.handle(bytes))).toBeUndefined();
    expect(budget.accounted).toBe(1);
    // the client restarts and the server sends it again: still once
    const restarted = await open();
    const host2 = new ClientHost(role!, { budget: restarted });
    expect(refusalOf(await host2.handle(requestBytes('run-resent-01', 1)))).toBeUndefined();
    expect(restarted.accounted).toBe(1);
    // the other side: a new round, or the same round of another run, is a new release
    expect(refusalOf(await host2.handle(requestBytes('run-resent-01', 2)))).toBeUndefined();
    expect(restarted.accounted).toBe(2);
    const third = refusalOf(await host2.handle(requestBytes('run-resent-02', 1)));
    expect(third).toMatchObject({ code: 'PRIVACY_BUDGET' });
    expect(restarted.accounted).toBe(2);
    // the same request declaring another step is not the one accounted: counted (here: refused)
    expect(refusalOf(await host2.handle(requestBytes('run-resent-01', 1, { mechanism: 'gaussian', noiseMultiplier: 1, samplingRate: 1 })))).toMatchObject({ code: 'PRIVACY_BUDGET' });
    role!.dispose();
  });

  test('a ledger file damaged, cut short or edited is refused, typed, and left as it was', async () => {
    const path = joinPath(dir, 'tamper.json');
    const budget = await ClientBudget.open({ epsilon: 1e6, delta: DELTA, store: new FileLedgerStore(path) });
    const [role] = clients(['a']);
    const host = new ClientHost(role!, { budget });
    for (let round = 1; round <= 3; round++) await host.handle(requestBytes('run-tamper-01', round));
    role!.dispose();
    const good = readFileSync(path, 'utf8');
    // the other side first: the file as written opens, with what it spent
    expect((await ClientBudget.open({ epsilon: 1e6, delta: DELTA, store: new FileLedgerStore(path) })).accounted).toBe(3);
    const edited = good.replace(/"steps":3/, '"steps":1');
    expect(edited).not.toBe(good);
    for (const [what, text, why] of [
      ['edited (fewer steps)', edited, /digest does not match/],
      ['cut short', good.slice(0, good.length >> 1), /not JSON \(cut short\?\)/],
      ['empty', '', /it is empty/],
      ['not a ledger', JSON.stringify({ hello: 1 }), /digest does not match/],
    ] as const) {
      writeFileSync(path, text);
      const e = await ClientBudget.open({ epsilon: 1e6, delta: DELTA, store: new FileLedgerStore(path) }).catch((x: unknown) => x);
      expect(e, what).toBeInstanceOf(InvalidParameterError);
      expect((e as Error).message, what).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a usable privacy ledger: `));
      expect((e as Error).message, what).toMatch(why);
      // never reset: the file is as it was
      expect(readFileSync(path, 'utf8'), what).toBe(text);
    }
  });
});

describe('what the ledger accounts', () => {
  test('skellam steps are accounted as declared (distributed DP); undeclared requests are answered unless a step is required', async () => {
    const [role] = clients(['a']);
    const budget = await ClientBudget.open({ epsilon: 1e6, delta: DELTA });
    const host = new ClientHost(role!, { budget });
    expect(refusalOf(await host.handle(requestBytes('run-mech-0001', 1, { mechanism: 'skellam', mu: 100, l1: 1, l2: 1 })))).toBeUndefined();
    expect(budget.accounted).toBe(1);
    expect(budget.spent().epsilon).toBeCloseTo(privacyEpsilon({ mechanism: 'skellam', mu: 100, l1: 1, l2: 1, steps: 1, delta: DELTA }).epsilon, 12);
    // past a budget, a skellam step is refused like a gaussian one, naming its noise
    const small = await ClientBudget.open({ epsilon: 0.1, delta: DELTA });
    const smallHost = new ClientHost(role!, { budget: small });
    const refused = refusalOf(await smallHost.handle(requestBytes('run-mech-0001', 1, { mechanism: 'skellam', mu: 100, l1: 1, l2: 1 })));
    expect(refused).toMatchObject({ code: 'PRIVACY_BUDGET' });
    expect(refused!.reason).toMatch(/Skellam noise mu 100 at sensitivities l1 1, l2 1\) would bring its epsilon to/);
    expect(small.accounted).toBe(0);
    // no privacy declared: answered, nothing spent
    expect(refusalOf(await host.handle(requestBytes('run-mech-0001', 2, null)))).toBeUndefined();
    expect(budget.accounted).toBe(1);
    const strict = await ClientBudget.open({ epsilon: 1e6, delta: DELTA, requireDeclaredPrivacy: true });
    const strictHost = new ClientHost(role!, { budget: strict });
    expect(refusalOf(await strictHost.handle(requestBytes('run-mech-0001', 2, null)))!.reason).toMatch(/declares no privacy step.*requireDeclaredPrivacy/);
    expect(refusalOf(await strictHost.handle(requestBytes('run-mech-0001', 3)))).toBeUndefined();
    expect(strict.accounted).toBe(1);
    role!.dispose();
  });

  test('bad budgets are refused typed; a ledger in memory starts empty', async () => {
    await expect(ClientBudget.open({ epsilon: -1, delta: DELTA })).rejects.toThrow(InvalidParameterError);
    await expect(ClientBudget.open({ epsilon: 1, delta: 0 })).rejects.toThrow(/delta must be a number in \(0, 1\)/);
    await expect(ClientBudget.open({ epsilon: 1, delta: DELTA, store: {} as never })).rejects.toThrow(/store must be a LedgerStore/);
    const b = await ClientBudget.open({ epsilon: 1, delta: DELTA, store: new MemoryLedgerStore() });
    expect(b.spent().epsilon).toBe(0);
    expect(new PrivacyBudgetError('x').code).toBe('PRIVACY_BUDGET');
  });
});

describe('over MQTT', () => {
  test('join({ budget }) and `fedmix client --epsilon-budget --ledger`: refusals for the budget in the log and the exit status', async () => {
    const ids = ['m0', 'm1', 'm2'];
    const pw = (id: string) => `pw-${id}`;
    const broker = await startBroker({ federation: 'ledger', users: [{ username: SERVER_USER, password: 'srv', role: 'server' }, ...ids.map((id) => ({ username: id, password: pw(id), role: 'client' as const }))] });
    const ledger = joinPath(dir, 'cli-ledger.json');
    const csv = joinPath(dir, 'm2.csv');
    writeFileSync(csv, csvOf(120, [[0, 0], [8, 8], [0, 8]], 7));
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    try {
      const transport = await MqttTransport.connect({ url: broker.url, federation: 'ledger', username: SERVER_USER, password: 'srv', clients: ids, defaultRoundTimeout: 30 });
      const roles = clients(['m0', 'm1']);
      const ample = await ClientBudget.open({ epsilon: 1e6, delta: DELTA });
      const joined = roles.map((role, i) => join({ url: broker.url, federation: 'ledger', client: role, password: pw(role.id), ...(i === 0 ? { budget: ample } : {}) }));
      (process.stderr as { write: unknown }).write = (chunk: unknown, ...rest: unknown[]) => {
        errors.push(String(chunk));
        return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
      };
      const cli = main(['client', '--algorithm', 'dem', '--broker', broker.url, '--federation', 'ledger', '--id', 'm2', '--password', pw('m2'), '--data', csv, '--drop', 'label', '--epsilon-budget', String(budgetFor(2)), '--delta', String(DELTA), '--ledger', ledger, '--quiet']);
      await transport.available(3, 20_000);
      const result = await runFederation(stamping(new DemServer(DEM), RUN_STEP), transport, { roundTimeout: 30 });
      const [status, ...ends] = await Promise.all([cli, ...joined]);
      // the command's client: two answered, the third refused; status 3, one warning naming the budget
      expect(status).toBe(3);
      expect(errors.join('')).toMatch(/fedmix client: warning: excluded round 3: m2: refused round 3's .* for its privacy budget/);
      expect(result.failures.find((f) => f.client === 'm2')).toMatchObject({ round: 3, kind: 'refused' });
      expect((await ClientBudget.open({ epsilon: 1, delta: DELTA, store: new FileLedgerStore(ledger) })).accounted).toBe(2);
      // the joined client with ample budget answered every round, refused nothing
      expect(ends.every((e) => e.ok)).toBe(true);
      expect(ample.accounted).toBe(result.rounds);
      expect(ample.refusals).toEqual([]);
      result.model.dispose();
      for (const r of roles) r.dispose();
    } finally {
      (process.stderr as { write: unknown }).write = write;
      await broker.close();
    }
  }, 30_000);
});

describe('in worker threads (the built package)', () => {
  test('LaneOptions.budgets: a client keeps its ledger in its thread, refuses past its budget; a damaged ledger keeps it from starting', async () => {
    await built.init();
    const ledger = joinPath(dir, 'thread-ledger.json');
    const damaged = joinPath(dir, 'thread-damaged.json');
    writeFileSync(damaged, '{"format":"fedmix.PrivacyLedger"');
    const specs = ['t0', 't1', 't2'].map((id, i) => {
      const x = blobs(120, 2, 3, 40 + i, 5);
      return { algorithm: 'dem', id, data: { data: x.data, nRows: x.nRows, nCols: x.nCols } };
    });
    const transport = await WorkerTransport.start(specs, {
      threads: 2,
      budgets: { t0: { epsilon: budgetFor(2), delta: DELTA, ledger }, t1: { epsilon: 1e6, delta: DELTA, ledger: joinPath(dir, 'thread-ample.json') }, t2: { epsilon: 1, delta: DELTA, ledger: damaged } },
    });
    try {
      expect(transport.unborn).toHaveLength(1);
      expect(transport.unborn[0]!.reason).toMatch(/^t2: creating the client failed: .*thread-damaged\.json is not a usable privacy ledger: it is not JSON \(cut short\?\)/);
      const result = await built.runFederation(stamping(new built.DemServer(DEM), RUN_STEP), transport, { excludedBefore: transport.unborn, maxExcludedShare: 1 });
      expect(result.failures.filter((f) => f.kind === 'refused')).toEqual([expect.objectContaining({ client: 't0', round: 3, excluded: true })]);
      expect((await ClientBudget.open({ epsilon: 1, delta: DELTA, store: new FileLedgerStore(ledger) })).accounted).toBe(2);
      // the client with ample budget answered every round
      expect((await ClientBudget.open({ epsilon: 1, delta: DELTA, store: new FileLedgerStore(joinPath(dir, 'thread-ample.json')) })).accounted).toBe(result.rounds);
      expect(readFileSync(damaged, 'utf8')).toBe('{"format":"fedmix.PrivacyLedger"');
      result.model.dispose();
    } finally {
      await transport.close();
    }
  }, 30_000);
});
