/**
 * The FedAvg family's options, declared once (valibot schemas of the shared
 * atoms, ts/options/): each server's (FedAvg, FedProx, SCAFFOLD: one set of
 * entries, each algorithm its defaults and its own option), the client's, and
 * the one-call function's. Each is checked once, where it comes in; the roles
 * hold what checking resolves, and a role handed resolved options takes them
 * as they are. The network is checked by Network when the server builds it.
 */
import * as v from 'valibot';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { resolveEarlyStopping, type EarlyStopping, type EarlyStoppingOptions } from '../../models/early-stopping.js';
import { OPTIMIZER_KEYS, type NetworkSpec, type OptimizerSpec } from '../../models/network.js';
import * as atoms from '../../options/atoms.js';
import { defineOptions } from '../../options/check.js';
import { LIMITS, readOptions, requireNumber, requireOneOf, requirePositive } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import { MAX_SAMPLES } from './messages.js';
import type { RunHooks } from '../runtime/run.js';

export type FedAvgAlgorithm = 'fedavg' | 'fedprox' | 'scaffold';
export const FEDAVG_ALGORITHMS = ['fedavg', 'fedprox', 'scaffold'] as const;

export interface FedAvgServerOptions {
  /** the network every client trains (its init and seed make the starting parameters) */
  network: NetworkSpec;
  /** starting parameters instead of the network's seeded initialization */
  initialParameters?: ArrayLike<number>;
  /** communication rounds (default 10) */
  rounds?: number;
  /** E, local epochs per round (default 5) */
  epochs?: number;
  /** B, the local batch size (default 32; a client with fewer rows uses them all) */
  batchSize?: number;
  /** the local optimizer, fresh each round (default DEFAULT_OPTIMIZER: Adam at 0.01 for FedAvg and FedProx, plain SGD at 0.3 for SCAFFOLD) */
  optimizer?: OptimizerSpec;
  /** how replies are weighted: by row count (default) or equally (SCAFFOLD's default, as its paper; and DP-FedAvg's, which allows no other) */
  weighting?: 'samples' | 'uniform';
  /** 'mean' (default), or a robust rule: 'median' (coordinate-wise) or 'trimmed-mean' */
  aggregation?: 'mean' | 'median' | 'trimmed-mean';
  /** the share cut from each end by 'trimmed-mean' (default 0.1) */
  trim?: number;
  /**
   * the most rows a client may declare (nSamples, its weight in the mean): a
   * reply declaring more is refused and its client excluded (default: no bound).
   * Whatever the bound, a client's count is pinned at its first accepted reply.
   */
  maxSamples?: number;
  /**
   * a bound on the L2 norm of each client's update (its parameters minus the
   * global ones): a longer update is scaled down to it before aggregation, as
   * DP-FedAvg clips (default: none). Each round's history counts the clipped.
   */
  clipNorm?: number;
  /**
   * early stopping of every client's local epochs (default none: every client
   * trains all E epochs on all its rows, McMahan et al.'s FedAvg): each round
   * a client scores the global parameters, scores every epoch after, stops
   * once `patience` epochs (default 3) have not improved on the best, and
   * answers with the best epoch's parameters (the global ones if none was
   * better) and the epochs it ran. { monitor: 'validation-loss',
   * validationShare } scores the loss of that share of its rows, held out
   * (the same rows every round); { monitor: 'separation', contamination }
   * (autoencoders of anomalies) the separation of its reconstruction errors
   * at that contamination (see ts/models/early-stopping.ts). Not with SCAFFOLD.
   */
  earlyStopping?: EarlyStoppingOptions;
  /** centralized evaluation after each round (Flower's evaluate_fn): metrics recorded in the round's history */
  evaluate?: (parameters: Float32Array, round: number) => Record<string, number>;
  /**
   * DP-FedAvg (McMahan et al. 2018), with central noise: each client clips
   * its update (parameters minus the global ones) to L2 norm `clipNorm`
   * (Flower's clipping_norm, Opacus' max_grad_norm) and says whether it had
   * to; the server adds N(0, (noiseMultiplier x clipNorm)^2) to each
   * coordinate of the sum of the clipped updates (noiseMultiplier: Opacus'
   * and Flower's noise_multiplier) and divides by the round's expected number
   * of clients (the clients sampled: fixed, whoever answers). Replies are
   * weighted equally (row counts would leak and break the sensitivity), the
   * aggregation is the mean, and every request declares its privacy step
   * (the runtime's accountant: FederationPolicy.privacy). Not with SCAFFOLD
   * (its control variates are not clipped) nor with the server-side clipNorm.
   * Under secure aggregation (policy secureAggregation) the noise is
   * distributed: each client adds its Skellam share to its clipped update,
   * the server adds none and divides the noised sum by the survivors' count
   * (docs/privacy.md, "distributed DP").
   */
  dp?: { clipNorm: number; noiseMultiplier: number };
  /** seed of DP-FedAvg's noise, for tests only: whoever knows it can subtract the noise (default: unpredictable) */
  noiseSeed?: number;
}

export interface FedProxServerOptions extends FedAvgServerOptions {
  /** the proximal weight mu >= 0 (0: FedAvg) */
  mu: number;
}

export interface ScaffoldServerOptions extends FedAvgServerOptions {
  /** eta_g, the server's step along the clients' mean change (default 1) */
  serverLearningRate?: number;
}

export interface FedAvgClientOptions {
  /** class labels of the rows (a classifier, loss softmax-cross-entropy); without them the rows are their own targets (an autoencoder) */
  labels?: Int32Array | readonly number[];
  /** seed of the local shuffles (default: derived from the client id, so a run is reproducible on any transport) */
  seed?: number;
}

export interface FedAvgOptions extends FedAvgServerOptions {
  /** 'fedavg' (default), 'fedprox' (needs mu) or 'scaffold' */
  algorithm?: FedAvgAlgorithm;
  /** FedProx's proximal weight */
  mu?: number;
  /** SCAFFOLD's server step eta_g (default 1) */
  serverLearningRate?: number;
  /** C, the share of clients asked each round (default 1), drawn with sampleSeed */
  fraction?: number;
  sampleSeed?: number;
  /** client i's shuffles are seeded with seed + i (wrapped below 2^53; default: from each client's id) */
  seed?: number;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
  /** the run's privacy accounting (FederationPolicy.privacy): epsilon per round at delta in federation.history, the total in federation.privacy, a budget that stops the run before a round would pass it */
  privacy?: { delta: number; epsilonBudget?: number };
}

/**
 * Each algorithm's local optimizer when none is given. Measured on satellite,
 * letter, abalone and pendigits (10 clients, IID and Dirichlet 0.3, 10 rounds
 * of E = 5; EXPERIMENTS.md, honest-federation matrix): the former plain SGD at
 * 0.01 with E = 1 barely left the initialization (satellite 0.04 against a
 * central MLP's 0.86); Adam at 0.01 reaches 0.84, and is the best of Adam at
 * 1e-3, 3e-3 and 1e-2 and SGD at 0.1 with or without momentum on every set.
 * SCAFFOLD's control variates assume plain SGD steps, and there 0.3 did best
 * of 0.03-0.5 (satellite 0.82, letter 0.37 where 0.01 gave 0.05).
 */
export const DEFAULT_OPTIMIZER: Readonly<Record<FedAvgAlgorithm, Readonly<OptimizerSpec>>> = {
  fedavg: { name: 'adam', learningRate: 0.01 },
  fedprox: { name: 'adam', learningRate: 0.01 },
  scaffold: { name: 'sgd', learningRate: 0.3 },
};

/** E, local epochs per round, when none is given (the FedAvg paper's E = 5) */
export const DEFAULT_EPOCHS = 5;

/** The local optimizer read once and checked: the options it names, no others. */
function checkOptimizer(given: unknown): OptimizerSpec {
  const o = readOptions(given as OptimizerSpec, OPTIMIZER_KEYS, 'optimizer') as OptimizerSpec;
  requireOneOf('optimizer.name', o.name, ['sgd', 'adam'] as const);
  requirePositive('optimizer.learningRate', o.learningRate);
  for (const key of ['momentum', 'dampening', 'weightDecay', 'eps'] as const) if (o[key] !== undefined) requireNumber(`optimizer.${key}`, o[key], 0);
  for (const key of ['beta1', 'beta2'] as const) {
    if (o[key] !== undefined && !(requireNumber(`optimizer.${key}`, o[key], 0) < 1)) throw new InvalidParameterError(`optimizer.${key} must be in [0, 1), got ${o[key]}`);
  }
  if (o.nesterov !== undefined && typeof o.nesterov !== 'boolean') throw new InvalidParameterError(`optimizer.nesterov must be true or false, got ${formatValue(o.nesterov)}`);
  const out: OptimizerSpec = { name: o.name, learningRate: o.learningRate };
  for (const key of OPTIMIZER_KEYS) if (key !== 'name' && key !== 'learningRate' && o[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = o[key];
  return Object.freeze(out);
}

function requireNetworkGiven(network: unknown): NetworkSpec {
  if (network === undefined) throw new InvalidParameterError('the server needs the network its clients train: { sizes, activation, outputActivation, loss }');
  return network as NetworkSpec;
}

/** The options every server of the family takes, with the algorithm's defaults. */
function serverEntries(a: FedAvgAlgorithm) {
  return {
    // checked by Network when the server builds it (its initialization is the starting point)
    network: atoms.checkedBy(requireNetworkGiven),
    rounds: atoms.optional(atoms.rounds(0), 10),
    epochs: atoms.optional(atoms.integer(1, LIMITS.localSteps), DEFAULT_EPOCHS),
    batchSize: atoms.optional(atoms.integer(1, LIMITS.count), 32),
    optimizer: atoms.optional(atoms.checkedBy(checkOptimizer), DEFAULT_OPTIMIZER[a]),
    // the default is the algorithm's (`weighting`), or 'uniform' under DP: the server fills it in (FedAvgServer.weighting)
    weighting: atoms.optional(atoms.oneOf(['samples', 'uniform'] as const)),
    aggregation: atoms.optional(atoms.oneOf(['mean', 'median', 'trimmed-mean'] as const), 'mean'),
    // below 0.5 (the rule)
    trim: atoms.optional(atoms.number(0), 0.1),
    maxSamples: atoms.optional(atoms.integer(1, MAX_SAMPLES)),
    clipNorm: atoms.optional(atoms.positive()),
    earlyStopping: atoms.optional(atoms.checkedBy((e): EarlyStopping => Object.freeze(resolveEarlyStopping(e as EarlyStoppingOptions)))),
    evaluate: atoms.optional(atoms.callback<NonNullable<FedAvgServerOptions['evaluate']>>('must be a function (parameters, round) => metrics')),
    // against the network's parameters: set by Network
    initialParameters: atoms.optional(atoms.unchecked<ArrayLike<number>>()),
    dp: atoms.optional(atoms.checkedBy(readDp)),
    noiseSeed: atoms.optional(atoms.seed()),
  };
}

/** DP-FedAvg's settings read once: a clip bound and a noise multiplier, both finite and > 0. */
function readDp(given: unknown): Readonly<{ clipNorm: number; noiseMultiplier: number }> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`dp must be { clipNorm, noiseMultiplier }, got ${formatValue(given)}`);
  const d = readOptions(given as { clipNorm: number; noiseMultiplier: number }, ['clipNorm', 'noiseMultiplier'], 'dp');
  for (const k of ['clipNorm', 'noiseMultiplier'] as const) {
    if (!(typeof d[k] === 'number' && d[k] > 0 && Number.isFinite(d[k]))) throw new InvalidParameterError(`dp.${k} must be a finite number > 0, got ${formatValue(d[k])}`);
  }
  return Object.freeze({ clipNorm: d.clipNorm!, noiseMultiplier: d.noiseMultiplier! });
}

/** Each algorithm's weighting when none is given (under DP: 'uniform', the only one allowed). */
const DEFAULT_WEIGHTING: Record<FedAvgAlgorithm, 'samples' | 'uniform'> = { fedavg: 'samples', fedprox: 'samples', scaffold: 'uniform' };

/** What DP-FedAvg rules out (weights by row count, robust rules, the server-side clip, SCAFFOLD), and the weighting filled in. */
function checkDp<O extends { dp?: unknown; weighting?: 'samples' | 'uniform'; aggregation: string; clipNorm?: number }>(o: O, a: FedAvgAlgorithm): O {
  if (o.dp === undefined) return { ...o, weighting: o.weighting ?? DEFAULT_WEIGHTING[a] };
  if (a === 'scaffold') throw new InvalidParameterError("dp: SCAFFOLD's control variates are not clipped, so DP-FedAvg's sensitivity does not hold for them; use fedavg or fedprox");
  if (o.weighting === 'samples') throw new InvalidParameterError("dp: replies are weighted equally under DP-FedAvg (weights by row count would reveal the counts and let one client's weight exceed the sensitivity); omit weighting or give 'uniform'");
  if (o.aggregation !== 'mean') throw new InvalidParameterError(`dp: DP-FedAvg's noise is calibrated to the sum of clipped updates; aggregation must be 'mean', got '${o.aggregation}'`);
  if (o.clipNorm !== undefined) throw new InvalidParameterError("dp: the clients clip to dp.clipNorm; clipNorm is the server-side clip without noise: give one or the other");
  return { ...o, weighting: 'uniform' };
}

function trimBelowHalf<O extends { trim: number }>(o: O): O {
  if (!(o.trim < 0.5)) throw new InvalidParameterError(`trim is ${o.trim}; it must be below 0.5, or nothing is left to average`);
  return o;
}

/** FedAvgServer's options. */
export const fedAvgServerOptions = defineOptions<FedAvgServerOptions>()(serverEntries('fedavg'), (o) => checkDp(trimBelowHalf(o), 'fedavg'));

/** FedProxServer's: FedAvg's and mu. */
export const fedProxServerOptions = defineOptions<FedProxServerOptions>()({ ...serverEntries('fedprox'), mu: atoms.number(0) }, (o) => checkDp(trimBelowHalf(o), 'fedprox'));

/** ScaffoldServer's: FedAvg's (replies weighted equally, plain SGD) and eta_g; its control variates rule out Adam and early stopping. */
export const scaffoldServerOptions = defineOptions<ScaffoldServerOptions>()(
  { ...serverEntries('scaffold'), serverLearningRate: atoms.optional(atoms.learningRate(), 1) },
  (given) => {
    const o = checkDp(trimBelowHalf(given), 'scaffold');
    if (o.optimizer.name !== 'sgd') throw new InvalidParameterError("SCAFFOLD's control variates (option II) assume plain SGD local steps: optimizer.name must be 'sgd'");
    if (o.earlyStopping) throw new InvalidParameterError("SCAFFOLD's control variates assume every client runs all its K local steps: earlyStopping is for FedAvg and FedProx");
    return o;
  },
);

export type ResolvedFedAvgServerOptions = ReturnType<typeof fedAvgServerOptions.check>;
export type ResolvedFedProxServerOptions = ReturnType<typeof fedProxServerOptions.check>;
export type ResolvedScaffoldServerOptions = ReturnType<typeof scaffoldServerOptions.check>;

/** Each algorithm's server options, by name. */
export const SERVER_OPTIONS = { fedavg: fedAvgServerOptions, fedprox: fedProxServerOptions, scaffold: scaffoldServerOptions } as const;

/** A server's options from a caller: checked by `declaration` and resolved (no options: an error saying what a server needs). */
export function checkServerOptions<R extends object>(declaration: { check(raw: unknown, name?: string): Readonly<R> }, raw: unknown, name = 'options'): Readonly<R> {
  if (raw === null || typeof raw !== 'object') throw new InvalidParameterError(`${name} must be an object like { network, rounds, epochs, batchSize, optimizer }, got ${formatValue(raw)}`);
  return declaration.check(raw, name);
}

/** A FedAvgClient's options (the labels are checked against its rows). */
export const clientOptions = defineOptions<FedAvgClientOptions>()({
  labels: atoms.optional(atoms.unchecked<Int32Array | readonly number[]>()),
  seed: atoms.optional(atoms.seed()),
});

export type ResolvedFedAvgClientOptions = ReturnType<typeof clientOptions.check>;

/** A client's options in a runtime spec (its labels are the spec's own). */
export const clientSpecOptions = defineOptions<{ seed?: number }>()({ seed: atoms.optional(atoms.seed()) });

/**
 * fedAvg's options: its own checked here, the server's read once (the chosen
 * algorithm's declaration checks them; fraction and sampleSeed the runtime's
 * policy, encoding the transport).
 */
export const fedAvgOptions = defineOptions<FedAvgOptions>()({
  algorithm: atoms.optional(atoms.oneOf(FEDAVG_ALGORITHMS), 'fedavg'),
  onInvalidClient: atoms.optional(atoms.onInvalidClient(), 'exclude'),
  seed: atoms.optional(atoms.seed()),
  network: atoms.optional(v.unknown()),
  initialParameters: atoms.optional(v.unknown()),
  rounds: atoms.optional(v.unknown()),
  epochs: atoms.optional(v.unknown()),
  batchSize: atoms.optional(v.unknown()),
  optimizer: atoms.optional(v.unknown()),
  weighting: atoms.optional(v.unknown()),
  aggregation: atoms.optional(v.unknown()),
  trim: atoms.optional(v.unknown()),
  maxSamples: atoms.optional(v.unknown()),
  clipNorm: atoms.optional(v.unknown()),
  earlyStopping: atoms.optional(v.unknown()),
  evaluate: atoms.optional(v.unknown()),
  dp: atoms.optional(v.unknown()),
  noiseSeed: atoms.optional(v.unknown()),
  mu: atoms.optional(v.unknown()),
  serverLearningRate: atoms.optional(v.unknown()),
  fraction: atoms.optional(v.unknown()),
  sampleSeed: atoms.optional(v.unknown()),
  encoding: atoms.optional(v.unknown()),
  maxExcludedShare: atoms.optional(v.unknown()),
  hooks: atoms.optional(v.unknown()),
  privacy: atoms.optional(v.unknown()),
});
