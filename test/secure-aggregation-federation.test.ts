/**
 * Secure aggregation in a federation (issue 26): the server's accept() gets
 * one reply, the sum of the survivors' replies within the quantization bound,
 * with 0%, 10% and 30% of the clients dropping at each stage; below the
 * threshold the run fails typed; a round whose replies are not sums is
 * refused; DEM secure gives the plain model.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FedmixError, init, type Matrix } from '../ts/index.js';
import { DemClient } from '../ts/federated/dem/client.js';
import { DemServer } from '../ts/federated/dem/server.js';
import { defineMessage, f64Array, record, wholeNumber } from '../ts/federated/messages/schema.js';
import type { Message } from '../ts/federated/messages/envelope.js';
import { runFederation } from '../ts/federated/runtime/run.js';
import { defineProtocol, type ClientRole, type RoundContext, type ServerRole } from '../ts/federated/runtime/roles.js';
import { sumLayout } from '../ts/federated/secure-aggregation/layout.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import type { Exchange, ExchangeOptions, Transport } from '../ts/federated/transport/transport.js';
import { blobs } from './helpers.js';

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
  for (const stage of ['advertise', 'share', 'mask', 'unmask']) {
    for (const share of [0, 0.1, 0.3]) {
      it(`${share * 100}% dropping at ${stage}: the sum of the survivors within the bound`, async () => {
        const gone = new Set(Array.from({ length: Math.round(share * n) }, (_, i) => `c${(i * 3 + 1) % n}`));
        const clients = vectors.map((x, i) => sumClient(`c${i}`, x));
        const server = new SumServer(length);
        const r = await runFederation(server, new Dropping(new InProcessTransport(clients), stage, gone), { secureAggregation: { neighbours: 9, threshold: 5 } });
        const rec = r.history[0]!.secure!;
        // a client dropping at unmask already sent its masked input: it is in the sum
        const inSum = stage === 'unmask' ? vectors.map((_, i) => i) : vectors.map((_, i) => i).filter((i) => !gone.has(`c${i}`));
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

  it('k-FED initialization sends local clusters, which are not sums: the run refuses it, typed', async () => {
    await expect(runOnce({ init: 'kfed' }, true)).rejects.toThrow(/not sums; secure aggregation cannot run this round/);
  });
});
