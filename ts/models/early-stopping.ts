/**
 * Early stopping of a network's training, epoch by epoch, as Keras'
 * EarlyStopping(patience, restore_best_weights=True): a score is measured
 * after every epoch, training stops once it has not improved for `patience`
 * epochs in a row, and the parameters of the best epoch are kept. Two scores:
 *
 *   'validation-loss'  the loss of a share of the rows held out (the same rows
 *                      every time: a seeded permutation), as Keras'
 *                      validation_split and scikit-learn's validation_fraction;
 *   'separation'       for an autoencoder of anomalies: how far its
 *                      reconstruction errors set the largest `contamination`
 *                      share of the rows it trains on apart from the rest
 *                      (errorSeparation). Trained on contaminated rows, an
 *                      autoencoder first learns the majority pattern and
 *                      later the minority too; the held-out loss keeps falling
 *                      as it learns the minority (the held-out rows are
 *                      contaminated alike), while the separation, the
 *                      contrast its threshold relies on, peaks before that.
 *
 * The per-community autoencoders (FedAvg clients and lone clients alike)
 * train with 'separation' by default; any FedAvg-family federation can ask
 * for either (`earlyStopping`).
 */
import * as v from 'valibot';
import { formatValue, InvalidParameterError } from '../errors.js';
import * as atoms from '../options/atoms.js';
import { defineOptions, parseOptions } from '../options/check.js';
import { Rng } from '../random.js';
import { guardRead, LIMITS, readOptions, requireOneOf } from '../validate.js';

export const EARLY_STOPPING_MONITORS = ['validation-loss', 'separation'] as const;
export type EarlyStoppingMonitor = (typeof EARLY_STOPPING_MONITORS)[number];

/** Early stopping as given: what to watch, and its share and patience (defaults below). */
export type EarlyStoppingOptions =
  | { monitor: 'validation-loss'; /** the share of rows held out, in (0, 0.5) (default 0.1) */ validationShare?: number; patience?: number }
  | { monitor: 'separation'; /** the share of rows taken as outliers, in (0, 0.5) (default 0.1) */ contamination?: number; patience?: number };

/** Early stopping resolved: every field set. */
export type EarlyStopping = { monitor: 'validation-loss'; validationShare: number; patience: number } | { monitor: 'separation'; contamination: number; patience: number };

/** The share of rows held out, and the contamination, when not given (Keras' validation_split in the anomaly-communities paper's code; the paper's d). */
export const DEFAULT_VALIDATION_SHARE = 0.1;
export const DEFAULT_CONTAMINATION = 0.1;

/** Epochs without improvement before stopping, when not given (the anomaly-communities paper's code). */
export const DEFAULT_PATIENCE = 3;

type SeparationOptions = Extract<EarlyStoppingOptions, { monitor: 'separation' }>;
type ValidationLossOptions = Extract<EarlyStoppingOptions, { monitor: 'validation-loss' }>;

/** Epochs without improvement before stopping: [1, LIMITS.localSteps]. */
const patience = () => atoms.integer(1, LIMITS.localSteps);

/** Early stopping on the separation of reconstruction errors, declared (defaults filled in). */
const separationOptions = defineOptions<SeparationOptions>()({
  monitor: atoms.oneOf(['separation'] as const),
  contamination: atoms.optional(atoms.share(), DEFAULT_CONTAMINATION),
  patience: atoms.optional(patience(), DEFAULT_PATIENCE),
});

/** Early stopping on a held-out loss, declared (defaults filled in). */
const validationLossOptions = defineOptions<ValidationLossOptions>()({
  monitor: atoms.oneOf(['validation-loss'] as const),
  validationShare: atoms.optional(atoms.share(), DEFAULT_VALIDATION_SHARE),
  patience: atoms.optional(patience(), DEFAULT_PATIENCE),
});

/**
 * Early stopping options read once and checked (strict keys), defaults filled
 * in; a bad one is named under `name` ("earlyStopping.patience"). What this
 * returned is taken as it is.
 */
export function resolveEarlyStopping(given: EarlyStoppingOptions, name = 'earlyStopping'): EarlyStopping {
  if (separationOptions.isResolved(given) || validationLossOptions.isResolved(given)) return given;
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`${name} must be { monitor: 'separation', contamination?, patience? } or { monitor: 'validation-loss', validationShare?, patience? }, got ${formatValue(given)}`);
  const monitor = requireOneOf(`${name}.monitor`, guardRead(`${name}.monitor`, () => (given as { monitor?: unknown }).monitor), EARLY_STOPPING_MONITORS);
  const declaration: typeof separationOptions | typeof validationLossOptions = monitor === 'separation' ? separationOptions : validationLossOptions;
  const read = readOptions(given as Record<string, unknown>, declaration.keys as readonly string[], name);
  // checked under the option's name, so that a bad value is named "earlyStopping.patience"
  const checked = parseOptions(v.object({ [name]: declaration.schema }), { [name]: read })[name] as EarlyStopping;
  return (declaration as typeof separationOptions).trust(checked as Required<SeparationOptions>);
}

/** Early stopping as an option of a declaration (defineOptions): resolved by resolveEarlyStopping, named as the option. */
export const earlyStoppingOption = (name = 'earlyStopping') => v.pipe(v.unknown(), v.transform((x) => resolveEarlyStopping(x as EarlyStoppingOptions, name)));

/**
 * The rows held out and the rows trained on: floor(share x nRows) rows drawn
 * by a permutation seeded with `seed` (so a client holds out the same rows in
 * every round). Undefined when that leaves no row on either side: a client
 * of fewer than 1 / share rows trains on all of them, without early stopping.
 */
export function heldOutSplit(nRows: number, share: number, seed: number): { train: Int32Array; held: Int32Array } | undefined {
  const nHeld = Math.floor(nRows * share);
  if (nHeld < 1 || nRows - nHeld < 1) return undefined;
  const rng = new Rng(seed);
  try {
    const order = rng.permutation(nRows);
    return { held: order.slice(0, nHeld), train: order.slice(nHeld) };
  } finally {
    rng.dispose();
  }
}

/**
 * How far apart an anomaly detector's reconstruction errors put the rows it
 * would call outliers: the mean error of the largest `contamination` share of
 * the rows (at least one) over the mean error of the others; 1 when all are
 * alike. NaN for fewer than two rows.
 */
export function errorSeparation(errors: ArrayLike<number>, contamination: number): number {
  const n = errors.length;
  const k = Math.max(1, Math.round(contamination * n));
  if (n - k < 1) return NaN;
  const sorted = Float64Array.from(errors).sort();
  let rest = 0;
  let top = 0;
  for (let i = 0; i < n - k; i++) rest += sorted[i]!;
  for (let i = n - k; i < n; i++) top += sorted[i]!;
  return top / k / (rest / (n - k));
}

/**
 * Tracks a score epoch by epoch (lower is better): the best score, the epoch
 * it came from and that epoch's parameters. Given a start (a FedAvg client:
 * the global parameters and their score), an epoch is kept only if it
 * improves on it; without one (training from random initial parameters) the
 * first epoch is the first best.
 */
export class EarlyStopper {
  private since = 0;
  private bestLoss: number;
  private bestParameters: Float32Array | undefined;
  private epoch = 0;
  private bestAt = 0;

  constructor(readonly patience: number, start?: { loss: number; parameters: Float32Array }) {
    this.bestLoss = start?.loss ?? Infinity;
    this.bestParameters = start?.parameters;
  }

  /** Records one more epoch's score (its parameters read only if it is the best); returns whether to train on. */
  observe(loss: number, parameters: () => Float32Array): boolean {
    this.epoch += 1;
    // a score that is not a number never improves (NaN < x is false), unless nothing is kept yet
    if (loss < this.bestLoss || this.bestParameters === undefined) {
      this.bestLoss = loss;
      this.bestParameters = parameters();
      this.bestAt = this.epoch;
      this.since = 0;
    } else {
      this.since += 1;
    }
    return this.since < this.patience;
  }

  /** The parameters of the best epoch (the starting ones when no epoch improved on them; none before an epoch without a start). */
  get parameters(): Float32Array | undefined {
    return this.bestParameters;
  }

  /** The best score. */
  get loss(): number {
    return this.bestLoss;
  }

  /** Epochs observed. */
  get epochs(): number {
    return this.epoch;
  }

  /** The epoch whose parameters are kept (0: the starting ones). */
  get bestEpoch(): number {
    return this.bestAt;
  }
}
