/**
 * Community association's options, declared once (valibot schemas of the
 * shared atoms, ts/options/): the server's, a client's and the one-call
 * function's. Each is checked once, where it comes in (associate, the
 * runtime's spec, a constructor given plain options); the roles hold what
 * checking resolves, and a role handed resolved options takes them as they are.
 *
 * A client's `detector` is the local model's options (LocalDetector, in
 * ts/models/): read here under guard, strictly, and checked by the model's
 * own declaration when the detector is made.
 */
import * as v from 'valibot';
import { COMMUNITY_METHODS, type CommunityMethod } from '../../graph/communities.js';
import { DETECTOR_KINDS, DETECTOR_OPTION_KEYS, localDetectorOptions, type DetectorKind, type LocalDetectorOptions } from '../../models/detectors.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { integerNeed, isIntegerIn, readOptions } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { RunHooks } from '../runtime/run.js';
import { MAX_PARTNERS } from './messages.js';

export interface CommunitiesServerOptions {
  /** the clients' features */
  nFeatures: number;
  /** the detector every client fits (default 'ocsvm') */
  kind?: DetectorKind;
  /** the contamination every client's detector uses, in (0, 0.5) (default 0.1) */
  contamination?: number;
  /** the association tolerance q in [0, 1] (default 0.08, the paper's) */
  q?: number;
  /** 'all' (default: every pair, as the paper) or s >= 1: each client draws s partners at random (seeded by seed) */
  partners?: 'all' | number;
  /** seed of the partners drawn and of Louvain's visiting order (default 0) */
  seed?: number;
  /** 'fast-greedy' (default, as the paper's code) or 'louvain' */
  method?: CommunityMethod;
  /** the most detector bytes one relay message carries (estimated as 8 per value; default 8 MiB) */
  maxRelayBytes?: number;
}

export interface CommunitiesClientOptions {
  /** the local detector: kind ('ocsvm' default, 'gmm', 'autoencoder'), contamination and the model's options */
  detector?: LocalDetectorOptions;
}

export interface AssociateOptions extends Omit<CommunitiesServerOptions, 'nFeatures' | 'kind' | 'contamination'> {
  /** every client's detector: kind ('ocsvm' default), contamination (default 0.1) and the model's options */
  detector?: LocalDetectorOptions;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
  /** with detector.noise: client i's noise is seeded noiseSeed + i, for tests only (default: fresh from crypto.getRandomValues) */
  noiseSeed?: number;
}

/** The association tolerance q: in [0, 1] (|in_ji - in_ii| is a difference of two shares). */
export const isQ = (x: unknown): x is number => typeof x === 'number' && x >= 0 && x <= 1;

/** A detector's contamination: in (0, 0.5), as the models' (requireContamination). */
const contamination = () => atoms.atom<number>((x) => typeof x === 'number' && x > 0 && x < 0.5, 'must be a number in (0, 0.5)');

/** 'all', or partners each client draws: [1, MAX_PARTNERS] (a relay message lists at most that many). */
const partners = () => atoms.atom<'all' | number>((x) => x === 'all' || isIntegerIn(x, 1, MAX_PARTNERS), (input) => `must be ${integerNeed(1, MAX_PARTNERS, input)}`);

const serverEntries = {
  nFeatures: atoms.nFeatures(),
  kind: atoms.optional(atoms.oneOf(DETECTOR_KINDS), 'ocsvm'),
  contamination: atoms.optional(contamination(), 0.1),
  q: atoms.optional(atoms.atom<number>(isQ, 'must be a number in [0, 1]'), 0.08),
  partners: atoms.optional(partners(), 'all'),
  seed: atoms.optional(atoms.seed(), 0),
  method: atoms.optional(atoms.oneOf(COMMUNITY_METHODS), 'fast-greedy'),
  // one message's bytes: an Int32 count
  maxRelayBytes: atoms.optional(atoms.integer(1, 2 ** 31 - 1), 8 * 2 ** 20),
};

/** The communities server's options. */
export const serverOptions = defineOptions<CommunitiesServerOptions>()(serverEntries);

export type ResolvedCommunitiesServerOptions = ReturnType<typeof serverOptions.check>;

/** The server's options from a caller: checked and resolved, what CommunitiesServer holds. */
export function checkServerOptions(raw: unknown, name = 'options'): ResolvedCommunitiesServerOptions {
  return serverOptions.check(raw, name);
}

/**
 * The detector's options, read once under guard and strictly (a misspelt key
 * is said here); their values are the model's to check. Options the model's
 * declaration already resolved (checkDetectorOptions) are taken as they are.
 */
const detector = () =>
  v.pipe(v.unknown(), v.transform((x) => (localDetectorOptions.isResolved(x) ? x : (readOptions(x as LocalDetectorOptions, DETECTOR_OPTION_KEYS, 'detector') as LocalDetectorOptions))));

/** A communities client's options. */
export const clientOptions = defineOptions<CommunitiesClientOptions>()({ detector: atoms.optional(detector()) });

export type ResolvedCommunitiesClientOptions = ReturnType<typeof clientOptions.check>;

/** A client's options from a caller (the runtime's spec, a worker's lane): read and resolved, what CommunitiesClient holds. */
export function checkClientOptions(raw: unknown, name = 'options'): ResolvedCommunitiesClientOptions {
  return clientOptions.check(raw, name);
}

/**
 * associate's options: the run's own checked here; the server's read (checked
 * by its declaration once the clients' data gives nFeatures), the detector's
 * read as a client's are and checked by the model (checkDetectorOptions), encoding and maxExcludedShare by the
 * transport and the policy that take them.
 */
export const associateOptions = defineOptions<AssociateOptions>()({
  detector: atoms.optional(detector()),
  q: atoms.optional(v.unknown()),
  partners: atoms.optional(v.unknown()),
  seed: atoms.optional(v.unknown()),
  method: atoms.optional(v.unknown()),
  maxRelayBytes: atoms.optional(v.unknown()),
  encoding: atoms.optional(v.unknown()),
  onInvalidClient: atoms.optional(atoms.onInvalidClient(), 'exclude'),
  maxExcludedShare: atoms.optional(v.unknown()),
  // read by the runtime (readRunHooks)
  hooks: atoms.optional(v.unknown()),
  noiseSeed: atoms.optional(atoms.seed()),
});
