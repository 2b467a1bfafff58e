/**
 * Secure aggregation (ts/privacy/secure-aggregation/, crates/fedmix-core/src/secure_aggregation/):
 * the primitives against independent references (Node's own ChaCha20, exact
 * BigInt sums), and the SecAgg+ state machines driven as a runtime would
 * drive them - every message through the server's accept*, a refused one
 * followed by drop() - with clients dropping at every stage, malicious
 * clients, and the server's transcript compared byte for byte across runs.
 * The per-client randomness of those runs is seeded only through the
 * test-only `random` hook of SecureAggregationClient.create.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidDataError, InvalidMessageError, InvalidParameterError, SecureAggregationError } from '../ts/errors.js';
import { addInto, dequantize, fixedPoint, quantizationBound, quantize, subtractInto, sumWords } from '../ts/privacy/secure-aggregation/fixed-point.js';
import { defaultNeighbours, defaultThreshold, neighbourGraph } from '../ts/privacy/secure-aggregation/graph.js';
import { agree, detectCurve, importPublicKey, importSecretKey, generateKeyPair, type Curve } from '../ts/privacy/secure-aggregation/keys.js';
import { detectSignatureScheme, type SignatureScheme } from '../ts/privacy/secure-aggregation/signatures.js';
import { applyMask } from '../ts/privacy/secure-aggregation/masks.js';
import {
  SecureAggregationClient,
  SecureAggregationServer,
  type SecureAggregationParams,
  type SecureAggregationResult,
} from '../ts/privacy/secure-aggregation/protocol.js';
import { secureSum } from '../ts/privacy/secure-aggregation/secure-sum.js';
import { shamirCombine, shamirShareAt, shamirSplit, type RandomSource } from '../ts/privacy/secure-aggregation/shamir.js';
import { init } from '../ts/wasm/loader.js';

beforeAll(async () => {
  await init();
});

/** A deterministic byte source for tests: SHA-256 of a label and a counter. */
function seeded(label: string): RandomSource {
  let counter = 0;
  return (bytes) => {
    for (let at = 0; at < bytes.length; at += 32) {
      const h = createHash('sha256').update(`${label}/${counter++}`).digest();
      bytes.set(h.subarray(0, Math.min(32, bytes.length - at)), at);
    }
  };
}

/** Values in [-1, 1] with bits down to 2^-72 (so quantization rounds), and each as an exact integer multiple of 2^-72. */
function inputsOf(ids: readonly string[], length: number, label: string): { inputs: Map<string, Float64Array>; exact: Map<string, bigint[]> } {
  const inputs = new Map<string, Float64Array>();
  const exact = new Map<string, bigint[]>();
  const random = seeded(label);
  for (const id of ids) {
    const v = new Float64Array(length);
    const e: bigint[] = [];
    const bytes = new Uint8Array(8);
    for (let i = 0; i < length; i++) {
      random(bytes);
      const view = new DataView(bytes.buffer);
      const m = (view.getUint32(0) % 2 ** 21) * 2 ** 32 + view.getUint32(4) - 2 ** 52; // in [-2^52, 2^52)
      const shift = bytes[7]! % 21; // x = m / 2^(52 + shift)
      v[i] = m / 2 ** (52 + shift);
      e.push(BigInt(m) * 2n ** BigInt(20 - shift));
    }
    inputs.set(id, v);
    exact.set(id, e);
  }
  return { inputs, exact };
}

/** The exact sum of the survivors' inputs, each entry rounded once to a double. */
function exactSum(exact: Map<string, bigint[]>, survivors: readonly string[], length: number): Float64Array {
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    let s = 0n;
    for (const id of survivors) s += exact.get(id)![i]!;
    out[i] = Number(s) / 2 ** 72;
  }
  return out;
}

function expectWithin(sum: Float64Array, reference: Float64Array, bound: number): void {
  expect(sum.length).toBe(reference.length);
  let worst = 0;
  for (let i = 0; i < sum.length; i++) worst = Math.max(worst, Math.abs(sum[i]! - reference[i]!) - Math.abs(reference[i]!) * 2 ** -52);
  expect(worst).toBeLessThanOrEqual(bound);
}

type Stage = 'advertise' | 'shares' | 'masked' | 'consistency' | 'unmask';

interface RoundOptions {
  n: number;
  neighbours?: number;
  threshold?: number;
  length: number;
  curve?: Curve;
  label: string;
  drop?: Partial<Record<Stage, readonly string[]>>;
  inputs?: Map<string, Float64Array>;
  /** what a malicious client sends instead */
  shares?: (from: string, shares: Map<string, Uint8Array>) => Map<string, Uint8Array>;
  masked?: (from: string, masked: Uint8Array) => Uint8Array;
  unmask?: (from: string, shares: Map<string, Uint8Array>) => Map<string, Uint8Array>;
  noise?: { skellamMu: number };
  /** the consistency check's scheme (default: this engine's); null runs the four-stage protocol without it */
  signature?: SignatureScheme | null;
  /** stop after the masked inputs (a test then plays the server) */
  untilMasked?: boolean;
}

interface Round {
  params: SecureAggregationParams;
  ids: string[];
  inputs: Map<string, Float64Array>;
  exact: Map<string, bigint[]>;
  clients: Map<string, SecureAggregationClient>;
  server: SecureAggregationServer;
  /** every message the server received, per sender, as bytes */
  transcript: Map<string, Uint8Array[]>;
  /** each client's masked input as it sent it */
  maskedOf: Map<string, Uint8Array>;
  result: () => Promise<SecureAggregationResult>;
}

function mapBytes(m: ReadonlyMap<string, Uint8Array>): Uint8Array[] {
  return [...m].flatMap(([id, b]) => [new TextEncoder().encode(id), b]);
}

/** One round driven as a runtime would: each message into the server, a refused one followed by drop(). */
async function runRound(o: RoundOptions): Promise<Round> {
  const ids = Array.from({ length: o.n }, (_, i) => `c${i}`);
  const neighbours = o.neighbours ?? o.n - 1;
  const params: SecureAggregationParams = {
    run: 'test-run',
    round: 3,
    clients: ids,
    neighbours,
    threshold: o.threshold ?? defaultThreshold(neighbours),
    graphSeed: new Uint8Array(32).fill(7),
    curve: o.curve ?? (await detectCurve()),
    length: o.length,
    fixedPoint: fixedPoint(1, o.n),
    ...(o.noise ? { noise: o.noise } : {}),
    ...(o.signature === null ? {} : { signature: o.signature ?? (await detectSignatureScheme()) }),
  };
  const { inputs: made, exact } = inputsOf(ids, o.length, `${o.label}/inputs`);
  const inputs = o.inputs ?? made;
  const server = new SecureAggregationServer(params);
  const clients = new Map<string, SecureAggregationClient>();
  for (const id of ids) clients.set(id, await SecureAggregationClient.create(id, params, { random: seeded(`${o.label}/${id}`) }));
  const transcript = new Map<string, Uint8Array[]>(ids.map((id) => [id, []]));
  const maskedOf = new Map<string, Uint8Array>();
  const gone = (stage: Stage) => new Set(o.drop?.[stage] ?? []);
  const deliver = (from: string, accept: () => void) => {
    try {
      accept();
    } catch (e) {
      if (!(e instanceof InvalidMessageError)) throw e;
      server.drop(from);
    }
  };

  let dropping = gone('advertise');
  for (const id of ids) {
    if (dropping.has(id)) {
      server.drop(id);
      continue;
    }
    const keys = clients.get(id)!.advertise();
    transcript.get(id)!.push(keys.cPk, keys.sPk);
    deliver(id, () => server.acceptAdvertise(id, keys));
  }
  const keys = server.advertised();
  dropping = gone('shares');
  for (const [id, k] of keys) {
    if (dropping.has(id)) {
      server.drop(id);
      continue;
    }
    const sent = await clients.get(id)!.shareKeys(k);
    const shares = o.shares ? o.shares(id, sent.shares) : sent.shares;
    transcript.get(id)!.push(...mapBytes(shares), sent.commitment);
    deliver(id, () => server.acceptShares(id, shares, sent.commitment));
  }
  const routed = server.routed();
  dropping = gone('masked');
  for (const [id, received] of routed) {
    if (dropping.has(id)) {
      server.drop(id);
      continue;
    }
    const out = await clients.get(id)!.maskedInput(received, inputs.get(id)!);
    const masked = o.masked ? o.masked(id, out.masked) : out.masked;
    maskedOf.set(id, masked);
    transcript.get(id)!.push(masked, new TextEncoder().encode(out.refused.join(',')));
    deliver(id, () => server.acceptMasked(id, masked, out.refused));
  }
  const stopped = { params, ids, inputs, exact, clients, server, transcript, maskedOf, result: () => server.result() };
  if (o.untilMasked) return stopped;
  const request = server.unmaskRequest();
  let asked: ReadonlyMap<string, ReadonlyMap<string, Uint8Array>> = new Map(request.survivors.map((id) => [id, new Map()]));
  if (params.signature) {
    dropping = gone('consistency');
    for (const id of request.survivors) {
      if (dropping.has(id)) {
        server.drop(id);
        continue;
      }
      const signature = await clients.get(id)!.signSurvivors(request.survivors);
      transcript.get(id)!.push(signature);
      deliver(id, () => server.acceptSignature(id, signature));
    }
    asked = await server.signatures();
  }
  dropping = gone('unmask');
  for (const [id, signatures] of asked) {
    if (dropping.has(id)) {
      server.drop(id);
      continue;
    }
    if (params.signature) await clients.get(id)!.acceptSignatures(signatures);
    const answer = clients.get(id)!.unmask(request.survivors, request.dropped);
    const shares = o.unmask ? o.unmask(id, answer) : answer;
    transcript.get(id)!.push(...mapBytes(shares));
    deliver(id, () => server.acceptUnmask(id, shares));
  }
  return { params, ids, inputs, exact, clients, server, transcript, maskedOf, result: () => server.result() };
}

/** The first `fraction` of the clients after skipping `offset`, as ids (a deterministic choice). */
function some(n: number, fraction: number, offset = 1): string[] {
  return Array.from({ length: Math.round(n * fraction) }, (_, i) => `c${(offset + 3 * i) % n}`);
}

describe('fixed point in Z_2^64', () => {
  test('the scale is the largest power of two that cannot overflow, and the extreme sum does not wrap', () => {
    for (const [clip, contributors] of [
      [1, 20],
      [3.7, 1000],
      [1e6, 65_535],
      [1e-9, 2],
    ] as const) {
      const q = fixedPoint(clip, contributors);
      const limit = (scale: number) => BigInt(contributors) * (BigInt(Math.ceil(clip * scale)) + 1n);
      expect(limit(q.scale) < 2n ** 63n).toBe(true);
      expect(limit(2 * q.scale) >= 2n ** 63n).toBe(true);
      // contributors x clip (and x -clip): the largest sums, exact
      for (const sign of [1, -1]) {
        const one = quantize(Float64Array.of(sign * clip, sign * clip * 0.5, 0), q);
        const sum = sumWords(Array.from({ length: contributors }, () => one), one.length);
        const back = dequantize(sum, q);
        const bound = quantizationBound(q, contributors);
        expect(Math.abs(back[0]! - sign * clip * contributors)).toBeLessThanOrEqual(bound);
        expect(Math.sign(back[0]!)).toBe(sign);
        expect(Math.abs(back[1]! - sign * clip * 0.5 * contributors)).toBeLessThanOrEqual(bound);
        expect(back[2]).toBe(0);
      }
    }
    // at the limit itself: scale 1, and contributors x clip just below 2^63
    const n = 65_535;
    const clip = Math.floor(2 ** 63 / n) - 2 ** 12;
    const q = fixedPoint(clip, n);
    expect(q.scale).toBe(1);
    const one = quantize(Float64Array.of(clip, -clip), q);
    const back = dequantize(sumWords(Array.from({ length: n }, () => one), 16), q);
    expect(Math.abs(back[0]! - clip * n)).toBeLessThanOrEqual(quantizationBound(q, n));
    expect(back[0]).toBeGreaterThan(0);
    expect(back[1]).toBeLessThan(0);
  });

  test('a value past clip, or not finite, is refused naming its index; a clip too large for 64 bits is refused', () => {
    const q = fixedPoint(2, 10);
    expect(() => quantize(Float64Array.of(1, -2.0000001), q)).toThrow(/values\[1\] is -2\.0000001, outside \[-clip, clip\] with clip 2/);
    expect(() => quantize(Float64Array.of(NaN), q)).toThrow(InvalidDataError);
    expect(() => quantize(Float64Array.of(Infinity), q)).toThrow(InvalidDataError);
    expect(() => fixedPoint(2 ** 62, 4)).toThrow(/no fixed point with scale >= 1/);
    expect(() => quantize(Float64Array.of(1), { clip: 2, contributors: 10, scale: 2 ** 70 })).toThrow(InvalidParameterError);
  });

  test('addInto and subtractInto wrap mod 2^64 and undo each other', () => {
    const q = fixedPoint(1, 3);
    const a = quantize(Float64Array.of(0.5, -0.25, 1), q);
    const b = quantize(Float64Array.of(-0.75, -1, 1), q);
    const acc = a.slice();
    addInto(acc, b);
    expect(Array.from(dequantize(acc, q))).toEqual([-0.25, -1.25, 2]);
    subtractInto(acc, b);
    expect(acc).toEqual(a);
  });
});

describe('masks: ChaCha20 in the core', () => {
  test("the mask is ChaCha20's key stream (RFC 8439 A.1 #1; Node's chacha20 for 1,000 words), and -1 undoes +1", () => {
    const zeros = new Uint8Array(64);
    applyMask(zeros, new Uint8Array(32), 1);
    expect(Buffer.from(zeros).toString('hex')).toBe(
      '76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586',
    );
    const seed = Uint8Array.from({ length: 32 }, (_, i) => 3 * i + 1);
    const v = new Uint8Array(8000);
    applyMask(v, seed, 1);
    const node = createCipheriv('chacha20', seed, new Uint8Array(16)).update(new Uint8Array(8000));
    expect(Buffer.from(v).equals(node)).toBe(true);
    const w = Uint8Array.from({ length: 800 }, (_, i) => i % 251);
    const before = w.slice();
    applyMask(w, seed, 1);
    expect(w).not.toEqual(before);
    applyMask(w, seed, -1);
    expect(w).toEqual(before);
  });
});

describe('Shamir sharing over GF(2^61 - 1)', () => {
  const secret = Uint8Array.from({ length: 32 }, (_, i) => (i * 37 + 11) % 256);

  test('any t of m shares reconstruct; t - 1 are refused with a typed error', () => {
    const shares = shamirSplit(secret, 3, 6);
    for (let a = 0; a < 6; a++) {
      for (let b = a + 1; b < 6; b++) {
        for (let c = b + 1; c < 6; c++) expect(shamirCombine([shares[c]!, shares[a]!, shares[b]!], 3)).toEqual(secret);
      }
    }
    expect(() => shamirCombine(shares.slice(0, 2), 3)).toThrow(SecureAggregationError);
    expect(() => shamirCombine(shares.slice(0, 2), 3)).toThrow(/2 shares cannot reconstruct a secret shared with threshold 3/);
  });

  test('parties up to 65,535; a corrupted share gives a wrong secret or is refused, and does not lie on the others\' polynomial', () => {
    const shares = shamirSplit(secret, 2, [1, 40_000, 65_535]);
    expect(shamirCombine(shares.slice(1), 2)).toEqual(secret);
    expect(() => shamirSplit(secret, 1, [65_536])).toThrow(InvalidParameterError);
    const bad = { x: shares[0]!.x, value: shares[0]!.value.slice() };
    bad.value[3] ^= 0x40;
    let wrong: Uint8Array | undefined;
    try {
      wrong = shamirCombine([bad, shares[1]!], 2);
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidDataError);
    }
    if (wrong) expect(wrong).not.toEqual(secret);
    expect(shamirShareAt(shares.slice(1), 2, 1)).toEqual(shares[0]!.value);
    expect(shamirShareAt(shares.slice(1), 2, 1)).not.toEqual(bad.value);
  });
});

describe('keys and the neighbour graph', () => {
  test('X25519 where WebCrypto has it; secret keys re-import to the same public key, on both curves', async () => {
    expect(await detectCurve()).toBe('X25519');
    for (const curve of ['X25519', 'P-256'] as const) {
      const kp = await generateKeyPair(curve, seeded(curve));
      expect(kp.secret.length).toBe(32);
      const again = await importSecretKey(curve, kp.secret);
      expect(again.publicKey).toEqual(kp.publicKey);
    }
    await expect(importSecretKey('P-256', new Uint8Array(32).fill(0xff))).rejects.toThrow(InvalidDataError);
  });

  test('the graph is symmetric of degree k, k = n - 1 is all pairs, and the defaults grow as log n', () => {
    for (const [n, k] of [
      [20, 8],
      [21, 6],
      [20, 5],
      [9, 8],
    ] as const) {
      const g = neighbourGraph(n, k, new Uint8Array(32).fill(n));
      for (let i = 0; i < n; i++) {
        expect(g[i]!.length).toBe(k);
        expect(new Set(g[i]).size).toBe(k);
        expect(g[i]).not.toContain(i);
        for (const j of g[i]!) expect(g[j]).toContain(i);
      }
    }
    expect(neighbourGraph(5, 4, new Uint8Array(32))).toEqual([0, 1, 2, 3, 4].map((i) => [0, 1, 2, 3, 4].filter((j) => j !== i)));
    expect(neighbourGraph(20, 8, new Uint8Array(32).fill(1))).not.toEqual(neighbourGraph(20, 8, new Uint8Array(32).fill(2)));
    expect(() => neighbourGraph(21, 5, new Uint8Array(32))).toThrow(/odd number \(5\) of neighbours: use 6/);
    expect([2, 5, 8].map(defaultNeighbours)).toEqual([1, 4, 7]);
    const ks = [100, 1000, 10_000, 65_535].map(defaultNeighbours);
    expect(ks).toEqual([26, 38, 42, 46]);
    expect([1, 4, 26].map(defaultThreshold)).toEqual([1, 3, 14]);
  });
});

describe('SecAgg+ rounds', () => {
  const n = 16;
  const length = 64;

  test.each([0, 0.1, 0.3])('%s of the clients dropping at each stage: the sum of the survivors within the bound', async (fraction) => {
    const stages: Stage[] = fraction === 0 ? ['advertise'] : ['advertise', 'shares', 'masked', 'consistency', 'unmask'];
    for (const stage of stages) {
      const dropped = some(n, fraction);
      const r = await runRound({ n, length, label: `drop-${fraction}-${stage}`, drop: { [stage]: dropped } });
      const result = await r.result();
      const expectedSurvivors = stage === 'unmask' || stage === 'consistency' ? r.ids : r.ids.filter((id) => !dropped.includes(id));
      expect(result.survivors).toEqual(expectedSurvivors);
      expect(result.dropped[stage]).toEqual([...dropped].sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))));
      expect(result.bound).toBe(quantizationBound(r.params.fixedPoint, result.survivors.length));
      expectWithin(result.sum, exactSum(r.exact, result.survivors, length), result.bound);
    }
  });

  test('n = 100 with the SecAgg+ degree (k = 26, t = 14): 10% drop after sharing keys, 10% more before unmasking', async () => {
    const k = defaultNeighbours(100);
    const r = await runRound({ n: 100, neighbours: k, length: 8, label: 'n100', drop: { masked: some(100, 0.1, 2), unmask: some(100, 0.1, 5) } });
    const result = await r.result();
    expect(result.survivors.length).toBe(90);
    expect(result.dropped.masked.length).toBe(10);
    expectWithin(result.sum, exactSum(r.exact, result.survivors, 8), result.bound);
  }, 20_000);

  test('fewer than threshold clients at any stage: a SecureAggregationError, never a sum', async () => {
    const small = { n: 6, length: 4, threshold: 4 };
    await expect(runRound({ ...small, label: 'few-a', drop: { advertise: ['c0', 'c1', 'c2'] } })).rejects.toThrow(SecureAggregationError);
    await expect(runRound({ ...small, label: 'few-s', drop: { shares: ['c0', 'c1', 'c2'] } })).rejects.toThrow(/after the shares were distributed: 0 clients are left \(3 more were dropped for having fewer than 4 neighbours left to hold their shares\), fewer than the threshold 4/);
    await expect(runRound({ ...small, label: 'few-m', drop: { masked: ['c0', 'c1', 'c2'] } })).rejects.toThrow(SecureAggregationError);
    const late = await runRound({ ...small, label: 'few-u', drop: { unmask: ['c0', 'c1', 'c2'] } });
    await expect(late.result()).rejects.toThrow(/after unmasking: 3 clients are left, fewer than the threshold 4/);
  });

  test("the server's transcript: one client's input changed leaves every other client's messages byte-identical, and its masked vector looks uniform", async () => {
    const length = 4096;
    const base = await runRound({ n: 8, length, label: 'transcript' });
    const changed = new Map(base.inputs);
    changed.set('c3', Float64Array.from({ length }, (_, i) => (i % 2 === 0 ? 0.5 : -0.5)));
    const other = await runRound({ n: 8, length, label: 'transcript', inputs: changed });
    for (const id of base.ids) {
      const a = base.transcript.get(id)!;
      const b = other.transcript.get(id)!;
      expect(b.length).toBe(a.length);
      const same = a.every((x, i) => Buffer.from(x).equals(Buffer.from(b[i]!)));
      expect(same, id).toBe(id !== 'c3');
    }
    // c3's masked vector minus its quantized input is its mask: its bytes are uniform (chi-square, 255 df, p < 1e-6 at 400)
    const mask = other.maskedOf.get('c3')!.slice();
    subtractInto(mask, quantize(changed.get('c3')!, other.params.fixedPoint));
    const counts = new Array<number>(256).fill(0);
    for (const byte of mask) counts[byte]!++;
    const expected = mask.length / 256;
    const chi2 = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(400);
    // while the quantized input itself is far from uniform
    const plainCounts = new Array<number>(256).fill(0);
    for (const byte of quantize(changed.get('c3')!, other.params.fixedPoint)) plainCounts[byte]!++;
    expect(plainCounts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0)).toBeGreaterThan(1e5);
    // and the sums differ by exactly the change
    const [s1, s2] = [await base.result(), await other.result()];
    for (let i = 0; i < 8; i++) expect(s2.sum[i]! - s1.sum[i]!).toBeCloseTo(changed.get('c3')![i]! - base.inputs.get('c3')![i]!, 12);
  });

  test('unmasking refuses fewer than t shares, and a client answers one unmask request only', async () => {
    const r = await runRound({ n: 6, length: 4, threshold: 4, label: 'refuse' });
    const request = r.server.unmaskRequest();
    // the b shares of c0 that three holders gave: fewer than t
    const c0 = r.clients.get('c0')!;
    expect(() => c0.unmask(request.survivors, request.dropped)).not.toThrow();
    expect(() => c0.unmask(request.survivors.slice(1), [...request.dropped, request.survivors[0]!])).toThrow(/a second unmask request that differs/);
    expect(() => r.clients.get('c1')!.unmask(['c0', 'c1', 'c2', 'c3'], ['c0'])).toThrow(/both a survivor and dropped/);
    const shares = ['c1', 'c2', 'c3'].map((h) => ({ x: Number(h.slice(1)) + 1, value: r.clients.get(h)!.unmask(request.survivors, request.dropped).get('c0')! }));
    expect(() => shamirCombine(shares, 4)).toThrow(SecureAggregationError);
  });

  test('a masked vector of the wrong length: the client is refused, dropped, and the sum of the others is right', async () => {
    const r = await runRound({ n: 10, length: 16, label: 'short', masked: (from, m) => (from === 'c4' ? m.subarray(0, 8) : m) });
    const result = await r.result();
    expect(result.dropped.masked).toEqual(['c4']);
    expect(result.survivors).not.toContain('c4');
    expectWithin(result.sum, exactSum(r.exact, result.survivors, 16), result.bound);
  });

  test('a garbage share ciphertext: its receiver refuses it, the sender is excluded and its masks recovered', async () => {
    const r = await runRound({
      n: 10,
      length: 16,
      label: 'garbage',
      shares: (from, shares) => {
        if (from !== 'c5') return shares;
        const out = new Map(shares);
        out.set('c2', new Uint8Array(shares.get('c2')!.length).fill(0x5a));
        return out;
      },
    });
    const result = await r.result();
    expect(result.dropped.excluded).toEqual(['c5']);
    expect(result.survivors).toEqual(r.ids.filter((id) => id !== 'c5'));
    expectWithin(result.sum, exactSum(r.exact, result.survivors, 16), result.bound);
  });

  test('shares that decrypt but are wrong: the commitment and the public key rule them out; too many give a typed failure', async () => {
    const corrupt = (share: Uint8Array) => {
      const s = share.slice();
      s[0] ^= 1;
      return s;
    };
    // c7 lies about every share it holds: each secret is rebuilt from the others' shares, c7 ruled out
    const r = await runRound({
      n: 10,
      length: 16,
      label: 'liar',
      drop: { masked: ['c1'] },
      unmask: (from, shares) => (from === 'c7' ? new Map([...shares].map(([id, s]) => [id, corrupt(s)])) : shares),
    });
    const result = await r.result();
    expect(result.dropped.ruledOut).toEqual(['c7']);
    expectWithin(result.sum, exactSum(r.exact, result.survivors, 16), result.bound);
    // every holder's share of c0's seed wrong: no subset passes the commitment
    const all = await runRound({
      n: 10,
      length: 16,
      label: 'liars',
      unmask: (_from, shares) => new Map([...shares].map(([id, s]) => [id, id === 'c0' ? corrupt(s) : s])),
    });
    await expect(all.result()).rejects.toThrow(/could not reconstruct c0's self-mask seed/);
  });

  test('out-of-stage and malformed messages are refused and change nothing; params.noise adds Skellam shares', async () => {
    const r = await runRound({ n: 5, length: 2, label: 'stages' });
    expect(() => r.server.acceptAdvertise('c0', r.clients.get('c0')!.advertise())).toThrow(InvalidMessageError);
    expect(() => r.server.acceptUnmask('c0', new Map([['c1', new Uint8Array(3)]]))).toThrow(InvalidMessageError);
    expect(() => r.server.acceptUnmask('nobody', new Map())).toThrow(InvalidMessageError);
    const fresh = new SecureAggregationServer(r.params);
    expect(() => fresh.acceptAdvertise('c0', { cPk: new Uint8Array(5), sPk: new Uint8Array(32) })).toThrow(InvalidMessageError);
    expect(() => fresh.acceptShares('c0', new Map(), new Uint8Array(32))).toThrow(/at the advertise stage, not at shares/);
    // distributed DP (test/distributed-noise.test.ts checks its variance): the released sum moves by the shares' integer noise
    const plain = await (await runRound({ n: 5, length: 2, label: 'noise' })).result();
    const noisy = await (await runRound({ n: 5, length: 2, label: 'noise', noise: { skellamMu: 2 ** 40 } })).result();
    const sd = Math.sqrt(2 * 5 * 2 ** 40) / fixedPoint(1, 5).scale;
    for (let j = 0; j < 2; j++) {
      expect(noisy.sum[j]).not.toBe(plain.sum[j]);
      expect(Math.abs(noisy.sum[j]! - plain.sum[j]!)).toBeLessThan(10 * sd);
    }
  });
});

/**
 * What a server that lies about dropouts would do with the shares it got:
 * rebuild the target's b seed and s key from t shares each and remove every
 * mask from its masked input. Returns the target's quantized input, alone.
 */
async function unmaskAlone(r: Round, target: string, b: { holder: string; share: Uint8Array }[], s: { holder: string; share: Uint8Array }[]): Promise<Uint8Array> {
  const x = (h: string) => r.ids.indexOf(h) + 1;
  const t = r.params.threshold;
  const seed = shamirCombine(b.map((e) => ({ x: x(e.holder), value: e.share })), t);
  const sk = await importSecretKey(r.params.curve, shamirCombine(s.map((e) => ({ x: x(e.holder), value: e.share })), t));
  const vector = r.maskedOf.get(target)!.slice();
  applyMask(vector, seed, -1);
  for (const v of r.ids) {
    if (v === target) continue;
    const [first, second] = r.ids.indexOf(target) < r.ids.indexOf(v) ? [target, v] : [v, target];
    const peer = await importPublicKey(r.params.curve, r.clients.get(v)!.advertise().sPk);
    applyMask(vector, await agree(sk.privateKey, peer, { purpose: 'mask', run: r.params.run, round: r.params.round, first, second }), first === target ? -1 : 1);
  }
  return vector;
}

describe('a server that lies about dropouts (the consistency check)', () => {
  // n = 5, all pairs, t = 2: a low threshold (for dropouts) with which the local rule alone cannot stop the lie
  const small = { n: 5, length: 6, threshold: 2 };
  const groupA = ['c0', 'c1', 'c2'];
  const everyone = ['c0', 'c1', 'c2', 'c3', 'c4'];
  const withoutC0 = ['c1', 'c2', 'c3', 'c4'];

  test("without the check (four stages), telling c1, c2 that c0 survived and c3, c4 that it dropped reads c0's input alone", async () => {
    const r = await runRound({ ...small, label: 'lie-legacy', signature: null, untilMasked: true });
    const b = ['c1', 'c2'].map((h) => ({ holder: h, share: r.clients.get(h)!.unmask(everyone, []).get('c0')! }));
    const s = ['c3', 'c4'].map((h) => ({ holder: h, share: r.clients.get(h)!.unmask(withoutC0, ['c0']).get('c0')! }));
    const alone = await unmaskAlone(r, 'c0', b, s);
    expect(Buffer.from(alone).equals(Buffer.from(quantize(r.inputs.get('c0')!, r.params.fixedPoint)))).toBe(true);
  });

  test('with the check, the same lie is refused: c3 and c4 hold too few signatures over their set, and never release an s share of c0', async () => {
    const r = await runRound({ ...small, label: 'lie', untilMasked: true });
    r.server.unmaskRequest();
    const signed = new Map<string, Uint8Array>();
    for (const id of everyone) signed.set(id, await r.clients.get(id)!.signSurvivors(groupA.includes(id) ? everyone : withoutC0));
    // a client signs one set only
    await expect(r.clients.get('c3')!.signSurvivors(everyone)).rejects.toThrow(/a second, different survivor set/);
    // group A vouches for itself: c1 and c2 get c0's and each other's signatures and release b shares of c0
    const b: { holder: string; share: Uint8Array }[] = [];
    for (const h of ['c1', 'c2']) {
      await r.clients.get(h)!.acceptSignatures(new Map(groupA.filter((v) => v !== h).map((v) => [v, signed.get(v)!])));
      b.push({ holder: h, share: r.clients.get(h)!.unmask(everyone, []).get('c0')! });
    }
    // group B: its one other member's signature is fewer than t; A's signatures are over another set (forged for B)
    const c3 = r.clients.get('c3')!;
    await expect(c3.acceptSignatures(new Map([['c4', signed.get('c4')!]]))).rejects.toThrow(/1 valid signatures of its neighbours .* fewer than the threshold 2/);
    await expect(c3.acceptSignatures(new Map([['c4', signed.get('c4')!], ['c1', signed.get('c1')!]]))).rejects.toThrow(/c1's signature of the survivor set does not verify/);
    expect(() => c3.unmask(withoutC0, ['c0'])).toThrow(SecureAggregationError);
    expect(() => r.clients.get('c4')!.unmask(withoutC0, ['c0'])).toThrow(/unmasks only after t of its neighbours signed/);
    // c1 vouched for everyone: asked again to call c0 dropped, it refuses
    expect(() => r.clients.get('c1')!.unmask(withoutC0, ['c0'])).toThrow(/a second unmask request that differs/);
    // what the server holds: t b-shares of c0 and no s-share - c0's masks stay on
    await expect(unmaskAlone(r, 'c0', b, [])).rejects.toThrow(SecureAggregationError);
  });

  test('forged, misattributed and missing signatures are refused; the unmask request must name the set signed', async () => {
    const r = await runRound({ ...small, label: 'forged', untilMasked: true });
    const { survivors } = r.server.unmaskRequest();
    const signed = new Map<string, Uint8Array>();
    for (const id of survivors) signed.set(id, await r.clients.get(id)!.signSurvivors(survivors));
    const c0 = r.clients.get('c0')!;
    const flipped = signed.get('c1')!.slice();
    flipped[5] ^= 1;
    await expect(c0.acceptSignatures(new Map([['c1', flipped], ['c2', signed.get('c2')!]]))).rejects.toThrow(/c1's signature of the survivor set does not verify/);
    await expect(c0.acceptSignatures(new Map([['c1', signed.get('c2')!], ['c2', signed.get('c2')!]]))).rejects.toThrow(/c1's signature .* does not verify/);
    await expect(c0.acceptSignatures(new Map([['c0', signed.get('c0')!], ['c1', signed.get('c1')!]]))).rejects.toThrow(/not a neighbour of c0/);
    await expect(c0.acceptSignatures(new Map([['c1', new Uint8Array(10)], ['c2', signed.get('c2')!]]))).rejects.toThrow(/not 64 bytes/);
    await expect(c0.acceptSignatures(new Map())).rejects.toThrow(/0 valid signatures/);
    expect(() => c0.unmask(survivors, [])).toThrow(/unmasks only after t of its neighbours signed/);
    await c0.acceptSignatures(new Map([['c1', signed.get('c1')!], ['c2', signed.get('c2')!]]));
    expect(() => c0.unmask(survivors.slice(0, 4), [survivors[4]!])).toThrow(/other survivors than the set c0 signed/);
    expect(c0.unmask(survivors, []).size).toBe(4);
    // the server verifies too: a client's bad signature is recorded, the others' forwarded, and the sum released
    const s = await runRound({ ...small, n: 6, label: 'forged-server', untilMasked: true });
    const request = s.server.unmaskRequest();
    for (const id of request.survivors) {
      const signature = await s.clients.get(id)!.signSurvivors(request.survivors);
      if (id === 'c5') signature[0] ^= 1;
      s.server.acceptSignature(id, signature);
    }
    expect(() => s.server.acceptSignature('c0', new Uint8Array(64))).toThrow(/twice/);
    const forwarded = await s.server.signatures();
    expect([...forwarded.keys()]).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    for (const [id, sigs] of forwarded) {
      expect(sigs.has('c5')).toBe(false);
      await s.clients.get(id)!.acceptSignatures(sigs);
      s.server.acceptUnmask(id, s.clients.get(id)!.unmask(request.survivors, request.dropped));
    }
    const result = await s.server.result();
    expect(result.dropped.forged).toEqual(['c5']);
    expect(result.survivors).toEqual(s.ids);
    expectWithin(result.sum, exactSum(s.exact, s.ids, 6), result.bound);
  });
});

describe('secureSum: the protocol among in-process parties', () => {
  test('sums like the plain sum within the bound, on X25519 and P-256, and names who dropped', async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
    const { inputs, exact } = inputsOf(ids, 5, 'secureSum');
    for (const curve of ['X25519', 'P-256'] as const) {
      const r = await secureSum(inputs, { clip: 1, curve, drop: { shares: ['p3'], masked: ['p8'] } });
      expect(r.survivors).toEqual(ids.filter((id) => id !== 'p3' && id !== 'p8'));
      expect(r.dropped.shares).toEqual(['p3']);
      expect(r.dropped.masked).toEqual(['p8']);
      expectWithin(r.sum, exactSum(exact, r.survivors, 5), r.bound);
      const plain = new Float64Array(5);
      for (const id of r.survivors) inputs.get(id)!.forEach((v, j) => (plain[j]! += v));
      for (let j = 0; j < 5; j++) expect(Math.abs(r.sum[j]! - plain[j]!)).toBeLessThan(1e-12);
    }
    await expect(secureSum(inputs, { clip: 0.5 })).rejects.toThrow(/outside \[-clip, clip\] with clip 0\.5/);
    await expect(secureSum(inputs, { clip: 1, threshold: 12 })).rejects.toThrow(InvalidParameterError);
  });
});
