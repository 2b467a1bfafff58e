/**
 * The secure aggregator between MDM clients and the server: it checks each
 * client's contribution against the request it answers, adds the accepted
 * ones (SecureSum) and hands the server one 'mdm/aggregate' message: the sums
 * and how many clients they hold. With a noise multiplier it adds Gaussian
 * noise of standard deviation noiseMultiplier x sensitivity to every entry of
 * the sums (central differential privacy; see `sensitivity` in messages.ts).
 * Validation rounds of K selection are released exactly (their
 * log-likelihoods have no bounded sensitivity). With noise, the reason a
 * client is refused names the failed check alone, never the client's values
 * (the server's detailedReasons).
 *
 * A round: begin(request) with the request every client of the round got,
 * add(reply) for each reply (a refusal adds nothing), release().
 */
import { InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { Rng } from '../../random.js';
import { readOptions, requireNumber } from '../../validate.js';
import { readReply, readRequest } from '../runtime/roles.js';
import { SecureSum } from '../aggregate.js';
import { checkEnvelope, type Message } from '../messages/envelope.js';
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

export interface MdmAggregatorOptions {
  /** Gaussian noise of this many sensitivities on every summed entry (default 0: exact sums) */
  noiseMultiplier?: number;
  /** seed of the noise */
  seed?: number;
  /**
   * Exclusion reasons with the client's values (which check failed and by how
   * much). Default: only without noise; with noise a reason names the failed
   * check alone, and a client's own error text is not passed on.
   */
  detailedReasons?: boolean;
}

interface Round {
  of: AggregateOf;
  reply: string;
  round: number;
  /** each summed field's length */
  fields: Record<string, number>;
  read: (payload: unknown) => Record<string, ArrayLike<number>>;
  sensitivity: number;
  sum: SecureSum;
}

export class MdmAggregator {
  readonly noiseMultiplier: number;
  readonly detailedReasons: boolean;
  private readonly rng: Rng;
  private current: Round | undefined;

  constructor(given: MdmAggregatorOptions = {}) {
    const options = readOptions(given, ['noiseMultiplier', 'detailedReasons', 'seed']);
    this.noiseMultiplier = requireNumber('noiseMultiplier', options.noiseMultiplier ?? 0, 0);
    if (options.detailedReasons !== undefined && typeof options.detailedReasons !== 'boolean') throw new InvalidParameterError('detailedReasons must be true or false');
    this.detailedReasons = options.detailedReasons ?? this.noiseMultiplier === 0;
    this.rng = new Rng(options.seed);
  }

  /** Starts a round whose clients were all sent `request`: what their answers must look like. */
  begin(message: Message): void {
    // read as the protocol declares it: a request handed over in process may be anything
    const e = wasRead(message) ? message : checkEnvelope(message);
    if (e.kind !== MDM_KINDS.initRequest && e.kind !== MDM_KINDS.model && e.kind !== MDM_KINDS.evaluate) {
      throw new InvalidParameterError(`the MDM aggregator does not sum answers to ${e.kind.slice(0, 80)}`);
    }
    const request = readRequest(MDM_PROTOCOL, e);
    let r: Omit<Round, 'sum' | 'round'>;
    switch (request.kind) {
      case MDM_KINDS.initRequest: {
        const shape = checkShape(request.payload as InitRequest);
        r = { of: 'init', reply: MDM_KINDS.initStats, fields: sumShape('init', shape), read: (p) => readInitStats(p as InitStatsReply, shape), sensitivity: sensitivity('init', 0) };
        break;
      }
      case MDM_KINDS.model: {
        const { model, clip, logLikelihood } = readModelBroadcast(request.payload as ModelBroadcast);
        const shape = { k: model.nComponents, c: model.nCategories, nMax: model.maxCount };
        if (this.noiseMultiplier > 0 && clip === undefined) {
          throw new InvalidParameterError('the aggregator adds noise but the broadcast has no clip bound: give the server the same privacy options');
        }
        const bounds = new StatsBounds(model);
        r = {
          of: 'round',
          reply: MDM_KINDS.stats,
          fields: sumShape('round', shape, 0, logLikelihood),
          read: (p) => readStats(p as StatsReply, shape, clip, logLikelihood, bounds),
          sensitivity: sensitivity('round', clip ?? 0),
        };
        break;
      }
      case MDM_KINDS.evaluate: {
        const models = readEvaluate(request.payload as EvaluateRequest);
        const m = models[0]!;
        const floors = models.map(logLikelihoodFloor);
        r = {
          of: 'evaluation',
          reply: MDM_KINDS.evaluation,
          fields: sumShape('evaluation', { k: m.nComponents, c: m.nCategories, nMax: m.maxCount }, models.length),
          read: (p) => readEvaluation(p as EvaluationReply, floors),
          sensitivity: 0,
        };
        break;
      }
      default:
        throw new InvalidParameterError(`the MDM aggregator does not sum answers to ${request.kind}`);
    }
    this.current = { ...r, round: request.round, sum: new SecureSum(r.fields) };
  }

  /**
   * Checks one client's reply (already of the right kind, sender and round)
   * against the round's request and adds it; an InvalidMessageError otherwise,
   * and nothing is added.
   */
  add(message: Message): void {
    const r = this.current;
    if (!r) throw new InvalidParameterError('no round has begun; call begin(request) first');
    // the kind first: a reply of another kind is named as such, not by what its payload lacks
    const e = wasRead(message) ? message : checkEnvelope(message);
    if (e.kind !== r.reply) throw new InvalidMessageError(`expected a ${r.reply} message, got ${e.kind.slice(0, 80)}`);
    const reply = readReply(MDM_PROTOCOL, e);
    r.sum.add(r.read(reply.payload));
  }

  /** The round's 'mdm/aggregate' message: the sums (with noise when private) and how many clients they hold. */
  release(): Message<typeof AGGREGATE.kind> {
    const r = this.current;
    if (!r) throw new InvalidParameterError('no round has begun; call begin(request) first');
    this.current = undefined;
    const stddev = r.of === 'evaluation' ? 0 : this.noiseMultiplier * r.sensitivity;
    // nothing to protect (or to learn) in an empty round: its sums go out as zeros
    const sums = r.sum.release(stddev > 0 && r.sum.count > 0 ? { stddev, rng: this.rng } : undefined);
    return AGGREGATE.create('aggregator', r.round, { of: r.of, clients: r.sum.count, noiseStddev: stddev, sums });
  }

  /** Frees the noise generator. */
  dispose(): void {
    if (!this.rng.disposed) this.rng.dispose();
  }
}
