/**
 * Helpers of in-process simulations (the runners that wire clients and a
 * server together). A real federation configures its dimension; a simulation
 * takes the one its clients' data have, and a client with another number of
 * columns is the caller's error before the run, never a silent exclusion.
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { FedmixError, InvalidDataError, InvalidParameterError, restated } from '../errors.js';
import { LIMITS } from '../validate.js';
import type { Encoding } from './messages/codec.js';
import { resolvePolicy, type FederationPolicy } from './runtime/policy.js';
import type { ClientRole, ExcludedClient, ServerRole } from './runtime/roles.js';
import { readRunHooks, runFederationSync, type FederationResult, type RunHooks, type RunOptions } from './runtime/run.js';
import { InProcessTransport } from './transport/in-process.js';

/**
 * The clients of a simulation, made one by one with ids "0", "1", ...: one
 * whose creation fails with a FedmixError never joins and is reported with
 * its reason (`failOnBad`: the error goes on); passed to the runtime as
 * RunOptions.excludedBefore, it is excluded from the start and counts against
 * maxExcludedShare. A WASM error always goes on. If anything throws, the
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

/**
 * The number of features the clients' data have, checked before any client is
 * made: an empty client list, or a client whose column count differs from the
 * others' (or from `expected`, the federation's configured dimension), is the
 * caller's mistake, not a client to exclude; the error names the first such
 * client and the first client of the most common count. Data that cannot be
 * read, and a client without rows, are left to the client, which fails with
 * its own error (and is excluded, or the run fails); when no client's data
 * can be read, the first client's error is thrown. `idOf` names client i as
 * the one-call function does (default "client 3"; "client-3").
 */
export function clientFeatures(name: string, data: readonly MatrixLike[], options: { expected?: { nFeatures: number; what: string }; idOf?: (i: number) => string } = {}): number {
  if (data.length === 0) throw new InvalidParameterError(`${name} is empty: give one data matrix per client`);
  const idOf = options.idOf ?? ((i: number) => `client ${i}`);
  const who = (i: number) => `${idOf(i)} (${name}[${i}])`;
  // an expected dimension that is not a count is the server's to refuse, with its own message
  const n = options.expected?.nFeatures;
  if (options.expected && !(Number.isInteger(n) && n! >= 1 && n! <= LIMITS.features)) return n as number;
  const expected = options.expected;
  /** the column count of each client with rows; a first readable one without rows, and a first unreadable one */
  const columns: { i: number; d: number }[] = [];
  let rowless: number | undefined;
  let unreadable: { i: number; error: unknown } | undefined;
  for (let i = 0; i < data.length; i++) {
    let m: Matrix;
    try {
      m = Matrix.from(data[i]!);
    } catch (e) {
      unreadable ??= { i, error: e };
      continue;
    }
    if (m.nRows > 0 && m.nCols === 0) throw new InvalidDataError(`${who(i)} has ${m.nRows} row${m.nRows === 1 ? '' : 's'} but no columns`);
    if (m.nRows > 0) columns.push({ i, d: m.nCols });
    else if (m.nCols > 0) rowless ??= m.nCols;
  }
  if (expected) {
    const other = columns.find((c) => c.d !== expected.nFeatures);
    if (other) throw new InvalidDataError(`${who(other.i)} has ${other.d} columns but ${expected.what} is ${expected.nFeatures}: every client's data needs that many columns`);
    return expected.nFeatures;
  }
  if (columns.length > 0) {
    // the first client of the most common count (the earliest on ties) is the reference; the first other one is named
    const counts = new Map<number, number>();
    for (const c of columns) counts.set(c.d, (counts.get(c.d) ?? 0) + 1);
    const reference = columns.reduce((best, c) => (counts.get(c.d)! > counts.get(best.d)! ? c : best));
    const other = columns.find((c) => c.d !== reference.d);
    if (other) throw new InvalidDataError(`${who(other.i)} has ${other.d} columns but ${who(reference.i)} has ${reference.d}: every client's data needs the same columns`);
    return reference.d;
  }
  // no client has rows: the run goes ahead and excludes them with their reasons, if their columns say how many features
  if (rowless !== undefined) return rowless;
  if (unreadable) throw restated(unreadable.error, (e) => new (e.constructor as new (m: string) => FedmixError)(`${who(unreadable!.i)}: ${e.message}`));
  throw new InvalidDataError(`no client of ${name} has any rows or columns`);
}

/**
 * The policy of a one-call function's run: its onInvalidClient as the
 * runtime's onInvalid, and its maxExcludedShare, checked here before any
 * client is made; with the run's hooks (its `hooks` option), checked too.
 */
export function oneCallPolicy(onInvalidClient: 'exclude' | 'throw' | undefined, maxExcludedShare: number | undefined, hooks?: RunHooks): RunOptions {
  const policy: FederationPolicy = { onInvalid: onInvalidClient === 'throw' ? 'fail' : 'exclude', maxExcludedShare };
  resolvePolicy(policy);
  return hooks === undefined ? policy : { ...policy, ...readRunHooks(hooks) };
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
