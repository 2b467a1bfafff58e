/**
 * Signatures for secure aggregation's consistency check (Bonawitz et al.
 * 2017, the malicious-server variant), on WebCrypto: Ed25519 where the engine
 * has it, ECDSA P-256 with SHA-256 otherwise (detectSignatureScheme() asks
 * once); every party of a round uses the scheme the server names.
 *
 * A client draws a fresh signing key per round (32 random bytes, imported as
 * PKCS#8 like the ECDH keys of keys.ts), advertises its verification key with
 * its other keys, and signs the survivor set once. The signature binds the
 * run, the round, the signer and the set, so it cannot be replayed in another
 * round or under another identity.
 *
 * Trust: the verification keys travel through the server. They stop a server
 * only when it cannot substitute them (the usual PKI assumption: docs/privacy.md).
 */
import { formatValue, InvalidDataError } from '../../errors.js';
import { data, encodeFields, SECRET_KEY_BYTES, subtle } from './keys.js';
import type { RandomSource } from './shamir.js';

export type SignatureScheme = 'Ed25519' | 'ECDSA-P256';
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = ['Ed25519', 'ECDSA-P256'];
/** Bytes of a signature: Ed25519's, or ECDSA P-256's r || s (IEEE P1363, WebCrypto's format). */
export const SIGNATURE_BYTES = 64;

/** Bytes of a raw verification key: Ed25519's, or P-256's uncompressed point. */
export function verificationKeyBytes(scheme: SignatureScheme): number {
  return scheme === 'Ed25519' ? 32 : 65;
}

function algorithm(scheme: SignatureScheme): Algorithm | EcKeyImportParams {
  return scheme === 'Ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', namedCurve: 'P-256' };
}

function signParams(scheme: SignatureScheme): Algorithm | EcdsaParams {
  return scheme === 'Ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', hash: 'SHA-256' };
}

let detected: Promise<SignatureScheme> | undefined;

/** Ed25519 when crypto.subtle signs with it, else ECDSA P-256 (asked once per process). */
export function detectSignatureScheme(): Promise<SignatureScheme> {
  detected ??= (async () => {
    try {
      const k = await subtle().generateKey({ name: 'Ed25519' } as Algorithm, false, ['sign', 'verify']);
      await subtle().sign({ name: 'Ed25519' }, (k as CryptoKeyPair).privateKey, new Uint8Array(1));
      return 'Ed25519' as const;
    } catch {
      return 'ECDSA-P256' as const;
    }
  })();
  return detected;
}

const hex = (s: string): Uint8Array => Uint8Array.from(s.match(/../g)!, (b) => parseInt(b, 16));
// PKCS#8 wrappers of a raw 32-byte secret (RFC 8410 for Ed25519; RFC 5915 ECPrivateKey for P-256)
const ED25519_PKCS8 = hex('302e020100300506032b657004220420');
const P256_PKCS8 = hex('3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420');
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

function fromBase64Url(s: string): Uint8Array {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export interface SigningKey {
  scheme: SignatureScheme;
  /** the raw verification key (verificationKeyBytes(scheme) bytes) */
  publicKey: Uint8Array;
  privateKey: CryptoKey;
}

/** A fresh signing key from `random` (for P-256 drawn again while not in [1, n - 1]). */
export async function generateSigningKey(scheme: SignatureScheme, random: RandomSource): Promise<SigningKey> {
  const secret = new Uint8Array(SECRET_KEY_BYTES);
  for (;;) {
    random(secret);
    if (scheme === 'Ed25519') break;
    let d = 0n;
    for (const x of secret) d = (d << 8n) | BigInt(x);
    if (d > 0n && d < P256_ORDER) break;
  }
  const prefix = scheme === 'Ed25519' ? ED25519_PKCS8 : P256_PKCS8;
  const der = new Uint8Array(prefix.length + SECRET_KEY_BYTES);
  der.set(prefix);
  der.set(secret, prefix.length);
  const privateKey = await subtle().importKey('pkcs8', data(der), algorithm(scheme), true, ['sign']);
  // the engine computes the public key; the private key is then re-imported non-extractable
  const jwk = await subtle().exportKey('jwk', privateKey);
  let publicKey: Uint8Array;
  if (scheme === 'Ed25519') publicKey = fromBase64Url(jwk.x!);
  else {
    publicKey = new Uint8Array(65);
    publicKey[0] = 4;
    publicKey.set(fromBase64Url(jwk.x!), 1);
    publicKey.set(fromBase64Url(jwk.y!), 33);
  }
  secret.fill(0);
  der.fill(0);
  const sealed = await subtle().importKey('jwk', jwk, algorithm(scheme), false, ['sign']);
  return { scheme, publicKey, privateKey: sealed };
}

/** A raw verification key, imported (an InvalidDataError when it is not a key of the scheme). */
export async function importVerificationKey(scheme: SignatureScheme, bytes: Uint8Array): Promise<CryptoKey> {
  if (!(bytes instanceof Uint8Array) || bytes.length !== verificationKeyBytes(scheme)) throw new InvalidDataError(`a ${scheme} verification key is ${verificationKeyBytes(scheme)} bytes, got ${formatValue(bytes)}`);
  try {
    return await subtle().importKey('raw', data(bytes), algorithm(scheme), false, ['verify']);
  } catch (e) {
    throw new InvalidDataError(`the bytes are not a ${scheme} verification key (${e instanceof Error ? e.message : formatValue(e)})`);
  }
}

/** What a client signs in the consistency round: the run, the round, itself and the survivor set (in the round's order). */
export function consistencyStatement(run: string, round: number, signer: string, survivors: readonly string[]): Uint8Array {
  return encodeFields(['fedmix secure aggregation consistency', run, String(round), signer, String(survivors.length), ...survivors]);
}

export async function sign(key: SigningKey, message: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().sign(signParams(key.scheme), key.privateKey, data(message)));
}

/** Whether `signature` is `key`'s over `message` (false, never a throw, for any malformed signature). */
export async function verify(scheme: SignatureScheme, key: CryptoKey, signature: Uint8Array, message: Uint8Array): Promise<boolean> {
  if (!(signature instanceof Uint8Array) || signature.length !== SIGNATURE_BYTES) return false;
  try {
    return await subtle().verify(signParams(scheme), key, data(signature), data(message));
  } catch {
    return false;
  }
}
