/**
 * Principal component analysis, fitted on training data only and applied to
 * any later data (the FedGenGMM paper reduces MNIST and RWHAR this way). The
 * results are scikit-learn 1.2's `PCA(n_components, svd_solver='full')`:
 * centered data, components by descending explained variance (ddof 1), and
 * scikit-learn's signs (svd_flip: in each component the training row with the
 * largest score in magnitude scores positive). The eigendecomposition runs in
 * WASM (crates/fedmix-core/src/pca.rs); the fitted parameters are small and
 * live here, like KMeans centers.
 */
import type { Table } from 'apache-arrow';
import { arrowLibrary } from './arrow-library.js';
import { InvalidDataError, InvalidParameterError, NotFittedError } from '../errors.js';
import { fixedSizeListVector, indexVector, tableOf } from './arrow.js';
import { LIMITS, readOptions, requireInteger } from '../validate.js';
import { readSavedJSON, savedArray, savedLocations, savedNonNegative, savedNonNegativeArray } from './saved.js';
import { PCA_FIT_OPTIONS } from '../wasm/abi.generated.js';
import { requireWasmMemory, withScope } from '../wasm/memory.js';
import { Matrix, type MatrixLike } from './matrix.js';
import { keepClassName } from '../class-name.js';

export interface PCAOptions {
  /** how many components to keep: 1 <= nComponents <= min(rows, features) of the training data (and LIMITS.components) */
  nComponents: number;
}

/** Serialized form, see toJSON(). */
export interface PCAJSON {
  format: 'fedmix.PCA';
  version: 1;
  nComponents: number;
  nFeatures: number;
  mean: number[];
  /** (nComponents, nFeatures) row-major */
  components: number[];
  explainedVariance: number[];
  explainedVarianceRatio: number[];
  noiseVariance: number;
}

const PCA_JSON_KEYS = [
  'format', 'version', 'nComponents', 'nFeatures', 'mean', 'components', 'explainedVariance', 'explainedVarianceRatio', 'noiseVariance',
] as const satisfies readonly (keyof PCAJSON)[];

interface Fitted {
  d: number;
  mean: Float64Array;
  components: Float64Array;
  explainedVariance: Float64Array;
  explainedVarianceRatio: Float64Array;
  noiseVariance: number;
}

/** How far saved components may be from orthonormal (|c_r . c_s - [r = s]|): a few digits less than a fit's rounding, as text with 7 digits keeps. */
const ORTHONORMAL_TOLERANCE = 1e-6;

/**
 * The rows of `components` (k x d, row-major) orthonormal within
 * ORTHONORMAL_TOLERANCE, as a fit leaves them: transform projects on them and
 * inverseTransform rebuilds from them, so a scaled or edited row would scale
 * every score (and overflow with a factor of 1e300).
 */
function requireOrthonormal(components: Float64Array, k: number, d: number): void {
  for (let r = 0; r < k; r++) {
    for (let s = 0; s <= r; s++) {
      let dot = 0;
      for (let j = 0; j < d; j++) dot += components[r * d + j]! * components[s * d + j]!;
      const off = dot - (r === s ? 1 : 0);
      if (!(Math.abs(off) <= ORTHONORMAL_TOLERANCE)) {
        throw new InvalidParameterError(
          r === s
            ? `components row ${r} has squared norm ${dot}; principal components are unit vectors`
            : `components rows ${s} and ${r} have dot product ${dot}; principal components are orthogonal`,
        );
      }
    }
  }
}

/**
 * ```ts
 * const pca = new PCA({ nComponents: 8 }).fit(Xtrain);
 * const Ztrain = pca.transform(Xtrain);   // n x 8
 * const Ztest = pca.transform(Xtest);     // the training mean and components
 * ```
 */
export class PCA {
  static {
    keepClassName(this, 'PCA');
  }

  readonly nComponents: number;
  private fitted: Fitted | undefined;

  constructor(options: PCAOptions) {
    this.nComponents = requireInteger('nComponents', readOptions(options, ['nComponents']).nComponents, 1, LIMITS.components);
  }

  /** Learns the mean and components of X (at least 2 rows, finite values). */
  fit(X: MatrixLike): this {
    const x = Matrix.from(X);
    const k = this.nComponents;
    const d = x.nCols;
    // the rows, and the covariance with the eigensolver's two d x d matrices
    requireWasmMemory(`PCA of ${x.nRows} rows of ${d} features`, 8 * x.data.length + 24 * d * d);
    this.fitted = withScope((s) => {
      const mean = s.f64(d);
      const components = s.f64(k * d);
      const variance = s.f64(k);
      const ratio = s.f64(k);
      const noise = s.f64(1);
      s.check(s.w.fm_pca_fit(s.matrix(x), s.struct(PCA_FIT_OPTIONS, { n: x.nRows, d, k }), mean, components, variance, ratio, noise));
      return {
        d,
        mean: s.readF64(mean, d),
        components: s.readF64(components, k * d),
        explainedVariance: s.readF64(variance, k),
        explainedVarianceRatio: s.readF64(ratio, k),
        noiseVariance: s.readF64(noise, 1)[0]!,
      };
    });
    return this;
  }

  /** (X - mean) @ components^T: an n x nComponents matrix. */
  transform(X: MatrixLike): Matrix {
    const st = this.state();
    const x = Matrix.from(X);
    if (x.nCols !== st.d) {
      throw new InvalidDataError(`X has ${x.nCols} features but this PCA was fitted with ${st.d}; pass data with ${st.d} columns`);
    }
    const k = this.nComponents;
    requireWasmMemory(`projecting ${x.nRows} rows`, 8 * x.data.length + 8 * x.nRows * k);
    return withScope((s) => {
      const out = s.f64(x.nRows * k);
      s.check(s.w.fm_pca_transform(s.matrix(x), x.nRows, x.nCols, s.f64From(st.mean), st.d, s.f64From(st.components), k, out));
      return new Matrix(s.readF64(out, x.nRows * k), x.nRows, k);
    });
  }

  fitTransform(X: MatrixLike): Matrix {
    const x = Matrix.from(X);
    return this.fit(x).transform(x);
  }

  /**
   * Z @ components + mean (scikit-learn's inverse_transform without whitening):
   * rows of nComponents scores back to nFeatures; exact (up to rounding) for
   * the training rows when nComponents = min(rows, features).
   */
  inverseTransform(Z: MatrixLike): Matrix {
    const st = this.state();
    const z = Matrix.from(Z);
    const k = this.nComponents;
    if (z.nCols !== k) throw new InvalidDataError(`Z has ${z.nCols} columns but this PCA has ${k} components; pass transform()'s output`);
    const n = z.nRows;
    const d = st.d;
    const out = new Float64Array(n * d);
    // column-major like Matrix: feature j of row i at j * n + i
    for (let j = 0; j < d; j++) {
      const o = j * n;
      out.fill(st.mean[j]!, o, o + n);
      for (let r = 0; r < k; r++) {
        const c = st.components[r * d + j]!;
        const zr = r * n;
        for (let i = 0; i < n; i++) out[o + i]! += z.data[zr + i]! * c;
      }
    }
    return new Matrix(out, n, d);
  }

  toJSON(): PCAJSON {
    const st = this.state();
    return {
      format: 'fedmix.PCA',
      version: 1,
      nComponents: this.nComponents,
      nFeatures: st.d,
      mean: Array.from(st.mean),
      components: Array.from(st.components),
      explainedVariance: Array.from(st.explainedVariance),
      explainedVarianceRatio: Array.from(st.explainedVarianceRatio),
      noiseVariance: st.noiseVariance,
    };
  }

  /** Rebuilds a PCA saved with toJSON() (the object or its text). */
  static fromJSON(json: PCAJSON | string): PCA {
    const j = readSavedJSON<PCAJSON>(json, 'fedmix.PCA', PCA_JSON_KEYS);
    const pca = new PCA({ nComponents: j.nComponents as number });
    const k = pca.nComponents;
    const d = requireInteger('nFeatures', j.nFeatures, 1, LIMITS.values);
    if (k > d) throw new InvalidParameterError(`nComponents ${k} is more than nFeatures ${d}`);
    if (k * d > LIMITS.values) throw new InvalidParameterError(`${k} components of ${d} features are ${k * d} values; at most ${LIMITS.values} fit`);
    const components = savedArray('components', j.components, k * d);
    requireOrthonormal(components, k, d);
    const explainedVarianceRatio = savedNonNegativeArray('explainedVarianceRatio', j.explainedVarianceRatio, k);
    for (let r = 0; r < k; r++) {
      if (explainedVarianceRatio[r]! > 1) throw new InvalidParameterError(`explainedVarianceRatio[${r}] is ${explainedVarianceRatio[r]}; a share of the variance is at most 1`);
    }
    pca.fitted = {
      d,
      mean: savedLocations('mean', j.mean, d, d),
      components,
      explainedVariance: savedNonNegativeArray('explainedVariance', j.explainedVariance, k),
      explainedVarianceRatio,
      noiseVariance: savedNonNegative('noiseVariance', j.noiseVariance),
    };
    return pca;
  }

  private state(): Fitted {
    if (!this.fitted) throw new NotFittedError('this PCA is not fitted yet; call fit(X) first');
    return this.fitted;
  }

  /** (nComponents, nFeatures) row-major: component r is row r, a unit vector (scikit-learn's components_) */
  get components(): Float64Array {
    return this.state().components.slice();
  }
  /** variance of the training data along each component (ddof 1), descending */
  get explainedVariance(): Float64Array {
    return this.state().explainedVariance.slice();
  }
  /** explainedVariance as fractions of the total variance (0 for constant data, where scikit-learn gives NaN) */
  get explainedVarianceRatio(): Float64Array {
    return this.state().explainedVarianceRatio.slice();
  }
  /** per-feature mean of the training data */
  get mean(): Float64Array {
    return this.state().mean.slice();
  }
  /** mean variance along the min(rows, features) - nComponents directions left out (scikit-learn's noise_variance_) */
  get noiseVariance(): number {
    return this.state().noiseVariance;
  }
  get nFeatures(): number {
    return this.state().d;
  }

  /**
   * The fitted components as an Arrow Table of the project's apache-arrow, one
   * row per component: `component` (Int32), `explainedVariance`,
   * `explainedVarianceRatio` (Float64) and `direction` (FixedSizeList<Float64>[d]).
   */
  toArrow(): Table {
    const { makeVector } = arrowLibrary('PCA.toArrow()');
    const variance = this.explainedVariance;
    const k = variance.length;
    return tableOf({
      component: indexVector(k),
      explainedVariance: makeVector(variance),
      explainedVarianceRatio: makeVector(this.explainedVarianceRatio),
      direction: fixedSizeListVector(this.components, this.nFeatures),
    });
  }
}
