/**
 * Messages on the wire: the binary form is a real Arrow IPC stream (read by
 * apache-arrow itself, and apache-arrow's own streams read back), both
 * encodings decode to the same checked message, sizes are refused before
 * decoding, and no malformed or mutated input escapes as anything but an
 * InvalidMessageError.
 */
import { Field, Float64, Int32, List, makeData, RecordBatch, Schema, Struct, Table, tableFromIPC, tableToIPC, Uint8, Utf8, vectorFromArray } from 'apache-arrow';
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  DEM_PROTOCOL,
  decodeMessage,
  encodeMessage,
  f64Array,
  FEDGEM_PROTOCOL,
  copyMessage,
  defineMessage,
  init,
  InvalidMessageError,
  MDM_PROTOCOL,
  message,
  record,
  wholeNumber,
  type Message,
} from '../ts/index.js';
import { decodeArrow, encodeArrow } from '../ts/federated/messages/arrow-ipc.js';
import { nonZeros } from '../ts/federated/messages/sparse.js';
import { FieldSums } from '../ts/federated/aggregate.js';
import { xorshift32 } from './helpers.js';

beforeAll(async () => {
  await init();
});

const sample = () =>
  message('dem/stats', 'client-7', 4, {
    rows: 120,
    logLikelihood: -321.5,
    nk: new Float64Array([60.5, 59.5]),
    s1: new Float64Array([1, 2, 3, 4]),
    s2: new Float64Array([0.5, 0.25]),
    summary: { absMax: new Float64Array([9, 8]) },
  });

describe('the binary form is an Arrow IPC stream', () => {
  test('apache-arrow reads it: one row, the header as utf8 JSON, each numeric array a list column named by its path', () => {
    const bytes = encodeMessage(sample(), 'binary');
    const t = tableFromIPC(bytes);
    expect(t.numRows).toBe(1);
    expect(t.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toEqual([
      'header: Utf8',
      'payload.nk: List<Float64>',
      'payload.s1: List<Float64>',
      'payload.s2: List<Float64>',
      'payload.summary.absMax: List<Float64>',
    ]);
    const row = t.get(0)!.toJSON() as Record<string, unknown>;
    const header = JSON.parse(row.header as string);
    expect(header).toMatchObject({ protocol: 'fedmix', version: 1, kind: 'dem/stats', from: 'client-7', round: 4 });
    expect(header.payload.nk).toEqual({ $col: 0 });
    expect(Array.from(t.getChild('payload.s1')!.get(0)!.toArray() as Float64Array)).toEqual([1, 2, 3, 4]);
  });

  test("apache-arrow's own stream of the same table decodes to the same message", () => {
    const m = sample();
    const ours = decodeMessage(encodeMessage(m, 'binary'));
    // the same columns built with apache-arrow's builders and written by its writer
    const { header, columns } = decodeArrow(encodeMessage(m, 'binary'));
    const list = (values: Float64Array) => {
      const child = makeData({ type: new Float64(), length: values.length, data: values });
      return makeData({ type: new List(new Field('item', new Float64(), false)), length: 1, nullCount: 0, valueOffsets: new Int32Array([0, values.length]), child });
    };
    const fields = [new Field('header', new Utf8(), false), ...columns.map((c) => new Field(c.name, new List(new Field('item', new Float64(), false)), false))];
    const headerData = vectorFromArray([header], new Utf8()).data[0]!;
    const batch = new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length: 1, nullCount: 0, children: [headerData, ...columns.map((c) => list(c.values as Float64Array))] }));
    const theirs = decodeMessage(tableToIPC(new Table([batch]), 'stream'));
    expect(theirs).toEqual(ours);
  });

  test("its schema message is no larger than apache-arrow's for the same columns (every message carries one)", () => {
    // a schema message's bytes: the continuation marker, its length, then that many
    const schemaBytes = (stream: Uint8Array) => 8 + new DataView(stream.buffer, stream.byteOffset).getInt32(4, true);
    // a DEM reply's float columns, and a secure round's byte columns (keys, share ciphertexts) under longer paths
    const cases: [Record<string, unknown>, 'f64' | 'u8'][] = [
      [{ nk: new Float64Array([1, 2]), s1: new Float64Array(6), s2: new Float64Array(6), summary: { absMax: new Float64Array(3) } }, 'f64'],
      [{ keys: Array.from({ length: 6 }, () => ({ id: 'c12', cPk: new Uint8Array(32).fill(1), sPk: new Uint8Array(32).fill(2), vk: new Uint8Array(32).fill(3) })) }, 'u8'],
    ];
    for (const [payload, type] of cases) {
      const ours = encodeMessage(message('x/y', 'c1', 1, payload), 'binary');
      const { header, columns } = decodeArrow(ours);
      const item = () => new Field('item', type === 'f64' ? new Float64() : new Uint8(), false);
      const values = (v: ArrayBufferView) => (type === 'f64' ? makeData({ type: new Float64(), length: (v as Float64Array).length, data: v as Float64Array }) : makeData({ type: new Uint8(), length: (v as Uint8Array).length, data: v as Uint8Array }));
      const fields = [new Field('header', new Utf8(), false), ...columns.map((c) => new Field(c.name, new List(item()), false))];
      const lists = columns.map((c) => makeData({ type: new List(item()), length: 1, nullCount: 0, valueOffsets: new Int32Array([0, c.values.length]), child: values(c.values) }));
      const batch = new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length: 1, nullCount: 0, children: [vectorFromArray([header], new Utf8()).data[0]!, ...lists] }));
      const theirs = tableToIPC(new Table([batch]), 'stream');
      expect(decodeMessage(theirs)).toEqual(decodeMessage(ours));
      // session 8's first hand-written schemas were 24 (float) to 48 (byte) bytes a column heavier than apache-arrow's
      expect(schemaBytes(ours)).toBeLessThanOrEqual(schemaBytes(theirs));
    }
  });

  test('integer and single-precision arrays keep their types; lists of arrays keep their places', () => {
    const m = message('x/y', 'a', 1, { i: new Int32Array([-1, 2 ** 31 - 1]), u: new Uint32Array([2 ** 32 - 1]), f: new Float32Array([0.1]), b: new Uint8Array([255]), nested: [{ v: new Float64Array([1]) }, { v: new Float64Array([2, 3]) }], empty: new Float64Array(0) });
    const back = decodeMessage(encodeMessage(m, 'binary'));
    expect(back).toEqual(m);
    const p = back.payload as { i: Int32Array; u: Uint32Array; f: Float32Array; b: Uint8Array };
    expect([p.i, p.u, p.f, p.b].map((a) => a.constructor.name)).toEqual(['Int32Array', 'Uint32Array', 'Float32Array', 'Uint8Array']);
  });

  test('a header that is not ASCII travels intact, and like messages share their frame but not their text', () => {
    const a = message('k/x', 'clïent-€', 7, { v: new Float64Array([1, 2]), note: 'ünïcode ✓' });
    const b = message('k/x', 'client-1', 7, { v: new Float64Array([3, 4]), note: 'plain ascii' });
    expect(decodeMessage(encodeMessage(a, 'binary'))).toEqual(a);
    expect(decodeMessage(encodeMessage(b, 'binary'))).toEqual(b);
    expect(decodeMessage(encodeMessage(a, 'binary'))).toEqual(a);
  });

  test('received bytes at an odd offset are copied, at an aligned one viewed', () => {
    const bytes = encodeMessage(sample(), 'binary');
    const odd = new Uint8Array(bytes.length + 1).subarray(1);
    odd.set(bytes);
    expect(decodeMessage(odd)).toEqual(decodeMessage(bytes));
    const nk = (decodeMessage(bytes).payload as { nk: Float64Array }).nk;
    expect(nk.buffer).toBe(bytes.buffer);
  });
});

describe('both encodings', () => {
  test('decode to the same checked message for every declared kind of the algorithms', () => {
    const STATS = DEM_PROTOCOL.exchanges.get('dem/model')!.reply!;
    const m = sample();
    const [a, b] = (['json', 'binary'] as const).map((e) => STATS.read(decodeMessage(encodeMessage(m, e))));
    expect(a).toEqual(b);
    expect((a!.payload as { nk: unknown }).nk).toBeInstanceOf(Float64Array);
    expect(MDM_PROTOCOL.exchanges.size + FEDGEM_PROTOCOL.exchanges.size).toBeGreaterThan(0);
  });

  test('NaN and infinities are refused on the sending side, in either encoding', () => {
    for (const e of ['json', 'binary'] as const) {
      expect(() => encodeMessage(message('k', 'a', 0, { x: new Float64Array([1, NaN]) }), e)).toThrow(/cannot send NaN in payload\.x\[1\] of a k message/);
      expect(() => encodeMessage(message('k', 'a', 0, { x: { y: -Infinity } }), e)).toThrow(/cannot send -Infinity in payload\.x\.y of a k message/);
      expect(() => encodeMessage(message('k', 'a', 0, { x: 1n }), e)).toThrow(InvalidMessageError);
    }
  });

  test('copies for in-process runs share nothing with the sender and count the declared sizes', () => {
    const m = sample();
    const { message: c, bytes } = copyMessage(m);
    expect(c).toEqual(m);
    expect((c.payload as { nk: Float64Array }).nk).not.toBe((m.payload as { nk: Float64Array }).nk);
    expect(bytes).toBeGreaterThan(8 * 10);
    expect(bytes).toBeLessThan(encodeMessage(m, 'binary').length);
  });
});

describe('on receipt', () => {
  test('the size limit is checked before decoding', () => {
    const junk = new Uint8Array(2 ** 20 + 1).fill(0x20);
    expect(() => decodeMessage(junk, { maxBytes: 2 ** 20 })).toThrow(/a message of 1048577 bytes is over the limit of 1048576 bytes/);
    expect(() => decodeMessage('x'.repeat(5000), { maxBytes: 4096 })).toThrow(/over the limit/);
    expect(() => decodeMessage(encodeMessage(sample(), 'binary'), { maxBytes: 200 })).toThrow(/over the limit/);
  });

  test('an unknown protocol version, protocol or kind is a clear InvalidMessageError', () => {
    const ok = JSON.parse(encodeMessage(sample()));
    expect(() => decodeMessage(JSON.stringify({ ...ok, version: 2 }))).toThrow(/version 2 is not supported; this fedmix speaks version 1/);
    // the string "1" is not the version 1: the message must not read "version 1 is not supported; this fedmix speaks version 1"
    expect(() => decodeMessage(JSON.stringify({ ...ok, version: '1' }))).toThrow(/"version" is "1", a string; it must be the number 1/);
    expect(() => decodeMessage(JSON.stringify({ ...ok, version: undefined }))).toThrow(/has no "version"/);
    expect(() => decodeMessage(JSON.stringify({ ...ok, protocol: 'other' }))).toThrow(/not a fedmix message/);
    expect(() => decodeMessage(encodeMessage(sample(), 'binary'), { kind: 'dem/model' })).toThrow(/expected a dem\/model message, got dem\/stats/);
    const T = defineMessage('t/x', record({ n: wholeNumber(0), v: f64Array() }));
    expect(() => T.read(message('t/x', 'a', 0, { n: 1, v: [1], w: 2 }))).toThrow(/w is a field the message does not declare/);
    expect(() => T.read(message('t/x', 'a', 0, { n: -1, v: [1] }))).toThrow(/n is -1; it must be a whole number >= 0/);
    expect(() => T.read(message('t/x', 'a', 0, { n: 1, v: [1, '2'] }))).toThrow(/v\[1\] is "2"; values must be finite numbers/);
    expect(() => T.read(message('t/x', 'a', 0, null))).toThrow(/the payload must be an object/);
  });

  test('every mutation of a binary or JSON message is an InvalidMessageError or decodes to a checkable message, never another error', () => {
    const T = DEM_PROTOCOL.exchanges.get('dem/model')!.reply!;
    const next = xorshift32(99);
    for (const encoding of ['binary', 'json'] as const) {
      const good = encodeMessage(sample(), encoding);
      for (let trial = 0; trial < 3000; trial++) {
        const bad = good.slice(0, trial % 7 === 0 ? next() % good.length : good.length);
        const flips = 1 + (next() % 4);
        for (let f = 0; f < flips && bad.length > 0; f++) bad[next() % bad.length] = next() & 0xff;
        try {
          T.read(decodeMessage(bad));
        } catch (e) {
          if (!(e instanceof InvalidMessageError)) throw new Error(`trial ${trial} (${encoding}): ${String(e)}`);
        }
      }
    }
  });

  test('arbitrary bytes and arbitrary JSON values never escape as anything but an InvalidMessageError', () => {
    const T = DEM_PROTOCOL.exchanges.get('dem/model')!.reply!;
    const safe = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        if (!(e instanceof InvalidMessageError)) throw e;
      }
    };
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (b) => {
        const framed = new Uint8Array(b.length + 8);
        framed.set([0xff, 0xff, 0xff, 0xff]);
        framed.set(b, 4);
        safe(() => T.read(decodeMessage(b)));
        safe(() => T.read(decodeMessage(framed)));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (j) => {
        safe(() => T.read(decodeMessage(JSON.stringify(j))));
        safe(() => T.read(decodeMessage(JSON.stringify({ ...JSON.parse(encodeMessage(sample())), payload: j }))));
      }),
      { numRuns: 2000 },
    );
  });

  test('a binary message whose placeholders do not match its columns is refused', () => {
    const { header, columns } = decodeArrow(encodeMessage(sample(), 'binary'));
    const twice = header.replace('"s2":{"$col":2}', '"s2":{"$col":1}');
    expect(() => decodeMessage(encodeArrow(twice, columns))).toThrow(/missing or repeated column/);
    const unused = header.replace('"s2":{"$col":2}', '"s2":[1]');
    expect(() => decodeMessage(encodeArrow(unused, columns))).toThrow(/carries a column nothing refers to/);
    const list = new List(new Field('item', new Int32(), false));
    expect(String(list)).toBe('List<Int32>');
  });
});

describe('mostly-zero arrays travel sparse', () => {
  const mostlyZero = <T extends Float64Array | Float32Array | Int32Array | Uint32Array>(make: new (n: number) => T): T => {
    const a = new make(1000);
    a[3] = 7;
    a[500] = 2;
    a[999] = 1;
    return a;
  };

  test('as (indices, values) column pairs that apache-arrow reads, back to the same dense arrays of each type', () => {
    const m = message('x/sparse', 'a', 2, { f64: mostlyZero(Float64Array), f32: mostlyZero(Float32Array), i32: mostlyZero(Int32Array), u32: mostlyZero(Uint32Array), dense: new Float64Array(100).fill(1) });
    const bytes = encodeMessage(m, 'binary');
    // 4 x 1000 values would be 20 kB dense; 3 non-zeros each, plus the dense 800 bytes and the framing
    expect(bytes.length).toBeLessThan(4000);
    expect(decodeMessage(bytes)).toEqual(m);
    const t = tableFromIPC(bytes);
    expect(t.schema.fields.map((f) => `${f.name}: ${String(f.type)}`)).toContain('payload.f64.indices: List<Uint32>');
    expect(Array.from(t.getChild('payload.f64.indices')!.get(0)!.toArray() as Uint32Array)).toEqual([3, 500, 999]);
    expect(Array.from(t.getChild('payload.f64.values')!.get(0)!.toArray() as Float64Array)).toEqual([7, 2, 1]);
    expect(JSON.parse(decodeArrow(bytes).header).payload.f64).toEqual({ $sparse: 0, length: 1000 });
    // an array that is not mostly zeros stays one column
    expect(t.getChild('payload.dense')).not.toBeNull();
  });

  test('a decoded sparse array says where its non-zeros are; the checks and sums that use it agree with the dense path', () => {
    const a = mostlyZero(Float64Array);
    const decoded = decodeMessage(encodeMessage(message('x/s', 'a', 1, { a }), 'binary')).payload as { a: Float64Array };
    expect(Array.from(nonZeros(decoded.a)!)).toEqual([3, 500, 999]);
    expect(nonZeros(a)).toBeUndefined();
    const dense = new FieldSums({ a: 1000 });
    const sparse = new FieldSums({ a: 1000 });
    for (let i = 0; i < 3; i++) {
      dense.add({ a });
      sparse.add({ a: decoded.a });
    }
    expect(sparse.release()).toEqual(dense.release());
    // a NaN among the values is refused on the sending side, as in a dense array
    const bad = mostlyZero(Float64Array);
    bad[500] = NaN;
    expect(() => encodeMessage(message('x/s', 'a', 1, { bad }), 'binary')).toThrow(/cannot send NaN in payload.bad\[500\]/);
  });

  test('a zero travels as +0, as on the JSON wire', () => {
    const a = mostlyZero(Float64Array);
    a[10] = -0;
    const back = decodeMessage(encodeMessage(message('x/s', 'a', 1, { a }), 'binary')).payload as { a: Float64Array };
    expect(Object.is(back.a[10], 0)).toBe(true);
    expect(JSON.parse(encodeMessage(message('x/s', 'a', 1, { a }))).payload.a[10]).toBe(0);
  });

  test('malformed sparse pairs are refused: indices out of order or range, lengths that do not match, a float index column', () => {
    const m = message('x/s', 'a', 1, { a: mostlyZero(Float64Array) });
    const { header, columns } = decodeArrow(encodeMessage(m, 'binary'));
    const withIndices = (indices: Uint32Array | Float64Array, values = columns[1]!.values) => encodeArrow(header, [{ ...columns[0]!, values: indices }, { ...columns[1]!, values }]);
    expect(() => decodeMessage(withIndices(new Uint32Array([500, 3, 999])))).toThrow(/sparse indices out of order or out of range/);
    expect(() => decodeMessage(withIndices(new Uint32Array([3, 3, 999])))).toThrow(/sparse indices out of order or out of range/);
    expect(() => decodeMessage(withIndices(new Uint32Array([3, 500, 1000])))).toThrow(/sparse indices out of order or out of range/);
    expect(() => decodeMessage(withIndices(new Uint32Array([3, 500])))).toThrow(/indices and values do not match/);
    expect(() => decodeMessage(withIndices(new Float64Array([3, 500, 999])))).toThrow(/indices and values do not match/);
    expect(() => decodeMessage(encodeArrow(header.replace('"length":1000', '"length":2'), columns))).toThrow(/impossible length/);
    expect(() => decodeMessage(encodeArrow(header.replace('"length":1000', '"length":1.5'), columns))).toThrow(/impossible length/);
    expect(() => decodeMessage(encodeArrow(header.replace('"$sparse":0', '"$sparse":1'), columns))).toThrow(/missing or repeated column/);
  });
});

/** the envelope of a message whose payload holds a typed array of each element type the codec carries */
export type AnyMessage = Message;
