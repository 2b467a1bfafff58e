/**
 * FedGEM's options, declared once (valibot schemas of the shared atoms,
 * ts/options/): a client's, the server's, and the one-call function's. Each
 * is checked once, where it comes in (the one-call function, the runtime's
 * spec, a constructor given plain options); the roles hold what checking
 * resolves, and a role handed resolved options takes them as they are. What
 * must meet the data (weights and starting means against K and the rows) is
 * checked by the client when it has its rows.
 */
import * as v from 'valibot';
import type { MatrixLike } from '../../data/matrix.js';
import { formatValue, InvalidParameterError } from '../../errors.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { isArray, isPositive, LIMITS, oneOfNeed, readArray, requirePositive } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { RunHooks } from '../runtime/run.js';
import { MAX_CANDIDATES, MAX_COMPONENTS } from './messages.js';
import { checkPrivacy, type PrivacyOptions } from './privacy.js';

export interface FedGEMClientOptions {
  /** K_c, the number of clusters in the client's data (known, as the paper assumes) */
  nComponents: number;
  /** fixed local weights (default uniform) */
  weights?: ArrayLike<number>;
  /**
   * the known shared variance sigma^2 of every component (the paper's
   * identity covariance is 1); absent: the variance the server sends, by
   * default its estimate from the clients' spreads (FedGEMServer's `variance`)
   */
  variance?: number;
  /** L, EM steps per round (default 1) */
  localSteps?: number;
  /** how the radii are computed: the closed form (default) or the bisection solver (Algorithm 4) */
  radius?: 'closed-form' | 'bisection';
  /** halvings of the bisection solver (default 60, at most 1000) */
  bisectionIterations?: number;
  /** starting means (K_c x d, row-major); default from `init` */
  meansInit?: ArrayLike<number>;
  /**
   * how the starting means are found: 'k-means++' seeds (default, as the paper;
   * the best of nInit seedings by inertia) or 'kmeans' (Lloyd's iterations from them)
   */
  init?: 'k-means++' | 'kmeans';
  /** seedings (or k-means runs) tried for the starting means (default 3) */
  nInit?: number;
  /**
   * Gaussian noise on every uploaded center (see privacy.ts); the training
   * rows are then clipped to norm privacy.bound, as the noise's scale assumes
   */
  privacy?: PrivacyOptions;
  /** seed of the initialization */
  seed?: number;
  /**
   * seed of the privacy noise, apart from `seed` (a published seed must not
   * reveal the noise); default: fresh from crypto.getRandomValues where available
   */
  noiseSeed?: number;
}

export interface FedGEMServerOptions {
  /** the dimension every client must share */
  nFeatures: number;
  /** collaborative rounds T (default 10) */
  rounds?: number;
  /**
   * the final-radius hyperparameter: a number (default 1), or candidates to
   * tune by the clients' validation silhouettes (e.g. PHI_GRID)
   */
  phi?: number | readonly number[];
  /** when tuning: keep the smallest phi whose silhouette is within this of the best (default: one standard error) */
  phiTolerance?: number;
  /** stop the rounds early once every radius is below this (a number > 0; default: run them all) */
  tol?: number;
  /** how overlaps are found: a k-d tree (default) or all pairs (the reference) */
  search?: 'kdtree' | 'all-pairs';
  /**
   * after the paper's merge, join super-clusters whose centers are closer
   * than the closest two clusters any one client holds apart and than
   * sigma sqrt(d) (default true; false: the paper's merge alone); needs the
   * variance at the server (estimated, given, or `clientVariance`); see the
   * module comment of server.ts
   */
  separation?: boolean;
  /**
   * with variance 'clients': the variance every client brings, when the
   * server knows it too (the paper's sigma^2 = 1); never sent, used only by
   * the separation step
   */
  clientVariance?: number;
  /** what a bad upload does: its client is excluded from then on (default), or it throws (the runtime's onInvalid policy) */
  onInvalidClient?: 'exclude' | 'throw';
  /**
   * sigma^2 for the clients that have no variance of their own:
   * 'estimate' (default) from the clients' within-cluster spreads in a first
   * round (see server.ts); a number, sent as it is; or 'clients', nothing
   * sent (every client must know its own, the paper's setting)
   */
  variance?: number | 'estimate' | 'clients';
}

export interface FedGEMOptions {
  /**
   * every client's options, or one per client (K_c usually differs); a
   * client without a `variance` takes the federated estimate (unless
   * server.variance says otherwise), and the result reports it
   */
  client: FedGEMClientOptions | FedGEMClientOptions[];
  /** collaborative rounds T (default 10) */
  rounds?: number;
  /**
   * the final-radius hyperparameter: a number (default 1), or candidates to
   * tune by the clients' validation silhouettes (e.g. PHI_GRID)
   */
  phi?: number | readonly number[];
  /** when tuning: keep the smallest phi whose silhouette is within this of the best (default: one standard error) */
  phiTolerance?: number;
  /** per client: the rows that score the candidates when phi is tuned (default: its training rows) */
  validation?: MatrixLike[];
  /** the server's own settings (nFeatures defaults to the clients' column count; a client with another is an InvalidDataError before the run) */
  server?: Omit<FedGEMServerOptions, 'nFeatures' | 'rounds' | 'phi' | 'phiTolerance' | 'tol'> & { nFeatures?: number };
  /** stop the rounds early once every radius is below this (a number > 0; default: run them all) */
  tol?: number;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** A FedGEM client's options, in the order the client has always checked them. */
export const clientOptions = defineOptions<FedGEMClientOptions>()({
  privacy: atoms.optional(atoms.checkedBy((p) => checkPrivacy(p as PrivacyOptions))),
  nComponents: atoms.integer(1, MAX_COMPONENTS),
  variance: atoms.optional(atoms.positive()),
  localSteps: atoms.optional(atoms.integer(1, LIMITS.localSteps), 1),
  bisectionIterations: atoms.optional(atoms.integer(1, 1000), 60),
  radius: atoms.optional(atoms.oneOf(['closed-form', 'bisection'] as const), 'closed-form'),
  // against K and the rows: the client checks them
  weights: atoms.optional(atoms.unchecked<ArrayLike<number>>()),
  meansInit: atoms.optional(atoms.unchecked<ArrayLike<number>>()),
  seed: atoms.optional(atoms.seed()),
  nInit: atoms.optional(atoms.nInit(), 3),
  init: atoms.optional(atoms.oneOf(['k-means++', 'kmeans'] as const), 'k-means++'),
  noiseSeed: atoms.optional(atoms.seed()),
});

export type ResolvedFedGEMClientOptions = ReturnType<typeof clientOptions.check>;

/** phi: a number, or a non-empty list of candidates, each > 0; read once, under guard (a Proxy or getter cannot throw past here). */
function readPhi(given: unknown): readonly number[] {
  const phis = typeof given === 'number' ? [given] : isArray('phi', given) ? (readArray('phi', given, MAX_CANDIDATES) as number[]) : undefined;
  if (!phis || phis.length === 0) {
    throw new InvalidParameterError(`phi must be a number or a non-empty list of candidates (e.g. PHI_GRID; at most ${MAX_CANDIDATES}), got ${phis ? '[]' : formatValue(given)}`);
  }
  phis.forEach((p, i) => requirePositive(typeof given === 'number' ? 'phi' : `phi[${i}]`, p));
  return Object.freeze([...phis]);
}

function readPhiTolerance(x: unknown): number {
  if (!(typeof x === 'number' && x >= 0 && Number.isFinite(x))) throw new InvalidParameterError(`the phi tolerance must be a finite number >= 0, got ${formatValue(x)}`);
  return x;
}

const VARIANCE_SOURCES = ['estimate', 'clients'] as const;

/** sigma^2 given outright (> 0), or where it comes from. */
const variance = () =>
  atoms.atom<number | (typeof VARIANCE_SOURCES)[number]>(
    (x) => isPositive(x) || (typeof x === 'string' && (VARIANCE_SOURCES as readonly string[]).includes(x)),
    (input) => (typeof input === 'number' ? 'must be a finite number > 0' : `must be ${oneOfNeed(VARIANCE_SOURCES)}`),
  );

/** The FedGEM server's options. Resolved: phi the list of candidates (one when a number was given). */
export const serverOptions = defineOptions<FedGEMServerOptions>()(
  {
    nFeatures: atoms.nFeatures(),
    rounds: atoms.optional(atoms.rounds(0), 10),
    // absent: every round runs
    tol: atoms.optional(atoms.positive()),
    phi: atoms.optional(atoms.checkedBy(readPhi), [1]),
    phiTolerance: atoms.optional(atoms.checkedBy(readPhiTolerance)),
    search: atoms.optional(atoms.oneOf(['kdtree', 'all-pairs'] as const), 'kdtree'),
    separation: atoms.optional(atoms.flag(), true),
    onInvalidClient: atoms.optional(atoms.onInvalidClient()),
    variance: atoms.optional(variance(), 'estimate'),
    clientVariance: atoms.optional(atoms.positive()),
  },
  (o) => {
    if (o.clientVariance !== undefined && o.variance !== 'clients') {
      throw new InvalidParameterError(`clientVariance is the variance of a server whose variance is 'clients'; this one's is ${formatValue(o.variance)}`);
    }
    return o;
  },
);

export type ResolvedFedGEMServerOptions = ReturnType<typeof serverOptions.check>;

/** The server's options from a caller (the runtime's spec, a constructor): checked and resolved, what FedGEMServer holds. */
export function checkServerOptions(raw: unknown, name = 'options'): ResolvedFedGEMServerOptions {
  // nFeatures has no default: there is no server without options
  if (raw === null || typeof raw !== 'object') throw new InvalidParameterError(`${name} must be an object with nFeatures, got ${formatValue(raw)}`);
  return serverOptions.check(raw, name);
}

/** A client's options from a caller: checked and resolved, what FedGEMClient holds. */
export function checkClientOptions(raw: unknown, name = 'options'): ResolvedFedGEMClientOptions {
  return clientOptions.check(raw, name);
}

/** The server options the one-call function takes at the top level, not in `server`. */
export const TOP_LEVEL_SERVER_OPTIONS = ['rounds', 'phi', 'phiTolerance', 'tol'] as const;

/**
 * fedGEM's options, read once (the client and server objects are checked by
 * their own declarations, the server's once the clients' data gives
 * nFeatures; encoding and maxExcludedShare by the transport and the policy).
 */
export const fedGEMOptions = defineOptions<FedGEMOptions>()({
  client: atoms.optional(v.unknown()),
  rounds: atoms.optional(v.unknown()),
  phi: atoms.optional(v.unknown()),
  phiTolerance: atoms.optional(v.unknown()),
  validation: atoms.optional(v.unknown()),
  server: atoms.optional(v.unknown()),
  tol: atoms.optional(v.unknown()),
  encoding: atoms.optional(v.unknown()),
  maxExcludedShare: atoms.optional(v.unknown()),
  // read by the runtime (readRunHooks)
  hooks: atoms.optional(v.unknown()),
});
