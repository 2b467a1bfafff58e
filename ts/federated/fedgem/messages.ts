/**
 * FedGEM's messages, declared once, and their checks on receipt.
 *
 *   server -> client  SPREAD       when the variance is estimated, first: report
 *                                  the spread of the rows around local clusters
 *   client -> server  SPREAD_SUMS  within-cluster sum of squares and its degrees
 *                                  of freedom (additive: the server sums them)
 *   server -> client  ROUND        each round: the client's updated centers (none
 *                                  in the first round) and the federation's
 *                                  variance (when the server has one); take L
 *                                  steps and upload
 *   client -> server  BALLS        maximizers, radii, counts, |D_c|
 *   server -> client  FINISH       the last round's centers; upload the final ones
 *   client -> server  FINAL        centers, counts, |D_c|
 *   server -> client  CANDIDATES   when phi is tuned: the global centers for each phi
 *   client -> server  SILHOUETTES  its validation silhouette under each candidate
 *   server -> client  RESULT       phi, the estimated K, the global centers and
 *                                  the client's memberships (no reply)
 */
import { InvalidMessageError } from '../../errors.js';
import { lengthIs } from '../messages/checks.js';
import type { Message } from '../messages/envelope.js';
import { defineMessage, f64Array, finiteNumber, i32Array, listOf, nullable, optional, record, wholeNumber, type PayloadOf } from '../messages/schema.js';
import { defineProtocol } from '../runtime/roles.js';

/** Most components one client may upload (the server's work and memory grow with them). */
export const MAX_COMPONENTS = 4096;
/** Most rows a client may claim (beyond any real client): counts weigh the merge, so one claim cannot swamp it. */
export const MAX_SAMPLES = 2 ** 48;
/** Most validation rows a client may claim: they weigh the silhouettes, their squares the standard error (kept finite). */
export const MAX_VALIDATION = 2 ** 40;
/** Most phi candidates one tuning round may carry. */
export const MAX_CANDIDATES = 256;
/**
 * Most variance per degree of freedom a SPREAD_SUMS reply may claim
 * (sumSquares / dof): squared distances of 1e100 are beyond any data, and sums
 * of such claims over any number of clients stay finite.
 */
export const MAX_SPREAD = 1e100;
/**
 * Largest feature magnitude a client accepts (it refuses other data when it
 * is created, saying so): its within-cluster sum of squares per degree of
 * freedom is then at most 2 (2 MAX_FEATURE)^2 = 8e98 (every squared
 * deviation is at most (2 MAX_FEATURE)^2 per feature, and dof = (n - K_c) d
 * >= n d / 2), below MAX_SPREAD: an honest spread is never refused.
 */
export const MAX_FEATURE = 1e49;

const components = {
  nComponents: wholeNumber(1),
  nFeatures: wholeNumber(1),
  counts: f64Array(),
  nSamples: wholeNumber(1),
};

export const SPREAD = defineMessage('fedgem/spread', record({}));
export const SPREAD_SUMS = defineMessage('fedgem/spread-sums', record({ sumSquares: finiteNumber(), dof: wholeNumber(1) }));
/** What ROUND and FINISH carry: the client's centers after the last update, and sigma^2 for a client without its own. */
const centersAndVariance = { centers: optional(f64Array()), variance: optional(finiteNumber()) };
export const ROUND = defineMessage('fedgem/round', record(centersAndVariance));
export const BALLS = defineMessage('fedgem/balls', record({ ...components, maximizers: f64Array(), radii: f64Array() }));
export const FINISH = defineMessage('fedgem/finish', record(centersAndVariance));
export const FINAL = defineMessage('fedgem/final', record({ ...components, centers: f64Array() }));
export const CANDIDATES = defineMessage(
  'fedgem/candidates',
  record({ candidates: listOf(record({ phi: finiteNumber(), estimatedK: wholeNumber(1), centers: f64Array() }), MAX_CANDIDATES) }),
);
export const SILHOUETTES = defineMessage('fedgem/silhouettes', record({ values: listOf(nullable(finiteNumber()), MAX_CANDIDATES), nValidation: wholeNumber(0) }));
export const RESULT = defineMessage('fedgem/result', record({ phi: finiteNumber(), estimatedK: wholeNumber(1), globalCenters: f64Array(), memberships: i32Array() }));

export const FEDGEM_PROTOCOL = defineProtocol(
  'FedGEM',
  [
    [SPREAD, SPREAD_SUMS],
    [ROUND, BALLS],
    [FINISH, FINAL],
    [CANDIDATES, SILHOUETTES],
    [RESULT, null],
  ],
  { additive: [SPREAD_SUMS] },
);

export type SpreadSumsPayload = PayloadOf<typeof SPREAD_SUMS>;
export type CentersPayload = PayloadOf<typeof ROUND>;
export type BallsPayload = PayloadOf<typeof BALLS>;
export type FinalPayload = PayloadOf<typeof FINAL>;
export type CandidatesPayload = PayloadOf<typeof CANDIDATES>;
export type SilhouettesPayload = PayloadOf<typeof SILHOUETTES>;
export type ResultPayload = PayloadOf<typeof RESULT>;

/** A client's components as the server keeps them. */
export interface ReceivedComponents {
  client: string;
  k: number;
  centers: Float64Array;
  radii?: Float64Array;
  counts: Float64Array;
  nSamples: number;
}

/**
 * The shared checks of BALLS and FINAL: the dimension of the federation, at
 * least two rows per component (a component fitted to one row has no spread
 * to estimate), counts that add up to the rows, distinct centers. Why an
 * honest FedGEMClient never trips one (test/fedgem-real.test.ts runs real
 * partitions at the defaults and counts no exclusion):
 * - nComponents <= MAX_COMPONENTS and nSamples >= 2 nComponents: the client
 *   refuses other options and data when it is created;
 * - nFeatures: every client of a federation holds the federation's features
 *   (fedGEM takes the dimension most clients have);
 * - nSamples <= 2^48: no client holds that many rows in memory;
 * - counts >= 0, summing to the rows within 1e-6: they are sums of
 *   responsibilities, each row's adding to 1 up to rounding (1e-15);
 * - distinct centers: the client's starting means are distinct rows
 *   (k-means++ seeds; the client refuses fewer distinct rows than
 *   components and repeated meansInit rows), and two components with
 *   different means get different responsibilities, hence different
 *   maximizers (equal only by an accident of measure zero); the noise of
 *   the privacy option is continuous;
 * - finite values (the runtime's reading): the rows are finite and at most
 *   MAX_FEATURE in magnitude, and centers are weighted means of them.
 */
function checkComponents(p: FinalPayload | BallsPayload, centers: Float64Array, centersField: string, nFeatures: number): { k: number; counts: Float64Array; nSamples: number } {
  const k = p.nComponents;
  if (k > MAX_COMPONENTS) throw new InvalidMessageError(`nComponents is ${k}; a client may upload at most ${MAX_COMPONENTS} components`);
  const d = p.nFeatures;
  if (d !== nFeatures) throw new InvalidMessageError(`its centers have ${d} features but this federation has ${nFeatures}`);
  const n = p.nSamples;
  if (n > MAX_SAMPLES) throw new InvalidMessageError(`nSamples is ${n}; at most 2^48 rows per client are accepted`);
  if (n < 2 * k) throw new InvalidMessageError(`${n} rows for ${k} components; a client needs at least two rows per component`);
  lengthIs(centersField, centers, k * d);
  lengthIs('counts', p.counts, k);
  let total = 0;
  p.counts.forEach((c, i) => {
    if (!(c >= 0)) throw new InvalidMessageError(`counts[${i}] is ${c}; counts must be non-negative`);
    total += c;
  });
  if (Math.abs(total - n) > 1e-6 * n) throw new InvalidMessageError(`counts sum to ${total}, not to its ${n} rows`);
  // equal centers: sorted row by row (O(K log K) comparisons), equal rows end up adjacent
  const compare = (a: number, b: number) => {
    for (let j = 0; j < d; j++) {
      const x = centers[a * d + j]!;
      const y = centers[b * d + j]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
  const order = Array.from({ length: k }, (_, i) => i).sort((a, b) => compare(a, b) || a - b);
  for (let i = 1; i < k; i++) {
    const [a, b] = [order[i - 1]!, order[i]!];
    if (compare(a, b) === 0) throw new InvalidMessageError(`components ${a} and ${b} have the same center; a client's components must differ`);
  }
  return { k, counts: p.counts, nSamples: n };
}

/**
 * A BALLS upload, checked; radii must be non-negative (0: that component has
 * stopped moving). An honest radius is a distance between two finite means
 * (the closed form) or a bisection between 0 and such a distance.
 */
export function receiveBalls(m: Message, nFeatures: number): ReceivedComponents {
  const p = m.payload as BallsPayload;
  const c = checkComponents(p, p.maximizers, 'maximizers', nFeatures);
  lengthIs('radii', p.radii, c.k);
  p.radii.forEach((r, i) => {
    if (!(r >= 0)) throw new InvalidMessageError(`radii[${i}] is ${r}; a radius must be non-negative`);
  });
  return { client: m.from, ...c, centers: p.maximizers, radii: p.radii };
}

/** A client's spread as the server keeps it. */
export interface ReceivedSpread {
  client: string;
  sumSquares: number;
  dof: number;
}

/**
 * A SPREAD_SUMS reply, checked: a sum of squares >= 0 and at most MAX_SPREAD
 * per degree of freedom, degrees of freedom a whole multiple of the
 * federation's dimension ((rows - clusters) x d) within the rows a client (or
 * the `users` it stands for) may have. An honest client's are a sum of
 * squares (>= 0, at most 8e98 per degree of freedom: MAX_FEATURE) and
 * (n - K_c) d with 2 K_c <= n <= 2^48: none is ever refused.
 */
export function receiveSpread(m: Message, nFeatures: number): ReceivedSpread {
  const p = m.payload as SpreadSumsPayload;
  const users = m.users ?? 1;
  const most = Math.min(Number.MAX_SAFE_INTEGER, MAX_SAMPLES * nFeatures * users);
  if (p.dof > most) throw new InvalidMessageError(`dof is ${p.dof}; at most ${most} (2^48 rows x ${nFeatures} features${users > 1 ? ` x ${users} users` : ''}) are accepted`, 'dof is out of range');
  if (p.dof % nFeatures !== 0) {
    throw new InvalidMessageError(`dof is ${p.dof}, not a multiple of this federation's ${nFeatures} features: it must be (rows - clusters) x features`, 'dof does not fit the dimension');
  }
  if (!(p.sumSquares >= 0)) throw new InvalidMessageError(`sumSquares is ${p.sumSquares}; a sum of squares must be non-negative`, 'sumSquares is negative');
  if (p.sumSquares > MAX_SPREAD * p.dof) {
    throw new InvalidMessageError(`sumSquares is ${p.sumSquares}: ${p.sumSquares / p.dof} per degree of freedom, more than the ${MAX_SPREAD} accepted`, 'sumSquares is out of range');
  }
  return { client: m.from, sumSquares: p.sumSquares, dof: p.dof };
}

export function receiveFinal(m: Message, nFeatures: number): ReceivedComponents {
  const p = m.payload as FinalPayload;
  return { client: m.from, ...checkComponents(p, p.centers, 'centers', nFeatures), centers: p.centers };
}

/**
 * A SILHOUETTES reply, checked: one value per candidate, each a silhouette in
 * [-1, 1] or null, and at most MAX_VALIDATION rows. An honest client's values
 * are means of (b - a) / max(a, b), each in [-1, 1] in floating point too.
 */
export function receiveSilhouettes(m: Message, candidates: number): { values: (number | null)[]; nValidation: number } {
  const p = m.payload as SilhouettesPayload;
  if (p.values.length !== candidates) throw new InvalidMessageError(`values must hold one silhouette per candidate (${candidates})`);
  p.values.forEach((s, i) => {
    if (s !== null && !(s >= -1 && s <= 1)) throw new InvalidMessageError(`values[${i}] is ${s}; a silhouette is a number in [-1, 1] or null`);
  });
  if (p.nValidation > MAX_VALIDATION) throw new InvalidMessageError(`nValidation is ${p.nValidation}; at most 2^40 validation rows are accepted`);
  return { values: p.values, nValidation: p.nValidation };
}

/** Centers from the server, as a client checks them: `rows` of `d` features. */
export function receiveCenters(centers: Float64Array, rows: number, d: number): Float64Array {
  lengthIs('centers', centers, rows * d);
  return centers;
}
