/**
 * fedDistr: the one-call form of FedDistr, in process. For clients elsewhere
 * (worker threads, browsers, an MQTT broker) run a FedDistrServer with
 * runFederation and FedDistrClients where the data is; fedDistrSimulation
 * wires the same run for another runner (simulateOverMqtt: the clients as
 * MQTT clients of a broker).
 *
 * With the rows' true subclasses (for evaluation only: no client sends them),
 * the result also scores the matching: the adjusted Rand index between the
 * consolidated base distribution each row ended in and its true subclass, and
 * the share of truly parallel pairs found (two uploaded base distributions of
 * different clients whose rows are mostly of one subclass: are they in one
 * parallel set?).
 */
import { privacyOfUpload } from './client.js';
import type { ReleasesPrivacy } from '../../privacy/gaussian-noise.js';
import type { MatrixLike } from '../../data/matrix.js';
import { encodeLabels, type Label } from '../../data/labels.js';
import { InvalidDataError, InvalidParameterError } from '../../errors.js';
import { adjustedRandScore } from '../../metrics/clustering.js';
import { seedPlus } from '../../random.js';
import { LIMITS, readArray, readRecord } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import type { FederationResult, RunHooks } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy, runSimulation, type Simulation } from '../simulation.js';
import { FedDistrClient } from './client.js';
import { checkServerOptions, clientOptions, fedDistrOptions, type FedDistrOptions, type ResolvedFedDistrServerOptions } from './options.js';
import { FedDistrServer, type FedDistrOutcome } from './server.js';

export type { FedDistrOptions } from './options.js';

/** One client's rows, the task label of each, and (evaluation only) each row's true subclass. */
export interface FedDistrClientData {
  X: MatrixLike;
  labels: Int32Array | readonly number[];
  subclasses?: ArrayLike<Label>;
}

export interface FedDistrEvaluation {
  /** distinct true subclasses among the rows of the clients used */
  trueBaseDistributions: number;
  /** adjusted Rand index of the rows' consolidated base distribution against their subclass */
  adjustedRandIndex: number;
  /** truly parallel pairs (across clients) and how many of them ended in one set */
  trulyParallelPairs: number;
  parallelPairsFound: number;
  /** parallelPairsFound / trulyParallelPairs (NaN when there are none) */
  parallelRecall: number;
  /** of the pairs put in one set (across clients), the share truly parallel (NaN when there are none) */
  parallelPrecision: number;
}

export interface FedDistrResult extends FedDistrOutcome {
  excluded: ExcludedClient[];
  /** present when every client gave its rows' subclasses */
  evaluation?: FedDistrEvaluation;
  /** with privacy: what each client's upload spends per row, the (epsilon, delta) asked (basicEpsilon) and RDP's tighter epsilon at the same delta */
  privacy?: ReleasesPrivacy;
  /** the runtime's account: traffic, per-client bytes, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

export function fedDistr(data: readonly FedDistrClientData[], given: FedDistrOptions = {}): FedDistrResult {
  return runSimulation(fedDistrSimulation(data, given));
}

/** fedDistr wired and not run: for runners other than the in-process one (simulateOverMqtt). */
export function fedDistrSimulation(data: readonly FedDistrClientData[], given: FedDistrOptions = {}): Simulation<FedDistrOutcome, FedDistrResult> {
  // read once, the run's and the clients' options checked: the caller's object is not read again (getters, Proxies)
  const options = fedDistrOptions.check(given);
  const { privacy, noiseSeed, encoding, onInvalidClient: onInvalid, maxExcludedShare, hooks, ...serverGiven } = options;
  const policy = oneCallPolicy(onInvalid, maxExcludedShare as number | undefined, hooks as RunHooks | undefined);
  const clientData = (readArray('data', data, LIMITS.clients) as FedDistrClientData[]).map((c, i) => readRecord(c, ['X', 'labels', 'subclasses'], `data[${i}]`) as FedDistrClientData);
  // every client would refuse: said once, here
  if (privacy !== undefined && serverGiven.shrinkage === 'ledoit-wolf') throw new InvalidParameterError("Ledoit-Wolf shrinkage reads the rows beyond the released moments: with privacy use shrinkage 'oas' (post-processing) or 'none'");
  // the server's options checked once: at once when they fix the rows' width (a dimension, a PCA's or an
  // Autoencoder's features), else (the identity without a dimension) once the clients' columns give it
  const identity = (serverGiven.encoder ?? 'identity') === 'identity';
  let resolved: ResolvedFedDistrServerOptions | undefined = identity && serverGiven.dimension === undefined ? undefined : checkServerOptions(serverGiven);
  const encoder = resolved?.describe.encoder;
  const width = encoder === undefined ? undefined : encoder.kind === 'pca' ? encoder.mean!.length : encoder.kind === 'autoencoder' ? encoder.network!.sizes[0]! : encoder.dimension;
  const expected = width === undefined ? undefined : { nFeatures: width, what: identity ? 'dimension' : "the encoder's input width" };
  const nFeatures = clientFeatures('data', clientData.map((c) => c.X), { expected });
  resolved ??= checkServerOptions({ ...serverGiven, dimension: nFeatures });
  const server = new FedDistrServer(resolved);
  // client i's options from those checked here: its labels (checked against its rows by the client) and its noise seed
  const optionsOf = (i: number) => clientOptions.trust({ labels: clientData[i]!.labels, privacy, seed: noiseSeed === undefined ? undefined : seedPlus(noiseSeed, i) });
  const { clients, unborn } = makeClients(clientData.length, (i, id) => new FedDistrClient(id, clientData[i]!.X, optionsOf(i)), onInvalid === 'throw');
  return {
    server,
    clients,
    encoding: encoding as Encoding | 'none' | undefined,
    run: { ...policy, excludedBefore: unborn },
    finish: (run) => {
      const { model, ...federation } = run;
      const out: FedDistrResult = { ...model, excluded: run.excluded, federation };
      if (privacy !== undefined) out.privacy = privacyOfUpload(privacy as { epsilon: number; delta: number });
      if (clientData.length > 0 && clientData.every((c) => c.subclasses !== undefined)) {
        const used = clients.filter((c) => model.membership.has(c.id));
        out.evaluation = evaluate(
          model,
          used.map((c) => ({ id: c.id, assignments: c.assignments!, subclasses: clientData[Number(c.id)]!.subclasses! })),
        );
      }
      return out;
    },
  };
}

function evaluate(model: FedDistrOutcome, used: { id: string; assignments: Int32Array; subclasses: ArrayLike<Label> }[]): FedDistrEvaluation {
  const truth: Label[] = [];
  const predicted: number[] = [];
  // every uploaded base: its client, its consolidated set and its majority subclass
  const bases: { client: string; set: number; major: number }[] = [];
  const all: Label[] = [];
  for (const u of used) for (let i = 0; i < u.subclasses.length; i++) all.push(u.subclasses[i]!);
  const { codes } = encodeLabels(all, 'subclasses');
  let offset = 0;
  for (const u of used) {
    const n = u.assignments.length;
    if (u.subclasses.length !== n) throw new InvalidDataError(`client ${u.id} has ${n} rows but ${u.subclasses.length} subclasses`);
    const membership = model.membership.get(u.id)!;
    const votes = Array.from({ length: membership.length }, () => new Map<number, number>());
    for (let i = 0; i < n; i++) {
      const b = u.assignments[i]!;
      truth.push(u.subclasses[i]!);
      predicted.push(membership[b]!);
      const code = codes[offset + i]!;
      votes[b]!.set(code, (votes[b]!.get(code) ?? 0) + 1);
    }
    offset += n;
    votes.forEach((v, b) => {
      let major = -1;
      let most = 0;
      for (const [code, c] of v) if (c > most) [major, most] = [code, c];
      bases.push({ client: u.id, set: membership[b]!, major });
    });
  }
  let trulyParallel = 0;
  let found = 0;
  let together = 0;
  for (let i = 0; i < bases.length; i++) {
    for (let j = i + 1; j < bases.length; j++) {
      const a = bases[i]!;
      const b = bases[j]!;
      if (a.client === b.client) continue;
      const same = a.major === b.major;
      const joined = a.set === b.set;
      if (same) trulyParallel++;
      if (same && joined) found++;
      if (joined) together++;
    }
  }
  return {
    trueBaseDistributions: new Set(codes).size,
    adjustedRandIndex: truth.length > 0 ? adjustedRandScore(truth as number[], predicted) : NaN,
    trulyParallelPairs: trulyParallel,
    parallelPairsFound: found,
    parallelRecall: trulyParallel > 0 ? found / trulyParallel : NaN,
    parallelPrecision: together > 0 ? found / together : NaN,
  };
}
