/**
 * associate: community association in one call, in process. For clients
 * elsewhere (worker threads, browsers, an MQTT broker) run a
 * CommunitiesServer with runFederation and CommunitiesClients where the data is.
 */
import type { MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { checkDetectorOptions, type LocalDetectorOptions } from '../../models/detectors.js';
import { LIMITS, readArray, readOptions, requireInteger, requireOneOf } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runPlanSync, type FederationPlan } from '../runtime/plan.js';
import type { FederationResult, RunHooks } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy } from '../simulation.js';
import { CommunitiesClient } from './client.js';
import { CommunitiesServer, type Association, type CommunitiesServerOptions } from './server.js';

export interface AssociateOptions extends Omit<CommunitiesServerOptions, 'nFeatures' | 'kind' | 'contamination'> {
  /** every client's detector: kind ('ocsvm' default), contamination (default 0.1) and the model's options */
  detector?: LocalDetectorOptions;
  /** the wire form of the in-process messages (default 'binary') */
  encoding?: Encoding | 'none';
  /** a client that fails: excluded (default) or the run fails */
  onInvalidClient?: 'exclude' | 'throw';
  /** the largest share of the clients that may be excluded before the run fails (default 0.5; see FederationPolicy) */
  maxExcludedShare?: number;
  /** the run's hooks: per-round reports, checkpoints, early stopping (RunHooks; a stop shows in federation.stoppedEarly) */
  hooks?: RunHooks;
  /** with detector.noise: client i's noise is seeded noiseSeed + i, for tests only (default: fresh from crypto.getRandomValues) */
  noiseSeed?: number;
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
  return runPlanSync(planAssociation(data, given));
}

/**
 * associate as a plan (see runtime/plan.ts): its one federation is yielded
 * for a driver to run, in process or over a broker; the options and the
 * clients are checked first.
 */
export function planAssociation(data: readonly MatrixLike[], given: AssociateOptions = {}): FederationPlan<AssociateResult> {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object like { detector, q, partners, method }');
  const options = readOptions(given, ['detector', 'q', 'partners', 'seed', 'method', 'maxRelayBytes', 'encoding', 'onInvalidClient', 'maxExcludedShare', 'hooks', 'noiseSeed']) as AssociateOptions;
  const noiseSeed = options.noiseSeed === undefined ? undefined : requireInteger('noiseSeed', options.noiseSeed, 0, LIMITS.count);
  const onInvalid = requireOneOf('onInvalidClient', options.onInvalidClient ?? 'exclude', ['exclude', 'throw'] as const);
  const policy = oneCallPolicy(onInvalid, options.maxExcludedShare, options.hooks);
  const clientData = readArray('data', data, LIMITS.clients) as MatrixLike[];
  const detector = options.detector === undefined ? {} : checkDetectorOptions(options.detector, 'detector');
  const nFeatures = clientFeatures('data', clientData);
  const server = new CommunitiesServer({
    nFeatures,
    kind: detector.kind,
    contamination: detector.contamination,
    q: options.q,
    partners: options.partners,
    seed: options.seed,
    method: options.method,
    maxRelayBytes: options.maxRelayBytes,
  });
  const { clients, unborn } = makeClients(clientData.length, (i, id) => new CommunitiesClient(id, clientData[i]!, { detector: noiseSeed === undefined ? detector : { ...detector, noiseSeed: noiseSeed + i } }), onInvalid === 'throw');
  return (function* (): FederationPlan<AssociateResult> {
    try {
      const run = (yield { purpose: 'association', server, clients, encoding: options.encoding, policy: { ...policy, excludedBefore: unborn } }) as FederationResult<Association>;
      const { model, ...federation } = run;
      return { ...model, excluded: run.excluded, federation };
    } finally {
      for (const c of clients) c.dispose();
    }
  })();
}
