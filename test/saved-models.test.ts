/**
 * Saved models that cannot trap (issue 23, item 5). Both sides of the checks
 * fromJSON makes of what the maths needs:
 *   - every honest file loads back: models of every class fitted on real data
 *     (satellite.csv, letter.csv), every covariance type, near-singular but
 *     valid covariances, regCovar 0, a constant feature, federated results,
 *     give the same predictions after save and load;
 *   - the files that trapped or gave Infinity and NaN later are refused at
 *     load with an InvalidParameterError naming the field, and a model made
 *     before still works.
 * test/hostile-api.test.ts tampers every field of every class's file.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  Autoencoder,
  BaseDistributionClassifier,
  DirichletMultinomialMixture,
  distributedEM,
  fedGenGMM,
  GaussianMixture,
  init,
  InvalidMessageError,
  InvalidParameterError,
  KMeans,
  LocalDetector,
  Matrix,
  MinMaxScaler,
  MLPClassifier,
  NumericalError,
  OneClassSVM,
  PCA,
  receiveGmmParams,
  StandardScaler,
  type CovarianceType,
  type GaussianMixtureJSON,
} from '../ts/index.js';
import { labelledFromCsv } from '../ts/experiments/index.js';
import { expectClean } from './helpers.js';

beforeAll(async () => {
  await init();
});

const csv = (name: string) => labelledFromCsv(readFileSync(new URL(`../../shared/datasets/${name}`, import.meta.url), 'utf8'), { label: 'label' });
/** Every `step`-th row of a dataset (all its classes), and the next rows as unseen data. */
function rows(name: string, step: number) {
  const all = csv(name);
  const pick = Array.from({ length: Math.floor(all.X.nRows / step) }, (_, i) => i * step);
  return { X: all.X.selectRows(pick), test: all.X.selectRows(pick.slice(0, 300).map((i) => i + 1)), labels: Int32Array.from(pick, (i) => all.labels![i]!) };
}
const satellite = rows('satellite.csv', 3); // 2145 rows, 36 features
const letter = rows('letter.csv', 8); // 2500 rows, 16 features
const TYPES: CovarianceType[] = ['full', 'tied', 'diag', 'spherical'];

/** Saved as a file holds it: through JSON text. */
const saved = <T>(m: { toJSON(): T }): string => JSON.stringify(m.toJSON());

/** A loaded model predicts exactly as the one saved (and saves the same file). */
function sameMixture(a: GaussianMixture, b: GaussianMixture, X: Matrix): void {
  expect(b.predict(X)).toEqual(a.predict(X));
  expect(b.scoreSamples(X)).toEqual(a.scoreSamples(X));
  expect(b.predictProba(X).data).toEqual(a.predictProba(X).data);
  expect(b.sample(50, { seed: 3 }).X.data).toEqual(a.sample(50, { seed: 3 }).X.data);
  expect(b.toJSON()).toEqual(a.toJSON());
}

describe('honest files load back and predict the same', () => {
  test.each([
    ['satellite', satellite],
    ['letter', letter],
  ] as const)('GaussianMixture on %s: every covariance type, default regCovar and regCovar 0', (_name, data) => {
    let unregularized = 0;
    for (const covarianceType of TYPES) {
      for (const regCovar of [1e-6, 0]) {
        let gm: GaussianMixture;
        try {
          gm = new GaussianMixture({ nComponents: 6, covarianceType, regCovar, seed: 1 }).fit(data.X);
        } catch (e) {
          // a fit that cannot be made (regCovar 0 with a collapsed component) leaves no file to load
          expect(e, `${covarianceType} regCovar ${regCovar}`).toBeInstanceOf(NumericalError);
          continue;
        }
        if (regCovar === 0) unregularized++;
        const back = GaussianMixture.fromJSON(saved(gm));
        sameMixture(gm, back, data.test);
        // a file with only one of covariances and precisionsCholesky derives the other
        const { covariances: _c, ...factorsOnly } = gm.toJSON();
        const { precisionsCholesky: _p, ...covariancesOnly } = gm.toJSON();
        for (const partial of [factorsOnly, covariancesOnly]) {
          const m = GaussianMixture.fromJSON(partial as GaussianMixtureJSON);
          expect(m.predict(data.test)).toEqual(gm.predict(data.test));
          m.dispose();
        }
        gm.dispose();
        back.dispose();
      }
    }
    // most regCovar 0 fits succeed (their smallest pivots are the data's own), and their files load
    expect(unregularized).toBeGreaterThanOrEqual(2);
  }, 120_000);

  test('near-singular covariances: collinear features with regCovar 0, a constant feature, factors given as initial precisions', () => {
    const X = satellite.X;
    const n = X.nRows;
    // feature 1 is feature 0 plus a 1e-6 wobble: condition numbers about 1e13
    const wobble = Float64Array.from(X.column(0), (v, i) => v + 1e-6 * Math.sin(i));
    const near = Matrix.fromColumns([X.column(0), wobble, X.column(5), X.column(9)]);
    const constant = Matrix.fromColumns([X.column(0), X.column(1), new Float64Array(n).fill(97), X.column(2)]);
    for (const [what, data, regCovar] of [['collinear', near, 0], ['constant feature', constant, 1e-6]] as const) {
      for (const covarianceType of TYPES) {
        const gm = new GaussianMixture({ nComponents: 3, covarianceType, regCovar, seed: 2 }).fit(data);
        const back = GaussianMixture.fromJSON(saved(gm));
        expect(back.predict(data), `${what} ${covarianceType}`).toEqual(gm.predict(data));
        expect(back.scoreSamples(data)).toEqual(gm.scoreSamples(data));
        gm.dispose();
        back.dispose();
      }
    }
    // a model whose factors came from precisions (lower triangular, as scikit-learn's precisions_init), saved and loaded twice
    const gm = new GaussianMixture({ nComponents: 2, seed: 1 }).fit(near);
    const j = gm.toJSON();
    const lower = GaussianMixture.fromJSON({ ...j, covariances: undefined as never, precisionsCholesky: lowerFactors(gm.precisions, 2, 4) });
    const again = GaussianMixture.fromJSON(saved(lower));
    expect(again.predict(near)).toEqual(lower.predict(near));
    for (const m of [gm, lower, again]) m.dispose();
  });

  test('federated results: distributed EM and FedGenGMM models on satellite clients', () => {
    const clients = [0, 1, 2].map((c) => satellite.X.selectRows(Array.from({ length: 700 }, (_, i) => 3 * i + c)));
    for (const covarianceType of ['full', 'diag'] as const) {
      const dem = distributedEM(clients, { nComponents: 4, covarianceType, seed: 1, maxRounds: 20 }).model;
      sameMixture(dem, GaussianMixture.fromJSON(saved(dem)), satellite.test);
      const gen = fedGenGMM(clients, { client: { kMin: 1, kMax: 3, covarianceType, seed: 1 }, server: { nComponents: 4, seed: 1 } }).model;
      sameMixture(gen, GaussianMixture.fromJSON(saved(gen)), satellite.test);
    }
  }, 60_000);

  test('KMeans, PCA, the scalers, the networks, the SVM, the detectors and FedDistr bases on letter', () => {
    const { X, test: Y, labels } = letter;
    const scaled = new MinMaxScaler().fitTransform(X);
    const Ys = new MinMaxScaler().fit(X).transform(Y);
    const km = new KMeans({ nClusters: 26, seed: 1 }).fit(X);
    expect(KMeans.fromJSON(saved(km)).predict(Y)).toEqual(km.predict(Y));
    const pca = new PCA({ nComponents: 16 }).fit(X);
    expect(PCA.fromJSON(saved(pca)).transform(Y).data).toEqual(pca.transform(Y).data);
    for (const s of [new StandardScaler().fit(X), new MinMaxScaler().fit(X)]) {
      expect((s.constructor as typeof StandardScaler).fromJSON(saved(s as StandardScaler)).transform(Y).data).toEqual(s.transform(Y).data);
    }
    const ae = new Autoencoder({ hiddenLayers: [12, 6, 12], epochs: 3, seed: 1 }).fit(scaled);
    expect(Autoencoder.fromJSON(saved(ae)).scoreSamples(Ys)).toEqual(ae.scoreSamples(Ys));
    const mlp = new MLPClassifier({ hiddenLayerSizes: [20], maxIter: 5, randomState: 1 }).fit(scaled, labels);
    expect(MLPClassifier.fromJSON(saved(mlp)).predict(Ys)).toEqual(mlp.predict(Ys));
    const svm = new OneClassSVM({ nu: 0.1 }).fit(scaled.selectRows(Array.from({ length: 600 }, (_, i) => i)));
    expect(OneClassSVM.fromJSON(saved(svm)).decisionFunction(Ys)).toEqual(svm.decisionFunction(Ys));
    for (const kind of ['ocsvm', 'gmm', 'autoencoder'] as const) {
      const det = new LocalDetector({ kind, contamination: 0.1, autoencoder: { epochs: 2 } }).fit(scaled.selectRows(Array.from({ length: 600 }, (_, i) => i)));
      expect(LocalDetector.fromJSON(saved(det)).scoreSamples(Ys), kind).toEqual(det.scoreSamples(Ys));
    }
    const hist = Array.from({ length: 40 }, (_, c) => {
      const h = new Array<number>(26).fill(0);
      for (let i = 0; i < 5 + (c % 7); i++) h[labels[c * 12 + i]!]! += 1;
      return h;
    });
    const dmm = DirichletMultinomialMixture.fit(hist, { nComponents: 2, rounds: 20, seed: 1 });
    expect(DirichletMultinomialMixture.fromJSON(saved(dmm)).logPmf(hist)).toEqual(dmm.logPmf(hist));
    for (const covariance of ['full', 'diagonal'] as const) {
      const bases = classBases(pca.transform(X), labels, covariance);
      const model = new BaseDistributionClassifier(JSON.parse(JSON.stringify(bases)) as typeof bases, { covariance });
      expect(model.predict(pca.transform(Y))).toEqual(new BaseDistributionClassifier(bases, { covariance }).predict(pca.transform(Y)));
    }
  }, 60_000);
});

/** Each label's Gaussian of the rows (FedDistr's consolidated bases, as its result file saves them). */
function classBases(Z: Matrix, labels: Int32Array, covariance: 'full' | 'diagonal') {
  const d = Z.nCols;
  return [...new Set(labels)].sort((a, b) => a - b).map((label) => {
    const R = Z.selectRows([...labels.keys()].filter((i) => labels[i] === label));
    const mean = Array.from({ length: d }, (_, j) => R.column(j).reduce((s, v) => s + v, 0) / R.nRows);
    const cov = Array.from({ length: d * d }, (_, q) => {
      const [a, b] = [Math.floor(q / d), q % d];
      return R.column(a).reduce((s, v, i) => s + (v - mean[a]!) * (R.column(b)[i]! - mean[b]!), 0) / R.nRows + (a === b ? 1e-6 : 0);
    });
    return { label, count: R.nRows, mean, covariance: covariance === 'full' ? cov : mean.map((_, j) => cov[j * d + j]!) };
  });
}

/** Lower Cholesky factors of k precisions (d x d each, row-major), as scikit-learn makes them from precisions_init. */
function lowerFactors(precisions: Float64Array, k: number, d: number): number[] {
  const out = new Array<number>(k * d * d).fill(0);
  for (let c = 0; c < k; c++) {
    const o = c * d * d;
    for (let j = 0; j < d; j++) {
      let s = precisions[o + j * d + j]!;
      for (let m = 0; m < j; m++) s -= out[o + j * d + m]! ** 2;
      out[o + j * d + j] = Math.sqrt(s);
      for (let i = j + 1; i < d; i++) {
        let t = precisions[o + i * d + j]!;
        for (let m = 0; m < j; m++) t -= out[o + i * d + m]! * out[o + j * d + m]!;
        out[o + i * d + j] = t / out[o + j * d + j]!;
      }
    }
  }
  return out;
}

describe('files that trapped or gave Infinity and NaN later are refused at load', () => {
  const gmm = (covarianceType: CovarianceType) => {
    const gm = new GaussianMixture({ nComponents: 3, covarianceType, seed: 1 }).fit(satellite.X);
    try {
      return gm.toJSON();
    } finally {
      gm.dispose();
    }
  };
  let full: GaussianMixtureJSON;
  let diag: GaussianMixtureJSON;
  beforeAll(() => {
    full = gmm('full');
    diag = gmm('diag');
  });
  const times = (v: number[], by: number) => v.map((x) => x * by);

  test('GaussianMixture: covariances not positive definite, magnitudes beyond f64, covariances and factors that disagree', () => {
    // a model made before: it must keep working whatever is refused
    const live = GaussianMixture.fromJSON(full);
    const before = live.scoreSamples(satellite.test);
    // all-zero full covariances loaded, and sample() trapped in fm_gmm_sample (issue 23)
    expectClean(() => GaussianMixture.fromJSON({ ...full, covariances: full.covariances.map(() => 0) }), InvalidParameterError, /component 0 is not positive definite/);
    expectClean(() => GaussianMixture.fromJSON({ ...diag, covariances: times(diag.covariances, -1) }), InvalidParameterError, /not positive definite/);
    // means of 1e152 and 1e202 with the variances of rows around 100: scores were -Infinity and NaN
    expectClean(() => GaussianMixture.fromJSON({ ...diag, means: times(diag.means, 1e150) }), InvalidParameterError, /feature 0 is [\d.e+]+, below [\d.e+]+, the resolution of f64 around means as large as/);
    expectClean(() => GaussianMixture.fromJSON({ ...full, means: times(full.means, 1e200) }), InvalidParameterError, /the means along feature 0 are too large for the core/);
    // a precision of 1e300 (factor and covariance scaled together, so that they agree): precisions were Infinity
    expectClean(
      () => GaussianMixture.fromJSON({ ...diag, precisionsCholesky: times(diag.precisionsCholesky, 1e150), covariances: times(diag.covariances, 1e-300) }),
      InvalidParameterError,
      /precision, overflows f64|resolution/,
    );
    expectClean(() => GaussianMixture.fromJSON({ ...full, precisionsCholesky: times(full.precisionsCholesky, 1e300) }), InvalidParameterError, /precisionsCholesky and covariances disagree/);
    expectClean(() => GaussianMixture.fromJSON({ ...diag, covariances: undefined as never, precisionsCholesky: times(diag.precisionsCholesky, 1e160) }), InvalidParameterError, /the covariance it implies, \(P P\^T\)\^-1, is beyond f64/);
    // one edited, the other kept
    const edited = full.covariances.slice();
    edited[0] = edited[0]! * 1.001;
    expectClean(() => GaussianMixture.fromJSON({ ...full, covariances: edited }), InvalidParameterError, /precisionsCholesky and covariances disagree of component 0/);
    expectClean(() => GaussianMixture.fromJSON({ ...diag, precisionsCholesky: times(diag.precisionsCholesky, 2) }), InvalidParameterError, /disagree/);
    // factors alone whose covariance underflows: a panic (a trap) in the core's derivation of the covariances
    expectClean(
      () => GaussianMixture.fromJSON({ ...full, covariances: undefined as never, precisionsCholesky: times(full.precisionsCholesky, 1e-200) }),
      InvalidParameterError,
      /beyond f64/,
    );
    expectClean(() => GaussianMixture.fromJSON({ ...full, lowerBound: Infinity }), InvalidParameterError, /lowerBound must be a finite number/);
    expect(live.scoreSamples(satellite.test)).toEqual(before);
    live.dispose();
  });

  test('the same check for a received mixture: receiveGmmParams refuses what fromJSON refuses', () => {
    const params = { covarianceType: 'diag', nComponents: 3, nFeatures: 36, weights: diag.weights, means: times(diag.means, 1e150), covariances: diag.covariances };
    expect(() => receiveGmmParams(params, 'client a', 36)).toThrow(InvalidMessageError);
    expect(() => receiveGmmParams(params, 'client a', 36)).toThrow(/client a: .*resolution of f64/);
    expect(() => GaussianMixture.fromJSON({ ...diag, means: params.means })).toThrow(/resolution of f64/);
  });

  test('KMeans, PCA, scalers, network histories, MDM, FedDistr bases', () => {
    const km = JSON.parse(saved(new KMeans({ nClusters: 3, seed: 1 }).fit(satellite.X))) as { centers: number[] };
    expectClean(() => KMeans.fromJSON({ ...km, centers: times(km.centers, 1e300) } as never), InvalidParameterError, /centers\[0\] is .*squared distances overflow/);
    const pca = JSON.parse(saved(new PCA({ nComponents: 3 }).fit(satellite.X))) as { components: number[] };
    expectClean(() => PCA.fromJSON({ ...pca, components: times(pca.components, 1e300) } as never), InvalidParameterError, /components row 0 has squared norm/);
    const sc = JSON.parse(saved(new StandardScaler().fit(satellite.X))) as { factor: number[] };
    expectClean(() => StandardScaler.fromJSON({ ...sc, factor: [5e-324, ...sc.factor.slice(1)] } as never), InvalidParameterError, /factor\[0\] is 5e-324/);
    const mlp = JSON.parse(saved(new MLPClassifier({ hiddenLayerSizes: [4], maxIter: 2, randomState: 1 }).fit(letter.X, letter.labels))) as { lossCurve: number[] };
    expectClean(() => MLPClassifier.fromJSON({ ...mlp, lossCurve: [NaN, ...mlp.lossCurve] } as never), InvalidParameterError, /lossCurve\[0\] is NaN/);
    const ae = JSON.parse(saved(new Autoencoder({ hiddenLayers: [4, 2, 4], epochs: 1, seed: 1 }).fit(new MinMaxScaler().fitTransform(letter.X)))) as { history: number[] };
    expectClean(() => Autoencoder.fromJSON({ ...ae, history: [Infinity] } as never), InvalidParameterError, /history\[0\] is Infinity/);
    // an alpha whose sum overflows (NaN log-pmfs otherwise)
    expectClean(() => DirichletMultinomialMixture.fromJSON({ tau: [1], alpha: [[1e308, 1e308]], pi: [[0.5, 0.5]] }), InvalidParameterError, /sum to Infinity/);
    // every base far beyond the rows' scale: the posteriors were NaN
    const bases = classBases(new PCA({ nComponents: 3 }).fit(satellite.X).transform(satellite.X), satellite.labels, 'full').map((b) => ({ ...b, mean: times(b.mean, 1e300) }));
    expectClean(() => new BaseDistributionClassifier(bases, { covariance: 'full' }), InvalidParameterError, /bases \(component i is bases\[i\]\): the means along feature 0 are too large/);
  });
});
