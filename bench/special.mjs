// digamma over 1e6 values against scipy.special.digamma, same arrays, same run.
// The cost depends on where the arguments lie (below 2, 2..10, above 10), so
// several distributions are measured; the reference time (scipy 19.2 ms)
// matches uniform(0, 10) here. "fedmix" is the public digamma(Float64Array),
// copies into and out of WASM included, against scipy's digamma(x); "out" passes
// a preallocated result array to both (digamma(x, out), digamma(x, out=out));
// "kernel" is the in-place WASM export alone (the copy in included).
import { digamma, Matrix } from '../dist/index.js';
import { begin, median, runPeer, sized, timed, uniform, writeMatrix } from './common.mjs';
import { wasm } from './wasm-handle.mjs';

const N = sized(1_000_000, 10_000);
const REPEATS = sized(9, 1);

const DISTRIBUTIONS = {
  'uniform(0, 10)': (u) => 10 * u(),
  'uniform(0, 1)': (u) => u(),
  'uniform(0, 100)': (u) => 100 * u(),
  'log-uniform(1e-3, 1e3)': (u) => 10 ** (6 * u() - 3),
  'uniform(10, 1000)': (u) => 10 + 990 * u(),
};

const time = (fn) => timed(fn, REPEATS).ms;

export async function run() {
  const results = begin('special', 'npm run bench -- special');
  const inputs = {};
  const data = {};
  Object.entries(DISTRIBUTIONS).forEach(([name, gen], k) => {
    const u = uniform(17 + k);
    data[name] = Float64Array.from({ length: N }, () => gen(u));
    inputs[name] = writeMatrix(`digamma-${k}.f64`, new Matrix(data[name], N, 1));
  });
  const peer = runPeer('special.py', { inputs, repeats: REPEATS });
  const w = wasm();
  const ptr = w.fm_alloc(N * 8);
  const rows = [];
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
    rows.push([name, api.toFixed(2), sp.toFixed(2), `${(sp / api).toFixed(2)}x`, apiOut.toFixed(2), spOut.toFixed(2), `${(spOut / apiOut).toFixed(2)}x`, kernel.toFixed(2)]);
  }
  w.fm_free(ptr, N * 8);
  results.print(
    `digamma over ${N.toExponential(0)} values, ms (median of ${REPEATS}; scipy ${peer.scipy}, one thread)`,
    ['arguments', 'fedmix ms', 'scipy ms', 'speedup', 'fedmix out ms', 'scipy out= ms', 'speedup', 'kernel ms'],
    rows,
  );
  await results.write();
}
