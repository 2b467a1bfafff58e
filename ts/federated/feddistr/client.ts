/**
 * A FedDistr client: it encodes its rows with the encoder the server shares
 * (identity, a PCA or an Autoencoder's encoder, fitted on public data), splits the rows of each task
 * label it holds into base distributions by clustering (k-means or a Gaussian
 * mixture; the number per label chosen by BIC or silhouette within the asked
 * range) and uploads, once, per base distribution its task label, row count,
 * mean and covariance. It keeps which base distribution each of its rows fell
 * in (for evaluation), and the consolidated set the server sends back.
 *
 * Differential privacy (optional, `privacy: { clip, epsilon, delta }`): the
 * encoded rows are clipped to L2 norm `clip` (C). For one base distribution of
 * n rows, under replace-one neighbouring with n public, the mean moves by at
 * most 2C/n in L2 and the second moment (1/n) sum z z' by at most 2C^2/n in
 * Frobenius norm (|z z'|_F = |z|^2 <= C^2), as does its diagonal. Each is
 * released by the Gaussian mechanism with (epsilon/2, delta/2):
 *
 *     sigma = sensitivity * sqrt(2 ln(1.25 / (delta/2))) / (epsilon/2),  epsilon <= 1
 *
 * (Dwork & Roth 2014, Theorem A.1; the two releases compose to (epsilon,
 * delta)). The covariance is the noisy second moment minus the noisy mean's
 * outer product (post-processing), its eigenvalues floored at `regCovar` so it
 * stays positive definite. What the guarantee does not cover: the row counts
 * and the clustering itself (which rows form a base distribution) are released
 * as they are, as in the paper; the guarantee is per base distribution.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { FedmixError, InvalidDataError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { silhouetteScore } from '../../metrics/clustering.js';
import { GaussianMixture } from '../../models/gaussian-mixture.js';
import { KMeans } from '../../models/kmeans.js';
import { selectGaussianMixture } from '../../models/select.js';
import { Rng } from '../../random.js';
import { readArray, readOptions, requireInteger, requireNumber } from '../../validate.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import { gaussianSigma, readGaussianNoise, releaseGaussian, type MomentNoise } from '../gaussian-noise.js';
import { encodeRows } from './encoder.js';
import { CONSOLIDATED, DESCRIBE, DISTRIBUTIONS, FEDDISTR_PROTOCOL, type ConsolidatedPayload, type DescribePayload, type DistributionsPayload } from './messages.js';

export interface FedDistrPrivacy {
  /** C: every encoded row is scaled down to L2 norm at most C */
  clip: number;
  /** the privacy budget per base distribution, in (0, 1] */
  epsilon: number;
  /** in (0, 1) */
  delta: number;
}

export interface FedDistrClientOptions {
  /** the task label (superclass) of every row: integers */
  labels: Int32Array | readonly number[];
  /** Gaussian noise on the means and covariances (see the module's note) */
  privacy?: FedDistrPrivacy;
  /** added to every covariance's diagonal (default 1e-6, scikit-learn's reg_covar) */
  regCovar?: number;
  /**
   * the privacy noise's seed, for tests only: whoever knows it can remove the
   * noise (default: fresh from crypto.getRandomValues, never derived from a
   * public seed)
   */
  seed?: number;
}

export { gaussianSigma };

export class FedDistrClient implements ClientRole {
  readonly id: string;
  readonly protocol = FEDDISTR_PROTOCOL;
  readonly nSamples: number;
  private readonly X: Matrix;
  private readonly labels: Int32Array;
  private readonly privacy: FedDistrPrivacy | undefined;
  private readonly regCovar: number;
  private readonly seed: number | undefined;
  private assigned: Int32Array | undefined;
  private final: ConsolidatedPayload | undefined;

  constructor(id: string, data: MatrixLike, options: FedDistrClientOptions) {
    this.id = requireClientId(id);
    if (options === null || typeof options !== 'object') throw new InvalidParameterError('a FedDistr client needs options { labels } (the task label of every row)');
    const o = readOptions(options, ['labels', 'privacy', 'regCovar', 'seed']);
    this.X = Matrix.from(data).intact();
    if (this.X.nRows === 0) throw new InvalidDataError(`client ${id} has no rows`);
    for (const v of this.X.data) if (!Number.isFinite(v)) throw new InvalidDataError(`client ${id}'s rows hold a value that is not finite (${v})`);
    this.nSamples = this.X.nRows;
    const labels = readArray('labels', o.labels) as number[];
    if (labels.length !== this.nSamples) throw new InvalidDataError(`client ${id} has ${this.nSamples} rows but ${labels.length} task labels`);
    this.labels = Int32Array.from(labels, (v, i) => requireInteger(`labels[${i}]`, v, -(2 ** 31 - 1), 2 ** 31 - 1));
    if (o.privacy !== undefined) this.privacy = readGaussianNoise(o.privacy, 'privacy');
    this.regCovar = requireNumber('regCovar', o.regCovar ?? 1e-6, 0);
    this.seed = o.seed === undefined ? undefined : requireInteger('seed', o.seed, 0, 2 ** 32 - 1);
  }

  /** Which uploaded base distribution each row fell in (after the upload). */
  get assignments(): Int32Array | undefined {
    return this.assigned?.slice();
  }

  /** The consolidated base distributions, once the server has sent them. */
  get consolidated(): ConsolidatedPayload | undefined {
    return this.final;
  }

  respond(request: Message): Message | undefined {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case DESCRIBE.kind:
        return DISTRIBUTIONS.create(this.id, m.round, this.describe(m.payload as DescribePayload));
      case CONSOLIDATED.kind:
        this.final = m.payload as ConsolidatedPayload;
        return undefined;
      default:
        throw new InvalidMessageError(`a FedDistr client does not answer ${m.kind}`);
    }
  }

  private describe(p: DescribePayload): DistributionsPayload {
    if (p.kMin > p.kMax) throw new InvalidMessageError(`kMin ${p.kMin} is above kMax ${p.kMax}`);
    const d = p.encoder.dimension;
    const Z = encodeRows(this.X, p.encoder, `client ${this.id}'s`, InvalidMessageError);
    const n = this.nSamples;
    if (this.privacy) {
      const C = this.privacy.clip;
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += Z[i * d + j]! ** 2;
        const norm = Math.sqrt(s);
        if (norm > C) for (let j = 0; j < d; j++) Z[i * d + j]! *= C / norm;
      }
    }
    const byLabel = new Map<number, number[]>();
    this.labels.forEach((l, i) => {
      let rows = byLabel.get(l);
      if (!rows) byLabel.set(l, (rows = []));
      rows.push(i);
    });
    const taskLabels = [...byLabel.keys()].sort((a, b) => a - b);
    const assigned = new Int32Array(n);
    const bases: DistributionsPayload['bases'] = [];
    const rng = this.privacy ? (this.seed === undefined ? Rng.unpredictable() : new Rng(this.seed)) : undefined;
    try {
      for (const label of taskLabels) {
        const rows = byLabel.get(label)!;
        const sub = new Float64Array(rows.length * d);
        rows.forEach((r, i) => sub.set(Z.subarray(r * d, r * d + d), i * d));
        const clusters = this.cluster(sub, rows.length, d, p);
        const k = Math.max(...clusters) + 1;
        for (let c = 0; c < k; c++) {
          const members: number[] = [];
          clusters.forEach((x, i) => x === c && members.push(i));
          if (members.length === 0) continue;
          const index = bases.length;
          for (const i of members) assigned[rows[i]!] = index;
          bases.push({ label, count: members.length, ...this.moments(sub, members, d, p.covariance, rng) });
        }
      }
    } finally {
      rng?.dispose();
    }
    this.assigned = assigned;
    return { labels: taskLabels.map((label) => ({ label, count: byLabel.get(label)!.length })), nSamples: n, bases };
  }

  /** Cluster labels 0..k-1 for the m rows (row-major m x d) of one task label. */
  private cluster(sub: Float64Array, m: number, d: number, p: DescribePayload): Int32Array {
    const kMax = Math.min(p.kMax, m);
    const kMin = Math.min(p.kMin, kMax);
    if (kMax <= 1) return new Int32Array(m);
    const X = Matrix.fromRows(Array.from({ length: m }, (_, i) => sub.subarray(i * d, i * d + d)));
    const covarianceType = p.covariance === 'full' ? 'full' : 'diag';
    if (p.criterion === 'bic' && p.clustering === 'gmm') {
      const sel = selectGaussianMixture(X, { kMin, kMax, covarianceType, seed: p.seed, regCovar: Math.max(this.regCovar, 1e-6) });
      try {
        return sel.best.predict(X);
      } finally {
        sel.best.dispose();
      }
    }
    if (p.criterion === 'bic') throw new InvalidMessageError("k-means has no likelihood: choose its k by 'silhouette', or cluster with 'gmm' for 'bic'");
    // silhouette: k >= 2 needs at least k + 1 rows; k = 1 wins when no k >= 2 reaches MIN_SILHOUETTE
    let best: { labels: Int32Array; score: number } | undefined = kMin === 1 ? { labels: new Int32Array(m), score: MIN_SILHOUETTE } : undefined;
    for (let k = Math.max(2, kMin); k <= Math.min(kMax, m - 1); k++) {
      let labels: Int32Array;
      try {
        if (p.clustering === 'kmeans') {
          labels = new KMeans({ nClusters: k, seed: p.seed, nInit: 3 }).fitPredict(X);
        } else {
          const gm = new GaussianMixture({ nComponents: k, covarianceType, seed: p.seed, regCovar: Math.max(this.regCovar, 1e-6) });
          try {
            labels = gm.fit(X).predict(X);
          } finally {
            gm.dispose();
          }
        }
      } catch (e) {
        if (e instanceof FedmixError && e.code !== 'WASM') continue;
        throw e;
      }
      if (new Set(labels).size < 2) continue;
      const score = silhouetteScore(X, labels);
      if (!best || score > best.score) best = { labels, score };
    }
    if (!best) return new Int32Array(m);
    // renumber so that the labels used are 0..k-1
    const map = new Map<number, number>();
    return Int32Array.from(best.labels, (l) => {
      if (!map.has(l)) map.set(l, map.size);
      return map.get(l)!;
    });
  }

  /** Mean and covariance (maximum likelihood, plus regCovar on the diagonal) of some rows, with the privacy noise when asked. */
  private moments(sub: Float64Array, members: number[], d: number, kind: 'full' | 'diagonal', rng: Rng | undefined): { mean: Float64Array; covariance: Float64Array } {
    const n = members.length;
    const mean = new Float64Array(d);
    for (const i of members) for (let j = 0; j < d; j++) mean[j]! += sub[i * d + j]! / n;
    const size = kind === 'full' ? d * d : d;
    // the second moment (1/n) sum z z' (or its diagonal)
    const second = new Float64Array(size);
    for (const i of members) {
      const z = sub.subarray(i * d, i * d + d);
      if (kind === 'full') {
        for (let a = 0; a < d; a++) for (let b = a; b < d; b++) second[a * d + b]! += (z[a]! * z[b]!) / n;
      } else {
        for (let a = 0; a < d; a++) second[a]! += (z[a]! * z[a]!) / n;
      }
    }
    if (kind === 'full') for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) second[a * d + b] = second[b * d + a]!;
    let noise: MomentNoise | undefined;
    if (rng && this.privacy) {
      const { clip: C, epsilon, delta } = this.privacy;
      noise = { mean: gaussianSigma((2 * C) / n, epsilon / 2, delta / 2), second: gaussianSigma((2 * C * C) / n, epsilon / 2, delta / 2), rng };
    }
    return releaseGaussian(mean, second, d, kind, noise, this.regCovar);
  }

  dispose(): void {}
}

/** The silhouette a split must reach for k >= 2 to beat k = 1 (silhouette is undefined for one cluster). */
export const MIN_SILHOUETTE = 0.25;
