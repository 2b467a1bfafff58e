/** The FedGenGMM experiment runner and its labelled-CSV input, on real data. */
import { readFileSync } from 'node:fs';
import { beforeAll, expect, test } from 'vitest';
import { FederationError, init, InvalidDataError, InvalidParameterError, StandardScaler } from '../ts/index.js';
import { labelledFromCsv } from '../ts/experiments/dataset.js';
import { runExperiment, runExperimentAsync, type ExperimentReport } from '../ts/experiments/fedgengmm/run.js';
import { makeClient, type ClientSpec } from '../ts/federated/algorithms.js';
import { InProcessTransport } from '../ts/federated/transport/in-process.js';
import { runFedGEMExperiment } from '../ts/experiments/fedgem/run.js';

beforeAll(async () => {
  await init();
});

const satellite = () => labelledFromCsv(readFileSync(new URL('../../shared/datasets/satellite.csv', import.meta.url), 'utf8'), { label: 'label' });

test('labelled CSV: classes of any kind become indices; anomaly columns must be 0/1', () => {
  const d = labelledFromCsv('a,b,kind,bad\n1,2,x,0\n3,4,y,1\n5,6,x,0\n', { label: 'kind', anomalyLabel: 'bad' });
  expect(d.featureNames).toEqual(['a', 'b']);
  expect(Array.from(d.labels!)).toEqual([0, 1, 0]);
  expect(d.classNames).toEqual(['x', 'y']);
  expect(Array.from(d.anomaly!)).toEqual([0, 1, 0]);
  expect(() => labelledFromCsv('a,bad\n1,2\n', { anomalyLabel: 'bad' })).toThrow(/"2" is not 0 or 1/);
  expect(() => labelledFromCsv('a,b\n1,x\n', {})).toThrow(InvalidDataError);
  expect(() => labelledFromCsv('a\n1\n', { label: 'nope' })).toThrow(/no column "nope"/);
  // a misspelt class column is named as missing, even when the real class column is text
  expect(() => labelledFromCsv('a,kind\n1,x\n', { label: 'knd' })).toThrow(/no column "knd"/);
});

test('satellite, Dir(0.3) over 8 clients: every method scored, FedGenGMM one-shot and close to central', () => {
  const cfg = { clients: 8, partition: 'dirichlet' as const, alpha: 0.3, components: 6, repeats: 2, seed: 1, pca: 8 };
  const r = runExperiment(satellite(), cfg);
  // thirds: 2145 training rows, 2145 test inliers, and noisy rows making 10% of the test set
  expect(r.dataset).toMatchObject({ rows: 6435, features: 36, trainRows: 2145, testRows: 2145 + 238, anomalies: 238 });
  const by = Object.fromEntries(r.results.map((x) => [x.method, x]));
  expect(Object.keys(by)).toEqual(['fedgengmm', 'dem-separated', 'dem-subset', 'dem-kfed', 'central', 'local']);
  expect(by.fedgengmm!.runs).toHaveLength(2);
  expect(by.fedgengmm!.mean.rounds).toBe(1);
  expect(by['dem-kfed']!.mean.rounds).toBeGreaterThan(by.fedgengmm!.mean.rounds);
  // the paper's claim (a) at this small scale: within 5% of centralized EM
  const gap = Math.abs(by.fedgengmm!.mean.logLikelihood - by.central!.mean.logLikelihood) / Math.abs(by.central!.mean.logLikelihood);
  expect(gap).toBeLessThan(0.05);
  expect(by.local!.mean.logLikelihood).toBeLessThan(by.central!.mean.logLikelihood);
  for (const x of r.results) for (const run of x.runs) expect(Number.isFinite(run.aucPr) && Number.isFinite(run.logLikelihood)).toBe(true);
  // reproducible
  const again = runExperiment(satellite(), { ...cfg, methods: ['fedgengmm'] });
  expect(again.results[0]!.runs.map((x) => x.logLikelihood)).toEqual(by.fedgengmm!.runs.map((x) => x.logLikelihood));
});

test('configuration errors say what to change', () => {
  const d = satellite();
  const { labels: _l, ...unlabelled } = d;
  expect(() => runExperiment(unlabelled, { clients: 4, partition: 'dirichlet', components: 3 })).toThrow(/name the class column \(--label\), or deal k-means clusters of the rows \(--cluster-classes K\)/);
  expect(() => runExperiment(d, { clients: 4, partition: 'iid', kRange: [2, 3] })).toThrow(/distributed EM needs a fixed number of components/);
  expect(() => runExperiment(d, { clients: 4, partition: 'iid' })).toThrow(InvalidParameterError);
  expect(() => runExperiment(d, { clients: 4, partition: 'iid', components: 3, methods: ['magic' as never] })).toThrow(/unknown method "magic"/);
  expect(() => runExperiment(d, { clients: 4, partition: 'iid', components: 3, trainFraction: 2 })).toThrow(/trainFraction/);
});

/** A report without its wall times (the only numbers that differ between runs of one config). */
function untimed(r: ExperimentReport) {
  return r.results.map(({ runs, mean, std, ...rest }) => ({
    ...rest,
    runs: runs.map(({ seconds: _s, serverSeconds: _v, ...x }) => x),
    mean: { ...mean, seconds: 0, serverSeconds: 0 },
    std: { ...std, seconds: 0, serverSeconds: 0 },
  }));
}

test('thyroid (no classes), Dir(alpha) over k-means clusters: the asynchronous runner on its own transports gives the synchronous numbers, reporting rounds and runs as they come', async () => {
  const thyroid = labelledFromCsv(readFileSync(new URL('../ts/data/datasets/anomaly_thyroid.csv', import.meta.url), 'utf8'), { anomalyLabel: 'label' });
  const cfg = { clients: 4, partition: 'dirichlet' as const, alpha: 0.5, clusterClasses: 4, components: 3, repeats: 2, seed: 2, methods: ['fedgengmm', 'dem-kfed', 'central', 'local'] as const };
  const sync = runExperiment(thyroid, { ...cfg, methods: [...cfg.methods] });
  // 70% of the 3,679 inliers train
  expect(sync.dataset.trainRows).toBe(Math.round(3679 * 0.7));
  const rounds: string[] = [];
  const runs: string[] = [];
  const made: string[][] = [];
  const closed: number[] = [];
  const asyncReport = await runExperimentAsync(thyroid, { ...cfg, methods: [...cfg.methods] }, {
    // a transport of its own per federation, closed by the runner when the federation is done
    clients: (specs: ClientSpec[], { encoding }) => {
      made.push(specs.map((s) => `${s.algorithm}:${s.id}`));
      const roles = specs.map(makeClient);
      const t = new InProcessTransport(roles, { encoding });
      return Object.assign(t, { close: () => (closed.push(made.length), roles.forEach((r) => r.dispose())) });
    },
    onRound: ({ method, repeat, record }) => rounds.push(`${method}/${repeat}/${record.round}/${(record.metrics as { logLikelihood?: number } | undefined)?.logLikelihood ?? '-'}`),
    onRun: ({ method, repeat, curve }) => runs.push(`${method}/${repeat}/${curve?.length ?? '-'}`),
  });
  expect(untimed(asyncReport)).toEqual(untimed(sync));
  expect(asyncReport.dataset).toEqual(sync.dataset);
  // two federations per repeat (fedgengmm and local share nothing), each with its four clients; every transport closed
  expect(made).toEqual([0, 1].flatMap(() => [
    ['fedgengmm:0', 'fedgengmm:1', 'fedgengmm:2', 'fedgengmm:3'],
    ['dem:client-0', 'dem:client-1', 'dem:client-2', 'dem:client-3'],
    ['fedgengmm:0', 'fedgengmm:1', 'fedgengmm:2', 'fedgengmm:3'],
  ]));
  expect(closed).toEqual([1, 2, 3, 4, 5, 6]);
  const dem = sync.results.find((x) => x.method === 'dem-kfed')!;
  expect(runs).toEqual([0, 1].flatMap((r) => ['fedgengmm', 'dem-kfed', 'central', 'local'].map((m) => `${m}/${r}/${m === 'dem-kfed' ? dem.curves![r]!.length : '-'}`)));
  // distributed EM's rounds carry the curve's values, in order (its k-FED round first)
  for (const r of [0, 1]) {
    const lls = rounds.filter((x) => x.startsWith(`dem-kfed/${r}/`)).map((x) => x.split('/')[3]!).filter((v) => v !== '-').map(Number);
    expect(lls).toEqual(dem.curves![r]);
  }
  // the in-process default of the asynchronous runner: the same numbers too
  expect(untimed(await runExperimentAsync(thyroid, { ...cfg, methods: [...cfg.methods] }))).toEqual(untimed(sync));
}, 60_000);

test('the runners refuse unknown options and bad hooks with typed errors', async () => {
  const d = satellite();
  expect(() => runExperiment(d, { clients: 4, partition: 'iid', components: 3, repeat: 2 } as never)).toThrow(/repeat.*repeats/);
  await expect(runExperimentAsync(d, { clients: 4, partition: 'iid', components: 3 }, { clients: 5 as never })).rejects.toThrow(InvalidParameterError);
  await expect(runExperimentAsync(d, { clients: 4, partition: 'iid', components: 3, methods: ['central', 'fedgengmm'] }, { clients: () => ({}) as never })).rejects.toThrow(/must give a transport/);
  // a client that its transport could not create fails the run, as in process
  const unborn = (specs: ClientSpec[], { encoding }: { encoding: 'binary' | 'json' }) => {
    const roles = specs.slice(1).map(makeClient);
    return Object.assign(new InProcessTransport(roles, { encoding }), { unborn: [{ client: specs[0]!.id, round: 0, reason: 'no memory left' }], close: () => roles.forEach((r) => r.dispose()) });
  };
  await expect(runExperimentAsync(d, { clients: 4, partition: 'iid', components: 3, methods: ['fedgengmm'] }, { clients: unborn })).rejects.toThrow(FederationError);
  await expect(runExperimentAsync(d, { clients: 4, partition: 'iid', components: 3, methods: ['fedgengmm'] }, { clients: unborn })).rejects.toThrow(/fedgengmm: 1 client\(s\) could not be created: no memory left/);
  expect(() => runExperiment({ ...d, anomaly: new Uint8Array(3) }, { clients: 4, partition: 'iid', components: 3 })).toThrow(InvalidDataError);
});

test('labelled CSV: label groups (the FedGEM paper abalone rings), one-hot and dropped columns', () => {
  const text = 'sex,len,junk,rings\nM,0.4,a,3\nF,0.5,b,7\nI,0.2,c,12\nM,0.6,d,20\n';
  const d = labelledFromCsv(text, { label: 'rings', labelGroups: '0-5,6,7,8,9,10,11-12,13-', oneHot: ['sex'], drop: ['junk'] });
  expect(d.featureNames).toEqual(['len', 'sex=F', 'sex=I', 'sex=M']);
  expect(Array.from(d.X.column(1))).toEqual([0, 1, 0, 0]);
  expect(Array.from(d.X.column(3))).toEqual([1, 0, 0, 1]);
  expect(Array.from(d.labels!)).toEqual([0, 2, 6, 7]);
  expect(d.classNames).toEqual(['0-5', '6', '7', '8', '9', '10', '11-12', '13-']);
  expect(() => labelledFromCsv(text, { label: 'rings', labelGroups: '0-5,6', oneHot: ['sex'], drop: ['junk'] })).toThrow(/label "7" of data row 2 falls in no group/);
  expect(() => labelledFromCsv(text, { label: 'rings', labelGroups: '0-5,x', oneHot: ['sex'], drop: ['junk'] })).toThrow(/label group "x"/);
  expect(() => labelledFromCsv(text, { label: 'rings' })).toThrow(/"M" is not a number/);
});

test('StandardScaler: zero mean, unit population variance, fitted on training rows only', () => {
  const s = new StandardScaler().fit([[1, 5], [3, 5], [5, 5]]);
  const t = s.transform([[3, 5], [7, 6]]);
  expect(Array.from(t.column(0))).toEqual([0, 4 / Math.sqrt(8 / 3)]);
  // a constant column is shifted, not divided by zero
  expect(Array.from(t.column(1))).toEqual([0, 1]);
  expect(() => new StandardScaler().transform([[1]])).toThrow(/not fitted/);
  expect(() => s.transform([[1]])).toThrow(/1 features but the scaler was fitted with 2/);
  expect(() => new StandardScaler().fit([[NaN]])).toThrow(InvalidDataError);
});

test('the FedGEM runner on abalone: rings grouped into 8 clusters, both methods scored per client', () => {
  const abalone = labelledFromCsv(readFileSync(new URL('../../shared/datasets/abalone.csv', import.meta.url), 'utf8'), {
    label: 'label',
    labelGroups: '0-5,6,7,8,9,10,11-12,13-',
    oneHot: ['sex'],
  });
  const r = runFedGEMExperiment({ kind: 'table', X: abalone.X, labels: abalone.labels!, name: 'abalone' }, { clients: 6, clustersPerClient: [3, 5], scale: 'standard', rounds: 4, repeats: 2, seed: 3 });
  expect(r.data).toEqual({ source: 'abalone', rows: 4177, features: 10, clusters: 8 });
  expect(r.runs).toHaveLength(2);
  for (const run of r.runs) {
    expect(run.trueK).toBe(8);
    expect(run.estimatedK).toBeGreaterThanOrEqual(3);
    expect(run.clients.length).toBe(6);
    // every client's rows are split 80/20; ARI is weighted over the clients' test rows
    for (const c of run.clients) expect(c.nTest).toBe(Math.max(1, Math.round((c.nTrain + c.nTest) * 0.2)));
    const w = run.clients.reduce((t, c) => t + c.nTest, 0);
    expect(run.ari).toBeCloseTo(run.clients.reduce((t, c) => t + c.ari * c.nTest, 0) / w, 12);
    expect(run.centralAri).toBeDefined();
    // no variance given: the spreads, 4 rounds and the final upload; the estimate is reported
    expect(run.rounds).toBe(6);
    expect(run.varianceEstimate!.variance).toBeGreaterThan(0);
  }
  expect(() => runFedGEMExperiment({ kind: 'table', X: abalone.X, labels: abalone.labels!, name: 'abalone' }, { clients: 6, clustersPerClient: [3, 5], testShare: 1 })).toThrow(InvalidParameterError);
  // clusters per client out of range are named as the caller named them, with the data's clusters (not quantity()'s "alpha")
  for (const [range, shown] of [[[0, 5], '[0, 5]'], [[3, 9], '[3, 9]'], [[5, 3], '[5, 3]'], [[1.5, 3], '[1.5, 3]']] as const) {
    const source = { kind: 'table' as const, X: abalone.X, labels: abalone.labels!, name: 'abalone' };
    expect(() => runFedGEMExperiment(source, { clients: 6, clustersPerClient: range as unknown as [number, number] })).toThrow(
      new InvalidParameterError(`clustersPerClient (how many clusters each client holds) must be a range [lo, hi] of integers with 1 <= lo <= hi <= 8, the data's clusters; got ${shown}`),
    );
  }
});
