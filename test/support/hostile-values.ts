/**
 * Values no public function should take, each made fresh per use (a function
 * may write into what it is given): what the adversarial audit of the API
 * passed where numbers, strings, arrays, options and matrices are expected.
 */
import { Matrix } from '../../ts/index.js';

function nested(depth: number): unknown[] {
  let a: unknown[] = [1];
  for (let i = 0; i < depth; i++) a = [a];
  return a;
}

/** A Proxy whose every trap throws (what getters, `in`, instanceof, Object.keys run). */
export function trapAll<T extends object>(target: T): T {
  const trap = () => {
    throw new Error('hostile proxy trap');
  };
  return new Proxy(target, {
    get: trap,
    set: trap,
    has: trap,
    ownKeys: trap,
    getOwnPropertyDescriptor: trap,
    getPrototypeOf: trap,
    setPrototypeOf: trap,
    defineProperty: trap,
    deleteProperty: trap,
    isExtensible: trap,
    preventExtensions: trap,
    apply: trap,
    construct: trap,
  });
}

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** An object that throws from any property read, but not from instanceof or Object.keys. */
function throwingGetters(): object {
  return new Proxy(
    {},
    {
      get(_t, key) {
        throw new Error(`getter ${String(key)} throws`);
      },
    },
  );
}

function cyclic(): unknown[] {
  const a: unknown[] = [1];
  a.push(a);
  return a;
}

function hugeLength(n: number): unknown[] {
  const a: unknown[] = [];
  a.length = n;
  return a;
}

/** A Matrix whose ArrayBuffer was transferred away: data.length is 0, the shape still 4 x 2. */
function detachedMatrix(): Matrix {
  const m = Matrix.zeros(4, 2);
  structuredClone(m.data.buffer, { transfer: [m.data.buffer] });
  return m;
}

/** A Matrix over a resizable buffer, shrunk after construction: data.length 2, the shape 4 x 2. */
function shrunkMatrix(): Matrix {
  const buffer = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer & { resize(n: number): void })(64, { maxByteLength: 64 });
  const m = new Matrix(new Float64Array(buffer), 4, 2);
  buffer.resize(16);
  return m;
}

export const HOSTILE: ReadonlyArray<readonly [string, () => unknown]> = [
  ['null', () => null],
  ['undefined', () => undefined],
  ['0', () => 0],
  ['-0', () => -0],
  ['-1', () => -1],
  ['1.5', () => 1.5],
  ['NaN', () => NaN],
  ['Infinity', () => Infinity],
  ['-Infinity', () => -Infinity],
  ['2^31', () => 2 ** 31],
  ['2^32 + 2', () => 2 ** 32 + 2],
  ['2^53', () => 2 ** 53],
  ['1e300', () => 1e300],
  ['-1e300', () => -1e300],
  ['""', () => ''],
  ['"abc"', () => 'abc'],
  ['"1"', () => '1'],
  ['a 1e6-character string', () => 'x'.repeat(1e6)],
  ['5n', () => 5n],
  ['2n ** 80n', () => 2n ** 80n],
  ['a Symbol', () => Symbol('hostile')],
  ['true', () => true],
  ['false', () => false],
  ['[]', () => []],
  ['[NaN]', () => [NaN]],
  ['[[]]', () => [[]]],
  ['sparse [1, , 3]', () => [1, , 3]], // eslint-disable-line no-sparse-arrays
  ['new Array(5)', () => new Array(5)],
  ['an array of length 2^32 - 1', () => hugeLength(2 ** 32 - 1)],
  ['an array of length 1e8', () => hugeLength(1e8)],
  ['{ length: 2^32 + 2 }', () => ({ length: 2 ** 32 + 2 })],
  ['{ length: 1e9 }', () => ({ length: 1e9 })],
  ['{ length: -1 }', () => ({ length: -1 })],
  ['an array nested 10,000 deep', () => nested(10_000)],
  ['a cyclic array', cyclic],
  ['[[1, 2], [3]]', () => [[1, 2], [3]]],
  ['[["a", "b"]]', () => [['a', 'b']]],
  ['[[Symbol]]', () => [[Symbol('in a row')]]],
  ['{}', () => ({})],
  ['a frozen {}', () => Object.freeze({})],
  ['Object.create(null)', () => Object.create(null)],
  ['an object whose getters throw', throwingGetters],
  ['a Proxy that throws on every trap', () => trapAll({})],
  ['a Proxy of an array that throws on every trap', () => trapAll([1, 2, 3])],
  ['a Proxy of a Matrix that throws on every trap', () => trapAll(Matrix.zeros(2, 2))],
  ['a revoked Proxy', revoked],
  ['a function', () => () => 1],
  ['a Date', () => new Date(0)],
  ['a Map', () => new Map([[1, 2]])],
  ['Float64Array []', () => new Float64Array(0)],
  ['Float64Array [NaN, Infinity]', () => Float64Array.of(NaN, Infinity)],
  ['Int8Array [1, 2]', () => Int8Array.of(1, 2)],
  ['BigInt64Array [1n]', () => BigInt64Array.of(1n)],
  ['a 0 x 0 Matrix', () => Matrix.zeros(0, 0)],
  ['a 1 x 1 Matrix', () => Matrix.zeros(1, 1)],
  ['a Matrix look-alike', () => Object.assign(Object.create(Matrix.prototype), { data: new Float64Array(16), nRows: 40, nCols: 1 })],
  ['a Matrix whose buffer was transferred', detachedMatrix],
  ['a Matrix whose buffer was shrunk', shrunkMatrix],
  ['"{\\"format\\": 1}"', () => '{"format": 1}'],
];

/**
 * What a tampered saved file can hold in place of a field, an array or one
 * entry of one (test/hostile-api.test.ts tries them on every class's saved
 * model): each made from the honest value and the file around it.
 */
export interface Tamper {
  name: string;
  /** the kind of value it replaces: a number, a flat array of numbers, a matrix (an array of d x d blocks), an array of rows or objects, a string, a boolean, an object, or anything */
  on: 'number' | 'numbers' | 'matrix' | 'list' | 'string' | 'boolean' | 'object' | 'any';
  /** the value put in its place; `raw(token)` for a number only JSON text can spell (1e999 parses as Infinity) */
  make: (value: any, siblings: Record<string, unknown> | unknown[], key: string | number, d: number) => unknown;
  /** holds a value JSON text cannot (NaN, Infinity): the file goes in as an object, as a JavaScript caller would pass it */
  object?: boolean;
}

const RAW = '\u0000raw:';
/** A token written into the file's text as it is (not as a string). */
export const raw = (token: string): string => `${RAW}${token}\u0000`;
/** The file as JSON text, with raw() tokens unquoted. */
export function fileText(file: unknown): string {
  return JSON.stringify(file).replace(/"\\u0000raw:([^"\\]*)\\u0000"/g, '$1');
}

const scaleAll = (v: number[], by: number) => v.map((x) => (x === 0 ? by : x * by));
/** Sibling fields (or entries) of the same kind as `key`'s, in order: what a swap exchanges it with. */
function sameKind(siblings: Record<string, unknown> | unknown[], key: string | number, like: (v: unknown) => boolean): unknown[] {
  const entries = Array.isArray(siblings) ? siblings.map((v, i) => [i, v] as const) : Object.entries(siblings);
  return entries.filter(([k, v]) => k !== key && like(v)).map(([, v]) => v);
}
const isNumbers = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number');
/** Entry (i, j) of each d x d block set by `f(block, a_ii, a_jj)` (and (j, i), symmetric unless told). */
function eachBlock(v: number[], d: number, i: number, j: number, value: (aii: number, ajj: number, aij: number) => number, symmetric = true): number[] {
  const out = v.slice();
  for (let o = 0; o + d * d <= out.length; o += d * d) {
    const x = value(out[o + i * d + i]!, out[o + j * d + j]!, out[o + i * d + j]!);
    out[o + i * d + j] = x;
    if (symmetric) out[o + j * d + i] = x;
  }
  return out;
}

/** An entry of a list (a row, or an object such as a base distribution) with its arrays of numbers (or only the first) times 1e300. */
function scaleInside(entry: unknown, firstOnly: boolean): unknown {
  if (isNumbers(entry)) return scaleAll(entry as number[], 1e300);
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return entry;
  let done = false;
  return Object.fromEntries(
    Object.entries(entry).map(([k, v]) => {
      if (!isNumbers(v) || (firstOnly && done)) return [k, v];
      done = true;
      return [k, scaleAll(v as number[], 1e300)];
    }),
  );
}

export const TAMPERS: readonly Tamper[] = [
  // one number (a field, or an entry of an array)
  { name: 'zero', on: 'number', make: () => 0 },
  { name: 'negated', on: 'number', make: (v: number) => (v === 0 ? -1 : -v) },
  { name: 'times 1e300', on: 'number', make: (v: number) => (v === 0 ? 1e300 : v * 1e300) },
  { name: 'times 1e-300', on: 'number', make: (v: number) => (v === 0 ? 1e-300 : v * 1e-300) },
  { name: 'plus one', on: 'number', make: (v: number) => v + 1 },
  { name: '1.5', on: 'number', make: () => 1.5 },
  { name: '2^53 + 2', on: 'number', make: () => 2 ** 53 + 2 },
  { name: 'the largest double', on: 'number', make: () => Number.MAX_VALUE },
  { name: 'minus the largest double', on: 'number', make: () => -Number.MAX_VALUE },
  { name: 'the smallest subnormal', on: 'number', make: () => 5e-324 },
  { name: '1e999 in the text (Infinity)', on: 'number', make: () => raw('1e999') },
  { name: '-1e999 in the text (-Infinity)', on: 'number', make: () => raw('-1e999') },
  { name: '"NaN" as a string', on: 'number', make: () => 'NaN' },
  { name: '"Infinity" as a string', on: 'number', make: () => 'Infinity' },
  { name: 'null', on: 'number', make: () => null },
  { name: 'NaN', on: 'number', make: () => NaN, object: true },
  { name: 'Infinity', on: 'number', make: () => Infinity, object: true },
  { name: '-Infinity', on: 'number', make: () => -Infinity, object: true },
  { name: 'swapped with the next number field', on: 'number', make: (v: number, s, k) => sameKind(s, k, (x) => typeof x === 'number' && x !== v)[0] ?? v },
  // a whole array of numbers
  { name: 'all zero', on: 'numbers', make: (v: number[]) => v.map(() => 0) },
  { name: 'all negated', on: 'numbers', make: (v: number[]) => v.map((x) => -x) },
  { name: 'all times 1e300', on: 'numbers', make: (v: number[]) => scaleAll(v, 1e300) },
  { name: 'all times 1e-300', on: 'numbers', make: (v: number[]) => scaleAll(v, 1e-300) },
  { name: 'all doubled (weights summing to 2)', on: 'numbers', make: (v: number[]) => v.map((x) => 2 * x) },
  { name: 'all times 1e154', on: 'numbers', make: (v: number[]) => scaleAll(v, 1e154) },
  { name: 'one entry fewer', on: 'numbers', make: (v: number[]) => v.slice(0, -1) },
  { name: 'one entry more', on: 'numbers', make: (v: number[]) => [...v, v[v.length - 1]] },
  { name: 'empty', on: 'numbers', make: () => [] },
  { name: 'reversed', on: 'numbers', make: (v: number[]) => v.slice().reverse() },
  { name: 'nested one level deeper', on: 'numbers', make: (v: number[]) => [v] },
  { name: 'as strings', on: 'numbers', make: (v: number[]) => v.map(String) },
  { name: 'swapped with the next array field', on: 'numbers', make: (v: number[], s, k) => sameKind(s, k, isNumbers)[0] ?? v },
  { name: 'swapped with the last array field', on: 'numbers', make: (v: number[], s, k) => sameKind(s, k, isNumbers).at(-1) ?? v },
  // an array of d x d blocks (covariances, precision factors, a base's covariance)
  { name: 'not positive definite (|a_01| > sqrt(a_00 a_11))', on: 'matrix', make: (v: number[], _s, _k, d) => eachBlock(v, d, 0, 1, (a, b) => 2 * Math.sqrt(Math.abs(a * b)) + 1) },
  { name: 'not symmetric', on: 'matrix', make: (v: number[], _s, _k, d) => eachBlock(v, d, 0, 1, (a, b, x) => x + Math.sqrt(Math.abs(a * b)) + 1, false) },
  { name: 'both triangles filled', on: 'matrix', make: (v: number[], _s, _k, d) => eachBlock(v, d, d - 1, 0, (a, b, x) => (x === 0 ? 0.5 * Math.sqrt(Math.abs(a * b)) : x), false) },
  { name: 'a diagonal entry zero', on: 'matrix', make: (v: number[], _s, _k, d) => eachBlock(v, d, 1, 1, () => 0) },
  { name: 'a diagonal entry negated', on: 'matrix', make: (v: number[], _s, _k, d) => eachBlock(v, d, 1, 1, (a) => -a) },
  { name: 'the last block times 1e-200', on: 'matrix', make: (v: number[], _s, _k, d) => v.map((x, i) => (i >= v.length - d * d ? x * 1e-200 : x)) },
  // an array of rows or of objects
  { name: 'one fewer', on: 'list', make: (v: unknown[]) => v.slice(0, -1) },
  { name: 'one more', on: 'list', make: (v: unknown[]) => [...v, v[v.length - 1]] },
  { name: 'empty', on: 'list', make: () => [] },
  { name: 'reversed', on: 'list', make: (v: unknown[]) => v.slice().reverse() },
  { name: "every entry's number arrays times 1e300", on: 'list', make: (v: unknown[]) => v.map((e) => scaleInside(e, false)) },
  { name: "every entry's first number array times 1e300", on: 'list', make: (v: unknown[]) => v.map((e) => scaleInside(e, true)) },
  { name: 'the first row one shorter', on: 'list', make: (v: unknown[]) => (Array.isArray(v[0]) ? [(v[0] as unknown[]).slice(0, -1), ...v.slice(1)] : v.slice(1)) },
  // everything else
  { name: 'another word', on: 'string', make: () => 'tampered' },
  { name: 'empty string', on: 'string', make: () => '' },
  { name: 'a number', on: 'string', make: () => 1 },
  { name: 'flipped', on: 'boolean', make: (v: boolean) => !v },
  { name: '"true" as a string', on: 'boolean', make: () => 'true' },
  { name: 'null', on: 'object', make: () => null },
  { name: 'empty object', on: 'object', make: () => ({}) },
  { name: 'an unknown key added', on: 'object', make: (v: object) => ({ ...v, tampered: 1 }) },
  { name: 'deleted', on: 'any', make: () => undefined },
];
