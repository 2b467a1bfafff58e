/**
 * Matrix: shape checks, accessors, and the Arrow bridge (every numeric column
 * type, chunked columns, nulls, non-numeric columns, column selection, toArrow).
 */
import {
  Float16,
  Float32,
  Float64,
  Int32,
  makeVector,
  Table,
  tableFromArrays,
  Type,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { beforeAll, describe, expect, test } from 'vitest';
import { FedmixError, GaussianMixture, init, InvalidDataError, InvalidParameterError, Matrix } from '../ts/index.js';
import { blobs } from './helpers.js';
import { wasm } from '../ts/wasm/loader.js';
import { withScope } from '../ts/wasm/memory.js';

/** Runs `fn` and returns what it threw (failing when it did not throw). */
function thrown(fn: () => unknown): Error {
  let result: unknown;
  try {
    result = fn();
  } catch (e) {
    return e as Error;
  }
  const got = result instanceof Matrix ? `a ${result.nRows} x ${result.nCols} Matrix ${JSON.stringify(result.toRows())}` : String(result);
  throw new Error(`expected an error, but it returned ${got}`);
}

const rows = [
  [1, 2, 3],
  [4, 5, 6],
  [7, 8, 9.5],
  [-1, 0, 1e300],
];

describe('construction and shape checks', () => {
  test('fromRows stores column-major values', () => {
    const m = Matrix.fromRows(rows);
    expect(m.nRows).toBe(4);
    expect(m.nCols).toBe(3);
    expect(Array.from(m.data)).toEqual([1, 4, 7, -1, 2, 5, 8, 0, 3, 6, 9.5, 1e300]);
  });

  test('fromRows accepts typed-array rows', () => {
    const m = Matrix.fromRows([Float32Array.of(1.5, 2), Int32Array.of(3, -4)]);
    expect(m.toRows()).toEqual([
      [1.5, 2],
      [3, -4],
    ]);
  });

  test('fromColumns is the transpose of fromRows', () => {
    const byCols = Matrix.fromColumns([
      [1, 4, 7, -1],
      new Float64Array([2, 5, 8, 0]),
      [3, 6, 9.5, 1e300],
    ]);
    const byRows = Matrix.fromRows(rows);
    expect(byCols.nRows).toBe(4);
    expect(byCols.nCols).toBe(3);
    expect(Array.from(byCols.data)).toEqual(Array.from(byRows.data));
  });

  test('empty inputs give 0-sized matrices', () => {
    const a = Matrix.fromRows([]);
    expect([a.nRows, a.nCols, a.data.length]).toEqual([0, 0, 0]);
    const b = Matrix.fromColumns([]);
    expect([b.nRows, b.nCols, b.data.length]).toEqual([0, 0, 0]);
    const z = Matrix.zeros(3, 2);
    expect([z.nRows, z.nCols]).toEqual([3, 2]);
    expect(Array.from(z.data)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  test('fromRows with a row of another length names the row', () => {
    const e = thrown(() => Matrix.fromRows([[1, 2], [3, 4], [5]]));
    expect(e).toBeInstanceOf(InvalidDataError);
    expect(e).toBeInstanceOf(FedmixError);
    expect((e as FedmixError).code).toBe('INVALID_DATA');
    expect(e.message).toMatch(/row 2 has 1 values but row 0 has 2/);
    const longer = thrown(() => Matrix.fromRows([[1, 2], [3, 4, 5]]));
    expect(longer).toBeInstanceOf(InvalidDataError);
    expect(longer.message).toMatch(/row 1 has 3 values but row 0 has 2/);
  });

  test('fromColumns with a column of another length names the column', () => {
    const e = thrown(() => Matrix.fromColumns([[1, 2, 3], [4, 5, 6], [7, 8]]));
    expect(e).toBeInstanceOf(InvalidDataError);
    expect(e.message).toMatch(/column 2 has 2 values but column 0 has 3/);
  });

  test('the constructor checks the shape against the data length', () => {
    expect(() => new Matrix(new Float64Array(6), 2, 3)).not.toThrow();
    const e = thrown(() => new Matrix(new Float64Array(5), 2, 3));
    expect(e).toBeInstanceOf(InvalidDataError);
    expect(e.message).toMatch(/2 x 3 matrix needs 6 values, got 5/);
    for (const [n, d] of [
      [-1, 3],
      [2, -3],
      [1.5, 2],
      [2, NaN],
    ] as const) {
      const bad = thrown(() => new Matrix(new Float64Array(0), n, d));
      expect(bad).toBeInstanceOf(InvalidDataError);
      expect(bad.message).toMatch(/shape must be two non-negative integers/);
    }
  });

  test('Matrix.from: a Matrix as is, rows, tables; anything else rejected', () => {
    const m = Matrix.fromRows(rows);
    expect(Matrix.from(m)).toBe(m);
    expect(Array.from(Matrix.from(rows).data)).toEqual(Array.from(m.data));
    expect(Array.from(Matrix.from(m.toArrow()).data)).toEqual(Array.from(m.data));
    const e = thrown(() => Matrix.from({ length: 2 } as never));
    expect(e).toBeInstanceOf(InvalidDataError);
  });
});

describe('a matrix whose buffer was transferred', () => {
  test('is refused with an InvalidDataError wherever it is used, empty or not', () => {
    for (const [n, d] of [[4, 2], [0, 2], [0, 0]] as const) {
      const m = Matrix.zeros(n, d);
      structuredClone(m.data.buffer, { transfer: [m.data.buffer] });
      expect(() => Matrix.from(m)).toThrow(InvalidDataError);
      expect(() => new GaussianMixture({ nComponents: 1 }).fit(m)).toThrow(/matrix's ArrayBuffer was transferred \(detached\); build a new Matrix/);
    }
  });

  test('any typed array found detached when it is copied into WASM memory is an InvalidDataError, and nothing is left allocated', async () => {
    await init();
    const a = new Float64Array(4);
    structuredClone(a.buffer, { transfer: [a.buffer] });
    const before = wasm().fm_heap_in_use();
    expect(() => withScope((s) => s.f64From(a))).toThrow(/ArrayBuffer was transferred \(detached\) before it could be copied into WASM memory/);
    expect(wasm().fm_heap_in_use()).toBe(before);
  });
});

describe('accessors', () => {
  const m = Matrix.fromRows(rows);

  test('get(i, j)', () => {
    for (let i = 0; i < rows.length; i++) for (let j = 0; j < 3; j++) expect(m.get(i, j)).toBe(rows[i]![j]);
  });

  test('column(j) is a view of the data', () => {
    const c = new Matrix(m.data.slice(), 4, 3);
    const col = c.column(1);
    expect(Array.from(col)).toEqual([2, 5, 8, 0]);
    col[0] = 42;
    expect(c.get(0, 1)).toBe(42);
  });

  test('row(i) is a copy', () => {
    const c = new Matrix(m.data.slice(), 4, 3);
    const r = c.row(2);
    expect(r).toBeInstanceOf(Float64Array);
    expect(Array.from(r)).toEqual([7, 8, 9.5]);
    r[0] = 42;
    expect(c.get(2, 0)).toBe(7);
  });

  test('toRows round-trips fromRows', () => {
    expect(m.toRows()).toEqual(rows);
  });

  test('selectRows: given rows in the given order, repeats allowed', () => {
    const s = m.selectRows([3, 0, 0, 2]);
    expect(s.nRows).toBe(4);
    expect(s.nCols).toBe(3);
    expect(s.toRows()).toEqual([rows[3], rows[0], rows[0], rows[2]]);
    const none = m.selectRows([]);
    expect([none.nRows, none.nCols]).toEqual([0, 3]);
    expect(m.selectRows(Int32Array.of(1)).toRows()).toEqual([rows[1]]);
  });

  test('selectRows rejects indices out of range', () => {
    for (const bad of [4, -1, NaN]) {
      const e = thrown(() => m.selectRows([0, bad]));
      expect(e).toBeInstanceOf(InvalidParameterError);
      expect(e.message).toContain(`row index ${bad}`);
      expect(e.message).toMatch(/0\.\.3/);
    }
  });

  test('selectRows rejects a non-integer index (instead of filling the row with NaN)', () => {
    const e = thrown(() => m.selectRows([0, 1.5]));
    expect(e).toBeInstanceOf(InvalidParameterError);
    expect(e.message).toMatch(/row index 1\.5/);
  });

  test('selectColumns: given columns in the given order', () => {
    const s = m.selectColumns([2, 0]);
    expect([s.nRows, s.nCols]).toEqual([4, 2]);
    expect(s.toRows()).toEqual(rows.map((r) => [r[2], r[0]]));
    // a copy, not a view
    s.data[0] = -7;
    expect(m.get(0, 2)).toBe(3);
  });

  test('selectColumns of no columns keeps the row count', () => {
    const none = m.selectColumns([]);
    expect([none.nRows, none.nCols, none.data.length]).toEqual([4, 0, 0]);
  });

  test('selectColumns rejects indices out of range or not integers, like selectRows', () => {
    // out of range alone: must not silently give a 0-row matrix
    for (const bad of [3, -1, 0.5, NaN]) {
      const e = thrown(() => m.selectColumns([bad]));
      expect(e, `column index ${bad}`).toBeInstanceOf(InvalidParameterError);
      expect(e.message).toContain(`column index ${bad}`);
    }
    // next to a valid column: the parameter is wrong, not the data
    const e = thrown(() => m.selectColumns([0, 7]));
    expect(e).toBeInstanceOf(InvalidParameterError);
    expect(e.message).toMatch(/column index 7/);
  });
});

describe('fromArrow', () => {
  test('Float64, Float32, Int32, Int64 and Uint8 columns become exact f64 values', () => {
    const table = tableFromArrays({
      f64: new Float64Array([0.1, -2.5, 1e308, -0]),
      f32: new Float32Array([0.1, -2.5, 3.25, 16777216]),
      i32: new Int32Array([-2147483648, -1, 0, 2147483647]),
      i64: new BigInt64Array([-(2n ** 53n), -1n, 0n, 2n ** 53n]),
      u8: new Uint8Array([0, 1, 128, 255]),
    });
    expect(String(table.getChild('f32')!.type)).toBe('Float32');
    expect(String(table.getChild('i64')!.type)).toBe('Int64');
    expect(String(table.getChild('u8')!.type)).toBe('Uint8');
    const m = Matrix.fromArrow(table);
    expect([m.nRows, m.nCols]).toEqual([4, 5]);
    expect(Array.from(m.column(0))).toEqual([0.1, -2.5, 1e308, -0]);
    // Float32 values widened exactly (0.1f is not 0.1)
    expect(Array.from(m.column(1))).toEqual(Array.from(new Float32Array([0.1, -2.5, 3.25, 16777216])));
    expect(m.get(0, 1)).not.toBe(0.1);
    expect(Array.from(m.column(2))).toEqual([-2147483648, -1, 0, 2147483647]);
    expect(Array.from(m.column(3))).toEqual([-(2 ** 53), -1, 0, 2 ** 53]);
    expect(Array.from(m.column(4))).toEqual([0, 1, 128, 255]);
  });

  test('vectors built with makeVector and vectorFromArray, in a new Table', () => {
    const table = new Table({
      a: makeVector(new Int32Array([5, 6, 7])),
      b: vectorFromArray([0.5, 1.5, 2.5], new Float32()),
      c: vectorFromArray([-1, -2, -3], new Int32()),
      d: makeVector(new BigInt64Array([10n, 20n, 30n])),
      e: makeVector(new Uint8Array([1, 2, 3])),
      f: makeVector(new BigUint64Array([0n, 2n ** 40n, 7n])),
    });
    const m = Matrix.fromArrow(table);
    expect(m.toRows()).toEqual([
      [5, 0.5, -1, 10, 1, 0],
      [6, 1.5, -2, 20, 2, 2 ** 40],
      [7, 2.5, -3, 30, 3, 7],
    ]);
  });

  test('Float16 columns are decoded, not read as raw bits', () => {
    const halfs = [1.5, -2, 0.25, 65504, 0];
    const v = vectorFromArray(halfs, new Float16());
    expect(v.type.typeId).toBe(Type.Float);
    const m = Matrix.fromArrow(new Table({ h: v, x: makeVector(new Float64Array([1, 2, 3, 4, 5])) }));
    expect(Array.from(m.column(0))).toEqual(halfs);
    expect(Array.from(m.column(1))).toEqual([1, 2, 3, 4, 5]);
  });

  test('a Float16 column in several chunks', () => {
    const v = vectorFromArray([1, 2], new Float16()).concat(vectorFromArray([-0.5, 4096], new Float16()));
    expect(v.data.length).toBe(2);
    expect(Array.from(Matrix.fromArrow(new Table({ h: v })).column(0))).toEqual([1, 2, -0.5, 4096]);
  });

  test('a chunked column (concatenated vectors) is read completely and in order', () => {
    const v = vectorFromArray([1, 2, 3], new Float64())
      .concat(vectorFromArray([4, 5], new Float64()))
      .concat(vectorFromArray([6, 7, 8, 9], new Float64()));
    expect(v.data.length).toBe(3);
    const w = makeVector(new Int32Array([1, 2, 3]))
      .concat(makeVector(new Int32Array([4, 5])))
      .concat(makeVector(new Int32Array([6, 7, 8, 9])));
    const table = new Table({ a: v, b: w });
    expect(table.batches.length).toBeGreaterThan(1);
    const m = Matrix.fromArrow(table);
    expect(m.nRows).toBe(9);
    expect(Array.from(m.column(0))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(Array.from(m.column(1))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test('tables concatenated with table.concat: several record batches, every column type', () => {
    const part = (start: number, len: number) => {
      const r = Array.from({ length: len }, (_, i) => start + i);
      return tableFromArrays({
        f64: Float64Array.from(r, (v) => v + 0.5),
        f32: Float32Array.from(r, (v) => v * 0.25),
        i32: Int32Array.from(r, (v) => -v),
        i64: BigInt64Array.from(r, (v) => BigInt(v) * 1000n),
        u8: Uint8Array.from(r, (v) => v % 256),
      });
    };
    const table = part(0, 5).concat(part(5, 3), part(8, 300));
    expect(table.batches.length).toBe(3);
    expect(table.numRows).toBe(308);
    const m = Matrix.fromArrow(table);
    expect([m.nRows, m.nCols]).toEqual([308, 5]);
    for (let i = 0; i < 308; i++) {
      expect(Array.from(m.row(i))).toEqual([i + 0.5, i * 0.25, i === 0 ? 0 : -i, i * 1000, i % 256]);
    }
  });

  test('a sliced table (chunks with offsets) gives the sliced rows', () => {
    const t = tableFromArrays({ a: Float64Array.from({ length: 10 }, (_, i) => i) }).concat(
      tableFromArrays({ a: Float64Array.from({ length: 10 }, (_, i) => 10 + i) }),
    );
    const s = t.slice(7, 14);
    expect(s.numRows).toBe(7);
    expect(Array.from(Matrix.fromArrow(s).column(0))).toEqual([7, 8, 9, 10, 11, 12, 13]);
  });

  test('a column with nulls is rejected, naming the column', () => {
    const table = new Table({
      ok: vectorFromArray([1, 2, 3], new Float64()),
      holes: vectorFromArray([1, null, 3], new Float64()),
    });
    const e = thrown(() => Matrix.fromArrow(table));
    expect(e).toBeInstanceOf(InvalidDataError);
    expect(e.message).toMatch(/column "holes" has 1 null value/);
    // nulls in a later chunk only
    const chunked = new Table({ c: vectorFromArray([1, 2], new Int32()).concat(vectorFromArray([null, 4, null], new Int32())) });
    const e2 = thrown(() => Matrix.fromArrow(chunked));
    expect(e2).toBeInstanceOf(InvalidDataError);
    expect(e2.message).toMatch(/column "c" has 2 null value/);
    // the other column alone is fine
    expect(Array.from(Matrix.fromArrow(table, { columns: ['ok'] }).data)).toEqual([1, 2, 3]);
  });

  test('a Utf8 column is rejected unless left out with { columns }', () => {
    const table = new Table({
      name: vectorFromArray(['a', 'b', 'c'], new Utf8()),
      x: makeVector(new Float64Array([1, 2, 3])),
      y: makeVector(new Int32Array([4, 5, 6])),
    });
    const e = thrown(() => Matrix.fromArrow(table));
    expect(e).toBeInstanceOf(InvalidDataError);
    expect(e.message).toMatch(/column "name" has Arrow type Utf8, not a number type/);
    expect(e.message).toMatch(/\{ columns: \[\.\.\.\] \}/);
    const m = Matrix.fromArrow(table, { columns: ['x', 'y'] });
    expect(m.toRows()).toEqual([
      [1, 4],
      [2, 5],
      [3, 6],
    ]);
    // tableFromArrays turns strings into a dictionary column: rejected too
    const dict = tableFromArrays({ s: ['a', 'b'], x: new Float64Array([1, 2]) });
    expect(thrown(() => Matrix.fromArrow(dict))).toBeInstanceOf(InvalidDataError);
    expect(Array.from(Matrix.fromArrow(dict, { columns: ['x'] }).data)).toEqual([1, 2]);
  });

  test('an unknown column name is rejected with the known names', () => {
    const table = tableFromArrays({ x: new Float64Array([1, 2]), y: new Float64Array([3, 4]) });
    const e = thrown(() => Matrix.fromArrow(table, { columns: ['x', 'z'] }));
    expect(e).toBeInstanceOf(InvalidParameterError);
    expect(e.message).toMatch(/no column "z"/);
    expect(e.message).toMatch(/"x", "y"/);
  });

  test('columns selects a subset in the given order', () => {
    const table = tableFromArrays({
      a: new Float64Array([1, 2, 3]),
      b: new Int32Array([10, 20, 30]),
      c: new Float32Array([100, 200, 300]),
    });
    const m = Matrix.fromArrow(table, { columns: ['c', 'a'] });
    expect([m.nRows, m.nCols]).toEqual([3, 2]);
    expect(m.toRows()).toEqual([
      [100, 1],
      [200, 2],
      [300, 3],
    ]);
    const empty = Matrix.fromArrow(table, { columns: [] });
    expect([empty.nRows, empty.nCols]).toEqual([3, 0]);
  });
});

describe('toArrow', () => {
  const m = Matrix.fromRows(rows);

  test('round trip with names: values, Float64 type, names', () => {
    const t = m.toArrow(['alpha', 'beta', 'gamma']);
    expect(t.numRows).toBe(4);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['alpha', 'beta', 'gamma']);
    for (const f of t.schema.fields) {
      expect(f.type.typeId).toBe(Type.Float);
      expect(String(f.type)).toBe('Float64');
    }
    expect(Array.from(t.getChild('beta')!.toArray() as Float64Array)).toEqual([2, 5, 8, 0]);
    const back = Matrix.fromArrow(t);
    expect(Array.from(back.data)).toEqual(Array.from(m.data));
    const reordered = Matrix.fromArrow(t, { columns: ['gamma', 'alpha'] });
    expect(reordered.toRows()).toEqual(rows.map((r) => [r[2], r[0]]));
  });

  test('default names x0, x1, ...', () => {
    const t = m.toArrow();
    expect(t.schema.fields.map((f) => f.name)).toEqual(['x0', 'x1', 'x2']);
    expect(Matrix.fromArrow(t).toRows()).toEqual(rows);
  });

  test('the table does not share memory with the matrix', () => {
    const c = new Matrix(m.data.slice(), 4, 3);
    const t = c.toArrow();
    c.data[0] = 99;
    expect(t.getChild('x0')!.get(0)).toBe(1);
  });

  test('duplicate or wrong-count names are rejected', () => {
    const dup = thrown(() => m.toArrow(['a', 'b', 'a']));
    expect(dup).toBeInstanceOf(InvalidParameterError);
    expect(dup.message).toMatch(/distinct/);
    const few = thrown(() => m.toArrow(['a', 'b']));
    expect(few).toBeInstanceOf(InvalidParameterError);
    expect(few.message).toMatch(/toArrow got 2 names for 3 columns/);
    const many = thrown(() => m.toArrow(['a', 'b', 'c', 'd']));
    expect(many).toBeInstanceOf(InvalidParameterError);
    expect(many.message).toMatch(/4 names for 3 columns/);
  });
});

describe('GaussianMixture on an Arrow Table', () => {
  beforeAll(async () => {
    await init();
  });

  test('fit accepts a Table and gives identical results to the same data as a Matrix', () => {
    const X = blobs(400, 3, 3, 11);
    // a chunked table of mixed numeric types holding exactly X's values
    const half = 150;
    const t = X.selectRows(Array.from({ length: half }, (_, i) => i))
      .toArrow(['a', 'b', 'c'])
      .concat(X.selectRows(Array.from({ length: 400 - half }, (_, i) => half + i)).toArrow(['a', 'b', 'c']));
    expect(t.batches.length).toBe(2);
    for (const covarianceType of ['full', 'diag'] as const) {
      const opts = { nComponents: 3, covarianceType, seed: 4 };
      const fromMatrix = new GaussianMixture(opts).fit(X);
      const fromTable = new GaussianMixture(opts).fit(t);
      expect(fromTable.weights).toEqual(fromMatrix.weights);
      expect(fromTable.means).toEqual(fromMatrix.means);
      expect(fromTable.covariances).toEqual(fromMatrix.covariances);
      expect(fromTable.lowerBound).toBe(fromMatrix.lowerBound);
      expect(fromTable.nIter).toBe(fromMatrix.nIter);
      // every method takes a table too
      expect(fromTable.scoreSamples(t)).toEqual(fromMatrix.scoreSamples(X));
      expect(fromTable.predict(t)).toEqual(fromMatrix.predict(X));
      expect(fromTable.bic(t)).toBe(fromMatrix.bic(X));
      fromMatrix.dispose();
      fromTable.dispose();
    }
  });

  test('fit on a Table with integer columns equals the Matrix of the converted values', () => {
    const n = 120;
    const a = Int32Array.from({ length: n }, (_, i) => (i % 3) * 50 + ((i * 7) % 11));
    const b = BigInt64Array.from({ length: n }, (_, i) => BigInt(((i * 13) % 17) - (i % 3) * 40));
    const t = tableFromArrays({ a, b });
    const X = Matrix.fromColumns([Float64Array.from(a), Float64Array.from(b, (v) => Number(v))]);
    const g1 = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(t);
    const g2 = new GaussianMixture({ nComponents: 3, seed: 1 }).fit(X);
    expect(g1.means).toEqual(g2.means);
    expect(g1.lowerBound).toBe(g2.lowerBound);
    g1.dispose();
    g2.dispose();
  });
});
