/**
 * FedGenGMM's sample-free server step: hierarchical EM (Vasconcelos and
 * Lippman, "Learning mixture hierarchies", NIPS 1999) reduces the union of
 * the clients' components, each weighted by its client's share of the rows
 * times its mixture weight, to K components from their parameters alone.
 * Each component stands for its share of N virtual samples (by default the
 * rows the clients reported), which all go to one global component together.
 * The numerical kernel is in the Rust core (crates/fedmix-core/src/hem.rs,
 * where the E- and M-steps are written out); this file lays the uploads out
 * for it and chooses K by BIC when asked.
 */
import { InvalidParameterError } from '../../errors.js';
import { COV_CODE, covarianceLength, GaussianMixture, informationCriteria, type CovarianceType } from '../../models/gaussian-mixture.js';
import { HEM_REDUCE_OPTIONS } from '../../wasm/abi.generated.js';
import { requireWasmMemory, withScope } from '../../wasm/memory.js';
import { LIMITS, seedParts } from '../../validate.js';

/** One client's upload as the reduction takes it: its model and its share of all rows. */
export interface WeightedMixture {
  model: GaussianMixture;
  share: number;
}

export interface HierarchicalOptions {
  /** K, the global components */
  nComponents: number;
  covarianceType: CovarianceType;
  /** N, the virtual samples the union stands for */
  virtualSamples: number;
  tol: number;
  maxIter: number;
  regCovar: number;
  nInit: number;
  seed?: number;
  /** K x d starting means (tests; otherwise weighted k-means++ on the component means, nInit times) */
  meansInit?: ArrayLike<number>;
}

export interface Reduction {
  model: GaussianMixture;
  /** the HEM objective per virtual sample */
  lowerBound: number;
  /** a lower bound on the mean log-likelihood of the virtual samples (what BIC takes) */
  logLikelihood: number;
  nIter: number;
  converged: boolean;
}

/** The union's components in the layout the core takes: weights, means, and covariances full for full/tied, diagonals for diag/spherical. */
function layout(parts: readonly WeightedMixture[], t: CovarianceType): { n: number; d: number; weights: Float64Array; means: Float64Array; covs: Float64Array } {
  const d = parts[0]!.model.nFeatures;
  const n = parts.reduce((a, p) => a + p.model.nComponents, 0);
  const fullForm = t === 'full' || t === 'tied';
  const size = fullForm ? d * d : d;
  requireWasmMemory(`${n} components of ${d} features`, 16 * n * (1 + d + size));
  const weights = new Float64Array(n);
  const means = new Float64Array(n * d);
  const covs = new Float64Array(n * size);
  let at = 0;
  for (const { model, share } of parts) {
    const k = model.nComponents;
    const w = model.weights;
    const c = model.covariances;
    const lt = model.covarianceType;
    means.set(model.means, at * d);
    for (let i = 0; i < k; i++, at++) {
      weights[at] = share * w[i]!;
      // component i's covariance as a d x d matrix (or its diagonal), whatever the client's type
      const entry = (r: number, s: number): number => {
        if (lt === 'full') return c[i * d * d + r * d + s]!;
        if (lt === 'tied') return c[r * d + s]!;
        if (r !== s) return 0;
        return lt === 'diag' ? c[i * d + r]! : c[i]!;
      };
      const out = at * size;
      if (fullForm) for (let r = 0; r < d; r++) for (let s = 0; s < d; s++) covs[out + r * d + s] = entry(r, s);
      else for (let r = 0; r < d; r++) covs[out + r] = entry(r, r);
    }
  }
  return { n, d, weights, means, covs };
}

/** Reduces the clients' mixtures to options.nComponents components; core errors arrive as typed FedmixErrors. */
export function hierarchicalEM(parts: readonly WeightedMixture[], o: HierarchicalOptions): Reduction {
  if (parts.length === 0) throw new InvalidParameterError('hierarchical EM needs at least one mixture to reduce');
  const t = o.covarianceType;
  const { n, d, weights, means, covs } = layout(parts, t);
  const k = o.nComponents;
  if (k > n) throw new InvalidParameterError(`cannot reduce ${n} incoming components to ${k}: the hierarchical server step needs nComponents at most the number of components the clients sent`);
  const covLength = covarianceLength(t, k, d);
  if (o.meansInit !== undefined && o.meansInit.length !== k * d) throw new InvalidParameterError(`meansInit needs ${k * d} values, got ${o.meansInit.length}`);
  const [seedLo, seedHi] = seedParts(o.seed);
  const out = withScope((s) => {
    const pw = s.f64From(weights);
    const pm = s.f64From(means);
    const pc = s.f64From(covs);
    const init = o.meansInit === undefined ? 0 : s.f64From(o.meansInit);
    const ow = s.f64(k);
    const om = s.f64(k * d);
    const oc = s.f64(covLength);
    const st = s.f64(4);
    s.check(s.w.fm_hem_reduce(s.struct(HEM_REDUCE_OPTIONS, { covarianceType: COV_CODE[t], d, n, k, virtualSamples: o.virtualSamples, tol: o.tol, maxIter: o.maxIter, regCovar: o.regCovar, nInit: o.nInit, seedLo, seedHi }), pw, pm, pc, init, ow, om, oc, st));
    return { weights: s.readF64(ow, k), means: s.readF64(om, k * d), covariances: s.readF64(oc, covLength), stats: s.readF64(st, 4) };
  });
  const model = GaussianMixture.fromParameters({ covarianceType: t, weights: out.weights, means: out.means, covariances: out.covariances, nFeatures: d });
  const [lowerBound, logLikelihood, nIter, converged] = out.stats;
  return { model, lowerBound: lowerBound!, logLikelihood: logLikelihood!, nIter: nIter!, converged: converged === 1 };
}

/**
 * K by BIC in [kMin, kMax] (kMax capped at the incoming components), the
 * virtual samples' log-likelihood bound standing for the data's: the model
 * with the lowest BIC (the smaller K on ties), the others disposed.
 */
export function selectHierarchical(parts: readonly WeightedMixture[], o: Omit<HierarchicalOptions, 'nComponents' | 'meansInit'> & { kMin: number; kMax: number; criterion: 'bic' | 'aic' }): Reduction {
  const incoming = parts.reduce((a, p) => a + p.model.nComponents, 0);
  if (o.kMin > incoming) throw new InvalidParameterError(`kMin is ${o.kMin} but the clients sent ${incoming} components; the hierarchical server step cannot make more than it received`);
  const kMax = Math.min(o.kMax, incoming, LIMITS.components);
  let best: { r: Reduction; score: number } | undefined;
  for (let k = o.kMin; k <= kMax; k++) {
    const r = hierarchicalEM(parts, { ...o, nComponents: k });
    const ic = informationCriteria(r.logLikelihood, o.virtualSamples, r.model.nParameters);
    const score = o.criterion === 'aic' ? ic.aic : ic.bic;
    if (best === undefined || score < best.score) {
      best?.r.model.dispose();
      best = { r, score };
    } else r.model.dispose();
  }
  return best!.r;
}
