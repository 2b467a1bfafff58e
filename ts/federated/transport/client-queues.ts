/**
 * Bounded client queues on the embedded broker (Node only). aedes keeps every
 * QoS 1 message for a persistent session (clean: false) in its in-memory
 * persistence until the client acknowledges it (PUBACK), with no limit: a
 * client gone for good, or one that stays connected and never acknowledges,
 * would have the broker keep every request of the rest of the run.
 *
 * Where a message enters and leaves that queue (aedes 1.2 and
 * aedes-persistence 11, read from their sources):
 * - every QoS 1 publish is first stored for every persistent subscription it
 *   matches, the client connected or not (outgoingEnqueueCombi; outgoingEnqueue
 *   for a message the broker publishes to one client); only then is it handed
 *   to the connected ones, whose delivery (outgoingUpdate) gives the stored
 *   copy its packet id, found by brokerId and brokerCounter. An update adds
 *   nothing, and a message sent again on reconnect is that stored copy updated
 *   again: it is counted once, when it is stored;
 * - it leaves by outgoingClearMessageId alone: the client's PUBACK, a delivery
 *   refused by authorizeForward, or a clean session taking over.
 *
 * boundClientQueues counts each client's queue there, messages and bytes
 * (payload and topic), and caps it at `maxOfflineMessages` and
 * `maxOfflineBytes`:
 * - for every client while it is not connected;
 * - for a connected client whose account is capped (a client account, not the
 *   server's, which is trusted and holds many replies at once): what it has
 *   not acknowledged counts. A connected client whose queue is empty always
 *   gets the next message, whatever its size: an honest client, which
 *   acknowledges each message as it receives it (mqtt.js does), is never
 *   starved, and its queue holds a message or two.
 * A new message beyond the cap is dropped for that client (the newest, as
 * mosquitto drops new messages past max_queued_messages), counted by client
 * (`dropped()`), and logged at the first drop of an episode and at its end:
 * the client's return for one that was away, its next acknowledgement for one
 * that was connected. Messages on topics the client may not receive (its
 * grants) are not queued for it at all.
 *
 * A message dropped for a connected client is not stored, but aedes still
 * hands it to the client's delivery: `forward()` (for authorizeForward) says
 * it must not go out. aedes then clears it by a packet without an id, which
 * aedes-persistence would match with the oldest stored message still without
 * one (another message, in the middle of its delivery): that clear is
 * skipped.
 */

/** The per-client caps, as resolveBrokerLimits gives them. */
export interface ClientQueueLimits {
  maxOfflineMessages: number;
  maxOfflineBytes: number;
}

/** A queued message as aedes hands it over (aedes-packet's Packet). */
interface QueuedPacket {
  topic?: string;
  payload?: Uint8Array | string;
  brokerCounter?: number;
  messageId?: number;
}

/** The part of aedes' persistence that queues messages for clients. */
interface OutgoingPersistence {
  outgoingEnqueue(sub: { clientId: string }, packet: QueuedPacket): Promise<unknown>;
  outgoingEnqueueCombi(subs: { clientId: string }[], packet: QueuedPacket): Promise<unknown>;
  outgoingClearMessageId(client: { id: string }, packet: QueuedPacket): Promise<QueuedPacket | undefined>;
}

/** What a client's queue holds. */
export interface QueueSize {
  messages: number;
  /** payloads and topics */
  bytes: number;
}

/** The clients as the broker knows them. */
export interface QueueOwners {
  /** whether client `id` is connected now */
  connected(id: string): boolean;
  /** whether `id`'s queue is capped while it is connected too (client accounts, not the server's) */
  capped(id: string): boolean;
  /** whether `id` may receive messages on `topic` (its grants) */
  receives(id: string, topic: string): boolean;
}

export interface ClientQueues {
  /** messages dropped so far because the client's queue was full (while it was away, or did not acknowledge), by client id */
  dropped(): Record<string, number>;
  /** what each client's queue holds now (sent and not acknowledged, or waiting for it), by client id; empty queues left out */
  queued(): Record<string, QueueSize>;
  /** for authorizeForward: false when this message was dropped for client `id`, which must then not be sent it */
  forward(id: string, packet: QueuedPacket): boolean;
  /** `id` is connected again: ends an episode of drops while it was away */
  back(id: string): void;
  /** `id` acknowledged a message: ends an episode of drops while it was connected */
  acknowledged(id: string): void;
}

/**
 * Messages dropped for a connected client that aedes is still to hand to its
 * delivery, at most this many each (the oldest forgotten first). Each is
 * forgotten when aedes clears it after the delivery refused it, within the
 * same publish; one whose client left meanwhile never is, and must not pile up.
 */
const PENDING_DROPS = 4096;

/** What a queued message costs: its payload and its topic. */
function sizeOf(packet: QueuedPacket): number {
  const payload = packet.payload;
  const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : (payload?.byteLength ?? 0);
  return bytes + (typeof packet.topic === 'string' ? Buffer.byteLength(packet.topic) : 0);
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/**
 * Counts and caps the queue of every client in aedes' `persistence`, replacing
 * its enqueue and clear methods in place; `log` is told of each episode of drops.
 */
export function boundClientQueues(persistence: unknown, owners: QueueOwners, limits: ClientQueueLimits, log: (message: string) => void): ClientQueues {
  const p = persistence as OutgoingPersistence;
  const enqueue = p.outgoingEnqueue.bind(p);
  const enqueueCombi = p.outgoingEnqueueCombi.bind(p);
  const clear = p.outgoingClearMessageId.bind(p);
  const queued = new Map<string, QueueSize>();
  const dropped = new Map<string, number>();
  /** the episode of drops each client is in: begun while it was away or connected, and its drops so far */
  const episodes = new Map<string, { away: boolean; drops: number }>();
  /** brokerCounters of messages dropped for each client, until aedes clears them after their delivery is refused */
  const pending = new Map<string, Set<number>>();

  const drop = (id: string, q: QueueSize, packet: QueuedPacket, connected: boolean): void => {
    dropped.set(id, (dropped.get(id) ?? 0) + 1);
    // only a connected client's delivery is handed the message: one away never asks
    if (connected && typeof packet.brokerCounter === 'number') {
      const ids = pending.get(id) ?? new Set<number>();
      pending.set(id, ids);
      ids.add(packet.brokerCounter);
      if (ids.size > PENDING_DROPS) ids.delete(ids.values().next().value as number);
    }
    let episode = episodes.get(id);
    if (!episode) {
      episode = { away: !connected, drops: 0 };
      episodes.set(id, episode);
      const held = `${q.messages} messages, ${q.bytes} bytes; limits ${limits.maxOfflineMessages} messages, ${limits.maxOfflineBytes} bytes`;
      log(
        connected
          ? `${id} does not acknowledge its messages: its queue is full (${held}): new messages for it are dropped until it acknowledges`
          : `the offline queue of ${id} is full (${held}): new messages for it are dropped until it reconnects`,
      );
    }
    episode.drops += 1;
  };

  /** Whether `packet` may join `id`'s queue; counted when it does, counted as dropped when it is refused for being full. */
  const admit = (id: string, packet: QueuedPacket, size: number): boolean => {
    if (typeof packet.topic !== 'string' || !owners.receives(id, packet.topic)) return false;
    const q = queued.get(id) ?? { messages: 0, bytes: 0 };
    const connected = owners.connected(id);
    const full = q.messages + 1 > limits.maxOfflineMessages || q.bytes + size > limits.maxOfflineBytes;
    // connected: capped for a client account only, and never below one message
    const capped = !connected || (owners.capped(id) && q.messages > 0);
    if (full && capped) {
      drop(id, q, packet, connected);
      return false;
    }
    q.messages += 1;
    q.bytes += size;
    queued.set(id, q);
    return true;
  };

  /** Whether `packet` (no packet id: a delivery refused) is one dropped for `id`, now forgotten: nothing was stored to clear. */
  const wasDropped = (id: string, packet: QueuedPacket): boolean => {
    const ids = pending.get(id);
    if (packet.messageId !== undefined || typeof packet.brokerCounter !== 'number' || !ids?.delete(packet.brokerCounter)) return false;
    if (ids.size === 0) pending.delete(id);
    return true;
  };

  p.outgoingEnqueue = (sub, packet) => (admit(sub.clientId, packet, sizeOf(packet)) ? enqueue(sub, packet) : Promise.resolve());
  p.outgoingEnqueueCombi = (subs, packet) => {
    const size = sizeOf(packet);
    return enqueueCombi(
      subs.filter((s) => admit(s.clientId, packet, size)),
      packet,
    );
  };
  p.outgoingClearMessageId = async (client, packet) => {
    if (wasDropped(client.id, packet)) return undefined;
    const removed = await clear(client, packet);
    const q = queued.get(client.id);
    if (removed && q) {
      q.messages = Math.max(0, q.messages - 1);
      q.bytes = Math.max(0, q.bytes - sizeOf(removed));
      if (q.messages === 0) queued.delete(client.id);
    }
    return removed;
  };

  return {
    dropped: () => Object.fromEntries(dropped),
    queued: () => Object.fromEntries([...queued].map(([id, q]) => [id, { ...q }])),
    forward: (id, packet) => typeof packet.brokerCounter !== 'number' || pending.get(id)?.has(packet.brokerCounter) !== true,
    back(id) {
      const episode = episodes.get(id);
      if (!episode?.away) return;
      episodes.delete(id);
      log(`${id} is back: ${plural(episode.drops, 'message was', 'messages were')} dropped for it while it was away (its offline queue was full)`);
    },
    acknowledged(id) {
      const episode = episodes.get(id);
      if (!episode) return;
      episodes.delete(id);
      log(`${id} acknowledges again: ${plural(episode.drops, 'message was', 'messages were')} dropped for it while its queue was full`);
    },
  };
}
