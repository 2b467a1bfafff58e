/**
 * A FedDistr client: it encodes its rows with the encoder the server shares
 * (identity, a PCA or an Autoencoder's encoder, fitted on public data), splits the rows of each task
 * label it holds into base distributions by clustering (k-means or a Gaussian
 * mixture; the number per label chosen by BIC or silhouette within the asked
 * range) and uploads, once, per base distribution its task label, row count,
 * mean and covariance. It keeps which base distribution each of its rows fell
 * in (for evaluation), and the consolidated set the server sends back.
 *
 * The covariance uploaded is the one the server asks for (covariance.ts): the
 * maximum-likelihood one shrunk toward a multiple of the identity (OAS by
 * default), plus a ridge of `regCovar` times the client's average variance.
 * With BIC, every k in the range is a Gaussian mixture's clustering, scored
 * as the Gaussians it would upload: their mixture's log-likelihood on the
 * rows, and for parameters the weights, the means and each shrunk
 * covariance's effective ones; a clustering with a part of fewer than
 * MIN_PART_ROWS rows is not a candidate (one row has no spread, and a ridge
 * alone would make its likelihood as large as the ridge is small).
 *
 * Why an honest upload passes every check of the server (messages.ts): the
 * labels declared are the client's own, once each, with their row counts; the
 * bases split each label's rows without loss, so their counts add up; every
 * mean and covariance is computed in the encoder's dimension; and every
 * covariance is exactly symmetric (its upper triangle mirrored) and positive
 * definite: a centred sum of squares (positive semi-definite) shrunk toward a
 * non-negative multiple of I, plus a ridge regCovar (> 0) times the client's
 * average variance (1 if its rows do not vary; under privacy C^2 / d) on the
 * diagonal; with privacy noise, its eigenvalues are first floored at that
 * ridge. At most MAX_BASES per upload: with L task labels each is split into
 * at most floor(MAX_BASES / L), and a client with more labels than MAX_BASES
 * is refused when it is made, before it joins.
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
 * outer product (post-processing), its eigenvalues floored at the ridge so it
 * stays positive definite, then shrunk by OAS (a function of that covariance
 * and the row count: post-processing too; Ledoit-Wolf reads the rows and is
 * refused under privacy). What the guarantee does not cover: the row counts
 * and the clustering itself (which rows form a base distribution, and the
 * choice of k by BIC on the rows) are released as they are, as in the paper;
 * the guarantee is per base distribution.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { FedmixError, InvalidDataError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { silhouetteScore } from '../../metrics/clustering.js';
import { GaussianMixture } from '../../models/gaussian-mixture.js';
import { KMeans } from '../../models/kmeans.js';
import { Rng } from '../../random.js';
import { readArray, requireInteger } from '../../validate.js';
import { runFits, runFitsAsync, type Threads } from '../../parallel/threads.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import { composeReleases, gaussianSigma, releaseGaussian, type MomentNoise, type ReleasesPrivacy } from '../../privacy/gaussian-noise.js';
import { effectiveParameters, shrinkageIntensity, shrinkInPlace } from './covariance.js';
import { encodeRows } from './encoder.js';
import { factorCovariance, gaussianLogDensity, type CovarianceKind } from '../../distributions/gaussian.js';
import { CONSOLIDATED, DESCRIBE, DISTRIBUTIONS, FEDDISTR_PROTOCOL, MAX_BASES, type ConsolidatedPayload, type DescribePayload, type DistributionsPayload } from './messages.js';
import { clientOptions, type FedDistrClientOptions, type FedDistrPrivacy, type ResolvedFedDistrClientOptions } from './options.js';

export type { FedDistrClientOptions, FedDistrPrivacy } from './options.js';

export { gaussianSigma };

export class FedDistrClient implements ClientRole {
  readonly id: string;
  readonly protocol = FEDDISTR_PROTOCOL;
  readonly nSamples: number;
  private readonly X: Matrix;
  private readonly labels: Int32Array;
  private readonly privacy: FedDistrPrivacy | undefined;
  private readonly seed: number | undefined;
  private readonly threads: Threads | undefined;
  private assigned: Int32Array | undefined;
  private final: ConsolidatedPayload | undefined;

  /** Options checked here (clientOptions), unless they are what it returned; the labels are checked against the rows. */
  constructor(id: string, data: MatrixLike, options: FedDistrClientOptions | ResolvedFedDistrClientOptions) {
    this.id = requireClientId(id);
    if (options === null || typeof options !== 'object') throw new InvalidParameterError('a FedDistr client needs options { labels } (the task label of every row)');
    const o = clientOptions.check(options);
    this.X = Matrix.from(data).intact();
    if (this.X.nRows === 0) throw new InvalidDataError(`client ${id} has no rows`);
    for (const v of this.X.data) if (!Number.isFinite(v)) throw new InvalidDataError(`client ${id}'s rows hold a value that is not finite (${v})`);
    this.nSamples = this.X.nRows;
    const labels = readArray('labels', o.labels) as number[];
    if (labels.length !== this.nSamples) throw new InvalidDataError(`client ${id} has ${this.nSamples} rows but ${labels.length} task labels`);
    this.labels = Int32Array.from(labels, (v, i) => requireInteger(`labels[${i}]`, v, -(2 ** 31 - 1), 2 ** 31 - 1));
    // one base per task label at least: more labels than an upload may carry could never be sent
    const tasks = new Set(this.labels).size;
    if (tasks > MAX_BASES) throw new InvalidDataError(`client ${id} has ${tasks} task labels; an upload carries at most ${MAX_BASES} base distributions`);
    this.privacy = o.privacy;
    this.seed = o.seed;
    this.threads = o.threads;
  }

  /**
   * With privacy, what one upload spends per row (privacyOfUpload): its base
   * distribution's mean and second moment, at the (epsilon, delta) given by
   * basic composition, and composed by RDP (tighter). Undefined without privacy.
   */
  get privacySpent(): ReleasesPrivacy | undefined {
    return this.privacy === undefined ? undefined : privacyOfUpload(this.privacy);
  }

  /** Which uploaded base distribution each row fell in (after the upload). */
  get assignments(): Int32Array | undefined {
    return this.assigned?.slice();
  }

  /** The consolidated base distributions, once the server has sent them. */
  get consolidated(): ConsolidatedPayload | undefined {
    return this.final;
  }

  respond(request: Message): Message | undefined | Promise<Message | undefined> {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case DESCRIBE.kind: {
        const steps = this.describe(m.payload as DescribePayload);
        const threads = this.threads;
        if (threads === undefined || threads === 1) return DISTRIBUTIONS.create(this.id, m.round, runFits(steps, ({ model, X }) => void model.fit(X)));
        return describeOnThreads(steps, threads).then((p) => DISTRIBUTIONS.create(this.id, m.round, p));
      }
      case CONSOLIDATED.kind:
        this.final = m.payload as ConsolidatedPayload;
        return undefined;
      default:
        throw new InvalidMessageError(`a FedDistr client does not answer ${m.kind}`);
    }
  }

  /** The answer, as a computation that asks for the clusterings' fits (runFits). */
  private *describe(p: DescribePayload): Generator<LocalFit, DistributionsPayload, void> {
    if (p.kMin > p.kMax) throw new InvalidMessageError(`kMin ${p.kMin} is above kMax ${p.kMax}`);
    if (!(p.regCovar > 0)) throw new InvalidMessageError(`regCovar is ${p.regCovar}; it must be above 0, or a covariance may be singular`);
    if (this.privacy && p.shrinkage === 'ledoit-wolf') throw new InvalidMessageError("Ledoit-Wolf shrinkage reads the rows beyond the released moments: under privacy use 'oas' (post-processing) or 'none'");
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
    // the ridge, relative to this client's scale (under privacy a public one: rows lie within norm C)
    const scale = this.privacy ? this.privacy.clip ** 2 / d : averageVariance(Z, n, d);
    const fit: Fit = { d, kind: p.covariance, shrinkage: p.shrinkage, ridge: p.regCovar * (scale > 0 ? scale : 1) };
    // every label may be split, yet the upload stays within MAX_BASES
    const kCap = Math.max(1, Math.floor(MAX_BASES / taskLabels.length));
    const assigned = new Int32Array(n);
    const bases: DistributionsPayload['bases'] = [];
    const rng = this.privacy ? (this.seed === undefined ? Rng.unpredictable() : new Rng(this.seed)) : undefined;
    try {
      for (const label of taskLabels) {
        const rows = byLabel.get(label)!;
        const sub = new Float64Array(rows.length * d);
        rows.forEach((r, i) => sub.set(Z.subarray(r * d, r * d + d), i * d));
        const parts = yield* this.cluster(sub, rows.length, p, fit, kCap);
        for (const members of parts) {
          const index = bases.length;
          for (const i of members) assigned[rows[i]!] = index;
          const { mean, covariance } = this.estimate(sub, members, fit, rng);
          bases.push({ label, count: members.length, mean, covariance });
        }
      }
    } finally {
      rng?.dispose();
    }
    this.assigned = assigned;
    return { labels: taskLabels.map((label) => ({ label, count: byLabel.get(label)!.length })), nSamples: n, bases };
  }

  /** The m rows (row-major m x d) of one task label split into base distributions: each part's row indices, none empty. */
  private *cluster(sub: Float64Array, m: number, p: DescribePayload, fit: Fit, kCap: number): Generator<LocalFit, number[][], void> {
    const d = fit.d;
    const kMax = Math.min(p.kMax, m, kCap);
    const kMin = Math.min(p.kMin, kMax);
    const all = [Array.from({ length: m }, (_, i) => i)];
    if (kMax <= 1) return all;
    const X = Matrix.fromRows(Array.from({ length: m }, (_, i) => sub.subarray(i * d, i * d + d)));
    const covarianceType = fit.kind === 'full' ? 'full' : 'diag';
    const mixture = function* (k: number): Generator<LocalFit, Int32Array | undefined, void> {
      const gm = new GaussianMixture({ nComponents: k, covarianceType, seed: p.seed, regCovar: fit.ridge });
      try {
        yield { model: gm, X };
        return gm.predict(X);
      } catch (e) {
        // a candidate that cannot be fitted is no candidate; out of memory ends the client's answer
        if (e instanceof FedmixError && e.code !== 'WASM') return undefined;
        throw e;
      } finally {
        gm.dispose();
      }
    };
    if (p.criterion === 'bic' && p.clustering === 'gmm') {
      const active = Array.from({ length: d }, (_, j) => j).filter((j) => {
        for (let i = 1; i < m; i++) if (sub[i * d + j] !== sub[j]) return true;
        return false;
      });
      let best: { parts: number[][]; bic: number } | undefined;
      for (let k = kMin; k <= kMax; k++) {
        const labels = k === 1 ? new Int32Array(m) : yield* mixture(k);
        if (!labels) continue;
        const parts = partsOf(labels);
        if (parts.length > 1 && parts.some((q) => q.length < MIN_PART_ROWS)) continue;
        const bic = this.bic(sub, m, parts, fit, active);
        if (bic !== undefined && (!best || bic < best.bic)) best = { parts, bic };
      }
      // no admissible candidate (too few rows for kMin parts): one base distribution
      return best?.parts ?? all;
    }
    if (p.criterion === 'bic') throw new InvalidMessageError("k-means has no likelihood: choose its k by 'silhouette', or cluster with 'gmm' for 'bic'");
    // silhouette: k >= 2 needs at least k + 1 rows; k = 1 wins when no k >= 2 reaches MIN_SILHOUETTE
    let best: { labels: Int32Array; score: number } | undefined = kMin === 1 ? { labels: new Int32Array(m), score: MIN_SILHOUETTE } : undefined;
    for (let k = Math.max(2, kMin); k <= Math.min(kMax, m - 1); k++) {
      let labels: Int32Array | undefined;
      if (p.clustering === 'kmeans') {
        const km = new KMeans({ nClusters: k, seed: p.seed, nInit: 3 });
        try {
          yield { model: km, X };
          labels = km.labels;
        } catch (e) {
          if (!(e instanceof FedmixError) || e.code === 'WASM') throw e;
        }
      } else {
        labels = yield* mixture(k);
      }
      if (!labels || new Set(labels).size < 2) continue;
      const score = silhouetteScore(X, labels);
      if (!best || score > best.score) best = { labels, score };
    }
    return best ? partsOf(best.labels) : all;
  }

  /**
   * BIC of a split as it would be uploaded: -2 ln L + p ln m, L the mixture of
   * the parts' Gaussians (weights their shares) on the m rows, p the weights,
   * means and effective covariance parameters. Both over the features that
   * vary among the m rows (`active`), as the Gaussians' marginal there: a
   * feature constant in every row (a dead unit of a ReLU code, a pixel no row
   * inks) has nothing to fit, and a shrunk variance there, a share of each
   * part's own spread, would reward tighter parts for nothing. Undefined when
   * a part's Gaussian cannot be factored.
   */
  private bic(sub: Float64Array, m: number, parts: number[][], fit: Fit, active: readonly number[]): number | undefined {
    const { d, kind } = fit;
    const a = active.length;
    const y = new Float64Array(a);
    // the rows on the active features, row-major m x a
    const rows = new Float64Array(m * a);
    for (let i = 0; i < m; i++) active.forEach((j, t) => (rows[i * a + t] = sub[i * d + j]!));
    let params = parts.length - 1;
    const components = [];
    for (const members of parts) {
      const g = this.estimate(sub, members, fit, undefined);
      const mean = Float64Array.from(active, (j) => g.mean[j]!);
      const marginal = new Float64Array(kind === 'full' ? a * a : a);
      active.forEach((j, t) => {
        if (kind === 'full') active.forEach((k, u) => (marginal[t * a + u] = g.covariance[j * d + k]!));
        else marginal[t] = g.covariance[j]!;
      });
      const factored = factorCovariance(marginal, a, kind);
      if (!factored) return undefined;
      params += effectiveParameters(a, kind, g.rho);
      components.push({ mean, factored, logWeight: Math.log(members.length / m) });
    }
    let logLikelihood = 0;
    const terms = new Float64Array(components.length);
    for (let i = 0; i < m; i++) {
      let most = -Infinity;
      components.forEach((c, k) => {
        terms[k] = c.logWeight + gaussianLogDensity(c.factored, c.mean, rows, i * a, a, kind, y);
        most = Math.max(most, terms[k]!);
      });
      let s = 0;
      for (const t of terms) s += Math.exp(t - most);
      logLikelihood += most + Math.log(s);
    }
    return -2 * logLikelihood + params * Math.log(m);
  }

  /**
   * One base distribution's mean and covariance: the maximum-likelihood
   * covariance (centred), shrunk as asked, plus the ridge on the diagonal;
   * with privacy noise (rng), the noisy moments instead (see the module's note)
   * with their eigenvalues floored at the ridge, shrunk by OAS (or not).
   */
  private estimate(sub: Float64Array, members: number[], fit: Fit, rng: Rng | undefined): { mean: Float64Array; covariance: Float64Array; rho: number } {
    const { d, kind, ridge } = fit;
    const n = members.length;
    const mean = new Float64Array(d);
    for (const i of members) for (let j = 0; j < d; j++) mean[j]! += sub[i * d + j]! / n;
    let covariance: Float64Array;
    if (rng && this.privacy) {
      // the second moment (1/n) sum z z' (or its diagonal), released with noise
      const second = new Float64Array(kind === 'full' ? d * d : d);
      for (const i of members) {
        const z = sub.subarray(i * d, i * d + d);
        if (kind === 'full') {
          for (let a = 0; a < d; a++) for (let b = a; b < d; b++) second[a * d + b]! += (z[a]! * z[b]!) / n;
        } else {
          for (let a = 0; a < d; a++) second[a]! += (z[a]! * z[a]!) / n;
        }
      }
      if (kind === 'full') for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) second[a * d + b] = second[b * d + a]!;
      const { clip: C, epsilon, delta } = this.privacy;
      const noise: MomentNoise = { mean: gaussianSigma((2 * C) / n, epsilon / 2, delta / 2), second: gaussianSigma((2 * C * C) / n, epsilon / 2, delta / 2), rng };
      // the floor keeps it positive definite; the ridge itself is added once, after shrinking
      covariance = releaseGaussian(mean, second, d, kind, noise, ridge).covariance;
      for (let j = 0; j < d; j++) covariance[kind === 'full' ? j * d + j : j]! -= ridge;
    } else {
      covariance = centredCovariance(sub, members, mean, d, kind);
    }
    const rho = shrinkageIntensity(fit.shrinkage, covariance, d, kind, n, rng ? undefined : { values: sub, members, mean });
    shrinkInPlace(covariance, d, kind, rho);
    for (let j = 0; j < d; j++) covariance[kind === 'full' ? j * d + j : j]! += ridge;
    return { mean, covariance, rho };
  }

  dispose(): void {}
}

/** A fit the answer asks for: the model fits X (its fit(), or on threads over X's shards). */
interface LocalFit {
  model: GaussianMixture | KMeans;
  X: Matrix;
}

/** Runs the answer's fits on `threads` threads, started once (a label with rows too few for two threads fits on the calling thread). */
async function describeOnThreads(steps: Generator<LocalFit, DistributionsPayload, void>, threads: Threads): Promise<DistributionsPayload> {
  const { ShardSession } = await import('../../parallel/row-shards.js');
  const session = new ShardSession(threads);
  try {
    return await runFitsAsync(steps, async ({ model, X }) => {
      const shards = await session.shardsOf(X);
      if (shards) await model.fitOnShards(shards);
      else model.fit(X);
    });
  } finally {
    await session.close();
  }
}

/** The silhouette a split must reach for k >= 2 to beat k = 1 (silhouette is undefined for one cluster). */
export const MIN_SILHOUETTE = 0.25;

/** The fewest rows a part of a split chosen by BIC may hold: one row has no spread to estimate. */
export const MIN_PART_ROWS = 2;

/** How every base distribution of one upload is estimated. */
interface Fit {
  d: number;
  kind: CovarianceKind;
  shrinkage: DescribePayload['shrinkage'];
  /** absolute: regCovar times the client's scale */
  ridge: number;
}

/** Cluster labels as parts: the row indices of each label used, labels in ascending order. */
function partsOf(labels: Int32Array): number[][] {
  const byLabel = new Map<number, number[]>();
  labels.forEach((l, i) => {
    const part = byLabel.get(l);
    if (part) part.push(i);
    else byLabel.set(l, [i]);
  });
  return [...byLabel.keys()].sort((a, b) => a - b).map((l) => byLabel.get(l)!);
}

/** The average over the d features of the n rows' variance (row-major): tr(Cov) / d. */
function averageVariance(Z: Float64Array, n: number, d: number): number {
  let total = 0;
  for (let j = 0; j < d; j++) {
    let m = 0;
    for (let i = 0; i < n; i++) m += Z[i * d + j]!;
    m /= n;
    let v = 0;
    for (let i = 0; i < n; i++) v += (Z[i * d + j]! - m) ** 2;
    total += v / n;
  }
  return total / d;
}

/** The maximum-likelihood covariance of some rows about their mean, from centred rows (no cancellation), exactly symmetric. */
function centredCovariance(sub: Float64Array, members: readonly number[], mean: Float64Array, d: number, kind: CovarianceKind): Float64Array {
  const n = members.length;
  const out = new Float64Array(kind === 'full' ? d * d : d);
  const x = new Float64Array(d);
  for (const i of members) {
    for (let j = 0; j < d; j++) x[j] = sub[i * d + j]! - mean[j]!;
    if (kind === 'full') {
      for (let a = 0; a < d; a++) for (let b = a; b < d; b++) out[a * d + b]! += x[a]! * x[b]!;
    } else {
      for (let a = 0; a < d; a++) out[a]! += x[a]! * x[a]!;
    }
  }
  for (let k = 0; k < out.length; k++) out[k]! /= n;
  if (kind === 'full') for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) out[a * d + b] = out[b * d + a]!;
  return out;
}

/**
 * What a FedDistr upload spends per row under `privacy`: a row is in one base
 * distribution (the bases of a client split its rows, so they compose in
 * parallel), whose mean and second moment are two Gaussian releases at
 * (epsilon/2, delta/2) each. Basic composition gives the (epsilon, delta)
 * asked; RDP composes the two more tightly.
 */
export function privacyOfUpload(privacy: { epsilon: number; delta: number }): ReleasesPrivacy {
  return composeReleases([{ epsilon: privacy.epsilon / 2, delta: privacy.delta / 2, count: 2 }]);
}
