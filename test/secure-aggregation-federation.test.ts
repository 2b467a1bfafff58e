/**
 * Secure aggregation in a federation (issue 26): the server's accept() gets
 * one reply, the sum of the survivors' replies within the quantization bound,
 * with 0%, 10% and 30% of the clients dropping at each stage; below the
 * threshold the run fails typed; a round whose replies are not sums is
 * refused; DEM secure gives the plain model.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DirichletMultinomialMixture, FedmixError, init, InvalidMessageError, InvalidParameterError, Matrix, partition, SecureAggregationError } from '../ts/index.js';
import { labelledFromCsv } from '../ts/experiments/index.js';
import { DemClient } from '../ts/federated/dem/client.js';
import { DemServer } from '../ts/federated/dem/server.js';
import { DEM_PROTOCOL } from '../ts/federated/dem/messages.js';
import { MdmClient, MdmServer } from '../ts/federated/mdm/index.js';
import { FedAvgClient, FedAvgServer, FedProxServer } from '../ts/federated/fedavg/index.js';
import { defineMessage, f64Array, record, wholeNumber } from '../ts/federated/messages/schema.js';
import type { Message } from '../ts/federated/messages/envelope.js';
import { decodeMessage, encodeMessage } from '../ts/federated/messages/codec.js';
import { runFederation, runFederationSync } from '../ts/federated/runtime/run.js';
import { distributedEM } from '../ts/federated/dem/run.js';
import { defineProtocol, type ClientRole, type RoundContext, type ServerRole } from '../ts/federated/runtime/roles.js';
import { sumLayout } from '../ts/federated/secure-aggregation/layout.js';
import { secureAggregationTesting } from '../ts/federated/secure-aggregation/client.js';
import { crashDrillFor } from '../ts/federated/secure-aggregation/crash-drill.js';
import { fixedPoint, quantize } from '../ts/privacy/secure-aggregation/fixed-point.js';
import { applyMask } from '../ts/privacy/secure-aggregation/masks.js';
import { shamirCombine } from '../ts/privacy/secure-aggregation/shamir.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import type { Exchange, ExchangeOptions, Received, Transport } from '../ts/federated/transport/transport.js';
import { accuracyOf, blobs, xorshift32 } from './helpers.js';

beforeAll(async () => {
  await init();
});

// a protocol whose one reply is a vector that sums
const ASK = defineMessage('test/ask', record({ length: wholeNumber(1) }));
const VECTOR = defineMessage('test/vector', record({ values: f64Array() }));
const SUM_PROTOCOL = defineProtocol('sum', [[ASK, VECTOR]], { layouts: [sumLayout(VECTOR, (r) => [{ name: 'values', length: (r.payload as { length: number }).length }])] });

class SumServer implements ServerRole<{ values: Float64Array; users: number }, Float64Array | undefined> {
  readonly protocol = SUM_PROTOCOL;
  done = false;
  sum: Float64Array | undefined;
  replies = 0;
  constructor(readonly length: number) {}
  configure(ctx: RoundContext) {
    const m = ASK.create('server', ctx.round, { length: this.length });
    return new Map(ctx.clients.map((id) => [id, m as Message]));
  }
  accept(reply: Message) {
    const r = VECTOR.read(reply);
    return { values: r.payload.values, users: r.users ?? 1 };
  }
  aggregate(_ctx: RoundContext, accepted: ReadonlyMap<string, { values: Float64Array }>) {
    this.replies = accepted.size;
    this.sum = [...accepted.values()][0]!.values;
    this.done = true;
    return undefined;
  }
  result() {
    return this.sum;
  }
}

function vectorOf(i: number, length: number): Float64Array {
  return Float64Array.from({ length }, (_, j) => Math.sin(i * 7.1 + j) * 1000 + i);
}

function sumClient(id: string, values: Float64Array): ClientRole {
  return { id, protocol: SUM_PROTOCOL, respond: (m) => VECTOR.create(id, m.round, { values }) };
}

/** An in-process transport where the given clients go silent at one stage of the secure round (a dropout). */
class Dropping implements Transport {
  readonly name = 'dropping';
  constructor(
    private readonly inner: InProcessTransport,
    private readonly stage: string,
    private readonly gone: ReadonlySet<string>,
  ) {}
  available(min: number, timeoutMs: number, excluded?: ReadonlySet<string>) {
    void min, timeoutMs, excluded;
    return this.inner.available();
  }
  async exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    const ex = await this.inner.exchange(round, messages, options);
    const kind = messages.values().next().value?.kind;
    if (kind === `secure-aggregation/${this.stage}`) {
      for (const id of this.gone) {
        if (!messages.has(id)) continue;
        ex.received.delete(id);
        ex.missing.set(id, { kind: 'dropout', reason: `${id} left` });
      }
    }
    return ex;
  }
}

describe('the secure sum in process', () => {
  const n = 10;
  const length = 40;
  const vectors = Array.from({ length: n }, (_, i) => vectorOf(i, length));
  for (const stage of ['advertise', 'share', 'mask', 'consistency', 'unmask']) {
    for (const share of stage === 'consistency' ? [0.3] : [0, 0.1, 0.3]) {
      it(`${share * 100}% dropping at ${stage}: the sum of the survivors within the bound`, async () => {
        const gone = new Set(Array.from({ length: Math.round(share * n) }, (_, i) => `c${(i * 3 + 1) % n}`));
        const clients = vectors.map((x, i) => sumClient(`c${i}`, x));
        const server = new SumServer(length);
        const r = await runFederation(server, new Dropping(new InProcessTransport(clients), stage, gone), { secureAggregation: { neighbours: 9, threshold: 5 } });
        const rec = r.history[0]!.secure!;
        // a client dropping at consistency or unmask already sent its masked input: it is in the sum
        const inSum = stage === 'unmask' || stage === 'consistency' ? vectors.map((_, i) => i) : vectors.map((_, i) => i).filter((i) => !gone.has(`c${i}`));
        expect(rec.survivors).toBe(inSum.length);
        expect(rec.dropped[stage as 'mask']).toBe(gone.size);
        expect(r.failures.map((f) => f.client).sort()).toEqual([...gone].sort());
        expect(r.failures.every((f) => f.kind === 'dropout' && !f.excluded)).toBe(true);
        expect(server.replies).toBe(1);
        const plain = new Float64Array(length);
        for (const i of inSum) for (let j = 0; j < length; j++) plain[j] += vectors[i]![j]!;
        let worst = 0;
        for (let j = 0; j < length; j++) worst = Math.max(worst, Math.abs(server.sum![j]! - plain[j]!));
        expect(worst).toBeLessThanOrEqual(rec.bound);
        // clip 2^36 for 10 clients: scale 2^23, plus the half ulp of reading a sum near 2^63 as a double
        expect(rec.bound).toBeLessThan(1e-4);
      });
    }
  }

  it('below the threshold the run fails with a typed error, not a wrong sum', async () => {
    const clients = vectors.map((x, i) => sumClient(`c${i}`, x));
    const gone = new Set(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    const server = new SumServer(length);
    const run = runFederation(server, new Dropping(new InProcessTransport(clients), 'mask', gone), { secureAggregation: { neighbours: 9, threshold: 5 } });
    await expect(run).rejects.toThrow(/threshold/);
    await run.catch((e) => expect(e).toBeInstanceOf(FedmixError));
    expect(server.sum).toBeUndefined();
  });

  it('a value outside the clipping range: that client refuses and is excluded, the others are summed', async () => {
    const big = vectors.map((x) => x.slice());
    big[2]![0] = 1e9;
    const clients = big.map((x, i) => sumClient(`c${i}`, x));
    const server = new SumServer(length);
    const r = await runFederation(server, clients, { secureAggregation: { clip: 1e6 } });
    expect(r.excluded.map((e) => e.client)).toEqual(['c2']);
    expect(r.failures[0]!.kind).toBe('refused');
    expect(r.history[0]!.secure!.survivors).toBe(n - 1);
  });

  it('the crash drill (FEDMIX_CRASH_AT_STAGE, run by the processes test) names a stage for the clients it names and for no other; a stage it does not know ends the run typed; naming none of the clients, every client answers every stage', async () => {
    expect(crashDrillFor('mask', 'c1')).toBe('secure-aggregation/mask');
    expect(['c1', 'c4', 'c2', 'c10'].map((id) => crashDrillFor('c1:advertise,c4:unmask', id))).toEqual(['secure-aggregation/advertise', 'secure-aggregation/unmask', undefined, undefined]);
    expect(() => crashDrillFor('c1:masks', 'c2')).toThrow(InvalidParameterError);
    expect(() => crashDrillFor('c1:masks', 'c2')).toThrow(/FEDMIX_CRASH_AT_STAGE="c1:masks": "masks" is not a stage of a secure round \(advertise, share, mask, consistency, unmask\)/);
    const secureRun = (drill: string) => {
      // a client host reads the variable when it is made
      const saved = process.env.FEDMIX_CRASH_AT_STAGE;
      process.env.FEDMIX_CRASH_AT_STAGE = drill;
      try {
        return runFederation(new SumServer(length), new InProcessTransport(vectors.map((x, i) => sumClient(`c${i}`, x))), { secureAggregation: { neighbours: 9, threshold: 5 } });
      } finally {
        if (saved === undefined) delete process.env.FEDMIX_CRASH_AT_STAGE;
        else process.env.FEDMIX_CRASH_AT_STAGE = saved;
      }
    };
    // a typo is loud, at the first stage: not a drill silently undone
    await expect(secureRun('c1:masks')).rejects.toThrow(InvalidParameterError);
    // the other side (unset, as in every other test here): a drill naming none of the run's clients leaves every one answering every stage
    const r = await secureRun('c99:advertise,c99:mask');
    expect(r.history[0]!.secure).toMatchObject({ survivors: n, dropped: { advertise: 0, share: 0, mask: 0, consistency: 0, unmask: 0 } });
    expect(r.failures).toEqual([]);
  });
});

function split(x: Matrix, parts: number): Matrix[] {
  return Array.from({ length: parts }, (_, p) => {
    const idx: number[] = [];
    for (let i = p; i < x.nRows; i += parts) idx.push(i);
    return x.selectRows(idx);
  });
}

describe('distributed EM under secure aggregation', () => {
  const x = blobs(600, 2, 3, 1);
  const parts = split(x, 6);
  const runOnce = async (options: Record<string, unknown>, secure: boolean) => {
    const server = new DemServer({ nComponents: 3, nFeatures: 2, featureRange: [-20, 20], maxRounds: 4, tol: 0, ...options } as never);
    const clients = parts.map((p, i) => new DemClient(`c${i}`, p));
    try {
      return await runFederation(server, clients, secure ? { secureAggregation: {} } : {});
    } finally {
      server.dispose?.();
    }
  };

  for (const covarianceType of ['full', 'tied', 'diag']) {
    it(`${covarianceType}: the secure run gives the plain model`, async () => {
      const plain = await runOnce({ init: 'separated', covarianceType }, false);
      const secure = await runOnce({ init: 'separated', covarianceType }, true);
      expect(secure.history.every((h) => h.secure?.survivors === 6)).toBe(true);
      expect(secure.history[0]!.users).toBe(6);
      const a = plain.model.toJSON() as { means: number[]; weights: number[]; covariances: number[] };
      const b = secure.model.toJSON() as typeof a;
      for (const k of ['means', 'weights', 'covariances'] as const) {
        const pa = Array.from(a[k] as ArrayLike<number>);
        const pb = Array.from(b[k] as ArrayLike<number>);
        pa.forEach((value, i) => expect(Math.abs(pb[i]! - value)).toBeLessThan(1e-6 * Math.max(1, Math.abs(value))));
      }
    });
  }

  describe('raw shuttle, full covariances: a sum a hair short of positive definite', () => {
    // the first rows of shuttle.csv, raw (features up to 1e4, some near-constant within a component), 5 IID clients
    let lines: string[] | undefined;
    const shuttle = (rows: number) => {
      lines ??= readFileSync(new URL('../../shared/datasets/shuttle.csv', import.meta.url), 'utf8').split('\n', 1601);
      const text = lines.slice(0, rows + 1).join('\n');
      const x = labelledFromCsv(text, { label: 'label' }).X;
      return partition.iid(x.nRows, { clients: 5, seed: 7 }).indices.map((r) => x.selectRows(r));
    };
    const fit = async (parts: Matrix[], secure: boolean) => {
      const server = new DemServer({ nComponents: 7, nFeatures: 9, covarianceType: 'full', init: 'separated', seed: 1 });
      const clients = parts.map((p, i) => new DemClient(`c${i}`, p));
      try {
        return secure ? await runFederation(server, clients, { secureAggregation: {} }) : runFederationSync(server, clients);
      } finally {
        server.dispose();
      }
    };
    const flat = (m: { toJSON(): unknown }) => {
      const j = m.toJSON() as Record<'weights' | 'means' | 'covariances', ArrayLike<number>>;
      return (['weights', 'means', 'covariances'] as const).flatMap((k) => Array.from(j[k]));
    };

    it('a component with a near-constant feature gets the smallest ridge that makes it definite; the model is the plain one', async () => {
      const parts = shuttle(200);
      const plain = await fit(parts, false);
      const secure = await fit(parts, true);
      // before: round 1's M-step failed (NumericalError at component 4); the quantization took its covariance below regCovar
      expect(secure.history[0]!.metrics).toEqual({ logLikelihood: expect.any(Number), quantizationRidge: [{ component: 4, ridge: 2.56e-4 }] });
      for (const h of secure.history.slice(1)) expect(Object.keys(h.metrics as object)).toEqual(['logLikelihood']);
      for (const h of plain.history) expect(Object.keys(h.metrics as object)).toEqual(['logLikelihood']);
      const { roundLine } = await import('../ts/cli/federation-log.js');
      expect(roundLine({ ...secure.history[0]!, excluded: [], elapsed: 0 }, 'text', 3)).toContain('quantization ridge 0.000256 on component 4');
      expect(secure.rounds).toBe(plain.rounds);
      // measured: 2.3e-8
      const a = flat(plain.model);
      const b = flat(secure.model);
      a.forEach((value, i) => expect(Math.abs(b[i]! - value)).toBeLessThan(1e-6 * Math.max(1, Math.abs(value))));
    });

    it('a component whose count sums to 0 is taken as empty (its moments are quantization noise), shown in the metrics', async () => {
      const secure = await fit(shuttle(1600), true);
      expect(secure.history[0]!.metrics).toMatchObject({ quantizationRidge: [{ component: 4, ridge: 2.56e-4 }], quantizationEmpty: [2] });
      const { roundLine } = await import('../ts/cli/federation-log.js');
      expect(roundLine({ ...secure.history[0]!, excluded: [], elapsed: 0 }, 'text', 3)).toContain('component 2 summed to no rows (taken as empty)');
      // the plain run's component 2 follows responsibilities below the bound (3e-5) that the sum cannot resolve: the models differ
      expect(Number.isFinite((secure.history.at(-1)!.metrics as { logLikelihood: number }).logLikelihood)).toBe(true);
    });
  });

  it('the synchronous runs refuse secure aggregation, typed (its WebCrypto work is asynchronous)', () => {
    const server = new DemServer({ nComponents: 3, nFeatures: 2, featureRange: [-20, 20], init: 'separated', maxRounds: 1 });
    try {
      expect(() => runFederationSync(server, parts.map((p, i) => new DemClient(`c${i}`, p)), { secureAggregation: {} })).toThrow(/secure aggregation runs only under runFederation/);
    } finally {
      server.dispose();
    }
    expect(() => distributedEM(parts, { nComponents: 3, secureAggregation: {} } as never)).toThrow(InvalidParameterError);
  });

  it('k-FED initialization sends local clusters, which are not sums: the run refuses it, typed', async () => {
    await expect(runOnce({ init: 'kfed' }, true)).rejects.toThrow(/not sums; secure aggregation cannot run this round/);
  });
});

/** An in-process transport that shows each reply to `tamper` as it arrives (its wire bytes and the message): what it returns arrives instead (undefined: nothing). */
class Tampering implements Transport {
  readonly name = 'tampering';
  /** the server's last requests */
  sent: ReadonlyMap<string, Message> = new Map();
  constructor(
    private readonly inner: InProcessTransport,
    private readonly tamper: (id: string, m: Message, bytes: Uint8Array) => Message | undefined,
  ) {}
  available() {
    return this.inner.available();
  }
  async exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    this.sent = messages;
    const ex = await this.inner.exchange(round, messages, options);
    for (const [id, list] of ex.received) {
      const out: Received[] = [];
      for (const r of list) {
        const bytes = r instanceof Uint8Array ? r : encodeMessage(r.message, 'binary');
        const m = decodeMessage(bytes);
        const t = this.tamper(id, m, bytes);
        if (t === m) out.push(r);
        else if (t) out.push(encodeMessage(t, 'binary'));
      }
      ex.received.set(id, out);
    }
    return ex;
  }
}

const withPayload = (m: Message, change: Record<string, unknown>): Message => ({ ...m, payload: { ...(m.payload as object), ...change } });

describe('malicious clients', () => {
  const n = 10;
  const length = 40;
  const vectors = Array.from({ length: n }, (_, i) => vectorOf(i, length));
  const policy = { secureAggregation: { neighbours: 9, threshold: 5 } };
  const run = (tamper: (id: string, m: Message) => Message | undefined) => {
    const server = new SumServer(length);
    const clients = vectors.map((x, i) => sumClient(`c${i}`, x));
    return { server, run: runFederation(server, new Tampering(new InProcessTransport(clients), tamper), policy) };
  };
  const expectSumOf = (server: SumServer, bound: number, inSum: number[]) => {
    let worst = 0;
    for (let j = 0; j < length; j++) worst = Math.max(worst, Math.abs(server.sum![j]! - inSum.reduce((s, i) => s + vectors[i]![j]!, 0)));
    expect(worst).toBeLessThanOrEqual(bound);
  };
  const all = vectors.map((_, i) => i);

  it('a masked vector of the wrong length: that client is excluded, its masks removed, the others summed', async () => {
    const { server, run: r } = run((id, m) => (id === 'c3' && m.kind === 'secure-aggregation/masked' ? withPayload(m, { masked: (m.payload as { masked: Uint8Array }).masked.slice(8) }) : m));
    const result = await r;
    const rec = result.history[0]!.secure!;
    expect(result.excluded.map((e) => e.client)).toEqual(['c3']);
    expect(result.failures[0]).toMatchObject({ client: 'c3', kind: 'invalid', excluded: true });
    expect(rec).toMatchObject({ survivors: n - 1, dropped: { mask: 1 } });
    expectSumOf(server, rec.bound, all.filter((i) => i !== 3));
  });

  const garbageFrom = (from: string, to: (id: string) => boolean) => {
    const next = xorshift32(11);
    return (id: string, m: Message) => {
      if (id !== from || m.kind !== 'secure-aggregation/shares') return m;
      const p = m.payload as { shares: { to: string; share: Uint8Array }[] };
      return withPayload(m, { shares: p.shares.map((s) => ({ to: s.to, share: to(s.to) ? Uint8Array.from(s.share, () => next() & 255) : s.share })) });
    };
  };

  it('garbage share ciphertexts to some neighbours: the sender is excluded (they refuse them), its masks removed with the shares the others hold, the rest summed', async () => {
    const { server, run: r } = run(garbageFrom('c5', (to) => to === 'c0' || to === 'c1'));
    const result = await r;
    const rec = result.history[0]!.secure!;
    expect(result.excluded.map((e) => e.client)).toEqual(['c5']);
    expect(result.failures[0]!.reason).toMatch(/could not decrypt/);
    expect(rec).toMatchObject({ survivors: n - 1, excluded: 1 });
    expectSumOf(server, rec.bound, all.filter((i) => i !== 5));
  });

  it('garbage share ciphertexts to every neighbour: its masks cannot be removed, a typed error, no sum', async () => {
    const { server, run: r } = run(garbageFrom('c5', () => true));
    await expect(r).rejects.toBeInstanceOf(SecureAggregationError);
    expect(server.sum).toBeUndefined();
  });

  // a share that decrypts, is a field element, and is wrong: only reconstruction can tell
  const wrongShares = (m: Message): Message => {
    const p = m.payload as { shares: { of: string; share: Uint8Array }[] };
    return withPayload(m, { shares: p.shares.map((s) => ({ of: s.of, share: s.share.map((b, i) => (i === 0 ? b ^ 1 : b)) })) });
  };

  it('wrong but authentic unmasking shares: ruled out, the secrets rebuilt from the others, the full sum', async () => {
    const { server, run: r } = run((id, m) => (id === 'c7' && m.kind === 'secure-aggregation/unmasked' ? wrongShares(m) : m));
    const result = await r;
    const rec = result.history[0]!.secure!;
    expect(rec).toMatchObject({ survivors: n, ruledOut: 1 });
    expect(result.excluded.map((e) => e.client)).toEqual(['c7']);
    expectSumOf(server, rec.bound, all);
  });

  it('too many wrong shares to rebuild a secret: a typed error, no sum', async () => {
    const bad = new Set(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
    const { server, run: r } = run((id, m) => (bad.has(id) && m.kind === 'secure-aggregation/unmasked' ? wrongShares(m) : m));
    await expect(r).rejects.toBeInstanceOf(SecureAggregationError);
    expect(server.sum).toBeUndefined();
  });

  it("under onInvalid 'fail' a wrong-length masked vector ends the run, typed", async () => {
    const server = new SumServer(length);
    const clients = vectors.map((x, i) => sumClient(`c${i}`, x));
    const tamper = (id: string, m: Message) => (id === 'c3' && m.kind === 'secure-aggregation/masked' ? withPayload(m, { masked: (m.payload as { masked: Uint8Array }).masked.slice(8) }) : m);
    await expect(runFederation(server, new Tampering(new InProcessTransport(clients), tamper), { ...policy, onInvalid: 'fail' })).rejects.toBeInstanceOf(InvalidMessageError);
  });
});

/** A transport through which the server lies: `rewrite` changes (or adds) what it sends each stage; every client message it saw is kept by `${id} ${kind}`. */
class Lying implements Transport {
  readonly name = 'lying';
  readonly seen = new Map<string, Message>();
  constructor(
    private readonly inner: InProcessTransport,
    private readonly rewrite: (messages: ReadonlyMap<string, Message>, seen: ReadonlyMap<string, Message>) => ReadonlyMap<string, Message>,
  ) {}
  available() {
    return this.inner.available();
  }
  async exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
    const ex = await this.inner.exchange(round, this.rewrite(messages, this.seen), options);
    for (const [id, list] of ex.received) {
      for (const r of list) {
        const m = decodeMessage(r instanceof Uint8Array ? r : encodeMessage(r.message, 'binary'));
        this.seen.set(`${id} ${m.kind}`, m);
      }
    }
    return ex;
  }
}

describe('a server that lies about dropouts (the consistency check)', () => {
  const length = 12;

  it("telling c3 and c4 that c0 dropped while c1 and c2 unmask it as a survivor: c3 and c4 refuse, no s share of c0 leaves, the sum is the honest one", async () => {
    const n = 5;
    const vectors = Array.from({ length: n }, (_, i) => vectorOf(i, length));
    const liedTo = new Set(['c3', 'c4']);
    const withoutC0 = ['c1', 'c2', 'c3', 'c4'];
    const transport = new Lying(new InProcessTransport(vectors.map((x, i) => sumClient(`c${i}`, x))), (messages, seen) => {
      const kind = messages.values().next().value!.kind;
      if (kind !== 'secure-aggregation/consistency' && kind !== 'secure-aggregation/unmask') return messages;
      const out = new Map(messages);
      const template = messages.values().next().value!;
      for (const id of liedTo) {
        if (kind === 'secure-aggregation/consistency') out.set(id, withPayload(template, { survivors: withoutC0 }));
        else {
          // c0 "dropped", with the signatures of the clients told the same (the honest runtime itself no longer asks them)
          const signatures = [...liedTo].filter((v) => v !== id).map((v) => ({ of: v, signature: (seen.get(`${v} secure-aggregation/signature`)!.payload as { signature: Uint8Array }).signature }));
          out.set(id, withPayload(template, { survivors: withoutC0, dropped: ['c0'], signatures }));
        }
      }
      return out;
    });
    const server = new SumServer(length);
    const r = await runFederation(server, transport, { secureAggregation: { neighbours: 4, threshold: 2 } });
    for (const id of liedTo) {
      const answer = transport.seen.get(`${id} fedmix/refusal`);
      expect(answer, id).toBeDefined();
      expect((answer!.payload as { reason: string }).reason).toMatch(/1 valid signatures of its neighbours .* fewer than the threshold 2/);
      expect(transport.seen.has(`${id} secure-aggregation/unmasked`)).toBe(false);
    }
    // the runtime's own check caught the signatures over the other set; their inputs are in the honest sum
    const rec = r.history[0]!.secure!;
    expect(rec.forged).toBe(2);
    expect(rec.survivors).toBe(n);
    const plain = new Float64Array(length);
    for (const x of vectors) for (let j = 0; j < length; j++) plain[j] += x[j]!;
    for (let j = 0; j < length; j++) expect(Math.abs(server.sum![j]! - plain[j]!)).toBeLessThanOrEqual(rec.bound);
  });

  it('a forwarded signature forged, or signatures withheld: those clients refuse to unmask and the round completes without them; no signature scheme named: every client refuses', async () => {
    const n = 6;
    const vectors = Array.from({ length: n }, (_, i) => vectorOf(i, length));
    const clients = () => new InProcessTransport(vectors.map((x, i) => sumClient(`c${i}`, x)));
    const transport = new Lying(clients(), (messages) => {
      if (messages.values().next().value!.kind !== 'secure-aggregation/unmask') return messages;
      const out = new Map(messages);
      const m1 = messages.get('c1')!;
      const signatures = (m1.payload as { signatures: { of: string; signature: Uint8Array }[] }).signatures.map((s, i) => (i === 0 ? { of: s.of, signature: s.signature.map((b, j) => (j === 0 ? b ^ 1 : b)) } : s));
      out.set('c1', withPayload(m1, { signatures }));
      out.set('c2', withPayload(messages.get('c2')!, { signatures: [] }));
      return out;
    });
    const server = new SumServer(length);
    const r = await runFederation(server, transport, { secureAggregation: {} });
    expect(r.failures.map((f) => [f.client, f.kind])).toEqual([['c1', 'refused'], ['c2', 'refused']]);
    expect((transport.seen.get('c1 fedmix/refusal')!.payload as { reason: string }).reason).toMatch(/signature of the survivor set does not verify/);
    expect((transport.seen.get('c2 fedmix/refusal')!.payload as { reason: string }).reason).toMatch(/0 valid signatures/);
    expect(r.history[0]!.secure!.survivors).toBe(n);
    // a server that leaves the signature scheme out (to switch the check off) is refused by every client
    const downgrade = new Lying(clients(), (messages) => new Map([...messages].map(([id, m]) => {
      if (m.kind !== 'secure-aggregation/advertise') return [id, m];
      const { signature: _, ...rest } = m.payload as Record<string, unknown>;
      return [id, { ...m, payload: rest }];
    })));
    await expect(runFederation(new SumServer(length), downgrade, { secureAggregation: {} })).rejects.toBeInstanceOf(SecureAggregationError);
    expect([...downgrade.seen.keys()].filter((k) => k.endsWith('fedmix/refusal'))).toHaveLength(n);
  });
});

describe("the server's transcript", () => {
  const ABALONE = readFileSync(new URL('../../shared/datasets/abalone.csv', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(',').slice(1, 8).map(Number));
  const ids = ['c0', 'c1', 'c2', 'c3', 'c4'];
  const CHANGED = 'c2';
  const dataOf = (id: string, changed: boolean) => Matrix.fromRows(ABALONE.slice(200 * ids.indexOf(id) + (changed && id === CHANGED ? 2000 : 0)).slice(0, 200));
  const DEM = { nComponents: 3, nFeatures: 7, covarianceType: 'diag', init: 'separated', tol: 0, maxRounds: 1 } as const;

  /** A seeded stream per client id (tests only: every draw of its secure rounds). */
  const seeded = (id: string) => {
    const next = xorshift32(1 + [...id].reduce((h, c) => h * 31 + c.charCodeAt(0), 7));
    return (bytes: Uint8Array) => {
      for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 255;
    };
  };

  /** One secure round of DEM: every reply the server received, by client and kind, as wire bytes and decoded; the round's request as advertised. */
  async function transcript(changed: boolean) {
    const received = new Map<string, { bytes: Uint8Array; message: Message }>();
    let request: Message | undefined;
    const transport: Tampering = new Tampering(new InProcessTransport(ids.map((id) => new DemClient(id, dataOf(id, changed)))), (id, m, bytes) => {
      if (m.kind === 'secure-aggregation/keys') request ??= (transport.sent.get(id)!.payload as { request: Message }).request;
      received.set(`${id} ${m.kind}`, { bytes: bytes.slice(), message: m });
      return m;
    });
    const server = new DemServer(DEM);
    secureAggregationTesting.randomOf = seeded;
    try {
      const r = await runFederation(server, transport, { run: 'transcript-test', secureAggregation: {} });
      return { r, received, request: DEM_PROTOCOL.exchanges.get(request!.kind)!.request.read(request!) };
    } finally {
      secureAggregationTesting.randomOf = undefined;
      server.dispose();
    }
  }

  it("rerun with one client's data changed: every other client's messages are byte-identical, and none holds an unmasked contribution", async () => {
    const a = await transcript(false);
    const b = await transcript(true);
    const rec = a.r.history[0]!.secure!;
    expect(rec.survivors).toBe(5);
    expect([...a.received.keys()].sort()).toEqual([...b.received.keys()].sort());
    expect(a.received.size).toBe(5 * ids.length);
    for (const [key, { bytes }] of a.received) {
      const same = Buffer.from(bytes).equals(Buffer.from(b.received.get(key)!.bytes));
      // only the changed client's masked input differs
      expect(same, key).toBe(key !== `${CHANGED} secure-aggregation/masked`);
    }

    // each client's plain reply, as values and as the quantized words it masks: in no message the server received
    const layout = DEM_PROTOCOL.layouts!.get('dem/stats')!;
    const q = fixedPoint(rec.clip, ids.length);
    // a signature message is searched in its payload (64 signature bytes): its Arrow framing holds 00 00 a0 00 00 00 00 00
    // (a buffer offset of 160 after a zero word), which happens to be one of the quantized words below
    const wire = [...a.received].map(([key, { bytes, message }]) =>
      key.endsWith(' secure-aggregation/signature') ? Buffer.from((message.payload as { signature: Uint8Array }).signature) : Buffer.from(bytes),
    );
    const quantized = new Map<string, Uint8Array>();
    for (const id of ids) {
      const client = new DemClient(id, dataOf(id, false));
      const values = layout.flatten((await client.respond(a.request))!, a.request);
      client.dispose();
      const words = quantize(values, q);
      quantized.set(id, words);
      const needles: Buffer[] = [];
      for (let j = 0; j < values.length; j++) {
        const word = Buffer.from(words.subarray(8 * j, 8 * j + 8));
        if (!word.equals(Buffer.alloc(8))) needles.push(word);
        if (!Number.isInteger(values[j])) needles.push(Buffer.from(Float64Array.of(values[j]!).buffer));
      }
      expect(needles.length).toBeGreaterThan(values.length);
      for (const needle of needles) for (const bytes of wire) expect(bytes.indexOf(needle)).toBe(-1);
    }

    // the changed client's masked vector: its self-mask seed needs t shares (fewer are refused), and even with it removed the pairwise masks hide the input
    const t = rec.threshold;
    const shares = ids
      .filter((h) => h !== CHANGED)
      .map((h) => ({ x: ids.indexOf(h) + 1, value: (a.received.get(`${h} secure-aggregation/unmasked`)!.message.payload as { shares: { of: string; share: Uint8Array }[] }).shares.find((s) => s.of === CHANGED)!.share }));
    expect(() => shamirCombine(shares.slice(0, t - 1), t)).toThrow(FedmixError);
    const seed = shamirCombine(shares.slice(0, t), t);
    const masked = (a.received.get(`${CHANGED} secure-aggregation/masked`)!.message.payload as { masked: Uint8Array }).masked.slice();
    applyMask(masked, seed, -1);
    const own = quantized.get(CHANGED)!;
    for (let j = 0; j < own.length; j += 8) expect(Buffer.from(masked.subarray(j, j + 8)).equals(Buffer.from(own.subarray(j, j + 8)))).toBe(false);
  });
});

describe('MDM and the FedAvg family under secure aggregation', () => {
  let histograms: Matrix;
  beforeAll(() => {
    const truth = new DirichletMultinomialMixture({ tau: [0.5, 0.5], alpha: [[0.3, 1, 3], [3, 1, 0.3]], pi: [0, 1].map(() => Array.from({ length: 30 }, (_, i) => (i >= 9 ? 1 / 21 : 0))) });
    histograms = truth.sample(30, { seed: 3 }).histograms;
  });
  const mdmClients = (change?: (id: string, reply: Message) => Message) =>
    Array.from({ length: 30 }, (_, i) => {
      const c = new MdmClient(`m${i}`, [0, 1, 2].map((j) => histograms.get(i, j)), { seed: i });
      if (!change) return c;
      const respond = c.respond.bind(c);
      c.respond = (m: Message) => change(c.id, respond(m));
      return c;
    });
  const mdmServer = () => new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 30, rounds: 3, seed: 1 });

  it("MDM: the plain model within the bound (the sums' identities checked up to the round's quantization, plain rounds as strictly as before)", async () => {
    const plain = runFederationSync(mdmServer(), mdmClients());
    const secure = await runFederation(mdmServer(), mdmClients(), { secureAggregation: {} });
    expect(secure.failures).toEqual([]);
    expect(secure.history.every((h) => h.secure?.survivors === 30)).toBe(true);
    const bound = Math.max(...secure.history.map((h) => h.secure!.bound));
    // alpha comes from sums of 30 clients through a fixed-point iteration: measured 7e-8 against a bound of 1.3e-4 on each summed entry
    const a = Array.from(plain.model.alpha);
    Array.from(secure.model.alpha).forEach((x, i) => expect(Math.abs(x - a[i]!)).toBeLessThanOrEqual(bound));
  });

  it("MDM: a client whose histogram sums to more than 1 breaks the sum's identity by more than the bound: the run ends typed, the model is not updated from it", async () => {
    const change = (id: string, reply: Message) => {
      if (id !== 'm4' || reply.kind !== 'mdm/init-stats') return reply;
      const p = reply.payload as { p: Float64Array };
      return { ...reply, payload: { ...(reply.payload as object), p: p.p.map((x) => x * 1.01) } };
    };
    await expect(runFederation(mdmServer(), mdmClients(change), { secureAggregation: {} })).rejects.toThrow(/row \d of p sums to [\d.]+; it must sum to the \d+ users e counts/);
  });

  const network = { sizes: [4, 8, 3], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 5 } as const;
  const fedavgClients = () =>
    [90, 120, 60].map((n, c) => {
      const x = blobs(n, 4, 3, 20 + c);
      return new FedAvgClient(`f${c}`, x, { labels: Int32Array.from({ length: n }, (_, i) => i % 3), seed: c });
    });
  for (const [name, make] of [
    ['FedAvg', () => new FedAvgServer({ network, rounds: 3, epochs: 2, batchSize: 16 })],
    ['FedProx', () => new FedProxServer({ network, rounds: 3, epochs: 2, batchSize: 16, mu: 0.1 })],
  ] as const) {
    it(`${name}: the plain parameters within the bound`, async () => {
      const plain = runFederationSync(make(), fedavgClients());
      const secure = await runFederation(make(), fedavgClients(), { secureAggregation: {} });
      const rounds = secure.history.filter((h) => h.secure);
      expect(rounds).toHaveLength(3);
      const bound = Math.max(...rounds.map((h) => h.secure!.bound));
      const a = plain.model.parameters;
      secure.model.parameters.forEach((x: number, i: number) => expect(Math.abs(x - a[i]!)).toBeLessThanOrEqual(bound));
    });
  }
});

describe("a client's own privacy ledger under secure aggregation", () => {
  it('accounts the real request inside each secure round, refuses past its budget at the masking stage, and the round recovers without it', async () => {
    const { ClientBudget } = await import('../ts/federated/runtime/client-budget.js');
    const { privacyEpsilon } = await import('../ts/privacy/accountant.js');
    const { stamping } = await import('./helpers.js');
    const delta = 1e-5;
    const step = { mechanism: 'gaussian', noiseMultiplier: 2, samplingRate: 1 } as const;
    const after = (n: number) => privacyEpsilon({ noiseMultiplier: 2, samplingRate: 1, steps: n, delta }).epsilon;
    const parts = split(blobs(600, 2, 3, 1), 6);
    const roles = parts.map((p, i) => new DemClient(`c${i}`, p));
    // c5 keeps a ledger with room for two rounds; the others keep none
    const small = await ClientBudget.open({ epsilon: (after(2) + after(3)) / 2, delta });
    const budgets = new Map([['c5', small]]);
    const server = new DemServer({ nComponents: 3, nFeatures: 2, featureRange: [-20, 20], init: 'separated', maxRounds: 4, tol: 0 });
    try {
      const r = await runFederation(stamping(server, step), new InProcessTransport(roles, { budgets }), { secureAggregation: {}, privacy: { delta } });
      expect(r.history.map((h) => h.secure?.survivors)).toEqual([6, 6, 5, 5]);
      expect(small.accounted).toBe(2);
      expect(small.spent().epsilon).toBeCloseTo(after(2), 12);
      expect(r.failures.some((f) => f.client === 'c5' && f.round === 3 && f.kind === 'refused' && /privacy budget/.test(f.reason))).toBe(true);
      // the server's ledger spent one step per released secure sum
      expect(r.privacy!.epsilon).toBeCloseTo(after(4), 12);
    } finally {
      server.dispose();
      for (const c of roles) c.dispose();
    }
  });
});

describe('distributed DP in secure rounds (policy secureAggregation.noiseMultiplier)', () => {
  const n = 6;
  const d = 300;
  const rounds = 4;
  const threshold = 3;
  const policy = { secureAggregation: { neighbours: 5, threshold, clip: 1, noiseMultiplier: 1 } };
  // each client's vector of L2 norm 0.9, inside the clip
  const vectors = Array.from({ length: n }, (_, i) => {
    const v = vectorOf(i, d);
    const s = 0.9 / Math.hypot(...v);
    return v.map((x) => x * s);
  });
  const plain = new Float64Array(d);
  for (const v of vectors) for (let j = 0; j < d; j++) plain[j] += v[j]!;

  /** The released sum of each of `rounds` rounds. */
  class RepeatedSum extends SumServer {
    readonly sums: Float64Array[] = [];
    override aggregate(ctx: RoundContext, accepted: ReadonlyMap<string, { values: Float64Array }>) {
      super.aggregate(ctx, accepted);
      this.sums.push(this.sum!);
      this.done = this.sums.length === rounds;
      return undefined;
    }
  }

  it("the released sums' noise has the variance of the survivors' shares (within sampling error); both sides' ledgers hold the Skellam step; the log says it", async () => {
    const { ClientBudget } = await import('../ts/federated/runtime/client-budget.js');
    const { RdpAccountant } = await import('../ts/privacy/accountant.js');
    const { distributedNoise } = await import('../ts/privacy/distributed-noise.js');
    const { roundLine } = await import('../ts/cli/federation-log.js');
    const delta = 1e-5;
    const budgets = new Map(await Promise.all(vectors.map(async (_, i) => [`c${i}`, await ClientBudget.open({ epsilon: 100, delta })] as const)));
    const server = new RepeatedSum(d);
    const r = await runFederation(server, new InProcessTransport(vectors.map((x, i) => sumClient(`c${i}`, x)), { budgets }), { ...policy, privacy: { delta } });
    const want = distributedNoise({ clip: 1, noiseMultiplier: 1, length: d, clients: n, threshold });
    const scale = want.fixedPoint.scale;
    // the noise of n shares, and each client's rounding to the fixed point (uniform, of variance 1/12 in quantized units)
    const variance = (2 * n * want.skellamMu + n / 12) / scale ** 2;
    let sq = 0;
    for (const sum of server.sums) for (let j = 0; j < d; j++) sq += (sum[j]! - plain[j]!) ** 2;
    const samples = rounds * d;
    const measured = sq / samples;
    // the mean square of 1,200 draws of mean 0 within 5 standard errors (sqrt(2 / N) relative): no noise, or twice the shares' variance, fails
    expect(Math.abs(measured / variance - 1)).toBeLessThan(5 * Math.sqrt(2 / samples));
    for (const h of r.history) {
      expect(h.secure!.noise).toEqual({ noiseMultiplier: 1, skellamMu: want.skellamMu, scale, stddev: Math.sqrt(2 * n * want.skellamMu) / scale, guaranteed: Math.sqrt(2 * threshold * want.skellamMu) / scale });
      expect(h.secure!.clip).toBe(1);
      expect(h.privacy!.step).toEqual(want.step);
      expect(roundLine({ ...h, excluded: [], elapsed: 0 }, 'text', 3)).toMatch(/Skellam noise: mu [\d.e+]+ per client, standard deviation [\d.e-]+ per value \(noise multiplier 1\)/);
    }
    // the same steps on both sides: the server's run ledger and every client's own
    const alone = new RdpAccountant();
    for (let i = 0; i < rounds; i++) alone.step(want.step);
    const epsilon = alone.epsilon(delta).epsilon;
    expect(r.privacy!.steps).toEqual([{ ...want.step, steps: rounds }]);
    expect(r.privacy!.epsilon).toBeCloseTo(epsilon, 12);
    for (const b of budgets.values()) {
      expect(b.accounted).toBe(rounds);
      expect(b.spent().epsilon).toBeCloseTo(epsilon, 12);
    }
  });

  /** An in-process transport that edits each advertisement's real request before it goes out (a lying server). */
  class Lying implements Transport {
    readonly name = 'lying';
    constructor(
      private readonly inner: InProcessTransport,
      private readonly lie: (request: Message) => Message,
    ) {}
    available() {
      return this.inner.available();
    }
    exchange(round: number, messages: ReadonlyMap<string, Message>, options: ExchangeOptions): Promise<Exchange> {
      const edited = new Map([...messages].map(([id, m]) => [id, m.kind === 'secure-aggregation/advertise' ? withPayload(m, { request: this.lie((m.payload as { request: Message }).request) }) : m]));
      return this.inner.exchange(round, edited, options);
    }
  }

  it('a server that declares more noise than it asks for, smaller sensitivities, or no step at all: every client refuses before spending, typed, and no sum is released', async () => {
    const { ClientBudget } = await import('../ts/federated/runtime/client-budget.js');
    const more = (m: Message) => ({ ...m, privacy: { ...(m.privacy as { mu: number; l1: number; l2: number }), mechanism: 'skellam' as const, mu: (m.privacy as { mu: number }).mu * 4 } });
    const smaller = (m: Message) => ({ ...m, privacy: { ...(m.privacy as { mu: number; l1: number; l2: number }), mechanism: 'skellam' as const, l2: (m.privacy as { l2: number }).l2 / 2 } });
    const none = (m: Message) => {
      const { privacy, ...rest } = m;
      void privacy;
      return rest as Message;
    };
    for (const [lie, check] of [[more, 'overstates'], [smaller, 'overstates'], [none, 'it asks for noise it does not declare']] as const) {
      const budgets = new Map(await Promise.all(vectors.map(async (_, i) => [`c${i}`, await ClientBudget.open({ epsilon: 100, delta: 1e-5 })] as const)));
      const server = new SumServer(d);
      const run = runFederation(server, new Lying(new InProcessTransport(vectors.map((x, i) => sumClient(`c${i}`, x)), { budgets }), lie), policy);
      await expect(run).rejects.toThrow(SecureAggregationError);
      expect(server.sum).toBeUndefined();
      for (const b of budgets.values()) expect(b.accounted).toBe(0);
      // under 'fail' the first refusal ends the run with its check named
      const strict = runFederation(new SumServer(d), new Lying(new InProcessTransport(vectors.map((x, i) => sumClient(`c${i}`, x))), lie), { ...policy, onInvalid: 'fail' });
      await expect(strict).rejects.toThrow(InvalidMessageError);
      await expect(strict).rejects.toThrow(check === 'it asks for noise it does not declare' ? /asks for Skellam shares of mu [\d.e+]+ but declares none/ : /overstates its privacy/);
    }
  });

  it('a contribution longer than clip: that client refuses (its norm not named) and is excluded; the others are summed with their noise', async () => {
    const long = vectors.map((x, i) => (i === 2 ? x.map((v) => v * 2) : x));
    const server = new SumServer(d);
    const r = await runFederation(server, long.map((x, i) => sumClient(`c${i}`, x)), policy);
    expect(r.excluded.map((e) => e.client)).toEqual(['c2']);
    expect(r.failures[0]!.kind).toBe('refused');
    expect(r.failures[0]!.reason).toMatch(/L2 norm exceeds clip 1, the bound its distributed noise is calibrated to/);
    expect(r.failures[0]!.reason).not.toMatch(/1\.8/);
    expect(r.history[0]!.secure!.survivors).toBe(n - 1);
    expect(r.history[0]!.secure!.noise!.stddev).toBeCloseTo(Math.sqrt(2 * (n - 1) * r.history[0]!.secure!.noise!.skellamMu) / r.history[0]!.secure!.noise!.scale, 12);
  });

  it('options: noiseMultiplier needs an explicit clip; FedAvg without dp, DEM and MDM refuse the policy noise before any round is sent; DP-FedAvg sets its own', async () => {
    const dem = new DemServer({ nComponents: 2, nFeatures: 2, featureRange: [-20, 20], init: 'separated', maxRounds: 1 });
    const demClients = [0, 1, 2].map((i) => new DemClient(`d${i}`, blobs(30, 2, 2, i)));
    try {
      await expect(runFederation(dem, demClients, { secureAggregation: { clip: 100, noiseMultiplier: 1 } })).rejects.toThrow(/cannot apply to distributed EM's replies: .*checked against each other/);
    } finally {
      dem.dispose();
      for (const c of demClients) c.dispose();
    }
    expect(new MdmServer({ nComponents: 2, nCategories: 3, maxCount: 30, rounds: 1 }).secureNoise).toMatch(/noise breaks them/);
    await expect(runFederation(new SumServer(d), vectors.map((x, i) => sumClient(`c${i}`, x)), { secureAggregation: { noiseMultiplier: 1 } })).rejects.toThrow(/noiseMultiplier needs clip/);
    await expect(runFederation(new SumServer(d), vectors.map((x, i) => sumClient(`c${i}`, x)), { secureAggregation: { clip: 1, noiseMultiplier: 0 } })).rejects.toThrow(InvalidParameterError);
    const network = { sizes: [4, 3], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 5 } as const;
    const clients = () => [0, 1, 2].map((c) => new FedAvgClient(`f${c}`, blobs(30, 4, 3, 20 + c), { labels: Int32Array.from({ length: 30 }, (_, i) => i % 3), seed: c }));
    await expect(runFederation(new FedAvgServer({ network, rounds: 1 }), clients(), { secureAggregation: { clip: 1, noiseMultiplier: 1 } })).rejects.toThrow(/distributed noise on FedAvg is DP-FedAvg's/);
    await expect(runFederation(new FedAvgServer({ network, rounds: 1, dp: { clipNorm: 1, noiseMultiplier: 1 } }), clients(), { secureAggregation: { clip: 1, noiseMultiplier: 1 } })).rejects.toThrow(/sets the distributed noise of its secure rounds/);
  });
});

describe('DP-FedAvg with distributed noise (McMahan et al. 2018 under secure aggregation)', () => {
  type Data = { X: Matrix; labels: Int32Array; testX: Matrix; testLabels: Int32Array; nClasses: number };
  let data: Data;
  let parts: number[][];
  beforeAll(async () => {
    const { dataset, deal } = await import('./support/honest-matrix.mjs');
    const f = { ...(await import('../ts/index.js')), ...(await import('../ts/experiments/index.js')) };
    data = dataset(f, 'satellite') as Data;
    parts = (deal(f, data, 'iid', 12, 1) as ArrayLike<number>[]).map((r) => Array.from(r));
  });
  const network = () => ({ sizes: [data.X.nCols, data.nClasses], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 1 }) as const;
  const options = () => ({ network: network(), rounds: 4, epochs: 2, batchSize: 16, optimizer: { name: 'adam', learningRate: 0.05 } }) as const;
  const dp = { clipNorm: 1, noiseMultiplier: 0.3 };
  const clients = () => parts.map((p, i) => new FedAvgClient(`c${i}`, data.X.selectRows(p) as Matrix, { labels: Int32Array.from(p, (r) => data.labels[r]!), seed: i }));
  const accuracy = (parameters: Float32Array): number => accuracyOf(network(), parameters, data.testX, data.testLabels);


  it('satellite, 12 clients: the clients clip and add their shares, the server adds nothing, and the model is as accurate as central DP-FedAvg at the same multiplier; the ledger holds Skellam steps', async () => {
    const delta = 1e-5;
    const central: number[] = [];
    for (const noiseSeed of [1, 2, 3]) {
      const r = runFederationSync(new FedAvgServer({ ...options(), dp, noiseSeed }), clients(), { privacy: { delta } });
      central.push(accuracy(r.model.parameters));
    }
    // each client's draws (keys, shares, its noise's key) from its own seeded stream, continued across rounds;
    // one draw of the noise moves the accuracy by about 0.04, so three runs on three sets of streams are averaged
    const secureRun = async (base: number) => {
      const streams = new Map<string, (bytes: Uint8Array) => void>();
      secureAggregationTesting.randomOf = (id) => {
        let s = streams.get(id);
        if (!s) {
          const next = xorshift32(base + Number(id.slice(1)));
          streams.set(id, (s = (bytes: Uint8Array) => bytes.forEach((_, i) => (bytes[i] = next() & 255))));
        }
        return s;
      };
      try {
        return await runFederation(new FedAvgServer({ ...options(), dp }), clients(), { secureAggregation: { neighbours: 11, threshold: 10 }, privacy: { delta } });
      } finally {
        secureAggregationTesting.randomOf = undefined;
      }
    };
    const runs = [];
    for (const base of [101, 201, 301]) runs.push(await secureRun(base));
    const secure = runs[0]!;
    const got = runs.map((r) => accuracy(r.model.parameters));
    const mean = central.reduce((a, b) => a + b, 0) / central.length;
    const secureMean = got.reduce((a, b) => a + b, 0) / got.length;
    // measured: central 0.735, 0.7125, 0.7675 (noise seeds 1-3, mean 0.738); distributed 0.73, 0.7025, 0.7425 (streams 101, 201,
    // 301; mean 0.725; stream bases 11 and 401 gave 0.6375 and 0.7175); plain FedAvg 0.8075; one class of 6
    expect(secureMean).toBeGreaterThan(mean - 0.05);
    for (const g of got) expect(g).toBeGreaterThan(0.6);
    const rounds = secure.history.filter((h) => h.secure);
    expect(rounds).toHaveLength(4);
    const want = (await import('../ts/privacy/distributed-noise.js')).distributedNoise({ clip: 1, noiseMultiplier: 0.3, length: data.X.nCols * data.nClasses + data.nClasses, clients: 12, threshold: 10 });
    for (const [i, h] of rounds.entries()) {
      // no central noise declared: the round's step is the clients' Skellam shares
      expect(h.privacy!.step).toEqual(want.step);
      expect(h.secure!.clip).toBe(1);
      const round = secure.model.history[i]!;
      expect(round.clients).toBe(12);
      expect(round.noiseStddev).toBeCloseTo(h.secure!.noise!.stddev / 12, 12);
      expect(round.noiseStddev).toBeGreaterThanOrEqual((0.3 * 1) / 12);
      // a noised sum releases no client's loss, epochs or clipped flag
      expect(Number.isNaN(round.loss) && Number.isNaN(round.epochs) && round.clipped === undefined).toBe(true);
    }
    expect(secure.privacy!.steps).toEqual([{ ...want.step, steps: 4 }]);
  }, 60_000);

  it("a client's update reaches the sum clipped to clipNorm exactly, whatever its length; DP-FedAvg's secure sums refuse no honest client", async () => {
    const { FEDAVG_PROTOCOL, TRAIN, UPDATE } = await import('../ts/federated/fedavg/messages.js');
    const layout = FEDAVG_PROTOCOL.layouts!.get(UPDATE.kind)!;
    const x = new Float32Array(10).fill(0.5);
    const request = TRAIN.create('server', 1, { network: { sizes: [3, 2], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy' }, parameters: x, epochs: 1, batchSize: 4, optimizer: { name: 'sgd', learningRate: 0.1 }, clipNorm: 0.7 });
    expect(layout.fields(request)).toEqual([{ name: 'parameters', length: 10 }]);
    for (const scale of [1e-3, 0.7 / Math.sqrt(10), 1, 1e6]) {
      const reply = UPDATE.create('a', 1, { parameters: x.map((v, j) => v + scale * (j % 3 === 0 ? 1 : -1)), nSamples: 3, loss: 0.1, epochs: 1, clipped: false });
      const v = layout.flatten(reply, request);
      const norm = Math.hypot(...v);
      expect(norm).toBeLessThanOrEqual(0.7);
      if (scale >= 1) expect(norm).toBeGreaterThan(0.7 * (1 - 1e-12));
    }
  });
});

describe('fedmix server --secagg-noise-multiplier', () => {
  it('maps to the policy with its clip; needs --secure-aggregation and --secagg-clip, said before anything starts', async () => {
    const { secureOption, serverOptions } = await import('../ts/cli/federation.js');
    const { parseOptions } = await import('../ts/cli/args.js');
    const argv = ['--algorithm', 'dem', '--secure-aggregation', '--secagg-clip', '2', '--secagg-noise-multiplier', '1.1', '--secagg-threshold', '4'];
    expect(secureOption(parseOptions(argv, serverOptions))).toEqual({ secureAggregation: { threshold: 4, clip: 2, noiseMultiplier: 1.1 } });
    expect(() => secureOption({ 'secagg-clip': 2, 'secagg-noise-multiplier': 1.1 })).toThrow(/need --secure-aggregation/);
    expect(() => secureOption({ 'secure-aggregation': true, 'secagg-noise-multiplier': 1.1 })).toThrow(/--secagg-noise-multiplier needs --secagg-clip/);
  });
});
