/**
 * Who is there, over MQTT: a client counts as online only while it is
 * connected and says so. No Node APIs: browser clients use it too.
 *
 * - A client's status messages are never retained: it says `online` when it
 *   connects (`reconnected: true` after a lost connection), answers every
 *   roll call, says `left` when the run is over, and its last will (not
 *   retained either) says `offline` when its connection drops.
 * - The server's retained `online` on its status topic is the roll call:
 *   connected clients get it when the server starts or comes back after a
 *   broker restart, and clients that connect later get it when they
 *   subscribe; each answers with its `online`.
 * - The server ignores a retained status message (a client that published
 *   one and disconnected is not there, nor is the client of an earlier run);
 *   the embedded broker refuses retained publishes from clients altogether
 *   (broker.ts). mosquitto's access list cannot refuse them: there they stay
 *   at the broker, ignored (the server's account may not publish on client
 *   topics, so it cannot clear them; `mosquitto_pub -r -n` can).
 */

/** What a client says on its status topic. */
export type ClientState = 'online' | 'offline' | 'left';

/** A client status message as a client publishes it (never retained). */
export function clientStatus(state: ClientState, reconnected = false): string {
  return JSON.stringify(reconnected ? { state, reconnected: true } : { state });
}

/**
 * Whether a status message is not presence: one the broker kept (retained,
 * delivered because the server subscribed), or the empty message that
 * clears one.
 */
export function isStaleStatus(payload: Uint8Array, retained: boolean): boolean {
  return retained || payload.length === 0;
}
