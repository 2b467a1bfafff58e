/**
 * A FedGEM client: an isotropic Gaussian mixture over its own rows (known
 * shared variance, fixed local weights, K_c known), kept in WASM memory with
 * its rows across rounds. Each round it runs L EM steps on its means and
 * uploads, per component, the maximizer and the radius of its uncertainty ball
 * (crates/fedmix-core/src/fedgem/client.rs derives it); then continues from the
 * centers the server sends back. At the end it uploads its centers, scores the
 * server's candidate global models on its validation rows when phi is tuned,
 * and takes its final centers and memberships.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { silhouetteScore } from '../../metrics/clustering.js';
import { nearestCenters } from '../../models/kmeans.js';
import { Rng } from '../../random.js';
import { optionKeys, readOptions, requireInteger, requireOneOf, requirePositive, requireVector, seedParts } from '../../validate.js';
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
  MAX_COMPONENTS,
  RESULT,
  ROUND,
  SILHOUETTES,
  receiveCenters,
  type BallsPayload,
  type CandidatesPayload,
  type FinalPayload,
  type ResultPayload,
  type SilhouettesPayload,
} from './messages.js';
import { centerNoiseStd, checkPrivacy, type PrivacyOptions } from './privacy.js';
import { clipRows } from '../gaussian-noise.js';
import { LIMITS } from '../../validate.js';

export interface FedGEMClientOptions {
  /** K_c, the number of clusters in the client's data (known, as the paper assumes) */
  nComponents: number;
  /** fixed local weights (default uniform) */
  weights?: ArrayLike<number>;
  /** the known shared variance sigma^2 of every component (default 1, the paper's identity covariance) */
  variance?: number;
  /** L, EM steps per round (default 1) */
  localSteps?: number;
  /** how the radii are computed: the closed form (default) or the bisection solver (Algorithm 4) */
  radius?: 'closed-form' | 'bisection';
  /** halvings of the bisection solver (default 60, at most 1000) */
  bisectionIterations?: number;
  /** starting means (K_c x d, row-major); default from `init` */
  meansInit?: ArrayLike<number>;
  /**
   * how the starting means are found: 'k-means++' seeds (default, as the paper;
   * the best of nInit seedings by inertia) or 'kmeans' (Lloyd's iterations from them)
   */
  init?: 'k-means++' | 'kmeans';
  /** seedings (or k-means runs) tried for the starting means (default 3) */
  nInit?: number;
  /**
   * Gaussian noise on every uploaded center (see privacy.ts); the training
   * rows are then clipped to norm privacy.bound, as the noise's scale assumes
   */
  privacy?: PrivacyOptions;
  /** seed of the initialization */
  seed?: number;
  /**
   * seed of the privacy noise, apart from `seed` (a published seed must not
   * reveal the noise); default: fresh from crypto.getRandomValues where available
   */
  noiseSeed?: number;
}

/** Every option of FedGEMClientOptions, for readOptions (the compiler checks it is complete). */
export const FEDGEM_CLIENT_KEYS = optionKeys<FedGEMClientOptions>()({
  nComponents: true, weights: true, variance: true, localSteps: true, radius: true, bisectionIterations: true, meansInit: true, init: true, nInit: true, privacy: true, seed: true, noiseSeed: true,
});

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
  private readonly options: FedGEMClientOptions;
  private readonly validation: Matrix | undefined;
  private readonly training: Matrix;
  private readonly weights: Float64Array;
  private readonly noise: Rng | undefined;
  private lastCounts: Float64Array;
  private result: { memberships: Int32Array; globalCenters: Float64Array; estimatedK: number; phi: number } | undefined;

  /**
   * `data` trains the model; `validation` (optional) scores the server's
   * candidates when phi is tuned (the training rows are used without it).
   */
  constructor(id: string, data: MatrixLike, options: FedGEMClientOptions, validation?: MatrixLike) {
    this.id = requireClientId(id);
    // a copy: later changes to the caller's object do not reach the client
    const given = readOptions(options, FEDGEM_CLIENT_KEYS) as FedGEMClientOptions;
    const o: FedGEMClientOptions = { ...given, privacy: given.privacy && checkPrivacy(given.privacy) };
    let x = Matrix.from(data);
    const k = requireInteger('nComponents', o.nComponents, 1, MAX_COMPONENTS);
    if (x.nRows < 2 * k) {
      throw new InvalidDataError(`client ${id} has ${x.nRows} rows for ${k} components; a client needs at least two rows per component`);
    }
    const variance = requirePositive('variance', o.variance ?? 1);
    requireInteger('localSteps', o.localSteps ?? 1, 1, LIMITS.localSteps);
    requireInteger('bisectionIterations', o.bisectionIterations ?? 60, 1, 1000);
    if (!['closed-form', 'bisection', undefined].includes(o.radius)) {
      throw new InvalidParameterError(`radius must be 'closed-form' or 'bisection', got ${JSON.stringify(o.radius)}`);
    }
    this.weights = o.weights ? Float64Array.from(o.weights) : new Float64Array(k).fill(1 / k);
    if (o.meansInit !== undefined && o.meansInit.length !== k * x.nCols) {
      throw new InvalidParameterError(`meansInit has ${o.meansInit.length} values; ${k} x ${x.nCols} needs ${k * x.nCols}`);
    }
    this.validation = validation === undefined ? undefined : Matrix.from(validation);
    if (this.validation && this.validation.nCols !== x.nCols) {
      throw new InvalidDataError(`client ${id}: validation rows have ${this.validation.nCols} features but the training rows ${x.nCols}`);
    }
    const [lo, hi] = seedParts(o.seed);
    const nInit = requireInteger('nInit', o.nInit ?? 3, 1, LIMITS.restarts);
    const init = coreConstant('fedgem_init', requireOneOf('init', o.init ?? 'k-means++', ['k-means++', 'kmeans'] as const));
    // the noise generator before the client's handle: whichever throws, nothing is left allocated
    if (o.noiseSeed !== undefined) requireInteger('noiseSeed', o.noiseSeed, 0);
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
        s.check(s.w.fm_fedgem_client_new(s.matrix(x), x.nRows, x.nCols, k, w, variance, m, init, nInit, lo, hi, out));
        return s.readU32(out, 1)[0]!;
      });
      this.handle = new OwnedHandle(ptr, (w, p) => w.fm_fedgem_client_free(p), LABEL);
    } catch (e) {
      this.noise?.dispose();
      throw e;
    }
    this.options = o;
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

  /** Mean log-likelihood of the client's rows under its current model. */
  score(): number {
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
      case ROUND.kind: {
        const { centers } = m.payload as { centers?: Float64Array };
        if (centers) this.applyCenters(centers);
        return BALLS.create(this.id, m.round, this.localRound());
      }
      case FINISH.kind: {
        const { centers } = m.payload as { centers?: Float64Array };
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
    const k = this.nComponents;
    const d = this.nFeatures;
    const o = this.options;
    // bisection weighs every row by every component's responsibility
    if (o.radius === 'bisection') requireWasmMemory(`client ${this.id}'s bisection radii`, 8 * this.nSamples * k);
    const r = withScope((s) => {
      const [m, rad, cnt, ll] = [s.f64(k * d), s.f64(k), s.f64(k), s.f64(1)];
      const method = coreConstant('fedgem_radius', o.radius === 'bisection' ? 'bisection' : 'closed_form');
      s.check(s.w.fm_fedgem_client_steps(this.handle.ptr, o.localSteps ?? 1, method, o.bisectionIterations ?? 60, m, rad, cnt, ll));
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
