/**
 * FedDistr's options, declared once (valibot schemas of the shared atoms,
 * ts/options/): the server's, a client's, the one-call function's and the
 * global model's. Each is checked once, where it comes in (fedDistr, the
 * runtime's spec, a constructor given plain options); the roles hold what
 * checking resolves, and a role handed resolved options takes them as they are.
 *
 * The server's encoder and dimension are read together (readEncoder: the
 * identity needs the rows' dimension, a PCA or an Autoencoder must take it),
 * so the encoder is the declaration's rule, which also resolves the request
 * every client is sent (`describe`).
 */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { threadsOption, type Threads } from '../../parallel/threads.js';
import { LIMITS, requireInteger } from '../../validate.js';
import { readGaussianNoise } from '../../privacy/gaussian-noise.js';
import type { Encoding } from '../messages/codec.js';
import type { RunHooks } from '../runtime/run.js';
import { SHRINKAGES, type Shrinkage } from './covariance.js';
import { readEncoder, type FedDistrEncoder } from './encoder.js';
import type { CovarianceKind } from '../../distributions/gaussian.js';
import type { DescribePayload } from './messages.js';

export type FedDistrCost = 'wasserstein' | 'bhattacharyya';
export const FEDDISTR_COSTS: readonly FedDistrCost[] = ['wasserstein', 'bhattacharyya'];

/** The base distributions' covariance forms. */
export const COVARIANCE_KINDS = ['full', 'diagonal'] as const satisfies readonly CovarianceKind[];

export interface FedDistrServerOptions {
  /**
   * 'identity' (default; needs `dimension`), a fitted PCA or its { mean,
   * components }, or a fitted Autoencoder (its code layer's outputs; the
   * network and its parameters are sent to the clients)
   */
  encoder?: FedDistrEncoder;
  /** the rows' number of features, for the identity encoder */
  dimension?: number;
  /** the base distributions' covariance form (default 'full') */
  covariance?: CovarianceKind;
  /** how clients split a task label into base distributions (default 'gmm') */
  clustering?: 'kmeans' | 'gmm';
  /** how clients choose their number (default 'bic'; k-means needs 'silhouette') */
  criterion?: 'bic' | 'silhouette';
  /** the range of base distributions per task label (default 1..5) */
  kMin?: number;
  kMax?: number;
  /**
   * how clients shrink a covariance toward a multiple of the identity
   * (default 'oas'; 'ledoit-wolf' reads the rows, so not under privacy;
   * 'none': maximum likelihood)
   */
  shrinkage?: Shrinkage;
  /** added to every covariance's diagonal, times the client's average variance (default 1e-6; > 0) */
  regCovar?: number;
  /** the cost between two Gaussians (default 'wasserstein': W2) */
  cost?: FedDistrCost;
  /**
   * A matched pair is parallel when its cost is at most this. Default: a
   * bound per pair, what sampling alone puts between two estimates of one
   * Gaussian from their row counts, NOISE_FACTOR times its expectation
   * (samplingNoise); the costs' units otherwise (W2: the data's; Bhattacharyya:
   * none).
   */
  threshold?: number;
  /**
   * how a parallel set is represented: the members' count-weighted merge
   * (default: every member's rows count) or the member fitted on the most rows
   * (the paper's dominant rule, which keeps one client's estimate of a base
   * distribution many clients hold)
   */
  merge?: 'dominant' | 'weighted';
  /** the clients' clustering seed (default 0) */
  seed?: number;
}

export interface FedDistrPrivacy {
  /** C: every encoded row is scaled down to L2 norm at most C */
  clip: number;
  /** the privacy budget per base distribution, in (0, 1] */
  epsilon: number;
  /** in (0, 1) */
  delta: number;
}

export interface FedDistrClientOptions {
  /** the task label (superclass) of every row: integers */
  labels: Int32Array | readonly number[];
  /** Gaussian noise on the means and covariances (see client.ts's note) */
  privacy?: FedDistrPrivacy;
  /**
   * the privacy noise's seed, for tests only: whoever knows it can remove the
   * noise (default: fresh from crypto.getRandomValues, never derived from a
   * public seed)
   */
  seed?: number;
  /**
   * threads of the local clusterings (GaussianMixture's and KMeans' `threads`):
   * 1 (default: the calling thread, as before), more, or 'auto'; started once
   * per answer, for every candidate k of every label with rows enough for
   * more than one thread (256 rows each). Where the client runs in Node or a
   * browser; the result does not depend on timing.
   */
  threads?: Threads;
}

export interface FedDistrOptions extends FedDistrServerOptions {
  /** Gaussian noise on every client's means and covariances */
  privacy?: FedDistrPrivacy;
  /** seed of client i's privacy noise is noiseSeed + i: for tests only (default: fresh from crypto.getRandomValues) */
  noiseSeed?: number;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

export interface BaseDistributionClassifierOptions {
  /** the covariance form (default: read from the first base's lengths, d values diagonal, d x d full) */
  covariance?: CovarianceKind;
  /**
   * the encoder the clients used (default 'identity'): predict() encodes rows
   * with it, so it takes rows as the clients held them. The same values the
   * server takes: 'identity', a fitted PCA or { mean, components }, a fitted
   * Autoencoder.
   */
  encoder?: FedDistrEncoder;
}

export interface SampleBaseOptions {
  /** rows to draw in all, dealt to the bases in proportion to their counts (largest remainders) */
  n: number;
  /** the draws' seed (without one, every call draws other rows) */
  seed?: number;
  /** the covariance form (default: read from the first base's lengths) */
  covariance?: CovarianceKind;
}

const serverEntries = {
  // read with dimension by the rule (readEncoder)
  encoder: atoms.optional(v.unknown(), 'identity'),
  dimension: atoms.optional(atoms.nFeatures()),
  covariance: atoms.optional(atoms.oneOf(COVARIANCE_KINDS), 'full'),
  clustering: atoms.optional(atoms.oneOf(['kmeans', 'gmm'] as const), 'gmm'),
  // default by clustering (the rule)
  criterion: atoms.optional(atoms.oneOf(['bic', 'silhouette'] as const)),
  kMin: atoms.optional(atoms.nComponents(), 1),
  // at least kMin, default max(5, kMin) (the rule)
  kMax: atoms.optional(atoms.nComponents()),
  shrinkage: atoms.optional(atoms.oneOf(SHRINKAGES), 'oas'),
  // > 0, not the models' >= 0: a client refuses a ridge of 0, with which a covariance may be singular
  regCovar: atoms.optional(atoms.positive(), 1e-6),
  cost: atoms.optional(atoms.oneOf(FEDDISTR_COSTS), 'wasserstein'),
  threshold: atoms.optional(atoms.number(0)),
  merge: atoms.optional(atoms.oneOf(['dominant', 'weighted'] as const), 'weighted'),
  seed: atoms.optional(atoms.seed(), 0),
};

/**
 * The FedDistr server's options. Resolved: criterion and kMax filled in, and
 * `describe` the request every client is sent (the encoder read as DESCRIBE
 * carries it).
 */
export const serverOptions = defineOptions<FedDistrServerOptions>()(serverEntries, (o) => {
  const criterion = o.criterion ?? (o.clustering === 'kmeans' ? 'silhouette' : 'bic');
  if (o.clustering === 'kmeans' && criterion === 'bic') throw new InvalidParameterError("k-means has no likelihood for BIC: use criterion 'silhouette' or clustering 'gmm'");
  if (o.kMax !== undefined) requireInteger('kMax', o.kMax, o.kMin, LIMITS.components);
  const kMax = o.kMax ?? Math.max(5, o.kMin);
  const describe: DescribePayload = {
    encoder: readEncoder(o.encoder, o.dimension),
    covariance: o.covariance,
    clustering: o.clustering,
    criterion,
    kMin: o.kMin,
    kMax,
    shrinkage: o.shrinkage,
    regCovar: o.regCovar,
    seed: o.seed,
  };
  return { ...o, criterion, kMax, describe };
});

export type ResolvedFedDistrServerOptions = ReturnType<typeof serverOptions.check>;

/** The server's options from a caller: checked and resolved, what FedDistrServer holds. */
export function checkServerOptions(raw: unknown, name = 'options'): ResolvedFedDistrServerOptions {
  return serverOptions.check(raw, name);
}

/** Privacy settings read once under guard and checked (readGaussianNoise); `name` names them in a message. */
const privacy = (name: string) => v.pipe(v.unknown(), v.transform((x) => readGaussianNoise(x as FedDistrPrivacy, name) as FedDistrPrivacy));

const clientEntries = {
  // the rows' task labels: data, read and checked against the rows by the client
  labels: v.unknown(),
  privacy: atoms.optional(privacy('privacy')),
  seed: atoms.optional(atoms.seed()),
  threads: atoms.optional(threadsOption()),
};

/** A FedDistr client's options (its labels are data: the client checks them against its rows). */
export const clientOptions = defineOptions<FedDistrClientOptions>()(clientEntries);

export type ResolvedFedDistrClientOptions = ReturnType<typeof clientOptions.check>;

/** A client's options as a spec gives them (its labels come with its data). */
export const specOptions = defineOptions<Omit<FedDistrClientOptions, 'labels'>>()({ privacy: clientEntries.privacy, seed: clientEntries.seed, threads: clientEntries.threads });

/**
 * fedDistr's options: the run's and the clients' checked here; the server's
 * read (checked by its declaration, once the clients' columns give the
 * identity's dimension when it is not given); encoding and maxExcludedShare
 * by the transport and the policy that take them.
 */
export const fedDistrOptions = defineOptions<FedDistrOptions>()({
  encoder: atoms.optional(v.unknown()),
  dimension: atoms.optional(v.unknown()),
  covariance: atoms.optional(v.unknown()),
  clustering: atoms.optional(v.unknown()),
  criterion: atoms.optional(v.unknown()),
  kMin: atoms.optional(v.unknown()),
  kMax: atoms.optional(v.unknown()),
  shrinkage: atoms.optional(v.unknown()),
  regCovar: atoms.optional(v.unknown()),
  cost: atoms.optional(v.unknown()),
  threshold: atoms.optional(v.unknown()),
  merge: atoms.optional(v.unknown()),
  seed: atoms.optional(v.unknown()),
  privacy: atoms.optional(privacy('options.privacy')),
  noiseSeed: atoms.optional(atoms.seed()),
  encoding: atoms.optional(v.unknown()),
  onInvalidClient: atoms.optional(atoms.onInvalidClient(), 'exclude'),
  maxExcludedShare: atoms.optional(v.unknown()),
  // read by the runtime (readRunHooks)
  hooks: atoms.optional(v.unknown()),
});

/** The global classifier's options (its encoder read once the bases give the dimension). */
export const classifierOptions = defineOptions<BaseDistributionClassifierOptions>()({
  covariance: atoms.optional(atoms.oneOf(COVARIANCE_KINDS)),
  encoder: atoms.optional(v.unknown(), 'identity'),
});

/** sampleBaseDistributions' options (n at most LIMITS.values / d once the bases give d). */
export const sampleOptions = defineOptions<SampleBaseOptions>()({
  n: atoms.integer(1, LIMITS.values),
  seed: atoms.optional(atoms.seed()),
  covariance: atoms.optional(atoms.oneOf(COVARIANCE_KINDS)),
});
