/**
 * The messages of a secure round (SecAgg+, Bell et al. 2020), declared once.
 * A round whose requests expect an additive reply runs as four exchanges of
 * the same round number; the real request travels in the first, once for
 * every client (a broadcast), and is answered in the third, masked:
 *
 *   down 'secure-aggregation/advertise'   { clients, neighbours, threshold, graphSeed, curve, signature, clip, length, noise?, request }
 *   up   'secure-aggregation/keys'        { cPk, sPk, vk }                 stage 1: its two public keys and its verification key
 *   down 'secure-aggregation/share'       { keys }                         its neighbours' public keys
 *   up   'secure-aggregation/shares'      { shares, commitment }           stage 2: one ciphertext per neighbour
 *   down 'secure-aggregation/mask'        { shares }                       the ciphertexts addressed to it
 *   up   'secure-aggregation/masked'      { masked, refused }              stage 3: its reply, flattened, quantized, masked
 *   down 'secure-aggregation/consistency' { survivors }
 *   up   'secure-aggregation/signature'   { signature }                    its signature of the survivor set (once)
 *   down 'secure-aggregation/unmask'      { survivors, dropped, signatures }  its neighbours' signatures of that set
 *   up   'secure-aggregation/unmasked'    { shares }                       stage 4: b-shares of survivors, s-shares of the dropped
 *
 * The consistency round (ts/privacy/secure-aggregation/consistency.ts) is
 * always on: `signature` and `vk` are required, so a server cannot switch the
 * check off by leaving them out.
 *
 * Nothing here carries a client's data in clear: its reply exists on the wire
 * only as the masked vector (u64 words, little-endian).
 */
import * as v from 'valibot';
import { LIMITS } from '../../validate.js';
import { defineMessage, finiteNumber, listOf, oneOf, optional, record, u8Array, wholeNumber } from '../messages/schema.js';

/** Most clients one secure round takes (Shamir's x-coordinates: 1 to 65,535). */
export const MAX_SECURE_CLIENTS = 65_535;

const id = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
const ids = listOf(id, MAX_SECURE_CLIENTS);
const share = u8Array();

export const ADVERTISE = defineMessage(
  'secure-aggregation/advertise',
  record({
    clients: ids,
    neighbours: wholeNumber(1, MAX_SECURE_CLIENTS),
    threshold: wholeNumber(1, MAX_SECURE_CLIENTS),
    graphSeed: u8Array(),
    curve: oneOf(['X25519', 'P-256'] as const),
    signature: oneOf(['Ed25519', 'ECDSA-P256'] as const),
    clip: finiteNumber(),
    length: wholeNumber(0, LIMITS.values),
    // distributed DP: each client's Skellam share and the fixed-point scale it is calibrated at (absent: no noise; clip then bounds the L2 norm of a client's vector)
    noise: optional(record({ skellamMu: finiteNumber(), scale: finiteNumber() })),
    // the round's real request, a message of the algorithm's protocol: the client host reads it against its role's protocol
    request: v.unknown(),
  }),
);
export const KEYS = defineMessage('secure-aggregation/keys', record({ cPk: u8Array(), sPk: u8Array(), vk: u8Array() }));
export const SHARE = defineMessage('secure-aggregation/share', record({ keys: listOf(record({ id, cPk: u8Array(), sPk: u8Array(), vk: u8Array() }), MAX_SECURE_CLIENTS) }));
export const SHARES = defineMessage('secure-aggregation/shares', record({ shares: listOf(record({ to: id, share }), MAX_SECURE_CLIENTS), commitment: u8Array() }));
export const MASK = defineMessage('secure-aggregation/mask', record({ shares: listOf(record({ from: id, share }), MAX_SECURE_CLIENTS) }));
export const MASKED = defineMessage('secure-aggregation/masked', record({ masked: u8Array(), refused: ids }));
export const CONSISTENCY = defineMessage('secure-aggregation/consistency', record({ survivors: ids }));
export const SIGNATURE = defineMessage('secure-aggregation/signature', record({ signature: u8Array() }));
export const UNMASK = defineMessage('secure-aggregation/unmask', record({ survivors: ids, dropped: ids, signatures: listOf(record({ of: id, signature: u8Array() }), MAX_SECURE_CLIENTS) }));
export const UNMASKED = defineMessage('secure-aggregation/unmasked', record({ shares: listOf(record({ of: id, share }), MAX_SECURE_CLIENTS) }));

/** The stages: the request the server sends and the reply it expects. */
export const STAGES = [
  { name: 'advertise', request: ADVERTISE, reply: KEYS },
  { name: 'share', request: SHARE, reply: SHARES },
  { name: 'mask', request: MASK, reply: MASKED },
  { name: 'consistency', request: CONSISTENCY, reply: SIGNATURE },
  { name: 'unmask', request: UNMASK, reply: UNMASKED },
] as const;

export type StageName = (typeof STAGES)[number]['name'];

/** Kinds of the stage messages start with this: a client host answers them itself. */
export const SECURE_PREFIX = 'secure-aggregation/';

/** Whether `m` (an envelope-checked message) is a stage request of a secure round. */
export function isSecureStage(m: { kind: string }): boolean {
  return typeof m.kind === 'string' && m.kind.startsWith(SECURE_PREFIX);
}

/** A map as the list the wire carries. */
export function listed<K extends 'to' | 'from' | 'of'>(key: K, m: ReadonlyMap<string, Uint8Array>): ({ [k in K]: string } & { share: Uint8Array })[] {
  return [...m].map(([who, share]) => ({ [key]: who, share }) as { [k in K]: string } & { share: Uint8Array });
}
