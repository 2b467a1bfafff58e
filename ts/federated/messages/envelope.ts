/**
 * The envelope every federated message travels in: a small versioned header
 * (protocol, version, kind, sender, round) around a payload. The payload's
 * structure is declared per kind (schema.ts); its wire forms are JSON and
 * Arrow IPC (codec.ts).
 */
import { formatThrown, formatValue, InvalidMessageError, InvalidParameterError } from '../../errors.js';

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
  /**
   * How many users the reply stands for (absent: one). A client simulating a
   * group of users answers a request of an additive protocol once for all of
   * them, with the sum of their contributions (runtime/roles.ts Protocol.additive).
   */
  users?: number;
  /**
   * The run it belongs to (absent outside a run): the runtime stamps its
   * requests with the run's id and a client's reply carries the id of the
   * request it answers, so that a reply of another run (a dead run's,
   * delivered again by a broker) is told apart and never counts.
   */
  run?: string;
  /**
   * On a request: the privacy its reply's release spends (absent: none is
   * declared). A client keeping its own ledger (runtime/client-budget.ts)
   * accounts this step before it answers, and refuses a request that would
   * take it past its budget, so that it need not trust the server's accounting.
   */
  privacy?: PrivacyStep;
  payload: P;
}

/**
 * One release as a request declares it, per the mechanism that adds the
 * noise. 'gaussian': the sampled Gaussian mechanism (noise of standard
 * deviation noiseMultiplier x the clip of one client's contribution, clients
 * sampled with probability samplingRate). 'skellam': Skellam noise of
 * parameter mu (variance 2 mu) on an integer sum whose one-client
 * sensitivities are l1 and l2 (distributed DP under secure aggregation).
 */
export type PrivacyStep =
  | { mechanism: 'gaussian'; noiseMultiplier: number; samplingRate: number }
  | { mechanism: 'skellam'; mu: number; l1: number; l2: number };

/** `step` read as a PrivacyStep, or an InvalidMessageError saying what is wrong. */
export function readPrivacyStep(step: unknown): PrivacyStep {
  const bad = (why: string) => new InvalidMessageError(`a message's "privacy" ${why}, got ${formatValue(step)}`, 'its privacy step is malformed');
  let o: Record<string, unknown>;
  try {
    if (step === null || typeof step !== 'object' || Array.isArray(step)) throw bad('must be an object');
    o = { ...(step as Record<string, unknown>) };
  } catch (err) {
    if (err instanceof InvalidMessageError) throw err;
    throw bad('could not be read');
  }
  const positive = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  /** exactly the mechanism's fields: one it does not declare is named, as is one missing */
  const onlyFields = (fields: readonly string[]) => {
    const extra = Object.keys(o).find((k) => !fields.includes(k));
    if (extra !== undefined) throw bad(`of the ${String(o.mechanism)} mechanism has a field ${JSON.stringify(extra.slice(0, 100))} it does not declare (only ${fields.join(', ')})`);
    const missing = fields.find((k) => !(k in o));
    if (missing !== undefined) throw bad(`of the ${String(o.mechanism)} mechanism needs its ${missing}`);
  };
  if (o.mechanism === 'gaussian') {
    onlyFields(['mechanism', 'noiseMultiplier', 'samplingRate']);
    if (!positive(o.noiseMultiplier)) throw bad('needs a positive finite noiseMultiplier');
    if (!positive(o.samplingRate) || (o.samplingRate as number) > 1) throw bad('needs a samplingRate in (0, 1]');
    return { mechanism: 'gaussian', noiseMultiplier: o.noiseMultiplier as number, samplingRate: o.samplingRate as number };
  }
  if (o.mechanism === 'skellam') {
    onlyFields(['mechanism', 'mu', 'l1', 'l2']);
    if (!positive(o.mu)) throw bad('needs a positive finite mu');
    if (!positive(o.l2) || !(typeof o.l1 === 'number' && Number.isFinite(o.l1) && o.l1 >= 0)) throw bad('needs a positive finite l2 and a finite l1 >= 0');
    return { mechanism: 'skellam', mu: o.mu as number, l1: o.l1 as number, l2: o.l2 as number };
  }
  throw bad("must name its mechanism, 'gaussian' or 'skellam'");
}

/** `m` declaring the privacy step its reply's release spends. */
export function withPrivacy<M extends Message>(m: M, step: PrivacyStep): M {
  return { ...m, privacy: readPrivacyStep(step) };
}

/** Most users one message may stand for: what one federation's runtime handles. */
export const MAX_USERS = 2 ** 24;

export function message<K extends string, P>(kind: K, from: string, round: number, payload: P, users?: number): Message<K, P> {
  if (users === undefined) return { protocol: PROTOCOL, version: PROTOCOL_VERSION, kind, from, round, payload };
  return { protocol: PROTOCOL, version: PROTOCOL_VERSION, kind, from, round, users, payload };
}

const ENVELOPE_KEYS = new Set(['protocol', 'version', 'kind', 'from', 'round', 'users', 'run', 'privacy', 'payload']);

/** What a run id may be: 8 to 64 letters, digits, '-' or '_' (a fresh one is 32 hex digits). */
const RUN_ID = /^[A-Za-z0-9_-]{8,64}$/;

/** Whether `x` is a run id (RUN_ID). */
export function isRunId(x: unknown): x is string {
  return typeof x === 'string' && RUN_ID.test(x);
}

/**
 * A fresh run id: 128 bits from the platform's cryptographic source, as hex,
 * so that no two runs (a restarted server's included) share one. An
 * InvalidParameterError where there is no crypto.getRandomValues (then give
 * the run an id of your own, RunOptions.run).
 */
export function freshRunId(): string {
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint32Array) => Uint32Array } }).crypto;
  if (typeof c?.getRandomValues !== 'function') throw new InvalidParameterError('this platform has no crypto.getRandomValues to draw a run id from; give the run an id (RunOptions.run)');
  return Array.from(c.getRandomValues(new Uint32Array(4)), (w) => w.toString(16).padStart(8, '0')).join('');
}

/** `m` stamped with the run id (the same object when it carries it already). */
export function withRun<M extends Message>(m: M, run: string): M {
  return m.run === run ? m : { ...m, run };
}

/**
 * Checks a received envelope (anything: a parsed JSON value, an object handed
 * over in process); `kind` restricts what is accepted. Returns the message as
 * read, a plain object (the payload itself is not copied).
 */
export function checkEnvelope(m: unknown, kind?: string): Message {
  if (kind !== undefined && typeof kind !== 'string') throw new InvalidParameterError(`kind must be a message kind (a string), got ${formatValue(kind)}`);
  // the header is read once, under guard: a getter or Proxy handed over in process cannot throw past here
  let e: Partial<Message> & { hasPayload: boolean };
  let keys: string[];
  try {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new InvalidMessageError(`a message must be a JSON object, got ${formatValue(m)}`);
    const o = m as Partial<Message>;
    keys = Object.keys(o);
    const hasPayload = 'payload' in o;
    e = { protocol: o.protocol, version: o.version, kind: o.kind, from: o.from, round: o.round, users: o.users, run: o.run, privacy: o.privacy, payload: hasPayload ? o.payload : undefined, hasPayload };
  } catch (err) {
    if (err instanceof InvalidMessageError) throw err;
    throw new InvalidMessageError(`the message could not be read (${formatThrown(err)})`, 'the message could not be read');
  }
  if (e.protocol !== PROTOCOL) throw new InvalidMessageError(`not a fedmix message: "protocol" must be ${JSON.stringify(PROTOCOL)}, got ${formatValue(e.protocol)}`);
  if (e.version !== PROTOCOL_VERSION) {
    // "1" is not 1: say which it is, so that the message does not read "version 1 is not supported"
    throw new InvalidMessageError(
      typeof e.version === 'number'
        ? `message version ${formatValue(e.version)} is not supported; this fedmix speaks version ${PROTOCOL_VERSION}`
        : e.version === undefined
          ? `the message has no "version"; this fedmix speaks version ${PROTOCOL_VERSION}`
          : `the message's "version" is ${formatValue(e.version)}, a ${typeof e.version}; it must be the number ${PROTOCOL_VERSION}`,
    );
  }
  if (typeof e.kind !== 'string') throw new InvalidMessageError(`a message needs a string "kind", got ${formatValue(e.kind)}`);
  // a kind is a name: shown bare, as the protocol declares them, and clipped
  if (kind !== undefined && e.kind !== kind) throw new InvalidMessageError(`expected a ${kind} message, got ${e.kind.slice(0, 80)}`);
  if (typeof e.from !== 'string' || e.from.length === 0) throw new InvalidMessageError(`a message needs a non-empty string "from", got ${formatValue(e.from)}`);
  if (!Number.isSafeInteger(e.round) || (e.round as number) < 0) throw new InvalidMessageError(`a message needs a non-negative integer "round", got ${formatValue(e.round)}`);
  if (e.users !== undefined && (!Number.isSafeInteger(e.users) || e.users < 1 || e.users > MAX_USERS)) {
    throw new InvalidMessageError(`a message's "users" must be an integer from 1 to ${MAX_USERS} (how many users its reply stands for), got ${formatValue(e.users)}`, 'its users count is not a positive integer');
  }
  if (e.run !== undefined && !isRunId(e.run)) throw new InvalidMessageError(`a message's "run" must be a run id (8 to 64 letters, digits, - or _), got ${formatValue(e.run)}`, 'its run id is malformed');
  const privacy = e.privacy === undefined ? undefined : readPrivacyStep(e.privacy);
  if (!e.hasPayload) throw new InvalidMessageError('a message needs a "payload"');
  // nothing rides along outside the declared payload
  for (const key of keys) if (!ENVELOPE_KEYS.has(key)) throw new InvalidMessageError(`a message has a field ${JSON.stringify(key.slice(0, 100))} its envelope does not declare`);
  // a plain copy of what was read: later reads run no getter of the caller's
  const out = { protocol: PROTOCOL, version: PROTOCOL_VERSION, kind: e.kind, from: e.from, round: e.round as number } as Message;
  // absent means one user (and no run): the copy says so only when the sender did
  if (e.users !== undefined) out.users = e.users;
  if (e.run !== undefined) out.run = e.run;
  if (privacy !== undefined) out.privacy = privacy;
  // payload last, as the sender's messages have it (set in this order, not copied again: this runs several times per reply)
  out.payload = e.payload;
  return out;
}

/** How many users a checked message stands for (absent: one). */
export function usersOf(m: Message): number {
  return m.users ?? 1;
}
