/**
 * The messages of distributed EM, declared once, and what their receivers
 * check beyond the declarations. Shapes are checked here; what the statistics
 * mean (counts within the rows claimed, no negative variance) is checked by
 * the core (fm_dem_check_stats, fm_dem_check_summary), which knows them.
 *
 *   down 'dem/model'          { model, summaryShift? }    a round's model; the shift to clients whose summary is due
 *   up   'dem/stats'          { rows, logLikelihood, nk, s1, s2, summary? }
 *   down 'dem/kfed-request'   { localClusters, covarianceType, seed }
 *   up   'dem/kfed-local'     { rows, features, centers, nk, s1, s2 }
 *   down 'dem/count-request'  {}
 *   up   'dem/count'          { rows, features }
 *   down 'dem/subset-request' { count, seed }
 *   up   'dem/subset-rows'    { count, values }          count x d values, row-major
 *
 * Statistics are about a shift (the broadcast model's means for 'dem/stats',
 * each local cluster's center for 'dem/kfed-local'): nk (k,), s1 (k, d), and
 * s2 of s2Length values (full: each component's upper triangle, row by row;
 * diag and spherical: (k, d); tied: none). See crates/fedmix-core/src/gmm/stats.rs.
 */
import { InvalidMessageError, restated } from '../../errors.js';
import { COV_CODE, COVARIANCE_TYPES, type CovarianceType, type GaussianMixture } from '../../models/gaussian-mixture.js';
import { DEM_CHECK_LOG_LIKELIHOOD_OPTIONS, DEM_CHECK_STATS_OPTIONS } from '../../wasm/abi.generated.js';
import { withScope, type Scope } from '../../wasm/memory.js';
import type { FeatureRange } from '../feature-range.js';
import { GMM_PARAMS, receiveGmmParams } from '../gmm-params.js';
import { lengthIs } from '../messages/checks.js';
import { defineMessage, f64Array, finiteNumber, oneOf, optional, record, wholeNumber, type PayloadOf } from '../messages/schema.js';
import { defineProtocol } from '../runtime/roles.js';
import { sumLayout, type AdditiveField } from '../secure-aggregation/layout.js';
import type { Message } from '../messages/envelope.js';

/** Largest count of anything a DEM message may declare (rows asked for, local clusters): bounds what one message makes its receiver allocate. */
const MAX_COUNT = 2 ** 31 - 1;

export const DEM_MODEL = defineMessage('dem/model', record({ model: GMM_PARAMS, summaryShift: optional(f64Array()) }));
export const DEM_STATS = defineMessage(
  'dem/stats',
  record({
    rows: wholeNumber(0),
    logLikelihood: finiteNumber(),
    nk: f64Array(),
    s1: f64Array(),
    s2: f64Array(),
    summary: optional(record({ absMax: f64Array(), sum: optional(f64Array()), scatter: optional(f64Array()) })),
  }),
);
export const DEM_KFED_REQUEST = defineMessage('dem/kfed-request', record({ localClusters: wholeNumber(1, MAX_COUNT), covarianceType: oneOf(COVARIANCE_TYPES), seed: wholeNumber(0) }));
export const DEM_KFED_LOCAL = defineMessage(
  'dem/kfed-local',
  record({ rows: wholeNumber(0), features: wholeNumber(0), centers: f64Array(), nk: f64Array(), s1: f64Array(), s2: f64Array() }),
);
export const DEM_COUNT_REQUEST = defineMessage('dem/count-request', record({}));
export const DEM_COUNT = defineMessage('dem/count', record({ rows: wholeNumber(0), features: wholeNumber(0) }));
export const DEM_SUBSET_REQUEST = defineMessage('dem/subset-request', record({ count: wholeNumber(0, MAX_COUNT), seed: wholeNumber(0) }));
export const DEM_SUBSET_ROWS = defineMessage('dem/subset-rows', record({ count: wholeNumber(0), values: f64Array() }));

/**
 * 'dem/stats' under secure aggregation: rows, logLikelihood, nk, s1, s2 are
 * sums over the clients' rows; with a summary asked for, its absMax (each
 * feature's largest magnitude: a maximum, not a sum) travels summed, an upper
 * bound of the pooled maximum (what the server's variance floor needs), and
 * a tied summary's sum and scatter are sums. k-FED's local clusters and the
 * subset's rows are not sums: those rounds cannot run secure.
 */
function statsFields(request: Message): AdditiveField[] {
  const { model, summaryShift } = request.payload as ModelBroadcast;
  const { covarianceType: t, nComponents: k, nFeatures: d } = model;
  const fields: AdditiveField[] = [
    { name: 'rows', length: 1 },
    { name: 'logLikelihood', length: 1 },
    { name: 'nk', length: k },
    { name: 's1', length: k * d },
    { name: 's2', length: s2Length(t, k, d) },
  ];
  if (summaryShift !== undefined) {
    fields.push({ name: 'summary.absMax', length: d });
    if (t === 'tied') fields.push({ name: 'summary.sum', length: d }, { name: 'summary.scatter', length: packedLength(d) });
  }
  return fields;
}

const statsSum = sumLayout(DEM_STATS, statsFields, { integers: ['rows'], scalars: ['logLikelihood'] });

/** The summed statistics, their quantization error kept where a check needs exactness: counts >= 0 summing to the rows, magnitudes and variances >= 0. */
const STATS_LAYOUT = {
  ...statsSum,
  build(sum: Float64Array, request: Message, users: number) {
    const p = statsSum.build(sum, request, users) as StatsReply;
    const t = (request.payload as ModelBroadcast).model.covarianceType;
    let total = 0;
    for (let c = 0; c < p.nk.length; c++) total += (p.nk[c] = Math.max(0, p.nk[c]!));
    if (total > 0) for (let c = 0; c < p.nk.length; c++) p.nk[c] = (p.nk[c]! * p.rows) / total;
    if (t === 'diag' || t === 'spherical') for (let i = 0; i < p.s2.length; i++) p.s2[i] = Math.max(0, p.s2[i]!);
    if (p.summary) for (let j = 0; j < p.summary.absMax.length; j++) p.summary.absMax[j] = Math.max(0, p.summary.absMax[j]!);
    return p;
  },
};

export const DEM_PROTOCOL = defineProtocol(
  'distributed EM',
  [
    [DEM_MODEL, DEM_STATS],
    [DEM_KFED_REQUEST, DEM_KFED_LOCAL],
    [DEM_COUNT_REQUEST, DEM_COUNT],
    [DEM_SUBSET_REQUEST, DEM_SUBSET_ROWS],
  ],
  { layouts: [STATS_LAYOUT] },
);

export const DEM_KINDS = {
  model: DEM_MODEL.kind,
  stats: DEM_STATS.kind,
  kfedRequest: DEM_KFED_REQUEST.kind,
  kfedLocal: DEM_KFED_LOCAL.kind,
  countRequest: DEM_COUNT_REQUEST.kind,
  count: DEM_COUNT.kind,
  subsetRequest: DEM_SUBSET_REQUEST.kind,
  subsetRows: DEM_SUBSET_ROWS.kind,
} as const;

export type ModelBroadcast = PayloadOf<typeof DEM_MODEL>;
export type StatsReply = PayloadOf<typeof DEM_STATS>;
export type DataSummaryPayload = NonNullable<StatsReply['summary']>;
export type KfedRequest = PayloadOf<typeof DEM_KFED_REQUEST>;
export type KfedLocalReply = PayloadOf<typeof DEM_KFED_LOCAL>;
export type CountReply = PayloadOf<typeof DEM_COUNT>;
export type SubsetRequest = PayloadOf<typeof DEM_SUBSET_REQUEST>;
export type SubsetReply = PayloadOf<typeof DEM_SUBSET_ROWS>;

/** Values of s2 for k components of d features (see the module comment). */
export function s2Length(t: CovarianceType, k: number, d: number): number {
  switch (t) {
    case 'full':
      return k * packedLength(d);
    case 'diag':
    case 'spherical':
      return k * d;
    case 'tied':
      return 0;
  }
}

/** Values in the upper triangle of a d x d matrix. */
export function packedLength(d: number): number {
  return (d * (d + 1)) / 2;
}

/** The statistics a k-FED client gathers for a model of type t: tied pools full ones. */
export function kfedLocalType(t: CovarianceType): CovarianceType {
  return t === 'tied' ? 'full' : t;
}

/** A row count a client reports: at least one (a client without rows has nothing to contribute). */
function readRows(rows: number): number {
  if (rows === 0) throw new InvalidMessageError('reports 0 rows; a client needs at least one row');
  return rows;
}

/** A client's feature count, which must be the federation's. */
function readFeatures(features: number, d: number): void {
  if (features !== d) throw new InvalidMessageError(`its rows have ${features} features; this federation has ${d}`);
}

/** Runs a core check; its verdict becomes an InvalidMessageError. */
function coreCheck(call: (s: Scope) => number): void {
  try {
    withScope((s) => s.check(call(s)));
  } catch (e) {
    throw restated(e, (x) => new InvalidMessageError(x.message));
  }
}

export type ReceivedStats = StatsReply & { summary?: DataSummaryPayload };

/**
 * Checks 'dem/stats' for a model of type t with k components of d features,
 * for an M-step with ridge regCovar (what the core's check tolerates is
 * bounded by it: SuffStats::check_client); `summaryShift` is given when a
 * summary is due; `quantization` is a secure round's bound on each summed
 * value's error (RoundContext.quantization; 0, a plain reply, is judged exactly).
 */
export function checkStats(q: StatsReply, t: CovarianceType, k: number, d: number, regCovar: number, summaryShift?: Float64Array, quantization = 0): ReceivedStats {
  const rows = readRows(q.rows);
  lengthIs('nk', q.nk, k);
  lengthIs('s1', q.s1, k * d);
  lengthIs('s2', q.s2, s2Length(t, k, d));
  coreCheck((s) => s.w.fm_dem_check_stats(s.struct(DEM_CHECK_STATS_OPTIONS, { covType: COV_CODE[t], k, d, rows, minCount: 0, regCovar, quantization }), 0, s.f64From(q.nk), s.f64From(q.s1), s.f64From(q.s2)));
  if (summaryShift) {
    if (q.summary === undefined) throw new InvalidMessageError("the first statistics must carry a summary of the client's rows");
    const m = q.summary;
    const tied = t === 'tied';
    lengthIs('summary.absMax', m.absMax, d);
    if (tied) {
      if (m.sum === undefined || m.scatter === undefined) throw new InvalidMessageError('a tied summary needs sum and scatter');
      lengthIs('summary.sum', m.sum, d);
      lengthIs('summary.scatter', m.scatter, packedLength(d));
    } else if (m.sum !== undefined || m.scatter !== undefined) {
      throw new InvalidMessageError('sum and scatter belong to tied summaries only');
    }
    coreCheck((s) => s.w.fm_dem_check_summary(d, tied ? 1 : 0, rows, s.f64From(summaryShift), s.f64From(m.absMax), s.f64Optional(m.sum)[0], s.f64Optional(m.scatter)[0]));
  } else if (q.summary !== undefined) {
    throw new InvalidMessageError('sends a summary that was not asked for');
  }
  return q;
}

/**
 * Checks the log-likelihood in a client's statistics under the broadcast
 * model: between Q and Q + n ln K, Q the expected complete-data log-likelihood
 * its statistics imply (dem::check_log_likelihood in the core); tied
 * statistics need the client's summary.
 */
export function checkLogLikelihood(model: GaussianMixture, q: ReceivedStats, summaryShift: Float64Array | undefined, summary: DataSummaryPayload | undefined): void {
  if (model.covarianceType === 'tied' && (summary === undefined || summaryShift === undefined)) throw new InvalidMessageError("tied statistics come with the client's summary");
  coreCheck((s) =>
    s.w.fm_dem_check_log_likelihood(
      model.handle, s.struct(DEM_CHECK_LOG_LIKELIHOOD_OPTIONS, { rows: q.rows, loglik: q.logLikelihood }), s.f64From(q.nk), s.f64From(q.s1), s.f64From(q.s2),
      s.f64Optional(summaryShift)[0], s.f64Optional(summary?.absMax)[0], s.f64Optional(summary?.sum)[0], s.f64Optional(summary?.scatter)[0],
    ),
  );
}

/**
 * Statistics about shifts (k x d: the broadcast means, or k-FED's local
 * centers) within what rows in the declared feature range can give: each
 * component's mean of its rows, shift + s1 / nk, inside the range, and each
 * feature's second moment about the shift, s2 / nk, at most the farther end's
 * squared distance from it. Tied statistics carry no second moments.
 *
 * Honest statistics meet these bounds up to the rounding of their sums, which
 * the slack covers: relative (rows - 1) eps of each sum (any order), and for a
 * component the rows barely touch (responsibilities near or below the smallest
 * normal number, 2.2e-308, whose products round to an absolute 2^-1075 each)
 * that absolute error over rows terms, divided by its tiny count.
 */
export function checkStatsInRange(range: FeatureRange, t: CovarianceType, k: number, d: number, shifts: ArrayLike<number>, q: { rows: number; nk: ArrayLike<number>; s1: ArrayLike<number>; s2: ArrayLike<number> }): void {
  const packed = packedLength(d);
  const gamma = (q.rows + 2) * Number.EPSILON;
  const underflow = q.rows * 2 ** -1074;
  for (let c = 0; c < k; c++) {
    const n = q.nk[c]!;
    if (!(n > 0)) continue;
    for (let j = 0; j < d; j++) {
      const shift = shifts[c * d + j]!;
      // how far any row can be from the shift: what each term of the sums is at most
      const far = range.farthest(j, shift);
      range.inside(`the mean of component ${c}'s rows, feature ${j},`, j, shift + q.s1[c * d + j]! / n, 2 * gamma * far + (underflow * (2 * far + 1)) / n);
      // the diagonal of the second moments: full keeps each component's packed upper triangle, row by row
      const s2 = t === 'full' ? q.s2[c * packed + j * d - (j * (j - 1)) / 2] : t === 'tied' ? undefined : q.s2[c * d + j];
      if (s2 !== undefined) range.secondMoment(`the second moment of component ${c}'s rows, feature ${j},`, j, shift, s2 / n, 3 * gamma * far * far + (underflow * 2 * (far * far + far + 1)) / n);
    }
  }
}

export interface ReceivedKfedLocal extends KfedLocalReply {
  k: number;
}

/** Checks 'dem/kfed-local': 1 to kMax local clusters of d features, statistics of type kfedLocalType(t), for a model with ridge regCovar. */
export function checkKfedLocal(q: KfedLocalReply, t: CovarianceType, kMax: number, d: number, regCovar: number): ReceivedKfedLocal {
  const rows = readRows(q.rows);
  readFeatures(q.features, d);
  const k = q.nk.length;
  if (k < 1 || k > kMax) throw new InvalidMessageError(`sends ${k} local clusters; expected 1 to ${kMax}`);
  const lt = kfedLocalType(t);
  lengthIs('centers', q.centers, k * d);
  lengthIs('s1', q.s1, k * d);
  lengthIs('s2', q.s2, s2Length(lt, k, d));
  // a k-means cluster holds at least one row
  coreCheck((s) => s.w.fm_dem_check_stats(s.struct(DEM_CHECK_STATS_OPTIONS, { covType: COV_CODE[lt], k, d, rows, minCount: 1, regCovar, quantization: 0 }), s.f64From(q.centers), s.f64From(q.nk), s.f64From(q.s1), s.f64From(q.s2)));
  return { ...q, k };
}

export function checkCount(q: CountReply, d: number): number {
  const rows = readRows(q.rows);
  readFeatures(q.features, d);
  return rows;
}

/** Checks 'dem/subset-rows': exactly the `count` rows asked for, d values each. */
export function checkSubsetRows(q: SubsetReply, count: number, d: number): Float64Array {
  if (q.count !== count) throw new InvalidMessageError(`sends ${q.count} rows; ${count} were asked for`);
  lengthIs('values', q.values, count * d);
  return q.values;
}

// What clients check in the server's messages.

/** A broadcast's shape against the client's rows: its features, and its shift's length. */
export function checkBroadcastShape(q: ModelBroadcast, nFeatures: number): void {
  if (q.model.nFeatures !== nFeatures) {
    throw new InvalidMessageError(`the model has ${q.model.nFeatures} features but the client's rows have ${nFeatures}`);
  }
  if (q.summaryShift !== undefined) lengthIs('summaryShift', q.summaryShift, nFeatures);
}

/** The model of a 'dem/model' broadcast (the caller disposes it) and the summary shift, if any. */
export function readModelBroadcast(q: ModelBroadcast, nFeatures: number): { model: GaussianMixture; summaryShift?: Float64Array } {
  checkBroadcastShape(q, nFeatures);
  return { model: receiveGmmParams(q.model, 'the server', nFeatures), summaryShift: q.summaryShift };
}
