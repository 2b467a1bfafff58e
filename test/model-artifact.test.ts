/**
 * One saved-model format (issue 25, item 7): for every built-in algorithm, on
 * abalone's measurements dealt to three in-process clients, modelArtifact()
 * saves { kind, version, algorithm, role, options, model, history } and
 * loadModel() reads it back, through JSON text, into the right class; files
 * fedmix wrote before the format still load (version 0), anything else is a
 * typed error saying what it is. Network.toJSON/fromJSON round-trip.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { InvalidParameterError } from '../ts/errors.js';
import { Matrix } from '../ts/data/matrix.js';
import { ALGORITHMS, makeClient, makeServer, matrixData, resultJson, type ClientSpec } from '../ts/federated/registry/index.js';
import { clientModelArtifact, loadModel, MODEL_KIND, modelArtifact } from '../ts/federated/registry/model-file.js';
import { runFederationSync } from '../ts/federated/runtime/run.js';
import { DirichletMultinomialMixture } from '../ts/models/dirichlet-multinomial-mixture.js';
import { GaussianMixture } from '../ts/models/gaussian-mixture.js';
import { Network } from '../ts/models/network.js';
import { init } from '../ts/wasm/loader.js';

const lines = readFileSync(new URL('../../shared/datasets/abalone.csv', import.meta.url), 'utf8').trim().split(/\r?\n/);
const header = lines[0]!.split(',');
const cols = ['length', 'diameter', 'height', 'whole_weight', 'shucked_weight', 'viscera_weight', 'shell_weight'].map((f) => header.indexOf(f));
const rows = lines.slice(1, 601).map((l) => l.split(','));
const X = rows.map((r) => cols.map((j) => Number(r[j])));
const sex = rows.map((r) => ['M', 'F', 'I'].indexOf(r[header.indexOf('sex')]!));
const bounds = [0, 100, 300, 600];
const three = (algorithm: string, options: (c: number) => Record<string, unknown> = () => ({}), labels = false): ClientSpec[] =>
  [0, 1, 2].map((c) => ({
    algorithm,
    id: `c${c}`,
    data: matrixData(Matrix.fromRows(X.slice(bounds[c], bounds[c + 1]))),
    options: options(c),
    ...(labels ? { labels: Int32Array.from(sex.slice(bounds[c], bounds[c + 1])) } : {}),
  }));
const histograms = (): ClientSpec[] =>
  Array.from({ length: 20 }, (_, c) => {
    const h = [0, 0, 0];
    for (let i = c * 30; i < (c + 1) * 30; i++) h[sex[i]!]! += 1;
    return { algorithm: 'mdm', id: `u${c}`, data: matrixData(Matrix.fromRows([h])), options: { seed: 100 + c } };
  });
const network = { sizes: [7, 3, 7], activation: 'tanh', outputActivation: 'identity', loss: 'mse', seed: 5 };

/** Each algorithm: its server options, its clients, and the class its loaded model is (undefined: the result is not one model). */
const CASES: [string, Record<string, unknown>, () => ClientSpec[], (abstract new (...a: never[]) => unknown) | undefined][] = [
  ['fedgengmm', { nFeatures: 7, nComponents: 3, seed: 1 }, () => three('fedgengmm', (c) => ({ kMin: 1, kMax: 3, seed: 10 + c })), GaussianMixture],
  ['dem', { nFeatures: 7, nComponents: 3, maxRounds: 3, seed: 1 }, () => three('dem'), GaussianMixture],
  ['fedgem', { nFeatures: 7, rounds: 2, phi: [0.5, 1] }, () => three('fedgem', (c) => ({ nComponents: 3, seed: 20 + c })).map((s) => ({ ...s, validation: s.data })), undefined],
  ['mdm', { nCategories: 3, maxCount: 30, nComponents: 2, rounds: 2, seed: 3 }, histograms, DirichletMultinomialMixture],
  ['fedavg', { network, rounds: 2, epochs: 1 }, () => three('fedavg', (c) => ({ seed: 30 + c })), Network],
  ['fedprox', { network, rounds: 2, epochs: 1, mu: 0.1 }, () => three('fedprox', (c) => ({ seed: 30 + c })), Network],
  ['scaffold', { network, rounds: 2, epochs: 1 }, () => three('scaffold', (c) => ({ seed: 30 + c })), Network],
  ['communities', { nFeatures: 7, kind: 'gmm', partners: 1, seed: 2 }, () => three('communities', () => ({ detector: { kind: 'gmm', gmm: { nComponents: 2, seed: 4 } } })), undefined],
  ['feddistr', { dimension: 7, kMax: 3 }, () => three('feddistr', (c) => ({ seed: 40 + c }), true), undefined],
];

beforeAll(async () => {
  await init();
});

test('the cases cover every built-in algorithm', () => {
  expect(CASES.map(([n]) => n).sort()).toEqual([...ALGORITHMS].sort());
});

describe.each(CASES)('%s', (name, options, specs, Class) => {
  test('modelArtifact -> JSON text -> loadModel gives the result back, its model as its class, with the options and the history', () => {
    const clients = specs().map((s) => makeClient(s));
    const server = makeServer(name, options);
    try {
      const run = runFederationSync(server, clients);
      const artifact = modelArtifact(name, run.model, options, run.history);
      expect(artifact).toMatchObject({ kind: MODEL_KIND, version: 1, algorithm: name, role: 'server' });
      expect(artifact.history).toHaveLength(run.history.length);
      const text = JSON.stringify(artifact);
      const loaded = loadModel(text);
      expect(loaded).toMatchObject({ algorithm: name, role: 'server', version: 1, options: JSON.parse(JSON.stringify(options)) });
      expect(loaded.history).toEqual(JSON.parse(text).history);
      // the loaded result saves as the same artifact (nothing lost on the way)
      expect(resultJson(name, loaded.result)).toEqual(JSON.parse(text).model);
      if (Class) expect(loaded.model).toBeInstanceOf(Class);
      else expect(loaded.model).toBeUndefined();
      (loaded.result as { dispose?(): void }).dispose?.();
      (loaded.model as { dispose?(): void } | undefined)?.dispose?.();
      // the files fedmix wrote before the format (the descriptor's artifact alone) still load, as version 0
      const legacy = loadModel(JSON.stringify(artifact.model));
      expect([legacy.algorithm, legacy.version]).toEqual([name, 0]);
      (legacy.result as { dispose?(): void }).dispose?.();
      (legacy.model as { dispose?(): void } | undefined)?.dispose?.();
      (run.model as { dispose?(): void }).dispose?.();
      (run.model as { model?: { dispose?(): void } }).model?.dispose?.();
    } finally {
      server.dispose?.();
      for (const c of clients) c.dispose();
    }
  }, 60_000);
});

describe('loadModel refuses what it cannot read, saying what it is', () => {
  test('another kind, another version, a model of another algorithm, a bare model of a class, an unknown object, text that is not JSON', () => {
    expect(() => loadModel({ kind: 'other' })).toThrow(/not a saved fedmix model: kind must be "fedmix.model"/);
    expect(() => loadModel({ kind: MODEL_KIND, version: 2 })).toThrow(/version 2; this fedmix reads version 1/);
    expect(() => loadModel({ kind: MODEL_KIND, version: 1, algorithm: 'nope', role: 'server', model: {}, history: [] })).toThrow(/algorithm must be one of/);
    expect(() => loadModel({ kind: MODEL_KIND, version: 1, algorithm: 'dem', role: 'server', model: { format: 'fedmix.KMeans' }, history: [] })).toThrow(InvalidParameterError);
    expect(() => loadModel({ format: 'fedmix.KMeans', version: 1 })).toThrow(/this is a saved KMeans \(fedmix.KMeans\), not a federation's model: load it with KMeans.fromJSON\(\)/);
    expect(() => loadModel({ a: 1, b: 2 })).toThrow(/not a saved fedmix model: .*its keys: a, b/);
    expect(() => loadModel('{ nope')).toThrow(/not JSON/);
    expect(() => loadModel({ kind: MODEL_KIND, version: 1, algorithm: 'fedavg', role: 'client', model: { format: 'fedmix.PCA' }, history: [] })).toThrow(/model must be one of fedmix.Network/);
  });
});

describe('Network.toJSON / fromJSON and a client artifact', () => {
  test('a network round-trips bit for bit (spec and parameters) and predicts the same; a client artifact loads it as a Network', () => {
    const net = new Network({ sizes: [3, 4, 2], activation: 'relu', outputActivation: 'softmax', loss: 'softmax-cross-entropy', seed: 7 });
    const back = Network.fromJSON(JSON.stringify(net.toJSON()));
    const x = Matrix.fromRows([[0.1, 0.2, 0.3], [1, -1, 0.5]]);
    expect(Array.from(back.getParameters())).toEqual(Array.from(net.getParameters()));
    expect(Array.from(back.predict(x).data)).toEqual(Array.from(net.predict(x).data));
    const loaded = loadModel(JSON.stringify(clientModelArtifact('fedavg', net.toJSON())));
    expect(loaded).toMatchObject({ algorithm: 'fedavg', role: 'client', version: 1 });
    expect(loaded.model).toBeInstanceOf(Network);
    expect(Array.from((loaded.model as Network).getParameters())).toEqual(Array.from(net.getParameters()));
    for (const n of [net, back, loaded.model as Network]) n.dispose();
  });

  test('a tampered network file is a typed error: parameters of the wrong count, a non-finite value, a bad spec, another format', () => {
    const net = new Network({ sizes: [2, 2], activation: 'relu', outputActivation: 'identity', loss: 'mse', seed: 1 });
    const j = net.toJSON();
    net.dispose();
    expect(() => Network.fromJSON({ ...j, parameters: j.parameters.slice(1) })).toThrow(/parameters has 5 values; the network has 6 parameters/);
    expect(() => Network.fromJSON({ ...j, parameters: j.parameters.map(() => null) as never })).toThrow(InvalidParameterError);
    expect(() => Network.fromJSON({ ...j, spec: { ...j.spec, sizes: [2, 0] } })).toThrow(InvalidParameterError);
    expect(() => Network.fromJSON({ ...j, format: 'fedmix.Autoencoder' } as never)).toThrow(/format must be "fedmix.Network"/);
  });
});
