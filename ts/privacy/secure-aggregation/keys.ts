/**
 * Key agreement and share encryption for secure aggregation, on WebCrypto
 * (crypto.subtle: Node 20, browsers, Deno, Bun, workerd).
 *
 * - ECDH on X25519 where the engine has it, P-256 otherwise (detectCurve()
 *   asks once); both parties of a round use the curve the server names.
 * - A secret key is 32 raw bytes (X25519's scalar, P-256's d), drawn from the
 *   random source and imported as PKCS#8, so that it can be Shamir-shared and,
 *   once reconstructed, imported again; its public key is recomputed by the
 *   engine (the check of a reconstructed key against its advertised one).
 * - agree(): the ECDH secret through HKDF-SHA256 with `info` binding the
 *   purpose, the run, the round and the ordered pair of ids, so no seed or
 *   key repeats across rounds, runs, pairs or purposes.
 * - Shares travel under AES-GCM-256 (12-byte random IV, 16-byte tag) with
 *   associated data binding run, round, sender and receiver.
 */
import { formatValue, InvalidDataError, InvalidParameterError } from '../../errors.js';
import type { RandomSource } from './shamir.js';

export type Curve = 'X25519' | 'P-256';
export const CURVES: readonly Curve[] = ['X25519', 'P-256'];
export const SECRET_KEY_BYTES = 32;
export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/** Bytes of a raw public key: X25519's u-coordinate, or P-256's uncompressed point. */
export function publicKeyBytes(curve: Curve): number {
  return curve === 'X25519' ? 32 : 65;
}

/** A byte view as WebCrypto's BufferSource (ours never sit on a SharedArrayBuffer). */
export const data = (u: Uint8Array): BufferSource => u as BufferSource;

/** WebCrypto's SubtleCrypto, or a typed error naming what the engine lacks (key agreement and signatures alike). */
export function subtle(): SubtleCrypto {
  const s = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!s) throw new InvalidParameterError('secure aggregation needs WebCrypto (crypto.subtle), which this engine lacks (browsers give it only to secure contexts: https or localhost)');
  return s;
}

function algorithm(curve: Curve): EcKeyImportParams | Algorithm {
  return curve === 'X25519' ? { name: 'X25519' } : { name: 'ECDH', namedCurve: 'P-256' };
}

let detected: Promise<Curve> | undefined;

/** X25519 when crypto.subtle supports it, else P-256 (asked once per process). */
export function detectCurve(): Promise<Curve> {
  detected ??= (async () => {
    try {
      // the X25519 base point (u = 9): a valid public key
      const u = new Uint8Array(32);
      u[0] = 9;
      await subtle().importKey('raw', data(u), { name: 'X25519' }, true, []);
      return 'X25519' as const;
    } catch {
      return 'P-256' as const;
    }
  })();
  return detected;
}

const hex = (s: string): Uint8Array => Uint8Array.from(s.match(/../g)!, (b) => parseInt(b, 16));
// PKCS#8 wrappers of a raw 32-byte secret (RFC 8410 for X25519; RFC 5915 ECPrivateKey without its optional public key for P-256)
const X25519_PKCS8 = hex('302e020100300506032b656e04220420');
const P256_PKCS8 = hex('3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420');
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

function bigEndian(b: Uint8Array): bigint {
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  return v;
}

function fromBase64Url(s: string): Uint8Array {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

export interface KeyPair {
  curve: Curve;
  /** the 32 raw bytes of the secret key (what is Shamir-shared) */
  secret: Uint8Array;
  /** the raw public key (publicKeyBytes(curve) bytes) */
  publicKey: Uint8Array;
  privateKey: CryptoKey;
}

/**
 * The key pair of a 32-byte secret key: imported, its public key computed by
 * the engine. An InvalidDataError when the bytes are no key of the curve
 * (P-256: 0 or past the group order).
 */
export async function importSecretKey(curve: Curve, secret: Uint8Array): Promise<KeyPair> {
  if (!(secret instanceof Uint8Array) || secret.length !== SECRET_KEY_BYTES) throw new InvalidParameterError(`a secret key is ${SECRET_KEY_BYTES} bytes, got ${formatValue(secret)}`);
  const prefix = curve === 'X25519' ? X25519_PKCS8 : P256_PKCS8;
  const der = new Uint8Array(prefix.length + SECRET_KEY_BYTES);
  der.set(prefix);
  der.set(secret, prefix.length);
  let privateKey: CryptoKey;
  let jwk: JsonWebKey;
  try {
    privateKey = await subtle().importKey('pkcs8', data(der), algorithm(curve), true, ['deriveBits']);
    jwk = await subtle().exportKey('jwk', privateKey);
  } catch (e) {
    throw new InvalidDataError(`the bytes are not a ${curve} secret key (${e instanceof Error ? e.message : formatValue(e)})`);
  }
  let publicKey: Uint8Array;
  if (curve === 'X25519') publicKey = fromBase64Url(jwk.x!);
  else {
    publicKey = new Uint8Array(65);
    publicKey[0] = 4;
    publicKey.set(fromBase64Url(jwk.x!), 1);
    publicKey.set(fromBase64Url(jwk.y!), 33);
  }
  return { curve, secret: secret.slice(), publicKey, privateKey };
}

/** A fresh key pair from `random` (32 bytes; for P-256 drawn again while not in [1, n - 1]). */
export async function generateKeyPair(curve: Curve, random: RandomSource): Promise<KeyPair> {
  const secret = new Uint8Array(SECRET_KEY_BYTES);
  for (;;) {
    random(secret);
    if (curve === 'X25519') break;
    const d = bigEndian(secret);
    if (d > 0n && d < P256_ORDER) break;
  }
  return importSecretKey(curve, secret);
}

/** A peer's raw public key, imported (an InvalidDataError when it is not a point of the curve). */
export async function importPublicKey(curve: Curve, bytes: Uint8Array): Promise<CryptoKey> {
  if (!(bytes instanceof Uint8Array) || bytes.length !== publicKeyBytes(curve)) throw new InvalidDataError(`a ${curve} public key is ${publicKeyBytes(curve)} bytes, got ${formatValue(bytes)}`);
  try {
    return await subtle().importKey('raw', data(bytes), algorithm(curve), true, []);
  } catch (e) {
    throw new InvalidDataError(`the bytes are not a ${curve} public key (${e instanceof Error ? e.message : formatValue(e)})`);
  }
}

const encoder = new TextEncoder();

/** Fields as length-prefixed UTF-8 (4-byte big-endian lengths): no two lists encode alike. */
export function encodeFields(fields: readonly string[]): Uint8Array {
  const parts = fields.map((f) => encoder.encode(f));
  const out = new Uint8Array(parts.reduce((n, p) => n + 4 + p.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const p of parts) {
    view.setUint32(at, p.length);
    out.set(p, at + 4);
    at += 4 + p.length;
  }
  return out;
}

/** What a derived seed or key is bound to. */
export interface AgreementContext {
  /** 'mask' (the pairwise mask seed) or 'share-encryption' (the AES-GCM key) */
  purpose: 'mask' | 'share-encryption';
  run: string;
  round: number;
  /** the pair, in the round's order of clients (both parties name it alike) */
  first: string;
  second: string;
}

/** 32 bytes: HKDF-SHA256 of the ECDH secret of `own` and `peer`, with `info` binding the context. */
export async function agree(own: CryptoKey, peer: CryptoKey, context: AgreementContext): Promise<Uint8Array> {
  const curve = own.algorithm.name === 'X25519' ? 'X25519' : 'P-256';
  let shared: ArrayBuffer;
  try {
    shared = await subtle().deriveBits({ name: curve === 'X25519' ? 'X25519' : 'ECDH', public: peer } as EcdhKeyDeriveParams, own, 256);
  } catch (e) {
    // X25519 refuses small-order points (an all-zero secret)
    throw new InvalidDataError(`no key agreement with that public key (${e instanceof Error ? e.message : formatValue(e)})`);
  }
  const ikm = await subtle().importKey('raw', shared, 'HKDF', false, ['deriveBits']);
  const info = encodeFields(['fedmix secure aggregation v1', context.purpose, context.run, String(context.round), context.first, context.second]);
  return new Uint8Array(await subtle().deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: data(info) }, ikm, 256));
}

/** The associated data of a share's ciphertext. */
export function shareAad(run: string, round: number, sender: string, receiver: string): Uint8Array {
  return encodeFields(['fedmix secure aggregation share', run, String(round), sender, receiver]);
}

/** IV || AES-GCM(key, plaintext, aad) || tag. */
export async function encryptShare(key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array, random: RandomSource): Promise<Uint8Array> {
  const k = await subtle().importKey('raw', data(key), 'AES-GCM', false, ['encrypt']);
  const iv = new Uint8Array(IV_BYTES);
  random(iv);
  const ct = new Uint8Array(await subtle().encrypt({ name: 'AES-GCM', iv, additionalData: data(aad), tagLength: 128 }, k, data(plaintext)));
  const out = new Uint8Array(IV_BYTES + ct.length);
  out.set(iv);
  out.set(ct, IV_BYTES);
  return out;
}

/** The plaintext, or an InvalidDataError when the ciphertext is not authentic (tampered, misaddressed, wrong key). */
export async function decryptShare(key: Uint8Array, ciphertext: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  if (!(ciphertext instanceof Uint8Array) || ciphertext.length < IV_BYTES + TAG_BYTES) throw new InvalidDataError('a share ciphertext is too short');
  const k = await subtle().importKey('raw', data(key), 'AES-GCM', false, ['decrypt']);
  try {
    return new Uint8Array(await subtle().decrypt({ name: 'AES-GCM', iv: data(ciphertext.subarray(0, IV_BYTES)), additionalData: data(aad), tagLength: 128 }, k, data(ciphertext.subarray(IV_BYTES))));
  } catch {
    throw new InvalidDataError('a share ciphertext failed authentication');
  }
}

/** SHA-256 over the fields and the bytes: a commitment to a high-entropy secret (the b-seed). */
export async function commitment(fields: readonly string[], secret: Uint8Array): Promise<Uint8Array> {
  const head = encodeFields(['fedmix secure aggregation commitment', ...fields]);
  const all = new Uint8Array(head.length + secret.length);
  all.set(head);
  all.set(secret, head.length);
  return new Uint8Array(await subtle().digest('SHA-256', data(all)));
}
