/**
 * simulateOverMqtt (Node): a simulation's run over an MQTT broker instead of
 * in process. Its server runs on the MQTT transport as `fedmix server` does
 * (openFederation: the embedded broker on a free port of 127.0.0.1, or an
 * existing one) and every simulated client joins as an MQTT client, as
 * `fedmix client` does (join), here in this process: the same roles, the same
 * order of clients, the same seeds, so the result is the in-process one with
 * every message having crossed the broker.
 */
import { randomBytes } from 'node:crypto';
import { FederationError, formatValue, InvalidParameterError } from '../errors.js';
import { readOptions, requireSeconds } from '../validate.js';
import { runFederation } from './runtime/run.js';
import { openFederation, type FederationBroker } from './serve.js';
import type { Simulation } from './simulation.js';
import { join } from './transport/mqtt.js';
import { validateId } from './transport/topics.js';

export interface SimulateOverMqttOptions {
  /**
   * an existing broker: its URL, the server's account, and the password of
   * every simulated client (each logs in with its id, "0", "1", ..., as its
   * username); default: the embedded broker, with generated accounts
   */
  broker?: { url: string; username?: string; password?: string; clientPassword?: string };
  /** the federation's name: its topics live under fedmix/<federation>/ (default 'simulation') */
  federation?: string;
  /** seconds a round waits for replies (default 600: the clients compute one after another in this process) */
  roundTimeout?: number;
}

/** Runs `s` over an MQTT broker and disposes its clients; the result is what runSimulation would return. */
export async function simulateOverMqtt<M, R>(s: Simulation<M, R>, given: SimulateOverMqttOptions = {}): Promise<R> {
  try {
    if (given === null || typeof given !== 'object') throw new InvalidParameterError(`options must be { broker, federation, roundTimeout }, got ${formatValue(given)}`);
    const options = readOptions(given, ['broker', 'federation', 'roundTimeout']) as SimulateOverMqttOptions;
    const existing = options.broker === undefined ? undefined : (readOptions(options.broker, ['url', 'username', 'password', 'clientPassword'], 'broker') as NonNullable<SimulateOverMqttOptions['broker']>);
    const federation = validateId('federation', options.federation ?? 'simulation');
    const roundTimeout = requireSeconds('roundTimeout', options.roundTimeout ?? 600);
    if (s.encoding === 'none') throw new InvalidParameterError("encoding 'none' is in process only; over a broker messages are 'binary' or 'json'");
    if (existing?.clientPassword !== undefined && typeof existing.clientPassword !== 'string') throw new InvalidParameterError(`broker.clientPassword must be a string, got ${formatValue(existing.clientPassword)}`);
    const clients = s.clients.map((c) => ({ role: c, id: c.id, password: existing ? existing.clientPassword : randomBytes(18).toString('base64url') }));
    let fed: FederationBroker | undefined;
    try {
      fed = await openFederation({
        federation,
        clients: clients.map(({ id, password }) => ({ id, password })),
        broker: existing && { url: existing.url, username: existing.username, password: existing.password },
        listen: { host: '127.0.0.1', port: 0 },
        encoding: s.encoding,
      });
      const url = fed.url;
      const leave = new AbortController();
      const joins = clients.map((c) => join({ url, federation, client: c.role, password: c.password, signal: leave.signal }));
      // a client that cannot join (refused by the broker) ends the run now, not after the join timeout
      const refused = new Promise<never>((_, reject) => joins.forEach((j) => j.catch(reject)));
      const running = runFederation(s.server, fed.transport, { ...s.run, minClients: Math.max(1, clients.length), roundTimeout });
      running.catch(() => undefined);
      let result;
      try {
        result = await Promise.race([running, refused]);
      } catch (e) {
        leave.abort();
        await Promise.allSettled(joins);
        // the server's side ends too (its run may still be waiting for clients), and is awaited
        await fed.transport.finish({ ok: false, reason: e instanceof Error ? e.message : String(e) }, 1000);
        await running.catch(() => undefined);
        throw e;
      }
      // every client ends when the server says the run is over
      const ended = await Promise.all(joins);
      const bad = ended.find((r) => !r.ok);
      if (bad) throw new FederationError(`a client saw the run end with an error: ${bad.reason ?? 'no reason given'}`);
      return s.finish(result);
    } finally {
      await fed?.close();
    }
  } finally {
    for (const c of s.clients) c.dispose();
  }
}
