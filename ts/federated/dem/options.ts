/**
 * Distributed EM's options, declared once (valibot schemas of the shared
 * atoms, ts/options/): the server's, and the one-call function's. Checked
 * once where they come in; DemServer holds what checking resolves. Several
 * bounds depend on other options (nComponents on the given parameters,
 * subsetSize on nFeatures, kfedLocalClusters on nComponents): those are the
 * declaration's rule.
 */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import type { CovarianceType } from '../../models/covariance-types.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { flattenNumeric, LIMITS, readRecord, requireInteger, requireOneOf, type NumericArray } from '../../validate.js';
import { FeatureRange } from '../feature-range.js';
import { requireModelSize } from '../limits.js';
import type { Encoding } from '../messages/codec.js';
import type { RunHooks } from '../runtime/run.js';

export const DEM_INITS = ['separated', 'subset', 'kfed'] as const;
export type DemInitMethod = (typeof DEM_INITS)[number];

/** An initial model given outright (scikit-learn shapes, flattened row-major). */
export interface DemInitialParameters {
  weights: NumericArray;
  means: NumericArray;
  covariances: NumericArray;
}

export interface DemOptions {
  /** components of the global model (default 1; taken from `init` when parameters are given) */
  nComponents?: number;
  /** default 'full' */
  covarianceType?: CovarianceType;
  /**
   * How the server chooses the first model (default 'kfed'):
   * - 'separated': maximally separated centers in the feature range, no communication;
   * - 'subset': a GMM fitted (k-means init) on `subsetSize` rows the clients send, in proportion to their sizes (2 rounds);
   * - 'kfed': one-shot federated k-means (k-FED) on the clients' local k-means clusters (1 round);
   * - or the parameters themselves.
   */
  init?: DemInitMethod | DemInitialParameters;
  /** stop when the average client log-likelihood changes by less than this (default 1e-3, as the paper) */
  tol?: number;
  /** at most this many EM rounds, initialization not counted (default 100) */
  maxRounds?: number;
  /** added to covariance diagonals (default 1e-6) */
  regCovar?: number;
  /**
   * [min, max] of the features, numbers or one per feature: where 'separated'
   * places its centers (default [0, 1], min-max normalized data). Given
   * explicitly, it is also a promise that every client's rows lie inside, and
   * what a client sends is checked against it (feature-range.ts).
   */
  featureRange?: [number | ArrayLike<number>, number | ArrayLike<number>];
  /** 'subset': rows in the subset (default 100, as the paper) */
  subsetSize?: number;
  /**
   * 'kfed': k-means clusters per client (default nComponents). k-FED's paper
   * takes ceil(sqrt(nComponents)), its heterogeneous regime where each client
   * holds about that many clusters; with clients that hold most clusters
   * (IID, or mildly skewed), so few local clusters average several together
   * and EM starts merged (abalone standardized, K=3, 5 IID clients: -5.236
   * at seeds 1 and 2 against -5.168 central, -5.169 with nComponents), and 2
   * clients of ceil(sqrt(9)) = 3 give 6 centers for 9 clusters, which fails
   * (docs/algorithms/dem.md).
   */
  kfedLocalClusters?: number;
  /**
   * 'kfed': how the server groups the local centers into nComponents:
   * 'kmeans' (default), count-weighted k-means on every local center, the
   * best of kfedStarts; or 'seed-device', the paper's: one random client's
   * centers seed the groups and the farthest local centers fill the rest
   * (with as many local clusters as global ones, one client's centers fill
   * every seed, all in the clusters that client holds)
   */
  kfedGrouping?: 'kmeans' | 'seed-device';
  /** 'kfed' with kfedGrouping 'kmeans': k-means runs, the least cost kept (default 10, scikit-learn's n_init) */
  kfedStarts?: number;
  /** seed of every random choice (client seeds, the k-FED seed device, the subset fit) */
  seed?: number;
  /** a client whose message fails validation: excluded with its reason (default), or the run throws (the runtime's onInvalid policy) */
  onInvalidClient?: 'exclude' | 'throw';
}

export interface DemServerOptions extends DemOptions {
  /** features every client's rows must have */
  nFeatures: number;
}


export interface DistributedEMOptions extends DemOptions {
  /** features of the federation (default: the clients' column count; a client with another is an InvalidDataError before the run) */
  nFeatures?: number;
  /** the wire form of the in-process messages (default 'binary': Arrow IPC; 'none': copies, declared sizes) */
  encoding?: Encoding | 'none';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** How the first model is chosen: a method's name, or the parameters read once (a getter or Proxy trap runs here, under guard). */
const init = () =>
  v.pipe(
    v.unknown(),
    v.transform((x): DemInitMethod | DemInitialParameters =>
      typeof x === 'object' && x !== null ? (readRecord(x as DemInitialParameters, ['weights', 'means', 'covariances'], 'init') as DemInitialParameters) : requireOneOf('init', x, DEM_INITS),
    ),
  );

const serverEntries = {
  init: atoms.optional(init(), 'kfed'),
  nFeatures: atoms.nFeatures(),
  covarianceType: atoms.optional(atoms.covarianceType(), 'full'),
  // default: the given parameters' count, else 1 (the rule)
  nComponents: atoms.optional(atoms.federatedComponents()),
  tol: atoms.optional(atoms.tolerance(), 1e-3),
  maxRounds: atoms.optional(atoms.rounds(0), 100),
  regCovar: atoms.optional(atoms.regCovar(), 1e-6),
  // bounded by nFeatures and nComponents (the rule)
  subsetSize: atoms.optional(v.unknown()),
  kfedLocalClusters: atoms.optional(v.unknown()),
  kfedGrouping: atoms.optional(atoms.oneOf(['kmeans', 'seed-device'] as const), 'kmeans'),
  kfedStarts: atoms.optional(atoms.nInit(), 10),
  onInvalidClient: atoms.optional(atoms.oneOf(['exclude', 'throw'] as const)),
  featureRange: atoms.optional(v.unknown()),
  seed: atoms.optional(atoms.seed()),
};

/**
 * The DEM server's options. Resolved: nComponents, subsetSize and
 * kfedLocalClusters filled in; `range` the feature range ([0, 1] unless
 * given), `declared` it when given (a promise what clients send is checked against).
 */
export const serverOptions = defineOptions<DemServerOptions>()(serverEntries, (o) => {
  const d = o.nFeatures;
  const given = typeof o.init === 'object' ? o.init : undefined;
  const kGiven = given ? flattenNumeric('init.weights', given.weights).length : undefined;
  const k = requireInteger('nComponents', o.nComponents ?? kGiven ?? 1, 1, LIMITS.count);
  if (kGiven !== undefined && kGiven !== k) throw new InvalidParameterError(`init has ${kGiven} weights but nComponents is ${k}`);
  requireModelSize(k, d, o.covarianceType);
  const subsetSize = requireInteger('subsetSize', o.subsetSize ?? 100, 1, Math.floor(LIMITS.modelValues / d));
  const kfedLocalClusters = requireInteger('kfedLocalClusters', o.kfedLocalClusters ?? k, 1, k);
  const range = FeatureRange.from('featureRange', o.featureRange ?? [0, 1], d);
  return { ...o, nComponents: k, subsetSize, kfedLocalClusters, range, declared: o.featureRange === undefined ? undefined : range };
});

export type ResolvedDemServerOptions = ReturnType<typeof serverOptions.check>;

/** The server's options from a caller: checked and resolved, what DemServer holds. */
export function checkServerOptions(raw: unknown, name = 'options'): ResolvedDemServerOptions {
  // nFeatures has no default: there is no server without options
  if (raw === undefined) throw new InvalidParameterError(`${name} must be an object with nFeatures`);
  return serverOptions.check(raw, name);
}

/** A DEM client has no options: anything given is a mistake. */
export function checkClientOptions(raw: unknown, name = 'spec.options'): Readonly<Record<string, never>> {
  return clientOptions.check(raw, name);
}
const clientOptions = defineOptions<Record<string, never>>()({});

/** distributedEM's options: the server's (nFeatures defaulting to the clients' columns) and the run's, read once. */
export const distributedEMOptions = defineOptions<DistributedEMOptions>()({
  ...serverEntries,
  nFeatures: atoms.optional(v.unknown()),
  encoding: atoms.optional(v.unknown()),
  maxExcludedShare: atoms.optional(v.unknown()),
  // read by the runtime (readRunHooks)
  hooks: atoms.optional(v.unknown()),
});
