/**
 * fitMdm: federated MDM inference in one call, in process (the server only
 * ever receives the aggregator's sums). For clients elsewhere (worker
 * threads, an MQTT broker) run an MdmServer with runFederation.
 */
import { type MatrixLike } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { checkedHistograms, DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { Rng } from '../../random.js';
import { requireInteger } from '../../validate.js';
import type { ExcludedClient } from '../runtime/roles.js';
import { runFederationSync, type FederationResult, type Traffic } from '../runtime/run.js';
import { oneCallPolicy } from '../simulation.js';
import { InProcessTransport } from '../transport/in-process.js';
import { MdmClient } from './client.js';
import { MdmUserGroup } from './group.js';
import { fitMdmOptions, serverOptions, type MdmFitOptions } from './options.js';
import { MdmServer, type MdmRound } from './server.js';

export type { MdmFitOptions } from './options.js';

export interface MdmFitResult {
  model: DirichletMultinomialMixture;
  /** Algorithm 2's rounds: clients, mean log-likelihood under the broadcast model, guards */
  history: MdmRound[];
  /** guards Algorithm 1 applied */
  initGuards: string[];
  /** communication rounds, messages and bytes each way (client traffic) */
  traffic: Traffic;
  excluded: ExcludedClient[];
  /** the runtime's account: bytes per client, every round's record and timings */
  federation: Omit<FederationResult, 'model'>;
}

/**
 * Histograms as clients, checked up front so that bad data is an error naming
 * the row, not an exclusion: one MdmClient per row, or `groups` MdmUserGroups
 * of consecutive rows (ids 'group-0', ...) whose users draw as those clients would.
 */
export function histogramClients(
  histograms: MatrixLike,
  options: { maxCount?: number; sizes?: ArrayLike<number>; idPrefix?: string; groups?: number },
  seeds: Rng,
): { clients: (MdmClient | MdmUserGroup)[]; c: number; nMax: number } {
  const { counts, sizes, m, c, nMax } = checkedHistograms(histograms, options);
  const groups = options.groups === undefined ? undefined : requireInteger('groups', options.groups, 1, m);
  const draws = seeds.uniform(m);
  const clients: (MdmClient | MdmUserGroup)[] = [];
  try {
    for (let g = 0; groups !== undefined && g < groups; g++) {
      const [from, to] = [Math.floor((g * m) / groups), Math.floor(((g + 1) * m) / groups)];
      const rows = Array.from({ length: to - from }, (_, i) => counts.subarray((from + i) * c, (from + i + 1) * c));
      const userSeeds = Array.from(draws.subarray(from, to), (u) => Math.floor(u * 2 ** 32));
      clients.push(new MdmUserGroup(`${options.idPrefix ?? 'group'}-${g}`, rows, { sizes: sizes.subarray(from, to), seeds: userSeeds }));
    }
    for (let i = 0; groups === undefined && i < m; i++) {
      clients.push(new MdmClient(`${options.idPrefix ?? 'client'}-${i}`, counts.subarray(i * c, (i + 1) * c), { seed: Math.floor(draws[i]! * 2 ** 32) }));
    }
  } catch (e) {
    for (const cl of clients) cl.dispose();
    throw e;
  }
  return { clients, c, nMax };
}

/**
 * Federated MDM inference over clients given by their histograms (one row per
 * client, ids 'client-0', 'client-1', ...): Algorithm 1 on a cohort, then
 * `rounds` rounds of Algorithm 2, each on a freshly sampled cohort (every
 * client when `cohort` is omitted: Theorem 3.1's full-batch iteration), through
 * a secure aggregator (with Gaussian noise when `privacy` is given).
 *
 * ```ts
 * const { model, history } = fitMdm(histograms, { nComponents: 2, rounds: 100, cohort: 1000, seed: 0 });
 * ```
 */
export function fitMdm(histograms: MatrixLike, given: MdmFitOptions = {}): MdmFitResult {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError('options must be an object');
  // read once, the seed checked (the clients' and the server's seeds are drawn from it); the server's options are checked by its declaration once the histograms give C and N
  const options = fitMdmOptions.check(given) as MdmFitOptions;
  const policy = oneCallPolicy(options.onInvalidClient, options.maxExcludedShare, options.hooks);
  const seeds = new Rng(options.seed);
  let clients: (MdmClient | MdmUserGroup)[] = [];
  let server: MdmServer | undefined;
  try {
    const built = histogramClients(histograms, options, seeds);
    clients = built.clients;
    // the second draw is not used since the noise got its own seed; kept so that the server's seed, and every result without privacy, stay as they were
    const [serverSeed] = Array.from(seeds.uniform(2), (u) => Math.floor(u * 2 ** 32));
    const { encoding, maxCount: _m, sizes: _s, categories: _c, groups: _g, maxExcludedShare: _x, hooks: _h, ...mdmOptions } = options;
    // the noise's seed is options.noiseSeed or fresh: never derived from the public seed
    server = new MdmServer(serverOptions.check({ ...mdmOptions, nCategories: built.c, maxCount: built.nMax, seed: serverSeed }));
    const run = runFederationSync(server, new InProcessTransport(clients, { encoding }), policy);
    const { model: learned, ...federation } = run;
    const model = options.categories
      ? new DirichletMultinomialMixture({ tau: learned.tau, alpha: rowsOf(learned.alpha, learned.nCategories), pi: rowsOf(learned.pi, learned.maxCount), categories: options.categories })
      : learned;
    return { model, history: server.history, initGuards: server.initGuards, traffic: { ...run.traffic }, excluded: run.excluded, federation };
  } finally {
    seeds.dispose();
    server?.dispose();
    for (const c of clients) c.dispose();
  }
}

function rowsOf(v: Float64Array, w: number): Float64Array[] {
  return Array.from({ length: v.length / w }, (_, r) => v.subarray(r * w, (r + 1) * w));
}
