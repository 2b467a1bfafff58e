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
import type { MatrixLike } from '../../data/matrix.js';
import { encodeLabels, type Label } from '../../data/labels.js';
import { InvalidDataError, InvalidParameterError } from '../../errors.js';
import { adjustedRandScore } from '../../metrics/clustering.js';
import { readGaussianNoise } from '../gaussian-noise.js';
import { LIMITS, readArray, optionKeys, readOptions, readRecord, requireInteger, requireOneOf } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import type { FederationResult, RunHooks } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy, runSimulation, type Simulation } from '../simulation.js';
import { FedDistrClient, type FedDistrPrivacy } from './client.js';
import { FedDistrServer, readEncoder, type FedDistrOutcome, type FedDistrServerOptions } from './server.js';

/** One client's rows, the task label of each, and (evaluation only) each row's true subclass. */
export interface FedDistrClientData {
  X: MatrixLike;
  labels: Int32Array | readonly number[];
  subclasses?: ArrayLike<Label>;
}

export interface FedDistrOptions extends FedDistrServerOptions {
  /** Gaussian noise on every client's means and covariances */
  privacy?: FedDistrPrivacy;
  /** seed of client i's privacy noise is noiseSeed + i: for tests only (default: fresh from crypto.getRandomValues) */
  noiseSeed?: number;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
}

/** Every option of FedDistrOptions, for readOptions (the compiler checks it is complete). */
const FEDDISTR_KEYS = optionKeys<FedDistrOptions>()({ privacy: true, noiseSeed: true, encoding: true, onInvalidClient: true, maxExcludedShare: true, hooks: true, encoder: true, dimension: true, covariance: true, clustering: true, criterion: true, kMin: true, kMax: true, shrinkage: true, regCovar: true, cost: true, threshold: true, merge: true, seed: true });

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
  /** the runtime's account: traffic, per-client bytes, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

export function fedDistr(data: readonly FedDistrClientData[], given: FedDistrOptions = {}): FedDistrResult {
  return runSimulation(fedDistrSimulation(data, given));
}

/** fedDistr wired and not run: for runners other than the in-process one (simulateOverMqtt). */
export function fedDistrSimulation(data: readonly FedDistrClientData[], given: FedDistrOptions = {}): Simulation<FedDistrOutcome, FedDistrResult> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object like { encoder, cost, threshold, kMax }');
  const options = readOptions(given, FEDDISTR_KEYS) as FedDistrOptions;
  const onInvalid = requireOneOf('onInvalidClient', options.onInvalidClient ?? 'exclude', ['exclude', 'throw'] as const);
  const policy = oneCallPolicy(onInvalid, options.maxExcludedShare, options.hooks);
  const clientData = (readArray('data', data, LIMITS.clients) as FedDistrClientData[]).map((c, i) => readRecord(c, ['X', 'labels', 'subclasses'], `data[${i}]`) as FedDistrClientData);
  const { privacy, noiseSeed, encoding, onInvalidClient: _o, maxExcludedShare: _m, hooks: _h, ...serverOptions } = options;
  // the clients' privacy checked once here: a misspelt key is the caller's error, not every client failing to be made
  if (privacy !== undefined) readGaussianNoise(privacy, 'options.privacy');
  // every client would refuse: said once, here
  if (privacy !== undefined && serverOptions.shrinkage === 'ledoit-wolf') throw new InvalidParameterError("Ledoit-Wolf shrinkage reads the rows beyond the released moments: with privacy use shrinkage 'oas' (post-processing) or 'none'");
  if (noiseSeed !== undefined) requireInteger('noiseSeed', noiseSeed, 0, 2 ** 31);
  const identity = (serverOptions.encoder ?? 'identity') === 'identity';
  // every client's rows need the encoder's input width: the identity's `dimension` (default: the clients' own), a PCA's or an Autoencoder's features
  const encoder = identity ? undefined : readEncoder(serverOptions.encoder, serverOptions.dimension);
  const width = encoder ? (encoder.kind === 'pca' ? encoder.mean!.length : encoder.network!.sizes[0]!) : serverOptions.dimension;
  const expected = width === undefined ? undefined : { nFeatures: width, what: identity ? 'dimension' : "the encoder's input width" };
  const nFeatures = clientFeatures('data', clientData.map((c) => c.X), { expected });
  if (identity) serverOptions.dimension = nFeatures;
  const server = new FedDistrServer(serverOptions);
  const { clients, unborn } = makeClients(clientData.length, (i, id) => new FedDistrClient(id, clientData[i]!.X, { labels: clientData[i]!.labels, privacy, seed: noiseSeed === undefined ? undefined : noiseSeed + i }), onInvalid === 'throw');
  return {
    server,
    clients,
    encoding,
    run: { ...policy, excludedBefore: unborn },
    finish: (run) => {
      const { model, ...federation } = run;
      const out: FedDistrResult = { ...model, excluded: run.excluded, federation };
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
