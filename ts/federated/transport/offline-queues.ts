/**
 * Bounded offline queues on the embedded broker (Node only). aedes keeps every
 * QoS 1 message for a persistent session (clean: false) in its in-memory
 * persistence until the client acknowledges it, with no limit: for a client
 * gone for good, the broker would keep every request of the rest of the run.
 *
 * boundOfflineQueues wraps that persistence so that a client that is not
 * connected holds at most `maxOfflineMessages` messages and `maxOfflineBytes`
 * bytes (payload and topic) in its queue. A new message beyond either is
 * dropped for that client, as mosquitto drops new messages past
 * max_queued_messages: a client away for many rounds misses requests it could
 * not have answered in time anyway, and the server asks it again once it is
 * back. Every drop is counted by client (`dropped()`); the first drop of an
 * absence and the count when the client returns are logged.
 *
 * A connected client is not limited here: its messages go out at once and
 * leave its queue as it acknowledges them. The queue is counted exactly: what
 * enters (outgoingEnqueue, outgoingEnqueueCombi) and what leaves
 * (outgoingClearMessageId, the only way aedes' memory persistence removes a
 * queued message).
 */

/** The per-client caps, as resolveBrokerLimits gives them. */
export interface OfflineQueueLimits {
  maxOfflineMessages: number;
  maxOfflineBytes: number;
}

/** A queued message as aedes hands it over (aedes-packet's Packet). */
interface QueuedPacket {
  topic?: string;
  payload?: Uint8Array | string;
}

/** The part of aedes' persistence that queues messages for clients. */
interface OutgoingPersistence {
  outgoingEnqueue(sub: { clientId: string }, packet: QueuedPacket): Promise<unknown>;
  outgoingEnqueueCombi(subs: { clientId: string }[], packet: QueuedPacket): Promise<unknown>;
  outgoingClearMessageId(client: { id: string }, packet: QueuedPacket): Promise<QueuedPacket | undefined>;
}

export interface OfflineQueues {
  /** messages dropped so far because the client's offline queue was full, by client id */
  dropped(): Record<string, number>;
  /** `id` is connected again: logs what it missed while away, if anything */
  back(id: string): void;
}

/** What a queued message costs: its payload and its topic. */
function sizeOf(packet: QueuedPacket): number {
  const payload = packet.payload;
  const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : (payload?.byteLength ?? 0);
  return bytes + (typeof packet.topic === 'string' ? Buffer.byteLength(packet.topic) : 0);
}

/**
 * Caps the queue of every client that is not connected (`online(id)` false)
 * in aedes' `persistence`, replacing its enqueue and clear methods in place.
 */
export function boundOfflineQueues(persistence: unknown, online: (id: string) => boolean, limits: OfflineQueueLimits, log: (message: string) => void): OfflineQueues {
  const p = persistence as OutgoingPersistence;
  const enqueue = p.outgoingEnqueue.bind(p);
  const enqueueCombi = p.outgoingEnqueueCombi.bind(p);
  const clear = p.outgoingClearMessageId.bind(p);
  const queued = new Map<string, { messages: number; bytes: number }>();
  const dropped = new Map<string, number>();
  /** drops of the current absence, by client (logged when it is back) */
  const away = new Map<string, number>();

  /** Whether `packet` may join `id`'s queue; counted when it does, counted as dropped when not. */
  const admit = (id: string, size: number): boolean => {
    const q = queued.get(id) ?? { messages: 0, bytes: 0 };
    if (!online(id) && (q.messages + 1 > limits.maxOfflineMessages || q.bytes + size > limits.maxOfflineBytes)) {
      dropped.set(id, (dropped.get(id) ?? 0) + 1);
      const n = (away.get(id) ?? 0) + 1;
      away.set(id, n);
      if (n === 1) {
        log(`the offline queue of ${id} is full (${q.messages} messages, ${q.bytes} bytes; limits ${limits.maxOfflineMessages} messages, ${limits.maxOfflineBytes} bytes): new messages for it are dropped until it reconnects`);
      }
      return false;
    }
    q.messages += 1;
    q.bytes += size;
    queued.set(id, q);
    return true;
  };

  p.outgoingEnqueue = (sub, packet) => (admit(sub.clientId, sizeOf(packet)) ? enqueue(sub, packet) : Promise.resolve());
  p.outgoingEnqueueCombi = (subs, packet) => {
    const size = sizeOf(packet);
    return enqueueCombi(
      subs.filter((s) => admit(s.clientId, size)),
      packet,
    );
  };
  p.outgoingClearMessageId = async (client, packet) => {
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
    back(id) {
      const n = away.get(id);
      if (n === undefined) return;
      away.delete(id);
      log(`${id} is back: ${n} message${n === 1 ? ' was' : 's were'} dropped for it while it was away (its offline queue was full)`);
    },
  };
}
