import type { BrokerAccount } from '../ts/federated/transport/topics.js';

interface BenchMosquitto {
  readonly url: string;
  readonly pid: number;
  log(): string;
  close(): Promise<void>;
}

export const BRIDGE_USER: string;
/** The bridge section of the edge broker's mosquitto.conf. */
export function bridgeSection(options: { federation: string; remote: string; password: string }): string[];
/** The server broker's access-list lines for the bridge account. */
export function bridgeAcl(federation: string): string[];
/** Two mosquittos bridged for a federation: the server's broker and the clients' (edge) broker. */
export function startBridgedMosquittos(options: { federation: string; users: readonly BrokerAccount[]; bridgePassword?: string }): Promise<{
  serverBroker: BenchMosquitto;
  edgeBroker: BenchMosquitto;
  close(): Promise<void>;
}>;
