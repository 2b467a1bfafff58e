/**
 * FedDistr's messages, declared once. One round and a notification:
 *
 *   server -> client  DESCRIBE      the encoder (identity, a PCA's mean and
 *                                   components, or an Autoencoder's network
 *                                   and code layer, fitted on public data), the
 *                                   covariance form, how to split each task
 *                                   label into base distributions (k-means or
 *                                   a Gaussian mixture, k in a range chosen by
 *                                   BIC or silhouette), how to estimate a
 *                                   covariance (shrinkage, and a ridge
 *                                   relative to the client's variances) and
 *                                   a seed
 *   client -> server  DISTRIBUTIONS its task labels with their row counts, its
 *                                   total, and per base distribution its task
 *                                   label, row count, mean and covariance in
 *                                   the encoder's space
 *   server -> client  CONSOLIDATED  the consolidated base distributions (no reply)
 */
import { MAX_LAYERS, NETWORK_FIELDS } from '../messages/network.js';
import { InvalidMessageError } from '../../errors.js';
import { LIMITS } from '../../validate.js';
import type { Message } from '../messages/envelope.js';
import { defineMessage, f32Array, f64Array, finiteNumber, listOf, oneOf, optional, record, wholeNumber, type PayloadOf } from '../messages/schema.js';
import { defineProtocol } from '../runtime/roles.js';
import { SHRINKAGES } from './covariance.js';
import { isPositiveDefinite, type CovarianceKind } from '../../distributions/gaussian.js';

/** Most rows a client may claim (counts weigh the consolidation). */
export const MAX_SAMPLES = 2 ** 48;
/** Most base distributions one client may upload, and most task labels it may declare. */
export const MAX_BASES = 4096;
export const MAX_TASKS = 65536;
/** Widest latent space on the wire (a full covariance is d^2 values). */
export const MAX_DIMENSION = 1024;
const LABEL_MAX = 2 ** 31 - 1;

const network = record({
  ...NETWORK_FIELDS,
  parameters: f32Array(),
  // the layer whose outputs are the code (1 = the first hidden layer)
  codeLayer: wholeNumber(1, MAX_LAYERS),
});

const encoder = record({
  kind: oneOf(['identity', 'pca', 'autoencoder'] as const),
  // the latent dimension (identity: the rows' own)
  dimension: wholeNumber(1, MAX_DIMENSION),
  // PCA: the per-feature mean of the public data
  mean: optional(f64Array()),
  // PCA: (dimension, features) row-major
  components: optional(f64Array()),
  // autoencoder: the network fitted on public data and the layer read as the code
  network: optional(network),
});

export const DESCRIBE = defineMessage(
  'feddistr/describe',
  record({
    encoder,
    covariance: oneOf(['full', 'diagonal'] as const),
    clustering: oneOf(['kmeans', 'gmm'] as const),
    criterion: oneOf(['bic', 'silhouette'] as const),
    kMin: wholeNumber(1, LIMITS.components),
    kMax: wholeNumber(1, LIMITS.components),
    shrinkage: oneOf(SHRINKAGES),
    // times the client's average variance, added to every covariance's diagonal (> 0: the client refuses otherwise)
    regCovar: finiteNumber(),
    // every seed a caller may give (the clients' models take it as two 32-bit halves)
    seed: wholeNumber(0),
  }),
);

const base = record({
  label: wholeNumber(-LABEL_MAX, LABEL_MAX),
  count: wholeNumber(1, MAX_SAMPLES),
  mean: f64Array(),
  covariance: f64Array(),
});

export const DISTRIBUTIONS = defineMessage(
  'feddistr/distributions',
  record({
    // the task labels this client holds, and its row count of each
    labels: listOf(record({ label: wholeNumber(-LABEL_MAX, LABEL_MAX), count: wholeNumber(1, MAX_SAMPLES) }), MAX_TASKS),
    nSamples: wholeNumber(1, MAX_SAMPLES),
    bases: listOf(base, MAX_BASES),
  }),
);

export const CONSOLIDATED = defineMessage(
  'feddistr/consolidated',
  record({
    bases: listOf(record({ label: wholeNumber(-LABEL_MAX, LABEL_MAX), count: wholeNumber(1, MAX_SAMPLES), weight: finiteNumber(), mean: f64Array(), covariance: f64Array() }), MAX_BASES * 64),
  }),
);

export const FEDDISTR_PROTOCOL = defineProtocol('FedDistr', [
  [DESCRIBE, DISTRIBUTIONS],
  [CONSOLIDATED, null],
]);

export type DescribePayload = PayloadOf<typeof DESCRIBE>;
export type DistributionsPayload = PayloadOf<typeof DISTRIBUTIONS>;
export type ConsolidatedPayload = PayloadOf<typeof CONSOLIDATED>;

/** One uploaded base distribution as the server keeps it. */
export interface BaseDistribution {
  client: string;
  /** its index in the client's upload */
  index: number;
  label: number;
  count: number;
  mean: Float64Array;
  covariance: Float64Array;
}

/** A client's upload, checked. */
export interface ReceivedDistributions {
  client: string;
  nSamples: number;
  bases: BaseDistribution[];
}

function refuse(check: string, reason: string): never {
  throw new InvalidMessageError(reason, check);
}

/**
 * A DISTRIBUTIONS reply checked against what DESCRIBE asked: every mean of the
 * encoder's dimension, every covariance of the asked form, symmetric and
 * positive definite, every base's label among those declared, the bases'
 * counts adding up to each declared label's count and the labels' to the total.
 * NaN cannot pass the schema (f64Array takes finite values only).
 */
export function receiveDistributions(m: Message, dimension: number, kind: CovarianceKind): ReceivedDistributions {
  const p = m.payload as DistributionsPayload;
  const declared = new Map<number, number>();
  let total = 0;
  for (const { label, count } of p.labels) {
    if (declared.has(label)) refuse('labels', `task label ${label} is declared twice`);
    declared.set(label, count);
    total += count;
  }
  if (total !== p.nSamples) refuse('counts', `the declared labels' counts add up to ${total}, not to nSamples = ${p.nSamples}`);
  const perLabel = new Map<number, number>();
  const size = kind === 'diagonal' ? dimension : dimension * dimension;
  const bases = p.bases.map((b, i): BaseDistribution => {
    if (!declared.has(b.label)) refuse('labels', `base distribution ${i} has task label ${b.label}, which the client did not declare`);
    if (b.mean.length !== dimension) refuse('dimension', `base distribution ${i}'s mean has ${b.mean.length} values; the encoder's dimension is ${dimension}`);
    if (b.covariance.length !== size) refuse('dimension', `base distribution ${i}'s ${kind} covariance has ${b.covariance.length} values; ${size} were expected for dimension ${dimension}`);
    if (!isPositiveDefinite(b.covariance, dimension, kind)) refuse('covariance', `base distribution ${i}'s covariance is not symmetric positive definite`);
    perLabel.set(b.label, (perLabel.get(b.label) ?? 0) + b.count);
    return { client: m.from, index: i, label: b.label, count: b.count, mean: b.mean, covariance: b.covariance };
  });
  for (const [label, count] of declared) {
    const got = perLabel.get(label) ?? 0;
    if (got !== count) refuse('counts', `task label ${label} is declared with ${count} rows but its base distributions count ${got}`);
  }
  return { client: m.from, nSamples: p.nSamples, bases };
}
