/**
 * DirichletMultinomialMixture: a distribution over clients, each a histogram c
 * of C counts of one categorical feature (e.g. its labels) and its size
 * n = sum c, 1 <= n <= N (Scott & Cahill's MDM, equations 1-3):
 *
 *   q(c, n) = sum_k tau_k pi_{k,n} p(c | n, alpha_k)
 *
 * tau (K) are the component weights, alpha (K x C) the Dirichlet parameters,
 * pi (K x N) the size distributions (pi[k][n - 1] = P(size n | component k)).
 * The arithmetic runs in WASM (crates/fedmix-core/src/mdm); the parameters are
 * small and live here, so a model needs no dispose(). Learn one from clients
 * with fitMdm (federated), draw new clients with sample().
 */
import type { Table } from 'apache-arrow';
import { arrowLibrary } from '../data/arrow-library.js';
import { fixedSizeListVector, indexVector, tableOf } from '../data/arrow.js';
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { formatValue, InvalidDataError, InvalidParameterError, restated } from '../errors.js';
import * as v from 'valibot';
import { guardRead, isArray, LIMITS, readOptions, requireInteger, requireLength, requireVector, seedParts } from '../validate.js';
import * as atoms from '../options/atoms.js';
import { defineOptions } from '../options/check.js';
import { Rng } from '../random.js';
import { MDM_INITIALIZE_OPTIONS, MDM_LOG_PMF_OPTIONS, MDM_SAMPLE_OPTIONS, MDM_UPDATE_OPTIONS } from '../wasm/abi.generated.js';
import { requireWasmMemory, withScope, type Scope } from '../wasm/memory.js';
import { keepClassName } from '../class-name.js';

/** The serialized form (toJSON): plain arrays, readable by any tool. */
export interface DirichletMultinomialMixtureJSON {
  format?: 'fedmix.DirichletMultinomialMixture';
  version?: 1;
  /** K component weights */
  tau: number[];
  /** K rows of C Dirichlet parameters */
  alpha: number[][];
  /** K rows of N size probabilities (entry n - 1: size n) */
  pi: number[][];
  /** optional names of the C categories (e.g. the class labels the columns count) */
  categories?: string[];
}

export interface DirichletMultinomialMixtureParameters {
  tau: ArrayLike<number>;
  /** K x C: rows of C numbers, or a Matrix with K rows */
  alpha: MatrixLike;
  /** K x N: rows of N numbers, or a Matrix with K rows */
  pi: MatrixLike;
  categories?: readonly string[];
}

/** New clients drawn from a model. */
export interface MdmSample {
  /** m x C counts, one row per client */
  histograms: Matrix;
  /** each client's size n (its row sum) */
  sizes: Int32Array;
  /** the component each client was drawn from */
  components: Int32Array;
}

/** A Matrix (rows = components) as row-major values; `name` for errors. */
function rowMajor(name: string, x: MatrixLike): { values: Float64Array; rows: number; cols: number } {
  // rows of numbers (the usual form, and how messages arrive): copied straight, no column-major detour
  if (guardRead(name, () => Array.isArray(x) && x.length > 0)) {
    const rowsOf = x as unknown[];
    const rows = requireLength(name, rowsOf);
    const rowAt = (i: number): unknown => guardRead(`${name}[${i}]`, () => rowsOf[i]);
    const cols = requireLength(`${name}[0]`, rowAt(0));
    if (rows * cols > LIMITS.values) throw new InvalidParameterError(`${name} is ${rows} x ${cols}; at most ${LIMITS.values} values fit`);
    const values = new Float64Array(rows * cols);
    for (let i = 0; i < rows; i++) {
      const r = requireVector(`${name}[${i}]`, rowAt(i));
      if (r.length !== cols) throw new InvalidParameterError(`${name}: row ${i} has ${r.length} values but row 0 has ${cols}; all rows need the same length`);
      values.set(r, i * cols);
    }
    return { values, rows, cols };
  }
  let m: Matrix;
  try {
    m = Matrix.from(x);
  } catch (e) {
    throw restated(e, (err) => new InvalidParameterError(`${name}: ${err.message}`));
  }
  const values = new Float64Array(m.nRows * m.nCols);
  for (let j = 0; j < m.nCols; j++) for (let i = 0; i < m.nRows; i++) values[i * m.nCols + j] = m.data[j * m.nRows + i]!;
  return { values, rows: m.nRows, cols: m.nCols };
}

/**
 * Client histograms (rows of `histograms`) as row-major counts and sizes
 * (row sums unless `sizes` is given, in which case each must equal its row's
 * sum). Values are checked by the core (non-negative integer counts, sizes in
 * 1..N, sums equal to sizes), which names the client.
 */
export function histogramRows(histograms: MatrixLike, nCategories?: number, sizes?: ArrayLike<number>): { counts: Float64Array; sizes: Float64Array; m: number; c: number } {
  const h = Matrix.from(histograms);
  if (nCategories !== undefined && h.nCols !== nCategories) {
    throw new InvalidDataError(`the histograms have ${h.nCols} categories but the model has ${nCategories}; give one column per category`);
  }
  const { nRows: m, nCols: c } = h;
  const counts = new Float64Array(m * c);
  const sums = new Float64Array(m);
  for (let j = 0; j < c; j++) {
    for (let i = 0; i < m; i++) {
      const v = h.data[j * m + i]!;
      counts[i * c + j] = v;
      sums[i]! += v;
    }
  }
  if (sizes === undefined) return { counts, sizes: sums, m, c };
  const given = requireVector('sizes', sizes, InvalidDataError);
  if (given.length !== m) throw new InvalidDataError(`${given.length} sizes for ${m} histograms; give one size n per histogram`);
  return { counts, sizes: given, m, c };
}

/**
 * Histograms checked as federated MDM inference checks its clients (the core
 * names a bad row; at least one row and two categories), with N: maxCount, or
 * the largest size.
 */
export function checkedHistograms(
  histograms: MatrixLike,
  options: { maxCount?: number; sizes?: ArrayLike<number> },
): { counts: Float64Array; sizes: Float64Array; m: number; c: number; nMax: number } {
  return histogramsUpTo(histograms, options.maxCount === undefined ? undefined : requireInteger('maxCount', options.maxCount, 1, LIMITS.count), options.sizes);
}

/** checkedHistograms with N (maxCount) checked already (a resolved option) or undefined. */
function histogramsUpTo(histograms: MatrixLike, maxCount: number | undefined, givenSizes: ArrayLike<number> | undefined): { counts: Float64Array; sizes: Float64Array; m: number; c: number; nMax: number } {
  const rows = histogramRows(histograms, undefined, givenSizes);
  const { counts, sizes, m, c } = rows;
  if (m === 0) throw new InvalidDataError('no histograms: give one row of counts per client');
  let largest = 0;
  for (const n of sizes) if (n > largest) largest = n;
  const nMax = maxCount ?? Math.max(1, largest);
  withScope((s) => s.check(s.w.fm_mdm_check_histograms(s.f64From(counts), s.f64From(sizes), m, c, nMax)));
  if (c < 2) throw new InvalidDataError(`the histograms have ${c} categor${c === 1 ? 'y' : 'ies'}; they need at least 2`);
  return { ...rows, nMax };
}

/** Options of DirichletMultinomialMixture.fit: fitMdm's, less what only a federation has. */
export interface MdmCentralFitOptions {
  /** K (default 1) */
  nComponents?: number;
  /** EM iterations after the initialization (default 100, as fitMdm's rounds) */
  rounds?: number;
  /** N, the largest client size the model covers (default: the largest n among the rows) */
  maxCount?: number;
  /** each row's n, when given apart from the histograms (each must equal its row's sum) */
  sizes?: ArrayLike<number>;
  /** names of the C categories, kept in the model */
  categories?: readonly string[];
  /** initial parameters instead of Algorithm 1's random assignment (same K, C, N) */
  init?: DirichletMultinomialMixture;
  /** seed of the initial assignment: the same as fitMdm's seed gives the same model */
  seed?: number;
}

/**
 * DirichletMultinomialMixture.fit's options, checked once (fitMdm's bounds:
 * K and N counts, rounds up to LIMITS.rounds, any seed); `sizes` and
 * `categories` are data, checked with the histograms and the model.
 * Resolved, nComponents is set (init's K when not given, else 1).
 */
export const mdmCentralFitOptions = defineOptions<MdmCentralFitOptions>()(
  {
    nComponents: atoms.optional(atoms.federatedComponents()),
    rounds: atoms.optional(atoms.rounds(0), 100),
    maxCount: atoms.optional(atoms.integer(1, LIMITS.count)),
    sizes: atoms.optional(v.custom<ArrayLike<number>>(() => true)),
    categories: atoms.optional(v.custom<readonly string[]>(() => true)),
    init: atoms.optional(atoms.atom<DirichletMultinomialMixture>((x) => guardRead('init', () => x instanceof DirichletMultinomialMixture), 'must be a DirichletMultinomialMixture')),
    seed: atoms.optional(atoms.seed()),
  },
  (o) => ({ ...o, nComponents: o.nComponents ?? o.init?.nComponents ?? 1 }),
);

function nested(values: Float64Array, rows: number, cols: number): number[][] {
  return Array.from({ length: rows }, (_, r) => Array.from(values.subarray(r * cols, (r + 1) * cols)));
}

export class DirichletMultinomialMixture {
  static {
    keepClassName(this, 'DirichletMultinomialMixture');
  }

  /** K */
  readonly nComponents: number;
  /** C */
  readonly nCategories: number;
  /** N, the largest client size the model covers */
  readonly maxCount: number;
  /** (K) component weights */
  readonly tau: Float64Array;
  /** (K x C) Dirichlet parameters, row-major */
  readonly alpha: Float64Array;
  /** (K x N) size distributions, row-major: pi[k * N + n - 1] = P(n | k) */
  readonly pi: Float64Array;
  /** names of the categories, when known */
  readonly categories: readonly string[] | undefined;

  /** Checks the parameters (tau and each row of pi sum to 1 within 1e-8, alpha > 0) and builds the model. */
  constructor(params: DirichletMultinomialMixtureParameters) {
    if (params === null || typeof params !== 'object') throw new InvalidParameterError(`a DirichletMultinomialMixture needs { tau, alpha, pi }, got ${formatValue(params)}`);
    const o = readOptions(params, ['tau', 'alpha', 'pi', 'categories'], 'parameters');
    const a = rowMajor('alpha', o.alpha!);
    const p = rowMajor('pi', o.pi!);
    const tau = requireVector('tau', o.tau ?? []).slice();
    const k = tau.length;
    if (k < 1) throw new InvalidParameterError('tau must hold one weight per component (at least one)');
    if (a.rows !== k) throw new InvalidParameterError(`alpha has ${a.rows} rows but tau has ${k} weights; give one row per component`);
    if (p.rows !== k) throw new InvalidParameterError(`pi has ${p.rows} rows but tau has ${k} weights; give one row per component`);
    let categories: string[] | undefined;
    if (o.categories !== undefined) {
      const given = o.categories;
      const count = requireLength('categories', given);
      categories = Array.from({ length: count }, (_, i) => guardRead(`categories[${i}]`, () => given[i]) as string);
      if (count !== a.cols || categories.some((n) => typeof n !== 'string')) {
        throw new InvalidParameterError(`categories must be ${a.cols} strings, one per column of alpha, got ${formatValue(given)}`);
      }
      if (new Set(categories).size !== categories.length) throw new InvalidParameterError('categories must be distinct');
    }
    this.nComponents = k;
    this.nCategories = a.cols;
    this.maxCount = p.cols;
    this.tau = tau;
    this.alpha = a.values;
    this.pi = p.values;
    this.categories = categories;
    withScope((s) => s.check(s.w.fm_mdm_check(k, this.nCategories, this.maxCount, ...this.pointers(s))));
  }

  /** The model in WASM memory twice: as passed in, and the core's checked copy. */
  private modelBytes(): number {
    return 16 * (this.tau.length + this.alpha.length + this.pi.length);
  }

  /** (tau, alpha, pi) copied into WASM memory. @internal */
  pointers(s: Scope): [number, number, number] {
    return [s.f64From(this.tau), s.f64From(this.alpha), s.f64From(this.pi)];
  }

  /** Row k of alpha. */
  alphaOf(k: number): Float64Array {
    requireInteger('component', k, 0, this.nComponents - 1);
    return this.alpha.slice(k * this.nCategories, (k + 1) * this.nCategories);
  }

  /** Row k of pi (entry n - 1: size n). */
  piOf(k: number): Float64Array {
    requireInteger('component', k, 0, this.nComponents - 1);
    return this.pi.slice(k * this.maxCount, (k + 1) * this.maxCount);
  }

  private evaluate(histograms: MatrixLike, sizes: ArrayLike<number> | undefined, withResp: boolean): { ll: Float64Array; resp?: Float64Array; m: number } {
    const { counts, sizes: n, m } = histogramRows(histograms, this.nCategories, sizes);
    const k = this.nComponents;
    requireWasmMemory(`scoring ${m} histograms`, 8 * (counts.length + 2 * m + (withResp ? m * k : 0)) + this.modelBytes());
    return withScope((s) => {
      const ll = s.f64(m);
      const resp = withResp ? s.f64(m * k) : 0;
      s.check(s.w.fm_mdm_log_pmf(s.struct(MDM_LOG_PMF_OPTIONS, { k, c: this.nCategories, nMax: this.maxCount, m }), ...this.pointers(s), s.f64From(counts), s.f64From(n), ll, resp));
      return { ll: s.readF64(ll, m), resp: withResp ? s.readF64(resp, m * k) : undefined, m };
    });
  }

  /**
   * ln q(c_i, n_i) of every client (a row of `histograms`; n_i its row sum, or
   * sizes[i], which must equal it). -Infinity where no component gives the
   * client's size a positive probability.
   */
  logPmf(histograms: MatrixLike, options: { sizes?: ArrayLike<number> } = {}): Float64Array {
    return this.evaluate(histograms, readOptions(options, ['sizes']).sizes, false).ll;
  }

  /** The mean of logPmf over the clients (the validation score of Appendix A.1). */
  score(histograms: MatrixLike, options: { sizes?: ArrayLike<number> } = {}): number {
    const ll = this.logPmf(histograms, options);
    if (ll.length === 0) throw new InvalidDataError('score needs at least one histogram');
    return ll.reduce((a, b) => a + b, 0) / ll.length;
  }

  /** omega of eq 12 for every client: an m x K Matrix of component probabilities. */
  predictProba(histograms: MatrixLike, options: { sizes?: ArrayLike<number> } = {}): Matrix {
    const { resp, m } = this.evaluate(histograms, readOptions(options, ['sizes']).sizes, true);
    const k = this.nComponents;
    const out = Matrix.zeros(m, k);
    for (let i = 0; i < m; i++) for (let q = 0; q < k; q++) out.data[q * m + i] = resp![i * k + q]!;
    return out;
  }

  /** The most probable component of every client. */
  predict(histograms: MatrixLike, options: { sizes?: ArrayLike<number> } = {}): Int32Array {
    const p = this.predictProba(histograms, options);
    const out = new Int32Array(p.nRows);
    for (let i = 0; i < p.nRows; i++) {
      let best = 0;
      for (let q = 1; q < p.nCols; q++) if (p.data[q * p.nRows + i]! > p.data[best * p.nRows + i]!) best = q;
      out[i] = best;
    }
    return out;
  }

  /**
   * m new clients: a component k ~ tau, a size n ~ pi_k, proportions
   * p ~ Dirichlet(alpha_k), the histogram ~ Multinomial(n, p). Seeded; without
   * a seed, a fresh one each call.
   */
  sample(m: number, options: { seed?: number } = {}): MdmSample {
    const c = this.nCategories;
    requireInteger('m', m, 0, Math.floor(LIMITS.values / c));
    const [lo, hi] = seedParts(readOptions(options, ['seed']).seed);
    requireWasmMemory(`sampling ${m} histograms of ${c} categories`, m * (8 * c + 12) + this.modelBytes());
    return withScope((s) => {
      const counts = s.f64(m * c);
      const sizes = s.f64(m);
      const comps = s.u32(m);
      s.check(s.w.fm_mdm_sample(s.struct(MDM_SAMPLE_OPTIONS, { k: this.nComponents, c, nMax: this.maxCount, m, seedLo: lo, seedHi: hi }), ...this.pointers(s), counts, sizes, comps));
      const rows = s.readF64(counts, m * c);
      const histograms = Matrix.zeros(m, c);
      for (let i = 0; i < m; i++) for (let j = 0; j < c; j++) histograms.data[j * m + i] = rows[i * c + j]!;
      return { histograms, sizes: Int32Array.from(s.readF64(sizes, m)), components: new Int32Array(s.readU32(comps, m)) };
    });
  }

  /**
   * The parameters as an Arrow Table of the project's apache-arrow, one row
   * per component: `component` (Int32), `tau` (Float64), `alpha`
   * (FixedSizeList<Float64>[C], in the order of `categories`) and `pi`
   * (FixedSizeList<Float64>[N]: entry n - 1 is the probability of a client of n rows).
   */
  toArrow(): Table {
    const { makeVector } = arrowLibrary('DirichletMultinomialMixture.toArrow()');
    return tableOf({
      component: indexVector(this.nComponents),
      tau: makeVector(this.tau.slice()),
      alpha: fixedSizeListVector(this.alpha, this.nCategories),
      pi: fixedSizeListVector(this.pi, this.maxCount),
    });
  }

  /** Plain arrays: { tau, alpha (K rows of C), pi (K rows of N), categories? }. */
  toJSON(): DirichletMultinomialMixtureJSON {
    const out: DirichletMultinomialMixtureJSON = {
      format: 'fedmix.DirichletMultinomialMixture',
      version: 1,
      tau: Array.from(this.tau),
      alpha: nested(this.alpha, this.nComponents, this.nCategories),
      pi: nested(this.pi, this.nComponents, this.maxCount),
    };
    if (this.categories) out.categories = [...this.categories];
    return out;
  }

  /**
   * Fits a model to histograms held in one place (one row per client): the
   * federated algorithm of fitMdm (Algorithm 1, then `rounds` full-batch EM
   * rounds of Algorithm 2) with one party holding every row, on the same core
   * kernels but without the federation's runtime or messages. The same seed
   * gives fitMdm's model (its full-batch run without privacy) up to the order
   * of the additions.
   *
   * ```ts
   * const model = DirichletMultinomialMixture.fit(histograms, { nComponents: 2, rounds: 100, seed: 0 });
   * ```
   */
  static fit(histograms: MatrixLike, options: MdmCentralFitOptions = {}): DirichletMultinomialMixture {
    const o = mdmCentralFitOptions.check(options);
    const { nComponents: k, rounds, seed } = o;
    const { counts, sizes, m, c, nMax } = histogramsUpTo(histograms, o.maxCount, o.sizes);
    if (k * Math.max(c, nMax) > LIMITS.values) throw new InvalidParameterError(`K = ${k} components of C = ${c} categories and N = ${nMax} sizes exceed ${LIMITS.values} values; lower K or N`);
    if (m < k) throw new InvalidParameterError(`K = ${k} components is larger than the ${m} histograms; lower K`);
    if (o.init && (o.init.nComponents !== k || o.init.nCategories !== c || o.init.maxCount !== nMax)) {
      throw new InvalidParameterError(`init has K = ${o.init.nComponents}, C = ${o.init.nCategories}, N = ${o.init.maxCount}; this fit has K = ${k}, C = ${c}, N = ${nMax}`);
    }
    requireWasmMemory(`fitting ${k} components to ${m} histograms of ${c} categories`, 8 * (m * c + m) + 4 * m + 48 * k * (c + nMax + 1));
    // Algorithm 1's draws: each row draws its component as fitMdm's client of the same index does (its seed from the run's seed)
    const components = o.init ? undefined : drawComponents(m, k, seed);
    // the rows copied into WASM and checked once (fm_mdm_histograms), for the initialization and every round
    const { tau, alpha, pi } = withScope((s) => {
      const heldOut = s.u32(1);
      s.check(s.w.fm_mdm_histograms(s.f64From(counts), s.f64From(sizes), m, c, heldOut));
      const held = s.readU32(heldOut, 1)[0]!;
      try {
        const [t, a, pp] = o.init ? [s.f64From(o.init.tau), s.f64From(o.init.alpha), s.f64From(o.init.pi)] : [s.f64(k), s.f64(k * c), s.f64(k * nMax)];
        if (!o.init) {
          const [e, p, q] = [s.f64(k * nMax), s.f64(k * c), s.f64(k * c)];
          s.check(s.w.fm_mdm_init_stats_held(held, k, nMax, s.u32From(components!), e, p, q));
          s.check(s.w.fm_mdm_initialize(s.struct(MDM_INITIALIZE_OPTIONS, { k, c, nMax, clients: m, noisy: 0 }), e, p, q, t, a, pp, s.f64(1)));
        }
        // Algorithm 2, full batch: the statistics of all rows in one kernel call, then the update
        const [t2, a2, pp2] = [s.f64(k), s.f64(k * c), s.f64(k * nMax)];
        const out = s.f64(2 * k + k * c + 3);
        const e = s.f64(k * nMax);
        const flags = s.f64(1);
        const handleOut = s.u32(1);
        const update = s.struct(MDM_UPDATE_OPTIONS, { k, c, nMax, clients: m, noisy: 0 });
        let cur = [t, a, pp];
        let next = [t2, a2, pp2];
        for (let r = 0; r < rounds; r++) {
          s.check(s.w.fm_mdm_prepare(k, c, nMax, cur[0]!, cur[1]!, cur[2]!, handleOut));
          const handle = s.readU32(handleOut, 1)[0]!;
          try {
            s.check(s.w.fm_mdm_round_stats_held(handle, held, Infinity, out, e, out + 8 * k, out + 8 * (k + k * c), out + 8 * (2 * k + k * c)));
          } finally {
            s.w.fm_mdm_prepared_free(handle);
          }
          s.check(s.w.fm_mdm_update(update, cur[0]!, cur[1]!, cur[2]!, out, e, out + 8 * k, out + 8 * (k + k * c), next[0]!, next[1]!, next[2]!, flags));
          [cur, next] = [next, cur];
        }
        return { tau: s.readF64(cur[0]!, k), alpha: s.readF64(cur[1]!, k * c), pi: s.readF64(cur[2]!, k * nMax) };
      } finally {
        s.w.fm_mdm_histograms_free(held);
      }
    });
    const rows = (v: Float64Array, w: number) => Array.from({ length: k }, (_, r) => v.subarray(r * w, (r + 1) * w));
    return new DirichletMultinomialMixture({ tau, alpha: rows(alpha, c), pi: rows(pi, nMax), categories: o.categories });
  }

  /** A model from toJSON() output (or any object / JSON text with tau, alpha and pi). */
  static fromJSON(json: DirichletMultinomialMixtureJSON | string): DirichletMultinomialMixture {
    let j: unknown;
    try {
      j = typeof json === 'string' ? JSON.parse(json) : json;
    } catch {
      throw new InvalidParameterError('the model is not valid JSON');
    }
    if (j === null || typeof j !== 'object') throw new InvalidParameterError(`a DirichletMultinomialMixture JSON must be an object with tau, alpha and pi, got ${formatValue(j)}`);
    const o = readOptions(j as DirichletMultinomialMixtureJSON, ['format', 'version', 'tau', 'alpha', 'pi', 'categories'], 'the JSON');
    if (o.format !== undefined && o.format !== 'fedmix.DirichletMultinomialMixture') {
      throw new InvalidParameterError(`not a DirichletMultinomialMixture JSON: format must be "fedmix.DirichletMultinomialMixture", got ${formatValue(o.format)}`);
    }
    if (o.version !== undefined && o.version !== 1) {
      throw new InvalidParameterError(`unsupported DirichletMultinomialMixture JSON version ${formatValue(o.version)}; this fedmix reads version 1 (the number)`);
    }
    for (const key of ['tau', 'alpha', 'pi'] as const) {
      if (!isArray(key, o[key])) throw new InvalidParameterError(`the model JSON needs "${key}" as an array${key === 'tau' ? '' : ' of rows'}, got ${formatValue(o[key])}`);
    }
    return new DirichletMultinomialMixture({ tau: o.tau!, alpha: o.alpha!, pi: o.pi!, categories: o.categories });
  }
}

/** Each of m rows' starting component among k, drawn as fitMdm's client of the same index draws it (its seed from the run's seed). */
function drawComponents(m: number, k: number, seed: number | undefined): Uint32Array {
  const components = new Uint32Array(m);
  const seeds = new Rng(seed);
  try {
    const draws = seeds.uniform(m);
    for (let i = 0; i < m; i++) {
      const own = new Rng(Math.floor(draws[i]! * 2 ** 32));
      try {
        components[i] = own.choice(k, 1)[0]!;
      } finally {
        own.dispose();
      }
    }
  } finally {
    seeds.dispose();
  }
  return components;
}
