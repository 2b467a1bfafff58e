/**
 * associate: community association in one call, in process. For clients
 * elsewhere (worker threads, browsers, an MQTT broker) run a
 * CommunitiesServer with runFederation and CommunitiesClients where the data is.
 */
import type { MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import type { LocalDetectorOptions } from '../../models/detectors.js';
import { readArray, readOptions, requireOneOf } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult } from '../runtime/run.js';
import { majorityDimension, makeClients } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { CommunitiesClient } from './client.js';
import { CommunitiesServer, type Association, type CommunitiesServerOptions } from './server.js';

export interface AssociateOptions extends Omit<CommunitiesServerOptions, 'nFeatures' | 'kind' | 'contamination'> {
  /** every client's detector: kind ('ocsvm' default), contamination (default 0.1) and the model's options */
  detector?: LocalDetectorOptions;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /**
   * the largest message (default 64 MiB): a relay carries every partner's
   * detector, and OneClassSVM detectors of 90 Fashion-MNIST clients of 666 rows
   * weigh about 190 MB in each client's relay (or relay fewer: `partners`)
   */
  maxMessageBytes?: number;
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
}

export interface AssociateResult extends Association {
  excluded: ExcludedClient[];
  /** the runtime's account: the association phase's traffic (bytes each way), per-client bytes, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

/**
 * ```ts
 * const r = associate(parts, { detector: { kind: 'gmm', contamination: 0.1 }, q: 0.08 });
 * r.communities;           // [['0', '1', '2'], ['3', '4'], ...]: clients "0", "1", ... by position
 * r.federation.traffic;    // bytes of the association phase
 * ```
 */
export function associate(data: readonly MatrixLike[], given: AssociateOptions = {}): AssociateResult {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object like { detector, q, partners, method }');
  const options = readOptions(given, ['detector', 'q', 'partners', 'seed', 'method', 'encoding', 'maxMessageBytes', 'onInvalidClient']) as AssociateOptions;
  const onInvalid = requireOneOf('onInvalidClient', options.onInvalidClient ?? 'exclude', ['exclude', 'throw'] as const);
  const clientData = readArray('data', data) as MatrixLike[];
  const detector = options.detector === undefined ? {} : readOptions(options.detector, undefined, 'detector');
  const nFeatures = majorityDimension(clientData);
  if (nFeatures === undefined) throw new InvalidParameterError('associate needs at least one client with readable rows');
  const server = new CommunitiesServer({
    nFeatures,
    kind: detector.kind,
    contamination: detector.contamination,
    q: options.q,
    partners: options.partners,
    seed: options.seed,
    method: options.method,
  });
  const { clients, unborn } = makeClients(clientData.length, (i, id) => new CommunitiesClient(id, clientData[i]!, { detector }), onInvalid === 'throw');
  try {
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding: options.encoding, maxMessageBytes: options.maxMessageBytes }), { onInvalid: onInvalid === 'throw' ? 'fail' : 'exclude' });
    const { model, ...federation } = run;
    return { ...model, excluded: [...unborn, ...run.excluded], federation };
  } finally {
    for (const c of clients) c.dispose();
  }
}
