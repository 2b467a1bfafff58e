/**
 * OneClassSVM with scikit-learn 1.2 semantics (same options, defaults and
 * learned attributes, camelCase): libsvm's one-class formulation (Schölkopf's
 * nu-SVM for novelty detection), dual
 *
 *     min 1/2 a'Qa   subject to 0 <= a_i <= 1, sum a_i = nu n,   Q_ij = K(x_i, x_j)
 *
 * solved in the WASM core by SMO with libsvm's second-order working-set
 * selection, shrinking and an LRU kernel-column cache. The rows with a_i > 0
 * are the support vectors (`supportVectors`, with `dualCoef` = their a_i);
 *
 *     decisionFunction(x) = sum_i a_i K(x_i, x) - offset
 *     scoreSamples(x)     = decisionFunction(x) + offset
 *     predict(x)          = +1 (inlier) where decisionFunction(x) > 0, else -1
 *
 * Kernels: 'rbf', exp(-gamma |x - y|^2), with gamma 'scale' (1 / (d Var X),
 * the variance of every value of X), 'auto' (1 / d) or a number; 'linear', x'y.
 * The model lives in WASM memory until dispose(). Privacy: the support vectors
 * ARE training rows; a model shared with others discloses them.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import { OCSVM_FIT_OPTIONS, OCSVM_FROM_PARTS_OPTIONS } from '../wasm/abi.generated.js';
import { codeTable, coreConstant, coreConstantName, type ConstantMember } from '../wasm/constants.js';
import { readSavedJSON, requireLocations } from '../data/saved.js';
import { requireWasmMemory, Scope, withScope } from '../wasm/memory.js';
import { flattenNumeric, guardRead, isFloat64Array, isPositive, LIMITS, readOptions, requireBoolean, requireInteger, requirePositive, type NumericArray } from '../validate.js';
import * as atoms from '../options/atoms.js';
import { defineOptions, parseOptions } from '../options/check.js';
import * as v from 'valibot';
import { WasmModelState } from './wasm-model.js';
import { keepClassName } from '../class-name.js';

export const OCSVM_KERNELS = ['rbf', 'linear'] as const;
export type OneClassSVMKernel = (typeof OCSVM_KERNELS)[number];

export interface OneClassSVMOptions {
  /** 'rbf' (default) or 'linear' */
  kernel?: OneClassSVMKernel;
  /** the RBF kernel's gamma: 'scale' (default, 1 / (nFeatures * variance of every value of X)), 'auto' (1 / nFeatures) or a finite number > 0 */
  gamma?: 'scale' | 'auto' | number;
  /** an upper bound on the fraction of training rows outside the boundary and a lower bound on the fraction of support vectors, in (0, 1] (default 0.5) */
  nu?: number;
  /** the solver stops when its optimality gap is below tol, > 0 (default 1e-3) */
  tol?: number;
  /** libsvm's shrinking heuristic (default true) */
  shrinking?: boolean;
  /** the kernel cache in MiB, > 0 (default 200); it grows only as far as the fit needs */
  cacheSize?: number;
  /** solver iterations, -1 (default) for no limit but libsvm's own (max(10^7, 100 n)); at most LIMITS.maxIter */
  maxIter?: number;
}

export interface ResolvedOneClassSVMOptions {
  kernel: OneClassSVMKernel;
  gamma: 'scale' | 'auto' | number;
  nu: number;
  tol: number;
  shrinking: boolean;
  cacheSize: number;
  maxIter: number;
}

/** Serialized form, see toJSON(). */
export interface OneClassSVMJSON {
  format: 'fedmix.OneClassSVM';
  version: 1;
  kernel: OneClassSVMKernel;
  /** the gamma the kernel used (resolved from 'scale' or 'auto') */
  gamma: number;
  nu: number;
  nFeatures: number;
  /** (nSupport, nFeatures) row-major */
  supportVectors: number[];
  /** (nSupport,) */
  dualCoef: number[];
  offset: number;
  /** the support vectors' training rows, or null when unknown */
  support: number[] | null;
  nIter: number;
  /** null when unknown (a model built from its parts) */
  objective: number | null;
  converged: boolean;
  options?: Partial<ResolvedOneClassSVMOptions>;
}

/**
 * What fromJSON also reads: the same fields with the arrays as Float64Arrays
 * (as a binary wire decodes them), read without a copy into an Array first.
 */
export type OneClassSVMArraysJSON = Omit<OneClassSVMJSON, 'supportVectors' | 'dualCoef' | 'support'> & {
  supportVectors: number[] | Float64Array;
  dualCoef: number[] | Float64Array;
  support: number[] | Float64Array | null;
};

const JSON_KEYS = [
  'format', 'version', 'kernel', 'gamma', 'nu', 'nFeatures', 'supportVectors', 'dualCoef', 'offset', 'support', 'nIter', 'objective', 'converged', 'options',
] as const satisfies readonly (keyof OneClassSVMJSON)[];

/** Kernel codes of the C ABI, read from the core (svm::KernelType::code). */
const KERNEL_CODE: Readonly<Record<OneClassSVMKernel, number>> = codeTable('ocsvm_kernel');

/** The arrays fm_ocsvm_read copies out, by their names in the core's table. */
const READ = {
  supportVectors: 'support_vectors',
  dualCoef: 'dual_coef',
  support: 'support',
} as const satisfies Record<string, ConstantMember<'ocsvm_read'>>;

/**
 * OneClassSVM's options (scikit-learn's defaults), checked once: by the
 * constructor, or by check() at a public edge that makes SVMs (a
 * LocalDetector), then taken as they are.
 */
const kernel = () => atoms.oneOf(OCSVM_KERNELS);
const nu = () => atoms.atom<number>((x) => typeof x === 'number' && x > 0 && x <= 1, 'must be a number in (0, 1]');

export const oneClassSVMOptions = defineOptions<OneClassSVMOptions>()({
  kernel: atoms.optional(kernel(), 'rbf'),
  gamma: atoms.optional(
    atoms.atom<'scale' | 'auto' | number>((x) => x === 'scale' || x === 'auto' || isPositive(x), "must be 'scale', 'auto' or a finite number > 0"),
    'scale',
  ),
  nu: atoms.optional(nu(), 0.5),
  tol: atoms.optional(atoms.positive(), 1e-3),
  shrinking: atoms.optional(atoms.flag(), true),
  cacheSize: atoms.optional(atoms.positive(), 200),
  maxIter: atoms.optional(atoms.integer(-1, LIMITS.maxIter), -1),
});

/** Every option's name, for reading them once (readOptions). */
export const OCSVM_OPTION_KEYS = oneClassSVMOptions.keys;

/** A saved model's kernel and nu: required there, as options they are not. */
const SAVED_KERNEL = v.object({ kernel: kernel(), nu: nu() });

interface FitStats {
  nFeatures: number;
  nSupport: number;
  kernel: OneClassSVMKernel;
  gamma: number;
  nu: number;
  offset: number;
  objective: number;
  nIter: number;
  converged: boolean;
  hasSupport: boolean;
}

/** A fit's statistics from the values fm_ocsvm_info writes. */
function statsFrom(v: Float64Array): FitStats {
  return {
    nFeatures: v[0]!,
    nSupport: v[1]!,
    kernel: coreConstantName('ocsvm_kernel', v[2]!)!,
    gamma: v[3]!,
    nu: v[4]!,
    offset: v[5]!,
    objective: v[6]!,
    nIter: v[7]!,
    converged: v[8] === 1,
    hasSupport: v[9] === 1,
  };
}

export class OneClassSVM {
  static {
    keepClassName(this, 'OneClassSVM');
  }

  readonly options: ResolvedOneClassSVMOptions;
  private readonly state = new WasmModelState<FitStats, keyof typeof READ>({
    name: 'OneClassSVM',
    free: (w, p) => w.fm_ocsvm_free(p),
    infoLength: 10,
    info: (w, handle, out) => w.fm_ocsvm_info(handle, out),
    stats: statsFrom,
    fitting: (n, d) => `fitting a one-class SVM to ${n} rows of ${d} features`,
    // the rows' row-major copy, the solver's per-row arrays and two kernel columns
    fitBytes: (n, d) => 8 * n * (d + 1) + 80 * n,
    readLength: (m, which) => (which === 'supportVectors' ? m.nSupport * m.nFeatures : which === 'support' && !m.hasSupport ? 0 : m.nSupport),
    read: (w, handle, which, out) => w.fm_ocsvm_read(handle, coreConstant('ocsvm_read', READ[which]), out),
  });

  /** Options checked here (oneClassSVMOptions), unless they are what its check() returned. */
  constructor(options: OneClassSVMOptions = {}) {
    this.options = oneClassSVMOptions.check(options);
  }

  /** Learns the boundary of X's rows (scikit-learn's fit). Returns this. */
  fit(X: MatrixLike): this {
    this.state.fit(X, (s, ptr, n, d) => this.fitResident(s, ptr, n, d));
    return this;
  }

  /**
   * Fits on rows already in WASM memory at `ptr` (column-major, n x d), so
   * that callers fitting or scoring many models on one dataset copy it in once.
   * @internal
   */
  fitResident(s: Scope, ptr: number, n: number, d: number): void {
    this.state.requireFitMemory(n, d);
    const o = this.options;
    const gammaCode = coreConstant('ocsvm_gamma', typeof o.gamma === 'number' ? 'value' : o.gamma);
    const out = s.u32(1);
    s.check(
      s.w.fm_ocsvm_fit(
        ptr,
        s.struct(OCSVM_FIT_OPTIONS, {
          n, d, kernel: KERNEL_CODE[o.kernel], gammaCode, gamma: typeof o.gamma === 'number' ? o.gamma : 0, nu: o.nu, tol: o.tol,
          shrinking: o.shrinking ? 1 : 0, cacheMb: o.cacheSize, maxIter: o.maxIter,
        }),
        out,
      ),
    );
    this.state.adopt(s, s.readU32(out, 1)[0]!);
  }

  private fitted(): { handle: number; stats: FitStats } {
    return this.state.fitted();
  }

  /** Fits, then labels the training rows +1 (inlier) or -1 (scikit-learn's fit_predict). */
  fitPredict(X: MatrixLike): Int32Array {
    const x = Matrix.from(X);
    return this.fit(x).predict(x);
  }

  /** sum_i a_i K(x_i, x) - offset per row: positive inside the boundary, negative outside. */
  decisionFunction(X: MatrixLike): Float64Array {
    const x = Matrix.from(X);
    this.fitted();
    // the rows, one block of them row-major, and the result
    requireWasmMemory(`scoring ${x.nRows} rows`, 8 * x.data.length + 8 * x.nRows + 8 * 16 * (x.nCols + 1));
    return withScope((s) => this.decisionFunctionResident(s, s.matrix(x), x.nRows, x.nCols));
  }

  /** decisionFunction on rows already in WASM memory (see fitResident). @internal */
  decisionFunctionResident(s: Scope, ptr: number, n: number, d: number): Float64Array {
    const { handle } = this.fitted();
    const out = s.f64(n);
    s.check(s.w.fm_ocsvm_decision_function(handle, ptr, n, d, out));
    return s.readF64(out, n);
  }

  /** The unshifted score sum_i a_i K(x_i, x): decisionFunction(X) + offset, as scikit-learn computes it. */
  scoreSamples(X: MatrixLike): Float64Array {
    const dec = this.decisionFunction(X);
    const offset = this.fitted().stats.offset;
    for (let i = 0; i < dec.length; i++) dec[i] = dec[i]! + offset;
    return dec;
  }

  /** +1 for rows inside the boundary (decisionFunction > 0), -1 for the others. */
  predict(X: MatrixLike): Int32Array {
    const dec = this.decisionFunction(X);
    return Int32Array.from(dec, (v) => (v > 0 ? 1 : -1));
  }

  private read(which: keyof typeof READ): Float64Array {
    return this.state.read(which);
  }

  /** (nSupport, nFeatures): the training rows with a_i > 0, in training order */
  get supportVectors(): Matrix {
    const { nSupport: n, nFeatures: d } = this.fitted().stats;
    const v = this.read('supportVectors');
    const m = Matrix.zeros(n, d);
    for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) m.data[j * n + i] = v[i * d + j]!;
    return m;
  }
  /** the support vectors' indices among the training rows (scikit-learn's support_); empty for a model loaded without them */
  get support(): Int32Array {
    return Int32Array.from(this.read('support'));
  }
  /** (nSupport,): the support vectors' a_i, in (0, 1], summing to nu n (scikit-learn's dual_coef_, flattened) */
  get dualCoef(): Float64Array {
    return this.read('dualCoef').slice();
  }
  /** decisionFunction = scoreSamples - offset (scikit-learn's offset_; libsvm's rho) */
  get offset(): number {
    return this.fitted().stats.offset;
  }
  /** the number of support vectors (scikit-learn's n_support_[0]) */
  get nSupport(): number {
    return this.fitted().stats.nSupport;
  }
  /** solver iterations (scikit-learn's n_iter_) */
  get nIter(): number {
    return this.fitted().stats.nIter;
  }
  /** the dual objective 1/2 a'Qa at the solution (libsvm's obj; NaN for a model built from its parts) */
  get objective(): number {
    return this.fitted().stats.objective;
  }
  /** false when maxIter stopped the solver (scikit-learn's fit_status_ 1) */
  get converged(): boolean {
    return this.fitted().stats.converged;
  }
  /** the gamma the kernel used: the number given, or what 'scale' or 'auto' gave (scikit-learn's _gamma) */
  get effectiveGamma(): number {
    return this.fitted().stats.gamma;
  }
  get nFeatures(): number {
    return this.fitted().stats.nFeatures;
  }
  get isFitted(): boolean {
    return this.state.isFitted;
  }

  toJSON(): OneClassSVMJSON {
    const { stats } = this.fitted();
    return {
      format: 'fedmix.OneClassSVM',
      version: 1,
      kernel: stats.kernel,
      gamma: stats.gamma,
      nu: stats.nu,
      nFeatures: stats.nFeatures,
      supportVectors: Array.from(this.read('supportVectors')),
      dualCoef: Array.from(this.read('dualCoef')),
      offset: stats.offset,
      support: stats.hasSupport ? Array.from(this.read('support')) : null,
      nIter: stats.nIter,
      objective: Number.isFinite(stats.objective) ? stats.objective : null,
      converged: stats.converged,
      options: { ...this.options },
    };
  }

  /**
   * Rebuilds a model saved with toJSON() (or received from elsewhere: the
   * same fields). Every array is checked (shapes, finite values) before
   * anything is allocated; a bad one is an InvalidParameterError naming it.
   */
  static fromJSON(json: OneClassSVMJSON | OneClassSVMArraysJSON | string): OneClassSVM {
    const j = readSavedJSON<OneClassSVMJSON>(json, 'fedmix.OneClassSVM', JSON_KEYS);
    const { kernel, nu } = parseOptions(SAVED_KERNEL, { kernel: j.kernel, nu: j.nu });
    // the file's own options, with its kernel and nu: checked once, here
    const options = oneClassSVMOptions.check({ ...readOptions(j.options as OneClassSVMOptions | undefined, OCSVM_OPTION_KEYS, 'options'), kernel, nu }, 'options');
    const gamma = requirePositive('gamma', j.gamma);
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.values);
    const offset = j.offset;
    if (typeof offset !== 'number' || !Number.isFinite(offset)) throw new InvalidParameterError(`offset must be a finite number, got ${formatValue(offset)}`);
    const nIter = requireInteger('nIter', j.nIter ?? 0, 0, LIMITS.count);
    const objective = j.objective ?? NaN;
    if (typeof objective !== 'number' || (j.objective !== null && j.objective !== undefined && !Number.isFinite(objective))) {
      throw new InvalidParameterError(`objective must be a finite number or null, got ${formatValue(j.objective)}`);
    }
    const converged = requireBoolean('converged', j.converged ?? true);
    const arr = (name: string, v: unknown) => {
      if (!guardRead(name, () => Array.isArray(v) || isFloat64Array(v))) throw new InvalidParameterError(`${name} must be an array of numbers, got ${formatValue(v)}`);
      return flattenNumeric(name, v as NumericArray);
    };
    const coef = arr('dualCoef', j.dualCoef);
    const nSv = coef.length;
    if (nSv < 1) throw new InvalidParameterError('dualCoef must hold at least one coefficient (a model has at least one support vector)');
    const sv = arr('supportVectors', j.supportVectors);
    if (sv.length !== nSv * d) {
      throw new InvalidParameterError(`supportVectors have ${sv.length} values; ${nSv} support vectors (dualCoef) of nFeatures = ${d} need ${nSv * d}`);
    }
    // the kernel squares rows: support vectors are locations as KMeans centers are (a value that is not finite the core names by row and column)
    if (sv.every(Number.isFinite)) requireLocations('supportVectors', sv, d);
    let support: Uint32Array | undefined;
    if (j.support !== null && j.support !== undefined) {
      const s = arr('support', j.support);
      if (s.length !== nSv) throw new InvalidParameterError(`support has ${s.length} indices; there are ${nSv} support vectors`);
      support = new Uint32Array(nSv);
      s.forEach((v, i) => {
        support![i] = requireInteger(`support[${i}]`, v, 0, LIMITS.count);
      });
    }
    const model = new OneClassSVM(options);
    // the parts as passed in, and the model the core builds from them (rows padded to an even width, their norms)
    requireWasmMemory(`loading a one-class SVM of ${nSv} support vectors of ${d} features`, 8 * (2 * sv.length + 3 * nSv) + 4 * nSv);
    withScope((s) => {
      const out = s.u32(1);
      const [supportPtr, supportLen] = support === undefined ? [0, 0] : [s.u32From(support), support.length];
      const parts = s.struct(OCSVM_FROM_PARTS_OPTIONS, { kernel: KERNEL_CODE[kernel], gamma, nu, d, svLen: sv.length, nSv, rho: offset, supportLen });
      s.check(s.w.fm_ocsvm_from_parts(parts, s.f64From(sv), s.f64From(coef), supportPtr, out));
      const handle = s.readU32(out, 1)[0]!;
      s.w.fm_ocsvm_set_stats(handle, nIter, objective, converged ? 1 : 0);
      model.state.adopt(s, handle);
    });
    return model;
  }

  /** Frees the model's WASM memory; the object is unfitted afterwards. */
  dispose(): void {
    this.state.dispose();
  }
}
