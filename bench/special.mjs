// digamma over 1e6 values against scipy.special.digamma, same arrays, same run.
// The cost depends on where the arguments lie (below 2, 2..10, above 10), so
// several distributions are measured; the reference time (scipy 19.2 ms)
// matches uniform(0, 10) here. "fedmix" is the public digamma(Float64Array),
// copies into and out of WASM included, against scipy's digamma(x); "out" passes
// a preallocated result array to both (digamma(x, out), digamma(x, out=out));
// "kernel" is the in-place WASM export alone (the copy in included).
import { digamma } from '../dist/index.js';
import { median, runPeer, table, writeMatrix } from './common.mjs';
import { wasm } from './wasm-handle.mjs';
import { Matrix } from '../dist/index.js';

const N = 1_000_000;
const REPEATS = 9;

function seeded(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s + 0.5) / 2 ** 32;
  };
}

const DISTRIBUTIONS = {
  'uniform(0, 10)': (u) => 10 * u(),
  'uniform(0, 1)': (u) => u(),
  'uniform(0, 100)': (u) => 100 * u(),
  'log-uniform(1e-3, 1e3)': (u) => 10 ** (6 * u() - 3),
  'uniform(10, 1000)': (u) => 10 + 990 * u(),
};

function time(fn) {
  fn();
  const t = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  return median(t);
}

export function run() {
  const inputs = {};
  const data = {};
  Object.entries(DISTRIBUTIONS).forEach(([name, gen], k) => {
    const u = seeded(17 + k);
    data[name] = Float64Array.from({ length: N }, () => gen(u));
    inputs[name] = writeMatrix(`digamma-${k}.f64`, new Matrix(data[name], N, 1));
  });
  const peer = runPeer('special.py', { inputs, repeats: REPEATS });
  const w = wasm();
  const ptr = w.fm_alloc(N * 8);
  const rows = [];
  const results = [];
  for (const [name, x] of Object.entries(data)) {
    const api = time(() => digamma(x));
    const out = new Float64Array(N);
    const apiOut = time(() => digamma(x, out));
    const kernel = time(() => {
      new Float64Array(w.memory.buffer, ptr, N).set(x);
      w.fm_digamma(ptr, N);
    });
    const sp = median(peer[`${name}/alloc`]);
    const spOut = median(peer[`${name}/out`]);
    results.push({ distribution: name, fedmixMs: api, fedmixOutMs: apiOut, kernelMs: kernel, scipyMs: sp, scipyOutMs: spOut, speedup: sp / api, speedupOut: spOut / apiOut });
    rows.push([name, api.toFixed(2), sp.toFixed(2), `${(sp / api).toFixed(2)}x`, apiOut.toFixed(2), spOut.toFixed(2), `${(spOut / apiOut).toFixed(2)}x`, kernel.toFixed(2)]);
  }
  w.fm_free(ptr, N * 8);
  console.log(`\ndigamma over ${N.toExponential(0)} values, ms (median of ${REPEATS}; scipy ${'1.10'}, one thread)`);
  console.log(table(['arguments', 'fedmix', 'scipy', 'speedup', 'fedmix out', 'scipy out=', 'speedup', 'kernel'], rows));
  return results;
}
