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
