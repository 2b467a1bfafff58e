/**
 * Synthetic data: isotropic Gaussian blobs (scikit-learn's make_blobs) whose
 * centers keep a chosen minimum distance, as the FedGEM paper's sensitivity
 * study generates them: every pair of centers at least `minDistance` apart,
 * and the first two exactly that far, so the hardest pair is always there.
 * Without a minimum distance every center is drawn independently (as
 * scikit-learn's make_blobs does): planting the pair at distance 0 would
 * make clusters 0 and 1 the same cluster.
 */
import { formatValue, InvalidParameterError } from '../errors.js';
import { Rng } from '../random.js';
import { LIMITS, readOptions, requireInteger, requireNumber, requirePositive, requireVector } from '../validate.js';
import { Matrix } from './matrix.js';

export interface BlobOptions {
  /** at most LIMITS.blobClusters (10,000): placing centers apart costs nClusters^2 x nFeatures */
  nClusters: number;
  nFeatures: number;
  /** rows per cluster: one number for all, or one per cluster (all rows x nFeatures at most LIMITS.values) */
  samplesPerCluster: number | readonly number[];
  /** standard deviation of every cluster in every feature (default 1) */
  clusterStd?: number;
  /** smallest distance between two centers, in units of the feature space (default 0: unconstrained, every center drawn independently) */
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
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`makeBlobs needs { nClusters, nFeatures, samplesPerCluster }, got ${formatValue(options)}`);
  const o = readOptions(options, ['nClusters', 'nFeatures', 'samplesPerCluster', 'clusterStd', 'minDistance', 'boxHalfWidth', 'seed']);
  const k = requireInteger('nClusters', o.nClusters, 1, LIMITS.blobClusters);
  const d = requireInteger('nFeatures', o.nFeatures, 1, LIMITS.values);
  const per = o.samplesPerCluster;
  // the whole matrix is checked against the cap before anything is drawn or allocated
  const sizes = typeof per === 'number' ? new Array<number>(k).fill(per) : Array.from(requireVector('samplesPerCluster', per));
  if (sizes.length !== k) throw new InvalidParameterError(`samplesPerCluster has ${sizes.length} sizes for ${k} clusters`);
  sizes.forEach((s, c) => requireInteger(typeof per === 'number' ? 'samplesPerCluster' : `samplesPerCluster[${c}]`, s, 1, LIMITS.values));
  const n = sizes.reduce((a, b) => a + b, 0);
  if (n * d > LIMITS.values || k * d > LIMITS.values) {
    throw new InvalidParameterError(`${n} rows of ${d} features are ${n * d} values; a Matrix holds at most ${LIMITS.values}: use fewer rows or features`);
  }
  const std = requirePositive('clusterStd', o.clusterStd ?? 1);
  const delta = requireNumber('minDistance', o.minDistance ?? 0, 0);
  // a cube of volume 3 k (delta/2)^d c_d: c_d <= 2^d, so this is generous
  let half = o.boxHalfWidth ?? Math.max(10 * std, (delta / 2) * Math.pow(3 * k, 1 / d) * 2);
  requirePositive('boxHalfWidth', half);
  const rng = new Rng(o.seed);
  try {
    const centers = new Float64Array(k * d);
    const draw = (c: number) => {
      const u = rng.uniform(d);
      for (let j = 0; j < d; j++) centers[c * d + j] = (2 * u[j]! - 1) * half;
    };
    const far = (c: number) => {
      if (delta === 0) return true; // unconstrained: no O(k^2 d) distance checks
      for (let o = 0; o < c; o++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += (centers[c * d + j]! - centers[o * d + j]!) ** 2;
        if (Math.sqrt(s) < delta) return false;
      }
      return true;
    };
    draw(0);
    if (k > 1 && delta === 0) draw(1);
    else if (k > 1) {
      // the planted pair: the second center exactly delta from the first
      const dir = rng.normal(d);
      // Math.hypot as always (same centers bit for bit), but not with more arguments than the stack takes
      let ss = 0;
      if (d > 4096) for (let j = 0; j < d; j++) ss += dir[j]! * dir[j]!;
      const norm = (d > 4096 ? Math.sqrt(ss) : Math.hypot(...dir)) || 1;
      for (let j = 0; j < d; j++) centers[d + j] = centers[j]! + (delta * dir[j]!) / norm;
    }
    for (let c = 2; c < k; c++) {
      let tries = 0;
      do {
        if (++tries % 2000 === 0) half *= 1.1; // crowded: widen the box
        draw(c);
      } while (!far(c));
    }
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
