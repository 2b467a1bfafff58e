/**
 * A FedGEM client: an isotropic Gaussian mixture over its own rows (known
 * shared variance, fixed local weights, K_c known), kept in WASM memory with
 * its rows across rounds. Without a variance of its own it first reports the
 * spread of its rows around its local k-means clusters (the server pools the
 * clients' spreads into the variance estimate, server.ts) and takes the
 * variance the server sends. Each round it runs L EM steps on its means and
 * uploads, per component, the maximizer and the radius of its uncertainty ball
 * (crates/fedmix-core/src/fedgem/client.rs derives it); then continues from the
 * centers the server sends back. At the end it uploads its centers, scores the
 * server's candidate global models on its validation rows when phi is tuned,
 * and takes its final centers and memberships.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidMessageError, InvalidParameterError, NotFittedError } from '../../errors.js';
import { silhouetteScore } from '../../metrics/clustering.js';
import { KMeans, nearestCenters } from '../../models/kmeans.js';
import { Rng } from '../../random.js';
import { requireVector, seedParts } from '../../validate.js';
import { FEDGEM_CLIENT_NEW_OPTIONS } from '../../wasm/abi.generated.js';
import { coreConstant } from '../../wasm/constants.js';
import { OwnedHandle, requireWasmMemory, withScope } from '../../wasm/memory.js';
import type { Message } from '../messages/envelope.js';
import { parsePayload } from '../messages/schema.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import {
  BALLS,
  CANDIDATES,
  FEDGEM_PROTOCOL,
  FINAL,
  FINISH,
  MAX_FEATURE,
  RESULT,
  ROUND,
  SILHOUETTES,
  SPREAD,
  SPREAD_SUMS,
  receiveCenters,
  type BallsPayload,
  type CandidatesPayload,
  type CentersPayload,
  type SpreadSumsPayload,
  type FinalPayload,
  type ResultPayload,
  type SilhouettesPayload,
} from './messages.js';
import { centerNoiseStd } from './privacy.js';
import { checkClientOptions, type FedGEMClientOptions, type ResolvedFedGEMClientOptions } from './options.js';
import { clipRows } from '../../privacy/gaussian-noise.js';

export type { FedGEMClientOptions } from './options.js';

const LABEL = { what: 'this FedGEM client', renew: 'create a new client', redo: 'create the client again' };

export class FedGEMClient implements ClientRole {
  readonly id: string;
  readonly protocol = FEDGEM_PROTOCOL;
  readonly nComponents: number;
  readonly nFeatures: number;
  readonly nSamples: number;
  /** rounds whose component shares fell below privacy.minShare (the noise then under-covers) */
  privacyBoundMisses = 0;
  private readonly handle: OwnedHandle;
  private readonly options: ResolvedFedGEMClientOptions;
  private readonly validation: Matrix | undefined;
  private readonly training: Matrix;
  private readonly weights: Float64Array;
  private readonly noise: Rng | undefined;
  private lastCounts: Float64Array;
  /** sigma^2 in use: the client's own, or the server's once sent (undefined before) */
  private sigma2: number | undefined;
  private readonly ownVariance: boolean;
  private spreadSums: SpreadSumsPayload | undefined;
  private result: { memberships: Int32Array; globalCenters: Float64Array; estimatedK: number; phi: number } | undefined;

  /**
   * `data` trains the model; `validation` (optional) scores the server's
   * candidates when phi is tuned (the training rows are used without it).
   */
  constructor(id: string, data: MatrixLike, options: FedGEMClientOptions | ResolvedFedGEMClientOptions, validation?: MatrixLike) {
    this.id = requireClientId(id);
    // checked once (checkClientOptions), unless they are what it returned; frozen, so later changes to the caller's object do not reach the client
    const o = checkClientOptions(options);
    let x = Matrix.from(data);
    const k = o.nComponents;
    if (x.nRows < 2 * k) {
      throw new InvalidDataError(`client ${id} has ${x.nRows} rows for ${k} components; a client needs at least two rows per component`);
    }
    const own = o.variance;
    this.weights = o.weights ? Float64Array.from(o.weights) : new Float64Array(k).fill(1 / k);
    if (o.meansInit !== undefined && o.meansInit.length !== k * x.nCols) {
      throw new InvalidParameterError(`meansInit has ${o.meansInit.length} values; ${k} x ${x.nCols} needs ${k * x.nCols}`);
    }
    // the server refuses two equal centers from one client: say so here, before any round
    if (o.meansInit !== undefined && Array.from(o.meansInit).every(Number.isFinite)) requireDistinctRows(o.meansInit, k, x.nCols);
    // beyond this the spread could pass the server's bound (MAX_FEATURE): refused here, saying why
    const largest = x.data.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    if (largest > MAX_FEATURE) {
      throw new InvalidDataError(`client ${id} has a feature value of magnitude ${largest}; FedGEM takes features up to ${MAX_FEATURE} in magnitude: rescale them`);
    }
    this.validation = validation === undefined ? undefined : Matrix.from(validation);
    if (this.validation && this.validation.nCols !== x.nCols) {
      throw new InvalidDataError(`client ${id}: validation rows have ${this.validation.nCols} features but the training rows ${x.nCols}`);
    }
    // the seed's two 32-bit halves: every seed in the bound (2^53 - 1) reaches the core whole
    const [lo, hi] = seedParts(o.seed);
    const nInit = o.nInit;
    const init = coreConstant('fedgem_init', o.init);
    // the noise generator before the client's handle: whichever throws, nothing is left allocated
    this.noise = o.privacy ? (o.noiseSeed === undefined ? Rng.unpredictable() : new Rng(o.noiseSeed)) : undefined;
    try {
      if (o.privacy) x = clipRows(x, o.privacy.bound);
      // the rows passed in and the client's own copy, and k-means' labels and distances
      requireWasmMemory(`client ${id}'s ${x.nRows} rows of ${x.nCols} features`, 16 * x.data.length + 12 * x.nRows);
      const ptr = withScope((s) => {
        const out = s.u32(1);
        const [w, wLen] = s.f64Optional(this.weights);
        const [m] = s.f64Optional(o.meansInit);
        if (wLen !== k) throw new InvalidParameterError(`weights has ${wLen} values for ${k} components`);
        // without its own variance the model holds 1 until the server's arrives; nothing runs on it before (requireVariance)
        s.check(s.w.fm_fedgem_client_new(s.matrix(x), s.struct(FEDGEM_CLIENT_NEW_OPTIONS, { n: x.nRows, d: x.nCols, k, variance: own ?? 1, init, nInit, seedLo: lo, seedHi: hi }), w, m, out));
        return s.readU32(out, 1)[0]!;
      });
      this.handle = new OwnedHandle(ptr, (w, p) => w.fm_fedgem_client_free(p), LABEL);
    } catch (e) {
      this.noise?.dispose();
      throw e;
    }
    this.options = o;
    this.sigma2 = own;
    this.ownVariance = own !== undefined;
    this.training = x;
    this.nComponents = k;
    this.nFeatures = x.nCols;
    this.nSamples = x.nRows;
    this.lastCounts = new Float64Array(k).fill(x.nRows / k);
  }

  /** The current means (K_c x d, row-major). */
  get means(): Float64Array {
    return withScope((s) => {
      const out = s.f64(this.nComponents * this.nFeatures);
      s.w.fm_fedgem_client_means(this.handle.ptr, out);
      return s.readF64(out, this.nComponents * this.nFeatures);
    });
  }

  /** sigma^2 the client's model uses: its own, or the server's once received (undefined before). */
  get variance(): number | undefined {
    return this.sigma2;
  }

  /** The variance, for what needs one (after the disposal check: a disposed client says so first). */
  private requireVariance(): number {
    void this.handle.ptr;
    if (this.sigma2 === undefined) {
      throw new NotFittedError(`client ${this.id} has no variance yet: give it one (options.variance) or let the server send it (a FedGEMServer whose variance is 'estimate' or a number)`);
    }
    return this.sigma2;
  }

  /**
   * The server's variance, for a client without its own (a client with its
   * own keeps it). `needed`: the request is for local steps, which need one.
   */
  private takeVariance(given: number | undefined, needed: boolean): void {
    if (this.ownVariance) return;
    if (given !== undefined) {
      if (!(given > 0)) throw new InvalidMessageError(`the server's variance is ${given}; a variance must be > 0`, 'the variance is not positive');
      if (given !== this.sigma2) withScope((s) => s.check(s.w.fm_fedgem_client_set_variance(this.handle.ptr, given)));
      this.sigma2 = given;
    }
    if (needed && this.sigma2 === undefined) {
      throw new InvalidMessageError(
        `client ${this.id} has no variance of its own and the server sent none; give the client a variance or the server one (its variance 'estimate' or a number)`,
        'no variance was sent',
      );
    }
  }

  /**
   * The spread of the training rows around local clusters, the client's
   * share of the federated variance estimate: k-means with the client's own
   * K_c (best of 10 runs by inertia, from its seed), the sum of squared
   * distances of the rows to their cluster's mean, and its degrees of freedom
   * (n - K_c) d. Why K_c and not more clusters: an over-clustered k splits
   * true clusters and biases the estimate down (a Gaussian halved along one
   * axis keeps 1 - 2/pi of its variance there), while at K_c the best of
   * several k-means runs does not merge two separated clusters (a merge costs
   * far more inertia than any split saves), so the upward bias of merged
   * clusters stays away; hard assignments trim the tails of clusters closer
   * than about 2 sigma, a small downward bias there (EXPERIMENTS.md measures
   * both). Computed once: the rows do not change.
   */
  spread(): SpreadSumsPayload {
    void this.handle.ptr;
    if (!this.spreadSums) {
      const x = this.training;
      const k = this.nComponents;
      const labels = new KMeans({ nClusters: k, seed: this.options.seed }).fit(x).labels;
      this.spreadSums = { sumSquares: withinClusterSquares(x, labels, k), dof: (x.nRows - k) * x.nCols };
    }
    return { ...this.spreadSums };
  }

  /** Mean log-likelihood of the client's rows under its current model. */
  score(): number {
    this.requireVariance();
    return withScope((s) => {
      const out = s.f64(1);
      s.check(s.w.fm_fedgem_client_score(this.handle.ptr, out));
      return s.readF64(out, 1)[0]!;
    });
  }

  /** Centers as they leave the client: with the privacy noise when asked. */
  private release(centers: Float64Array): Float64Array {
    const p = this.options.privacy;
    if (!p || !this.noise) return centers;
    const minShare = p.minShare ?? Math.min(...this.weights) / 2;
    if (this.lastCounts.some((c) => c / this.nSamples < minShare)) this.privacyBoundMisses++;
    const sd = centerNoiseStd(p, this.nSamples, this.nComponents, minShare);
    const z = this.noise.normal(centers.length);
    return centers.map((c, i) => c + sd * z[i]!);
  }

  /** The answer to a server request (checked against its declaration by the runtime). */
  respond(request: Message): Message | undefined {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case SPREAD.kind:
        return SPREAD_SUMS.create(this.id, m.round, this.spread());
      case ROUND.kind: {
        const { centers, variance } = m.payload as CentersPayload;
        this.takeVariance(variance, true);
        if (centers) this.applyCenters(centers);
        return BALLS.create(this.id, m.round, this.localRound());
      }
      case FINISH.kind: {
        // the final upload needs no variance; prediction afterwards does
        const { centers, variance } = m.payload as CentersPayload;
        this.takeVariance(variance, false);
        if (centers) this.applyCenters(centers);
        return FINAL.create(this.id, m.round, this.finalUpload());
      }
      case CANDIDATES.kind:
        return SILHOUETTES.create(this.id, m.round, this.silhouettes(m.payload as CandidatesPayload));
      case RESULT.kind:
        this.applyResult(m.payload as ResultPayload);
        return undefined;
      default:
        throw new InvalidMessageError(`a FedGEM client does not answer ${m.kind} messages`);
    }
  }

  /** L local EM steps; the upload of the round (maximizers, radii, counts, |D_c|). */
  localRound(): BallsPayload {
    this.requireVariance();
    const k = this.nComponents;
    const d = this.nFeatures;
    const o = this.options;
    // bisection weighs every row by every component's responsibility
    if (o.radius === 'bisection') requireWasmMemory(`client ${this.id}'s bisection radii`, 8 * this.nSamples * k);
    const r = withScope((s) => {
      const [m, rad, cnt, ll] = [s.f64(k * d), s.f64(k), s.f64(k), s.f64(1)];
      const method = coreConstant('fedgem_radius', o.radius === 'bisection' ? 'bisection' : 'closed_form');
      s.check(s.w.fm_fedgem_client_steps(this.handle.ptr, o.localSteps, method, o.bisectionIterations, m, rad, cnt, ll));
      return { maximizers: s.readF64(m, k * d), radii: s.readF64(rad, k), counts: s.readF64(cnt, k) };
    });
    this.lastCounts = r.counts;
    return { nComponents: k, nFeatures: d, maximizers: this.release(r.maximizers), radii: r.radii, counts: r.counts, nSamples: this.nSamples };
  }

  /** Continues from the server's centers (K_c x d, checked). */
  applyCenters(centers: Float64Array): void {
    this.setMeans(receiveCenters(requireVector('centers', centers, InvalidMessageError), this.nComponents, this.nFeatures));
  }

  private setMeans(centers: Float64Array): void {
    withScope((s) => s.check(s.w.fm_fedgem_client_set_means(this.handle.ptr, s.f64From(centers), centers.length)));
  }

  /** The final upload: centers and counts. */
  finalUpload(): FinalPayload {
    return { nComponents: this.nComponents, nFeatures: this.nFeatures, centers: this.release(this.means), counts: this.lastCounts, nSamples: this.nSamples };
  }

  /**
   * The silhouette of the validation rows (or the training rows) labelled by
   * their nearest global center, under each candidate: duplicated clusters
   * split a cluster's rows and merged ones blur them, and both lower it.
   */
  silhouettes(payload: CandidatesPayload): SilhouettesPayload {
    // read as the message declares it when called directly: typed arrays, checked fields
    const p = parsePayload(CANDIDATES.payload, payload) as CandidatesPayload;
    const rows = this.validation ?? this.training;
    const values = p.candidates.map((c) => {
      const k = c.estimatedK;
      const centers = receiveCenters(c.centers, k, this.nFeatures);
      const { labels } = nearestCenters(rows, centers, k);
      const distinct = new Set(labels).size;
      return distinct >= 2 && distinct <= rows.nRows - 1 ? silhouetteScore(rows, labels) : null;
    });
    return { values, nValidation: rows.nRows };
  }

  /** Takes the server's result: memberships, and the super-clusters' centers as its own. */
  applyResult(payload: ResultPayload): void {
    const p = parsePayload(RESULT.payload, payload) as ResultPayload;
    const k = p.estimatedK;
    const globalCenters = receiveCenters(p.globalCenters, k, this.nFeatures);
    const ms = p.memberships;
    if (ms.length !== this.nComponents || ms.some((g) => g < 0 || g >= k)) {
      throw new InvalidMessageError(`the server result needs one membership in [0, ${k}) per component (${this.nComponents})`);
    }
    const own = new Float64Array(this.nComponents * this.nFeatures);
    ms.forEach((g, c) => own.set(globalCenters.subarray(g * this.nFeatures, (g + 1) * this.nFeatures), c * this.nFeatures));
    this.setMeans(own);
    this.result = { memberships: Int32Array.from(ms), globalCenters, estimatedK: k, phi: p.phi };
  }

  /** The super-cluster of each of the client's components (after the result). */
  get memberships(): Int32Array | undefined {
    return this.result?.memberships.slice();
  }

  /**
   * Cluster of each row under the personalized model (the client's weights,
   * its final centers): global super-cluster ids after the result, local
   * component indices before.
   */
  predict(X: MatrixLike): Int32Array {
    const x = Matrix.from(X);
    if (x.nCols !== this.nFeatures) throw new InvalidDataError(`X has ${x.nCols} features but the client's model has ${this.nFeatures}`);
    this.requireVariance();
    const local = withScope((s) => {
      const out = s.u32(x.nRows);
      s.check(s.w.fm_fedgem_client_predict(this.handle.ptr, s.matrix(x), x.nRows, x.nCols, out, 0));
      return new Int32Array(s.readU32(out, x.nRows));
    });
    const ms = this.result?.memberships;
    return ms ? local.map((c) => ms[c]!) : local;
  }

  dispose(): void {
    this.handle.dispose();
    this.noise?.dispose();
  }
}

/** meansInit's k rows of d values, no two the same. */
function requireDistinctRows(values: ArrayLike<number>, k: number, d: number): void {
  const seen = new Map<string, number>();
  for (let c = 0; c < k; c++) {
    const key = Array.from({ length: d }, (_, j) => values[c * d + j]).join(',');
    const before = seen.get(key);
    if (before !== undefined) throw new InvalidParameterError(`meansInit rows ${before} and ${c} are the same; the components must start apart`);
    seen.set(key, c);
  }
}

/** Sum over the rows of x of the squared distance to the mean of their cluster (labels in [0, k)). */
function withinClusterSquares(x: Matrix, labels: Int32Array, k: number): number {
  const n = x.nRows;
  const counts = new Float64Array(k);
  for (let i = 0; i < n; i++) counts[labels[i]!]! += 1;
  const means = new Float64Array(k);
  let total = 0;
  for (let j = 0; j < x.nCols; j++) {
    // one column at a time: contiguous in the column-major data
    const col = x.data.subarray(j * n, (j + 1) * n);
    means.fill(0);
    for (let i = 0; i < n; i++) means[labels[i]!]! += col[i]!;
    for (let c = 0; c < k; c++) if (counts[c]! > 0) means[c]! /= counts[c]!;
    for (let i = 0; i < n; i++) total += (col[i]! - means[labels[i]!]!) ** 2;
  }
  return total;
}
