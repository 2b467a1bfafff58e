/**
 * The client side of a secure round: a client host hands the stage requests
 * here (secure-aggregation/... kinds), and the client's role answers the
 * round's real request at the masking stage, never in clear: its reply is
 * flattened by the protocol's layout, quantized and masked before it leaves.
 * One secure round at a time (the last advertisement wins; a stage request of
 * another run or round is refused).
 */
import { formatValue, InvalidMessageError } from '../../errors.js';
import { SecureAggregationClient, type AdvertisedKeys, type SecureAggregationTesting } from '../../privacy/secure-aggregation/protocol.js';
import { fixedPoint } from '../../privacy/secure-aggregation/fixed-point.js';
import { checkEnvelope, type Message } from '../messages/envelope.js';
import type { ClientRole } from '../runtime/roles.js';
import { layoutLength, type AdditiveLayout } from './layout.js';
import { checkDeclaredNoise } from './noise.js';
import { ADVERTISE, CONSISTENCY, KEYS, listed, MASK, MASKED, SHARE, SHARES, SIGNATURE, UNMASK, UNMASKED } from './messages.js';

/**
 * Tests only (not exported from the package): the randomness of each client's
 * secure rounds, by client id, so that a test can rerun a federation and
 * compare its clients' messages byte for byte. Unset, every draw is
 * crypto.getRandomValues.
 */
export const secureAggregationTesting: { randomOf?: (client: string) => SecureAggregationTesting['random'] } = {};

interface Current {
  run: string | undefined;
  round: number;
  client: SecureAggregationClient;
  /** the round's real request, read against the role's protocol */
  request: Message;
  layout: AdditiveLayout;
}

export class SecureParticipant {
  private current: Current | undefined;

  constructor(
    private readonly role: ClientRole,
    private readonly id: string,
    /** called with the real request before the role answers it (the client's privacy ledger: it may refuse, by throwing) */
    private readonly beforeAnswer?: (request: Message) => Promise<void>,
  ) {}

  /** The answer to a stage request (envelope checked); a FedmixError is the caller's to turn into a refusal. */
  async answer(m: Message): Promise<Message> {
    const self = this.id;
    switch (m.kind) {
      case ADVERTISE.kind: {
        const q = ADVERTISE.read(m);
        const p = q.payload;
        if (!p.clients.includes(self)) throw new InvalidMessageError(`the secure round's clients do not include ${self}`);
        const request = this.readRequest(p.request);
        const layout = this.role.protocol.layouts?.get(this.role.protocol.exchanges.get(request.kind)?.reply?.kind ?? '');
        if (!layout) throw new InvalidMessageError(`a ${this.role.protocol.name} client cannot answer ${request.kind} under secure aggregation: its reply is not additive`);
        const length = layoutLength(layout.fields(request));
        if (length !== p.length) throw new InvalidMessageError(`the secure round declares ${p.length} values, but the reply to ${request.kind} lays out as ${length}`);
        if (!(p.clip > 0)) throw new InvalidMessageError(`the secure round's clip must be positive, got ${formatValue(p.clip)}`);
        if (p.threshold > p.neighbours || p.neighbours > p.clients.length - 1) throw new InvalidMessageError(`the secure round's threshold ${p.threshold} and neighbours ${p.neighbours} do not fit ${p.clients.length} clients`);
        // distributed DP: the step the request declares (what the ledgers compose) must be what the shares asked for give
        checkDeclaredNoise(request, { clip: p.clip, threshold: p.threshold, length, ...(p.noise ? { noise: p.noise } : {}) });
        const client = await SecureAggregationClient.create(self, {
          run: q.run ?? '', round: q.round, clients: p.clients, neighbours: p.neighbours, threshold: p.threshold,
          graphSeed: p.graphSeed, curve: p.curve, length, signature: p.signature,
          // a noised round's fixed point is the calibration's (a smaller power-of-two scale, its headroom checked by the protocol)
          fixedPoint: p.noise ? { clip: p.clip, contributors: p.clients.length, scale: p.noise.scale } : fixedPoint(p.clip, p.clients.length),
          ...(p.noise ? { noise: { skellamMu: p.noise.skellamMu } } : {}),
        }, secureAggregationTesting.randomOf ? { random: secureAggregationTesting.randomOf(self) } : undefined);
        this.current = { run: q.run, round: q.round, client, request, layout };
        const keys = client.advertise();
        return KEYS.create(self, q.round, { cPk: keys.cPk, sPk: keys.sPk, vk: keys.vk! });
      }
      case SHARE.kind: {
        const q = SHARE.read(m);
        const c = this.stageOf(q);
        const keys = new Map<string, AdvertisedKeys>(q.payload.keys.map((k) => [k.id, { cPk: k.cPk, sPk: k.sPk, vk: k.vk }]));
        const { shares, commitment } = await c.client.shareKeys(keys);
        return SHARES.create(self, q.round, { shares: listed('to', shares), commitment });
      }
      case MASK.kind: {
        const q = MASK.read(m);
        const c = this.stageOf(q);
        const received = new Map(q.payload.shares.map((s) => [s.from, s.share]));
        // the real request is answered here, and its reply leaves only masked
        await this.beforeAnswer?.(c.request);
        const given = await this.role.respond(c.request);
        this.role.requestDone?.(c.request);
        if (given === undefined) throw new InvalidMessageError(`${c.request.kind} has no reply to mask`);
        const reply = c.layout.reply.read(given);
        const { masked, refused } = await c.client.maskedInput(received, c.layout.flatten(reply, c.request));
        return MASKED.create(self, q.round, { masked, refused }, reply.users);
      }
      case CONSISTENCY.kind: {
        const q = CONSISTENCY.read(m);
        const c = this.stageOf(q);
        return SIGNATURE.create(self, q.round, { signature: await c.client.signSurvivors(q.payload.survivors) });
      }
      case UNMASK.kind: {
        const q = UNMASK.read(m);
        const c = this.stageOf(q);
        // the consistency check: t neighbours' signatures of the set it signed, or no shares at all
        await c.client.acceptSignatures(new Map(q.payload.signatures.map((s) => [s.of, s.signature])));
        const shares = c.client.unmask(q.payload.survivors, q.payload.dropped);
        this.current = undefined;
        return UNMASKED.create(self, q.round, { shares: listed('of', shares) });
      }
      default:
        throw new InvalidMessageError(`a client does not answer ${m.kind.slice(0, 80)} messages`);
    }
  }

  /** The secure round a stage request continues (the one advertised, same run and round). */
  private stageOf(q: Message): Current {
    const c = this.current;
    if (!c || c.round !== q.round || c.run !== q.run) throw new InvalidMessageError(`a ${q.kind} request for round ${q.round} without its advertisement`);
    return c;
  }

  /** The real request carried by the advertisement, read against the role's protocol. */
  private readRequest(given: unknown): Message {
    const e = checkEnvelope(given);
    const exchange = this.role.protocol.exchanges.get(e.kind);
    if (!exchange?.reply) throw new InvalidMessageError(`a ${this.role.protocol.name} client does not answer ${e.kind.slice(0, 80)} requests`);
    return exchange.request.read(e);
  }
}
