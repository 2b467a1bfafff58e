/**
 * FedGenGMM's options, declared once (valibot schemas of the shared atoms,
 * ts/options/): a client's local fit, the server's global fit, and the
 * one-call function's. Each is checked once, where it comes in (the one-call
 * function, the runtime's spec, a constructor given plain options); what
 * checking resolves (defaults filled in) is what the roles hold, and a role
 * handed resolved options takes them as they are.
 */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import type { CovarianceType } from '../../models/covariance-types.js';
import { PRECISIONS, requireSingleThreadPrecision, type Precision } from '../../models/gaussian-mixture.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { threadsOption, type Threads } from '../../parallel/threads.js';
import { LIMITS, requireInteger } from '../../validate.js';
import { FeatureRange } from '../feature-range.js';
import { requireModelSize } from '../limits.js';
import type { Encoding } from '../messages/codec.js';
import type { RunHooks } from '../runtime/run.js';

export interface FedGenGMMClientOptions {
  /** smallest number of components tried (default 1) */
  kMin?: number;
  /**
   * largest number tried (default: the larger of kMin and 10, but at most the
   * client's rows when that is more than kMin); kMin = kMax fixes K
   */
  kMax?: number;
  /** default 'diag', as the paper's experiments */
  covarianceType?: CovarianceType;
  criterion?: 'bic' | 'aic';
  nInit?: number;
  tol?: number;
  maxIter?: number;
  regCovar?: number;
  seed?: number;
  /**
   * threads of the local fit (GaussianMixture's `threads`): 1 (default: the
   * calling thread, as before), more, or 'auto'; every candidate K's EM runs
   * on them, started once per fit. Where the client runs in Node or a browser
   * (worker threads, Web Workers); the result does not depend on timing.
   */
  threads?: Threads;
  /**
   * the arithmetic of every EM of the fit (GaussianMixture's `precision`):
   * 'float64' (default) or 'float32' (about twice as fast, the lower bound
   * within about 1e-6 relative; calling-thread fits only, threads 1)
   */
  precision?: Precision;
}

/** how the server makes the global model (see FedGenGMMServerOptions.serverStep) */
export type ServerStep = 'sample' | 'hierarchical';
export const SERVER_STEPS: readonly ServerStep[] = ['sample', 'hierarchical'];

/** The global fit takes the clients' options (kMin/kMax for BIC, covariance type, EM settings, seed). */
export interface FedGenGMMServerOptions extends Omit<FedGenGMMClientOptions, 'threads'> {
  /** synthetic rows per incoming component (default 100, as the paper) */
  h?: number;
  /** a fixed number of global components (at most LIMITS.components, what a GaussianMixture holds); or leave it out and give kMin/kMax for BIC */
  nComponents?: number;
  /** starts of the global fit, the best kept (default 10 for either step; a start of 'sample' is an EM over the synthetic rows) */
  nInit?: number;
  /** the dimension every client must share */
  nFeatures: number;
  /** what a bad upload does: excluded with its reason (default) or thrown (the runtime's onInvalid policy) */
  onInvalidClient?: 'exclude' | 'throw';
  /**
   * [min, max] of the features, numbers or one per feature: a promise that
   * every client's rows lie inside, against which each upload is checked
   * (component means inside, variances at most (max - min)^2 / 4 + regCovar,
   * the server's regCovar: clients must not fit with a larger one, or their
   * honest variances may pass the bound; fedGenGMM refuses that before the run).
   */
  featureRange?: [number | ArrayLike<number>, number | ArrayLike<number>];
  /**
   * the most synthetic rows the global fit draws (default 1,000,000): with
   * more incoming components than that allows at h rows each, every component
   * gets floor(maxSyntheticRows / components) rows (at least one)
   */
  maxSyntheticRows?: number;
  /**
   * how the global model is made: 'sample' (default, the paper's: EM on
   * H x sum K_c rows drawn from the union) or 'hierarchical' (hierarchical EM
   * on the components' parameters, no rows drawn; deterministic at a seed)
   */
  serverStep?: ServerStep;
  /**
   * 'hierarchical': the virtual rows N the union stands for, each component
   * its share (default: the rows the clients reported). Larger N makes each
   * component go more wholly to one global component.
   */
  virtualSamples?: number;
}

export interface FedGenGMMOptions {
  /**
   * every client's options, or one per client (clients may differ); a client
   * without a seed gets one derived from server.seed and its id
   * (clientSeed), so server.seed alone reproduces the run
   */
  client?: FedGenGMMClientOptions | FedGenGMMClientOptions[];
  /** the global fit, and the run's seed (nFeatures defaults to the clients' column count; a client with another is an InvalidDataError before the run) */
  server: Omit<FedGenGMMServerOptions, 'nFeatures'> & { nFeatures?: number };
  /** keep the clients' local models (for the local-models baseline); default false */
  keepLocalModels?: boolean;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/**
 * The local K range when none is given: BIC over 1..10 (Algorithm 4.1's
 * TrainGMM), kMax capped at the client's rows (a K above them cannot be fitted).
 */
export const DEFAULT_CLIENT_K_RANGE: readonly [number, number] = [1, 10];

/**
 * The sampled step's EM starts when nInit is not given (k-means on the
 * synthetic rows, the best lower bound kept), as many as hierarchical EM's.
 * One start merged two of the shift scheme's ten separated parts in some
 * repeats of a K sweep on held-out rows (up to 140% below central's
 * log-likelihood; 6 of 15 cells within 5%); 3 starts gave 11 of 15, 10 gave
 * 13 of 15, as hierarchical EM (EXPERIMENTS.md, FedGenGMM, "Server step: a K
 * sweep on held-out rows"). Each start is an EM over the H x sum K_c
 * synthetic rows; a start of hierarchical EM costs sum K_c x K x d^2 per
 * iteration, no rows.
 */
export const SAMPLE_N_INIT = 10;

/** The local fit's settings; the global fit takes the same (fitEntries), with its own default of starts. */
const fitEntries = {
  kMin: atoms.optional(atoms.federatedComponents(), DEFAULT_CLIENT_K_RANGE[0]),
  // at least kMin: the rule is kMaxAtLeastKMin's
  kMax: atoms.optional(atoms.federatedComponents()),
  covarianceType: atoms.optional(atoms.covarianceType(), 'diag'),
  criterion: atoms.optional(atoms.criterion(), 'bic'),
  // GaussianMixture's defaults
  nInit: atoms.optional(atoms.nInit(), 1),
  tol: atoms.optional(atoms.tolerance(), 1e-3),
  maxIter: atoms.optional(atoms.maxIterations(1), 100),
  regCovar: atoms.optional(atoms.regCovar(), 1e-6),
  seed: atoms.optional(atoms.seed()),
  precision: atoms.optional(atoms.oneOf(PRECISIONS)),
};

function kMaxAtLeastKMin<O extends { kMin: number; kMax?: number }>(o: O): O {
  if (o.kMax !== undefined) requireInteger('kMax', o.kMax, o.kMin, LIMITS.count);
  return o;
}

/** A FedGenGMM client's options (its local fit). */
export const clientOptions = defineOptions<FedGenGMMClientOptions>()({ ...fitEntries, threads: atoms.optional(threadsOption()) }, (o) => {
  requireSingleThreadPrecision(o);
  return kMaxAtLeastKMin(o);
});

export type ResolvedFedGenGMMClientOptions = ReturnType<typeof clientOptions.check>;

/** virtualSamples: a positive number of rows, at most 2^53 - 1 (a fraction is a weight, not a count). */
const virtualSamples = () =>
  atoms.atom<number>(
    (x) => typeof x === 'number' && x > 0 && x <= Number.MAX_SAFE_INTEGER,
    (input) => (typeof input === 'number' && Number.isFinite(input) && input >= 0 ? 'must be positive and at most 2^53 - 1' : 'must be a finite number >= 0'),
  );

/** The FedGenGMM server's options (the global fit, the run's seed, the checks of uploads). */
export const serverOptions = defineOptions<FedGenGMMServerOptions>()(
  {
    ...fitEntries,
    nInit: atoms.optional(atoms.nInit(), SAMPLE_N_INIT),
    serverStep: atoms.optional(atoms.oneOf(SERVER_STEPS), 'sample'),
    virtualSamples: atoms.optional(virtualSamples()),
    h: atoms.optional(atoms.integer(1, LIMITS.count), 100),
    nFeatures: atoms.nFeatures(),
    // bounded by the model's size first (the message says how far to lower it), then by LIMITS.components (the rule)
    nComponents: atoms.optional(atoms.integer(1, LIMITS.count)),
    maxSyntheticRows: atoms.optional(atoms.integer(1, 2 ** 31 - 1), 1_000_000),
    onInvalidClient: atoms.optional(atoms.oneOf(['exclude', 'throw'] as const)),
    featureRange: atoms.optional(v.unknown()),
  },
  (given) => {
    const o = kMaxAtLeastKMin(given);
    if (o.nComponents !== undefined) {
      requireModelSize(o.nComponents, o.nFeatures, o.covarianceType);
      requireInteger('nComponents', o.nComponents, 1, LIMITS.components);
    } else if (o.kMax === undefined) throw new InvalidParameterError('the server needs nComponents, or kMin/kMax for BIC selection');
    // a promise about the rows, read and checked against nFeatures here: the server holds the range, not the caller's arrays
    return { ...o, featureRange: o.featureRange === undefined ? undefined : FeatureRange.from('featureRange', o.featureRange, o.nFeatures) };
  },
);

export type ResolvedFedGenGMMServerOptions = ReturnType<typeof serverOptions.check>;

/**
 * A client's options from a caller (the runtime's spec, a worker's lane):
 * checked and resolved, what FedGenGMMClient holds. `name` names the object
 * in a message about an unknown option.
 */
export function checkClientOptions(raw: unknown, name = 'options'): ResolvedFedGenGMMClientOptions {
  return clientOptions.check(raw, name);
}

/** The server's options from a caller: checked and resolved, what FedGenGMMServer holds. */
export function checkServerOptions(raw: unknown, name = 'options'): ResolvedFedGenGMMServerOptions {
  // nFeatures has no default: there is no server without options
  if (raw === undefined) throw new InvalidParameterError(`${name} must be an object with nFeatures, and nComponents or kMin/kMax`);
  return serverOptions.check(raw, name);
}

/**
 * The one-call function's options, read (the client and server objects are
 * checked by their own declarations once the clients' data gives nFeatures;
 * encoding and maxExcludedShare by the transport and the policy that take them).
 */
export const fedGenGMMOptions = defineOptions<FedGenGMMOptions>()({
  client: atoms.optional(v.unknown()),
  server: atoms.optional(v.unknown()),
  keepLocalModels: atoms.optional(v.unknown()),
  encoding: atoms.optional(v.unknown()),
  maxExcludedShare: atoms.optional(v.unknown()),
  // read by the runtime (readRunHooks)
  hooks: atoms.optional(v.unknown()),
});
