/**
 * The envelope every federated message travels in: a small versioned header
 * (protocol, version, kind, sender, round) around a payload. The payload's
 * structure is declared per kind (schema.ts); its wire forms are JSON and
 * Arrow IPC (codec.ts).
 */
import { InvalidMessageError } from '../../errors.js';

export const PROTOCOL = 'fedmix';
export const PROTOCOL_VERSION = 1;

export interface Message<K extends string = string, P = unknown> {
  protocol: typeof PROTOCOL;
  version: typeof PROTOCOL_VERSION;
  /** what the payload is, e.g. 'fedgengmm/local-model' */
  kind: K;
  /** the sending party's id */
  from: string;
  /** the communication round it belongs to */
  round: number;
  payload: P;
}

export function message<K extends string, P>(kind: K, from: string, round: number, payload: P): Message<K, P> {
  return { protocol: PROTOCOL, version: PROTOCOL_VERSION, kind, from, round, payload };
}

const ENVELOPE_KEYS = new Set(['protocol', 'version', 'kind', 'from', 'round', 'payload']);

/** Checks a received envelope (anything: a parsed JSON value, an object handed over in process); `kind` restricts what is accepted. */
export function checkEnvelope(m: unknown, kind?: string): Message {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new InvalidMessageError('a message must be a JSON object');
  const e = m as Partial<Message>;
  if (e.protocol !== PROTOCOL) throw new InvalidMessageError(`not a fedmix message (protocol ${JSON.stringify(e.protocol)})`);
  if (e.version !== PROTOCOL_VERSION) throw new InvalidMessageError(`message version ${String(e.version)} is not supported; this fedmix speaks version ${PROTOCOL_VERSION}`);
  if (typeof e.kind !== 'string') throw new InvalidMessageError('a message needs a string "kind"');
  if (kind !== undefined && e.kind !== kind) throw new InvalidMessageError(`expected a ${kind} message, got ${e.kind}`);
  if (typeof e.from !== 'string' || e.from.length === 0) throw new InvalidMessageError('a message needs a non-empty "from"');
  if (!Number.isSafeInteger(e.round) || (e.round as number) < 0) throw new InvalidMessageError('a message needs a non-negative integer "round"');
  if (!('payload' in e)) throw new InvalidMessageError('a message needs a "payload"');
  // nothing rides along outside the declared payload
  for (const key of Object.keys(e)) if (!ENVELOPE_KEYS.has(key)) throw new InvalidMessageError(`a message has a field ${JSON.stringify(key.slice(0, 100))} its envelope does not declare`);
  return e as Message;
}
