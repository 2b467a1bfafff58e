/**
 * Distributed DP in a federation's secure rounds (docs/privacy.md,
 * "distributed DP"): each client adds a Skellam share to its quantized
 * vector before masking it, so that the sum the server unmasks is the only
 * thing anyone sees, and it holds at least the noise of a central Gaussian
 * mechanism of noise multiplier z at sensitivity clip (privacy/
 * distributed-noise.ts calibrates the shares and the fixed point).
 *
 * The server calibrates from the round's public shapes (the layout's length,
 * the clients asked, the threshold) and declares the accountant's Skellam
 * step in the real request's envelope, so that its run ledger and every
 * client's own ledger compose it. A client checks the declaration against
 * the shares it is asked to add: a step that names more noise, or smaller
 * sensitivities, than the shares and the clip give is refused, and so is a
 * round that asks for noise without declaring it.
 */
import { formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';
import { distributedNoise, quantizedSensitivity, type DistributedNoise } from '../../privacy/distributed-noise.js';
import type { Message, PrivacyStep } from '../messages/envelope.js';
import type { ResolvedPolicy } from '../runtime/policy.js';
import type { ServerRole } from '../runtime/roles.js';

/** A secure round's distributed noise, as the server calibrated it. */
export interface RoundNoise {
  /** z: the released sum holds at least the noise of a central Gaussian of standard deviation z x clip (at the rounded sensitivity) */
  noiseMultiplier: number;
  /** the L2 bound of one client's contribution, real units */
  clip: number;
  /** each client's share, the fixed point and the accountant's step */
  calibration: DistributedNoise;
}

/** What a noised secure round's record says (SecureRoundRecord.noise). */
export interface SecureNoiseRecord {
  noiseMultiplier: number;
  /** each client's Skellam share: Sk(skellamMu) on every quantized value */
  skellamMu: number;
  /** the fixed-point scale the shares are drawn at */
  scale: number;
  /** the standard deviation of the noise on each value of the released sum, real units: sqrt(2 x survivors x skellamMu) / scale */
  stddev: number;
  /** the least the calibration guarantees whoever drops (threshold shares), real units: sqrt(2 x threshold x skellamMu) / scale */
  guaranteed: number;
}

/**
 * The distributed noise of a secure round: the server's own (DP-FedAvg,
 * ServerRole.secureNoise) or the policy's noiseMultiplier at the policy's
 * clip; undefined when the round takes none. `length`: the values a client's
 * vector holds; `clients`: the clients asked; `threshold`: the round's.
 */
export function roundNoise(policy: ResolvedPolicy, server: ServerRole, requests: ReadonlyMap<string, Message>, length: number, clients: number, threshold: number, round: number): RoundNoise | undefined {
  const secure = policy.secureAggregation!;
  const own = server.secureNoise;
  if (typeof own === 'string') {
    if (secure.noiseMultiplier !== undefined) throw new InvalidParameterError(`round ${round}: secureAggregation.noiseMultiplier cannot apply to ${server.protocol.name}'s replies: ${own}`);
    return undefined;
  }
  if (own && secure.noiseMultiplier !== undefined) {
    throw new InvalidParameterError(`round ${round}: the ${server.protocol.name} server sets the distributed noise of its secure rounds (noise multiplier ${own.noiseMultiplier}, clip ${own.clip}); leave secureAggregation.noiseMultiplier out`);
  }
  const given = own ?? (secure.noiseMultiplier === undefined ? undefined : { clip: secure.clip, noiseMultiplier: secure.noiseMultiplier });
  if (!given) return undefined;
  for (const m of requests.values()) {
    if (m.privacy !== undefined) {
      throw new InvalidParameterError(`round ${round}: the server's requests declare a privacy step of their own (${formatValue(m.privacy)}), and the round takes distributed noise: a round is one release, one step`);
    }
  }
  const calibration = distributedNoise({ clip: given.clip, noiseMultiplier: given.noiseMultiplier, length, clients, threshold });
  return { noiseMultiplier: given.noiseMultiplier, clip: given.clip, calibration };
}

/** The record of a noised round once `survivors` shares are in its sum. */
export function noiseRecord(noise: RoundNoise, survivors: number, threshold: number): SecureNoiseRecord {
  const { skellamMu, fixedPoint } = noise.calibration;
  const sd = (shares: number) => Math.sqrt(2 * shares * skellamMu) / fixedPoint.scale;
  return { noiseMultiplier: noise.noiseMultiplier, skellamMu, scale: fixedPoint.scale, stddev: sd(survivors), guaranteed: sd(threshold) };
}

/** A step as a refusal names it. */
function shown(step: PrivacyStep | undefined): string {
  if (step === undefined) return 'none';
  const f = (x: number) => Number(x.toPrecision(6)).toString();
  return step.mechanism === 'skellam' ? `Skellam mu ${f(step.mu)}, l1 ${f(step.l1)}, l2 ${f(step.l2)}` : `Gaussian noise multiplier ${f(step.noiseMultiplier)}`;
}

/** Relative slack for the client's recomputation of the server's floating-point calibration. */
const SLACK = 1e-9;

/**
 * A client's check of the privacy step a secure round's real request
 * declares, against the noise the advertisement asks it to add: with noise,
 * a Skellam step whose mu is at most threshold x skellamMu (the least total
 * a released sum holds) and whose sensitivities are at least those of one
 * contribution of L2 norm clip at the round's scale; without noise, no
 * Skellam step. Otherwise an InvalidMessageError: the client refuses the round.
 */
export function checkDeclaredNoise(request: Message, round: { clip: number; threshold: number; length: number; noise?: { skellamMu: number; scale: number } }): void {
  const step = request.privacy;
  const { noise } = round;
  if (!noise) {
    if (step?.mechanism === 'skellam') {
      throw new InvalidMessageError(`the secure round declares distributed noise (${shown(step)}) but asks its clients for none: its privacy would be overstated`, 'it declares noise it does not ask for');
    }
    return;
  }
  if (!(noise.skellamMu > 0 && noise.scale >= 1)) throw new InvalidMessageError(`the secure round's noise must be { skellamMu > 0, scale >= 1 }, got ${formatValue(noise)}`, 'its noise parameters are malformed');
  if (step?.mechanism !== 'skellam') {
    throw new InvalidMessageError(`the secure round asks for Skellam shares of mu ${noise.skellamMu} but declares ${shown(step)}: a noised round declares its Skellam step, so that every ledger composes it`, 'it asks for noise it does not declare');
  }
  const { l1, l2 } = quantizedSensitivity(round.clip, noise.scale, round.length);
  const total = round.threshold * noise.skellamMu;
  if (step.mu > total * (1 + SLACK) || step.l2 < l2 * (1 - SLACK) || step.l1 < l1 * (1 - SLACK)) {
    throw new InvalidMessageError(
      `the secure round declares ${shown(step)}, but its shares give at least ${shown({ mechanism: 'skellam', mu: total, l1, l2 })} (threshold ${round.threshold} x mu ${noise.skellamMu}, clip ${round.clip} at scale ${noise.scale}): the declaration overstates its privacy`,
      'its privacy declaration overstates the noise',
    );
  }
}
