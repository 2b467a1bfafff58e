/**
 * The message envelope in both encodings, what the in-process transport sends
 * and counts, the payload schemas' wording, and GMM parameters on receipt.
 * (Arrow IPC itself, fuzzing and the round loop are in messages.test.ts and
 * runtime.test.ts.)
 */
import { beforeAll, expect, test } from 'vitest';
import {
  copyMessage,
  decodeMessage,
  defineMessage,
  defineProtocol,
  encodeMessage,
  f64Array,
  GaussianMixture,
  GMM_PARAMS,
  gmmParams,
  init,
  InProcessTransport,
  InvalidMessageError,
  Matrix,
  message,
  MDM_PROTOCOL,
  parsePayload,
  receiveGmmParams,
  record,
  wholeNumber,
  wireBytes,
  type ClientRole,
  type Encoding,
  type Message,
} from '../ts/index.js';
import { wasm } from '../ts/wasm/loader.js';
import { BinaryInProcess, DEFAULT_MAX_MESSAGE_BYTES } from '../ts/federated/messages/codec.js';
import { densify, nonZeros } from '../ts/federated/messages/sparse.js';
import { blobs } from './helpers.js';

beforeAll(async () => {
  await init();
});

const PING = defineMessage('test/ping', record({ v: f64Array(), n: wholeNumber(0) }));
const PONG = defineMessage('test/pong', record({ v: f64Array(), n: wholeNumber(0) }));
const PROTOCOL = defineProtocol('test', [[PING, PONG]]);

test('a binary message handed over in process decodes as its bytes do, is counted at their length, and shares only what sparse.ts made dense', () => {
  const e = densify(new Uint32Array([3, 700]), new Float64Array([-0, 2.5]), 1200);
  const mostlyZero = new Float32Array(500);
  mostlyZero[7] = -1.25;
  const dense = new Float64Array([1, -0, 3, 1e-300]);
  const m = message('x/in-process', 'client-é', 4, { e, mostlyZero, dense, i32: new Int32Array([-5, 6]), u8: new Uint8Array(3).fill(7), note: 'ünïcode', nested: { list: [1, { z: new Uint32Array([9]) }] } });
  const bytes = encodeMessage(m, 'binary');
  const passed = BinaryInProcess.encode(m);
  expect(passed.bytes).toBe(bytes.length);
  const viaBytes = decodeMessage(bytes);
  const viaPass = passed.decode(DEFAULT_MAX_MESSAGE_BYTES);
  expect(viaPass).toEqual(viaBytes);
  // bit for bit, -0 included, and the same array types
  const p = viaPass.payload as Record<string, Float64Array>;
  const q = viaBytes.payload as Record<string, Float64Array>;
  for (const k of ['e', 'mostlyZero', 'dense', 'i32', 'u8']) {
    expect(p[k]!.constructor).toBe(q[k]!.constructor);
    expect(new Uint8Array(p[k]!.buffer, p[k]!.byteOffset, p[k]!.byteLength)).toEqual(new Uint8Array(q[k]!.buffer, q[k]!.byteOffset, q[k]!.byteLength));
  }
  expect(Object.is(p.dense![1], -0)).toBe(true);
  // what densify made is immutable: handed over as it is, its non-zeros known; everything else is a copy
  expect(p.e).toBe(e);
  expect(nonZeros(p.mostlyZero!)).toEqual(new Uint32Array([7]));
  dense[0] = 42;
  mostlyZero[7] = 3;
  expect(p.dense![0]).toBe(1);
  expect(p.mostlyZero![7]).toBe(-1.25);
  // the receiver's checks: the size limit on the bytes it would have got, and on its sparse arrays once dense
  expect(() => passed.decode(bytes.length - 1)).toThrow(/over the limit of/);
  expect(() => decodeMessage(bytes, { maxBytes: bytes.length - 1 })).toThrow(/over the limit of/);
  const big = message('x/in-process', 'a', 1, { e: densify(new Uint32Array([1]), new Float64Array([1]), 100_000) });
  const bigBytes = encodeMessage(big, 'binary').length;
  expect(() => BinaryInProcess.encode(big).decode(bigBytes)).toThrow(/expands beyond the size limit/);
  expect(() => decodeMessage(encodeMessage(big, 'binary'), { maxBytes: bigBytes })).toThrow(/expands beyond the size limit/);
  // read as a Received's message: under decodeMessage's default limit, not unbounded
  const huge = message('x/in-process', 'a', 1, { e: densify(new Uint32Array([1]), new Float64Array([1]), DEFAULT_MAX_MESSAGE_BYTES / 8 + 1) });
  expect(() => BinaryInProcess.encode(huge).message).toThrow(/expands beyond the size limit/);
  expect(() => decodeMessage(encodeMessage(huge, 'binary'))).toThrow(/expands beyond the size limit/);
  expect(BinaryInProcess.encode(big).message).toEqual(decodeMessage(encodeMessage(big, 'binary')));
  // the sender's checks: what cannot travel is refused as encodeMessage refuses it
  expect(() => BinaryInProcess.encode(message('x/in-process', 'a', 1, { v: new Float64Array([NaN]) }))).toThrow(/only finite numbers travel/);
});

test.each(['json', 'binary'] as const)('%s: messages round-trip, typed arrays included, and are counted in bytes', (encoding: Encoding) => {
  const m = PING.create('client-1', 3, { v: new Float64Array([1.5, -2, 1e-300]), n: 7 });
  const bytes = encodeMessage(m, encoding);
  const back = decodeMessage(bytes, { kind: 'test/ping' });
  expect(back.kind).toBe('test/ping');
  // read through its type, either encoding gives the same message
  expect(PING.read(back)).toEqual(m);
  expect(PING.read(back).payload.v).toBeInstanceOf(Float64Array);
  // JSON text: the same bytes as its UTF-8
  if (encoding === 'json') {
    const text = encodeMessage(m);
    expect(bytes.length).toBe(wireBytes(text));
    expect(decodeMessage(text, 'test/ping')).toEqual({ ...m, payload: { v: [1.5, -2, 1e-300], n: 7 } });
  }
  expect(wireBytes('é')).toBe(2);
});

test.each(['json', 'binary', 'none'] as const)('%s: the in-process transport sends each client its own copy and counts the bytes of what crosses', (encoding) => {
  const got: Message[] = [];
  const client: ClientRole = {
    id: 'a',
    protocol: PROTOCOL,
    respond(m) {
      got.push(m);
      (m.payload as { v: Float64Array }).v[0] = 99; // the client's copy, not the server's
      return PONG.create('a', m.round, { v: new Float64Array([4, 5]), n: 1 });
    },
  };
  const t = new InProcessTransport([client], { encoding });
  expect(t.availableSync()).toEqual(['a']);
  const m = PING.create('server', 1, { v: new Float64Array([1, 2, 3]), n: 0 });
  const ex = t.exchangeSync(1, new Map([['a', m], ['gone', m]]), { replies: true });
  expect(m.payload.v[0]).toBe(1);
  expect(got).toHaveLength(1);
  const reply = PONG.create('a', 1, { v: new Float64Array([4, 5]), n: 1 });
  const size = (x: Message) => (encoding === 'none' ? copyMessage(x).bytes : encodeMessage(x, encoding).length);
  expect(ex.sent.get('a')).toBe(size(m));
  expect(ex.missing).toEqual(new Map([['gone', { kind: 'dropout', reason: 'gone is not among the clients' }]]));
  const r = ex.received.get('a')!;
  expect(r).toHaveLength(1);
  if (encoding === 'none') {
    expect((r[0] as { bytes: number }).bytes).toBe(size(reply));
    expect(PONG.read((r[0] as { message: Message }).message)).toEqual(reply);
  } else if (encoding === 'json') {
    expect((r[0] as Uint8Array).length).toBe(size(reply));
    expect(PONG.read(decodeMessage(r[0] as Uint8Array))).toEqual(reply);
  } else {
    // binary in process: handed over without its bytes, their exact size counted (BinaryInProcess)
    expect(r[0]).toBeInstanceOf(BinaryInProcess);
    expect((r[0] as BinaryInProcess).bytes).toBe(size(reply));
    expect(PONG.read((r[0] as BinaryInProcess).decode(DEFAULT_MAX_MESSAGE_BYTES))).toEqual(reply);
  }
  // a notification is delivered and nothing comes back
  expect(t.exchangeSync(2, new Map([['a', m]]), { replies: false }).received.size).toBe(0);
  expect(() => new InProcessTransport([client, client])).toThrow(/two clients have the id "a"/);
});

test("copyMessage: the copy is what a JSON header and binary columns would carry (nothing shared; -0 as 0, an own '__proto__' key dropped), and its bytes are the header's UTF-8 and the columns'", () => {
  const payload = JSON.parse('{"a":{"__proto__":{"polluted":1},"x":-0},"name":"naïve €😀","v":[1,2]}') as Record<string, unknown>;
  payload.col = new Float64Array([-0, 1.5]);
  const m = message('k', 'a', 1, payload);
  const { message: copy, bytes } = copyMessage(m);
  const p = copy.payload as { a: Record<string, unknown>; name: string; v: number[]; col: Float64Array };
  expect(Object.getPrototypeOf(p.a)).toBe(Object.prototype);
  expect('polluted' in p.a).toBe(false);
  expect(Object.is(p.a.x, 0)).toBe(true);
  expect(p.name).toBe('naïve €😀');
  // typed arrays travel as columns, bit for bit (-0 kept), in a copy of their own
  expect(Object.is(p.col[0], -0)).toBe(true);
  expect(p.col).not.toBe(payload.col);
  expect(p.v).not.toBe(payload.v);
  const header = JSON.parse(encodeMessage(m)) as { payload: Record<string, unknown> };
  header.payload.col = { $col: 0 };
  expect(bytes).toBe(new TextEncoder().encode(JSON.stringify(header)).length + 16);
});

test('malformed envelopes are rejected with InvalidMessageError', () => {
  const ok = JSON.parse(encodeMessage(message('k', 'a', 0, {})));
  const bad = (patch: object) => () => decodeMessage(JSON.stringify({ ...ok, ...patch }));
  expect(() => decodeMessage('{not json')).toThrow(InvalidMessageError);
  expect(bad({ protocol: 'other' })).toThrow(/not a fedmix message/);
  expect(bad({ version: 2 })).toThrow(/version 2 is not supported/);
  expect(bad({ from: '' })).toThrow(/from/);
  expect(bad({ round: -1 })).toThrow(/round/);
  expect(bad({ round: 1.5 })).toThrow(/non-negative integer "round"/);
  expect(() => decodeMessage(JSON.stringify(ok), 'other')).toThrow(/expected a other message, got k/);
  expect(() => decodeMessage(JSON.stringify(ok), { kind: 'other' })).toThrow(/expected a other message, got k/);
  expect(() => decodeMessage(JSON.stringify({ ...ok, pad: 'x'.repeat(2000) }), { maxBytes: 1024 })).toThrow(/bytes is over the limit of 1024 bytes/);
  expect(() => decodeMessage(new Uint8Array([0xff, 0xfe, 0x00]))).toThrow(/neither an Arrow IPC stream nor UTF-8 JSON/);
  for (const encoding of [undefined, 'json', 'binary'] as const) {
    const send = () => (encoding ? encodeMessage(message('k', 'a', 0, { x: [1, NaN] }), encoding) : encodeMessage(message('k', 'a', 0, { x: [1, NaN] })));
    expect(send).toThrow(/cannot send NaN in payload\.x\[1\] of a k message/);
    expect(() => (encoding ? encodeMessage(message('k', 'a', 0, { y: new Float64Array([Infinity]) }), encoding) : encodeMessage(message('k', 'a', 0, { y: new Float64Array([Infinity]) })))).toThrow(/cannot send Infinity/);
  }
});

test("a payload's schema names the field, the value and what it must be", () => {
  const read = (payload: unknown) => () => PING.read(message('test/ping', 'a', 1, payload));
  expect(read({ v: [1, null], n: 0 })).toThrow(/^v\[1\] is null; values must be finite numbers$/);
  expect(read({ v: [1, '2'], n: 0 })).toThrow(/^v\[1\] is "2"; values must be finite numbers$/);
  expect(read({ v: 'x', n: 0 })).toThrow(/^v must be an array of numbers, got string$/);
  expect(read({ v: [], n: -1 })).toThrow(/^n is -1; it must be a whole number >= 0$/);
  expect(read({ v: [], n: 0.5 })).toThrow(/^n is 0\.5; it must be a whole number >= 0$/);
  expect(read({ v: [], n: 0, extra: true })).toThrow(/extra/);
  expect(read('x')).toThrow(/must be an object, got "x"/);
  // the message names no value in `check`: what a private server passes on
  let thrown: unknown;
  try {
    read({ v: [1, NaN], n: 0 })();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(InvalidMessageError);
  expect((thrown as InvalidMessageError).check).toBe('v is malformed');
  // parsePayload names the sender when asked
  expect(() => parsePayload(GMM_PARAMS, {}, 'client 7')).toThrow(/^client 7: /);
});

test('a payload missing a declared field says which field is missing, not that it must be an object', () => {
  const init = MDM_PROTOCOL.exchanges.get('mdm/init-request')!.reply!;
  let thrown: unknown;
  try {
    init.read(message('mdm/init-stats', 'a', 1, { p: [1], q: [1] }));
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(InvalidMessageError);
  expect((thrown as Error).message).not.toMatch(/must be an object/);
  expect((thrown as Error).message).toMatch(/^e (is missing|is required)/);
});

test.each(['json', 'binary'] as const)('%s: GMM parameters survive the wire and are validated on receipt', (encoding) => {
  const X = blobs(300, 3, 3, 4);
  for (const covarianceType of ['full', 'tied', 'diag', 'spherical'] as const) {
    const gm = new GaussianMixture({ nComponents: 3, covarianceType, seed: 1 }).fit(X);
    const wire = decodeMessage(encodeMessage(message('m', 'c', 0, gmmParams(gm)), encoding)).payload;
    const back = receiveGmmParams(wire, 'client c', 3);
    expect(back.scoreSamples(X)).toEqual(gm.scoreSamples(X));
    gm.dispose();
    back.dispose();
  }
});

test('bad parameters: typed error naming the sender, nothing allocated', () => {
  const gm = new GaussianMixture({ nComponents: 2, covarianceType: 'full', seed: 1 }).fit(blobs(100, 2, 2, 1));
  const p = JSON.parse(encodeMessage(message('m', 'c', 0, gmmParams(gm)))).payload;
  gm.dispose();
  const before = wasm().fm_heap_in_use();
  const bad = (patch: object) => () => receiveGmmParams({ ...p, ...patch }, 'client 7', 2);
  expect(bad({ covarianceType: 'dense' })).toThrow(/^client 7: covarianceType is "dense"; it must be one of "full", "tied", "diag", "spherical"$/);
  expect(bad({ nFeatures: 3 })).toThrow(/^client 7: the model has 3 features but this federation has 2$/);
  expect(bad({ nComponents: 1.5 })).toThrow(/^client 7: nComponents is 1\.5; it must be a whole number in \[1, 1048576\]$/);
  expect(bad({ weights: [0.5] })).toThrow(/^client 7: weights has 1 values; expected 2$/);
  expect(bad({ weights: [1.5, -0.5] })).toThrow(/weights\[1\] is -0.5; mixture weights must be positive/);
  expect(bad({ weights: [0, 1] })).toThrow(/must be positive/);
  expect(bad({ weights: [0.5, 0.6] })).toThrow(/sum to 1.1/);
  expect(bad({ means: [1, 2, 3, null] })).toThrow(/^client 7: means\[3\] is null; values must be finite numbers$/);
  expect(bad({ covariances: [1, 2, 2, 1, 1, 0, 0, 1] })).toThrow(/client 7: covariance of component 0 is not positive definite/);
  expect(bad({ covariances: [1, 0.5, 0, 1, 1, 0, 0, 1] })).toThrow(/not symmetric/);
  expect(bad({ precisions: [1] })).toThrow(/^client 7: .*precisions/);
  expect(() => receiveGmmParams('x', 'client 7')).toThrow(InvalidMessageError);
  expect(() => receiveGmmParams('x', 'client 7')).toThrow(/^client 7: /);
  // without a sender, the reasons name none (the runtime adds the client's id)
  expect(() => receiveGmmParams({ ...p, nFeatures: 3 }, undefined, 2)).toThrow(/^the model has 3 features but this federation has 2$/);
  expect(wasm().fm_heap_in_use()).toBe(before);
});

test('Matrix.vstack concatenates rows', () => {
  const m = Matrix.vstack([Matrix.fromRows([[1, 2]]), Matrix.fromRows([[3, 4], [5, 6]])]);
  expect(m.toRows()).toEqual([[1, 2], [3, 4], [5, 6]]);
  expect(() => Matrix.vstack([Matrix.fromRows([[1]]), Matrix.fromRows([[1, 2]])])).toThrow(/2 columns, the first has 1/);
});

test("a request's privacy step travels in both encodings and is checked on receipt", async () => {
  const { message, withPrivacy, checkEnvelope } = await import('../ts/federated/messages/envelope.js');
  const { decodeMessage, encodeMessage } = await import('../ts/federated/messages/codec.js');
  const m = withPrivacy(message('dem/model', 'server', 3, { x: new Float64Array([1, 2]) }), { mechanism: 'gaussian', noiseMultiplier: 1.1, samplingRate: 0.25 });
  for (const encoding of ['json', 'binary'] as const) {
    const back = decodeMessage(encodeMessage(m, encoding));
    expect(back.privacy).toEqual({ mechanism: 'gaussian', noiseMultiplier: 1.1, samplingRate: 0.25 });
  }
  const s = withPrivacy(m, { mechanism: 'skellam', mu: 40, l1: 12, l2: 3.5 });
  expect(decodeMessage(encodeMessage(s, 'binary')).privacy).toEqual({ mechanism: 'skellam', mu: 40, l1: 12, l2: 3.5 });
  // absent stays absent
  expect('privacy' in decodeMessage(encodeMessage(message('dem/model', 'server', 3, {}), 'json'))).toBe(false);
  // malformed steps are refused, typed, naming the field
  for (const bad of [
    { mechanism: 'gaussian', noiseMultiplier: 0, samplingRate: 1 },
    { mechanism: 'gaussian', noiseMultiplier: 1, samplingRate: 1.5 },
    { mechanism: 'gaussian', noiseMultiplier: 1, samplingRate: 1, extra: 1 },
    { mechanism: 'skellam', mu: -1, l1: 1, l2: 1 },
    { mechanism: 'laplace', scale: 1 },
    'gaussian',
    null,
  ]) {
    expect(() => checkEnvelope({ ...message('k', 's', 1, {}), privacy: bad })).toThrow(/"privacy"/);
  }
});
