/**
 * What one connection may cost a federation's broker (Node only): packet sizes,
 * the time to log in, messages in flight and queued. The embedded broker
 * (broker.ts) enforces them itself; writeMosquittoConfig (mosquitto.ts) writes
 * mosquitto's equivalents. The defaults never refuse honest traffic: the
 * largest packet fedmix sends is a message of the codec's limit
 * (DEFAULT_MAX_MESSAGE_BYTES, 64 MiB) on a topic of at most 160 bytes, and
 * PACKET_OVERHEAD_BYTES leaves room for that and for MQTT 5 properties.
 */
import type { Duplex } from 'node:stream';
import { formatValue, InvalidParameterError } from '../../errors.js';
import { LIMITS, readOptions, requireInteger, requireSeconds } from '../../validate.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../messages/codec.js';

/** Room for an MQTT packet's headers around a message: fixed header, topic, packet id, MQTT 5 properties. */
export const PACKET_OVERHEAD_BYTES = 64 * 1024;

export interface BrokerLimits {
  /**
   * largest MQTT packet of a logged-in client, headers included (default: the
   * codec's 64 MiB message limit + 64 KiB); a larger one closes the connection
   * as soon as its fixed header announces it, before its body is read
   */
  maxPacketBytes?: number;
  /**
   * largest packet before the broker has accepted the login, the CONNECT
   * included (default 64 KiB; an honest CONNECT, with its will, is well under
   * 1 KiB). Embedded broker only: mosquitto has one limit for every packet.
   */
  maxConnectBytes?: number;
  /** seconds a connection has to log in (send its CONNECT and be accepted); default 10, a client's own connect timeout */
  connectTimeout?: number;
  /**
   * messages in flight per client (default 20): the embedded broker refuses
   * more inbound QoS 2 messages awaiting PUBREL (fedmix sends QoS 1 only);
   * mosquitto's max_inflight_messages (outgoing QoS 1 and 2)
   */
  maxInflightMessages?: number;
  /**
   * messages queued per client (default 100): on the embedded broker, the
   * packets a client may send before its login is done (aedes' queueLimit); on
   * mosquitto, the QoS 1 messages held for a client beyond those in flight
   * (max_queued_messages), e.g. while it is offline
   */
  maxQueuedMessages?: number;
  /**
   * mosquitto only: bytes queued per client (max_queued_bytes; default twice
   * maxPacketBytes, so a full-size request always fits)
   */
  maxQueuedBytes?: number;
  /**
   * embedded broker only: QoS 1 messages held for a client (its persistent
   * session's queue; default 100) while it is not connected, and for a client
   * account (not the server's) while it is connected but has not acknowledged
   * them (a connected client with an empty queue always gets the next one); a
   * new message beyond it is dropped for that client, counted and logged
   * (client-queues.ts). mosquitto's equivalent is maxQueuedMessages (with
   * maxInflightMessages for a connected client).
   */
  maxOfflineMessages?: number;
  /**
   * embedded broker only: bytes (payloads and topics) held for a client, as
   * above (default maxPacketBytes: one message of the largest size always
   * fits); beyond it a new message is dropped, as above. mosquitto's
   * equivalent is maxQueuedBytes.
   */
  maxOfflineBytes?: number;
}

export const BROKER_LIMIT_KEYS = ['maxPacketBytes', 'maxConnectBytes', 'connectTimeout', 'maxInflightMessages', 'maxQueuedMessages', 'maxQueuedBytes', 'maxOfflineMessages', 'maxOfflineBytes'] as const;

/** MQTT's largest remaining length (§2.2.3) plus the largest fixed header. */
const MQTT_MAX_PACKET = 268_435_455 + 5;

/**
 * The limits with their defaults, checked; `maxMessageBytes` (a run's message limit) raises the packet default to carry
 * it, and `queuedDefault` is maxQueuedMessages' default (mosquitto's scales with the accounts).
 */
export function resolveBrokerLimits(given: BrokerLimits | undefined, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES, queuedDefault = 100): Required<BrokerLimits> {
  if (given !== undefined && (given === null || typeof given !== 'object')) throw new InvalidParameterError(`limits must be { maxPacketBytes, maxConnectBytes, ... }, got ${formatValue(given)}`);
  const o = readOptions(given, BROKER_LIMIT_KEYS, 'limits');
  const maxPacketBytes = requireInteger('limits.maxPacketBytes', o.maxPacketBytes ?? Math.min(MQTT_MAX_PACKET, maxMessageBytes + PACKET_OVERHEAD_BYTES), 64, MQTT_MAX_PACKET);
  const maxConnectBytes = requireInteger('limits.maxConnectBytes', o.maxConnectBytes ?? Math.min(64 * 1024, maxPacketBytes), 64, maxPacketBytes);
  const connectTimeout = requireSeconds('limits.connectTimeout', o.connectTimeout ?? 10);
  if (connectTimeout > LIMITS.timeoutSeconds) throw new InvalidParameterError(`limits.connectTimeout must be at most ${LIMITS.timeoutSeconds} s, got ${formatValue(connectTimeout)}`);
  return {
    maxPacketBytes,
    maxConnectBytes,
    connectTimeout,
    maxInflightMessages: requireInteger('limits.maxInflightMessages', o.maxInflightMessages ?? 20, 1, 65535),
    maxQueuedMessages: requireInteger('limits.maxQueuedMessages', o.maxQueuedMessages ?? queuedDefault, 1, 2 ** 31 - 1),
    maxQueuedBytes: requireInteger('limits.maxQueuedBytes', o.maxQueuedBytes ?? 2 * maxPacketBytes, maxPacketBytes, Number.MAX_SAFE_INTEGER),
    maxOfflineMessages: requireInteger('limits.maxOfflineMessages', o.maxOfflineMessages ?? 100, 0, 2 ** 31 - 1),
    maxOfflineBytes: requireInteger('limits.maxOfflineBytes', o.maxOfflineBytes ?? maxPacketBytes, 0, Number.MAX_SAFE_INTEGER),
  };
}

/**
 * Watches the bytes a broker reads from `stream` and destroys it when a packet's
 * fixed header announces more than `limit()` bytes (the limit of that moment:
 * a connection not yet logged in has the smaller one). It reads each fixed
 * header as the broker reads the bytes (a 'data' listener next to the broker's
 * 'readable' one sees every chunk as read() returns it, before the MQTT parser
 * does), so a huge announced packet costs at most one chunk, never its body.
 * Calls `refused(announced, limit)` once when it closes the stream.
 */
export function guardPacketSizes(stream: Duplex, limit: () => number, refused: (announced: number, limit: number) => void): void {
  // the state of the packet being read: its fixed header's bytes, then its body
  let header = 0; // fixed header bytes read of the current packet (0: at a packet boundary)
  let remaining = 0; // remaining length decoded so far
  let multiplier = 1;
  let body = 0; // body bytes still to skip
  let closed = false;
  stream.on('data', (chunk: Buffer) => {
    if (closed) return;
    let i = 0;
    while (i < chunk.length) {
      if (body > 0) {
        const skip = Math.min(body, chunk.length - i);
        body -= skip;
        i += skip;
        continue;
      }
      const byte = chunk[i++]!;
      if (header === 0) {
        // the packet type byte; the remaining length follows
        header = 1;
        remaining = 0;
        multiplier = 1;
        continue;
      }
      header += 1;
      remaining += (byte & 0x7f) * multiplier;
      multiplier *= 128;
      const more = (byte & 0x80) !== 0;
      // a length byte that announces a fifth is malformed (the parser would refuse it): too large here
      const malformed = more && header === 5;
      if (more && !malformed) continue;
      const size = header + remaining;
      const max = limit();
      if (malformed || size > max) {
        closed = true;
        refused(malformed ? Infinity : size, max);
        stream.destroy();
        return;
      }
      body = remaining;
      header = 0;
    }
  });
}
