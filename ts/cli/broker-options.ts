/**
 * `fedmix server`'s options for the broker it hosts: TLS and the limits per
 * connection (transport/limits.ts), as flags and as serve()'s `listen`.
 */
import { readFileSync } from 'node:fs';
import { formatThrown, InvalidParameterError } from '../errors.js';
import type { BrokerLimits } from '../federated/transport/limits.js';
import type { OptionSpec, Options } from './args.js';

export const BROKER_OPTIONS: Record<string, OptionSpec> = {
  'tls-cert': { type: 'string', help: 'embedded broker: PEM file of its certificate (chain); with --tls-key, every listener is TLS (mqtts://, wss://)' },
  'tls-key': { type: 'string', help: "embedded broker: PEM file of the certificate's private key" },
  'max-packet-bytes': { type: 'int', help: "embedded broker: largest MQTT packet of a logged-in client (default: the 64 MiB message limit + 64 KiB); a larger one closes the connection before its body is read" },
  'max-connect-bytes': { type: 'int', help: 'embedded broker: largest packet before the login is accepted, the CONNECT included (default 65536)' },
  'connect-timeout': { type: 'number', help: 'embedded broker: seconds a connection has to log in (default 10)' },
  'max-inflight': { type: 'int', help: 'embedded broker: inbound QoS 2 messages in flight per client (default 20)' },
  'max-queued': { type: 'int', help: 'embedded broker: packets a client may send before its login is done (default 100)' },
  'max-offline-messages': { type: 'int', help: 'embedded broker: messages held for a client while it is disconnected, or connected but not acknowledging them (client accounts; default 100); newer ones are dropped, counted and logged' },
  'max-offline-bytes': { type: 'int', help: 'embedded broker: bytes held for a client, as for --max-offline-messages (default: the packet limit, one message of the largest size)' },
};

/** A PEM file's text; a file that cannot be read is an InvalidParameterError naming the option. */
export function readPem(path: string, option: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InvalidParameterError(`${option} ${path} cannot be read: ${formatThrown(e)}`);
  }
  if (!text.includes('-----BEGIN')) throw new InvalidParameterError(`${option} ${path} is not a PEM file (no -----BEGIN line)`);
  return text;
}

/** serve()'s `listen.tls` and `listen.limits` from the command line (only what was given). */
export function brokerListenOptions(o: Options): { tls?: { cert: string; key: string }; limits?: BrokerLimits } {
  const cert = o['tls-cert'];
  const key = o['tls-key'];
  if ((cert === undefined) !== (key === undefined)) throw new InvalidParameterError('--tls-cert and --tls-key go together');
  const limits: BrokerLimits = {};
  const names: [string, keyof BrokerLimits][] = [
    ['max-packet-bytes', 'maxPacketBytes'],
    ['max-connect-bytes', 'maxConnectBytes'],
    ['connect-timeout', 'connectTimeout'],
    ['max-inflight', 'maxInflightMessages'],
    ['max-queued', 'maxQueuedMessages'],
    ['max-offline-messages', 'maxOfflineMessages'],
    ['max-offline-bytes', 'maxOfflineBytes'],
  ];
  for (const [flag, name] of names) if (o[flag] !== undefined) limits[name] = o[flag] as number;
  return {
    ...(typeof cert === 'string' && typeof key === 'string' ? { tls: { cert: readPem(cert, '--tls-cert'), key: readPem(key, '--tls-key') } } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
}
