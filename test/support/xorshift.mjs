// Plain JavaScript so that scripts (run on dist/ by node) share it with the tests.

/** xorshift32: a seeded stream of unsigned 32-bit integers for test data, independent of the library's generator. */
export function xorshift32(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}
