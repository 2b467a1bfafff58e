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
import { makeVector, type Table } from 'apache-arrow';
import { InvalidDataError, NotFittedError } from '../errors.js';
import { fixedSizeListVector, indexVector, tableOf } from './arrow.js';
import { LIMITS, readOptions, requireInteger } from '../validate.js';
import { requireWasmMemory, withScope } from '../wasm/memory.js';
import { Matrix, type MatrixLike } from './matrix.js';

export interface PCAOptions {
  /** how many components to keep: 1 <= nComponents <= min(rows, features) of the training data (and LIMITS.components) */
  nComponents: number;
}

interface Fitted {
  d: number;
  mean: Float64Array;
  components: Float64Array;
  explainedVariance: Float64Array;
  explainedVarianceRatio: Float64Array;
  noiseVariance: number;
}

/**
 * ```ts
 * const pca = new PCA({ nComponents: 8 }).fit(Xtrain);
 * const Ztrain = pca.transform(Xtrain);   // n x 8
 * const Ztest = pca.transform(Xtest);     // the training mean and components
 * ```
 */
export class PCA {
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
      s.check(s.w.fm_pca_fit(s.matrix(x), x.nRows, d, k, mean, components, variance, ratio, noise));
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
