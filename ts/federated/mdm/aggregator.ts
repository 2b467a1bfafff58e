/**
 * The secure aggregator between MDM clients and the server: it checks each
 * client's contribution against the request it answers, adds the accepted
 * ones (FieldSums) and hands the server one 'mdm/aggregate' message: the sums
 * and how many clients they hold. With a noise multiplier it adds Gaussian
 * noise of standard deviation noiseMultiplier x sensitivity to every entry of
 * the sums (central differential privacy; see `sensitivity` in messages.ts),
 * from a generator no public seed predicts. A noising aggregator keeps its
 * guarantee whatever the requests ask: it releases no log-likelihoods in
 * Algorithm 2's rounds, and answers evaluation requests (K selection's
 * validation scores, exact sums: a log-likelihood has no bounded
 * sensitivity) only when constructed with exactEvaluation, and then never
 * over fewer than minExactClients clients. With noise, the reason a client is
 * refused names the failed check alone, never the client's values (the
 * server's detailedReasons).
 *
 * A round: begin(request) with the request every client of the round got,
 * add(reply) for each reply (a refusal adds nothing), release().
 *
 * A reply may stand for a group of users (MdmUserGroup: the envelope's
 * `users`); it counts as that many clients (the aggregate's `clients`,
 * minExactClients) once its statistics bear the count out. The noise is
 * unchanged: calibrated to one user's sensitivity (each user in a group is
 * clipped on its own) and added once to the round's sums.
 */
import { FederationError, formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { Rng } from '../../random.js';
import { readRequest } from '../runtime/roles.js';
import { aggregatorOptions, type MdmAggregatorOptions, type ResolvedMdmAggregatorOptions } from './options.js';
import { FieldSums } from '../aggregate.js';
import { checkEnvelope, usersOf, type Message } from '../messages/envelope.js';
import { wasRead } from '../messages/schema.js';
import {
  AGGREGATE,
  checkShape,
  logLikelihoodFloor,
  MDM_KINDS,
  MDM_PROTOCOL,
  readEvaluate,
  readEvaluation,
  readInitStats,
  readModelBroadcast,
  readStats,
  sensitivity,
  StatsBounds,
  sumShape,
  type AggregateOf,
  type EvaluateRequest,
  type EvaluationReply,
  type InitRequest,
  type InitStatsReply,
  type ModelBroadcast,
  type StatsReply,
} from './messages.js';

export { MIN_EXACT_CLIENTS, type MdmAggregatorOptions } from './options.js';

interface Round {
  of: AggregateOf;
  /** the kind of the request, and of the reply it expects */
  request: string;
  reply: string;
  round: number;
  /** each summed field's length */
  fields: Record<string, number>;
  /** one reply's payload checked as the sum of `users` users' contributions */
  /** `quantization`: the per-entry error a secure sum carries (0 for a client's own reply) */
  read: (payload: unknown, users: number, quantization: number) => Record<string, ArrayLike<number>>;
  sensitivity: number;
  sum: FieldSums;
}

export class MdmAggregator {
  readonly noiseMultiplier: number;
  readonly detailedReasons: boolean;
  readonly exactEvaluation: boolean;
  readonly minExactClients: number;
  /** the noise's generator (with noise only) */
  private readonly rng: Rng | undefined;
  private current: Round | undefined;

  /** Options checked here (aggregatorOptions), unless they are what its check returned. */
  constructor(given: MdmAggregatorOptions | ResolvedMdmAggregatorOptions = {}) {
    const options = aggregatorOptions.check(given);
    this.noiseMultiplier = options.noiseMultiplier;
    this.detailedReasons = options.detailedReasons ?? this.noiseMultiplier === 0;
    this.exactEvaluation = options.exactEvaluation;
    this.minExactClients = options.minExactClients;
    this.rng = this.noiseMultiplier > 0 ? (options.seed === undefined ? Rng.unpredictable() : new Rng(options.seed)) : undefined;
  }

  /** Starts a round whose clients were all sent `request`: what their answers must look like. */
  begin(message: Message): void {
    // read as the protocol declares it: a request handed over in process may be anything
    const e = wasRead(message) ? message : checkEnvelope(message);
    if (e.kind !== MDM_KINDS.initRequest && e.kind !== MDM_KINDS.model && e.kind !== MDM_KINDS.evaluate) {
      throw new InvalidParameterError(`the MDM aggregator does not sum answers to ${e.kind.slice(0, 80)}`);
    }
    const request = readRequest(MDM_PROTOCOL, e);
    let r: Omit<Round, 'sum' | 'round' | 'request'>;
    switch (request.kind) {
      case MDM_KINDS.initRequest: {
        const shape = checkShape(request.payload as InitRequest);
        r = { of: 'init', reply: MDM_KINDS.initStats, fields: sumShape('init', shape), read: (p, users, q) => readInitStats(p as InitStatsReply, shape, users, q), sensitivity: sensitivity('init', 0) };
        break;
      }
      case MDM_KINDS.model: {
        const { model, clip, logLikelihood } = readModelBroadcast(request.payload as ModelBroadcast);
        const shape = { k: model.nComponents, c: model.nCategories, nMax: model.maxCount };
        if (this.noiseMultiplier > 0 && clip === undefined) {
          throw new InvalidParameterError('the aggregator adds noise but the broadcast has no clip bound: give the server the same privacy options');
        }
        // whatever the broadcast asks for: noise calibrated to (u, v) does not cover log-likelihoods
        if (this.noiseMultiplier > 0 && logLikelihood) {
          throw new FederationError("the aggregator adds noise and does not release the clients' log-likelihoods, which have no bounded sensitivity; the broadcast asks for them");
        }
        // the last broadcast model's bounds again when it is the same model (StatsBounds.of)
        const bounds = StatsBounds.of(model);
        r = {
          of: 'round',
          reply: MDM_KINDS.stats,
          fields: sumShape('round', shape, 0, logLikelihood),
          read: (p, users, q) => readStats(p as StatsReply, shape, clip, logLikelihood, bounds, users, q),
          sensitivity: sensitivity('round', clip ?? 0),
        };
        break;
      }
      case MDM_KINDS.evaluate: {
        if (this.noiseMultiplier > 0 && !this.exactEvaluation) {
          throw new FederationError(
            "the aggregator adds noise and does not answer evaluation requests: their exact sums of log-likelihoods are not covered by the privacy guarantee (construct it with exactEvaluation: true to accept that)",
          );
        }
        const models = readEvaluate(request.payload as EvaluateRequest);
        const m = models[0]!;
        const floors = models.map(logLikelihoodFloor);
        r = {
          of: 'evaluation',
          reply: MDM_KINDS.evaluation,
          fields: sumShape('evaluation', { k: m.nComponents, c: m.nCategories, nMax: m.maxCount }, models.length),
          read: (p, users, q) => readEvaluation(p as EvaluationReply, floors, users, q),
          sensitivity: 0,
        };
        break;
      }
      default:
        throw new InvalidParameterError(`the MDM aggregator does not sum answers to ${request.kind}`);
    }
    this.current = { ...r, request: request.kind, round: request.round, sum: new FieldSums(r.fields) };
  }

  /**
   * Checks one client's reply (already of the right kind, sender and round)
   * against the round's request and adds it; an InvalidMessageError otherwise,
   * and nothing is added. `quantization`: for the sum of a secure round
   * (RoundContext.quantization), the error each entry may carry; the checks
   * of identities exact sums satisfy allow it.
   */
  add(message: Message, quantization = 0): void {
    if (!(typeof quantization === 'number' && quantization >= 0 && Number.isFinite(quantization))) throw new InvalidParameterError(`quantization must be a finite number >= 0, got ${formatValue(quantization)}`);
    const r = this.current;
    if (!r) throw new InvalidParameterError('no round has begun; call begin(request) first');
    // the kind first: a reply of another kind is named as such, not by what its payload lacks
    const e = wasRead(message) ? message : checkEnvelope(message);
    if (e.kind !== r.reply) throw new InvalidMessageError(`expected a ${r.reply} message, got ${e.kind.slice(0, 80)}`);
    // the envelope and the declared payload, as the runtime reads a reply (free when it has)
    const reply = MDM_PROTOCOL.exchanges.get(r.request)!.reply!.read(e);
    // a group's reply counts as its users, checked against its statistics (never taken on trust)
    const users = usersOf(reply);
    r.sum.add(r.read(reply.payload, users, quantization), users);
  }

  /** The round's 'mdm/aggregate' message: the sums (with noise when private) and how many clients they hold. */
  release(): Message<typeof AGGREGATE.kind> {
    const r = this.current;
    if (!r) throw new InvalidParameterError('no round has begun; call begin(request) first');
    this.current = undefined;
    const stddev = r.of === 'evaluation' ? 0 : this.noiseMultiplier * r.sensitivity;
    // nothing to protect (or to learn) in an empty round: its sums go out as zeros
    const sums = r.sum.release(stddev > 0 && r.sum.count > 0 ? { stddev, rng: this.rng! } : undefined);
    if (this.noiseMultiplier > 0 && stddev === 0 && r.sum.count > 0) {
      // an exact release under privacy: never of a few clients, and the scores sum only the clients every candidate counts
      const held = Math.min(r.sum.count, sums.counted?.[0] ?? r.sum.count);
      if (held < this.minExactClients) {
        throw new FederationError(`the aggregator releases exact sums of at least ${this.minExactClients} clients under privacy; this one would hold ${held}`);
      }
    }
    return AGGREGATE.create('aggregator', r.round, { of: r.of, clients: r.sum.count, noiseStddev: stddev, sums });
  }

  /** Frees the noise generator. */
  dispose(): void {
    if (this.rng && !this.rng.disposed) this.rng.dispose();
  }
}
