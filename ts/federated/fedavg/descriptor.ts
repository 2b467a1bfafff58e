/**
 * The FedAvg family as the registry runs it by name (serve/join, worker lanes,
 * `fedmix server/client --algorithm fedavg|fedprox|scaffold`): three server
 * roles over one client role and one protocol.
 */
import * as v from 'valibot';
import { InvalidParameterError } from '../../errors.js';
import { Network, parameterCount, resolveNetworkSpec, resolveOptimizerSpec, type NetworkSpec, type OptimizerSpec } from '../../models/network.js';
import { expectResult, parseSaved, savedCount, savedNumber, savedPairs, savedSingles, serverState } from '../registry/artifact.js';
import { defineAlgorithm, type CliPart, type CliValues, type CliContext } from '../registry/registry.js';
import { FedAvgClient } from './client.js';
import { FEDAVG_PROTOCOL } from './messages.js';
import { checkServerOptions, clientOptions, clientSpecOptions, fedAvgServerOptions, fedProxServerOptions, scaffoldServerOptions } from './options.js';
import { DEFAULT_EPOCHS, DEFAULT_OPTIMIZER, FedAvgServer, FedProxServer, ScaffoldServer, type FedAvgAlgorithm, type FedAvgOutcome } from './server.js';

/** NaN (a round without replies' epochs) is saved as null. */
const savedOrNaN = () => v.pipe(v.nullable(savedNumber()), v.transform((x) => x ?? NaN));

/** A FedAvg-family server's state between rounds (FedAvgServer.saveState). */
const STATE = v.object({
  algorithm: v.picklist(['fedavg', 'fedprox', 'scaffold']),
  round: savedCount(),
  phase: v.picklist(['train', 'result', 'done']),
  parameters: savedSingles(),
  history: v.array(v.object({ round: savedCount(), clients: savedCount(), loss: savedOrNaN(), epochs: savedOrNaN(), metrics: v.optional(v.record(v.string(), savedOrNaN())), clipped: v.optional(savedCount()), noiseStddev: v.optional(savedNumber()) })),
  samples: v.optional(savedPairs(v.pipe(savedCount(), v.minValue(1)))),
  control: v.optional(savedSingles()),
});

const SAVED = v.object({
  algorithm: v.picklist(['fedavg', 'fedprox', 'scaffold']),
  // checked as a server checks a network, kept as saved (no defaults filled in)
  network: v.pipe(v.unknown(), v.transform((n) => (resolveNetworkSpec(n as NetworkSpec), { ...(n as NetworkSpec), sizes: [...(n as NetworkSpec).sizes] }))),
  parameters: v.pipe(v.array(savedNumber()), v.transform((a) => Float32Array.from(a))),
  rounds: savedCount(),
  epochs: savedCount(),
  batchSize: savedCount(),
  optimizer: v.pipe(v.unknown(), v.transform((o) => (resolveOptimizerSpec(o as OptimizerSpec), { ...(o as OptimizerSpec) }))),
  history: v.array(v.object({ round: savedCount(), clients: savedCount(), loss: savedOrNaN(), epochs: savedOrNaN(), metrics: v.optional(v.record(v.string(), savedOrNaN())), clipped: v.optional(savedCount()), noiseStddev: v.optional(savedNumber()) })),
});

function save(name: FedAvgAlgorithm) {
  return (o: FedAvgOutcome): unknown => {
    expectResult(name, '{ network, parameters, ... }', o, (m) => m !== null && typeof m === 'object' && (m as FedAvgOutcome).parameters instanceof Float32Array);
    return { algorithm: o.algorithm, network: o.network, parameters: Array.from(o.parameters), rounds: o.rounds, epochs: o.epochs, batchSize: o.batchSize, optimizer: o.optimizer, history: o.history };
  };
}

function load(name: FedAvgAlgorithm) {
  return (json: unknown): FedAvgOutcome => {
    const s = parseSaved(name, SAVED, json);
    const want = parameterCount(s.network.sizes);
    if (s.parameters.length !== want) throw new InvalidParameterError(`a saved ${name} result is not valid: parameters has ${s.parameters.length} values; the network ${s.network.sizes.join('-')} has ${want}`);
    return s;
  };
}

/** The trained network of a loaded result: its spec with the saved parameters. */
function network(o: FedAvgOutcome): Network {
  const net = new Network(o.network);
  try {
    net.setParameters(o.parameters);
  } catch (e) {
    net.dispose();
    throw e;
  }
  return net;
}

const NETWORK_OPTIONS = {
  rounds: { type: 'int', help: 'communication rounds (default 10)' },
  layers: { type: 'string', help: 'layer widths from input to output, comma-separated, e.g. 784,64,32,64,784 (required)' },
  activation: { type: 'string', default: 'relu', choices: ['relu', 'sigmoid', 'tanh', 'identity'], help: 'hidden activation' },
  loss: { type: 'string', default: 'mse', choices: ['mse', 'bce', 'softmax-cross-entropy'], help: 'mse or bce (an autoencoder: rows are their own targets) or softmax-cross-entropy (a classifier: clients give --label)' },
  'output-activation': { type: 'string', help: 'output activation (default: sigmoid, or softmax with softmax-cross-entropy)' },
  epochs: { type: 'int', default: DEFAULT_EPOCHS, help: 'local epochs E per round' },
  'batch-size': { type: 'int', default: 32, help: 'local batch size B' },
  'learning-rate': { type: 'number', help: "the local learning rate (default: adam's 0.01, sgd's 0.3)" },
  aggregation: { type: 'string', default: 'mean', choices: ['mean', 'median', 'trimmed-mean'], help: 'how replies are combined: the mean weighted by declared rows, or a robust rule one hostile client cannot move far (coordinate-wise median, trimmed mean)' },
  trim: { type: 'number', default: 0.1, help: 'with --aggregation trimmed-mean: the share cut from each end, below 0.5' },
  'max-samples': { type: 'int', help: 'refuse (and exclude) a client declaring more rows than this; default: no bound (a row count is pinned at a client\'s first reply all the same)' },
  'clip-norm': { type: 'number', help: "scale each client's update (its parameters minus the global ones) down to this L2 norm; the round log counts the clipped; default: none" },
} as const;

/** DP-FedAvg's flags (FedAvg and FedProx; SCAFFOLD's control variates are not clipped). */
const DP_OPTIONS = {
  'dp-clip': { type: 'number', help: "DP-FedAvg: each client clips its update to this L2 norm (Flower's clipping_norm); with --dp-noise-multiplier" },
  'dp-noise-multiplier': { type: 'number', help: "DP-FedAvg: the server adds Gaussian noise of this many times --dp-clip to the sum of the clipped updates (Opacus' and Flower's noise_multiplier), or, with --secure-aggregation, the clients add Skellam shares of it (distributed DP); account it with --delta" },
} as const;

/** dp from --dp-clip and --dp-noise-multiplier: both or neither. */
function readDpFlags(o: CliValues): { dp?: { clipNorm: number; noiseMultiplier: number } } {
  const clipNorm = o['dp-clip'] as number | undefined;
  const noiseMultiplier = o['dp-noise-multiplier'] as number | undefined;
  if (clipNorm === undefined && noiseMultiplier === undefined) return {};
  if (clipNorm === undefined || noiseMultiplier === undefined) throw new InvalidParameterError('DP-FedAvg needs both --dp-clip and --dp-noise-multiplier');
  return { dp: { clipNorm, noiseMultiplier } };
}

/** The noise of DP-FedAvg without --delta is added but not accounted: said before the run. */
function dpWarning(o: CliValues): string | undefined {
  return o['dp-noise-multiplier'] !== undefined && o.delta === undefined ? 'warning: DP-FedAvg noise without --delta: the rounds declare their privacy step but the run does not account epsilon (give --delta, and --epsilon-budget to stop before a budget)' : undefined;
}

/** The server's options from the command line: the network, the local training, and the algorithm's default optimizer with the name or learning rate given. */
function readCommon(a: FedAvgAlgorithm, o: CliValues, { required, list, seed }: CliContext) {
  const sizes = (list('layers') ?? required<string[]>('layers')).map(Number);
  const loss = o.loss as string;
  const network = { sizes, activation: o.activation, outputActivation: o['output-activation'] ?? (loss === 'softmax-cross-entropy' ? 'softmax' : 'sigmoid'), loss, seed };
  const name = (o.optimizer as 'sgd' | 'adam' | undefined) ?? DEFAULT_OPTIMIZER[a].name;
  const other = name === 'adam' ? 'fedavg' : 'scaffold';
  const learningRate = (o['learning-rate'] as number | undefined) ?? (name === DEFAULT_OPTIMIZER[a].name ? DEFAULT_OPTIMIZER[a].learningRate : DEFAULT_OPTIMIZER[other].learningRate);
  const robust = { aggregation: o.aggregation, trim: o.trim, maxSamples: o['max-samples'], clipNorm: o['clip-norm'] };
  return { network, rounds: o.rounds, epochs: o.epochs, batchSize: o['batch-size'], optimizer: { name, learningRate }, ...robust };
}

/** The one client of the family: the server's requests say which algorithm it trains for (labels are the spec's own). */
const client = {
  options: (raw: unknown) => clientSpecOptions.check(raw, 'spec.options'),
  create: ({ id, data, labels, options }: { id: string; data: import('../../data/matrix.js').Matrix; labels?: Int32Array; options: { seed?: number } }) =>
    new FedAvgClient(id, data, clientOptions.trust({ labels, seed: options.seed })),
};

const clientCli: CliPart = {
  options: { label: { type: 'string', help: 'with a classifier: the CSV column of integer class labels' } },
  read: (_o, { seed }) => ({ seed }),
};

export const fedavg = defineAlgorithm({
  name: 'fedavg',
  protocol: FEDAVG_PROTOCOL,
  summary: "federated averaging of a network's parameters (McMahan et al. 2017): an autoencoder or a classifier",
  // 'dirichlet' holds the secure round's masks and Shamir sharing (secureAggregation: updates sum) and the accountant (dp)
  wasmFeatures: ['nn', 'dirichlet'],
  server: { options: (raw) => checkServerOptions(fedAvgServerOptions, raw), create: (options) => new FedAvgServer(options) },
  state: serverState('fedavg', FedAvgServer, (options: ConstructorParameters<typeof FedAvgServer>[0]) => new FedAvgServer(options), STATE),
  client,
  artifact: { save: save('fedavg'), load: load('fedavg'), model: network },
  cli: {
    server: {
      options: { ...NETWORK_OPTIONS, ...DP_OPTIONS, optimizer: { type: 'string', choices: ['sgd', 'adam'], help: 'the local optimizer (default adam)' } },
      read: (o, ctx) => ({ ...readCommon('fedavg', o, ctx), ...readDpFlags(o) }),
      warning: dpWarning,
    },
    client: clientCli,
  },
});

export const fedprox = defineAlgorithm({
  name: 'fedprox',
  protocol: FEDAVG_PROTOCOL,
  summary: 'FedAvg with a proximal term that keeps local training near the global parameters (Li et al. 2020)',
  // 'dirichlet' holds the secure round's masks and Shamir sharing (secureAggregation: updates sum) and the accountant (dp)
  wasmFeatures: ['nn', 'dirichlet'],
  server: { options: (raw) => checkServerOptions(fedProxServerOptions, raw), create: (options) => new FedProxServer(options) },
  state: serverState('fedprox', FedProxServer, (options: ConstructorParameters<typeof FedProxServer>[0]) => new FedProxServer(options), STATE),
  client,
  artifact: { save: save('fedprox'), load: load('fedprox'), model: network },
  cli: {
    server: {
      options: {
        ...NETWORK_OPTIONS,
        ...DP_OPTIONS,
        optimizer: { type: 'string', choices: ['sgd', 'adam'], help: 'the local optimizer (default adam)' },
        mu: { type: 'number', help: 'the proximal weight mu (required)' },
      },
      read: (o, ctx) => ({ ...readCommon('fedprox', o, ctx), mu: ctx.required('mu'), ...readDpFlags(o) }),
      warning: dpWarning,
    },
    client: clientCli,
  },
});

export const scaffold = defineAlgorithm({
  name: 'scaffold',
  protocol: FEDAVG_PROTOCOL,
  summary: 'FedAvg with control variates that correct client drift (Karimireddy et al. 2020)',
  // 'dirichlet' holds the secure round's masks and Shamir sharing (secureAggregation: updates sum) and the accountant (dp)
  wasmFeatures: ['nn', 'dirichlet'],
  server: { options: (raw) => checkServerOptions(scaffoldServerOptions, raw), create: (options) => new ScaffoldServer(options) },
  state: serverState('scaffold', ScaffoldServer, (options: ConstructorParameters<typeof ScaffoldServer>[0]) => new ScaffoldServer(options), STATE),
  client,
  artifact: { save: save('scaffold'), load: load('scaffold'), model: network },
  cli: {
    server: {
      options: {
        ...NETWORK_OPTIONS,
        optimizer: { type: 'string', choices: ['sgd', 'adam'], help: 'the local optimizer (sgd only)' },
        'server-learning-rate': { type: 'number', default: 1, help: "the server's step eta_g" },
      },
      read: (o, ctx) => ({ ...readCommon('scaffold', o, ctx), serverLearningRate: o['server-learning-rate'] }),
    },
    client: clientCli,
  },
});
