/**
 * associate: community association in one call, in process. For clients
 * elsewhere (worker threads, browsers, an MQTT broker) run a
 * CommunitiesServer with runFederation and CommunitiesClients where the data is.
 */
import type { MatrixLike } from '../../data/matrix.js';
import { checkDetectorOptions } from '../../models/detectors.js';
import { seedPlus } from '../../random.js';
import { LIMITS, readArray } from '../../validate.js';
import type { Encoding } from '../messages/codec.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runPlanSync, type FederationPlan } from '../runtime/plan.js';
import type { FederationResult, RunHooks } from '../runtime/run.js';
import { clientFeatures, makeClients, oneCallPolicy } from '../simulation.js';
import { CommunitiesClient } from './client.js';
import { associateOptions, checkServerOptions, clientOptions, type AssociateOptions } from './options.js';
import { CommunitiesServer, type Association } from './server.js';

export type { AssociateOptions } from './options.js';

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
  // read once, the run's own options checked: the caller's object is not read again (getters, Proxies)
  const options = associateOptions.check(given);
  const onInvalid = options.onInvalidClient;
  const policy = oneCallPolicy(onInvalid, options.maxExcludedShare as number | undefined, options.hooks as RunHooks | undefined);
  const clientData = readArray('data', data, LIMITS.clients) as MatrixLike[];
  const noiseSeed = options.noiseSeed;
  // the detector checked once, by the model, before any client is made (a bad one is the caller's error, not
  // every client excluded); with the noise seed, whose bound is the detector's
  const detectorGiven = options.detector ?? {};
  const detector = checkDetectorOptions(noiseSeed === undefined ? detectorGiven : { ...detectorGiven, noiseSeed }, 'detector');
  const nFeatures = clientFeatures('data', clientData);
  const server = new CommunitiesServer(
    checkServerOptions({
      nFeatures,
      kind: detector.kind,
      contamination: detector.contamination,
      q: options.q,
      partners: options.partners,
      seed: options.seed,
      method: options.method,
      maxRelayBytes: options.maxRelayBytes,
    }),
  );
  // every client's options, resolved from those checked here; a client's noise seed is the run's plus its position
  const optionsOf = (i: number) => clientOptions.trust({ detector: noiseSeed === undefined ? detector : { ...detector, noiseSeed: seedPlus(noiseSeed, i) } });
  const { clients, unborn } = makeClients(clientData.length, (i, id) => new CommunitiesClient(id, clientData[i]!, optionsOf(i)), onInvalid === 'throw');
  return (function* (): FederationPlan<AssociateResult> {
    try {
      const run = (yield { purpose: 'association', server, clients, encoding: options.encoding as Encoding | 'none' | undefined, policy: { ...policy, excludedBefore: unborn } }) as FederationResult<Association>;
      const { model, ...federation } = run;
      return { ...model, excluded: run.excluded, federation };
    } finally {
      for (const c of clients) c.dispose();
    }
  })();
}
