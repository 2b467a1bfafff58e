/**
 * Riding out a lost connection to the broker (a restart, a network cut), for
 * both ends of a federation over MQTT: mqtt.js reconnects, here with a
 * doubling delay (250 ms, 500 ms, ... at most 4 s between attempts), for up to
 * a window of time; past it, or when the broker refuses the reconnection (its
 * CONNACK says no: credentials changed), the owner is told it gave up, with a
 * BrokerError saying why. No Node APIs: browser clients use it too.
 */
import { BrokerError, formatThrown } from '../../errors.js';

/** The parts of an mqtt.js client this needs. */
export interface ReconnectingClient {
  on(event: 'close' | 'connect' | 'reconnect' | 'error', cb: (...a: unknown[]) => void): unknown;
  options: { reconnectPeriod?: number };
}

export interface ConnectionEvents {
  /** the connection was lost: reconnecting */
  lost(): void;
  /** connected again after `seconds` away */
  back(seconds: number): void;
  /** no more attempts: the window passed, or the broker refused the reconnection */
  gaveUp(error: BrokerError): void;
}

/** The first delay before a reconnection attempt, and the longest. */
export const FIRST_RECONNECT_DELAY_MS = 250;
export const MAX_RECONNECT_DELAY_MS = 4000;

/**
 * Keeps `client` connected: from now on a lost connection is retried with
 * backoff for up to `windowMs`. Returns stop(), which ends the retrying (the
 * owner closes the connection itself).
 */
export function keepConnected(client: ReconnectingClient, windowMs: number, events: ConnectionEvents): { stop(): void; readonly down: boolean } {
  let stopped = false;
  let since: number | undefined;
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  client.options.reconnectPeriod = FIRST_RECONNECT_DELAY_MS;
  const stop = () => {
    stopped = true;
    clearTimeout(giveUp);
    client.options.reconnectPeriod = 0;
  };
  const fail = (error: BrokerError) => {
    if (stopped) return;
    stop();
    events.gaveUp(error);
  };
  client.on('close', () => {
    if (stopped || since !== undefined) return;
    since = Date.now();
    giveUp = setTimeout(() => fail(new BrokerError(`the connection to the MQTT broker was lost and did not come back within ${windowMs / 1000} s`)), windowMs);
    events.lost();
  });
  // each attempt: the next one waits twice as long (mqtt.js reads the period when an attempt fails)
  client.on('reconnect', () => {
    client.options.reconnectPeriod = Math.min(2 * (client.options.reconnectPeriod || FIRST_RECONNECT_DELAY_MS), MAX_RECONNECT_DELAY_MS);
  });
  client.on('connect', () => {
    if (stopped || since === undefined) return;
    clearTimeout(giveUp);
    const seconds = (Date.now() - since) / 1000;
    since = undefined;
    client.options.reconnectPeriod = FIRST_RECONNECT_DELAY_MS;
    events.back(seconds);
  });
  // a CONNACK refusal (a numeric code) is final: mqtt.js does not try again after one
  client.on('error', (e) => {
    if (since !== undefined && typeof (e as { code?: unknown })?.code === 'number') fail(new BrokerError(`the MQTT broker refused the reconnection: ${formatThrown(e)}`));
  });
  return {
    stop,
    get down() {
      return since !== undefined;
    },
  };
}

/** A change of the connection to the broker, as the server and the clients report it. */
export interface ConnectionChange {
  /** lost: reconnecting; back: connected again; gave-up: the reconnect window passed or the broker refused */
  state: 'lost' | 'back' | 'gave-up';
  /** seconds away, when back */
  seconds?: number;
  /** one line for a log */
  message: string;
}

/** A ConnectionChange with its log line. */
export function connectionChange(state: ConnectionChange['state'], windowMs: number, seconds?: number, reason?: string): ConnectionChange {
  const message =
    state === 'lost'
      ? `the connection to the MQTT broker was lost; reconnecting for up to ${windowMs / 1000} s`
      : state === 'back'
        ? `connected to the MQTT broker again after ${seconds!.toFixed(1)} s`
        : (reason ?? `the connection to the MQTT broker did not come back within ${windowMs / 1000} s`);
  return seconds === undefined ? { state, message } : { state, seconds, message };
}
