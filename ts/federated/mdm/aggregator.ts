/**
 * The secure aggregator between MDM clients and the server: it checks each
 * client's contribution against the request it answers, adds the accepted
 * ones (SecureSum) and hands the server one 'mdm/aggregate' message: the sums,
 * how many clients they hold, and which clients were refused and why. With a
 * noise multiplier it adds Gaussian noise of standard deviation
 * noiseMultiplier x sensitivity to every entry of the sums (central
 * differential privacy; see `sensitivity` in messages.ts). Validation rounds
 * of K selection are released exactly (their log-likelihoods have no bounded
 * sensitivity). With noise, an exclusion reason names the failed check alone,
 * never the client's values.
 */
import { FedmixError, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { Rng } from '../../random.js';
import { requireNumber } from '../../validate.js';
import { SecureSum } from '../aggregate.js';
import { decodeMessage, message, type Message } from '../message.js';
import type { ClientReply, ExcludedClient } from '../transport.js';
import {
  logLikelihoodFloor,
  MDM_KINDS,
  readEvaluate,
  readEvaluation,
  readInitRequest,
  readInitStats,
  readModelBroadcast,
  readStats,
  sensitivity,
  StatsBounds,
  sumShape,
  type AggregateOf,
  type AggregatePayload,
  type Shape,
} from './messages.js';

/** A client's answer as the aggregator receives it: wire text, or why there is none. */
export type MdmReply = ClientReply;

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

/** Starts a message text with the client's id, once. */
export function named(id: string, reason: string): string {
  return reason.startsWith(`${id}:`) || reason.startsWith(`${id} `) ? reason : `${id}: ${reason}`;
}

interface Expected {
  of: AggregateOf;
  reply: string;
  shape: Shape;
  models: number;
  read: (payload: unknown, who: string) => Record<string, ArrayLike<number>>;
  sensitivity: number;
  /** the round's clients add their log-likelihoods */
  logLikelihood: boolean;
}

export class MdmAggregator {
  readonly noiseMultiplier: number;
  readonly detailedReasons: boolean;
  private readonly rng: Rng;

  constructor(options: MdmAggregatorOptions = {}) {
    this.noiseMultiplier = requireNumber('noiseMultiplier', options.noiseMultiplier ?? 0, 0);
    if (options.detailedReasons !== undefined && typeof options.detailedReasons !== 'boolean') throw new InvalidParameterError('detailedReasons must be true or false');
    this.detailedReasons = options.detailedReasons ?? this.noiseMultiplier === 0;
    this.rng = new Rng(options.seed);
  }

  /** What answers to `request` look like. */
  private expect(request: Message): Expected {
    const who = 'aggregator';
    switch (request.kind) {
      case MDM_KINDS.initRequest: {
        const shape = readInitRequest(request.payload, who);
        return { of: 'init', reply: MDM_KINDS.initStats, shape, models: 0, read: (p, w) => readInitStats(p, w, shape), sensitivity: sensitivity('init', 0), logLikelihood: false };
      }
      case MDM_KINDS.model: {
        const { model, clip, logLikelihood } = readModelBroadcast(request.payload, who);
        const shape = { k: model.nComponents, c: model.nCategories, nMax: model.maxCount };
        if (this.noiseMultiplier > 0 && clip === undefined) {
          throw new InvalidParameterError('the aggregator adds noise but the broadcast has no clip bound: give the server the same privacy options');
        }
        const bounds = new StatsBounds(model);
        return {
          of: 'round',
          reply: MDM_KINDS.stats,
          shape,
          models: 0,
          read: (p, w) => readStats(p, w, shape, clip, logLikelihood, bounds),
          sensitivity: sensitivity('round', clip ?? 0),
          logLikelihood,
        };
      }
      case MDM_KINDS.evaluate: {
        const models = readEvaluate(request.payload, who);
        const m = models[0]!;
        const floors = models.map(logLikelihoodFloor);
        return {
          of: 'evaluation',
          reply: MDM_KINDS.evaluation,
          shape: { k: m.nComponents, c: m.nCategories, nMax: m.maxCount },
          models: models.length,
          read: (p, w) => readEvaluation(p, w, floors),
          sensitivity: 0,
          logLikelihood: false,
        };
      }
      default:
        throw new InvalidParameterError(`the MDM aggregator does not sum answers to ${request.kind}`);
    }
  }

  /**
   * Checks every reply against the request sent to its client (envelope, sender,
   * round, content), sums the accepted ones and returns the server's
   * 'mdm/aggregate' message. A client that did not answer or whose answer fails
   * is listed in `excluded` and adds nothing.
   */
  aggregate(requests: ReadonlyMap<string, Message>, replies: readonly MdmReply[]): Message<typeof MDM_KINDS.aggregate, AggregatePayload> {
    const first = requests.values().next().value as Message | undefined;
    if (!first) throw new InvalidParameterError('a round without requests has nothing to aggregate');
    const exp = this.expect(first);
    const sum = new SecureSum(sumShape(exp.of, exp.shape, exp.models, exp.logLikelihood));
    const excluded: ExcludedClient[] = [];
    const byId = new Map(replies.map((r) => [r.from, r]));
    for (const [id, sent] of requests) {
      const reply = byId.get(id);
      // what the reason says without the client's values (see detailedReasons)
      let stage = `did not answer round ${sent.round}`;
      try {
        if (sent.kind !== first.kind) throw new InvalidParameterError(`requests of one round must be of one kind; got ${first.kind} and ${sent.kind}`);
        if (!reply) throw new InvalidMessageError(`${id}: did not answer round ${sent.round}`);
        stage = 'reported an error instead of answering';
        if ('error' in reply) throw new InvalidMessageError(named(id, reply.error));
        stage = 'its reply is not a valid message';
        const m = decodeMessage(reply.text, exp.reply);
        if (m.from !== id) throw new InvalidMessageError(`${id}: its reply claims to come from ${JSON.stringify(m.from)}`);
        if (m.round !== sent.round) throw new InvalidMessageError(`${id}: its reply is for round ${m.round}, not ${sent.round}`);
        stage = 'its contribution failed a check';
        sum.add(exp.read(m.payload, id));
      } catch (e) {
        if (!(e instanceof FedmixError) || e.code === 'WASM' || e.code === 'INVALID_PARAMETER') throw e;
        const check = e instanceof InvalidMessageError ? e.check : undefined;
        excluded.push({ client: id, round: sent.round, reason: named(id, this.detailedReasons ? e.message : check ?? stage) });
      }
    }
    const stddev = exp.of === 'evaluation' ? 0 : this.noiseMultiplier * exp.sensitivity;
    // nothing to protect (or to learn) in an empty round: its sums go out as zeros
    const sums = sum.release(stddev > 0 && sum.count > 0 ? { stddev, rng: this.rng } : undefined);
    return message(MDM_KINDS.aggregate, 'aggregator', first.round, { of: exp.of, clients: sum.count, noiseStddev: stddev, sums, excluded });
  }

  /** Frees the noise generator. */
  dispose(): void {
    if (!this.rng.disposed) this.rng.dispose();
  }
}
