/**
 * TLS as a federation's clients see it (mqtts:// and wss:// URLs): the
 * certificates they trust, and the refusal of a broker they do not. No Node
 * import: join() runs in browsers too, where the browser's own trust store
 * decides and `ca` is not available.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { isArray, readArray } from '../../validate.js';

/** PEM text or its bytes: one certificate (or chain), or several. */
export type Certificates = string | Uint8Array | readonly (string | Uint8Array)[];

/** `ca` checked and read once: a list of PEM texts or bytes (undefined when not given). */
export function readCertificates(name: string, given: unknown): (string | Uint8Array)[] | undefined {
  if (given === undefined) return undefined;
  const list = isArray(name, given) ? readArray(name, given) : [given];
  if (list.length === 0) throw new InvalidParameterError(`${name} must be PEM certificates (a string, bytes or a non-empty array of them), got an empty array`);
  return list.map((c, i) => {
    if ((typeof c === 'string' && c.includes('-----BEGIN')) || (c instanceof Uint8Array && c.length > 0)) return c;
    throw new InvalidParameterError(`${name}${list.length > 1 || isArray(name, given) ? `[${i}]` : ''} must be a PEM certificate (text with -----BEGIN CERTIFICATE-----, or its bytes), got ${formatValue(c)}`);
  });
}

/**
 * The OpenSSL and Node codes of a certificate the client does not trust (or
 * that names another host): a refusal that trying again cannot change.
 */
const UNTRUSTED = /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH|INVALID_CA)$/;

/** The code of `e` when it is a TLS refusal of the broker's certificate, else undefined. */
export function untrustedCertificate(e: unknown): string | undefined {
  const code = e !== null && typeof e === 'object' ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && UNTRUSTED.test(code) ? code : undefined;
}
