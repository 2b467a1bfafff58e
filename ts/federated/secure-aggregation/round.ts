/**
 * The server side of a secure round (SecAgg+, Bell et al. 2020): the round's
 * one request, for a reply kind its protocol lays out as additive, runs as
 * four exchanges (advertise keys, share keys, masked input, unmask) of the
 * same round number, and the server role's accept() then gets ONE reply of
 * that kind: the survivors' replies summed, standing for their users.
 *
 * Each stage's failures go through the run's failure policy as a plain
 * round's would: a client that times out or leaves is dropped from the rest
 * of the round (its mask is removed by the survivors' shares), one whose
 * message fails a check or that refuses is excluded (or, under onInvalid
 * 'fail', ends the run with its error). Fewer than the threshold left at any
 * stage ends the run with a SecureAggregationError, never a wrong sum.
 */
import { FedmixError, InvalidMessageError, InvalidParameterError, SecureAggregationError } from '../../errors.js';
import { SecureAggregationServer, type AdvertisedKeys, type SecureAggregationParams, type SecureAggregationResult } from '../../privacy/secure-aggregation/protocol.js';
import { detectCurve, type Curve } from '../../privacy/secure-aggregation/keys.js';
import { detectSignatureScheme, type SignatureScheme } from '../../privacy/secure-aggregation/signatures.js';
import { fixedPoint } from '../../privacy/secure-aggregation/fixed-point.js';
import { defaultNeighbours, defaultThreshold } from '../../privacy/secure-aggregation/graph.js';
import { encodeMessage } from '../messages/codec.js';
import { withPrivacy, withRun, type Message } from '../messages/envelope.js';
import type { MessageType } from '../messages/schema.js';
import { REFUSAL, refusalReason } from '../runtime/client-host.js';
import type { ResolvedPolicy } from '../runtime/policy.js';
import { usersIn, type Failure, type RoundContext, type ServerRole } from '../runtime/roles.js';
import type { Exchange, ExchangeOptions, Received } from '../transport/transport.js';
import { layoutLength, type AdditiveLayout } from './layout.js';
import { noiseRecord, roundNoise, type RoundNoise, type SecureNoiseRecord } from './noise.js';
import { ADVERTISE, CONSISTENCY, listed, MASK, SECURE_PREFIX, SHARE, STAGES, UNMASK, type StageName } from './messages.js';

/** What a secure round's record says (RoundRecord.secure). */
export interface SecureRoundRecord {
  /** clients asked */
  clients: number;
  neighbours: number;
  threshold: number;
  clip: number;
  /** clients whose inputs are in the sum */
  survivors: number;
  /** clients dropped at each stage (timeouts, dropouts, invalid messages, refusals) */
  dropped: { advertise: number; share: number; mask: number; consistency: number; unmask: number };
  /** clients left out of the sum because a neighbour could not decrypt the shares they sent (excluded from the run) */
  excluded: number;
  /** survivors whose signature of the survivor set did not verify (excluded from the run; their input is in the sum) */
  forged: number;
  /** survivors whose unmasking shares did not fit the others' (ruled out, and excluded from the run; their input is in the sum) */
  ruledOut: number;
  /** the largest error of any entry of the sum from quantization */
  bound: number;
  /** distributed DP: each client's Skellam share and the noise of the released sum (absent: the sum is exact but for quantization) */
  noise?: SecureNoiseRecord;
}

/** What the runtime gives a secure round. */
export interface SecureRoundIO {
  run: string;
  policy: ResolvedPolicy;
  server: ServerRole;
  ctx: RoundContext;
  /** the server's requests (one request, to every client asked) */
  requests: ReadonlyMap<string, Message>;
  layout: AdditiveLayout;
  /** the round's shape and noise (planSecureRound) */
  plan: SecurePlan;
  /** a received message, decoded and envelope-checked (throws a FedmixError when it cannot be read) */
  read(r: Received): Message;
  /** the exchange's traffic into the run's accounting */
  count(ex: Exchange): void;
  /** a client missed the round (a late message of it is stale, not a fault) */
  missed(id: string): void;
  /** whether failure reasons may quote what a client sent */
  detailed: boolean;
}

export type SecureEffect =
  | { op: 'exchange'; round: number; messages: ReadonlyMap<string, Message>; options: ExchangeOptions }
  /** WebCrypto's work (curve detection, the unmasking): the runner awaits it and resumes with its value */
  | { op: 'await'; promise: Promise<unknown> };

export interface SecureOutcome {
  /** the summed reply, of the layout's kind, from `from` */
  reply: Message;
  /** the request every client answered */
  request: Message;
  users: number;
  failures: Failure[];
  record: SecureRoundRecord;
}

/** The layout of a round's replies when the run is under secure aggregation and they can be summed; a typed error when they cannot. */
export function secureLayoutOf(policy: ResolvedPolicy, server: ServerRole, requests: ReadonlyMap<string, Message>, round: number): AdditiveLayout | undefined {
  if (!policy.secureAggregation || requests.size === 0) return undefined;
  const kind = requests.values().next().value!.kind;
  const reply = server.protocol.exchanges.get(kind)?.reply;
  if (!reply) return undefined;
  const layout = server.protocol.layouts?.get(reply.kind);
  if (!layout) {
    throw new SecureAggregationError(`round ${round}: ${server.protocol.name} asks for ${reply.kind} replies, which are not sums; secure aggregation cannot run this round (choose an algorithm or an initialization whose rounds only sum, docs/privacy.md)`);
  }
  const refusal = server.secureAggregationRefusal;
  if (refusal) throw new SecureAggregationError(`round ${round}: ${refusal}`);
  return layout;
}

/** A label for the sum of these survivors (FNV-1a of their ids): the same survivors give the same one, so a server's per-sender checks hold across rounds. */
function sumId(survivors: readonly string[]): string {
  let h = 0xcbf29ce484222325n;
  for (const ch of [...survivors].sort().join('\n')) h = BigInt.asUintN(64, (h ^ BigInt(ch.codePointAt(0)!)) * 0x100000001b3n);
  return `secure-sum-${h.toString(16).padStart(16, '0')}`;
}

function sameRequest(a: Message, b: Message): boolean {
  if (a === b) return true;
  try {
    const x = encodeMessage(a, 'json');
    const y = encodeMessage(b, 'json');
    return x.length === y.length && x.every((v, i) => v === y[i]);
  } catch {
    return false;
  }
}

function random32(): Uint8Array {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (typeof c?.getRandomValues !== 'function') throw new InvalidParameterError('secure aggregation needs crypto.getRandomValues');
  return c.getRandomValues(new Uint8Array(32));
}

/** The round's threshold and neighbours for n clients: as the policy gives them, or the defaults. */
export function secureParameters(policy: NonNullable<ResolvedPolicy['secureAggregation']>, n: number, round: number): { neighbours: number; threshold: number } {
  if (n < 2) throw new SecureAggregationError(`round ${round}: secure aggregation needs at least 2 clients, ${n} asked`);
  const neighbours = Math.min(n - 1, policy.neighbours ?? defaultNeighbours(n));
  const threshold = policy.threshold ?? defaultThreshold(neighbours);
  if (threshold > neighbours) throw new SecureAggregationError(`round ${round}: threshold ${threshold} is more than a client's ${neighbours} neighbours can hold shares for; lower secureAggregation.threshold or raise neighbours`);
  return { neighbours, threshold };
}

/** A secure round's shape, known before it is sent: its one request, the vector's length, the graph, and its distributed noise. */
export interface SecurePlan {
  request: Message;
  length: number;
  neighbours: number;
  threshold: number;
  /** distributed DP (secure-aggregation/noise.ts): the shares asked for and the step they give, which the round declares */
  noise?: RoundNoise;
}

/** The round's shape from the server's requests, checked (one request to every client; the graph fits them), and its noise calibrated. */
export function planSecureRound(policy: ResolvedPolicy, server: ServerRole, requests: ReadonlyMap<string, Message>, layout: AdditiveLayout, round: number): SecurePlan {
  const clients = [...requests.keys()];
  const request = requests.get(clients[0]!)!;
  for (const m of requests.values()) {
    if (!sameRequest(m, request)) throw new SecureAggregationError(`round ${round}: the server sent different requests to its clients; a secure round sums replies to one request`);
  }
  const length = layoutLength(layout.fields(request));
  const { neighbours, threshold } = secureParameters(policy.secureAggregation!, clients.length, round);
  const noise = roundNoise(policy, server, requests, length, clients.length, threshold, round);
  return { request, length, neighbours, threshold, ...(noise ? { noise } : {}) };
}

/**
 * The secure round: four exchanges, then the summed reply. A round that fails
 * for too few clients left names why they left (the round's failures, e.g.
 * refusals for the clients' privacy budgets), as a run that excludes too many
 * does.
 */
export function* secureRound(io: SecureRoundIO): Generator<SecureEffect, SecureOutcome, unknown> {
  const failures: Failure[] = [];
  try {
    return yield* secureStages(io, failures);
  } catch (e) {
    if (!(e instanceof SecureAggregationError) || failures.length === 0) throw e;
    const shown = failures.slice(0, 10).map((f) => f.reason);
    throw new SecureAggregationError(`${e.message}; this round's failures: ${shown.join('; ')}${failures.length > shown.length ? `; and ${failures.length - shown.length} more` : ''}`);
  }
}

function* secureStages(io: SecureRoundIO, failures: Failure[]): Generator<SecureEffect, SecureOutcome, unknown> {
  const { ctx, policy, requests, layout, run, plan } = io;
  const round = ctx.round;
  const secure = policy.secureAggregation!;
  const clients = [...requests.keys()];
  const { request, length, neighbours, threshold, noise } = plan;
  // with distributed noise, the clip bounds a client's L2 norm and the fixed point is the calibration's
  const clip = noise ? noise.clip : secure.clip;
  // the curve this engine's WebCrypto has (X25519, else P-256): the clients follow the one named in the advertisement
  const curve = (yield { op: 'await', promise: detectCurve() }) as Curve;
  // the consistency check's signatures: Ed25519, else ECDSA P-256
  const signature = (yield { op: 'await', promise: detectSignatureScheme() }) as SignatureScheme;
  const params: SecureAggregationParams = {
    run, round, clients, neighbours, threshold, graphSeed: random32(), curve, length, signature,
    fixedPoint: noise ? noise.calibration.fixedPoint : fixedPoint(clip, clients.length),
    ...(noise ? { noise: { skellamMu: noise.calibration.skellamMu } } : {}),
  };
  const sa = new SecureAggregationServer(params);
  const dropped: Record<StageName, number> = { advertise: 0, share: 0, mask: 0, consistency: 0, unmask: 0 };
  const users = new Map<string, number>();
  const options: ExchangeOptions = { replies: true, timeoutMs: policy.roundTimeoutMs };

  /** One stage: send, then each asked client's reply handed to `accept` (or its failure recorded and the client dropped). */
  function* stage(name: StageName, messages: ReadonlyMap<string, Message>, accept: (id: string, m: Message) => void): Generator<SecureEffect, void, unknown> {
    const expected: MessageType = STAGES.find((s) => s.name === name)!.reply;
    const ex = (yield { op: 'exchange', round, messages, options }) as Exchange;
    io.count(ex);
    const fail = (id: string, kind: Failure['kind'], reason: string, error?: FedmixError): void => {
      const excluded = kind === 'invalid' || kind === 'refused';
      if (excluded && policy.onInvalid === 'fail') {
        const E = error ? (error.constructor as new (m: string) => FedmixError) : InvalidMessageError;
        throw new E(`${id}: ${reason}`);
      }
      failures.push({ client: id, round, kind, reason: `${id}: ${reason} (secure aggregation, ${name} stage)`, excluded });
      dropped[name] += 1;
      if (!excluded) io.missed(id);
      sa.drop(id);
    };
    for (const id of messages.keys()) {
      // this run's messages of this round; a late message of an earlier stage is stale, not an answer
      const mine: Message[] = [];
      let unreadable: FedmixError | undefined;
      for (const r of ex.received.get(id) ?? []) {
        try {
          const m = io.read(r);
          if (m.run !== undefined && m.run !== run) continue;
          if (m.kind.startsWith(SECURE_PREFIX) && m.kind !== expected.kind) continue;
          mine.push(m);
        } catch (e) {
          if (!(e instanceof FedmixError)) throw e;
          unreadable ??= e;
        }
      }
      if (mine.length === 0) {
        if (unreadable) fail(id, 'invalid', io.detailed ? unreadable.message : 'its message is not a valid message', unreadable);
        else {
          const why = ex.missing.get(id) ?? { kind: 'timeout' as const, reason: `did not answer round ${round}` };
          fail(id, why.kind, why.reason);
        }
        continue;
      }
      const m = mine[0]!;
      try {
        if (m.from !== id) throw new InvalidMessageError(`its message claims to come from ${JSON.stringify(m.from)}`);
        if (m.kind === REFUSAL.kind) {
          const refusal = REFUSAL.read(m);
          fail(id, 'refused', refusalReason(refusal.payload, io.detailed));
          continue;
        }
        if (m.round !== round) throw new InvalidMessageError(`its message is for round ${m.round}, not ${round}`);
        accept(id, expected.read(m));
      } catch (e) {
        if (!(e instanceof FedmixError) || e.code === 'WASM' || e instanceof SecureAggregationError) throw e;
        const check = e instanceof InvalidMessageError ? e.check : undefined;
        fail(id, 'invalid', io.detailed ? e.message : check ?? `its ${expected.kind} message failed a check`, e);
      }
    }
  }

  // stage 1: the request travels once, to everyone, inside the advertisement (a broadcast); a noised round's declares its Skellam step
  const real = noise ? withPrivacy(request, noise.calibration.step) : request;
  const noiseAsked = noise ? { noise: { skellamMu: noise.calibration.skellamMu, scale: noise.calibration.fixedPoint.scale } } : {};
  const advertise = withRun(ADVERTISE.create('server', round, { clients, neighbours, threshold, graphSeed: params.graphSeed, curve: params.curve, signature, clip, length, ...noiseAsked, request: withRun(real, run) }), run);
  yield* stage('advertise', new Map(clients.map((id) => [id, advertise])), (id, m) => {
    const p = m.payload as { cPk: Uint8Array; sPk: Uint8Array; vk: Uint8Array };
    sa.acceptAdvertise(id, { cPk: p.cPk, sPk: p.sPk, vk: p.vk });
  });
  const advertised = sa.advertised();
  // stage 2: each client its neighbours' keys
  yield* stage(
    'share',
    new Map([...advertised].map(([id, keys]) => [id, withRun(SHARE.create('server', round, { keys: [...keys].map(([who, k]: [string, AdvertisedKeys]) => ({ id: who, cPk: k.cPk, sPk: k.sPk, vk: k.vk! })) }), run)])),
    (id, m) => {
      const p = m.payload as { shares: { to: string; share: Uint8Array }[]; commitment: Uint8Array };
      sa.acceptShares(id, new Map(p.shares.map((s) => [s.to, s.share])), p.commitment);
    },
  );
  const routed = sa.routed();
  // stage 3: each client the shares addressed to it; it answers the real request, masked
  yield* stage('mask', new Map([...routed].map(([id, shares]) => [id, withRun(MASK.create('server', round, { shares: listed('from', shares) }), run)])), (id, m) => {
    const claimed = m.users ?? 1;
    const declared = usersIn(ctx, id);
    if (claimed > declared) throw new InvalidMessageError(`its reply stands for ${claimed} users, more than the ${declared} it declared`, 'its reply claims more users than it declared');
    const p = m.payload as { masked: Uint8Array; refused: string[] };
    sa.acceptMasked(id, p.masked, p.refused);
    users.set(id, claimed);
  });
  const { survivors, dropped: gone } = sa.unmaskRequest();
  // the consistency check: each survivor signs the survivor set; each is then sent its neighbours' signatures
  const survivorSet = withRun(CONSISTENCY.create('server', round, { survivors }), run);
  yield* stage('consistency', new Map(survivors.map((id) => [id, survivorSet])), (id, m) => sa.acceptSignature(id, (m.payload as { signature: Uint8Array }).signature));
  const vouched = (yield { op: 'await', promise: sa.signatures() }) as Map<string, Map<string, Uint8Array>>;
  // stage 4: the survivors unmask
  const unmaskOf = (signatures: ReadonlyMap<string, Uint8Array>): Message =>
    withRun(UNMASK.create('server', round, { survivors, dropped: gone, signatures: [...signatures].map(([of, s]) => ({ of, signature: s })) }), run);
  yield* stage('unmask', new Map([...vouched].map(([id, signatures]) => [id, unmaskOf(signatures)])), (id, m) => {
    const p = m.payload as { shares: { of: string; share: Uint8Array }[] };
    sa.acceptUnmask(id, new Map(p.shares.map((s) => [s.of, s.share])));
  });
  const result = (yield { op: 'await', promise: sa.result() }) as SecureAggregationResult;
  // what the state machine found out about clients after the stages: invalid messages as any other
  const blame = (ids: readonly string[], why: string): void => {
    for (const id of ids) {
      if (policy.onInvalid === 'fail') throw new InvalidMessageError(`${id}: ${why}`);
      failures.push({ client: id, round, kind: 'invalid', reason: `${id}: ${why} (secure aggregation)`, excluded: true });
    }
  };
  blame(result.dropped.excluded, 'sent share ciphertexts its neighbours could not decrypt; its input is left out of the sum');
  blame(result.dropped.ruledOut, 'sent unmasking shares that do not fit the others (the secrets came from other shares)');
  blame(result.dropped.forged, 'signed the survivor set with a signature that does not verify (its input is in the sum)');
  let total = 0;
  for (const id of result.survivors) total += users.get(id) ?? 1;
  const payload = layout.build(result.sum, request, total);
  const reply = withRun(layout.reply.create(sumId(result.survivors), round, payload as never, total > 1 ? total : undefined), run);
  return {
    reply,
    request,
    users: total,
    failures,
    record: {
      clients: clients.length, neighbours, threshold, clip, survivors: result.survivors.length, dropped, excluded: result.dropped.excluded.length, forged: result.dropped.forged.length, ruledOut: result.dropped.ruledOut.length, bound: result.bound,
      ...(noise ? { noise: noiseRecord(noise, result.survivors.length, threshold) } : {}),
    },
  };
}
