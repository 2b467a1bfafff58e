/**
 * Helpers of in-process simulations (the runners that wire clients and a
 * server together). A real federation configures its dimension; a simulation
 * takes the one most clients' data have, so that a first client with the wrong
 * number of features is the one turned away, not everyone after it.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { FedmixError } from '../errors.js';
import type { Encoding } from './messages/codec.js';
import type { ClientRole, ExcludedClient, ServerRole } from './runtime/roles.js';
import { runFederationSync, type FederationResult, type RunOptions } from './runtime/run.js';
import { InProcessTransport } from './transport/in-process.js';

/**
 * The clients of a simulation, made one by one with ids "0", "1", ...: one
 * whose creation fails with a FedmixError never joins and is reported with
 * its reason (`failOnBad`: the error goes on), as the runtime reports a
 * client it excludes; a WASM error always goes on. If anything throws, the
 * clients already made are disposed.
 */
export function makeClients<C extends { dispose(): void }>(count: number, make: (i: number, id: string) => C, failOnBad: boolean): { clients: C[]; unborn: ExcludedClient[] } {
  const clients: C[] = [];
  const unborn: ExcludedClient[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const id = String(i);
      try {
        clients.push(make(i, id));
      } catch (e) {
        if (!(e instanceof FedmixError) || e.code === 'WASM' || failOnBad) throw e;
        unborn.push({ client: id, round: 0, reason: `creating the client failed: ${e.message}` });
      }
    }
  } catch (e) {
    for (const c of clients) c.dispose();
    throw e;
  }
  return { clients, unborn };
}

/** The most common number of columns among the clients' data (the smallest on ties). */
export function majorityDimension(clientData: MatrixLike[]): number | undefined {
  const counts = new Map<number, number>();
  for (const x of clientData) {
    try {
      const d = Matrix.from(x).nCols;
      counts.set(d, (counts.get(d) ?? 0) + 1);
    } catch {
      // unreadable data fails later, in its client, with its own error
    }
  }
  let best: number | undefined;
  for (const [d, n] of counts) if (best === undefined || n > counts.get(best)! || (n === counts.get(best)! && d < best)) best = d;
  return best;
}

/**
 * A simulation wired and not yet run: its server, its clients (disposed after
 * the run), the runtime's options and how the run becomes the one-call
 * function's result. runSimulation runs it in process; simulateOverMqtt
 * (Node, federated/simulate-mqtt.ts) runs the same roles as MQTT clients of a
 * broker, so a one-call function gives the same result over either.
 */
export interface Simulation<M, R> {
  server: ServerRole<unknown, M>;
  clients: readonly (ClientRole & { dispose(): void })[];
  run: RunOptions;
  /** the wire form of the messages (default 'binary'; 'none' in process only) */
  encoding?: Encoding | 'none';
  finish(run: FederationResult<M>): R;
}

/** Runs a simulation in process (the one-call functions' default) and disposes its clients. */
export function runSimulation<M, R>(s: Simulation<M, R>): R {
  try {
    return s.finish(runFederationSync(s.server, new InProcessTransport(s.clients, { encoding: s.encoding }), s.run));
  } finally {
    for (const c of s.clients) c.dispose();
  }
}
