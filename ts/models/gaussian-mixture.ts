/**
 * GaussianMixture with scikit-learn 1.2 semantics (same options, defaults and
 * learned attributes, camelCase). Fitting, scoring and sampling run in the WASM
 * core; the fitted parameters live there too, owned by this object until
 * dispose(). Parameter arrays use scikit-learn's shapes, flattened row-major:
 * means (k, d); covariances full (k, d, d), tied (d, d), diag (k, d), spherical (k,).
 */
import type { Table } from 'apache-arrow';
import { arrowLibrary } from '../data/arrow-library.js';
import * as v from 'valibot';
import { fixedSizeListVector, indexVector, tableOf } from '../data/arrow.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import { COVARIANCE_SHAPE_POWERS, GMM_EM_STEP_OPTIONS, GMM_FIT_OPTIONS, GMM_FROM_COVARIANCES_OPTIONS, GMM_FROM_PARTS_OPTIONS } from '../wasm/abi.generated.js';
import { codeTable, coreConstant, coreConstantName, type ConstantMember } from '../wasm/constants.js';
import { requireWasmMemory, Scope, withScope } from '../wasm/memory.js';
import type { ShardModel, ShardStats } from '../parallel/gmm-shard.js';
import type { ShardPool } from '../parallel/pool.js';
import type { RowShards } from '../parallel/row-shards.js';
import { ONE_THREAD, threadsOption, type FitThreads, type Threads } from '../parallel/threads.js';
import { WasmModelState } from './wasm-model.js';
import { readSavedJSON } from '../data/saved.js';
import {
  flattenNumeric,
  isArray,
  LIMITS,
  readOptions,
  requireBoolean,
  requireInteger,
  requireOneOf,
  seedParts,
  type NumericArray,
} from '../validate.js';
import { keepClassName } from '../class-name.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';
import { COVARIANCE_TYPES, type CovarianceType } from './covariance-types.js';

export { COVARIANCE_TYPES, type CovarianceType } from './covariance-types.js';
export const INIT_PARAMS = ['kmeans', 'k-means++', 'random', 'random_from_data'] as const;
export type InitParams = (typeof INIT_PARAMS)[number];
/** The arithmetic of EM's E-steps (GaussianMixtureOptions.precision). */
export const PRECISIONS = ['float64', 'float32'] as const;
export type Precision = (typeof PRECISIONS)[number];

export interface GaussianMixtureOptions {
  /** number of mixture components (default 1; at most LIMITS.components, 65,536) */
  nComponents?: number;
  /** default 'full' */
  covarianceType?: CovarianceType;
  /** convergence threshold on the change of the mean log-likelihood per row (default 1e-3) */
  tol?: number;
  /** added to covariance diagonals to keep them positive definite (default 1e-6) */
  regCovar?: number;
  /** EM iterations per initialization (default 100; at most LIMITS.maxIter, 10^6) */
  maxIter?: number;
  /** initializations; the best lower bound is kept (default 1; at most LIMITS.nInit, 1,000) */
  nInit?: number;
  /** default 'kmeans' */
  initParams?: InitParams;
  /** (k,) */
  weightsInit?: NumericArray;
  /** (k, d) */
  meansInit?: NumericArray;
  /** precisions (inverse covariances), shaped as covariances */
  precisionsInit?: NumericArray;
  /** refit from the current solution (a single initialization) */
  warmStart?: boolean;
  /** seed of every random choice; without it each fit differs */
  seed?: number;
  /**
   * Threads of fitAsync(): 1 (default: the calling thread alone, the same
   * bits as fit()), more, or 'auto' (the cores the runtime reports). Rows are
   * cut into one contiguous shard per thread (at least 256 rows each)
   * and each EM iteration sums the shards' statistics in shard order: the
   * same data, options and threads give the same bits on every run, and agree
   * with one thread to rounding. fit() runs on one thread only.
   */
  threads?: Threads;
  /**
   * The arithmetic of EM's E-steps and the statistics they feed: 'float64'
   * (default, scikit-learn's) or 'float32', about twice as fast on SIMD
   * builds (f32x4 lanes), with the lower bound within about 1e-6 relative of
   * float64's and the parameters within about 1e-6 on well-conditioned data
   * (docs/models.md, "Precision"). Initialization, the M-step and the fitted
   * model stay f64: a float32 fit is scored, saved and loaded as any other.
   * Not for ill-conditioned full covariances (condition numbers beyond about
   * 1e5), and calling-thread fits only (threads 1). Needs the 'float32'
   * module (init() loads every module unless told otherwise).
   */
  precision?: Precision;
}

/** Serialized form, see toJSON(). */
export interface GaussianMixtureJSON {
  format: 'fedmix.GaussianMixture';
  version: 1;
  covarianceType: CovarianceType;
  nComponents: number;
  nFeatures: number;
  weights: number[];
  means: number[];
  covariances: number[];
  precisionsCholesky: number[];
  converged: boolean;
  nIter: number;
  /** null when the model was never fitted (an import of bare parameters) */
  lowerBound: number | null;
  options?: Omit<GaussianMixtureOptions, 'weightsInit' | 'meansInit' | 'precisionsInit'>;
}

const JSON_KEYS = [
  'format', 'version', 'covarianceType', 'nComponents', 'nFeatures', 'weights', 'means', 'covariances', 'precisionsCholesky', 'converged', 'nIter', 'lowerBound', 'options',
] as const satisfies readonly (keyof GaussianMixtureJSON)[];

/** Covariance type codes of the C ABI, read from the core (CovarianceType::code in fedmix-core). @internal */
export const COV_CODE: Readonly<Record<CovarianceType, number>> = codeTable('covariance_type');
/** The parameter arrays fm_gmm_read copies out, by their names in the core's table. */
const READ = {
  weights: 'weights',
  means: 'means',
  covariances: 'covariances',
  precisionsCholesky: 'precisions_cholesky',
  precisions: 'precisions',
} as const satisfies Record<string, ConstantMember<'gmm_read'>>;

/** Number of values in a covariance-shaped array of k components of d features: the core's rule (CovarianceType::shape_powers, generated). */
export function covarianceLength(type: CovarianceType, k: number, d: number): number {
  const [a, b] = COVARIANCE_SHAPE_POWERS[type];
  return k ** a * d ** b;
}

/** Bytes a float32 fit adds (fedmix-core gmm/float32.rs): the rows as f32, padded to 8, and a block's buffers. */
function float32FitBytes(n: number, d: number, k: number): number {
  const block = 256;
  return 4 * Math.ceil(n / 8) * 8 * d + 4 * block * (k + 1 + 2 * d);
}

/**
 * What fromParameters takes of WASM memory at its peak, so that it is refused
 * before the core has to spend the reserve every call keeps (heap.rs): the
 * parameters as passed in, the core's copies of them and the precision
 * factors it computes (fm_gmm_from_covariances), its Cholesky scratch (three
 * d x d matrices, the means' floor), and one of the largest buffers (the
 * covariances) and a 64 KiB page more: at the end of memory the allocator
 * grows by whole pages, and a free piece at the heap's top smaller than a
 * buffer cannot hold it. Without that margin a run of models that fills
 * memory made its last one from the reserve, and freeing one model no longer
 * gave back the 4 MiB the next call takes first.
 */
function fromParametersBytes(type: CovarianceType, k: number, d: number): number {
  const covariances = 8 * covarianceLength(type, k, d);
  const matrices = type === 'full' || type === 'tied' ? 3 * 8 * d * d : 0;
  const peak = 2 * modelBytes(type, k, d) - covariances + matrices + 8 * d;
  return peak + covariances + 65536;
}

/** Bytes of a model's parameters in WASM memory: weights, means, covariances and their precision factors. */
function modelBytes(type: CovarianceType, k: number, d: number): number {
  return 8 * (k + k * d + 2 * covarianceLength(type, k, d));
}

function mean(v: Float64Array): number {
  let t = 0;
  for (let i = 0; i < v.length; i++) t += v[i]!;
  return t / v.length;
}

/** BIC and AIC from the mean log-likelihood per row of n rows (scikit-learn's formulas). */
export function informationCriteria(meanLogLikelihood: number, n: number, nParameters: number): { bic: number; aic: number } {
  if (typeof meanLogLikelihood !== 'number' || Number.isNaN(meanLogLikelihood)) throw new InvalidParameterError(`meanLogLikelihood must be a number, got ${formatValue(meanLogLikelihood)}`);
  requireInteger('n', n, 1);
  requireInteger('nParameters', nParameters, 0);
  return {
    bic: -2 * meanLogLikelihood * n + nParameters * Math.log(n),
    aic: -2 * meanLogLikelihood * n + 2 * nParameters,
  };
}

/** An initial parameter array, flattened row-major (its shape is checked by the core against the data). */
const initArray = (name: string) => v.pipe(v.unknown(), v.transform((x) => flattenNumeric(name, x as NumericArray)));

/**
 * GaussianMixture's options (scikit-learn's defaults): checked once, by the
 * constructor or by check() at a public edge that makes mixtures (a
 * federated server, selectGaussianMixture), then taken as they are.
 */
export const gaussianMixtureOptions = defineOptions<GaussianMixtureOptions>()({
  nComponents: atoms.optional(atoms.nComponents(), 1),
  covarianceType: atoms.optional(atoms.covarianceType(), 'full'),
  tol: atoms.optional(atoms.tolerance(), 1e-3),
  regCovar: atoms.optional(atoms.regCovar(), 1e-6),
  maxIter: atoms.optional(atoms.maxIterations(0), 100),
  nInit: atoms.optional(atoms.nInit(), 1),
  initParams: atoms.optional(atoms.oneOf(INIT_PARAMS), 'kmeans'),
  weightsInit: atoms.optional(initArray('weightsInit')),
  meansInit: atoms.optional(initArray('meansInit')),
  precisionsInit: atoms.optional(initArray('precisionsInit')),
  warmStart: atoms.optional(atoms.flag(), false),
  seed: atoms.optional(atoms.seed()),
  // absent is one thread (and stays absent in the resolved options and toJSON(), as before the option existed)
  threads: atoms.optional(threadsOption()),
  // absent is 'float64' (and stays absent in the resolved options and toJSON(), as before the option existed)
  precision: atoms.optional(atoms.oneOf(PRECISIONS)),
}, (o) => {
  requireSingleThreadPrecision(o);
  return o;
});

/** float32 EM runs on the calling thread: the threads' E-steps over row shards are f64 (fitOnShards). @internal */
export function requireSingleThreadPrecision(o: { precision?: Precision; threads?: Threads }): void {
  if (o.precision === 'float32' && o.threads !== undefined && o.threads !== 1) {
    throw new InvalidParameterError(`precision 'float32' fits on the calling thread only; threads: ${formatValue(o.threads)} fits in float64 (leave out threads, or precision)`);
  }
}


/** GaussianMixture's options as checking resolves them (gaussianMixtureOptions.check): every default filled in, the initial arrays flattened, seed and threads absent when not given. */
export type ResolvedGaussianMixtureOptions = Readonly<
  Required<Omit<GaussianMixtureOptions, 'weightsInit' | 'meansInit' | 'precisionsInit' | 'seed' | 'threads' | 'precision'>> & {
    threads?: Threads;
    precision?: Precision;
    weightsInit?: Float64Array;
    meansInit?: Float64Array;
    precisionsInit?: Float64Array;
    seed?: number;
  }
>;

/** Every option's name, for reading them once (readOptions). */
export const GMM_OPTION_KEYS = gaussianMixtureOptions.keys;

/** The defaults, as checking resolves an empty options object. */
const GMM_DEFAULTS = gaussianMixtureOptions.check({});

/**
 * Options the library builds from values it has checked already (a model
 * around the core's handle, a selection's candidates, a federated server's
 * global fit): the defaults under `o` (its undefined entries ignored),
 * resolved without checking again. The compiler checks each value's type;
 * its range is the caller's to have checked. @internal
 */
export function trustedGaussianMixtureOptions(o: Partial<ResolvedGaussianMixtureOptions>): ResolvedGaussianMixtureOptions {
  const out: Record<string, unknown> = { ...GMM_DEFAULTS };
  for (const [k, x] of Object.entries(o)) if (x !== undefined) out[k] = x;
  return gaussianMixtureOptions.trust(out as ResolvedGaussianMixtureOptions);
}

interface FitStats {
  nComponents: number;
  nFeatures: number;
  covarianceType: CovarianceType;
  converged: boolean;
  nIter: number;
  lowerBound: number;
  nParameters: number;
}

/** The model `h` as the fitting threads are sent it. */
function readShardModel(h: number, covType: number): ShardModel {
  return withScope((s) => {
    const info = s.f64(7);
    s.w.fm_gmm_info(h, info);
    const [k, d] = s.readF64(info, 2) as unknown as [number, number];
    const read = (which: keyof typeof READ, len: number) => {
      const out = s.f64(len);
      s.w.fm_gmm_read(h, coreConstant('gmm_read', READ[which]), out);
      return s.readF64(out, len);
    };
    const t = coreConstantName('covariance_type', covType)!;
    const len = covarianceLength(t, k, d);
    return { covType, k, d, weights: read('weights', k), means: read('means', k * d), covariances: read('covariances', len), precisionsCholesky: read('precisionsCholesky', len) };
  });
}

/** The mean log-likelihood per row a model's handle holds (fm_gmm_info). */
function readLowerBound(h: number): number {
  return withScope((s) => {
    const info = s.f64(7);
    s.w.fm_gmm_info(h, info);
    return s.readF64(info, 7)[5]!;
  });
}

/** The M-step from the shards' statistics, concatenated in shard order (fm_gmm_em_step): the new model's handle. */
function emStep(s: Scope, workspace: number, h: number, stats: readonly ShardStats[], regCovar: number, iteration: number): number {
  const cat = (part: 'nk' | 's1' | 's2') => {
    const len = stats[0]![part].length;
    const all = new Float64Array(len * stats.length);
    stats.forEach((st, i) => all.set(st[part], i * len));
    return s.f64From(all);
  };
  const out = s.u32(1);
  const options = s.struct(GMM_EM_STEP_OPTIONS, { m: stats.length, regCovar, iteration });
  s.check(s.w.fm_gmm_em_step(workspace, h, options, s.f64From(stats.map((st) => st.loglik)), cat('nk'), cat('s1'), cat('s2'), out));
  return s.readU32(out, 1)[0]!;
}

/** The running instance's exports, or undefined after a trap (its memory, and every handle in it, is gone). */
function currentExports(): unknown {
  try {
    return withScope((s) => s.w);
  } catch {
    return undefined;
  }
}

/** A fit's statistics from the values fm_gmm_info writes. */
function statsFrom(v: Float64Array): FitStats {
  return {
    nComponents: v[0]!,
    nFeatures: v[1]!,
    covarianceType: coreConstantName('covariance_type', v[2]!)!,
    converged: v[3] === 1,
    nIter: v[4]!,
    lowerBound: v[5]!,
    nParameters: v[6]!,
  };
}

export class GaussianMixture {
  static {
    keepClassName(this, 'GaussianMixture');
  }

  readonly options: ResolvedGaussianMixtureOptions;
  private readonly state: WasmModelState<FitStats, keyof typeof READ>;
  /** how the last fit ran (fitThreads) */
  private ranOn: FitThreads | undefined;

  /** Options checked here, unless they are what gaussianMixtureOptions.check() (or trustedGaussianMixtureOptions) returned. */
  constructor(options: GaussianMixtureOptions = {}) {
    this.options = gaussianMixtureOptions.check(options);
    const { nComponents: k, covarianceType: t } = this.options;
    this.state = new WasmModelState({
      name: 'GaussianMixture',
      free: (w, p) => w.fm_gmm_free(p),
      infoLength: 7,
      info: (w, handle, out) => w.fm_gmm_info(handle, out),
      stats: statsFrom,
      fitting: (n, d) => `fitting ${k} ${t} components to ${n} rows of ${d} features`,
      // the initial responsibilities (n x k), or the current and the next model during an M-step, whichever is larger
      // float32 adds its copy of the rows and its block buffers (fedmix-core gmm/float32.rs)
      fitBytes: (n, d) =>
        Math.max(this.options.warmStart && this.state.isFitted ? 0 : 8 * n * k, 2 * modelBytes(t, k, d)) +
        (this.options.precision === 'float32' ? float32FitBytes(n, d, k) : 0),
      // from the fitted model's statistics: a model around a core's handle may have other options
      readLength: (m, which) =>
        which === 'weights' ? m.nComponents : which === 'means' ? m.nComponents * m.nFeatures : covarianceLength(m.covarianceType, m.nComponents, m.nFeatures),
      read: (w, handle, which, out) => w.fm_gmm_read(handle, coreConstant('gmm_read', READ[which]), out),
    });
  }

  /** Estimates the parameters with EM (scikit-learn's fit) on the calling thread. Returns this. */
  fit(X: MatrixLike): this {
    if (this.options.threads !== undefined && this.options.threads !== 1) {
      throw new InvalidParameterError(`fit() runs on the calling thread alone; threads: ${formatValue(this.options.threads)} needs worker threads, which answer asynchronously: use await fitAsync(X)`);
    }
    return this.fitOnCallingThread(Matrix.from(X));
  }

  /**
   * Fits on rows already in WASM memory at `ptr` (column-major, n x d), so that
   * callers fitting many models on one dataset copy it in once.
   * @internal
   */
  fitResident(s: Scope, ptr: number, n: number, d: number): void {
    this.state.requireFitMemory(n, d);
    const out = s.u32(1);
    const a = this.fitArguments(s, n, d);
    const fit = this.options.precision === 'float32' ? s.w.fm_gmm_fit_f32 : s.w.fm_gmm_fit;
    s.check(fit(ptr, a.options, a.weightsInit, a.meansInit, a.precisionsInit, a.warm, out));
    this.state.adopt(s, s.readU32(out, 1)[0]!);
    this.ranOn = ONE_THREAD;
  }

  /** fm_gmm_fit's arguments besides the rows: the options struct, the initial arrays (0 when not given) and the warm model (0: none). */
  private fitArguments(s: Scope, n: number, d: number): { options: number; weightsInit: number; meansInit: number; precisionsInit: number; warm: number } {
    const o = this.options;
    const warm = o.warmStart && this.state.isFitted ? this.state.fitted().handle : 0;
    const [seedLo, seedHi] = seedParts(o.seed);
    const [weightsInit, meansInit, precisionsInit] = [s.f64Optional(o.weightsInit), s.f64Optional(o.meansInit), s.f64Optional(o.precisionsInit)];
    const options = s.struct(GMM_FIT_OPTIONS, {
      n, d, k: o.nComponents, covType: COV_CODE[o.covarianceType], tol: o.tol, regCovar: o.regCovar, maxIter: o.maxIter, nInit: o.nInit,
      initParams: coreConstant('init_params', o.initParams), weightsInitLen: weightsInit[1], meansInitLen: meansInit[1],
      precisionsInitLen: precisionsInit[1], seedLo, seedHi,
    });
    return { options, weightsInit: weightsInit[0], meansInit: meansInit[0], precisionsInit: precisionsInit[0], warm };
  }

  /**
   * Estimates the parameters with EM on the option `threads` (fit() runs on
   * one): the calling thread fits its shard of rows and each other thread
   * (worker_threads in Node, Web Workers in browsers) its own, in a WASM
   * instance of its own; every EM iteration adds the shards' statistics in
   * shard order. With one thread (the default), or no EM iteration to share
   * (maxIter 0), it is fit(). The threads are stopped when it settles. Resolves to this.
   */
  async fitAsync(X: MatrixLike): Promise<this> {
    const x = Matrix.from(X);
    if (this.options.threads === undefined || this.options.threads === 1 || this.options.maxIter === 0) return this.fitOnCallingThread(x);
    // the threads' code is loaded when a fit asks for threads: programs that never do carry none of it
    const { threadsOf, withRowShards } = await import('../parallel/row-shards.js');
    const threads = threadsOf(x, this.options.threads);
    if (threads === 1) return this.fitOnCallingThread(x);
    await withRowShards(x, threads, (shards) => this.fitOnShards(shards));
    return this;
  }

  private fitOnCallingThread(x: Matrix): this {
    this.state.fit(x, (s, ptr, n, d) => this.fitResident(s, ptr, n, d));
    return this;
  }

  /**
   * fit() with EM's E-steps over the shards of rows (see fitAsync): a
   * selection over K, or a federated client, fits many models on one set of
   * threads. Whatever its `threads` option says.
   * @internal
   */
  async fitOnShards(shards: RowShards): Promise<void> {
    const { n, d, ptr } = shards;
    const o = this.options;
    requireSingleThreadPrecision({ precision: o.precision, threads: shards.bounds.length - 1 });
    const k = o.nComponents;
    requireWasmMemory(`fitting ${k} ${o.covarianceType} components to ${n} rows of ${d} features on ${shards.bounds.length - 1} threads`, 2 * modelBytes(o.covarianceType, k, d) + 8 * d * d);
    const s = new Scope();
    const owned = new Set<number>();
    let workspace = 0;
    try {
      const a = this.fitArguments(s, n, d);
      const initial = (run: number): number => {
        const out = s.u32(1);
        s.check(s.w.fm_gmm_initial(ptr, a.options, a.weightsInit, a.meansInit, a.precisionsInit, a.warm, run, out));
        const h = s.readU32(out, 1)[0]!;
        owned.add(h);
        return h;
      };
      // the checks (options, data, warm model) and the first start before any thread starts
      const first = initial(0);
      const startBound = a.warm ? this.state.fitted().stats.lowerBound : -Infinity;
      const pool = await shards.threads();
      const out = s.u32(1);
      s.check(s.w.fm_gmm_em_workspace(ptr, n, d, COV_CODE[o.covarianceType], out));
      workspace = s.readU32(out, 1)[0]!;
      let best: { handle: number; nIter: number; bound: number } | undefined;
      let converged = false;
      for (let run = 0; run < (a.warm ? 1 : o.nInit); run++) {
        const r = await this.emOverShards(run === 0 ? first : initial(run), startBound, pool, shards.own, workspace, owned);
        converged ||= r.converged;
        if (!best || r.bound > best.bound || best.bound === -Infinity) best = r;
      }
      s.w.fm_gmm_set_stats(best!.handle, converged ? 1 : 0, best!.nIter, best!.bound);
      owned.delete(best!.handle);
      this.state.adopt(s, best!.handle);
      this.ranOn = { threads: shards.bounds.length - 1, exchange: pool.exchange };
    } finally {
      if (s.w === currentExports()) {
        for (const h of owned) s.w.fm_gmm_free(h);
        if (workspace) s.w.fm_gmm_em_workspace_free(workspace);
      }
      s.free();
    }
  }

  /**
   * EM from the model `start` (core's run_em): each iteration sends the model
   * to the threads, runs the calling thread's shard meanwhile, and steps on
   * the statistics summed in shard order. Handles made are tracked in `owned`.
   */
  private async emOverShards(
    start: number, startBound: number, pool: ShardPool, own: { ptr: number; n: number }, workspace: number, owned: Set<number>,
  ): Promise<{ handle: number; nIter: number; bound: number; converged: boolean }> {
    const o = this.options;
    const [k, covType] = [o.nComponents, COV_CODE[o.covarianceType]];
    const { shardStats } = await import('../parallel/gmm-shard.js');
    let [h, bound] = [start, startBound];
    for (let it = 1; it <= o.maxIter; it++) {
      const prev = bound;
      const model = readShardModel(h, covType);
      const theirs = pool.gmmStats(model);
      // the threads' answer is awaited below, so a failure here must not leave it unhandled
      theirs.catch(() => undefined);
      const mine = withScope((s) => shardStats(s, h, covType, k, own.ptr, own.n, model.d));
      const all = [mine, ...(await theirs)];
      const next = withScope((s) => emStep(s, workspace, h, all, o.regCovar, it));
      owned.add(next);
      withScope((s) => s.w.fm_gmm_free(h));
      owned.delete(h);
      h = next;
      bound = readLowerBound(h);
      if (Math.abs(bound - prev) < o.tol) return { handle: h, nIter: it, bound, converged: true };
    }
    return { handle: h, nIter: o.maxIter, bound, converged: false };
  }

  /**
   * A model around a handle the core created (federated servers build models
   * there); it takes ownership. The options are the caller's resolved ones
   * (the defaults under them), taken as they are: not checked again.
   * @internal
   */
  static fromHandle(s: Scope, handle: number, options: Partial<ResolvedGaussianMixtureOptions> = {}): GaussianMixture {
    const gm = new GaussianMixture(trustedGaussianMixtureOptions(options));
    gm.state.adopt(s, handle);
    return gm;
  }

  /** The core's handle of the fitted model, for calls that read it. @internal */
  get handle(): number {
    return this.fitted().handle;
  }

  private fitted(): { handle: number; stats: FitStats } {
    return this.state.fitted();
  }

  /**
   * Runs `fn` on X copied into WASM after checking the model is fitted and
   * that memory can hold X and `outBytesPerRow` more bytes per row.
   */
  private withData<T>(X: MatrixLike, what: string, outBytesPerRow: number, fn: (s: Scope, handle: number, ptr: number, n: number, d: number, k: number) => T): T {
    const x = Matrix.from(X);
    const { handle, stats } = this.fitted();
    requireWasmMemory(`${what} ${x.nRows} rows`, 8 * x.data.length + outBytesPerRow * x.nRows);
    return withScope((s) => fn(s, handle, s.matrix(x), x.nRows, x.nCols, stats.nComponents));
  }

  /** Fits, then labels the training rows (scikit-learn's fit_predict). */
  fitPredict(X: MatrixLike): Int32Array {
    const x = Matrix.from(X);
    return this.fit(x).predict(x);
  }

  /** log p(x) per row under the mixture. */
  scoreSamples(X: MatrixLike): Float64Array {
    return this.withData(X, 'scoring', 8, (s, _h, ptr, n, d) => this.scoreSamplesResident(s, ptr, n, d));
  }

  /** scoreSamples on rows already in WASM memory (see fitResident). @internal */
  scoreSamplesResident(s: Scope, ptr: number, n: number, d: number): Float64Array {
    const { handle } = this.fitted();
    const out = s.f64(n);
    s.check(s.w.fm_gmm_score_samples(handle, ptr, n, d, out));
    return s.readF64(out, n);
  }

  /** Mean log-likelihood per row. */
  score(X: MatrixLike): number {
    return mean(this.scoreSamples(X));
  }

  /** Most probable component of each row. */
  predict(X: MatrixLike): Int32Array {
    return this.withData(X, 'labelling', 4, (s, h, ptr, n, d) => {
      const out = s.u32(n);
      s.check(s.w.fm_gmm_predict(h, ptr, n, d, out));
      return new Int32Array(s.readU32(out, n));
    });
  }

  /** Posterior probability of each component for each row (n x k). */
  predictProba(X: MatrixLike): Matrix {
    return this.withData(X, 'the responsibilities of', 8 * (this.nComponents + 1), (s, h, ptr, n, d, k) => {
      const resp = s.f64(n * k);
      const lse = s.f64(n);
      s.check(s.w.fm_gmm_predict_proba(h, ptr, n, d, resp, lse));
      return new Matrix(s.readF64(resp, n * k), n, k);
    });
  }

  /**
   * n rows drawn from the mixture, grouped by component (scikit-learn's sample).
   * With the model's seed (or the one given) the draw is the same every time.
   */
  sample(n: number, options: { seed?: number } = {}): { X: Matrix; labels: Int32Array } {
    const { seed } = readOptions(options, ['seed']);
    const { handle, stats } = this.fitted();
    requireInteger('n', n, 1, Math.floor(LIMITS.values / stats.nFeatures));
    const [lo, hi] = seedParts(seed ?? this.options.seed);
    const d = stats.nFeatures;
    // the rows and labels, and one component's Cholesky factor
    requireWasmMemory(`sampling ${n} rows of ${d} features`, n * (8 * d + 4) + (stats.covarianceType === 'full' || stats.covarianceType === 'tied' ? 8 * d * d : 0));
    return withScope((s) => {
      const x = s.f64(n * d);
      const labels = s.u32(n);
      s.check(s.w.fm_gmm_sample(handle, n, lo, hi, x, labels));
      return { X: new Matrix(s.readF64(x, n * d), n, d), labels: new Int32Array(s.readU32(labels, n)) };
    });
  }

  /** Bayesian information criterion on X (lower is better). */
  bic(X: MatrixLike): number {
    const x = Matrix.from(X);
    return informationCriteria(this.score(x), x.nRows, this.nParameters).bic;
  }

  /** Akaike information criterion on X (lower is better). */
  aic(X: MatrixLike): number {
    const x = Matrix.from(X);
    return informationCriteria(this.score(x), x.nRows, this.nParameters).aic;
  }

  private read(which: keyof typeof READ): Float64Array {
    return this.state.read(which).slice();
  }

  /** (k,) mixing weights */
  get weights(): Float64Array {
    return this.read('weights');
  }
  /** (k, d) row-major */
  get means(): Float64Array {
    return this.read('means');
  }
  /** shaped by covariance type, row-major */
  get covariances(): Float64Array {
    return this.read('covariances');
  }
  /** Cholesky factors of the precisions, shaped as covariances */
  get precisionsCholesky(): Float64Array {
    return this.read('precisionsCholesky');
  }
  /** precision matrices (inverse covariances), shaped as covariances */
  get precisions(): Float64Array {
    return this.read('precisions');
  }
  get converged(): boolean {
    return this.fitted().stats.converged;
  }
  /**
   * The threads the last fit ran on and how its iterations' tasks travelled
   * (FitThreads): `threads: 'auto'` resolved, or a fit with too few rows for
   * a second thread. Undefined until this object has fitted (a model read
   * with fromJSON or loadModel reports none).
   */
  get fitThreads(): FitThreads | undefined {
    return this.ranOn && { ...this.ranOn };
  }
  get nIter(): number {
    return this.fitted().stats.nIter;
  }
  /** mean log-likelihood per row at the last EM step of the best initialization */
  get lowerBound(): number {
    return this.fitted().stats.lowerBound;
  }
  get nFeatures(): number {
    return this.fitted().stats.nFeatures;
  }
  get nComponents(): number {
    return this.fitted().stats.nComponents;
  }
  get covarianceType(): CovarianceType {
    return this.fitted().stats.covarianceType;
  }
  /** the arithmetic of the fit's E-steps (the option `precision`; 'float64' when not given), kept in toJSON()'s options */
  get precision(): Precision {
    return this.options.precision ?? 'float64';
  }
  /** free parameters, as BIC and AIC count them */
  get nParameters(): number {
    return this.fitted().stats.nParameters;
  }
  get isFitted(): boolean {
    return this.state.isFitted;
  }

  /** Fitted, and in the running WASM instance (not one a trap reset). @internal */
  get live(): boolean {
    return this.state.live;
  }

  /**
   * The parameters as an Arrow Table of the project's apache-arrow, one row
   * per component: `component` (Int32), `weight` (Float64), `mean`
   * (FixedSizeList<Float64>[d]) and `covariance` (FixedSizeList<Float64> of
   * d x d row-major for 'full' and 'tied', d for 'diag', 1 for 'spherical';
   * 'tied' repeats its one matrix on every row).
   */
  toArrow(): Table {
    const { makeVector } = arrowLibrary('GaussianMixture.toArrow()');
    const { nComponents: k, nFeatures: d, covarianceType: t } = this.fitted().stats;
    let covariances = this.covariances;
    if (t === 'tied') {
      const tiled = new Float64Array(k * d * d);
      for (let c = 0; c < k; c++) tiled.set(covariances, c * d * d);
      covariances = tiled;
    }
    const width = covarianceLength(t, 1, d);
    return tableOf({
      component: indexVector(k),
      weight: makeVector(this.weights),
      mean: fixedSizeListVector(this.means, d),
      covariance: fixedSizeListVector(covariances, width),
    });
  }

  toJSON(): GaussianMixtureJSON {
    const { stats } = this.fitted();
    const { weightsInit: _w, meansInit: _m, precisionsInit: _p, ...options } = this.options;
    return {
      format: 'fedmix.GaussianMixture',
      version: 1,
      covarianceType: stats.covarianceType,
      nComponents: stats.nComponents,
      nFeatures: stats.nFeatures,
      weights: Array.from(this.weights),
      means: Array.from(this.means),
      covariances: Array.from(this.covariances),
      precisionsCholesky: Array.from(this.precisionsCholesky),
      converged: stats.converged,
      nIter: stats.nIter,
      lowerBound: Number.isFinite(stats.lowerBound) ? stats.lowerBound : null,
      options,
    };
  }

  /**
   * Rebuilds a model saved with toJSON() (or parameters from elsewhere, same
   * shapes). Checked before anything is built, as the core checks every model
   * from outside (crates/fedmix-core/src/gmm/check.rs): weights a
   * distribution; covariances symmetric and positive definite, resolvable at
   * the means' magnitude (a mean of 1e200 with unit variances is refused);
   * precisions finite. The covariances are the model, as scikit-learn's
   * covariances_: the factors are computed from them as a fit computes them
   * (so a saved fit loads with the very factors it had), and a file's
   * precisionsCholesky must be the same Gaussians up to rounding; either may
   * be left out (the covariances are then derived from the factors). A bad
   * field is an InvalidParameterError naming it.
   */
  static fromJSON(json: GaussianMixtureJSON | string): GaussianMixture {
    const j = readSavedJSON<GaussianMixtureJSON>(json, 'fedmix.GaussianMixture', JSON_KEYS);
    const t = requireOneOf('covarianceType', j.covarianceType, COVARIANCE_TYPES);
    const k = requireInteger('nComponents', j.nComponents, 1, LIMITS.components);
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.values);
    // everything the core is handed is checked before a handle exists, so a bad field cannot strand one
    const converged = requireBoolean('converged', j.converged ?? false);
    const nIter = requireInteger('nIter', j.nIter ?? 0, 0, LIMITS.maxIter);
    // null (or absent): never fitted, -Infinity as scikit-learn's lower_bound_ before fit; a fit's bound is finite
    const lowerBound = j.lowerBound ?? -Infinity;
    if (typeof lowerBound !== 'number' || (j.lowerBound != null && !Number.isFinite(lowerBound))) {
      throw new InvalidParameterError(`lowerBound must be a finite number, or null for a model never fitted, got ${formatValue(j.lowerBound)}`);
    }
    const gm = new GaussianMixture({ ...readOptions(j.options as GaussianMixtureOptions | undefined, GMM_OPTION_KEYS, 'options'), nComponents: k, covarianceType: t });
    const len = covarianceLength(t, k, d);
    if (len > LIMITS.values) throw new InvalidParameterError(`${k} components of ${d} features need ${len} covariance values; at most ${LIMITS.values} fit`);
    const arr = (name: string, v: unknown, want: number) => {
      if (!isArray(name, v)) throw new InvalidParameterError(`${name} must be an array of ${want} numbers, got ${formatValue(v)}`);
      const f = flattenNumeric(name, v as NumericArray);
      if (f.length !== want) throw new InvalidParameterError(`${name} has ${f.length} values; expected ${want}`);
      return f;
    };
    const weights = arr('weights', j.weights, k);
    const means = arr('means', j.means, k * d);
    // either may be left out (Gmm::from_saved: the factors are computed from the covariances as a fit computes them, and must agree with any given)
    const pc = j.precisionsCholesky === undefined ? undefined : arr('precisionsCholesky', j.precisionsCholesky, len);
    const cov = j.covariances === undefined ? undefined : arr('covariances', j.covariances, len);
    if (!pc && !cov) throw new InvalidParameterError('a saved GaussianMixture needs its covariances, its precisionsCholesky, or both');
    // the parameters as passed in, and the model the core builds from them
    requireWasmMemory(`loading ${k} ${t} components of ${d} features`, 8 * (weights.length + means.length + (pc?.length ?? 0) + (cov?.length ?? 0)) + 2 * modelBytes(t, k, d));
    withScope((s) => {
      const out = s.u32(1);
      const [w, m, p, c] = [s.f64Optional(weights), s.f64Optional(means), s.f64Optional(pc), s.f64Optional(cov)];
      const parts = s.struct(GMM_FROM_PARTS_OPTIONS, { covType: COV_CODE[t], k, d, weightsLen: w[1], meansLen: m[1], precisionsCholLen: p[1], covariancesLen: c[1] });
      s.check(s.w.fm_gmm_from_parts(parts, w[0], m[0], p[0], c[0], out));
      const handle = s.readU32(out, 1)[0]!;
      s.w.fm_gmm_set_stats(handle, converged ? 1 : 0, nIter, lowerBound);
      gm.state.adopt(s, handle);
    });
    return gm;
  }

  /**
   * A model from its parameters in scikit-learn's shapes (flattened row-major),
   * as a federated client sends them: weights (k,), means (k, d), covariances
   * shaped by covariance type. A covariance that is not positive definite is an
   * InvalidParameterError naming the component.
   */
  static fromParameters(p: {
    covarianceType: CovarianceType;
    weights: NumericArray;
    means: NumericArray;
    covariances: NumericArray;
    nFeatures?: number;
  }): GaussianMixture {
    if (p === null || typeof p !== 'object') throw new InvalidParameterError(`fromParameters needs { covarianceType, weights, means, covariances }, got ${formatValue(p)}`);
    const o = readOptions(p, ['covarianceType', 'weights', 'means', 'covariances', 'nFeatures'], 'parameters');
    const t = requireOneOf('covarianceType', o.covarianceType, COVARIANCE_TYPES);
    const weights = flattenNumeric('weights', o.weights!);
    const means = flattenNumeric('means', o.means!);
    const cov = flattenNumeric('covariances', o.covariances!);
    const k = weights.length;
    if (k < 1) throw new InvalidParameterError('weights must hold at least one component');
    if (k > LIMITS.components) throw new InvalidParameterError(`weights hold ${k} components; at most ${LIMITS.components} are supported`);
    // nFeatures must agree with the means: it crosses into the core as a 32-bit count
    const d = o.nFeatures === undefined ? means.length / k : requireInteger('nFeatures', o.nFeatures, 1, LIMITS.values);
    if (!Number.isInteger(d) || d < 1 || means.length !== k * d) {
      throw new InvalidParameterError(
        o.nFeatures === undefined
          ? `means have ${means.length} values, not a multiple of the ${k} weights`
          : `means have ${means.length} values; ${k} components of nFeatures = ${d} need ${k * d}`,
      );
    }
    const gm = new GaussianMixture(trustedGaussianMixtureOptions({ nComponents: k, covarianceType: t }));
    requireWasmMemory(`a model of ${k} ${t} components of ${d} features`, fromParametersBytes(t, k, d));
    withScope((s) => {
      const out = s.u32(1);
      const [w, m, c] = [s.f64Optional(weights), s.f64Optional(means), s.f64Optional(cov)];
      const shape = s.struct(GMM_FROM_COVARIANCES_OPTIONS, { covType: COV_CODE[t], k, d, weightsLen: w[1], meansLen: m[1], covariancesLen: c[1] });
      s.check(s.w.fm_gmm_from_covariances(shape, w[0], m[0], c[0], out));
      gm.state.adopt(s, s.readU32(out, 1)[0]!);
    });
    return gm;
  }

  /** Frees the model's WASM memory; the object is unfitted afterwards. */
  dispose(): void {
    this.state.dispose();
  }
}
