/**
 * The MQTT topics of a federation and who may use them. One table of grants
 * (`topicGrants`) is the access list: `mayAccess` judges against it for the
 * embedded broker, and `mosquittoAcl` writes it out for mosquitto, so both
 * brokers enforce the same rules.
 *
 * No Node APIs here: browser clients use the topic names too.
 *
 *   fedmix/F/server/status       server -> all   retained "online"; its last will "offline"
 *   fedmix/F/broadcast           server -> all
 *   fedmix/F/clients/X/down      server -> X     requests, QoS 1
 *   fedmix/F/clients/X/up        X -> server     replies, QoS 1
 *   fedmix/F/clients/X/status    X -> server     "online" on connect; its last will "offline"
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { isArray, readArray, readRecord } from '../../validate.js';

export const TOPIC_ROOT = 'fedmix';

/** Payloads of the status topics. */
export const ONLINE = 'online';
export const OFFLINE = 'offline';

/** Federation ids, client ids and usernames; no MQTT wildcard, separator or `$`. */
const ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * `id` if it is a valid federation id, client id or username
 * ([A-Za-z0-9_.-], 1 to 64 characters); `what` names it in the error.
 */
export function validateId(what: string, id: unknown): string {
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new InvalidParameterError(`${typeof what === 'string' ? what : 'an id'} must be 1 to 64 characters of [A-Za-z0-9_.-], got ${formatValue(id)}`);
  }
  return id;
}

export interface FederationTopics {
  readonly federation: string;
  /** server -> all, retained: ONLINE, or OFFLINE (the server's last will) */
  readonly serverStatus: string;
  /** server -> all clients */
  readonly broadcast: string;
  /** filters over every client's topics: the server publishes `allDown` and subscribes the others */
  readonly allDown: string;
  readonly allUp: string;
  readonly allStatus: string;
  /** server -> client `id` (requests) */
  down(id: string): string;
  /** client `id` -> server (replies) */
  up(id: string): string;
  /** client `id` -> server: ONLINE on connect, OFFLINE as its last will */
  status(id: string): string;
}

/** The topic names of federation `federation`; client ids are validated. */
export function federationTopics(federation: string): FederationTopics {
  const base = `${TOPIC_ROOT}/${validateId('federation', federation)}`;
  const client = (id: string, leaf: string): string => `${base}/clients/${validateId('client id', id)}/${leaf}`;
  return {
    federation,
    serverStatus: `${base}/server/status`,
    broadcast: `${base}/broadcast`,
    allDown: `${base}/clients/+/down`,
    allUp: `${base}/clients/+/up`,
    allStatus: `${base}/clients/+/status`,
    down: (id) => client(id, 'down'),
    up: (id) => client(id, 'up'),
    status: (id) => client(id, 'status'),
  };
}

/** The topics one client uses: what it subscribes (down, broadcast, serverStatus) and publishes (up, status). */
export interface ClientTopics {
  readonly down: string;
  readonly broadcast: string;
  readonly serverStatus: string;
  readonly up: string;
  readonly status: string;
}

export function clientTopics(federation: string, clientId: string): ClientTopics {
  const t = federationTopics(federation);
  return { down: t.down(clientId), broadcast: t.broadcast, serverStatus: t.serverStatus, up: t.up(clientId), status: t.status(clientId) };
}

export type BrokerRole = 'server' | 'client';

/** A broker user: a client's username is its client id. */
export interface BrokerUser {
  readonly username: string;
  readonly role: BrokerRole;
}

/** A user with its password, as a broker is configured. */
export interface BrokerAccount extends BrokerUser {
  readonly password: string;
}

export type TopicAction = 'publish' | 'subscribe';

/** One line of the access list: `user` may `action` topics matching `filter`. */
export interface TopicGrant {
  readonly action: TopicAction;
  readonly filter: string;
}

/** The user, read once and checked: a plain { username, role } (and password, when it has one). */
function validateUser<U extends BrokerUser>(given: U): U {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`a user must be { username, role }, got ${formatValue(given)}`);
  const user = readRecord(given as unknown as BrokerAccount, ['username', 'role', 'password'], 'user') as unknown as U;
  validateId('username', user.username);
  if (user.role !== 'server' && user.role !== 'client') {
    throw new InvalidParameterError(`role of ${user.username} must be 'server' or 'client', got ${formatValue(user.role)}`);
  }
  return user;
}

/** Everything `user` may do in `federation`; nothing else is allowed. */
export function topicGrants(federation: string, given: BrokerUser): TopicGrant[] {
  const user = validateUser(given);
  const t = federationTopics(federation);
  if (user.role === 'server') {
    return [
      { action: 'publish', filter: t.allDown },
      { action: 'publish', filter: t.broadcast },
      { action: 'publish', filter: t.serverStatus },
      { action: 'subscribe', filter: t.allUp },
      { action: 'subscribe', filter: t.allStatus },
    ];
  }
  const c = clientTopics(federation, user.username);
  return [
    { action: 'publish', filter: c.up },
    { action: 'publish', filter: c.status },
    { action: 'subscribe', filter: c.down },
    { action: 'subscribe', filter: c.broadcast },
    { action: 'subscribe', filter: c.serverStatus },
  ];
}

const MAX_TOPIC_BYTES = 65535;
const utf8 = new TextEncoder();

function wellFormed(topic: unknown): topic is string {
  return typeof topic === 'string' && topic.length > 0 && !topic.includes('\u0000') && utf8.encode(topic).length <= MAX_TOPIC_BYTES;
}

/** A topic a message can be published to: no wildcards. */
export function isTopicName(topic: unknown): topic is string {
  return wellFormed(topic) && !topic.includes('+') && !topic.includes('#');
}

/** A subscription filter: `+` only as a whole level, `#` only as the whole last level. */
export function isTopicFilter(filter: unknown): filter is string {
  if (!wellFormed(filter)) return false;
  const levels = filter.split('/');
  return levels.every((l, i) => (l.includes('+') ? l === '+' : true) && (l.includes('#') ? l === '#' && i === levels.length - 1 : true));
}

/** Whether `filter` matches topic name `topic` (MQTT 3.1.1 §4.7, `$` topics included). */
export function topicMatches(filter: string, topic: string): boolean {
  return filterCovers(filter, topic);
}

/**
 * Whether every topic `requested` can match is also matched by `granted`: a
 * subscription to `requested` then receives nothing `granted` does not allow.
 * A topic name is a filter matching only itself, so this also matches topics.
 */
export function filterCovers(granted: string, requested: string): boolean {
  // [MQTT-4.7.2-1]: a filter starting with a wildcard does not match $ topics
  if (requested.startsWith('$') && (granted.startsWith('+') || granted.startsWith('#'))) return false;
  const g = granted.split('/');
  const r = requested.split('/');
  for (let i = 0; i < g.length; i++) {
    if (g[i] === '#') return true; // also matches the parent level: a/# matches a
    if (i >= r.length) return false;
    if (r[i] === '#') return false; // requested spans levels that `granted` fixes
    if (g[i] === '+') continue; // any one level, a literal or `+`
    if (g[i] !== r[i]) return false;
  }
  return r.length === g.length;
}

/**
 * Whether `user` may publish to `topic` (a topic name) or subscribe to `topic`
 * (a filter, wildcards allowed) in `federation`. The topic comes from the
 * network, so a malformed one is refused, never thrown; a bad federation or user
 * is the caller's error and throws InvalidParameterError.
 */
export function mayAccess(federation: string, user: BrokerUser, topic: string, action: TopicAction): boolean {
  return accessRule(federation, user)(topic, action);
}

/**
 * `mayAccess` for one user, its grants computed once: what a broker asks on
 * every message it forwards.
 */
export function accessRule(federation: string, user: BrokerUser): (topic: string, action: TopicAction) => boolean {
  const grants = topicGrants(federation, user);
  const publish = grants.filter((g) => g.action === 'publish').map((g) => g.filter);
  const subscribe = grants.filter((g) => g.action === 'subscribe').map((g) => g.filter);
  return (topic, action) => {
    if (action === 'publish') return isTopicName(topic) && publish.some((f) => filterCovers(f, topic));
    if (action === 'subscribe') return isTopicFilter(topic) && subscribe.some((f) => filterCovers(f, topic));
    throw new InvalidParameterError(`action must be 'publish' or 'subscribe', got ${formatValue(action)}`);
  };
}

/**
 * The accounts of a broker, checked: valid and distinct usernames, a role each,
 * and a password that a mosquitto password file can hold (one line, non-empty).
 */
export function validateAccounts(given: readonly BrokerAccount[]): readonly BrokerAccount[] {
  const accounts = isArray('users', given) ? readArray('users', given).map((a) => validateUser(a as BrokerAccount)) : [];
  if (accounts.length === 0) {
    throw new InvalidParameterError('users must be a non-empty array of { username, password, role }');
  }
  const seen = new Set<string>();
  for (const a of accounts) {
    if (seen.has(a.username)) throw new InvalidParameterError(`username ${a.username} appears twice in users`);
    seen.add(a.username);
    if (typeof a.password !== 'string' || a.password.length === 0 || /[\r\n\u0000]/.test(a.password)) {
      throw new InvalidParameterError(`the password of ${a.username} must be a non-empty string without line breaks or NUL`);
    }
  }
  return accounts;
}

/**
 * mosquitto's acl_file for `federation`: one `user` block per user with its
 * grants (publish -> `topic write`, subscribe -> `topic read`). Explicit user
 * blocks rather than `pattern ... %u` lines, because patterns apply to every
 * user, the server's and other federations' included.
 */
export function mosquittoAcl(federation: string, given: readonly BrokerUser[]): string {
  validateId('federation', federation);
  const users = readArray('users', given).map((u) => validateUser(u as BrokerUser));
  const lines = [`# fedmix federation ${federation}: generated from topicGrants (ts/federated/transport/topics.ts)`];
  const seen = new Set<string>();
  for (const user of users) {
    if (seen.has(user.username)) throw new InvalidParameterError(`username ${user.username} appears twice in users`);
    seen.add(user.username);
    lines.push('', `user ${user.username}`);
    for (const g of topicGrants(federation, user)) lines.push(`topic ${g.action === 'publish' ? 'write' : 'read'} ${g.filter}`);
  }
  return lines.join('\n') + '\n';
}
