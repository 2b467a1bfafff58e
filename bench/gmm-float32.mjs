// GaussianMixture's precision: 'float32' against 'float64' (and scikit-learn
// fitting float32 rows), ms per EM iteration at gmm-em's sizes. Issue 27 item
// 2's bar: at least 1.6x over float64 for diag and full at d = 10 and d = 38.
// Its own suite (not a second table of gmm-em): BENCHMARKS.md shows it once
// its results are committed (bench/BENCHMARKS.template.md, "float32").
import { GaussianMixture } from '../dist/index.js';
import { begin, blobs, median, runPeer, sized, writeMatrix } from './common.mjs';
import { CONFIGS, emStart, HI, LO } from './gmm-em.mjs';

export async function run() {
  const results = begin('gmm-float32', 'npm run bench -- gmm-float32');
  results.print(...(await float32Table(CONFIGS)));
  await results.write();
}

/**
 * precision 'float32' against 'float64' (and scikit-learn fitting float32 rows):
 * ms per EM iteration, the two precisions alternated within each repeat so
 * that the machine's drift hits both alike; the speed-up is the median of the
 * per-repeat ratios.
 */
async function float32Table(configs) {
  const repeats = sized(5, 1);
  const rows = [];
  for (const { n, d, k } of configs) {
    const X = blobs(n, d, k, 7);
    const data = writeMatrix(`gmm-${n}-${d}.f64`, X);
    for (const type of ['diag', 'full']) {
      const init = emStart(X, k, type);
      // the process's CPU time, not the wall clock: on a shared machine the
      // fit's own work (one thread) is what the other processes do not inflate
      const time = (precision, iters) => {
        const t0 = process.cpuUsage();
        const g = new GaussianMixture({ nComponents: k, covarianceType: type, tol: 0, maxIter: iters, precision, ...init }).fit(X);
        const dt = process.cpuUsage(t0);
        g.dispose();
        return (dt.user + dt.system) / 1000;
      };
      const perIter = (precision) => {
        const a = time(precision, LO);
        return (time(precision, HI) - a) / (HI - LO);
      };
      perIter('float64');
      perIter('float32');
      const [f64, f32, ratios] = [[], [], []];
      for (let r = 0; r < repeats; r++) {
        const [a, b] = r % 2 ? [perIter('float32'), perIter('float64')].reverse() : [perIter('float64'), perIter('float32')];
        f64.push(a);
        f32.push(b);
        ratios.push(a / b);
      }
      const peer = runPeer('gmm_em.py', {
        data, n, d, k, covarianceType: type, lo: LO, hi: HI, repeats: sized(3, 1), dtype: 'float32',
        weightsInit: Array.from(init.weightsInit), meansInit: Array.from(init.meansInit), precisionsInit: Array.from(init.precisionsInit),
      });
      const sk = median(peer.msPerIter);
      const fm32 = median(f32);
      rows.push([`${n} x ${d}, K=${k}`, type, median(f64).toFixed(1), fm32.toFixed(1), `${median(ratios).toFixed(2)}x`, sk.toFixed(1), `${(sk / fm32).toFixed(2)}x`]);
    }
  }
  return [
    `GaussianMixture EM, precision 'float32' against 'float64', ms of CPU per iteration (median of ${repeats}, alternated; one thread)`,
    ['data', 'covariance', 'float64 ms', 'float32 ms', 'float32 speedup', 'scikit-learn float32 ms', 'vs scikit-learn float32'],
    rows,
  ];
}
