// Time per EM iteration of GaussianMixture (diag and full) against scikit-learn,
// measured in the same run, and the achieved GFLOP/s against the machine's
// measured SIMD multiply-add peak. Issue bar: >= 2x scikit-learn at
// (n=1e5, d=10, K=15), no slower at (n=1e5, d=38, K=10).
import { GaussianMixture } from '../dist/index.js';
import { wasm } from './wasm-handle.mjs';
import { begin, blobs, median, runPeer, sized, writeMatrix } from './common.mjs';

export const CONFIGS = sized(
  [
    { n: 100_000, d: 10, k: 15 },
    { n: 100_000, d: 38, k: 10 },
  ],
  [{ n: 2_000, d: 4, k: 3 }],
);
export const LO = 2;
export const HI = sized(12, 4);
const REPEATS = sized(3, 1);

/** Floating-point operations of one EM iteration as fedmix performs it. */
function flopsPerIteration(type, n, d, k) {
  const nk = n * k;
  if (type === 'diag') return nk * d * (4 + 2 + 4) + nk * 30; // E: 4/entry; M: means 2, variances 4; exp+normalize ~30/(row, comp)
  return nk * (d * (d + 1)) + nk * d * (1 + 3) + nk * d * 2 + nk * d * 2 + nk * (d * (d + 1)) + nk * 30; // E: triangle + shift/square; M: means, tile, scatter
}

/** GFLOP/s of 8 independent f64x2 multiply-add chains in the SIMD build. */
export function measurePeak() {
  const w = wasm();
  w.fm_madd_peak(1e6, 1);
  const times = [];
  let flops = 0;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    flops = w.fm_madd_peak(sized(5e7, 1e6), 1 + r);
    times.push(performance.now() - t0);
  }
  return flops / (median(times) * 1e6);
}

/**
 * The common starting point of the EM timings (here, gmm-float32, threads):
 * one EM step from k-means, then fixed initial parameters.
 */
export function emStart(X, k, covarianceType) {
  const g0 = new GaussianMixture({ nComponents: k, covarianceType, maxIter: 1, seed: 0 }).fit(X);
  const init = { weightsInit: g0.weights, meansInit: g0.means, precisionsInit: g0.precisions };
  g0.dispose();
  return init;
}

export async function run() {
  const results = begin('gmm-em', 'npm run bench -- gmm-em');
  const peak = measurePeak();
  const rows = [];
  for (const { n, d, k } of CONFIGS) {
    const X = blobs(n, d, k, 7);
    const data = writeMatrix(`gmm-${n}-${d}.f64`, X);
    for (const type of ['diag', 'full']) {
      const init = emStart(X, k, type);
      const time = (iters) => {
        const t0 = performance.now();
        const g = new GaussianMixture({ nComponents: k, covarianceType: type, tol: 0, maxIter: iters, ...init }).fit(X);
        const dt = performance.now() - t0;
        g.dispose();
        return dt;
      };
      time(LO);
      const ours = [];
      for (let r = 0; r < REPEATS; r++) {
        const a = time(LO);
        const b = time(HI);
        ours.push((b - a) / (HI - LO));
      }
      const peer = runPeer('gmm_em.py', {
        data, n, d, k, covarianceType: type, lo: LO, hi: HI, repeats: REPEATS,
        weightsInit: Array.from(init.weightsInit), meansInit: Array.from(init.meansInit), precisionsInit: Array.from(init.precisionsInit),
      });
      const fm = median(ours);
      const sk = median(peer.msPerIter);
      const gflops = flopsPerIteration(type, n, d, k) / (fm * 1e6);
      rows.push([`${n} x ${d}, K=${k}`, type, fm.toFixed(1), sk.toFixed(1), `${(sk / fm).toFixed(2)}x`, gflops.toFixed(1), `${((100 * gflops) / peak).toFixed(0)}%`]);
    }
  }
  results.print(
    `GaussianMixture EM, ms per iteration (median of ${REPEATS}; one thread; SIMD peak ${peak.toFixed(1)} GFLOP/s)`,
    ['data', 'covariance', 'fedmix ms', 'scikit-learn ms', 'speedup', 'fedmix GFLOP/s', 'of peak'],
    rows,
  );
  await results.write();
}

