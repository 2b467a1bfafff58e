/**
 * A valid call of every public function, class, static and method, for
 * test/hostile-api.test.ts to spoil one argument, option or entry at a time.
 * Each recipe builds fresh arguments per call (functions may keep or write
 * into what they get). `internal` lists methods that TypeScript marks private
 * or @internal: on the prototype, but not API.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { types } from 'node:util';
import { gzipSync } from 'node:zlib';
import { tableToIPC } from 'apache-arrow';
import * as f from '../../ts/index.js';
import * as n from '../../ts/node.js';
import * as experiments from '../../ts/experiments/index.js';
import type { ClientRole, Message, RoundContext, ServerRole } from '../../ts/index.js';
import { blobs } from '../helpers.js';
import { tinyFashionMnist } from './idx.js';

export interface Recipe {
  /** valid arguments of the call (or constructor, or factory) */
  args?: () => unknown[];
  /** the call itself: the function, `new` for a class, or a factory */
  call?: (...a: unknown[]) => unknown;
  /** the instance whose methods are called (default: `call` with `args`) */
  make?: () => unknown;
  /** instance methods: valid arguments, given the instance `make` made */
  methods?: Record<string, (self: any) => unknown[] | Promise<unknown[]>>;
  statics?: Record<string, { call: (...a: unknown[]) => unknown; args: () => unknown[] }>;
  /** methods TypeScript marks private or @internal */
  internal?: string[];
  /** surface names covered elsewhere, with the reason in a comment */
  covers?: string[];
}

const fn = (g: (...a: any[]) => unknown, args: () => unknown[]): Recipe => ({ call: (...a) => g(...a), args });
const cls = (C: new (...a: any[]) => unknown, args: () => unknown[], rest: Omit<Recipe, 'args' | 'call'> = {}): Recipe => ({
  call: (...a) => new C(...a),
  args,
  ...rest,
});
const stat = (g: (...a: any[]) => unknown, args: () => unknown[]) => ({ call: (...a: unknown[]) => g(...a), args });

// small data: two blobs in two dimensions, split between three clients
const X = () => blobs(40, 2, 2, 1);
const rows = () => X().toRows();
const labels = () => Int32Array.from({ length: 40 }, (_, i) => i % 2);
const clientsOf = () => [X().selectRows(Array.from({ length: 14 }, (_, i) => i)), X().selectRows(Array.from({ length: 13 }, (_, i) => 14 + i)), X().selectRows(Array.from({ length: 13 }, (_, i) => 27 + i))];
/** three clients of blob rows scaled into [0, 1], each with a test set holding inliers and outliers */
const communityClients = () =>
  clientsOf().map((m, i) => {
    const r = m.toRows().map((row) => Array.from(row, (v) => 1 / (1 + Math.exp(-v))));
    return { id: ['a', 'b', 'c'][i]!, X: r, test: { X: r.slice(0, 6), outlier: [0, 0, 0, 0, 1, 1] } };
  });
/** n rows of 3 features in (0, 1), the two classes (even and odd rows) apart. */
const communityRows = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => [0, 1, 2].map((j) => 1 / (1 + Math.exp(-((i % 2) * 3 - 1.5 + Math.sin(seed * 7 + i * 3 + j))))));
const histograms = () => [
  [3, 1, 0],
  [0, 2, 2],
  [1, 1, 1],
  [4, 0, 1],
  [0, 3, 0],
  [2, 2, 0],
];
const mdmParams = () => ({
  tau: [0.5, 0.5],
  alpha: [
    [1, 2, 3],
    [3, 2, 1],
  ],
  pi: [
    [0.2, 0.2, 0.2, 0.2, 0.2],
    [0.1, 0.2, 0.3, 0.2, 0.2],
  ],
});
const mdm = () => new f.DirichletMultinomialMixture(mdmParams());
/** the FedGenGMM experiment on the two blobs, a few rows flagged as anomalies: every kind of method, small and fast */
const experimentData = () => ({ X: X(), featureNames: ['x', 'y'], anomaly: Array.from({ length: 40 }, (_, i) => (i % 9 === 0 ? 1 : 0)) });
const experimentConfig = (): experiments.FedGenGMMExperimentConfig => ({ clients: 2, partition: 'iid', components: 1, h: 10, methods: ['fedgengmm', 'dem-kfed', 'central', 'local'], repeats: 1, seed: 1 });

const clientGraph = (): f.GraphInput => ({
  nodes: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
  edges: [['a', 'b'], ['b', 'c'], ['c', 'a'], ['d', 'e', 2], ['e', 'f'], ['f', 'd'], ['c', 'd', 0.5]],
});
const gmm = () => new f.GaussianMixture({ nComponents: 2, seed: 1 }).fit(X());
let registered = 0;
/** A well-formed algorithm descriptor, every part a fresh object: DEM's, under `name`, with one CLI option. */
const descriptor = (name: string) => {
  const dem = f.algorithm('dem');
  return {
    name,
    protocol: dem.protocol,
    summary: 'distributed EM under another name',
    wasmFeatures: ['dem'],
    server: { options: dem.server.options, create: dem.server.create },
    client: { options: dem.client.options, create: dem.client.create },
    artifact: { save: dem.artifact.save, load: dem.artifact.load },
    cli: { server: { options: { features: { type: 'int', help: 'features' } }, read: () => ({}) } },
  };
};
/** A 2-3-2 network's saved JSON (the network freed). */
const netJSON = () => {
  const n = new f.Network(netSpec() as never);
  try {
    return JSON.stringify(n.toJSON());
  } finally {
    n.dispose();
  }
};
const gmmJSON = () => {
  const g = gmm();
  try {
    return g.toJSON();
  } finally {
    g.dispose();
  }
};
const netSpec = () => ({ sizes: [2, 3, 2], activation: 'tanh', outputActivation: 'identity', loss: 'mse', init: 'xavier', seed: 1 });
const aeOptions = (): f.AutoencoderOptions => ({
  hiddenLayers: [3, 1, 3], activation: 'relu', outputActivation: 'identity', loss: 'mse', optimizer: 'adam', learningRate: 1e-2,
  epochs: 2, batchSize: 8, shuffle: true, init: 'pytorch', nFeatures: 2, seed: 1, onEpoch: () => undefined,
});
const aeJSON = () => {
  const a = new f.Autoencoder(aeOptions()).fit(X());
  try {
    return a.toJSON();
  } finally {
    a.dispose();
  }
};
const labelsText = () => Array.from(labels(), (c) => (c === 0 ? 'no' : 'yes'));
const mlpOptions = (): f.MLPClassifierOptions => ({
  hiddenLayerSizes: [4], activation: 'logistic', solver: 'sgd', alpha: 1e-4, batchSize: 16, learningRateInit: 1e-2, maxIter: 3, shuffle: true,
  randomState: 1, tol: 1e-4, nIterNoChange: 2, momentum: 0.9, nesterovsMomentum: true, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, warmStart: false,
  init: 'xavier', onEpoch: () => undefined,
});
const mlpJSON = () => {
  const m = new f.MLPClassifier(mlpOptions()).fit(X(), labelsText());
  try {
    return m.toJSON();
  } finally {
    m.dispose();
  }
};
const ocsvmJSON = () => {
  const m = new f.OneClassSVM({ nu: 0.3 }).fit(X());
  try {
    return m.toJSON();
  } finally {
    m.dispose();
  }
};
const ctx = (clients: string[] = ['0', '1', '2']): RoundContext => ({ round: 1, clients, available: clients });
const spec = (id: string, data: f.Matrix, algorithm: n.AlgorithmName = 'dem', options?: Record<string, unknown>): n.ClientSpec => ({ algorithm, id, data: n.matrixData(data), options });

/** The first request `server` sends, the replies of `clients`, and the context of the round. */
function firstRound(server: ServerRole, clients: ClientRole[]): { request: Message; replies: Map<string, Message>; ctx: RoundContext } {
  const c = ctx(clients.map((x) => x.id));
  const requests = server.configure(c);
  const replies = new Map<string, Message>();
  let request: Message | undefined;
  for (const client of clients) {
    const r = requests.get(client.id);
    if (!r) continue;
    request = r;
    const reply = client.respond(r) as Message | undefined;
    if (reply) replies.set(client.id, reply);
  }
  return { request: request!, replies, ctx: c };
}

/** A live server with its first round's replies: methods get `self` = the server, args from `round`. */
const rounds = new WeakMap<object, { request: Message; replies: Map<string, Message>; ctx: RoundContext; clients: ClientRole[] }>();

function withRound<S extends ServerRole>(makeServer: () => S, makeClients: () => ClientRole[]): S {
  const server = makeServer();
  const clients = makeClients();
  const round = firstRound(server, clients);
  rounds.set(server, { ...round, clients });
  // the harness disposes what it made: the clients go with the server
  const dispose = (server as { dispose?(): void }).dispose?.bind(server);
  Object.defineProperty(server, 'dispose', {
    value: () => {
      dispose?.();
      for (const c of clients) (c as { dispose?(): void }).dispose?.();
    },
  });
  return server;
}

const roundOf = (self: object) => rounds.get(self)!;
const firstReply = (self: object) => [...roundOf(self).replies.values()][0]!;

const serverMethods = (extra: Record<string, (self: any) => unknown[]> = {}): Record<string, (self: any) => unknown[]> => ({
  configure: (self) => [roundOf(self).ctx],
  accept: (self) => [firstReply(self), roundOf(self).request, roundOf(self).ctx],
  aggregate: (self) => {
    const r = roundOf(self);
    const accepted = new Map([...r.replies].map(([id, m]) => [id, self.accept(m, r.request, r.ctx)]));
    return [r.ctx, accepted, []];
  },
  result: () => [],
  dispose: () => [],
  ...extra,
});

const demClients = () => clientsOf().map((x, i) => new f.DemClient(String(i), x));
const fedgengmmClients = () => clientsOf().map((x, i) => new f.FedGenGMMClient(String(i), x, { kMin: 1, kMax: 2, seed: i }));
const fedgemClients = () => clientsOf().map((x, i) => new f.FedGEMClient(String(i), x, { nComponents: 2, variance: 1, seed: i }));
const mdmClients = () => histograms().map((h, i) => new f.MdmClient(String(i), h, { seed: i }));
const AE_NET = { sizes: [2, 3, 2], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 } as const;
const fedavgClients = () => clientsOf().map((x, i) => new f.FedAvgClient(String(i), x, { seed: i }));
const fedavgOptions = () => ({ network: { ...AE_NET }, rounds: 2, epochs: 1, batchSize: 8, optimizer: { name: 'sgd', learningRate: 0.1 }, aggregation: 'mean', weighting: 'samples' });
const fedavgServer = () => new f.FedAvgServer({ network: AE_NET, rounds: 2, batchSize: 8 });
const feddistrClients = () => clientsOf().map((x, i) => new f.FedDistrClient(String(i), x, { labels: Int32Array.from({ length: x.nRows }, (_, j) => j % 2), seed: i }));
/** two task labels' Gaussians in two dimensions, full covariances */
const gaussianBases = () => [
  { label: 0, count: 20, mean: Float64Array.of(-2, 0), covariance: Float64Array.of(1, 0.2, 0.2, 1) },
  { label: 1, count: 20, mean: Float64Array.of(2, 0), covariance: Float64Array.of(1, 0, 0, 2) },
];
const feddistrServer = () => new f.FedDistrServer({ dimension: 2, kMax: 2, seed: 1 });
/** The three servers of the FedAvg family share their recipe. */
const fedavgFamily = (make: (o: any) => ServerRole, extra: Record<string, unknown> = {}): Recipe => ({
  call: (...a) => make(a[0]),
  make: () => withRound(() => make({ ...fedavgOptions(), ...extra }), fedavgClients),
  args: () => [{ ...fedavgOptions(), ...extra }],
  methods: serverMethods(),
  internal: ['trainPayload', 'combine', 'step', 'afterStep', 'blameIfNotFinite', 'saveState', 'restoreState', 'extraState', 'restoreExtra', 'checkClipped', 'noisyAverage'],
});

/** A request a client role answers, from its server's first round. */
function requestFor(server: () => ServerRole & { dispose?(): void }, self: ClientRole): Message {
  const s = server();
  try {
    return s.configure(ctx([self.id])).get(self.id)!;
  } finally {
    s.dispose?.();
  }
}

const communitiesClients = () => clientsOf().map((x, i) => new f.CommunitiesClient(String(i), x, { detector: { kind: 'gmm', contamination: 0.1 } }));
const communitiesServer = () => new f.CommunitiesServer({ nFeatures: 2, kind: 'gmm', contamination: 0.1 });
const detectorJSON = () => {
  const d = new f.LocalDetector({ kind: 'gmm', contamination: 0.1 }).fit(X());
  try {
    return d.toJSON();
  } finally {
    d.dispose();
  }
};

const demServer = () => new f.DemServer({ nComponents: 2, nFeatures: 2, covarianceType: 'diag', init: 'kfed', seed: 1, maxRounds: 3 });
/** DEM's options of demServer, and a checkpoint of its run after round 1 (saveCheckpoint's input: the live RunCheckpoint). */
const DEM_OPTIONS = { nComponents: 2, nFeatures: 2, covarianceType: 'diag', init: 'kfed', seed: 1, maxRounds: 3 } as const;
function demCheckpoint(): f.RunCheckpoint {
  let saved: f.RunCheckpoint | undefined;
  const server = n.makeServer('dem', DEM_OPTIONS);
  const clients = demClients();
  try {
    // stopped in the hook after round 1, as a crash would stop it: the server role is as the checkpoint saw it
    try {
      f.runFederationSync(server, clients, {
        onCheckpoint: (c) => {
          saved = c;
          throw new Error('stop');
        },
      });
    } catch (e) {
      if (!saved) throw e;
    }
    return saved!;
  } finally {
    for (const c of clients) c.dispose();
  }
}
/** demCheckpoint saved as JSON text would give it, its server role freed. */
function savedDemCheckpoint(): unknown {
  const c = demCheckpoint();
  try {
    return JSON.parse(JSON.stringify(f.saveCheckpoint('dem', c)));
  } finally {
    c.server.dispose?.();
  }
}
const fedgengmmServer = () => new f.FedGenGMMServer({ nComponents: 2, nFeatures: 2, seed: 1 });
const fedgemServer = () => new f.FedGEMServer({ nFeatures: 2, rounds: 2 });
const mdmServer = () => new f.MdmServer({ nComponents: 2, nCategories: 3, maxCount: 5, rounds: 2, seed: 1 });
/** one component: requestFor asks a server with a cohort of one client */
const mdmServer1 = () => new f.MdmServer({ nComponents: 1, nCategories: 3, maxCount: 5, rounds: 2, seed: 1 });

const PING = f.defineMessage('test/ping', f.record({ v: f.f64Array(), n: f.wholeNumber(0) }));
const ping = () => PING.create('a', 1, { v: [1, 2], n: 3 });

const tmp = () => process.cwd();
/** Five images as Fashion-MNIST's training files (gzipped images, plain labels). */
const fashionFiles = () => {
  const t = tinyFashionMnist(5);
  return { images: gzipSync(t.images), labels: t.labels };
};
/** A folder under the scratch directory holding fashionFiles() under the dataset's names. */
const fashionDir = () => {
  const dir = join(tmp(), 'fashion-mnist');
  if (!existsSync(join(dir, 'train-labels-idx1-ubyte.gz'))) {
    const files = fashionFiles();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'train-images-idx3-ubyte.gz'), files.images);
    writeFileSync(join(dir, 'train-labels-idx1-ubyte.gz'), gzipSync(files.labels));
  }
  return dir;
};
const DIST_WORKER = new URL('../../dist/worker.js', import.meta.url);

const brokerUsers = () => [
  { username: 'fedmix-server', password: 'pw-server', role: 'server' as const },
  { username: 'a', password: 'pw-a', role: 'client' as const },
];
/** serve()'s or join()'s options with short waits where the hostile value is null or undefined (the defaults wait a minute). */
function quick(o: unknown, defaults: Record<string, unknown> = { joinTimeout: 0.2, listen: { port: 0 } }): unknown {
  if (o === null || typeof o !== 'object' || types.isProxy(o) || Object.getPrototypeOf(o) !== Object.prototype) return o;
  const d = (k: string) => Object.getOwnPropertyDescriptor(o, k);
  // a throwing getter stays where it is: only plain undefined or null values (which mean the long defaults) are replaced
  const fill: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) if (d(key)?.get === undefined && (o as Record<string, unknown>)[key] == null) fill[key] = value;
  return Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(o), ...Object.getOwnPropertyDescriptors(fill) });
}

/** Nothing listens on port 1: a connection is refused at once. */
const NOWHERE = 'mqtt://127.0.0.1:1';


// secure aggregation: three clients, all pairs, threshold 2; `secaggTo` takes a server (and the clients) to a stage
const secaggParams = (): f.SecureAggregationParams => ({
  run: 'r',
  round: 1,
  clients: ['a', 'b', 'c'],
  neighbours: 2,
  threshold: 2,
  graphSeed: new Uint8Array(32),
  curve: 'X25519',
  length: 2,
  fixedPoint: f.fixedPoint(1, 3),
  // the consistency check on (Node's WebCrypto has Ed25519), so that its calls are reached in order
  signature: 'Ed25519',
});
const secaggClients = async (): Promise<Map<string, f.SecureAggregationClient>> =>
  new Map(await Promise.all(['a', 'b', 'c'].map(async (id) => [id, await f.SecureAggregationClient.create(id, secaggParams())] as const)));
type SecaggStage = 'advertise' | 'advertised' | 'shares' | 'routed' | 'masked' | 'unmaskRequest' | 'signature' | 'signatures' | 'unmask' | 'result';
/** Drives `server` with fresh clients up to `stage`: every message before it delivered, and client a's message of that stage (or [] for the server's own calls) returned. */
async function secaggTo(server: f.SecureAggregationServer, stage: SecaggStage): Promise<unknown[]> {
  const order: SecaggStage[] = ['advertise', 'advertised', 'shares', 'routed', 'masked', 'unmaskRequest', 'signature', 'signatures', 'unmask', 'result'];
  const at = order.indexOf(stage);
  const clients = await secaggClients();
  const input = Float64Array.of(0.5, -0.25);
  for (const [id, c] of clients) {
    if (at === 0 && id === 'a') return ['a', c.advertise()];
    server.acceptAdvertise(id, c.advertise());
  }
  if (at === 1) return [];
  const keys = server.advertised();
  for (const [id, c] of clients) {
    const { shares, commitment } = await c.shareKeys(keys.get(id)!);
    if (at === 2 && id === 'a') return ['a', shares, commitment];
    server.acceptShares(id, shares, commitment);
  }
  if (at === 3) return [];
  const routed = server.routed();
  for (const [id, c] of clients) {
    const { masked, refused } = await c.maskedInput(routed.get(id)!, input);
    if (at === 4 && id === 'a') return ['a', masked, refused];
    server.acceptMasked(id, masked, refused);
  }
  if (at === 5) return [];
  const { survivors, dropped } = server.unmaskRequest();
  for (const [id, c] of clients) {
    const signature = await c.signSurvivors(survivors);
    if (at === 6 && id === 'a') return ['a', signature];
    server.acceptSignature(id, signature);
  }
  if (at === 7) return [];
  const forwarded = await server.signatures();
  for (const [id, c] of clients) {
    await c.acceptSignatures(forwarded.get(id)!);
    const answer = c.unmask(survivors, dropped);
    if (at === 8 && id === 'a') return ['a', answer];
    server.acceptUnmask(id, answer);
  }
  return [];
}
/** Client a with b and c, taken to the stage before `stage` of the client's calls; the arguments of that call. */
async function secaggClientTo(a: f.SecureAggregationClient, stage: 'shareKeys' | 'maskedInput' | 'signSurvivors' | 'acceptSignatures' | 'unmask'): Promise<unknown[]> {
  const p = secaggParams();
  const b = await f.SecureAggregationClient.create('b', p);
  const c = await f.SecureAggregationClient.create('c', p);
  const keys = new Map([['b', b.advertise()], ['c', c.advertise()]]);
  if (stage === 'shareKeys') return [keys];
  const fromA = await a.shareKeys(keys);
  const fromB = await b.shareKeys(new Map([['a', a.advertise()], ['c', c.advertise()]]));
  const fromC = await c.shareKeys(new Map([['a', a.advertise()], ['b', b.advertise()]]));
  const received = new Map([['b', fromB.shares.get('a')!], ['c', fromC.shares.get('a')!]]);
  if (stage === 'maskedInput') return [received, Float64Array.of(0.5, -0.25)];
  await a.maskedInput(received, Float64Array.of(0.5, -0.25));
  const survivors = ['a', 'b', 'c'];
  if (stage === 'signSurvivors') return [survivors];
  await a.signSurvivors(survivors);
  // b and c sign the same set (each after its own masked input)
  await b.maskedInput(new Map([['a', fromA.shares.get('b')!], ['c', fromC.shares.get('b')!]]), Float64Array.of(0.1, 0.2));
  await c.maskedInput(new Map([['a', fromA.shares.get('c')!], ['b', fromB.shares.get('c')!]]), Float64Array.of(0.3, 0.4));
  const signatures = new Map([['b', await b.signSurvivors(survivors)], ['c', await c.signSurvivors(survivors)]]);
  if (stage === 'acceptSignatures') return [signatures];
  await a.acceptSignatures(signatures);
  return [survivors, []];
}
const SERVER_INTERNALS = ['neighboursOf', 'requireStage', 'requireLive', 'ordered', 'remove', 'requireEnough', 'pruneIsolated', 'copyAdvertised', 'copyRouted', 'dropsCopy', 'acceptAdvertiseRead', 'acceptSharesRead', 'acceptMaskedRead', 'acceptUnmaskRead'];

export const RECIPES: Record<string, Recipe> = {
  // the loader
  init: fn(f.init, () => [{ backend: 'auto', features: ['dem', 'svm', 'nn', 'dirichlet', 'fedgem', 'assignment', 'float32'] }]),
  backendInfo: fn(f.backendInfo, () => []),
  clientSeed: fn(f.clientSeed, () => [7, 'client-3']),

  // errors: anything as a message
  FedmixError: cls(f.FedmixError, () => ['INVALID_DATA', 'a message']),
  InvalidDataError: cls(f.InvalidDataError, () => ['a message']),
  InvalidParameterError: cls(f.InvalidParameterError, () => ['a message']),
  NumericalError: cls(f.NumericalError, () => ['a message']),
  InvalidMessageError: cls(f.InvalidMessageError, () => ['a message', 'a check']),
  FederationError: cls(f.FederationError, () => ['a message']),
  BrokerError: cls(f.BrokerError, () => ['a message']),
  UntrustedBrokerError: cls(f.UntrustedBrokerError, () => ['a message']),
  SecureAggregationError: cls(f.SecureAggregationError, () => ['a message']),
  OtherRunError: cls(f.OtherRunError, () => ['a message', 'run-b', 'run-a']),
  PrivacyBudgetError: cls(f.PrivacyBudgetError, () => ['a message']),
  NotFittedError: cls(f.NotFittedError, () => ['a message']),
  DisposedError: cls(f.DisposedError, () => ['a message']),
  WasmError: cls(f.WasmError, () => ['a message']),
  WasmAllocationError: cls(f.WasmAllocationError, () => ['a message']),
  ArrowNotLoadedError: cls(f.ArrowNotLoadedError, () => ['a message']),
  ContributionError: cls(f.ContributionError, () => ['client 3', 'a message', 'a check']),

  // data
  Matrix: cls(f.Matrix, () => [new Float64Array(6), 3, 2], {
    methods: {
      get: () => [1, 1],
      column: () => [1],
      row: () => [2],
      toRows: () => [],
      selectRows: () => [[0, 2]],
      selectColumns: () => [[1]],
      toArrow: () => [['a', 'b']],
      intact: () => [],
    },
    statics: {
      zeros: stat(f.Matrix.zeros, () => [3, 2]),
      fromColumns: stat(f.Matrix.fromColumns, () => [[[1, 2, 3], Float64Array.of(4, 5, 6)]]),
      fromRows: stat(f.Matrix.fromRows, () => [rows()]),
      fromArrow: stat(f.Matrix.fromArrow, () => [X().toArrow(['a', 'b']), { columns: ['b'], nulls: 'drop' }]),
      from: stat(f.Matrix.from, () => [rows()]),
      vstack: stat(f.Matrix.vstack, () => [[X(), X()]]),
      isMatrix: stat(f.Matrix.isMatrix, () => [X()]),
    },
  }),
  PCA: cls(f.PCA, () => [{ nComponents: 1 }], {
    methods: {
      fit: () => [X()],
      transform: (self) => (self.fit(X()), [rows()]),
      fitTransform: () => [rows()],
      inverseTransform: (self) => (self.fit(X()), [[[0.5], [-1]]]),
      toJSON: (self) => (self.fit(X()), []),
      toArrow: (self) => (self.fit(X()), []),
    },
    statics: { fromJSON: stat(f.PCA.fromJSON, () => [JSON.stringify(new f.PCA({ nComponents: 1 }).fit(X()))]) },
    internal: ['state'],
  }),
  MinMaxScaler: cls(f.MinMaxScaler, () => [], {
    methods: { fit: () => [X()], transform: (self) => (self.fit(X()), [rows()]), fitTransform: () => [rows()], inverseTransform: (self) => (self.fit(X()), [rows()]), toJSON: (self) => (self.fit(X()), []) },
    statics: { fromJSON: stat(f.MinMaxScaler.fromJSON, () => [JSON.stringify(new f.MinMaxScaler().fit(X()))]) },
  }),
  StandardScaler: cls(f.StandardScaler, () => [], {
    methods: { fit: () => [X()], transform: (self) => (self.fit(X()), [rows()]), fitTransform: () => [rows()], inverseTransform: (self) => (self.fit(X()), [rows()]), toJSON: (self) => (self.fit(X()), []) },
    statics: { fromJSON: stat(f.StandardScaler.fromJSON, () => [JSON.stringify(new f.StandardScaler().fit(X()))]) },
  }),
  isArrowTable: fn(f.isArrowTable, () => [X().toArrow()]),
  isArrowVector: fn(f.isArrowVector, () => [X().toArrow().getChild('x0')]),
  isArrowIPC: fn(f.isArrowIPC, () => [tableToIPC(X().toArrow(), 'file')]),
  toArrowVector: fn(f.toArrowVector, () => [Int32Array.of(0, 1, 1), { classes: ['a', 'b'] }]),
  toArrowTable: fn(f.toArrowTable, () => [{ score: Float64Array.of(1, 2, 3), label: ['a', 'b', 'a'], X: f.Matrix.fromRows([[1, 2], [3, 4], [5, 6]]) }]),
  partitionToArrow: fn(f.partitionToArrow, () => [f.partition.iid(10, { clients: 2, seed: 1 })]),
  // takes no argument; extra hostile ones are ignored, and it resolves (already loaded in Node)
  loadArrow: fn(f.loadArrow, () => []),
  parseCsv: fn(f.parseCsv, () => ['a,b\n1,2\n3,"4"\n']),
  csvToMatrix: fn(f.csvToMatrix, () => [f.parseCsv('a,b,c\n1,2,x\n3,4,y\n'), { exclude: ['c'] }]),
  makeBlobs: fn(f.makeBlobs, () => [{ nClusters: 3, nFeatures: 2, samplesPerCluster: [5, 6, 7], clusterStd: 0.5, minDistance: 3, seed: 1 }]),
  fashionMnist: fn(f.fashionMnist, () => [fashionFiles(), { split: 'train', n: 3, sample: 'stratified', seed: 1 }]),

  // models
  GaussianMixture: cls(f.GaussianMixture, () => [{ nComponents: 2, covarianceType: 'diag', tol: 1e-3, regCovar: 1e-6, maxIter: 50, nInit: 2, initParams: 'kmeans', warmStart: false, seed: 1, threads: 1 }], {
    methods: {
      fit: () => [X()],
      fitAsync: () => [X()],
      fitPredict: () => [rows()],
      scoreSamples: (self) => (self.fit(X()), [X()]),
      score: (self) => (self.fit(X()), [rows()]),
      predict: (self) => (self.fit(X()), [X()]),
      predictProba: (self) => (self.fit(X()), [X()]),
      sample: (self) => (self.fit(X()), [5, { seed: 2 }]),
      bic: (self) => (self.fit(X()), [X()]),
      aic: (self) => (self.fit(X()), [X()]),
      toJSON: (self) => (self.fit(X()), []),
      toArrow: (self) => (self.fit(X()), []),
      dispose: () => [],
    },
    statics: {
      fromJSON: stat(f.GaussianMixture.fromJSON, () => [gmmJSON()]),
      fromParameters: stat(f.GaussianMixture.fromParameters, () => [{ covarianceType: 'diag', weights: [0.5, 0.5], means: [[0, 0], [1, 1]], covariances: [[1, 1], [1, 1]], nFeatures: 2 }]),
    },
    internal: ['fitted', 'read', 'withData', 'fitResident', 'scoreSamplesResident', 'fromHandle', 'fitArguments', 'fitOnCallingThread', 'fitOnShards', 'emOverShards'],
  }),
  KMeans: cls(f.KMeans, () => [{ nClusters: 2, init: 'k-means++', nInit: 2, maxIter: 50, tol: 1e-4, seed: 1, threads: 1 }], {
    methods: {
      fit: () => [X()],
      fitAsync: () => [X()],
      fitPredict: () => [rows()],
      predict: (self) => (self.fit(X()), [X()]),
      score: (self) => (self.fit(X()), [rows()]),
      toJSON: (self) => (self.fit(X()), []),
      toArrow: (self) => (self.fit(X()), []),
    },
    statics: { fromJSON: stat(f.KMeans.fromJSON, () => [JSON.stringify(new f.KMeans({ nClusters: 2, seed: 1 }).fit(X()))]) },
    internal: ['assign', 'state', 'checkGivenCenters', 'fitArguments', 'fitOnCallingThread', 'fitOnShards'],
  }),
  // networks: a 2-3-2 network on the two-feature blobs
  Network: cls(f.Network, () => [netSpec()], {
    methods: {
      getParameters: () => [],
      getGradients: () => [],
      setParameters: (self) => [self.getParameters()],
      attach: () => [X(), X()],
      optimizer: () => [{ name: 'sgd', learningRate: 1e-2, momentum: 0.9, dampening: 0, nesterov: true, weightDecay: 1e-4 }],
      // the set and optimizer are freed with the arguments
      trainEpoch: (self) => [
        self.attach(X(), X()),
        self.optimizer({ name: 'adam', learningRate: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 }),
        { batchSize: 8, seed: 1, proximal: { mu: 0.1, anchor: self.getParameters() }, correction: new Float32Array(self.nParameters), order: Array.from({ length: 40 }, (_, i) => 39 - i), l2: 1e-4 },
      ],
      evaluate: (self) => [self.attach(X(), X())],
      predict: () => [X()],
      layerOutputs: () => [rows(), 1],
      reconstructionErrors: () => [X()],
      gradient: () => [X(), X()],
      toJSON: () => [],
      dispose: () => [],
    },
    statics: { fromJSON: stat(f.Network.fromJSON, () => [netJSON()]) },
    internal: ['passes'],
  }),
  Autoencoder: cls(f.Autoencoder, () => [aeOptions()], {
    methods: {
      fit: () => [X()],
      encode: (self) => (self.fit(X()), [X()]),
      reconstruct: (self) => (self.fit(X()), [rows()]),
      scoreSamples: (self) => (self.fit(X()), [X()]),
      getParameters: (self) => (self.fit(X()), []),
      // nFeatures in the options: parameters go in before any fit
      setParameters: () => [new Float32Array(2 * 3 + 3 + 3 + 1 + 3 + 3 + 3 * 2 + 2)],
      toJSON: (self) => (self.fit(X()), []),
      dispose: () => [],
    },
    statics: { fromJSON: stat(f.Autoencoder.fromJSON, () => [aeJSON()]) },
    internal: ['sizes', 'build', 'fitted', 'release'],
  }),
  MLPClassifier: cls(f.MLPClassifier, () => [mlpOptions()], {
    methods: {
      fit: () => [X(), labelsText()],
      predict: (self) => (self.fit(X(), labelsText()), [X()]),
      predictProba: (self) => (self.fit(X(), labelsText()), [rows()]),
      score: (self) => (self.fit(X(), labelsText()), [X(), labelsText()]),
      getParameters: (self) => (self.fit(X(), labelsText()), []),
      setParameters: (self) => (self.fit(X(), labelsText()), [self.getParameters()]),
      toJSON: (self) => (self.fit(X(), labelsText()), []),
      dispose: () => [],
    },
    statics: { fromJSON: stat(f.MLPClassifier.fromJSON, () => [mlpJSON()]) },
    internal: ['sizes', 'network', 'fitted', 'codesIn'],
  }),
  nearestCenters: fn(f.nearestCenters, () => [X(), [0, 0, 1, 1], 2]),
  OneClassSVM: cls(f.OneClassSVM, () => [{ kernel: 'rbf', gamma: 'scale', nu: 0.3, tol: 1e-3, shrinking: true, cacheSize: 10, maxIter: -1 }], {
    methods: {
      fit: () => [X()],
      fitPredict: () => [rows()],
      decisionFunction: (self) => (self.fit(X()), [X()]),
      scoreSamples: (self) => (self.fit(X()), [rows()]),
      predict: (self) => (self.fit(X()), [X()]),
      toJSON: (self) => (self.fit(X()), []),
      dispose: () => [],
    },
    statics: { fromJSON: stat(f.OneClassSVM.fromJSON, () => [ocsvmJSON()]) },
    internal: ['fitted', 'read', 'fitResident', 'decisionFunctionResident'],
  }),
  LocalDetector: cls(f.LocalDetector, () => [{ kind: 'gmm', contamination: 0.1, gmm: { nComponents: 1, covarianceType: 'diag', seed: 1 }, ocsvm: { nu: 0.5 }, autoencoder: { epochs: 1, optimizer: { name: 'adam', learningRate: 1e-3 } }, noise: { clip: 5, epsilon: 1, delta: 1e-5 }, noiseSeed: 1 }], {
    methods: {
      fit: () => [X()],
      scoreSamples: (self) => (self.fit(X()), [X()]),
      predict: (self) => (self.fit(X()), [rows()]),
      inlierShare: (self) => (self.fit(X()), [X()]),
      toJSON: (self) => (self.fit(X()), []),
      dispose: () => [],
    },
    statics: { fromJSON: stat(f.LocalDetector.fromJSON, () => [detectorJSON()]) },
    internal: ['make', 'fitted', 'scoresOf', 'noisyMixture'],
  }),
  selectGaussianMixture: fn(f.selectGaussianMixture, () => [X(), { kMin: 1, kMax: 3, criterion: 'bic', covarianceTypes: ['diag', 'full'], seed: 1, maxIter: 20 }]),
  informationCriteria: fn(f.informationCriteria, () => [-1.5, 40, 5]),
  DirichletMultinomialMixture: cls(f.DirichletMultinomialMixture, () => [{ ...mdmParams(), categories: ['x', 'y', 'z'] }], {
    methods: {
      alphaOf: () => [1],
      piOf: () => [0],
      logPmf: () => [histograms(), { sizes: [4, 4, 3, 5, 3, 4] }],
      score: () => [histograms()],
      predictProba: () => [histograms()],
      predict: () => [histograms()],
      sample: () => [4, { seed: 1 }],
      toJSON: () => [],
      toArrow: () => [],
    },
    statics: {
      fromJSON: stat(f.DirichletMultinomialMixture.fromJSON, () => [JSON.stringify(mdm().toJSON())]),
      fit: stat(f.DirichletMultinomialMixture.fit, () => [histograms(), { nComponents: 2, rounds: 3, maxCount: 6, sizes: [4, 4, 3, 5, 3, 4], categories: ['x', 'y', 'z'], seed: 1 }]),
    },
    internal: ['evaluate', 'modelBytes', 'pointers'],
  }),

  // metrics
  averagePrecision: fn(f.averagePrecision, () => [[0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]]),
  rocAuc: fn(f.rocAuc, () => [[0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]]),
  normalizedError: fn(f.normalizedError, () => [[1, 2], [1.1, 2.2]]),
  mdmRecoveryError: fn(f.mdmRecoveryError, () => [mdm(), mdm()]),
  histogramEnergyDistance: fn(f.histogramEnergyDistance, () => [histograms(), histograms().reverse()]),
  adjustedRandScore: fn(f.adjustedRandScore, () => [[0, 0, 1, 1], ['a', 'b', 'b', 'b']]),
  silhouetteSamples: fn(f.silhouetteSamples, () => [X(), labels()]),
  silhouetteScore: fn(f.silhouetteScore, () => [rows(), Array.from(labels())]),
  scoreMixture: fn(f.scoreMixture, () => [gmm(), X(), { X: X(), anomaly: Array.from({ length: 40 }, (_, i) => (i < 5 ? 1 : 0)) }]),
  anomalyScores: fn(f.anomalyScores, () => [gmm(), X()]),
  gaussianNoiseOod: fn(f.gaussianNoiseOod, () => [X(), { variance: 0.01, seed: 1 }]),

  // special functions and distributions
  digamma: fn(f.digamma, () => [[0.5, 1, 2], new Float64Array(3)]),
  lgamma: fn(f.lgamma, () => [2.5]),
  trigamma: fn(f.trigamma, () => [Float64Array.of(1, 2)]),
  digammaDiff: fn(f.digammaDiff, () => [[0.5, 1], 3]),
  lnRisingFactorial: fn(f.lnRisingFactorial, () => [2, [1, 2, 3]]),
  dirichletMultinomialLogPmf: fn(f.dirichletMultinomialLogPmf, () => [histograms(), mdmParams().alpha, { coefficient: false }]),
  Rng: cls(f.Rng, () => [7], {
    methods: {
      uniform: () => [3],
      normal: () => [3],
      gamma: () => [2, 3, 1.5],
      dirichlet: () => [[1, 2, 3], 2],
      logDirichlet: () => [[0.5, 0.5], 2],
      multinomial: () => [10, [0.2, 0.8], 2],
      categorical: () => [[0.3, 0.7], 4],
      choice: () => [10, 3],
      permutation: () => [5],
      getState: () => [],
      setState: (self) => [(self as InstanceType<typeof f.Rng>).getState()],
      dispose: () => [],
    },
    statics: { unpredictable: stat(f.Rng.unpredictable, () => []) },
    internal: ['draw', 'dirichletDraws'],
  }),
  // the privacy accountant
  privacyEpsilon: fn(f.privacyEpsilon, () => [{ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 100, delta: 1e-5 }]),
  rdpSampledGaussian: fn(f.rdpSampledGaussian, () => [{ noiseMultiplier: 1.1, samplingRate: 0.01 }, [2, 4.5, 8]]),
  epsilonFromRdp: fn(f.epsilonFromRdp, () => [[0.1, 0.2], 1e-5, [2, 8]]),
  rdpSkellam: fn(f.rdpSkellam, () => [{ mu: 1e4, l1: 100, l2: 10 }, [2, 4.5, 8]]),
  // distributed DP: Skellam shares and their calibration
  addSkellamNoise: fn(f.addSkellamNoise, () => [new Uint8Array(32), 40, { seed: new Uint8Array(32).fill(3) }]),
  skellamNoise: fn(f.skellamNoise, () => [4, 2.5, { seed: new Uint8Array(32).fill(4) }]),
  distributedNoise: fn(f.distributedNoise, () => [{ clip: 1, noiseMultiplier: 1.1, length: 100, clients: 10, threshold: 7 }]),
  // privacy steps in envelopes, and releases composed by RDP
  withPrivacy: fn(f.withPrivacy, () => [f.REFUSAL.create('a', 1, { reason: 'no', code: 'INVALID_DATA' }), { mechanism: 'gaussian', noiseMultiplier: 1.1, samplingRate: 0.5 }]),
  readPrivacyStep: fn(f.readPrivacyStep, () => [{ mechanism: 'skellam', mu: 40, l1: 3, l2: 2 }]),
  composeReleases: fn(f.composeReleases, () => [[{ epsilon: 1, delta: 1e-6, count: 2 }, { epsilon: 0.5, delta: 1e-6, count: 3 }]]),
  // a client's own privacy ledger, and where it is kept
  ClientBudget: {
    statics: { open: stat(f.ClientBudget.open, () => [{ epsilon: 10, delta: 1e-5 }]) },
    make: () => f.ClientBudget.open({ epsilon: 10, delta: 1e-5 }),
    methods: {
      spent: () => [],
      concerns: () => [f.withPrivacy(f.REFUSAL.create('server', 1, { reason: 'no', code: 'INVALID_DATA' }), { mechanism: 'gaussian', noiseMultiplier: 2, samplingRate: 1 }), true],
      account: () => [{ ...f.withPrivacy(f.REFUSAL.create('server', 1, { reason: 'no', code: 'INVALID_DATA' }), { mechanism: 'gaussian', noiseMultiplier: 2, samplingRate: 1 }), run: 'run-hostile-0001' }, true, 'a'],
    },
    internal: ['accountNow', 'ledger', 'read', 'refuse'],
  },
  MemoryLedgerStore: cls(f.MemoryLedgerStore, () => [], { methods: { update: () => [() => undefined] } }),
  FileLedgerStore: cls(n.FileLedgerStore, () => [join(tmp(), 'hostile-ledger.json')], { methods: { update: () => [() => undefined] }, internal: ['read'] }),
  IndexedDbLedgerStore: cls(f.IndexedDbLedgerStore, () => ['hostile'], {
    // Node has no IndexedDB: test/client-budget-browser.test.ts runs update and close in Chromium
    covers: ['IndexedDbLedgerStore#update', 'IndexedDbLedgerStore#close'],
    internal: ['open'],
  }),
  RdpAccountant: cls(f.RdpAccountant, () => [{ orders: [1.5, 2, 8] }], {
    methods: {
      step: () => [{ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 10 }],
      epsilon: () => [1e-5],
      toJSON: () => [],
    },
    statics: { fromJSON: stat(f.RdpAccountant.fromJSON, () => [{ kind: 'RdpAccountant', orders: [2, 8], history: [{ noiseMultiplier: 1, samplingRate: 0.1, steps: 3 }] }]) },
  }),
  linearSumAssignment: fn(f.linearSumAssignment, () => [[[4, 1, 3], [2, 0, 5]], { maximize: false }]),
  AssignmentCost: cls(f.AssignmentCost, () => [2, 3], { methods: { dispose: () => [] } }),
  // graphs of clients: two triangles and an isolated client, one link weighted
  ClientGraph: cls(f.ClientGraph, () => [clientGraph()], { methods: { neighbors: () => ['a'], degree: () => ['e'], toJSON: () => [] }, internal: ['positionOf'] }),
  communities: fn(f.communities, () => [clientGraph(), { method: 'louvain', seed: 1 }]),
  modularity: fn(f.modularity, () => [clientGraph(), [['a', 'b', 'c'], ['d', 'e', 'f'], ['g']]]),

  // per-community training and the anomaly-communities paper's tables
  trainCommunities: fn(experiments.trainCommunities, () => [communityClients(), [['a', 'b'], ['c']], { rounds: 1, hiddenLayers: [2], seed: 1 }]),
  runCommunityExperiment: fn(experiments.runCommunityExperiment, () => [
    {
      train: { X: communityRows(60, 1), labels: Array.from({ length: 60 }, (_, i) => i % 2) },
      test: { X: communityRows(30, 2), labels: Array.from({ length: 30 }, (_, i) => i % 2) },
    },
    { clientsPerClass: [1], q: [0.08, 0.5], contamination: 0.1, detector: 'gmm', detectorOptions: { gmm: { covarianceType: 'diag' } }, federated: 'autoencoder', training: { rounds: 1, hiddenLayers: [2] }, rowsPerClient: 10, testRowsPerClient: 10, repeats: 1, seed: 1 },
  ]),
  groupsByClass: fn(experiments.groupsByClass, () => [['a', 'b', 'c'], [0, 0, 1]]),
  communityMembership: fn(experiments.communityMembership, () => [[['a', 'b'], ['c']], { a: 0, b: 1, c: 1 }]),
  communityRandIndex: fn(experiments.communityRandIndex, () => [[['a', 'b'], ['c']], [['a'], ['b', 'c']]]),
  mergedCommunityAuc: fn(experiments.mergedCommunityAuc, () => [[['a', 'b'], ['c']], { a: 0, b: 1, c: 1 }, { local: { a: 0.5, b: 0.6, c: 0.7 }, community: new Map([['a', 0.8], ['b', 0.9], ['c', 0.7]]) }]),
  aucByClient: fn(experiments.aucByClient, () => [{ clients: [{ id: 'a', auc: 0.5 }, { id: 'b', auc: 0.75 }] }]),
  formatCommunityTables: fn(experiments.formatCommunityTables, () => [
    {
      membership: { classes: [0, 1], rows: [{ group: 0, members: 2, counts: [1, 1] }] },
      auc: { local: { mean: 0.7, std: 0.1 }, ideal: { mean: 0.9, std: 0.05 } },
      merged: [{ group: 0, inlierClass: 0, clients: 1, auc: { local: { mean: 0.7, std: 0 } } }],
    },
  ]),

  // partitions
  'partition.iid': fn(f.partition.iid, () => [Array.from(labels()), { clients: 3, seed: 1 }]),
  'partition.dirichlet': fn(f.partition.dirichlet, () => [labels(), { clients: 3, alpha: 0.5, seed: 1, minSize: 2 }]),
  'partition.quantity': fn(f.partition.quantity, () => [labels(), { clients: 3, alpha: [1, 2], imbalance: 'clients', seed: 1, minSize: 1 }]),
  'partition.shift': fn(f.partition.shift, () => [X(), { parts: 3, beta: 0.2, clients: 3, alpha: 2, seed: 1, noiseVariance: 0.01 }]),
  'partition.applyShift': fn(f.partition.applyShift, () => {
    const p = f.partition.shift(X(), { parts: 3, beta: 0.2, clients: 3, alpha: 2, seed: 1 });
    return [X(), p.shift, { seed: 2 }];
  }),
  'partition.mdm': fn(f.partition.mdm, () => [Array.from({ length: 60 }, (_, i) => ['x', 'y', 'z'][i % 3]), { model: new f.DirichletMultinomialMixture({ ...mdmParams(), categories: ['x', 'y', 'z'] }), clients: 4, seed: 1, disjoint: false }]),
  'partition.fullyIid': fn(f.partition.fullyIid, () => [labels(), { sizes: [3, 5, 4], clients: 4, seed: 1, disjoint: true }]),
  'partition.contaminated': fn(f.partition.contaminated, () => [Array.from({ length: 60 }, (_, i) => i % 3), { clientsPerClass: 2, contamination: 0.2, rowsPerClient: 10, testLabels: Array.from({ length: 30 }, (_, i) => i % 3), testRowsPerClient: 5, seed: 1 }]),
  'partition.entangled': fn(f.partition.entangled, () => [Array.from({ length: 40 }, (_, i) => i % 4), { clients: 2, target: 0.3, tasks: Array.from({ length: 40 }, (_, i) => (i % 4) >> 1), seed: 1 }]),
  'partition.conditionallyIid': fn(f.partition.conditionallyIid, () => [labels(), { histograms: [[2, 1], [1, 3]], classes: [0, 1], seed: 1 }]),

  // the federation runtime
  runFederation: fn(f.runFederation, () => [fedgengmmServer(), fedgengmmClients(), { minClients: 1, joinTimeout: 1 }]),
  runFederationSync: fn(f.runFederationSync, () => [fedgengmmServer(), fedgengmmClients(), { onInvalid: 'exclude' }]),
  defineProtocol: fn(f.defineProtocol, () => ['p', [[PING, null]]]),
  sumLayout: fn(f.sumLayout, () => [PING, () => [{ name: 'v', length: 2 }, { name: 'n', length: 1 }], { integers: ['n'] }]),
  resolvePolicy: fn(f.resolvePolicy, () => [{ onInvalid: 'fail', minClients: 2, minReplies: 1, fraction: 0.5, sampleSeed: 1, roundTimeout: 3, joinTimeout: 3, maxMessageBytes: 4096 }]),
  ClientHost: cls(f.ClientHost, () => [new f.DemClient('0', X()), { maxMessageBytes: 1 << 20 }], {
    methods: {
      handle: (self) => [f.encodeMessage(requestFor(demServer, self.role), 'binary')],
      handleSync: (self) => [f.encodeMessage(requestFor(demServer, self.role), 'json')],
      decode: (self) => [f.encodeMessage(requestFor(demServer, self.role), 'binary')],
      answer: (self) => [requestFor(demServer, self.role)],
      answerSync: (self) => [requestFor(demServer, self.role)],
      handleDecoded: (self) => [requestFor(demServer, self.role), 'json'],
      handleDecodedSync: (self) => [requestFor(demServer, self.role), 'binary'],
      handleCopy: (self) => [requestFor(demServer, self.role)],
      handleCopySync: (self) => [requestFor(demServer, self.role)],
      requestDone: (self) => [requestFor(demServer, self.role)],
    },
    internal: ['check', 'copy', 'encode', 'refuse', 'secureStage', 'expectsReply', 'checkRun', 'pass', 'passDecoded', 'passDecodedSync', 'readEnvelope'],
  }),
  'REFUSAL.create': fn(f.REFUSAL.create, () => ['a', 1, { reason: 'no', code: 'INVALID_DATA' }]),
  'REFUSAL.read': fn(f.REFUSAL.read, () => [f.REFUSAL.create('a', 1, { reason: 'no', code: 'INVALID_DATA' })]),
  InProcessTransport: cls(f.InProcessTransport, () => [demClients(), { encoding: 'json' }], {
    methods: {
      available: () => [],
      availableSync: () => [],
      users: () => ['0'],
      exchange: () => [1, new Map([['0', requestFor(demServer, { id: '0' } as ClientRole)]]), { timeoutMs: 1000, replies: true }],
      exchangeSync: () => [1, new Map([['1', requestFor(demServer, { id: '1' } as ClientRole)]]), { replies: true }],
    },
    internal: ['deliver', 'deliverSync', 'plan', 'wire'],
  }),
  WebWorkerTransport: {
    // Node has no Web Workers: start() refuses with an InvalidParameterError; test/browser-federation.test.ts runs it
    statics: { start: stat(f.WebWorkerTransport.start, () => [[spec('0', X())], { workers: 1 }]) },
    covers: ['WebWorkerTransport#available', 'WebWorkerTransport#exchange', 'WebWorkerTransport#close'],
    // onLanes: a FedmixWorker's clients (FedmixWorker#clients), on lanes it already runs
    internal: ['disposeLanes', 'onLanes'],
  },
  FedmixWorker: {
    // Node has no Web Workers: start() refuses with an InvalidParameterError, whatever its options;
    // test/browser-build.test.ts runs the methods in Chromium, with bad options and data among them
    statics: { start: stat(f.FedmixWorker.start, () => [{ workerUrl: 'https://127.0.0.1:9/web-worker.js' }]) },
    covers: ['FedmixWorker#fitGaussianMixture', 'FedmixWorker#clients', 'FedmixWorker#close'],
    internal: ['run'],
  },
  MqttTransport: {
    // connect() to a port where nothing listens: refused at once, so every call ends quickly
    statics: { connect: stat(f.MqttTransport.connect, () => [{ url: NOWHERE, federation: 'F', username: 'u', password: 'p', clients: ['a'], encoding: 'json', defaultRoundTimeout: 1, connectTimeout: 1, protocolVersion: 4 }]) },
    // the methods need a connected transport: test/federation-mqtt.test.ts runs them against brokers
    covers: ['MqttTransport#available', 'MqttTransport#exchange', 'MqttTransport#finish'],
    internal: ['changed', 'onMessage'],
  },
  join: {
    // join waits for an unreachable broker up to its defaults (60 s) when an option is null or missing: short ones here
    call: (o, ...rest) => f.join(...([quick(o, { connectTimeout: 1, waitForBroker: 0, reconnectFor: 1 }), ...rest] as Parameters<typeof f.join>)),
    args: () => [{ url: NOWHERE, federation: 'F', client: new f.DemClient('a', X()), password: 'p', connectTimeout: 1, waitForBroker: 0, reconnectFor: 1 }],
  },
  federationTopics: fn(f.federationTopics, () => ['F']),
  clientTopics: fn(f.clientTopics, () => ['F', 'a']),
  topicGrants: fn(f.topicGrants, () => ['F', { username: 'a', role: 'client' }]),
  mayAccess: fn(f.mayAccess, () => ['F', { username: 'a', role: 'client' }, 'fedmix/F/up/a', 'publish']),
  mosquittoAcl: fn(f.mosquittoAcl, () => ['F', [{ username: 'fedmix-server', role: 'server' }, { username: 'a', role: 'client' }]]),
  validateId: fn(f.validateId, () => ['client id', 'a-1']),
  message: fn(f.message, () => ['k', 'a', 1, { x: 1 }]),
  checkEnvelope: fn(f.checkEnvelope, () => [ping(), 'test/ping']),
  encodeMessage: fn(f.encodeMessage, () => [ping(), 'binary']),
  decodeMessage: fn(f.decodeMessage, () => [f.encodeMessage(ping(), 'binary'), { kind: 'test/ping', maxBytes: 1 << 20 }]),
  copyMessage: fn(f.copyMessage, () => [ping()]),
  wireBytes: fn(f.wireBytes, () => ['é']),
  defineMessage: fn(f.defineMessage, () => ['k', f.record({ v: f.f64Array() })]),
  parsePayload: fn(f.parsePayload, () => [PING.payload, { v: [1], n: 2 }, 'client a']),
  f64Array: fn(f.f64Array, () => []),
  f32Array: fn(f.f32Array, () => []),
  i32Array: fn(f.i32Array, () => []),
  u32Array: fn(f.u32Array, () => []),
  finiteNumber: fn(f.finiteNumber, () => []),
  wholeNumber: fn(f.wholeNumber, () => [0, 10]),
  oneOf: fn(f.oneOf, () => [['a', 'b']]),
  flag: fn(f.flag, () => []),
  record: fn(f.record, () => [{ v: f.f64Array() }]),
  listOf: fn(f.listOf, () => [f.finiteNumber(), 4]),
  secureSum: fn(f.secureSum, () => [
    new Map([
      ['a', Float64Array.of(0.5, -0.25)],
      ['b', Float64Array.of(-1, 0)],
      ['c', Float64Array.of(0.125, 1)],
    ]),
    { clip: 1, neighbours: 2, threshold: 2, drop: { unmask: ['c'] } },
  ]),
  fixedPoint: fn(f.fixedPoint, () => [1, 10]),
  quantize: fn(f.quantize, () => [Float64Array.of(0.5, -1), f.fixedPoint(1, 3)]),
  dequantize: fn(f.dequantize, () => [new Uint8Array(16).fill(1), f.fixedPoint(1, 3)]),
  quantizationBound: fn(f.quantizationBound, () => [f.fixedPoint(1, 3), 2]),
  defaultNeighbours: fn(f.defaultNeighbours, () => [100]),
  defaultThreshold: fn(f.defaultThreshold, () => [26]),
  detectSignatureScheme: fn(f.detectSignatureScheme, () => []),
  SecureAggregationClient: {
    make: () => f.SecureAggregationClient.create('a', secaggParams()),
    statics: { create: stat(f.SecureAggregationClient.create, () => ['a', secaggParams()]) },
    methods: {
      advertise: () => [],
      shareKeys: (a) => secaggClientTo(a, 'shareKeys'),
      maskedInput: (a) => secaggClientTo(a, 'maskedInput'),
      signSurvivors: (a) => secaggClientTo(a, 'signSurvivors'),
      acceptSignatures: (a) => secaggClientTo(a, 'acceptSignatures'),
      unmask: (a) => secaggClientTo(a, 'unmask'),
    },
    internal: ['open', 'readClients', 'requireSurvivorSet'],
  },
  SecureAggregationServer: cls(f.SecureAggregationServer, () => [secaggParams()], {
    methods: {
      acceptAdvertise: (s) => secaggTo(s, 'advertise'),
      advertised: (s) => secaggTo(s, 'advertised'),
      acceptShares: (s) => secaggTo(s, 'shares'),
      routed: (s) => secaggTo(s, 'routed'),
      acceptMasked: (s) => secaggTo(s, 'masked'),
      unmaskRequest: (s) => secaggTo(s, 'unmaskRequest'),
      acceptSignature: (s) => secaggTo(s, 'signature'),
      signatures: (s) => secaggTo(s, 'signatures'),
      acceptUnmask: (s) => secaggTo(s, 'unmask'),
      result: (s) => secaggTo(s, 'result'),
      drop: () => ['a'],
      dropped: () => [],
    },
    internal: SERVER_INTERNALS,
  }),
  coordinateMedian: fn(f.coordinateMedian, () => [[[1, 2], Float64Array.of(3, 4), [5, 7]]]),
  trimmedMean: fn(f.trimmedMean, () => [[[1, 2], Float64Array.of(3, 4), [5, 7], [0, 0]], 0.25]),
  gmmParams: fn(f.gmmParams, () => [gmm()]),
  receiveGmmParams: fn(f.receiveGmmParams, () => {
    const g = gmm();
    try {
      return [f.decodeMessage(f.encodeMessage(f.message('k', 'a', 1, f.gmmParams(g)), 'json')).payload, 'client a', 2];
    } finally {
      g.dispose();
    }
  }),

  // the algorithms
  distributedEM: fn(f.distributedEM, () => [clientsOf(), { nComponents: 2, covarianceType: 'diag', init: 'kfed', tol: 1e-3, maxRounds: 3, seed: 1 }]),
  DemClient: cls(f.DemClient, () => ['0', X()], { methods: { respond: (self) => [requestFor(demServer, self)], requestDone: (self) => [requestFor(demServer, self)], dispose: () => [] }, internal: ['kfedLocal', 'statistics', 'subset', 'summarize'] }),
  DemServer: {
    call: (...a) => new f.DemServer(...(a as [never])),
    make: () => withRound(demServer, demClients),
    args: () => [{ nComponents: 2, nFeatures: 2, covarianceType: 'full', init: 'subset', subsetSize: 20, tol: 1e-3, maxRounds: 3, regCovar: 1e-6, seed: 1 }],
    methods: serverMethods(),
    internal: ['blame', 'configureRound', 'emStep', 'fitSubset', 'kfed', 'modelOptions', 'mStep', 'seed', 'separated', 'setQuotas', 'startEm', 'saveState', 'restoreState'],
  },
  fitMdm: fn(f.fitMdm, () => [histograms(), { nComponents: 2, rounds: 2, cohort: 4, initCohort: 4, maxCount: 6, seed: 1 }]),
  selectMdm: fn(f.selectMdm, () => [histograms(), { kRange: [1, 2], rounds: 2, seed: 1 }]),
  MdmClient: cls(f.MdmClient, () => ['0', [2, 1, 1], { seed: 1 }], {
    methods: { respond: (self) => [requestFor(mdmServer1, self)], requestDone: (self) => [requestFor(mdmServer1, self)], dispose: () => [] },
    internal: ['eStatistic', 'evaluation', 'fits', 'heldHistograms', 'initStats', 'statistics'],
  }),
  MdmUserGroup: cls(f.MdmUserGroup, () => ['g', [[2, 1, 1], [1, 0, 3]], { seeds: [1, 2] }], {
    methods: { respond: (self) => [requestFor(mdmServer1, self)], requestDone: (self) => [requestFor(mdmServer1, self)], dispose: () => [] },
    internal: ['eStatistic', 'evaluation', 'fits', 'heldHistograms', 'initStats', 'statistics'],
  }),
  MdmAggregator: cls(f.MdmAggregator, () => [{ noiseMultiplier: 0, seed: 1 }], {
    methods: {
      begin: () => [requestFor(mdmServer1, { id: '0' } as ClientRole)],
      add: (self) => {
        const request = requestFor(mdmServer1, { id: '0' } as ClientRole);
        self.begin(request);
        const c = new f.MdmClient('0', [2, 1, 1], { seed: 1 });
        try {
          return [c.respond(request)];
        } finally {
          c.dispose();
        }
      },
      release: () => [],
      dispose: () => [],
    },
  }),
  MdmServer: {
    call: (...a) => new f.MdmServer(...(a as [never])),
    make: () => withRound(mdmServer, mdmClients),
    args: () => [{ nComponents: 2, nCategories: 3, maxCount: 5, rounds: 2, cohort: 3, initCohort: 3, seed: 1, privacy: { noiseMultiplier: 0.5, clip: 2 }, noiseSeed: 3 }, new f.MdmAggregator()],
    methods: serverMethods(),
    internal: ['checkCohort', 'sampleCohort', 'shape', 'saveState', 'restoreState'],
  },
  mdmSensitivity: fn(f.mdmSensitivity, () => ['round', 2]),
  fedGenGMM: fn(f.fedGenGMM, () => [clientsOf(), { client: { kMin: 1, kMax: 2, covarianceType: 'diag', seed: 1 }, server: { nComponents: 2, h: 10, seed: 1 } }]),
  FedGenGMMClient: cls(f.FedGenGMMClient, () => ['0', X(), { kMin: 1, kMax: 2, covarianceType: 'diag', criterion: 'bic', nInit: 1, tol: 1e-3, maxIter: 50, regCovar: 1e-6, seed: 1 }], {
    methods: { respond: (self) => [requestFor(fedgengmmServer, self)], train: () => [], trainAsync: () => [], upload: () => [], takeModel: (self) => (self.train(), []), savedGlobalModel: () => [], dispose: () => [] },
    internal: ['selection', 'keep'],
  }),
  FedGenGMMServer: {
    call: (...a) => new f.FedGenGMMServer(...(a as [never])),
    make: () => withRound(fedgengmmServer, fedgengmmClients),
    args: () => [{ nComponents: 2, nFeatures: 2, h: 20, seed: 1, onInvalidClient: 'exclude', serverStep: 'hierarchical', virtualSamples: 100 }],
    methods: serverMethods({ discard: (self) => [self.accept(firstReply(self), roundOf(self).request, roundOf(self).ctx)] }),
    internal: ['blame', 'fit', 'reduce', 'saveState', 'restoreState'],
  },
  fedAvg: fn(f.fedAvg, () => [clientsOf().map((X) => ({ X })), { ...fedavgOptions(), seed: 1 }]),
  FedAvgClient: cls(f.FedAvgClient, () => ['0', X(), { seed: 1 }], {
    methods: { respond: (self) => [requestFor(fedavgServer, self)], savedGlobalModel: () => [], dispose: () => [] },
    internal: ['train', 'correction', 'networkFor', 'release', 'splitFor', 'releaseSplit'],
  }),
  FedAvgServer: fedavgFamily((o) => new f.FedAvgServer(o)),
  fedDistr: fn(f.fedDistr, () => [clientsOf().map((X, i) => ({ X, labels: Int32Array.from({ length: X.nRows }, (_, j) => j % 2), subclasses: Array.from({ length: X.nRows }, (_, j) => (j % 2) + 2 * i) })), { kMax: 2, seed: 1, cost: 'wasserstein', covariance: 'diagonal', merge: 'dominant', privacy: { clip: 10, epsilon: 1, delta: 1e-5 }, noiseSeed: 1 }]),
  FedDistrClient: cls(f.FedDistrClient, () => ['0', X(), { labels: labels(), privacy: { clip: 10, epsilon: 1, delta: 1e-5 }, seed: 1 }], {
    methods: { respond: (self) => [requestFor(feddistrServer, self)], dispose: () => [] },
    internal: ['describe', 'cluster', 'bic', 'estimate'],
  }),
  FedDistrServer: {
    call: (...a) => new f.FedDistrServer(...(a as [never])),
    make: () => withRound(feddistrServer, feddistrClients),
    args: () => [{ dimension: 2, kMin: 1, kMax: 2, covariance: 'full', clustering: 'gmm', criterion: 'bic', cost: 'bhattacharyya', threshold: 0.5, merge: 'weighted', shrinkage: 'oas', regCovar: 1e-6, seed: 1 }],
    methods: (({ dispose: _, ...m }) => m)(serverMethods()),
    internal: ['consolidate', 'saveState', 'restoreState'],
  },
  wasserstein2: fn(f.wasserstein2, () => [{ mean: Float64Array.of(0, 1), covariance: Float64Array.of(1, 0, 0, 2) }, { mean: Float64Array.of(1, 1), covariance: Float64Array.of(2, 0, 0, 1) }, 'full']),
  bhattacharyya: fn(f.bhattacharyya, () => [{ mean: Float64Array.of(0, 1), covariance: Float64Array.of(1, 2) }, { mean: Float64Array.of(1, 1), covariance: Float64Array.of(2, 1) }, 'diagonal']),
  BaseDistributionClassifier: cls(f.BaseDistributionClassifier, () => [gaussianBases(), { covariance: 'full', encoder: 'identity' }], {
    methods: { predict: () => [X()], predictProba: () => [X()], score: () => [X(), labels()] },
    internal: ['encode', 'logJoint'],
  }),
  sampleBaseDistributions: fn(f.sampleBaseDistributions, () => [gaussianBases(), { n: 10, seed: 1, covariance: 'full' }]),
  runFedDistrExperiment: fn(experiments.runFedDistrExperiment, () => [
    { train: experiments.groupSubclasses(X(), Array.from({ length: 40 }, (_, i) => `s${i % 4}`), { groups: [['s0', 's1'], ['s2', 's3']] }) },
    { clients: 2, entanglement: 0, kMax: 1, rounds: 1, hiddenLayers: [2], mlpEpochs: 1, syntheticRows: 20, baselines: ['fedavg', 'central'], seed: 1 },
  ]),
  runFedGenGMMExperiment: fn(experiments.runFedGenGMMExperiment, () => [experimentData(), experimentConfig(), { onRound: () => undefined, onRun: () => undefined }]),
  runFedGenGMMExperimentSync: fn(experiments.runFedGenGMMExperimentSync, () => [experimentData(), experimentConfig(), { onRun: () => undefined }]),
  labelledFromCsv: fn(experiments.labelledFromCsv, () => ['a,b,kind,label\n1,2,x,0\n3,4,y,1\n5,6,x,0\n', { anomalyLabel: 'label', oneHot: ['kind'], drop: [] }]),
  roundsToReach: fn(experiments.roundsToReach, () => [[{ round: 1, accuracy: 0.5, bytes: 10 }], 0.4]),
  groupSubclasses: fn(experiments.groupSubclasses, () => [X(), Array.from({ length: 40 }, (_, i) => `s${i % 4}`), { groups: [['s0', 's1'], ['s2', 's3']] }]),
  fashionMnistSubclasses: fn(experiments.fashionMnistSubclasses, () => [{ X: f.Matrix.zeros(4, 2), labels: Int32Array.of(0, 6, 1, 3), classNames: [...f.FASHION_MNIST_CLASSES], split: 'train', indices: Int32Array.of(0, 1, 2, 3) }, [['T-shirt/top', 'Shirt'], ['Trouser', 'Dress']]]),
  subclassDataFromCsv: fn(experiments.subclassDataFromCsv, () => ['f1,sub,sup\n1,a,x\n2,b,y\n3,a,x\n', { subclass: 'sub', superclass: 'sup' }]),
  parseTaskGroups: fn(experiments.parseTaskGroups, () => ['A+B,C+D']),
  entangledCoefficient: fn(f.entangledCoefficient, () => [[0.5, 0.5, 0], [0, 0.5, 0.5]]),
  averageEntanglement: fn(f.averageEntanglement, () => [[[1, 0], [1, 1], [0, 1]]]),
  FedProxServer: fedavgFamily((o) => new f.FedProxServer(o), { mu: 0.1 }),
  ScaffoldServer: fedavgFamily((o) => new f.ScaffoldServer(o), { serverLearningRate: 1 }),
  associate: fn(f.associate, () => [clientsOf(), { detector: { kind: 'gmm', contamination: 0.1, gmm: { covarianceType: 'diag' } }, q: 0.08, partners: 'all', seed: 1, method: 'fast-greedy', encoding: 'binary', onInvalidClient: 'exclude' }]),
  CommunitiesClient: cls(f.CommunitiesClient, () => ['0', X(), { detector: { kind: 'gmm', contamination: 0.1 } }], {
    methods: { respond: (self) => [requestFor(communitiesServer, self)], dispose: () => [] },
    internal: ['decide'],
  }),
  CommunitiesServer: {
    call: (...a) => new f.CommunitiesServer(...(a as [never])),
    make: () => withRound(communitiesServer, communitiesClients),
    args: () => [{ nFeatures: 2, kind: 'gmm', contamination: 0.1, q: 0.08, partners: 2, seed: 1, method: 'louvain', maxRelayBytes: 1024 }],
    methods: (({ dispose: _, ...m }) => m)(serverMethods()),
    internal: ['plan', 'associate', 'chunk', 'saveState', 'restoreState'],
  },
  fedGEM: fn(f.fedGEM, () => [clientsOf(), { client: { nComponents: 2, variance: 1, seed: 1 }, rounds: 2, phi: 1 }]),
  FedGEMClient: cls(f.FedGEMClient, () => ['0', X(), { nComponents: 2, variance: 1, localSteps: 1, seed: 1, privacy: { epsilon: 0.5, delta: 1e-5, bound: 10 }, noiseSeed: 1 }, X()], {
    methods: {
      respond: (self) => [requestFor(fedgemServer, self)],
      score: () => [],
      localRound: () => [],
      spread: () => [],
      applyCenters: (self) => [self.means],
      finalUpload: () => [],
      silhouettes: (self) => [{ candidates: [{ phi: 1, estimatedK: 2, centers: self.means }] }],
      applyResult: () => [{ phi: 1, memberships: [0, 1], globalCenters: [0, 0, 1, 1], estimatedK: 2 }],
      predict: () => [X()],
      dispose: () => [],
    },
    internal: ['release', 'setMeans', 'requireVariance', 'takeVariance'],
  }),
  FedGEMServer: {
    call: (...a) => new f.FedGEMServer(...(a as [never])),
    make: () => withRound(fedgemServer, fedgemClients),
    args: () => [{ nFeatures: 2, rounds: 2, phi: [0.5, 1], phiTolerance: 1, tol: 1e-9, search: 'kdtree', onInvalidClient: 'exclude', variance: 'estimate' }],
    methods: (({ dispose: _, ...m }) => m)(serverMethods({ merge: () => [1] })),
    internal: ['choosePhi', 'estimateVariance', 'finish', 'indexed', 'training', 'update', 'saveState', 'restoreState'],
  },
  centerNoiseStd: fn(f.centerNoiseStd, () => [{ epsilon: 0.5, delta: 1e-5, bound: 10 }, 100, 2, 0.2]),

  // fedmix/node
  WorkerTransport: {
    // two threads running the built package (dist/worker.js), as test/workers.test.ts does
    statics: { start: stat(n.WorkerTransport.start, () => [[spec('0', X())], { threads: 1, workerFile: DIST_WORKER }]) },
    covers: ['WorkerTransport#available', 'WorkerTransport#exchange', 'WorkerTransport#close'],
    internal: ['disposeLanes'],
  },
  makeClient: fn(n.makeClient, () => [spec('0', X(), 'fedgengmm', { kMin: 1, kMax: 2 })]),
  // the registry: a descriptor of fresh parts (DEM's factories under a new name); each registration takes a name of its own
  algorithm: fn(f.algorithm, () => ['dem']),
  algorithmNames: fn(f.algorithmNames, () => []),
  algorithms: fn(f.algorithms, () => []),
  defineAlgorithm: fn(f.defineAlgorithm, () => [descriptor('hostile-defined')]),
  registerAlgorithm: fn(f.registerAlgorithm, () => [descriptor(`hostile-${++registered}`)]),
  loadResult: fn(f.loadResult, () => ['dem', gmmJSON()]),
  // the one saved-model artifact: a DEM result's, and a client's network
  modelArtifact: fn(f.modelArtifact, () => ['dem', gmm(), { nFeatures: 2, nComponents: 2 }, [{ round: 1, kind: 'dem/model', accepted: 2 }]]),
  loadModel: fn(f.loadModel, () => [JSON.stringify({ kind: 'fedmix.model', version: 1, algorithm: 'dem', role: 'server', options: {}, model: gmmJSON(), history: [] })]),
  clientModelArtifact: fn(f.clientModelArtifact, () => ['fedavg', JSON.parse(netJSON()), { seed: 1 }]),
  makeServer: fn(n.makeServer, () => ['fedgem', { nFeatures: 2, rounds: 2 }]),
  // a run's checkpoint after round 1 as JSON, and the server role rebuilt from it
  saveCheckpoint: fn(f.saveCheckpoint, () => ['dem', demCheckpoint()]),
  restoreServer: fn(f.restoreServer, () => [savedDemCheckpoint(), DEM_OPTIONS, 'dem']),
  matrixData: fn(n.matrixData, () => [rows()]),
  resultJson: fn(n.resultJson, () => ['dem', gmm()]),
  startBroker: fn(n.startBroker, () => [{ federation: 'F', users: brokerUsers(), host: '127.0.0.1', port: 0, limits: { maxPacketBytes: 1_000_000, maxConnectBytes: 4096, connectTimeout: 5 } }]),
  // every option read and checked, then an executable that is not there: the call ends at once (test/federation-mqtt.test.ts starts mosquitto itself)
  startMosquitto: fn(n.startMosquitto, () => [{ federation: 'F', users: brokerUsers(), host: '127.0.0.1', port: 1884, startTimeoutMs: 1000, mosquitto: join(tmp(), 'no-such-mosquitto') }]),
  writeMosquittoConfig: fn(n.writeMosquittoConfig, () => [tmp(), { federation: 'F', users: brokerUsers(), port: 1884, limits: { maxPacketBytes: 1_000_000 } }]),
  mosquittoConfig: fn(n.mosquittoConfig, () => [{ federation: 'F', users: brokerUsers(), port: 1884 }, { passwordFile: 'p', aclFile: 'a' }]),
  freePort: fn(n.freePort, () => ['127.0.0.1']),
  loadFashionMnist: fn(n.loadFashionMnist, () => [{ dir: fashionDir(), split: 'train', n: 4, sample: 'stratified', seed: 2 }]),
  // undefined is the default: 60 s to wait for clients on port 1883; the call keeps it short and on a free port
  serve: {
    call: (o, ...rest) => n.serve(...([quick(o), ...rest] as Parameters<typeof n.serve>)),
    args: () => [{ algorithm: 'fedgem', options: { nFeatures: 2, rounds: 2 }, federation: 'F', clients: [{ id: 'a', password: 'pw' }], listen: { port: 0 }, joinTimeout: 0.2 }],
  },
};

// ---- saved models: an honest file of every class that loads one, for the tampered-file property of test/hostile-api.test.ts

/** A file as a class saves it (toJSON), the call that loads it back, and every public method of what it loads. */
export interface SavedRecipe {
  /** the export that loads the file: its fromJSON, or (FedDistr's global model) its constructor */
  cls: string;
  /** the honest file: a model fitted on real rows, saved */
  file: () => Record<string, unknown>;
  /** loads a file, given as JSON text (or as an object, for values JSON cannot hold: NaN, Infinity) */
  load: (file: unknown) => unknown;
  /** arguments of each public method of a loaded model (honest: rows like those it was fitted on); getters are all read */
  args: Record<string, (self: any) => unknown[]>;
  /** results that are not finite by design: the value, and why (as the class documents it) */
  notFinite?: Record<string, readonly [number, string]>;
}

const memo = <T>(make: () => T): (() => T) => {
  let v: T | undefined;
  return () => (v ??= make());
};
/** 322 rows of satellite.csv (every 20th: every class), 36 features; their classes, and the rows scaled into [0, 1] for networks and the SVM. */
const satellite = memo(() => {
  const all = experiments.labelledFromCsv(readFileSync(new URL('../../../shared/datasets/satellite.csv', import.meta.url), 'utf8'), { label: 'label' });
  const pick = Array.from({ length: Math.ceil(all.X.nRows / 20) }, (_, i) => i * 20);
  const X = all.X.selectRows(pick);
  return { X, labels: Int32Array.from(pick, (i) => all.labels![i]!), scaled: new f.MinMaxScaler().fitTransform(X) };
});
/** The first 60 of those rows: what a loaded model is asked about. */
const satRows = () => satellite().X.selectRows(Array.from({ length: 60 }, (_, i) => i));
const satScaled = () => satellite().scaled.selectRows(Array.from({ length: 60 }, (_, i) => i));
const satLabels = () => Array.from(satellite().labels.subarray(0, 60), (c) => `class ${c}`);
const saved = (m: { toJSON(): unknown; dispose?(): void }): Record<string, unknown> => {
  try {
    return JSON.parse(JSON.stringify(m.toJSON())) as Record<string, unknown>;
  } finally {
    m.dispose?.();
  }
};
/** Histograms of the classes of 32 clients of 5 to 14 of the rows (sizes vary, so pi has several entries). */
const satHistograms = memo(() => {
  const { labels } = satellite();
  const rows: number[][] = [];
  let at = 0;
  for (let c = 0; c < 32 && at < labels.length; c++) {
    const size = 5 + ((c * 7) % 10);
    const h = new Array<number>(6).fill(0);
    for (let i = 0; i < size; i++) h[labels[(at + i) % labels.length]! % 6]! += 1;
    at += size;
    rows.push(h);
  }
  return rows;
});
/** Class-conditional Gaussians of the rows in 3 principal components: FedDistr's consolidated bases as resultJson saves them. */
const satBases = (covariance: 'full' | 'diagonal') => {
  const { X, labels } = satellite();
  const Z = new f.PCA({ nComponents: 3 }).fit(X).transform(X);
  const bases = [...new Set(labels)].sort().map((label) => {
    const rows = Z.selectRows([...labels.keys()].filter((i) => labels[i] === label));
    const n = rows.nRows;
    const mean = [0, 1, 2].map((j) => rows.column(j).reduce((s, v) => s + v, 0) / n);
    const cov = [0, 1, 2].flatMap((a) => [0, 1, 2].map((b) => rows.column(a).reduce((s, v, i) => s + (v - mean[a]!) * (rows.column(b)[i]! - mean[b]!), 0) / n));
    return { label, count: n, weight: 0, mean, covariance: covariance === 'full' ? cov : [0, 4, 8].map((i) => cov[i]!) };
  });
  return { covariance, bases };
};

const gmmCalls = {
  fit: () => [satRows()],
  fitAsync: () => [satRows()],
  fitPredict: () => [satRows()],
  scoreSamples: () => [satRows()],
  score: () => [satRows()],
  predict: () => [satRows()],
  predictProba: () => [satRows()],
  sample: () => [20, { seed: 2 }],
  bic: () => [satRows()],
  aic: () => [satRows()],
  toJSON: () => [],
  toArrow: () => [],
};
const gmmFile = (covarianceType: f.CovarianceType): SavedRecipe => ({
  cls: 'GaussianMixture',
  file: () => saved(new f.GaussianMixture({ nComponents: 3, covarianceType, seed: 1 }).fit(satellite().X)),
  load: (j) => f.GaussianMixture.fromJSON(j as string),
  args: gmmCalls,
  notFinite: { lowerBound: [-Infinity, 'a model never fitted (lowerBound null in its file), as scikit-learn\'s lower_bound_ before fit'] },
});
const detectorFile = (kind: f.DetectorKind): SavedRecipe => ({
  cls: 'LocalDetector',
  file: () => saved(new f.LocalDetector({ kind, contamination: 0.1, gmm: { covarianceType: 'diag', nComponents: 2 }, autoencoder: { hiddenLayers: [8, 3, 8], epochs: 2 } }).fit(satellite().scaled)),
  load: (j) => f.LocalDetector.fromJSON(j as string),
  args: { fit: () => [satScaled()], scoreSamples: () => [satScaled()], predict: () => [satScaled()], inlierShare: () => [satScaled()], toJSON: () => [] },
  notFinite: { trainingInlierShare: [NaN, 'a detector loaded with fromJSON: its rows are elsewhere'] },
});
const basesFile = (covariance: 'full' | 'diagonal'): SavedRecipe => ({
  cls: 'BaseDistributionClassifier',
  file: () => satBases(covariance),
  load: (j) => {
    const o = (typeof j === 'string' ? JSON.parse(j) : j) as { bases: f.LabelledGaussian[]; covariance: 'full' | 'diagonal' };
    return new f.BaseDistributionClassifier(o.bases, { covariance: o.covariance });
  },
  args: { predict: () => [pcaRows()], predictProba: () => [pcaRows()], score: () => [pcaRows(), Array.from(satellite().labels.subarray(0, 60))] },
});
/** The 60 rows in the bases' 3 principal components. */
const pcaRows = memo(() => new f.PCA({ nComponents: 3 }).fit(satellite().X).transform(satRows()));

/** What a saved recipe's arguments made (a network's training set, its optimizer): the test releases them after the calls. */
export const LENT: unknown[] = [];
const lend = <T>(x: T): T => {
  LENT.push(x);
  return x;
};

export const SAVED: Record<string, SavedRecipe> = {
  RdpAccountant: {
    cls: 'RdpAccountant',
    file: () => saved(new f.RdpAccountant().step({ noiseMultiplier: 1.1, samplingRate: 0.01, steps: 1000 }).step({ noiseMultiplier: 2, samplingRate: 0.05 })),
    load: (j) => f.RdpAccountant.fromJSON(j),
    args: { step: () => [{ noiseMultiplier: 1.1, samplingRate: 0.01 }], epsilon: () => [1e-5], toJSON: () => [] },
    // a step of (next to) no noise spends an infinite privacy loss, as the accountant documents
    notFinite: { rdp: [Infinity, 'a step without noise'], epsilon: [Infinity, 'a step without noise'] },
  },
  'GaussianMixture full': gmmFile('full'),
  'GaussianMixture tied': gmmFile('tied'),
  'GaussianMixture diag': gmmFile('diag'),
  'GaussianMixture spherical': gmmFile('spherical'),
  KMeans: {
    cls: 'KMeans',
    file: () => saved(new f.KMeans({ nClusters: 4, seed: 1 }).fit(satellite().X)),
    load: (j) => f.KMeans.fromJSON(j as string),
    args: { fit: () => [satRows()], fitAsync: () => [satRows()], fitPredict: () => [satRows()], predict: () => [satRows()], score: () => [satRows()], toJSON: () => [], toArrow: () => [] },
  },
  PCA: {
    cls: 'PCA',
    file: () => saved(new f.PCA({ nComponents: 5 }).fit(satellite().X)),
    load: (j) => f.PCA.fromJSON(j as string),
    args: { fit: () => [satRows()], transform: () => [satRows()], fitTransform: () => [satRows()], inverseTransform: (self) => [self.transform(satRows())], toJSON: () => [], toArrow: () => [] },
  },
  StandardScaler: {
    cls: 'StandardScaler',
    file: () => saved(new f.StandardScaler().fit(satellite().X)),
    load: (j) => f.StandardScaler.fromJSON(j as string),
    args: { fit: () => [satRows()], transform: () => [satRows()], fitTransform: () => [satRows()], inverseTransform: () => [satScaled()], toJSON: () => [] },
  },
  MinMaxScaler: {
    cls: 'MinMaxScaler',
    file: () => saved(new f.MinMaxScaler().fit(satellite().X)),
    load: (j) => f.MinMaxScaler.fromJSON(j as string),
    args: { fit: () => [satRows()], transform: () => [satRows()], fitTransform: () => [satRows()], inverseTransform: () => [satScaled()], toJSON: () => [] },
  },
  Network: {
    cls: 'Network',
    // an autoencoder of satellite's scaled rows
    file: () => saved(new f.Network({ sizes: [satellite().X.nCols, 8, satellite().X.nCols], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 })),
    load: (j) => f.Network.fromJSON(j as string),
    args: {
      getParameters: () => [],
      getGradients: () => [],
      setParameters: (self) => [self.getParameters()],
      predict: () => [satScaled()],
      reconstructionErrors: () => [satScaled()],
      layerOutputs: () => [satScaled(), 1],
      attach: () => [satScaled(), satScaled()],
      evaluate: (self) => [lend(self.attach(satScaled(), satScaled()))],
      gradient: () => [satScaled(), satScaled()],
      optimizer: () => [{ name: 'adam', learningRate: 1e-3 }],
      trainEpoch: (self) => [lend(self.attach(satScaled(), satScaled())), lend(self.optimizer({ name: 'sgd', learningRate: 1e-2 })), { batchSize: 16, seed: 1 }],
      toJSON: () => [],
    },
  },
  DirichletMultinomialMixture: {
    cls: 'DirichletMultinomialMixture',
    file: () => saved(f.DirichletMultinomialMixture.fit(satHistograms(), { nComponents: 2, rounds: 20, seed: 1 })),
    load: (j) => f.DirichletMultinomialMixture.fromJSON(j as string),
    args: {
      alphaOf: () => [1],
      piOf: () => [0],
      logPmf: () => [satHistograms()],
      score: () => [satHistograms()],
      predictProba: () => [satHistograms()],
      predict: () => [satHistograms()],
      sample: () => [10, { seed: 1 }],
      toJSON: () => [],
      toArrow: () => [],
    },
    notFinite: { logPmf: [-Infinity, 'where no component gives the size a positive probability'], score: [-Infinity, 'the mean of logPmf'] },
  },
  Autoencoder: {
    cls: 'Autoencoder',
    file: () => saved(new f.Autoencoder({ hiddenLayers: [8, 3, 8], epochs: 2, seed: 1 }).fit(satellite().scaled)),
    load: (j) => f.Autoencoder.fromJSON(j as string),
    args: {
      fit: () => [satScaled()],
      encode: () => [satScaled()],
      reconstruct: () => [satScaled()],
      scoreSamples: () => [satScaled()],
      getParameters: () => [],
      setParameters: (self) => [self.getParameters()],
      toJSON: () => [],
    },
  },
  MLPClassifier: {
    cls: 'MLPClassifier',
    file: () => saved(new f.MLPClassifier({ hiddenLayerSizes: [8], maxIter: 5, randomState: 1 }).fit(satellite().scaled, Array.from(satellite().labels, (c) => `class ${c}`))),
    load: (j) => f.MLPClassifier.fromJSON(j as string),
    notFinite: { loss: [NaN, 'a model whose file has no lossCurve: no epoch\'s loss is known'] },
    args: {
      fit: () => [satScaled(), satLabels()],
      predict: () => [satScaled()],
      predictProba: () => [satScaled()],
      score: () => [satScaled(), satLabels()],
      getParameters: () => [],
      setParameters: (self) => [self.getParameters()],
      toJSON: () => [],
    },
  },
  OneClassSVM: {
    cls: 'OneClassSVM',
    file: () => saved(new f.OneClassSVM({ nu: 0.2 }).fit(satellite().scaled)),
    load: (j) => f.OneClassSVM.fromJSON(j as string),
    args: { fit: () => [satScaled()], fitPredict: () => [satScaled()], decisionFunction: () => [satScaled()], scoreSamples: () => [satScaled()], predict: () => [satScaled()], toJSON: () => [] },
    notFinite: { objective: [NaN, 'a model built from its parts (objective null in its file)'] },
  },
  'LocalDetector ocsvm': detectorFile('ocsvm'),
  'LocalDetector gmm': detectorFile('gmm'),
  'LocalDetector autoencoder': detectorFile('autoencoder'),
  'BaseDistributionClassifier full': basesFile('full'),
  'BaseDistributionClassifier diagonal': basesFile('diagonal'),
};
