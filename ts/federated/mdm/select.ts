/**
 * Choosing K by validation log-likelihood (Appendix A.1): fit every candidate
 * K (independent federated runs, which could run in parallel), score each on a
 * cohort of clients none of the runs has seen, and keep the smallest K whose
 * mean validation log-likelihood is within `tolerance` of the best (the
 * paper's "in the case of (approximate) ties choose the smallest K"). The
 * scores are themselves sums the clients send through the aggregator, released
 * exactly: with `privacy` that needs `exactValidation: true`.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidParameterError } from '../../errors.js';
import type { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { histogramRows } from '../../models/dirichlet-multinomial-mixture.js';
import { Rng } from '../../random.js';
import type { Message } from '../messages/envelope.js';
import type { ExcludedClient, RoundContext, ServerRole } from '../runtime/roles.js';
import { runFederationSync, type Traffic } from '../runtime/run.js';
import { InProcessTransport } from '../transport/in-process.js';
import { oneCallPolicy } from '../simulation.js';
import { MdmAggregator, MIN_EXACT_CLIENTS } from './aggregator.js';
import { AGGREGATE, EVALUATE, MDM_PROTOCOL, paramsOf, readAggregate, type MdmParams } from './messages.js';
import { fitMdm, histogramClients, type MdmFitOptions, type MdmFitResult } from './run.js';
import { selectMdmOptions } from './options.js';

/**
 * The validation round as a server role: every candidate is broadcast at
 * once, and the aggregator sums each client's log-likelihood under each
 * (exactly: log-likelihoods have no bounded sensitivity).
 */
class MdmEvaluation implements ServerRole<true, { logLikelihood: Float64Array; counted: number }> {
  readonly protocol = MDM_PROTOCOL;
  private scores: { logLikelihood: Float64Array; counted: number } | undefined;

  constructor(
    private readonly models: MdmParams[],
    private readonly aggregator: MdmAggregator,
    private readonly shape: { k: number; c: number; nMax: number },
  ) {}

  get done(): boolean {
    return this.scores !== undefined;
  }

  get detailedReasons(): boolean {
    return this.aggregator.detailedReasons;
  }

  configure(ctx: RoundContext): Map<string, Message> {
    const request = EVALUATE.create('server', ctx.round, { models: this.models });
    this.aggregator.begin(request);
    return new Map(ctx.clients.map((id) => [id, request]));
  }

  accept(reply: Message): true {
    this.aggregator.add(reply);
    return true;
  }

  aggregate(): void {
    const agg = readAggregate(AGGREGATE.read(this.aggregator.release()).payload, 'validation aggregate', 'evaluation', this.shape, this.models.length);
    this.scores = { logLikelihood: agg.sums.logLikelihood!, counted: agg.sums.counted![0]! };
  }

  result(): { logLikelihood: Float64Array; counted: number } {
    return this.scores!;
  }
}

export interface SelectMdmOptions extends Omit<MdmFitOptions, 'nComponents' | 'init' | 'onRound' | 'hooks'> {
  /** candidate K values (default 1..6, as Appendix A.2) */
  kValues?: number[];
  /** candidates as an inclusive range, instead of kValues */
  kRange?: [number, number];
  /** clients held out to score the candidates (default: 20% of them, at most 1000) */
  validationCohort?: number;
  /** the validation cohort's histograms, when it is given apart (then every client of `histograms` fits, none is held out) */
  validation?: MatrixLike;
  /** keep the smallest K within this many nats (mean per client) of the best score (default 0.01) */
  tolerance?: number;
  /** called after each candidate's fit */
  onCandidate?: (k: number, fit: MdmFitResult) => void;
  /**
   * With `privacy`: accept that the validation round releases exact (noise-free)
   * sums of the validation clients' log-likelihoods, which the privacy
   * guarantee does not cover (a log-likelihood has no bounded sensitivity).
   * Without it, selectMdm refuses privacy.
   */
  exactValidation?: boolean;
}

export interface MdmCandidate {
  k: number;
  /** mean ln q(c, n) over the scored validation clients */
  meanLogLikelihood: number;
  fit: MdmFitResult;
}

export interface SelectMdmResult {
  /** the chosen K and its model */
  k: number;
  model: DirichletMultinomialMixture;
  candidates: MdmCandidate[];
  /** clients held out for validation */
  validationClients: number;
  /** of them, the clients every candidate gives a positive probability (the scores are means over these) */
  scoredClients: number;
  /** every run's traffic and the validation round's, added */
  traffic: Traffic;
  /** validation clients whose scores could not be used */
  excluded: ExcludedClient[];
}

function addTraffic(a: Traffic, b: Traffic): void {
  a.rounds += b.rounds;
  a.bytesUp += b.bytesUp;
  a.bytesDown += b.bytesDown;
  a.messagesUp += b.messagesUp;
  a.messagesDown += b.messagesDown;
}

/**
 * Fits every candidate K on the clients outside a random validation cohort and
 * keeps the smallest K whose validation score is within `tolerance` of the best.
 *
 * ```ts
 * const { k, model, candidates } = selectMdm(histograms, { kRange: [1, 6], rounds: 100, cohort: 1000, seed: 0 });
 * ```
 */
export function selectMdm(histograms: MatrixLike, selectOptions: SelectMdmOptions = {}): SelectMdmResult {
  if (selectOptions === null || typeof selectOptions !== 'object') throw new InvalidParameterError('options must be an object');
  // read once and checked (its own options; the fits' are fitMdm's to check)
  const resolved = selectMdmOptions.check(selectOptions);
  const ks = resolved.candidates;
  const options = resolved as unknown as SelectMdmOptions;
  // the validation round's policy is the fits' (checked before anything runs)
  const policy = oneCallPolicy(options.onInvalidClient, options.maxExcludedShare);
  const tolerance = resolved.tolerance;
  const given = options.validation === undefined ? undefined : Matrix.from(options.validation);
  const h0 = Matrix.from(histograms);
  if (h0.nRows === 0) throw new InvalidDataError('no histograms: give one row of counts per client');
  if (given && given.nCols !== h0.nCols) throw new InvalidDataError(`the validation histograms have ${given.nCols} categories but the clients' have ${h0.nCols}`);
  // the validation clients (given) come after the fitting ones
  const h = given ? Matrix.vstack([h0, given]) : h0;
  if (given && options.sizes !== undefined) throw new InvalidParameterError('sizes cannot be given with separate validation histograms');
  const { sizes } = histogramRows(h, undefined, options.sizes);
  const m = h.nRows;
  const v = given ? given.nRows : (options.validationCohort ?? Math.min(1000, Math.max(1, Math.round(0.2 * m))));
  const kMax = ks[ks.length - 1]!;
  if (v < 1) throw new InvalidDataError('the validation cohort is empty; give at least one validation client');
  if (options.privacy && v < MIN_EXACT_CLIENTS) {
    throw new InvalidParameterError(`with privacy, the validation scores are released only as sums of at least ${MIN_EXACT_CLIENTS} clients; the validation cohort has ${v}`);
  }
  if (m - v < kMax) {
    throw new InvalidDataError(`${m} clients leave ${m - v} for fitting after a validation cohort of ${v}; K = ${kMax} needs at least ${kMax}. Use fewer candidates or a smaller validation cohort`);
  }
  let largest = 0;
  for (const n of sizes) if (n > largest) largest = n;
  const maxCount = options.maxCount ?? largest;
  const rng = new Rng(options.seed);
  let validation: ReturnType<typeof histogramClients>['clients'] = [];
  let aggregator: MdmAggregator | undefined;
  try {
    const order = given ? Int32Array.from({ length: m }, (_, i) => (i + m - v) % m) : rng.permutation(m);
    const heldOut = Array.from(order.subarray(0, v)).sort((a, b) => a - b);
    const training = Array.from(order.subarray(v)).sort((a, b) => a - b);
    const pick = (rows: number[]) => h.selectRows(rows);
    const trainSizes = options.sizes ? training.map((i) => sizes[i]!) : undefined;
    const runs: MdmCandidate[] = [];
    const traffic: Traffic = { rounds: 0, bytesUp: 0, bytesDown: 0, messagesUp: 0, messagesDown: 0 };
    for (const k of ks) {
      const seed = Math.floor(rng.uniform(1)[0]! * 2 ** 32);
      const { kValues: _a, kRange: _b, validationCohort: _c, tolerance: _d, validation: _e, exactValidation: _f, candidates: _g, onCandidate, ...fitOptions } = resolved;
      const fit = fitMdm(pick(training), { ...(fitOptions as MdmFitOptions), sizes: trainSizes, maxCount, nComponents: k, seed });
      addTraffic(traffic, fit.traffic);
      onCandidate?.(k, fit);
      runs.push({ k, meanLogLikelihood: NaN, fit });
    }
    // the validation round: every candidate broadcast at once, scores summed by the aggregator
    validation = histogramClients(pick(heldOut), { maxCount, sizes: options.sizes ? heldOut.map((i) => sizes[i]!) : undefined, idPrefix: 'validation' }, rng).clients;
    // exact sums (accepted with exactValidation); under privacy never of fewer than minExactClients, and the reasons carry no client's values
    aggregator = options.privacy
      ? new MdmAggregator({ noiseMultiplier: options.privacy.noiseMultiplier, exactEvaluation: true, seed: options.noiseSeed })
      : new MdmAggregator();
    const evaluation = new MdmEvaluation(
      runs.map((r) => paramsOf(r.fit.model)),
      aggregator,
      { k: 1, c: h.nCols, nMax: maxCount },
    );
    // a round in which no client counts is still a round: its scores say so below
    const run = runFederationSync(evaluation, new InProcessTransport(validation, { encoding: options.encoding }), { ...policy, minReplies: 0 });
    addTraffic(traffic, run.traffic);
    const scored = run.model.counted;
    if (scored === 0) {
      throw new InvalidDataError(
        `no validation client could be scored by every candidate (each gives some client's size probability 0, or clients were excluded: ${run.excluded.map((e) => e.reason).join('; ') || 'none'}); use a larger validation cohort or more training clients`,
      );
    }
    runs.forEach((r, i) => (r.meanLogLikelihood = run.model.logLikelihood[i]! / scored));
    const best = Math.max(...runs.map((r) => r.meanLogLikelihood));
    const chosen = runs.find((r) => r.meanLogLikelihood >= best - tolerance)!;
    return { k: chosen.k, model: chosen.fit.model, candidates: runs, validationClients: v, scoredClients: scored, traffic, excluded: run.excluded };
  } finally {
    rng.dispose();
    aggregator?.dispose();
    for (const c of validation) c.dispose();
  }
}
