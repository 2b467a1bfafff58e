/**
 * The algorithms by name, for everything that builds roles from plain data
 * rather than code: a worker thread creating its clients, the `fedmix server`
 * and `fedmix client` commands, serve() and join(). A client spec is
 * structured-cloneable (it crosses to workers as is).
 */
import { fromMatrixData, type MatrixData } from '../data/matrix.js';

export { matrixData, type MatrixData } from '../data/matrix.js';
import { formatValue, InvalidParameterError } from '../errors.js';
import { guardRead, readOptions } from '../validate.js';
import { DemClient } from './dem/client.js';
import { DemServer, type DemServerOptions } from './dem/server.js';
import { FedGEMClient, type FedGEMClientOptions } from './fedgem/client.js';
import { FedGEMServer, type FedGEMServerOptions } from './fedgem/server.js';
import { FedGenGMMClient, type FedGenGMMClientOptions } from './fedgengmm/client.js';
import { FedGenGMMServer, type FedGenGMMServerOptions } from './fedgengmm/server.js';
import { FedAvgClient } from './fedavg/client.js';
import { FedAvgServer, FedProxServer, ScaffoldServer, type FedAvgOutcome, type FedAvgServerOptions, type FedProxServerOptions, type ScaffoldServerOptions } from './fedavg/server.js';
import { CommunitiesClient, type CommunitiesClientOptions } from './communities/client.js';
import { CommunitiesServer, type Association, type CommunitiesServerOptions } from './communities/server.js';
import { FedDistrClient, type FedDistrPrivacy } from './feddistr/client.js';
import { FedDistrServer, type FedDistrOutcome, type FedDistrServerOptions } from './feddistr/server.js';
import { MdmClient, type MdmClientOptions } from './mdm/client.js';
import { MdmServer, type MdmServerOptions } from './mdm/server.js';
import type { FedGEMOutcome } from './fedgem/server.js';
import type { Aggregate } from './fedgengmm/server.js';
import { GaussianMixture } from '../models/gaussian-mixture.js';
import { DirichletMultinomialMixture } from '../models/dirichlet-multinomial-mixture.js';
import type { ClientRole, ServerRole } from './runtime/roles.js';

export const ALGORITHMS = ['fedgengmm', 'dem', 'fedgem', 'mdm', 'fedavg', 'fedprox', 'scaffold', 'communities', 'feddistr'] as const;
export type AlgorithmName = (typeof ALGORITHMS)[number];


/** What a client is made of: its algorithm, id, rows (an MDM client: its histogram as one row) and options. */
export interface ClientSpec {
  algorithm: AlgorithmName;
  id: string;
  data: MatrixData;
  /** FedGEM: the rows that score phi candidates */
  validation?: MatrixData;
  /** the FedAvg family with a classifier: the class of each row; FedDistr: the task label of each row */
  labels?: Int32Array;
  options?: Record<string, unknown>;
}

export function checkAlgorithm(name: unknown): AlgorithmName {
  if (!(ALGORITHMS as readonly unknown[]).includes(name)) throw new InvalidParameterError(`algorithm must be one of ${ALGORITHMS.join(', ')}, got ${formatValue(name)}`);
  return name as AlgorithmName;
}

/** The client role a spec describes. */
export function makeClient(given: ClientSpec): ClientRole & { dispose(): void } {
  if (given === null || typeof given !== 'object') throw new InvalidParameterError(`a client spec must be { algorithm, id, data, options? }, got ${formatValue(given)}`);
  const spec = readOptions(given, ['algorithm', 'id', 'data', 'validation', 'labels', 'options'], 'spec') as ClientSpec;
  const data = fromMatrixData(spec.data);
  const options = spec.options ?? {};
  switch (checkAlgorithm(spec.algorithm)) {
    case 'fedgengmm':
      return new FedGenGMMClient(spec.id, data, options as FedGenGMMClientOptions);
    case 'dem':
      readOptions(options, [], 'spec.options'); // a DEM client has none: anything given is a mistake
      return new DemClient(spec.id, data);
    case 'fedgem':
      return new FedGEMClient(spec.id, data, options as unknown as FedGEMClientOptions, spec.validation && fromMatrixData(spec.validation));
    case 'mdm': {
      if (data.nRows !== 1) throw new InvalidParameterError(`an MDM client's data is its histogram: one row of counts, got ${data.nRows} rows`);
      return new MdmClient(spec.id, data.data, options as MdmClientOptions);
    }
    case 'fedavg':
    case 'fedprox':
    case 'scaffold':
      // one client answers the whole family: the server's requests say which (labels are the spec's own)
      return new FedAvgClient(spec.id, data, { labels: spec.labels, seed: readOptions(options, ['seed'], 'spec.options').seed as number | undefined });
    case 'communities':
      return new CommunitiesClient(spec.id, data, options as CommunitiesClientOptions);
    case 'feddistr':
      if (spec.labels === undefined) throw new InvalidParameterError('a FedDistr client needs labels: the task label of every row');
      return new FedDistrClient(spec.id, data, { labels: spec.labels, ...(readOptions(options, ['privacy', 'seed'], 'spec.options') as { privacy?: FedDistrPrivacy; seed?: number }) });
  }
}

export type ServerOptions = DemServerOptions | FedGenGMMServerOptions | FedGEMServerOptions | MdmServerOptions | FedAvgServerOptions | CommunitiesServerOptions | FedDistrServerOptions;

/** The server role of an algorithm, with its own options. */
export function makeServer(algorithm: AlgorithmName, options: Record<string, unknown>): ServerRole {
  switch (checkAlgorithm(algorithm)) {
    case 'fedgengmm':
      return new FedGenGMMServer(options as unknown as FedGenGMMServerOptions);
    case 'dem':
      return new DemServer(options as unknown as DemServerOptions);
    case 'fedgem':
      return new FedGEMServer(options as unknown as FedGEMServerOptions);
    case 'mdm':
      return new MdmServer(options as unknown as MdmServerOptions);
    case 'fedavg':
      return new FedAvgServer(options as unknown as FedAvgServerOptions);
    case 'fedprox':
      return new FedProxServer(options as unknown as FedProxServerOptions);
    case 'scaffold':
      return new ScaffoldServer(options as unknown as ScaffoldServerOptions);
    case 'communities':
      return new CommunitiesServer(options as unknown as CommunitiesServerOptions);
    case 'feddistr':
      return new FedDistrServer(options as unknown as FedDistrServerOptions);
  }
}

/** What a server produced, as JSON a file can hold (a model's toJSON(), with how it was made). */
export function resultJson(algorithm: AlgorithmName, model: unknown): unknown {
  const name = checkAlgorithm(algorithm);
  const isModel = (m: unknown, of: new (...a: never[]) => unknown): boolean => guardRead('model', () => m instanceof of);
  const family = name === 'fedavg' || name === 'fedprox' || name === 'scaffold';
  const expected = family
    ? '{ network, parameters, ... }'
    : { dem: 'a GaussianMixture', fedgengmm: '{ model: GaussianMixture, clients, ... }', fedgem: 'a FedGEM outcome', mdm: 'a DirichletMultinomialMixture', communities: 'an Association', feddistr: 'a FedDistr outcome { bases, membership, ... }' }[name];
  const ok = family
    ? model !== null && typeof model === 'object' && guardRead('model', () => (model as FedAvgOutcome).parameters instanceof Float32Array)
    : name === 'communities'
      ? model !== null && typeof model === 'object' && guardRead('model', () => (model as Association).membership instanceof Map && Array.isArray((model as Association).communities))
    : name === 'feddistr'
      ? model !== null && typeof model === 'object' && guardRead('model', () => Array.isArray((model as FedDistrOutcome).bases) && (model as FedDistrOutcome).membership instanceof Map)
    : name === 'dem'
      ? isModel(model, GaussianMixture)
      : name === 'mdm'
        ? isModel(model, DirichletMultinomialMixture)
        : model !== null && typeof model === 'object' && (name === 'fedgem' || isModel((model as Aggregate).model, GaussianMixture));
  if (!ok) throw new InvalidParameterError(`a ${name} result must be ${expected}, got ${formatValue(model)}`);
  // a result object is read once here; what it holds cannot throw past this
  return guardRead('model', () => resultOf(name, model));
}

function resultOf(algorithm: AlgorithmName, model: unknown): unknown {
  switch (algorithm) {
    case 'dem':
      return (model as GaussianMixture).toJSON();
    case 'fedgengmm': {
      const a = model as Aggregate;
      return { model: a.model.toJSON(), clients: a.clients, incomingComponents: a.incomingComponents, syntheticRows: a.syntheticRows };
    }
    case 'fedgem': {
      const o = model as FedGEMOutcome;
      return {
        estimatedK: o.estimatedK,
        // what the separation step joined, and below which distance; components of fewer than two rows not counted
        separationJoins: o.separationJoins,
        separation: o.separation,
        uncounted: o.uncounted,
        phi: o.phi,
        globalCenters: Array.from(o.globalCenters),
        memberships: Object.fromEntries([...o.memberships].map(([id, m]) => [id, Array.from(m)])),
        phiScores: o.phiScores,
        // sigma^2 as the server estimated it (absent when the variance was given)
        varianceEstimate: o.varianceEstimate,
      };
    }
    case 'mdm':
      return (model as DirichletMultinomialMixture).toJSON();
    case 'fedavg':
    case 'fedprox':
    case 'scaffold': {
      const o = model as FedAvgOutcome;
      return { algorithm: o.algorithm, network: o.network, parameters: Array.from(o.parameters), rounds: o.rounds, epochs: o.epochs, batchSize: o.batchSize, optimizer: o.optimizer, history: o.history };
    }
    case 'communities': {
      const a = model as Association;
      return { communities: a.communities, membership: Object.fromEntries(a.membership), nodes: a.nodes, edges: a.edges, modularity: Number.isFinite(a.modularity) ? a.modularity : null, method: a.method, decisions: a.decisions, tests: a.tests };
    }
    case 'feddistr': {
      const o = model as FedDistrOutcome;
      return {
        estimatedBaseDistributions: o.estimatedBaseDistributions,
        uploaded: o.uploaded,
        threshold: o.threshold,
        cost: o.cost,
        covariance: o.covariance,
        bases: o.bases.map((b) => ({ label: b.label, count: b.count, weight: b.weight, mean: Array.from(b.mean), covariance: Array.from(b.covariance), members: b.members })),
        membership: Object.fromEntries([...o.membership].map(([id, m]) => [id, Array.from(m)])),
        pairs: o.pairs,
      };
    }
  }
}
