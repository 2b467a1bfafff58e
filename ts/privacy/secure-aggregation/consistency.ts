/**
 * The consistency check of secure aggregation against a server that lies
 * about dropouts (Bonawitz et al. 2017, the malicious-server variant's
 * ConsistencyCheck round, with SecAgg+'s neighbourhoods).
 *
 * Without it, the server could tell some of a client v's neighbours that v
 * survived (they return their shares of v's self-mask seed b_v) and others
 * that v dropped (they return their shares of v's mask key s_v): with t of
 * each, it removes every mask of v's masked input and reads v's input alone.
 *
 * The round, between masked input and unmasking:
 *   - the server sends every survivor the survivor set U3;
 *   - each survivor checks it (itself in it, at least t members) and signs
 *     (run, round, itself, U3) once with the key it advertised at stage 1;
 *     it never signs a second, different set;
 *   - the server forwards to each signer its neighbours' signatures;
 *   - a client unmasks only the set it signed, and only with valid
 *     signatures of at least t of its neighbours over that same set. A
 *     forwarded signature that does not verify, or one over another set, is
 *     a server fault: the client refuses to unmask at all.
 * The local rules hold whatever the signatures say (protocol.ts, unmask()):
 * a client never names a neighbour both survivor and dropped, answers one
 * unmask request only, and returns for each neighbour either its b share or
 * its s share, never both.
 *
 * With all pairs (k = n - 1), two honest clients that both unmask saw t
 * signatures each over their sets and signed them; when 2t + 2 > n + c (c
 * colluding clients) the two quorums share an honest client, who signed one set only: every honest
 * client unmasks the same U3, and the server learns the sum over U3 and no
 * more. With sparse SecAgg+ graphs a client verifies only its neighbours
 * (it holds no other keys), so the guarantee is per neighbourhood
 * (docs/privacy.md states both). Either way the verification keys travel
 * through the server: the check assumes it cannot substitute them (a PKI).
 */
import { formatValue, InvalidMessageError, InvalidParameterError, SecureAggregationError } from '../../errors.js';
import {
  consistencyStatement,
  generateSigningKey,
  importVerificationKey,
  SIGNATURE_BYTES,
  SIGNATURE_SCHEMES,
  sign,
  verificationKeyBytes,
  verify,
  type SignatureScheme,
  type SigningKey,
} from './signatures.js';
import type { RandomSource } from './shamir.js';

export type { SignatureScheme } from './signatures.js';

const isBytes = (v: unknown): v is Uint8Array => ArrayBuffer.isView(v) && v instanceof Uint8Array;

/** Why `signature` is not a valid params.signature, or undefined. */
export function signerProblem(signature: unknown): string | undefined {
  if (signature === undefined || SIGNATURE_SCHEMES.includes(signature as SignatureScheme)) return undefined;
  return `signature must be 'Ed25519' or 'ECDSA-P256' (or absent), got ${formatValue(signature)}`;
}

export const SignatureVerifier = {
  /** The advertised verification key, checked against the round's scheme: required with one, refused without. */
  requireKey(scheme: SignatureScheme | undefined, vk: unknown, what: string, Err: typeof InvalidMessageError | typeof InvalidParameterError): Uint8Array | undefined {
    if (scheme === undefined) {
      if (vk !== undefined) throw new Err(`${what} carry a verification key, but the round has no consistency check`);
      return undefined;
    }
    const bytes = verificationKeyBytes(scheme);
    if (!isBytes(vk) || vk.length !== bytes) throw new Err(`${what} must carry vk, a ${scheme} verification key of ${bytes} bytes`);
    return vk.slice();
  },
};

/** The client's side: its signing key, its neighbours' verification keys, the set it signed, and whether t neighbours vouched for it. */
export class ConsistencyCheck {
  private readonly neighbourKeys = new Map<string, Uint8Array>();
  private signed: { survivors: string[]; key: string; signature: Uint8Array } | undefined;
  private vouched = false;

  private constructor(
    private readonly scheme: SignatureScheme,
    private readonly key: SigningKey,
    private readonly run: string,
    private readonly round: number,
    private readonly self: string,
    private readonly threshold: number,
  ) {}

  static async create(scheme: SignatureScheme, random: RandomSource, at: { run: string; round: number; self: string; threshold: number }): Promise<ConsistencyCheck> {
    return new ConsistencyCheck(scheme, await generateSigningKey(scheme, random), at.run, at.round, at.self, at.threshold);
  }

  /** The verification key advertised at stage 1. */
  verificationKey(): Uint8Array {
    return this.key.publicKey.slice();
  }

  /** A neighbour's verification key, as stage 2 gave it. */
  learn(id: string, vk: Uint8Array): void {
    this.neighbourKeys.set(id, vk.slice());
  }

  /**
   * Signs the survivor set (given in the round's order, checked by the
   * caller) - once: the same set again gives the same signature, another set
   * is refused (two signed sets are what a lying server needs).
   */
  async sign(survivors: readonly string[]): Promise<Uint8Array> {
    const key = JSON.stringify(survivors);
    if (this.signed) {
      if (this.signed.key !== key) throw new SecureAggregationError(`${this.self} was asked to sign a second, different survivor set: refused (a server that shows clients different survivor sets could unmask one of them)`);
      return this.signed.signature.slice();
    }
    const signature = await sign(this.key, consistencyStatement(this.run, this.round, this.self, survivors));
    this.signed = { survivors: [...survivors], key, signature };
    return signature.slice();
  }

  /**
   * Verifies the neighbours' signatures the server forwarded: each from a
   * neighbour of the signed set, over that set; any that fails is a server
   * fault (refused); fewer than t is refused.
   */
  async check(signatures: ReadonlyMap<string, Uint8Array>): Promise<void> {
    if (!this.signed) throw new InvalidParameterError(`${this.self} has signed no survivor set: the signatures come after the consistency request`);
    const { survivors } = this.signed;
    const members = new Set(survivors);
    if (!(signatures instanceof Map) || signatures.size > this.neighbourKeys.size) throw new InvalidMessageError(`the signatures must be a Map of at most ${this.neighbourKeys.size} neighbours' signatures`);
    let valid = 0;
    for (const [id, signature] of signatures) {
      if (typeof id !== 'string' || id === this.self || !this.neighbourKeys.has(id)) throw new SecureAggregationError(`the server forwarded a signature of ${formatValue(id)}, who is not a neighbour of ${this.self}: refused to unmask`);
      if (!members.has(id)) throw new SecureAggregationError(`the server forwarded a signature of ${id}, who is not in the survivor set ${this.self} signed: refused to unmask`);
      if (!isBytes(signature) || signature.length !== SIGNATURE_BYTES) throw new SecureAggregationError(`${id}'s forwarded signature is not ${SIGNATURE_BYTES} bytes: refused to unmask`);
      const vk = await importVerificationKey(this.scheme, this.neighbourKeys.get(id)!).catch(() => undefined);
      if (!vk || !(await verify(this.scheme, vk, signature, consistencyStatement(this.run, this.round, id, survivors)))) {
        throw new SecureAggregationError(`${id}'s signature of the survivor set does not verify (forged, or over another set): ${this.self} refuses to unmask`);
      }
      valid += 1;
    }
    if (valid < this.threshold) {
      throw new SecureAggregationError(`${this.self} holds ${valid} valid signatures of its neighbours over the survivor set it signed, fewer than the threshold ${this.threshold}: refused to unmask (the server may be showing clients different survivor sets)`);
    }
    this.vouched = true;
  }

  /** The gate of unmask(): the request's survivors must be the set signed and vouched for. */
  requireVouched(survivors: ReadonlySet<string>): void {
    if (!this.signed || !this.vouched) throw new SecureAggregationError(`${this.self} unmasks only after t of its neighbours signed the survivor set it signed (the consistency check)`);
    const s = this.signed.survivors;
    if (s.length !== survivors.size || s.some((id) => !survivors.has(id))) {
      throw new SecureAggregationError(`the unmask request names other survivors than the set ${this.self} signed: refused (answering could unmask a client)`);
    }
  }
}

/** The server's side: the signatures received, verified at the end of the round. */
export class ServerConsistency {
  private readonly received = new Map<string, Uint8Array>();

  constructor(
    private readonly scheme: SignatureScheme,
    private readonly run: string,
    private readonly round: number,
    private readonly threshold: number,
  ) {}

  has(id: string): boolean {
    return this.received.has(id);
  }

  accept(id: string, signature: unknown): void {
    if (this.received.has(id)) throw new InvalidMessageError(`${id} sent its signature twice`, 'signature sent twice');
    if (!isBytes(signature) || signature.length !== SIGNATURE_BYTES) throw new InvalidMessageError(`${id}'s signature must be ${SIGNATURE_BYTES} bytes, got ${formatValue(signature)}`, 'a signature of the wrong size');
    this.received.set(id, signature.slice());
  }

  forget(id: string): void {
    this.received.delete(id);
  }

  /**
   * Ends the round: of `signers` (survivors still in), the signatures of
   * `survivors` (the set sent out) that verify under the advertised keys;
   * `forged` those that do not; for each signer, its neighbours' valid
   * signatures; `unvouched` the signers with fewer than t of them (they would
   * refuse to unmask: they are not asked).
   */
  async close(
    survivors: readonly string[],
    signers: readonly string[],
    keyOf: (id: string) => Uint8Array,
    neighboursOf: (id: string) => readonly string[],
  ): Promise<{ forged: string[]; unvouched: string[]; forwarded: Map<string, Map<string, Uint8Array>> }> {
    const valid = new Map<string, Uint8Array>();
    const forged: string[] = [];
    for (const id of signers) {
      const signature = this.received.get(id);
      if (!signature) continue;
      const vk = await importVerificationKey(this.scheme, keyOf(id)).catch(() => undefined);
      if (vk && (await verify(this.scheme, vk, signature, consistencyStatement(this.run, this.round, id, survivors)))) valid.set(id, signature);
      else forged.push(id);
    }
    const unvouched: string[] = [];
    const forwarded = new Map<string, Map<string, Uint8Array>>();
    for (const id of valid.keys()) {
      const mine = new Map(neighboursOf(id).filter((v) => valid.has(v)).map((v) => [v, valid.get(v)!.slice()]));
      if (mine.size < this.threshold) unvouched.push(id);
      else forwarded.set(id, mine);
    }
    return { forged, unvouched, forwarded };
  }
}
