/**
 * Groups of simulated users (MdmUserGroup, fitMdm's `groups`): one runtime
 * client and one message per group, the same model as one client per user at
 * the same seeds; a reply's user count is bounded by what the client declared
 * and checked against its statistics; a group that fails takes all its users
 * with it; minimum-client rules and the privacy rule count users.
 */
import { beforeAll, describe, expect, test, vi } from 'vitest';
import {
  decodeMessage,
  encodeMessage,
  defineMessage,
  defineProtocol,
  DirichletMultinomialMixture,
  FederationError,
  fitMdm,
  init,
  InProcessTransport,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  MdmAggregator,
  MdmClient,
  MdmServer,
  MdmUserGroup,
  message,
  runFederation,
  runFederationSync,
  type ClientRole,
  type Matrix,
  type Message,
  type RoundContext,
  type ServerRole,
} from '../ts/index.js';
import { histogramRows } from '../ts/models/dirichlet-multinomial-mixture.js';
import { digammaDiff, lgamma, lnRisingFactorial } from '../ts/special/gamma.js';
import { MDM_PROTOCOL, paramsOf, StatsBounds } from '../ts/federated/mdm/messages.js';
import { record, f64Array } from '../ts/federated/messages/schema.js';
import { editPayload, maxRelativeError, Recording } from './helpers.js';

beforeAll(async () => {
  await init();
});

const K = 2;
const C = 6;
const N = 30;

/** 60 users of sizes 5..30 from a two-component truth. */
function users(m = 60, seed = 3): Matrix {
  const truth = new DirichletMultinomialMixture({
    tau: [0.4, 0.6],
    alpha: [
      [0.2, 0.3, 2, 1, 0.5, 0.1],
      [2, 2, 0.3, 0.4, 1, 3],
    ],
    pi: Array.from({ length: K }, () => Array.from({ length: N }, (_, i) => (i >= 4 ? 1 / (N - 4) : 0))),
  });
  return truth.sample(m, { seed }).histograms;
}

const same = (a: DirichletMultinomialMixture, b: DirichletMultinomialMixture) =>
  Math.max(maxRelativeError(a.tau, b.tau, 1e-300), maxRelativeError(a.alpha, b.alpha, 1e-300), maxRelativeError(a.pi, b.pi, 1e-300));

/** Row-major counts and sizes of some users, as rows. */
function rowsOf(h: Matrix, from: number, to: number): number[][] {
  const { counts, c } = histogramRows(h);
  return Array.from({ length: to - from }, (_, i) => Array.from(counts.subarray((from + i) * c, (from + i + 1) * c)));
}

describe('groups of users give the per-client run', () => {
  test.each([1, 3, 7, 60])('fitMdm with %i group(s): the model and history of one client per user (within 1e-9)', (groups) => {
    const h = users();
    const options = { nComponents: K, rounds: 6, maxCount: N, seed: 11 };
    const perClient = fitMdm(h, options);
    const grouped = fitMdm(h, { ...options, groups });
    expect(same(grouped.model, perClient.model)).toBeLessThan(1e-9);
    expect(grouped.history.map((r) => r.clients)).toEqual(perClient.history.map((r) => r.clients));
    grouped.history.forEach((r, i) => {
      expect(Math.abs(r.meanLogLikelihood! - perClient.history[i]!.meanLogLikelihood!)).toBeLessThan(1e-9 * Math.abs(r.meanLogLikelihood!));
      expect(r.guards).toEqual(perClient.history[i]!.guards);
    });
    // one message per group and round; the users they stood for, counted by the runtime
    expect(grouped.traffic.messagesUp).toBe(groups * grouped.traffic.rounds);
    // (groups of one user each are plain clients: no user count to report)
    expect(grouped.traffic.users).toBe(groups < 60 ? 60 * grouped.traffic.rounds : undefined);
    expect(perClient.traffic.users).toBeUndefined();
    expect(grouped.federation.history.every((r) => r.users === 60 && r.accepted === groups)).toBe(true);
    if (groups < 60) expect(grouped.traffic.bytesUp).toBeLessThan(perClient.traffic.bytesUp);
  });

  test('runFederation (async) gives what runFederationSync gives', async () => {
    const h = users(20, 6);
    const model = fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 1 }).model;
    const server = () => new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds: 2, init: model, seed: 1 });
    const groups = () => [new MdmUserGroup('a', rowsOf(h, 0, 8)), new MdmUserGroup('b', rowsOf(h, 8, 20))];
    const [s1, s2] = [server(), server()];
    const sync = runFederationSync(s1, groups());
    const async_ = await runFederation(s2, groups());
    expect(same(async_.model, sync.model)).toBe(0);
    expect(async_.traffic.users).toBe(40);
    s1.dispose();
    s2.dispose();
  });

  test('with privacy: the same noise is added once to the same sums (noise seeded for the test)', () => {
    const h = users();
    const options = { nComponents: K, rounds: 4, maxCount: N, seed: 2, noiseSeed: 9, privacy: { noiseMultiplier: 0.5, clip: 3 } };
    const perClient = fitMdm(h, options);
    const grouped = fitMdm(h, { ...options, groups: 4 });
    expect(same(grouped.model, perClient.model)).toBeLessThan(1e-9);
    // and the noise did something: without it the model differs
    const exact = fitMdm(h, { ...options, privacy: undefined, groups: 4 });
    expect(same(exact.model, grouped.model)).toBeGreaterThan(1e-6);
  });

  test('in every encoding, through runFederationSync with groups of uneven sizes', () => {
    const h = users(25, 5);
    const model = fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 1 }).model;
    const run = (clients: ClientRole[], encoding: 'binary' | 'json' | 'none') => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds: 3, init: model, seed: 1 });
      try {
        return runFederationSync(server, new InProcessTransport(clients, { encoding })).model;
      } finally {
        server.dispose();
      }
    };
    const { counts, c } = histogramRows(h);
    const single = Array.from({ length: 25 }, (_, i) => new MdmClient(`u${i}`, counts.subarray(i * c, (i + 1) * c), { seed: i }));
    const reference = run(single, 'binary');
    for (const encoding of ['binary', 'json', 'none'] as const) {
      const groups = [new MdmUserGroup('a', rowsOf(h, 0, 1)), new MdmUserGroup('b', rowsOf(h, 1, 13)), new MdmUserGroup('c', rowsOf(h, 13, 25))];
      expect(same(run(groups, encoding), reference)).toBeLessThan(1e-9);
      for (const g of groups) g.dispose();
    }
    for (const s of single) s.dispose();
  });
});

describe('user counts are checked, never trusted', () => {
  const setup = () => {
    const h = users(30, 7);
    const init = fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 1 }).model;
    const run = (clients: ClientRole[], rounds = 2) => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds, init, seed: 1 });
      try {
        return runFederationSync(server, clients);
      } finally {
        server.dispose();
      }
    };
    return { h, run };
  };

  test('a reply claiming more users than its client declared is excluded; the model is the run without it', () => {
    const { h, run } = setup();
    const honest = () => [new MdmUserGroup('g0', rowsOf(h, 0, 10)), new MdmUserGroup('g1', rowsOf(h, 10, 20))];
    // a single client (one user) claiming two
    const single = new Recording(new MdmClient('one', rowsOf(h, 20, 21)[0]!), (r) => message(r.kind, r.from, r.round, r.payload, 2));
    const bad = run([...honest(), single]);
    const without = run(honest());
    expect(bad.excluded).toEqual([{ client: 'one', round: 1, reason: expect.stringMatching(/stands for 2 users, more than the 1 it declared/) }]);
    expect(same(bad.model, without.model)).toBe(0);
    // a group of 10 claiming 11
    const inflated = new Recording(new MdmUserGroup('g2', rowsOf(h, 20, 30)), (r) => message(r.kind, r.from, r.round, r.payload, 11));
    const r2 = run([...honest(), inflated]);
    expect(r2.excluded[0]!.reason).toMatch(/stands for 11 users, more than the 10 it declared/);
    expect(same(r2.model, without.model)).toBe(0);
  });

  test('a count below what the statistics hold, or a group declaring more users than its sums, is caught by the statistics', () => {
    const { h, run } = setup();
    const honest = () => [new MdmUserGroup('g0', rowsOf(h, 0, 10)), new MdmUserGroup('g1', rowsOf(h, 10, 20))];
    const without = run(honest());
    // claims 9 of its 10 users (within what it declared): omega sums to 10
    const under = new Recording(new MdmUserGroup('liar', rowsOf(h, 20, 30)), (r) => message(r.kind, r.from, r.round, r.payload, 9));
    const r1 = run([...honest(), under]);
    expect(r1.excluded).toEqual([{ client: 'liar', round: 1, reason: expect.stringMatching(/omega sums to .* the reply stands for 9 users/) }]);
    expect(same(r1.model, without.model)).toBe(0);
    // one user's statistics sent as the sum of ten: its E column counts one user
    const single = new MdmClient('x', rowsOf(h, 20, 21)[0]!);
    const pretender: ClientRole = { id: 'pretender', protocol: single.protocol, users: 10, respond: (m) => ({ ...(single.respond(m) as Message), from: 'pretender', users: 10 }) };
    const r2 = run([...honest(), pretender]);
    expect(r2.excluded[0]).toMatchObject({ client: 'pretender', reason: expect.stringMatching(/omega sums to 1; the reply stands for 10 users/) });
    expect(same(r2.model, without.model)).toBe(0);
    // E's columns must hold whole users: half a user moved to another size
    const shifted = new Recording(
      new MdmUserGroup('shift', rowsOf(h, 20, 30)),
      editPayload((p) => {
        const e = p.e as number[];
        const i = e.findIndex((x) => x > 0.5);
        e[i] -= 0.5;
        e[(i + 1) % N === 0 ? i - 1 : i + 1] += 0.5;
      }),
    );
    const r3 = run([...honest(), shifted]);
    expect(r3.excluded[0]).toMatchObject({ client: 'shift', reason: expect.stringMatching(/e's columns do not count users|column \d+ of e sums to/) });
    expect(same(r3.model, without.model)).toBe(0);
    single.dispose();
  });

  test('Algorithm 1: a group sums its users\' init-stats; a count its E does not hold is refused', () => {
    const h = users(30, 8);
    const perClient = fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 4 });
    const grouped = fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 4, groups: 3 });
    expect(same(grouped.model, perClient.model)).toBeLessThan(1e-9);
    const run = (clients: ClientRole[]) => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds: 0, seed: 1 });
      try {
        return runFederationSync(server, clients);
      } finally {
        server.dispose();
      }
    };
    const honest = () => [new MdmUserGroup('g0', rowsOf(h, 0, 10), { seed: 1 }), new MdmUserGroup('g1', rowsOf(h, 10, 20), { seed: 2 })];
    const liar = new Recording(new MdmUserGroup('liar', rowsOf(h, 20, 30), { seed: 3 }), (r) => message(r.kind, r.from, r.round, r.payload, 8));
    const r = run([...honest(), liar]);
    expect(r.excluded[0]).toMatchObject({ client: 'liar', reason: expect.stringMatching(/e counts 10 users but the reply stands for 8/) });
    expect(same(r.model, run(honest()).model)).toBe(0);
  });

  test('a group that fails fails all its users: excluded as one, the round counts the others', () => {
    const { h, run } = setup();
    // one user of the group is too large for the model (n > N): the whole group refuses
    const big = rowsOf(h, 20, 30);
    big[3]![0]! += N;
    const failing = new MdmUserGroup('big', big);
    const r = run([new MdmUserGroup('g0', rowsOf(h, 0, 10)), new MdmUserGroup('g1', rowsOf(h, 10, 20)), failing]);
    expect(r.excluded).toEqual([{ client: 'big', round: 1, reason: expect.stringMatching(/a user of n = \d+ exceeds N = 30/) }]);
    expect(r.failures[0]).toMatchObject({ kind: 'refused', excluded: true });
    expect(r.history.map((x) => [x.accepted, x.users])).toEqual([
      [2, 20],
      [2, 20],
    ]);
    expect(r.traffic.users).toBe(40);
  });

  test('a reply of a kind that is not a sum over users may not stand for several', () => {
    const REQ = defineMessage('toy/ask', record({}));
    const REP = defineMessage('toy/value', record({ values: f64Array() }));
    const protocol = defineProtocol('toy', [[REQ, REP]]);
    expect(protocol.additive).toBeUndefined();
    expect(() => defineProtocol('toy', [[REQ, REP]], { additive: [REQ] })).toThrow(InvalidParameterError);
    class Server implements ServerRole<Float64Array, number> {
      readonly protocol = protocol;
      done = false;
      total = 0;
      configure(ctx: RoundContext): Map<string, Message> {
        return new Map(ctx.clients.map((id) => [id, REQ.create('server', ctx.round, {})]));
      }
      accept(reply: Message): Float64Array {
        return (reply.payload as { values: Float64Array }).values;
      }
      aggregate(_ctx: RoundContext, accepted: ReadonlyMap<string, Float64Array>): void {
        for (const v of accepted.values()) this.total += v[0]!;
        this.done = true;
      }
      result(): number {
        return this.total;
      }
    }
    const client = (id: string, users: number): ClientRole => ({ id, protocol, users, respond: (m) => REP.create(id, m.round, { values: [1] }, users) });
    const r = runFederationSync(new Server(), [client('a', 1), client('b', 3)]);
    expect(r.model).toBe(1);
    expect(r.excluded[0]).toMatchObject({ client: 'b', reason: expect.stringMatching(/toy\/value replies are not sums over users/) });
  });
});

describe('rules that count clients count users', () => {
  test('minClients and minReplies count the users groups stand for', () => {
    const h = users(12, 9);
    const model = fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 1 }).model;
    const run = (policy: { minClients?: number; minReplies?: number }) => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds: 1, init: model, seed: 1 });
      const groups = [new MdmUserGroup('a', rowsOf(h, 0, 5)), new MdmUserGroup('b', rowsOf(h, 5, 12))];
      try {
        return runFederationSync(server, groups, policy);
      } finally {
        server.dispose();
        for (const g of groups) g.dispose();
      }
    };
    expect(run({ minClients: 12, minReplies: 12 }).history[0]).toMatchObject({ accepted: 2, users: 12 });
    expect(() => run({ minClients: 13 })).toThrow(/12 users \(in 2 clients\) available, fewer than the 13 required/);
    expect(() => run({ minReplies: 13 })).toThrow(FederationError);
  });

  test('K against the users, and a per-round cohort of users cannot split a group', () => {
    const h = users(12, 9);
    const groups = () => [new MdmUserGroup('a', rowsOf(h, 0, 5)), new MdmUserGroup('b', rowsOf(h, 5, 12))];
    // K = 3 with 2 clients standing for 12 users is fine
    const server = new MdmServer({ nComponents: 3, nCategories: C, maxCount: N, rounds: 1, seed: 1 });
    expect(runFederationSync(server, groups()).model.nComponents).toBe(3);
    server.dispose();
    const sampled = new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds: 1, cohort: 6, seed: 1 });
    expect(() => runFederationSync(sampled, groups())).toThrow(/initCohort = 6 of the 12 users cannot be drawn/);
    sampled.dispose();
    expect(() => fitMdm(h, { nComponents: K, maxCount: N, rounds: 1, cohort: 6, groups: 2 })).toThrow(InvalidParameterError);
  });

  test('under privacy, minExactClients counts the users of an exact release', () => {
    const h = users(10, 4);
    const model = fitMdm(h, { nComponents: 1, rounds: 0, maxCount: N, seed: 1 }).model;
    const params = { nComponents: 1, nCategories: C, maxCount: N, tau: model.tau, alpha: model.alpha, pi: model.pi };
    const evaluate = message('mdm/evaluate', 'server', 1, { models: [params] });
    const release = (group: MdmUserGroup) => {
      const aggregator = new MdmAggregator({ noiseMultiplier: 1, exactEvaluation: true, seed: 1 });
      try {
        aggregator.begin(evaluate);
        aggregator.add(group.respond(evaluate));
        return aggregator.release();
      } finally {
        aggregator.dispose();
        group.dispose();
      }
    };
    expect((release(new MdmUserGroup('ten', rowsOf(h, 0, 10))).payload as { clients: number }).clients).toBe(10);
    expect(() => release(new MdmUserGroup('nine', rowsOf(h, 0, 9)))).toThrow(/at least 10 clients under privacy; this one would hold 9/);
  });
});

describe('the envelope carries the users a reply stands for', () => {
  test('both encodings keep it; absent means one user and stays absent; anything but an integer in [1, 2^24] is refused', () => {
    const m = message('mdm/stats', 'g', 3, { omega: new Float64Array([1, 2]) }, 7);
    for (const encoding of ['json', 'binary'] as const) {
      expect(decodeMessage(encodeMessage(m, encoding)).users).toBe(7);
      expect('users' in decodeMessage(encodeMessage(message('k', 'a', 1, {}), encoding))).toBe(false);
      for (const bad of [0, -1, 1.5, '2', 2 ** 24 + 1, null]) {
        expect(() => decodeMessage(encodeMessage({ ...m, users: bad } as never, encoding))).toThrow(InvalidMessageError);
      }
    }
  });
});

describe('MdmUserGroup input', () => {
  test('bad histograms, sizes and seeds are typed errors naming the user', () => {
    expect(() => new MdmUserGroup('g', [[1, 2, 3], [0, 0, 0]])).toThrow(/user 1: its histogram is empty/);
    expect(() => new MdmUserGroup('g', [[1, 2.5, 3]])).toThrow(InvalidDataError);
    expect(() => new MdmUserGroup('g', [[1, 2, 3]], { sizes: [5] })).toThrow(/sums to 6 but its size n is 5/);
    expect(() => new MdmUserGroup('g', [[1, 2, 3]], { seeds: [1, 2] })).toThrow(/2 seeds for 1 users/);
    expect(() => new MdmUserGroup('g', [[1], [2]])).toThrow(/at least 2/);
    expect(() => new MdmUserGroup('', [[1, 2]])).toThrow(InvalidParameterError);
    expect(() => new MdmUserGroup('g', null as never)).toThrow(InvalidDataError);
    const g = new MdmUserGroup('g', [[1, 2, 3], [4, 0, 1]]);
    expect(g.users).toBe(2);
    expect(() => g.respond({ kind: 'nope' } as never)).toThrow(InvalidMessageError);
    g.dispose();
  });
});

describe("the aggregator's bounds", () => {
  test('every size at once (running sums) gives the digamma differences and log-likelihood floors of each size alone', () => {
    const c = 7;
    const nMax = 60;
    const alpha = [Array.from({ length: c }, (_, j) => 0.05 + 0.3 * j), Array.from({ length: c }, (_, j) => 3 / (j + 1))];
    const pi = [Array.from({ length: nMax }, (_, n) => (n % 3 === 0 ? 0 : 1)), Array.from({ length: nMax }, () => 1)].map((row) => row.map((x) => x / row.reduce((a, b) => a + b, 0)));
    const model = new DirichletMultinomialMixture({ tau: [0.4, 0.6], alpha, pi });
    const bounds = new StatsBounds(model);
    let worst = 0;
    for (let n = 1; n <= nMax; n++) {
      const b = bounds.at(n);
      const a0 = alpha.map((row) => row.reduce((x, y) => x + y, 0));
      const u = digammaDiff(alpha.flat(), n) as Float64Array;
      const v = digammaDiff(a0, n) as Float64Array;
      u.forEach((x, j) => (worst = Math.max(worst, Math.abs(b.u[j]! - x) / x)));
      v.forEach((x, r) => (worst = Math.max(worst, Math.abs(b.v[r]! - x) / x)));
      // the floor as the bound's formula states it, ln(alpha / n) per category
      let floor = -Infinity;
      for (let r = 0; r < 2; r++) {
        if (pi[r]![n - 1] === 0) continue;
        let l = Math.log(model.tau[r]!) + Math.log(pi[r]![n - 1]!) + lgamma(n + 1) - (lnRisingFactorial(a0[r]!, n) as number);
        for (const a of alpha[r]!) l += Math.min(0, Math.log(a / n));
        floor = Math.max(floor, l);
      }
      worst = Math.max(worst, Math.abs(b.logLikelihood - floor) / Math.abs(floor));
    }
    expect(worst).toBeLessThan(1e-13);
  });
});

describe("the aggregator's bounds are kept per model", () => {
  const model = () => {
    const h = users(30, 7);
    return { h, init: fitMdm(h, { nComponents: K, rounds: 0, maxCount: N, seed: 1 }).model };
  };
  /** the bounds of sizes 1..N as one array, to compare bit for bit */
  const allBounds = (b: StatsBounds) => Float64Array.from({ length: N }, (_, i) => i + 1).reduce<number[]>((acc, n) => {
    const x = b.at(n);
    return acc.concat(Array.from(x.u), Array.from(x.v), [x.logLikelihood, x.supported ? 1 : 0]);
  }, []);
  /** a model like `m` with `edit` applied to a copy of its parameters */
  const edited = (m: DirichletMultinomialMixture, edit: (p: { tau: number[]; alpha: number[][]; pi: number[][] }) => void) => {
    const rows = (v: Float64Array, w: number) => Array.from({ length: K }, (_, r) => Array.from(v.subarray(r * w, (r + 1) * w)));
    const p = { tau: Array.from(m.tau), alpha: rows(m.alpha, C), pi: rows(m.pi, N) };
    edit(p);
    return new DirichletMultinomialMixture(p);
  };

  test('the same parameters (another object) reuse the bounds; one changed bit, or a model changed in place, makes new ones', () => {
    const { init } = model();
    const b = StatsBounds.of(init);
    const again = StatsBounds.of(DirichletMultinomialMixture.fromJSON(init.toJSON()));
    expect(again).toBe(b);
    const changes = [
      edited(init, (p) => (p.alpha[1]![3]! *= 1 + 2 ** -52)),
      edited(init, (p) => (p.tau = [0.9, 0.1])),
      // half of every component's P(n = 10) moved to n = 11
      edited(init, (p) => p.pi.forEach((row) => ([row[9], row[10]] = [row[9]! / 2, row[10]! + row[9]! / 2]))),
    ];
    for (const changed of changes) {
      const c = StatsBounds.of(changed);
      expect(c).not.toBe(b);
      // and they are the changed model's own bounds, not the cached ones
      expect(allBounds(c)).toEqual(allBounds(new StatsBounds(changed)));
      expect(allBounds(c)).not.toEqual(allBounds(b));
    }
    // a model's arrays written after its bounds were made: the kept copy no longer matches it
    const mutable = DirichletMultinomialMixture.fromJSON(init.toJSON());
    const kept = StatsBounds.of(mutable);
    mutable.alpha[0] = 2 * mutable.alpha[0]!;
    const after = StatsBounds.of(mutable);
    expect(after).not.toBe(kept);
    expect(allBounds(after)).toEqual(allBounds(new StatsBounds(mutable)));
    // the bounds computed from the kept copy are the original model's, bit for bit
    expect(allBounds(kept)).toEqual(allBounds(new StatsBounds(init)));
  });

  test('a round gives the same bits whether its bounds were kept or computed, and the kept round computes none', () => {
    const { h, init } = model();
    const run = () => {
      const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N, rounds: 1, init, seed: 1 });
      try {
        const r = runFederationSync(server, [new MdmUserGroup('g0', rowsOf(h, 0, 12)), new MdmUserGroup('g1', rowsOf(h, 12, 30)), new MdmClient('one', rowsOf(h, 29, 30)[0]!)]);
        return { ...r, rounds: server.history };
      } finally {
        server.dispose();
      }
    };
    const compute = vi.spyOn(StatsBounds.prototype as unknown as { compute: () => void }, 'compute');
    try {
      StatsBounds.of(edited(init, (p) => (p.alpha[0]![0]! *= 2))); // another model's bounds kept: the first run computes
      const fresh = run();
      expect(compute).toHaveBeenCalled();
      compute.mockClear();
      const kept = run();
      expect(compute).not.toHaveBeenCalled();
      expect(kept.excluded).toEqual([]);
      expect(fresh.excluded).toEqual([]);
      expect(same(kept.model, fresh.model)).toBe(0);
      expect(kept.rounds.map((r) => r.meanLogLikelihood)).toEqual(fresh.rounds.map((r) => r.meanLogLikelihood));
      expect(fresh.rounds[0]!.meanLogLikelihood).toBeLessThan(0);
    } finally {
      compute.mockRestore();
    }
  });

  test('a tampered u or v is refused just above its bound and accepted at it, with bounds kept or computed', () => {
    const { h, init } = model();
    const request = MDM_PROTOCOL.exchanges.get('mdm/model')!.request.read(message('mdm/model', 'server', 1, { model: paramsOf(init), logLikelihood: true }));
    const group = new MdmUserGroup('g', rowsOf(h, 0, 30));
    const honest = group.respond(request);
    const p = honest.payload as { omega: Float64Array; e: Float64Array; u: Float64Array; v: Float64Array; logLikelihood: number; unsupported: number };
    // the bounds the aggregator allows: sum over sizes n of E[k, n] x the bound of size n
    const fresh = new StatsBounds(init);
    const uBound = new Float64Array(K * C);
    const vBound = new Float64Array(K);
    for (let n = 1; n <= N; n++) {
      const b = fresh.at(n);
      for (let r = 0; r < K; r++) {
        const w = p.e[r * N + n - 1]!;
        vBound[r]! += w * b.v[r]!;
        for (let j = r * C; j < (r + 1) * C; j++) uBound[j]! += w * b.u[j]!;
      }
    }
    const j = p.u.findIndex((x) => x > 0);
    const withField = (name: 'u' | 'v', i: number, x: number) => {
      const copy = Float64Array.from(p[name]);
      copy[i] = x;
      return message(honest.kind, honest.from, honest.round, { ...p, [name]: copy }, honest.users);
    };
    for (const cache of ['computed', 'kept'] as const) {
      if (cache === 'computed') StatsBounds.of(edited(init, (q) => (q.alpha[0]![0]! *= 2)));
      else StatsBounds.of(init);
      const aggregator = new MdmAggregator();
      aggregator.begin(request);
      aggregator.add(honest);
      aggregator.add(withField('u', j, uBound[j]!));
      aggregator.add(withField('v', 1, vBound[1]!));
      expect(() => aggregator.add(withField('u', j, uBound[j]! * (1 + 1e-8)))).toThrow(/u is above the bound of its sizes|above .* the most its users' sizes allow/);
      expect(() => aggregator.add(withField('v', 1, vBound[1]! * (1 + 1e-8)))).toThrow(/v\[1\] is .* above/);
      expect((aggregator.release().payload as { clients: number }).clients).toBe(90);
      aggregator.dispose();
    }
    group.dispose();
  });
});
