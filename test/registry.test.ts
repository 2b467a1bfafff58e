/**
 * The algorithm registry: one descriptor per algorithm, and a user's own
 * algorithm run by name on every transport. The algorithm is
 * test/fixtures/mean-variance-algorithm.mjs (the federated mean and variance
 * of every feature: clients send count, sum and sum of squares), a module that
 * registers itself when imported, as a user's would; it is run on abalone's
 * seven measurements dealt to three clients, in process, on worker threads
 * (the workers import the module: algorithmModules), and over the embedded
 * broker with `fedmix server` and three `fedmix client` processes
 * (--algorithm-module), and every run gives the central mean and variance.
 *
 * Needs `bash scripts/setup.sh` first (dist/: the fixture imports the built package).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import * as dist from '../dist/index.js';
import * as distNode from '../dist/node.js';
import { Matrix } from '../ts/data/matrix.js';
import { DirichletMultinomialMixture } from '../ts/models/dirichlet-multinomial-mixture.js';
import { InvalidParameterError } from '../ts/errors.js';
import { federationOptions } from '../ts/cli/federation.js';
import { algorithm, algorithmNames, algorithms, ALGORITHMS, defineAlgorithm, loadResult, makeClient, makeServer, matrixData, registerAlgorithm, resultJson } from '../ts/federated/registry/index.js';
import { runFederationSync } from '../ts/federated/runtime/run.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import { init } from '../ts/wasm/loader.js';
import { DEM_PROTOCOL } from '../ts/federated/dem/messages.js';

const FIXTURE = new URL('./fixtures/mean-variance-algorithm.mjs', import.meta.url);
const CLI = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
const ABALONE = new URL('../../shared/datasets/abalone.csv', import.meta.url);
const FEATURES = ['length', 'diameter', 'height', 'whole_weight', 'shucked_weight', 'viscera_weight', 'shell_weight'];

interface MeanVariance {
  count: number;
  mean: Float64Array;
  variance: Float64Array;
  clients: string[];
}

/** abalone's seven measurements (and its ring count, a column the clients drop), read once. */
const lines = readFileSync(ABALONE, 'utf8').trim().split(/\r?\n/);
const header = lines[0]!.split(',');
const rows = lines.slice(1).map((l) => l.split(','));
const columns = FEATURES.map((name) => header.indexOf(name));
const X = rows.map((r) => columns.map((j) => Number(r[j])));
/** Three clients of unequal sizes, in the file's order (a quantity skew: 1/6, 1/3, 1/2 of the rows). */
const bounds = [0, Math.floor(X.length / 6), Math.floor(X.length / 2), X.length];
const parts = [0, 1, 2].map((c) => X.slice(bounds[c], bounds[c + 1]));
const specs = parts.map((p, c) => ({ algorithm: 'mean-variance', id: `c${c}`, data: matrixData(Matrix.fromRows(p)) }));

/** The central mean and population variance, two-pass. */
const central = (() => {
  const n = X.length;
  const mean = FEATURES.map((_, j) => X.reduce((s, r) => s + r[j]!, 0) / n);
  const variance = FEATURES.map((_, j) => X.reduce((s, r) => s + (r[j]! - mean[j]!) ** 2, 0) / n);
  return { n, mean, variance };
})();

function expectCentral(r: { count: number; mean: ArrayLike<number>; variance: ArrayLike<number> }): void {
  expect(r.count).toBe(central.n);
  FEATURES.forEach((name, j) => {
    expect(Math.abs(r.mean[j]! - central.mean[j]!) / central.mean[j]!, `mean of ${name}`).toBeLessThan(1e-12);
    expect(Math.abs(r.variance[j]! - central.variance[j]!) / central.variance[j]!, `variance of ${name}`).toBeLessThan(1e-9);
  });
}

beforeAll(async () => {
  await init();
  await dist.init();
  // registers mean-variance, through the built package, for every copy of fedmix in this process
  await import(FIXTURE.href);
});

describe('the registry', () => {
  test('lists the built-in algorithms, each from its own folder, then the user\'s', () => {
    expect(ALGORITHMS).toEqual(['fedgengmm', 'dem', 'fedgem', 'mdm', 'fedavg', 'fedprox', 'scaffold', 'communities', 'feddistr']);
    expect(algorithmNames()).toEqual([...ALGORITHMS, 'mean-variance']);
    for (const d of algorithms()) {
      expect(d.summary, d.name).toMatch(/^[^\n]+$/);
      expect(Object.isFrozen(d), d.name).toBe(true);
    }
    expect(algorithm('dem').wasmFeatures).toEqual(['dem']);
    // the FedAvg family runs secure rounds (masks, Shamir) and DP-FedAvg's accountant: the 'dirichlet' module's
    for (const name of ['fedavg', 'fedprox', 'scaffold']) expect(algorithm(name).wasmFeatures, name).toEqual(['nn', 'dirichlet']);
    expect(algorithm('fedavg').protocol).toBe(algorithm('scaffold').protocol);
  });

  test('an unknown name is refused, listing every registered one (the user\'s too)', () => {
    expect(() => algorithm('kmeans')).toThrow(InvalidParameterError);
    expect(() => algorithm('kmeans')).toThrow(`algorithm must be one of ${[...ALGORITHMS, 'mean-variance'].join(', ')}, got "kmeans"`);
    expect(() => makeServer('nope', {})).toThrow(/algorithm must be one of fedgengmm, .*, feddistr, mean-variance, got "nope"/);
    expect(() => makeClient({ algorithm: 'nope', id: 'a', data: specs[0]!.data })).toThrow(InvalidParameterError);
  });

  test('a second algorithm of a registered name is refused, built-in or not', () => {
    const copy = { ...algorithm('mean-variance'), summary: 'another' };
    expect(() => registerAlgorithm(copy)).toThrow(/an algorithm named mean-variance is already registered \(by registerAlgorithm\)/);
    expect(() => registerAlgorithm({ ...algorithm('dem') })).toThrow(/an algorithm named dem is already registered \(a built-in one\)/);
    // through the other copy of the package too: one registry for the realm
    expect(() => dist.registerAlgorithm({ ...copy })).toThrow(/already registered/);
    expect(algorithm('mean-variance').summary).not.toBe('another');
  });

  test('a malformed descriptor is a typed error naming the field, and registers nothing', () => {
    const good = algorithm('mean-variance');
    const cases: [unknown, RegExp][] = [
      [null, /an algorithm descriptor must be an object/],
      [{ ...good, name: 'Mean Variance' }, /name must be lower case letters, digits, - and _/],
      [{ ...good, name: 'mv2', summary: 'two\nlines' }, /algorithm mv2's summary must be one line of text/],
      [{ ...good, name: 'mv2', wasmFeatures: ['gpu'] }, /algorithm mv2's wasmFeatures must list feature modules among 'dem', /],
      [{ ...good, name: 'mv2', protocol: { name: 'x' } }, /algorithm mv2's protocol must be what defineProtocol returns/],
      [{ ...good, name: 'mv2', server: { options: (r: unknown) => r } }, /algorithm mv2's server.create must be a function, got undefined/],
      [{ ...good, name: 'mv2', artifact: { save: () => 1 } }, /algorithm mv2's artifact.load must be a function/],
      [{ ...good, name: 'mv2', sever: good.server }, /sever/],
      [{ ...good, name: 'mv2', cli: { server: { options: { features: { type: 'float', help: 'x' } } } } }, /cli.server.options.features must be \{ type: int \| number \| string \| flag \| range, help/],
    ];
    for (const [d, message] of cases) {
      expect(() => defineAlgorithm(d as never)).toThrow(InvalidParameterError);
      expect(() => registerAlgorithm(d as never)).toThrow(message);
    }
    expect(algorithmNames()).not.toContain('mv2');
    // and the well-formed one passes the same checks
    expect(defineAlgorithm({ ...good, name: 'mv3' }).name).toBe('mv3');
  });

  test("the CLI's server and client options are the registered algorithms' merged: one --features, its help naming who reads it", () => {
    const server = federationOptions('server');
    expect(server.algorithm!.choices).toEqual([...ALGORITHMS, 'mean-variance']);
    expect(server.features).toMatchObject({ type: 'int' });
    expect(server.features!.help).toMatch(/^fedgengmm, dem, fedgem, communities, feddistr, mean-variance: the number of features every client has \(required\)$/);
    expect(server.covariance!.help).toBe('fedgengmm, dem: covariance type');
    expect(server.rounds!.help).toMatch(/^fedgem, fedavg, fedprox, scaffold: communication rounds \(default 10\); mdm: Algorithm 2's rounds \(default 100\)$/);
    expect(federationOptions('client')['algorithm-module']).toMatchObject({ type: 'string' });
  });

  test('every built-in artifact saves, loads back and saves again to the same JSON', async () => {
    const { distributedEM } = await import('../ts/federated/dem/run.js');
    const gm = distributedEM(parts.map((p) => Matrix.fromRows(p)), { nComponents: 2, covarianceType: 'diag', seed: 2 }).model;
    const mdm = DirichletMultinomialMixture.fit(Matrix.fromRows([[3, 1, 0], [0, 2, 2], [1, 1, 2], [4, 0, 0], [0, 0, 4], [2, 2, 0]]), { nComponents: 2, rounds: 5, seed: 1 });
    const network = { sizes: [2, 3, 1], activation: 'relu', outputActivation: 'sigmoid', loss: 'mse', seed: 1 };
    const fedavgOutcome = (a: string) => ({
      algorithm: a, network, parameters: Float32Array.from({ length: 13 }, (_, i) => i / 8), rounds: 2, epochs: 5, batchSize: 32, optimizer: { name: 'adam', learningRate: 0.01 },
      history: [{ round: 1, clients: 3, loss: 0.5, epochs: 5 }, { round: 2, clients: 0, loss: 0.25, epochs: NaN, metrics: { auc: 0.9 } }],
    });
    const results: [string, unknown][] = [
      ['dem', gm],
      ['mdm', mdm],
      ['fedgengmm', { model: gm, clients: ['c0', 'c1'], incomingComponents: 5, syntheticRows: 500, virtualSamples: 0 }],
      ['fedgem', { estimatedK: 2, separationJoins: 1, separation: 0.5, uncounted: 0, phi: 1, globalCenters: Float64Array.of(0, 1, 2, 3), memberships: new Map([['a', Int32Array.of(0, 1)], ['b', Int32Array.of(1)]]), radii: new Map(), phiScores: [{ phi: 1, score: 0.8, standardError: 0.01, estimatedK: 2 }] }],
      ['fedavg', fedavgOutcome('fedavg')],
      ['fedprox', fedavgOutcome('fedprox')],
      ['scaffold', fedavgOutcome('scaffold')],
      ['communities', { communities: [['a', 'b'], ['c']], membership: new Map([['a', 0], ['b', 0], ['c', 1]]), nodes: ['a', 'b', 'c'], edges: [['a', 'b']], modularity: NaN, method: 'louvain', decisions: [{ client: 'a', partner: 'b', accept: true }], tests: 6 }],
      ['feddistr', {
        estimatedBaseDistributions: 1, uploaded: 2, cost: 'wasserstein', covariance: 'diagonal',
        bases: [{ label: 0, count: 10, weight: 1, mean: Float64Array.of(0, 1), covariance: Float64Array.of(1, 2), members: [{ client: 'a', index: 0 }, { client: 'b', index: 0 }] }],
        membership: new Map([['a', Int32Array.of(0)], ['b', Int32Array.of(0)]]), pairs: [{ a: { client: 'a', index: 0 }, b: { client: 'b', index: 0 }, cost: 0.1, bound: 0.2, parallel: true, joined: true }],
      }],
    ];
    expect(results.map(([name]) => name).sort()).toEqual([...ALGORITHMS].sort());
    for (const [name, result] of results) {
      const saved = JSON.parse(JSON.stringify(resultJson(name, result)));
      const loaded = loadResult(name, JSON.stringify(saved));
      expect(JSON.parse(JSON.stringify(resultJson(name, loaded))), name).toEqual(saved);
      expect(() => loadResult(name, '[1, 2]'), name).toThrow(InvalidParameterError);
    }
    expect(() => loadResult('fedavg', { ...JSON.parse(JSON.stringify(resultJson('fedavg', fedavgOutcome('fedavg')))), parameters: [1, 2] })).toThrow(/parameters has 2 values; the network 2-3-1 has 13/);
    expect(() => loadResult('communities', { ...JSON.parse(JSON.stringify(resultJson('communities', results.find(([n]) => n === 'communities')![1]))), method: 'magic' })).toThrow(/a saved communities result is not valid: method: /);
    gm.dispose();
  });

  test("a built-in algorithm's artifact loads back as what it saved (DEM's GaussianMixture), and a wrong one is refused", async () => {
    const { distributedEM } = await import('../ts/federated/dem/run.js');
    const r = distributedEM(parts.map((p) => Matrix.fromRows(p)), { nComponents: 2, covarianceType: 'diag', seed: 1 });
    const saved = resultJson('dem', r.model);
    const loaded = loadResult('dem', JSON.stringify(saved)) as { toJSON(): unknown; dispose(): void };
    expect(loaded.toJSON()).toEqual(saved);
    loaded.dispose();
    r.model.dispose();
    expect(() => resultJson('dem', { weights: [1] })).toThrow('a dem result must be a GaussianMixture, got');
    expect(() => loadResult('fedgem', { estimatedK: 1, separationJoins: 0, uncounted: 0, phi: 1, globalCenters: [0, 1], memberships: { a: [3] } })).toThrow(
      /a saved fedgem result is not valid: memberships.a\[0\] is 3, not a super-cluster below estimatedK \(1\)/,
    );
    expect(() => loadResult('fedgengmm', '{"model": 1')).toThrow(/not a saved fedgengmm result: the text is not JSON/);
    expect(DEM_PROTOCOL).toBe(algorithm('dem').protocol);
  });
});

describe("a user's algorithm on every transport: the federated mean and variance of abalone, against the central ones", () => {
  test('in process (makeClient and makeServer by name); its artifact saves and loads back', () => {
    const roles = specs.map((s) => makeClient(s));
    const run = runFederationSync(makeServer('mean-variance', { nFeatures: FEATURES.length }), new InProcessTransport(roles));
    const r = run.model as MeanVariance;
    expectCentral(r);
    expect(r.clients).toEqual(['c0', 'c1', 'c2']);
    const saved = JSON.parse(JSON.stringify(resultJson('mean-variance', r)));
    expectCentral(loadResult('mean-variance', saved) as MeanVariance);
    for (const role of roles) role.dispose();
    // its own option checks run where the built-in ones do
    expect(() => makeServer('mean-variance', { nFeatures: 0 })).toThrow('nFeatures must be an integer >= 1, got 0');
    expect(() => makeClient({ ...specs[0]!, options: { seed: 1 } })).toThrow('a mean-variance client takes no options');
  });

  test('on worker threads: each worker imports the module (algorithmModules); without it the clients cannot be made, and say why', async () => {
    const t = await distNode.WorkerTransport.start(specs, { threads: 2, algorithmModules: [fileURLToPath(FIXTURE)] });
    try {
      expect(t.unborn).toEqual([]);
      const run = await dist.runFederation(distNode.makeServer('mean-variance', { nFeatures: FEATURES.length }), t);
      expectCentral(run.model as MeanVariance);
      expect(run.excluded).toEqual([]);
    } finally {
      await t.close();
    }
    // the built-in algorithms need no module; a user's needs its module in the worker
    const without = await distNode.WorkerTransport.start(specs.slice(0, 1), { threads: 1 });
    try {
      expect(without.unborn).toHaveLength(1);
      expect(without.unborn[0]!.reason).toMatch(/^c0: creating the client failed: algorithm must be one of fedgengmm, .*feddistr, got "mean-variance"$/);
    } finally {
      await without.close();
    }
    await expect(distNode.WorkerTransport.start(specs, { threads: 1, algorithmModules: ['./no-such-module.mjs'] })).rejects.toThrow(/the algorithm module .*no-such-module\.mjs could not be imported/);
  }, 60_000);

  describe('over the embedded broker: `fedmix server` and three `fedmix client` processes with --algorithm-module', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'fedmix-registry-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    function start(...args: string[]) {
      const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      return new Promise<{ code: number | null; out: string; err: string }>((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
    }

    function freePort(): Promise<number> {
      return new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
    }

    test('the server writes the central mean and variance; --help lists the module\'s option', async () => {
      const module = fileURLToPath(FIXTURE);
      parts.forEach((p, c) => {
        // each client's CSV holds its rows and the ring count, which it drops
        const label = rows.slice(bounds[c], bounds[c + 1]).map((r) => r[header.indexOf('label')]);
        writeFileSync(join(dir, `c${c}.csv`), `${[...FEATURES, 'label'].join(',')}\n${p.map((r, i) => [...r, label[i]].join(',')).join('\n')}\n`);
      });
      writeFileSync(join(dir, 'clients.txt'), 'c0:pw0\nc1:pw1\nc2:pw2\n');
      const port = await freePort();
      const out = join(dir, 'mean-variance.json');
      const server = start('server', '--algorithm-module', module, '--algorithm', 'mean-variance', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--features', String(FEATURES.length), '--round-timeout', '30', '--join-timeout', '60', '--out', out);
      const clients = [0, 1, 2].map((c) =>
        start('client', '--algorithm', 'mean-variance', `--algorithm-module=${module}`, '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--drop', 'label'),
      );
      const s = await server;
      const cs = await Promise.all(clients);
      expect(s.code, s.err).toBe(0);
      expect(s.err).toMatch(/round 1 \(mean-variance\/ask\): 3\/3 accepted/);
      expect(s.out).toMatch(/fedmix server: mean-variance, 1 rounds/);
      for (const c of cs) {
        expect(c.code, c.err).toBe(0);
        expect(c.out).toMatch(/answered mean-variance\/ask of round 1/);
        expect(c.out).toMatch(/the run ended well/);
      }
      // --out is the model artifact (issue 25): a user's algorithm's result is its model part
      const artifact = JSON.parse(readFileSync(out, 'utf8'));
      expect(artifact).toMatchObject({ kind: 'fedmix.model', algorithm: 'mean-variance', role: 'server' });
      const saved = artifact.model;
      expect(saved.format).toBe('mean-variance');
      expect(saved.clients.sort()).toEqual(['c0', 'c1', 'c2']);
      expectCentral(saved);

      const help = await start('server', '--algorithm-module', module, '--help');
      expect(help.code).toBe(0);
      expect(help.out).toMatch(/--algorithm fedgengmm\|dem\|.*\|feddistr\|mean-variance/);
      expect(help.out).toMatch(/fedgengmm, dem, fedgem, communities, feddistr, mean-variance: the number of features every client has/);
      // without the module the name is unknown, and the command says which names it knows
      const unknown = await start('server', '--algorithm', 'mean-variance', '--clients', join(dir, 'clients.txt'));
      expect(unknown.code).toBe(2);
      expect(unknown.err).toMatch(/--algorithm must be one of fedgengmm, dem, .*, feddistr, got "mean-variance"/);
      const missing = await start('client', '--algorithm-module', join(dir, 'missing.mjs'), '--algorithm', 'dem');
      expect(missing.code).toBe(2);
      expect(missing.err).toMatch(/^fedmix client: --algorithm-module .*missing\.mjs could not be imported/);
    }, 120_000);
  });
});
