/**
 * Synthetic data: isotropic Gaussian blobs (scikit-learn's make_blobs) whose
 * centers keep a chosen minimum distance, as the FedGEM paper's sensitivity
 * study generates them: every pair of centers at least `minDistance` apart,
 * and the first two exactly that far, so the hardest pair is always there.
 */
import { InvalidParameterError } from '../errors.js';
import { Rng } from '../random.js';
import { requireInteger, requirePositive } from '../validate.js';
import { Matrix } from './matrix.js';

export interface BlobOptions {
  nClusters: number;
  nFeatures: number;
  /** rows per cluster: one number for all, or one per cluster */
  samplesPerCluster: number | readonly number[];
  /** standard deviation of every cluster in every feature (default 1) */
  clusterStd?: number;
  /** smallest distance between two centers, in units of the feature space (default 0: unconstrained) */
  minDistance?: number;
  /**
   * half-width of the cube the centers are drawn from (default: wide enough
   * that nClusters balls of radius minDistance / 2 fill about a third of it)
   */
  boxHalfWidth?: number;
  seed?: number;
}

export interface Blobs {
  X: Matrix;
  /** the cluster of each row, 0..nClusters-1; rows come cluster by cluster */
  labels: Int32Array;
  /** nClusters x nFeatures, row-major */
  centers: Float64Array;
}

export function makeBlobs(options: BlobOptions): Blobs {
  const k = requireInteger('nClusters', options.nClusters, 1);
  const d = requireInteger('nFeatures', options.nFeatures, 1);
  const per = options.samplesPerCluster;
  const sizes = typeof per === 'number' ? new Array<number>(k).fill(per) : Array.from(per);
  if (sizes.length !== k) throw new InvalidParameterError(`samplesPerCluster has ${sizes.length} sizes for ${k} clusters`);
  sizes.forEach((s, c) => requireInteger(`samplesPerCluster[${c}]`, s, 1));
  const std = requirePositive('clusterStd', options.clusterStd ?? 1);
  const delta = options.minDistance ?? 0;
  if (!(delta >= 0) || !Number.isFinite(delta)) throw new InvalidParameterError(`minDistance must be a finite non-negative number, got ${String(delta)}`);
  // a cube of volume 3 k (delta/2)^d c_d: c_d <= 2^d, so this is generous
  let half = options.boxHalfWidth ?? Math.max(10 * std, (delta / 2) * Math.pow(3 * k, 1 / d) * 2);
  requirePositive('boxHalfWidth', half);
  const rng = new Rng(options.seed);
  try {
    const centers = new Float64Array(k * d);
    const draw = (c: number) => {
      const u = rng.uniform(d);
      for (let j = 0; j < d; j++) centers[c * d + j] = (2 * u[j]! - 1) * half;
    };
    const far = (c: number) => {
      for (let o = 0; o < c; o++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += (centers[c * d + j]! - centers[o * d + j]!) ** 2;
        if (Math.sqrt(s) < delta) return false;
      }
      return true;
    };
    draw(0);
    if (k > 1) {
      // the planted pair: the second center exactly delta from the first
      const dir = rng.normal(d);
      const norm = Math.hypot(...dir) || 1;
      for (let j = 0; j < d; j++) centers[d + j] = centers[j]! + (delta * dir[j]!) / norm;
    }
    for (let c = 2; c < k; c++) {
      let tries = 0;
      do {
        if (++tries % 2000 === 0) half *= 1.1; // crowded: widen the box
        draw(c);
      } while (!far(c));
    }
    const n = sizes.reduce((a, b) => a + b, 0);
    const X = Matrix.zeros(n, d);
    const labels = new Int32Array(n);
    let row = 0;
    for (let c = 0; c < k; c++) {
      const z = rng.normal(sizes[c]! * d);
      for (let i = 0; i < sizes[c]!; i++, row++) {
        labels[row] = c;
        for (let j = 0; j < d; j++) X.data[j * n + row] = centers[c * d + j]! + std * z[i * d + j]!;
      }
    }
    return { X, labels, centers };
  } finally {
    rng.dispose();
  }
}
