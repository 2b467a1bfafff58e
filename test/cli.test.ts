/** The `fedmix` binary as built (dist/cli.cjs), run as a user runs it. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { xorshift32 } from './helpers.js';

const cli = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));

function fedmix(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/**
 * The same main() in this process, its stdout and stderr captured: for the cases of a test where what is
 * checked is the message and the status main() returns (the binary exits with it), not the process. Each
 * such test still runs the built binary for its first case; a process costs half a second of CPU to start.
 */
async function fedmixInProcess(...args: string[]) {
  const { main } = await import('../ts/cli/main.js');
  const out: string[] = [];
  const err: string[] = [];
  const text = (chunk: string | Uint8Array) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  const { write: stdout } = process.stdout;
  const { write: stderr } = process.stderr;
  process.stdout.write = ((chunk: string | Uint8Array) => (out.push(text(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (err.push(text(chunk)), true)) as typeof process.stderr.write;
  try {
    return { code: await main(args), out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

test('demo: FedGenGMM and every baseline on the embedded thyroid data, reproducibly', () => {
  const json = join(mkdtempSync(join(tmpdir(), 'fedmix-cli-')), 'demo.json');
  const r = fedmix('demo', '--repeats', '2', '--seed', '3', '--json', json);
  expect(r.code).toBe(0);
  expect(r.err).not.toMatch(/demo \[/); // no progress bar: stderr is not a terminal here
  for (const m of ['fedgengmm', 'dem-separated', 'dem-subset', 'dem-kfed', 'central', 'local']) expect(r.out).toMatch(new RegExp(`^${m} `, 'm'));
  const res = JSON.parse(readFileSync(json, 'utf8'));
  // 30% of the 3,679 inliers test, with anomalies at thyroid's own share (93 of 3,772): 28
  expect(res.dataset).toMatchObject({ rows: 3772, features: 6, testRows: 1104 + 28, anomalies: 28 });
  const by = Object.fromEntries(res.results.map((x: { method: string }) => [x.method, x]));
  expect(by.fedgengmm.runs).toHaveLength(2);
  // one-shot: one round (uploads, and the global model back); DEM iterates
  expect(by.fedgengmm.mean.rounds).toBe(1);
  expect(by.fedgengmm.mean.bytesDown).toBeGreaterThan(0);
  expect(by.fedgengmm.mean.bytesDown).toBeLessThan(by['dem-kfed'].mean.bytesDown / 3);
  expect(res.data).toEqual({ file: 'embedded: anomaly_thyroid.csv', anomalyLabel: 'label' });
  expect(by['dem-kfed'].mean.rounds).toBeGreaterThan(3);
  // the global models describe the training data far better than the local ones
  expect(by.fedgengmm.mean.logLikelihood).toBeGreaterThan(by.local.mean.logLikelihood + 5);
  expect(by.fedgengmm.mean.aucPr).toBeGreaterThan((3 * res.dataset.anomalies) / res.dataset.testRows);
  // the same seed, the same numbers
  const again = fedmix('demo', '--repeats', '2', '--seed', '3');
  const table = (out: string) => out.split('\n').filter((l) => /^(fedgengmm|dem-|central|local)/.test(l)).map((l) => l.replace(/\s+[0-9.]+$/, ''));
  expect(table(again.out)).toEqual(table(r.out));
});

test('bad options exit with status 2 and say what to change', async () => {
  let r = fedmix('demo', '--k-range', 'many');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--k-range takes a range like 2\.\.10/);
  r = await fedmixInProcess('demo', '--covariance', 'dense');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--covariance must be one of full, tied, diag, spherical/);
  r = await fedmixInProcess('demo', '--colour');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/unknown option --colour/);
  r = await fedmixInProcess('frobnicate');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/unknown command "frobnicate"/);
  r = await fedmixInProcess('experiment', '--components', '3');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--data FILE is required/);
  r = await fedmixInProcess('demo', '--methods', 'fedgengmm,magic');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/unknown method "magic"/);
});

test('messages name what was given: --clusters-per-client out of range, a model too large, a CSV of column names alone', async () => {
  // fedgem's range of clusters per client, not the partition's "alpha" the user never gave
  for (const [range, got] of [['0', '[0, 0]'], ['3..99', '[3, 99]']]) {
    const r = fedmix('fedgem', '--blobs', '--clusters-per-client', range);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`fedmix fedgem: clustersPerClient (how many clusters each client holds) must be a range [lo, hi] of integers with 1 <= lo <= hi <= 10, the data's clusters; got ${got}\n`);
    expect(r.err).not.toMatch(/alpha/);
  }
  // a diagonal mixture too large for the cap: the advice is how many components fit, not diagonal covariances
  const letter = fileURLToPath(new URL('../../shared/datasets/letter.csv', import.meta.url));
  let r = await fedmixInProcess('experiment', '--data', letter, '--label', 'label', '--components', '99999999', '--covariance', 'diag');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/a diag mixture of 99999999 components over 16 features holds 3299999967 values, more than the 134217728 \(1 GiB\) a model may; lower nComponents to at most 65536 \(LIMITS.components\)\n$/);
  expect(r.err).not.toMatch(/diagonal/);
  // a header and no rows: said so, naming the file, by every command (not "data.labels is empty")
  const header = join(mkdtempSync(join(tmpdir(), 'fedmix-cli-')), 'header.csv');
  writeFileSync(header, 'x0,x1,label\n');
  for (const args of [['experiment', '--label', 'label', '--components', '3'], ['fedgem', '--label', 'label'], ['communities', '--label', 'label', '--detector', 'gmm'], ['mdm', 'simulate', '--label', 'label']]) {
    r = await fedmixInProcess(...args, '--data', header);
    expect(r.code, args.join(' ')).toBe(2);
    expect(r.err).toBe(`fedmix ${args[0] === 'mdm' ? 'mdm simulate' : args[0]}: ${header} has column names but no data rows\n`);
    expect(r.err).not.toMatch(/is empty/);
  }
});

test('help and version', () => {
  expect(fedmix('help').out).toMatch(/usage: fedmix <command>/);
  expect(fedmix('help', 'demo').out).toMatch(/--k-range A\.\.B/);
  expect(fedmix('version').out.trim()).toBe(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
});

describe('mdm fit and mdm simulate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedmix-mdm-'));
  const at = (f: string) => join(dir, f);
  // 300 clients of two kinds (most of their 20..39 points in the first two classes, or spread), from a seeded xorshift
  const next = xorshift32(12345);
  const u = () => next() / 2 ** 32;
  const rows = Array.from({ length: 300 }, (_, i) => {
    const n = 20 + Math.floor(u() * 20);
    const w = i % 3 === 0 ? [0.45, 0.45, 0.05, 0.05] : [0.25, 0.25, 0.25, 0.25];
    const h = [0, 0, 0, 0];
    for (let t = 0; t < n; t++) {
      const x = u();
      h[x < w[0]! ? 0 : x < w[0]! + w[1]! ? 1 : x < 1 - w[3]! ? 2 : 3]!++;
    }
    return h;
  });
  writeFileSync(at('hist.csv'), 'cat,dog,eel,fox\n' + rows.map((r) => r.join(',')).join('\n') + '\n');
  writeFileSync(at('central.csv'), 'x,label\n' + Array.from({ length: 2000 }, (_, i) => `${i},${['cat', 'dog', 'eel', 'fox'][i % 4]}`).join('\n') + '\n');

  test('fit: a model JSON with tau, alpha (K rows of C) and pi (K rows of N); the same seed, the same model', () => {
    const r = fedmix('mdm', 'fit', '--data', at('hist.csv'), '--k', '2', '--rounds', '15', '--cohort', '150', '--seed', '4', '--out', at('model.json'));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/300 clients, C = 4, N = 39/);
    const model = JSON.parse(readFileSync(at('model.json'), 'utf8'));
    expect(model.tau).toHaveLength(2);
    expect(model.alpha.map((a: number[]) => a.length)).toEqual([4, 4]);
    expect(model.pi.map((p: number[]) => p.length)).toEqual([39, 39]);
    expect(model.categories).toEqual(['cat', 'dog', 'eel', 'fox']);
    const again = fedmix('mdm', 'fit', '--data', at('hist.csv'), '--k', '2', '--rounds', '15', '--cohort', '150', '--seed', '4');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toEqual(model); // without --out, stdout is the model
  });

  test('fit --k-range: K by validation log-likelihood', () => {
    const json = at('select.json');
    const r = fedmix('mdm', 'fit', '--data', at('hist.csv'), '--k-range', '1..3', '--rounds', '10', '--seed', '1', '--out', at('m2.json'), '--json', json);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/K = \d chosen by validation log-likelihood on \d+ of 60 held-out clients/);
    const res = JSON.parse(readFileSync(json, 'utf8'));
    expect(res.candidates.map((c: { k: number }) => c.k)).toEqual([1, 2, 3]);
    expect(JSON.parse(readFileSync(at('m2.json'), 'utf8')).tau).toHaveLength(res.k);
  });

  test('simulate: an assignment of central rows to clients, by the model or a baseline', () => {
    fedmix('mdm', 'fit', '--data', at('hist.csv'), '--k', '2', '--rounds', '5', '--seed', '4', '--out', at('model.json'));
    const json = at('sim.json');
    const r = fedmix('mdm', 'simulate', '--model', at('model.json'), '--data', at('central.csv'), '--clients', '25', '--seed', '2', '--out', at('assign.csv'), '--json', json);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\(mdm\): 25 clients/);
    const lines = readFileSync(at('assign.csv'), 'utf8').trim().split('\n');
    expect(lines[0]).toBe('client,row');
    const res = JSON.parse(readFileSync(json, 'utf8'));
    const label = (row: number) => ['cat', 'dog', 'eel', 'fox'][row % 4];
    const held = res.histograms.map(() => [0, 0, 0, 0]);
    for (const l of lines.slice(1)) {
      const [c, row] = l.split(',').map(Number);
      held[c!][res.classes.indexOf(label(row!))]++;
    }
    expect(held).toEqual(res.histograms);
    for (const method of ['fully-iid', 'conditionally-iid']) {
      const b = fedmix('mdm', 'simulate', '--method', method, '--histograms', at('hist.csv'), '--data', at('central.csv'), '--seed', '1');
      expect(b.code).toBe(0);
      expect(b.out.trim().split('\n')[0]).toBe('client,row');
    }
  });

  test('bad input exits with status 2 and says what to change', async () => {
    writeFileSync(at('bad.csv'), 'a,b\n3,-1\n2,2\n');
    let r = fedmix('mdm', 'fit', '--data', at('bad.csv'), '--k', '1');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/row 0, category 1 is -1; counts must be non-negative integers/);
    r = await fedmixInProcess('mdm', 'fit', '--data', at('hist.csv'), '--k', '2', '--k-range', '1..3');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/give --k K or --k-range A\.\.B/);
    r = await fedmixInProcess('mdm', 'fit', '--data', at('hist.csv'), '--k', '400');
    expect(r.err).toMatch(/K = 400 components is larger than the cohort of 300 clients/);
    r = await fedmixInProcess('mdm', 'fit', '--data', at('hist.csv'), '--k', '2', '--max-count', '30');
    expect(r.err).toMatch(/exceeds N = 30/);
    // choosing K under privacy releases exact validation sums: only with --exact-validation
    r = await fedmixInProcess('mdm', 'fit', '--data', at('hist.csv'), '--k-range', '1..2', '--noise-multiplier', '1', '--clip', '5');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--k-range with --noise-multiplier: choosing K releases exact \(noise-free\) sums .* add --exact-validation to accept that/);
    r = fedmix('mdm', 'fit', '--data', at('hist.csv'), '--k-range', '1..2', '--rounds', '3', '--noise-multiplier', '1', '--clip', '5', '--exact-validation', '--out', at('dp.json'));
    expect(r.code).toBe(0);
    expect(fedmix('help', 'mdm', 'fit').out).toMatch(/--exact-validation/);
    r = await fedmixInProcess('mdm', 'simulate', '--method', 'fully-iid', '--data', at('central.csv'));
    expect(r.err).toMatch(/--method fully-iid needs --histograms FILE/);
    r = await fedmixInProcess('mdm', 'frob');
    expect(r.err).toMatch(/unknown command "mdm frob"/);
    expect(fedmix('help', 'mdm', 'simulate').out).toMatch(/--method mdm\|fully-iid\|conditionally-iid/);
  });
});

test('fedgem: blobs and a CSV file, JSON with estimatedK, ari and per-client results', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedmix-cli-'));
  const json = join(dir, 'fedgem.json');
  let r = fedmix('fedgem', '--blobs', '--blob-samples', '150', '--repeats', '2', '--seed', '4', '--json', json);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/estimated K 10 \(true 10\)/);
  expect(r.out).toMatch(/^client\s+clusters\s+train\s+test\s+super-clusters\s+ARI\s+silhouette\s+central ARI/m);
  const res = JSON.parse(readFileSync(json, 'utf8'));
  expect(res.data).toMatchObject({ source: 'blobs', nClusters: 10, nFeatures: 2, samplesPerCluster: 150, minDistance: 6 });
  expect(res.estimatedK).toBe(10);
  expect(res.trueK).toBe(10);
  expect(res.ari).toBeGreaterThan(0.95);
  expect(res.clients).toHaveLength(10);
  expect(res.clients[0]).toMatchObject({ client: '0' });
  expect(res.clients[0].clusters.length).toBeGreaterThanOrEqual(3);
  expect(res.runs).toHaveLength(2);
  expect(res.summary.kCorrect).toBe(2);
  // a CSV with grouped labels and tuned phi
  const abalone = fileURLToPath(new URL('../../shared/datasets/abalone.csv', import.meta.url));
  r = fedmix('fedgem', '--data', abalone, '--label-groups', '0-5,6,7,8,9,10,11-12,13-', '--one-hot', 'sex', '--clients', '5', '--clusters-per-client', '3..4', '--rounds', '3', '--phi', '0.5,2,8', '--json', json);
  expect(r.code).toBe(0);
  const csv = JSON.parse(readFileSync(json, 'utf8'));
  expect(csv.data).toMatchObject({ source: 'csv', file: abalone });
  expect(csv.runs[0].phiScores.map((s: { phi: number }) => s.phi)).toEqual([0.5, 2, 8]);
  expect([0.5, 2, 8]).toContain(csv.phi);
  r = await fedmixInProcess('fedgem', '--phi', 'big', '--blobs');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--phi takes a positive number/);
  r = await fedmixInProcess('fedgem');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--data FILE \(with --label\) or --blobs is required/);
});

test('fedgem --data on unit-variance blobs: the default scaling with the estimated variance finds K (sigma^2 = 1 did not)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedmix-cli-'));
  // 9 clusters of standard deviation 1 on a 3 x 3 grid 7 apart
  const next = xorshift32(7);
  const u = () => (next() + 0.5) / 2 ** 32;
  const g = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const lines = ['x,y,label'];
  for (let c = 0; c < 9; c++) for (let i = 0; i < 150; i++) lines.push(`${(c % 3) * 7 + g()},${Math.floor(c / 3) * 7 + g()},${c}`);
  const csv = join(dir, 'grid.csv');
  writeFileSync(csv, lines.join('\n') + '\n');
  const json = join(dir, 'fedgem.json');
  const args = ['fedgem', '--data', csv, '--clients', '6', '--clusters-per-client', '3..5', '--central', 'none', '--repeats', '3'];
  let r = fedmix(...args, '--json', json);
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/features scaled: standard/);
  expect(r.out).toMatch(/^variance sigma\^2 estimated 0\.0\d+ \(first repeat: within-cluster sum of squares [\d.]+ over 2118 degrees of freedom from 6 clients' k-means\)/m);
  expect(r.out).toMatch(/estimated K right in 3 of 3/);
  const res = JSON.parse(readFileSync(json, 'utf8'));
  expect(res.varianceEstimated).toBe(true);
  // standardized: each feature's spread is about sqrt(7^2 * 2/3 + 1) = 5.8, so sigma^2 is about 1/33.7
  expect(res.variance).toBeGreaterThan(0.027);
  expect(res.variance).toBeLessThan(0.031);
  expect(res.varianceEstimate.degreesOfFreedom).toBe(2118);
  expect(res.runs.every((x: { varianceEstimate: { variance: number } }) => x.varianceEstimate.variance > 0)).toBe(true);
  // unscaled, the estimate is the blobs' own variance
  r = fedmix(...args, '--scale', 'none', '--json', json);
  expect(JSON.parse(readFileSync(json, 'utf8')).variance).toBeGreaterThan(0.93);
  expect(JSON.parse(readFileSync(json, 'utf8')).variance).toBeLessThan(1.07);
  // the old default, sigma^2 = 1 on standardized features, overestimates K
  r = fedmix(...args, '--variance', '1', '--json', json);
  expect(r.out).toMatch(/^variance sigma\^2 = 1 \(given\)/m);
  const known = JSON.parse(readFileSync(json, 'utf8'));
  expect(known.varianceEstimated).toBe(false);
  expect(known.summary.kCorrect).toBe(0);
  expect(known.summary.meanEstimatedK).toBeGreaterThan(12);
  r = await fedmixInProcess(...args, '--variance', '0');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/variance must be a finite number > 0/);
});

test('feddistr: a CSV with grouped subclasses and Fashion-MNIST, tables and the report as JSON', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedmix-cli-'));
  const json = join(dir, 'feddistr.json');
  const letter = fileURLToPath(new URL('../../shared/datasets/letter.csv', import.meta.url));
  const groups = Array.from({ length: 13 }, (_, k) => `${String.fromCharCode(65 + 2 * k)}+${String.fromCharCode(66 + 2 * k)}`).join(',');
  let r = fedmix('feddistr', '--data', letter, '--groups', groups, '--clients', '5', '--entanglement', '0.003', '--rounds', '4', '--curve', '2', '--base-k-range', '1..2', '--mlp-epochs', '10', '--seed', '3', '--json', json);
  expect(r.code).toBe(0);
  expect(r.err).not.toMatch(/feddistr \[/);
  expect(r.out).toMatch(/26 subclasses in 13 task classes; 5 clients at entanglement 0\.003/);
  for (const m of ['fedavg', 'fedprox', 'scaffold', 'central']) expect(r.out).toMatch(new RegExp(`^${m} `, 'm'));
  expect(r.out).toMatch(/^round\s+fedavg\s+fedprox\s+scaffold/m);
  const res = JSON.parse(readFileSync(json, 'utf8'));
  expect(res.data).toMatchObject({ source: 'csv', file: letter, subclass: 'label', groups: groups.split(',') });
  expect(res.config).toMatchObject({ clients: 5, entanglement: 0.003, kMin: 1, kMax: 2, encoder: 'identity', rounds: 4 });
  expect(res.runs[0].feddistr.rounds).toBe(1);
  expect(res.runs[0].baselines.map((b: { method: string }) => b.method)).toEqual(['fedavg', 'fedprox', 'scaffold', 'central']);
  expect(res.summary.baselines[0].curve).toHaveLength(4);
  // Fashion-MNIST: the default grouping, an Autoencoder on the public rows, FedAvg only, the generative model only
  r = fedmix('feddistr', '--fmnist-rows', '500', '--public-rows', '200', '--test-rows', '200', '--latent', '4', '--ae-epochs', '2', '--clients', '5', '--rounds', '2', '--baselines', 'fedavg', '--task', 'generative', '--covariance', 'diagonal', '--json', json);
  expect(r.code).toBe(0);
  const fm = JSON.parse(readFileSync(json, 'utf8'));
  expect(fm.data).toEqual({ source: 'fashion-mnist', groups: ['T-shirt/top+Shirt', 'Trouser+Dress', 'Pullover+Coat', 'Sandal+Sneaker', 'Bag+Ankle boot'] });
  expect(fm.dataset).toMatchObject({ clientRows: 500, testRows: 200, publicRows: 200, features: 784, latent: 4, subclasses: 10, tasks: 5 });
  expect(Object.keys(fm.runs[0].feddistr.accuracy)).toEqual(['generative']);
  expect(r.out).toMatch(/rounds to generative/);
  // mistakes
  r = await fedmixInProcess('feddistr', '--data', letter);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--superclass COLUMN or --groups/);
  r = await fedmixInProcess('feddistr', '--data', letter, '--groups', groups, '--baselines', 'fedavg,moon');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--baselines takes fedavg, fedprox, scaffold, central or none, got "moon"/);
  r = await fedmixInProcess('feddistr', '--groups', 'T-shirt/top+Hat');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/"Hat", not a Fashion-MNIST class/);
  r = await fedmixInProcess('feddistr', '--data', letter, '--groups', groups, '--noise', '1');
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/--noise \(epsilon\) and --clip go together/);
}, 120_000);

/** A free port for the embedded broker: the kernel picks one for a moment. */
function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

describe('server and client: a federation over the embedded broker, as a user runs it', () => {
  /** Runs a command in the background; resolves its exit code and output. */
  function start(...args: string[]) {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    return new Promise<{ code: number | null; out: string; err: string }>((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
  }

  test('fedmix server waits for its clients, runs the rounds and writes the model; fedmix client joins with its CSV', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-serve-'));
    const next = xorshift32(5);
    const u = () => (next() + 0.5) / 2 ** 32;
    for (let c = 0; c < 3; c++) {
      const rows = Array.from({ length: 60 + 30 * c }, (_, i) => [0.1 + 0.4 * (i % 3) + 0.05 * u(), 0.1 + 0.4 * (i % 3) + 0.05 * u(), i % 3].join(','));
      writeFileSync(join(dir, `c${c}.csv`), `x,y,label\n${rows.join('\n')}\n`);
    }
    writeFileSync(join(dir, 'clients.txt'), '# the clients that may join\nc0:pw0\nc1:pw1\n\nc2:pw2\n');
    const port = await freePort();
    const model = join(dir, 'model.json');
    const server = start('server', '--algorithm', 'dem', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--features', '2', '--components', '3', '--init', 'separated', '--round-timeout', '20', '--join-timeout', '30', '--out', model);
    const clients = [0, 1, 2].map((c) => start('client', '--algorithm', 'dem', '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--drop', 'label'));
    const s = await server;
    const cs = await Promise.all(clients);
    expect(s.code, s.err).toBe(0);
    expect(s.err).toMatch(/broker listening on mqtt:\/\/127\.0\.0\.1:\d+/);
    expect(s.err).toMatch(/round 1 \(dem\/model\): 3\/3 accepted/);
    expect(s.out).toMatch(/fedmix server: dem, \d+ rounds/);
    for (const c of cs) {
      expect(c.code, c.err).toBe(0);
      expect(c.out).toMatch(/answered dem\/model of round 1/);
      expect(c.out).toMatch(/the run ended well/);
    }
    // --out is the model artifact (issue 25): its model is the GaussianMixture's JSON
    const saved = JSON.parse(readFileSync(model, 'utf8'));
    expect(saved).toMatchObject({ kind: 'fedmix.model', version: 1, algorithm: 'dem', role: 'server' });
    const gm = saved.model;
    expect(gm).toMatchObject({ format: 'fedmix.GaussianMixture', nComponents: 3, nFeatures: 2 });
    // the three clusters are found: a mean near each of 0.125, 0.525, 0.925 in x
    const xs = [0, 1, 2].map((k) => gm.means[2 * k]).sort((a: number, b: number) => a - b);
    xs.forEach((x: number, k: number) => expect(Math.abs(x - (0.125 + 0.4 * k))).toBeLessThan(0.02));
  });

  test('fedmix server --algorithm fedavg trains a classifier whose clients give --label; the model JSON holds its parameters', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-fedavg-'));
    const next = xorshift32(9);
    const u = () => (next() + 0.5) / 2 ** 32;
    for (let c = 0; c < 3; c++) {
      const rows = Array.from({ length: 60 + 20 * c }, (_, i) => [0.2 + 0.3 * (i % 3) + 0.1 * u(), 0.8 - 0.3 * (i % 3) + 0.1 * u(), i % 3].join(','));
      writeFileSync(join(dir, `c${c}.csv`), `x,y,label\n${rows.join('\n')}\n`);
    }
    writeFileSync(join(dir, 'clients.txt'), 'c0:pw0\nc1:pw1\nc2:pw2\n');
    const port = await freePort();
    const model = join(dir, 'model.json');
    const server = start('server', '--algorithm', 'fedavg', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--layers', '2,8,3', '--loss', 'softmax-cross-entropy',
      '--rounds', '5', '--epochs', '2', '--batch-size', '16', '--optimizer', 'adam', '--learning-rate', '0.05', '--round-timeout', '20', '--join-timeout', '30', '--out', model);
    const clients = [0, 1, 2].map((c) => start('client', '--algorithm', 'fedavg', '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--label', 'label'));
    const s = await server;
    const cs = await Promise.all(clients);
    expect(s.code, s.err).toBe(0);
    expect(s.err).toMatch(/round 1 \(fedavg\/train\): 3\/3 accepted/);
    for (const c of cs) expect(c.code, c.err).toBe(0);
    const r = JSON.parse(readFileSync(model, 'utf8')).model;
    // 2 x 8 + 8 + 8 x 3 + 3 parameters, trained over five rounds: the clients' loss fell
    expect(r).toMatchObject({ algorithm: 'fedavg', rounds: 5, network: { sizes: [2, 8, 3], loss: 'softmax-cross-entropy', outputActivation: 'softmax' } });
    expect(r.parameters).toHaveLength(51);
    expect(r.history[4].loss).toBeLessThan(r.history[0].loss);
  });

  test('fedmix server --algorithm feddistr consolidates the base distributions its clients upload once; the JSON holds them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-feddistr-'));
    const next = xorshift32(5);
    const u = () => (next() + 0.5) / 2 ** 32;
    // four subclasses (two per task label); each client holds one of each task's two
    const centers = [[0.1, 0.1], [0.9, 0.1], [0.1, 0.9], [0.9, 0.9]];
    const held = [[0, 2], [0, 3], [1, 3]];
    for (let c = 0; c < 3; c++) {
      const rows = Array.from({ length: 80 }, (_, i) => {
        const s = held[c]![i % 2]!;
        return [centers[s]![0]! + 0.1 * u(), centers[s]![1]! + 0.1 * u(), s >> 1].join(',');
      });
      writeFileSync(join(dir, `c${c}.csv`), `x,y,task\n${rows.join('\n')}\n`);
    }
    writeFileSync(join(dir, 'clients.txt'), 'c0:pw0\nc1:pw1\nc2:pw2\n');
    const port = await freePort();
    const model = join(dir, 'model.json');
    const server = start('server', '--algorithm', 'feddistr', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--features', '2', '--k-range', '1..1', '--round-timeout', '20', '--join-timeout', '30', '--out', model);
    const clients = [0, 1, 2].map((c) => start('client', '--algorithm', 'feddistr', '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--label', 'task'));
    const s = await server;
    const cs = await Promise.all(clients);
    expect(s.code, s.err).toBe(0);
    expect(s.err).toMatch(/round 1 \(feddistr\/describe\): 3\/3 accepted/);
    for (const c of cs) expect(c.code, c.err).toBe(0);
    const r = JSON.parse(readFileSync(model, 'utf8')).model;
    expect(r.estimatedBaseDistributions).toBe(4);
    expect(r.uploaded).toBe(6);
    expect(r.bases.map((b: { count: number }) => b.count).sort()).toEqual([40, 40, 80, 80]);
  });

  test('a client the server excludes is a warning on stderr (even with --quiet), in the JSON, and exit status 3; a share outside [0, 1] is status 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-excluded-'));
    const next = xorshift32(11);
    const u = () => (next() + 0.5) / 2 ** 32;
    // c2's rows have a third feature the federation does not have: its replies are refused
    for (let c = 0; c < 3; c++) {
      const rows = Array.from({ length: 60 }, (_, i) => [0.1 + 0.4 * (i % 3) + 0.05 * u(), 0.1 + 0.4 * (i % 3) + 0.05 * u(), ...(c === 2 ? [u()] : [])].join(','));
      writeFileSync(join(dir, `c${c}.csv`), `${c === 2 ? 'x,y,z' : 'x,y'}\n${rows.join('\n')}\n`);
    }
    writeFileSync(join(dir, 'clients.txt'), 'c0:pw0\nc1:pw1\nc2:pw2\n');
    const federation = async (...extra: string[]) => {
      const port = await freePort();
      const server = start('server', '--algorithm', 'dem', '--clients', join(dir, 'clients.txt'), '--port', String(port), '--features', '2', '--components', '3', '--init', 'kfed', '--round-timeout', '20', '--join-timeout', '30', '--quiet', ...extra);
      const clients = [0, 1, 2].map((c) => start('client', '--algorithm', 'dem', '--broker', `mqtt://127.0.0.1:${port}`, '--id', `c${c}`, '--password', `pw${c}`, '--data', join(dir, `c${c}.csv`), '--quiet'));
      const s = await server;
      await Promise.all(clients);
      return s;
    };
    const json = join(dir, 'run.json');
    const s = await federation('--json', json, '--out', join(dir, 'model.json'));
    expect(s.code, s.err).toBe(3);
    expect(s.err).toMatch(/^fedmix server: warning: excluded round 1: c2: its rows have 3 features; this federation has 2$/m);
    expect(s.out).toMatch(/excluded:\n {2}c2: its rows have 3 features/);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    expect(r.excluded).toEqual([{ client: 'c2', round: 1, reason: 'c2: its rows have 3 features; this federation has 2' }]);
    expect(r.exclusions).toEqual(['round 1: c2: its rows have 3 features; this federation has 2']);
    // the model of the other two was written
    expect(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).model).toMatchObject({ nComponents: 3, nFeatures: 2 });
    // a share outside [0, 1]: refused before the broker starts (the share's failing run is the runtime's test)
    const bad = fedmix('server', '--algorithm', 'dem', '--clients', join(dir, 'clients.txt'), '--features', '2', '--components', '3', '--port', '0', '--max-excluded-share', '2');
    expect(bad.code).toBe(2);
    expect(bad.err).toBe('fedmix server: maxExcludedShare must be in [0, 1], got 2\n');
  });

  test('bad options and a wrong password exit with status 2 and say what to change', async () => {
    expect(fedmix('server', '--algorithm', 'dem').err).toMatch(/--clients is required/);
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-serve-'));
    writeFileSync(join(dir, 'clients.txt'), 'a\n');
    expect((await fedmixInProcess('server', '--algorithm', 'dem', '--clients', join(dir, 'clients.txt'))).err).toMatch(/"a" has no password; write id:password/);
    writeFileSync(join(dir, 'clients.txt'), 'a:pw\n');
    expect((await fedmixInProcess('server', '--algorithm', 'dem', '--clients', join(dir, 'clients.txt'), '--port', '0')).err).toMatch(/--features is required/);
    expect((await fedmixInProcess('server', '--algorithm', 'nope', '--clients', join(dir, 'clients.txt'))).err).toMatch(/--algorithm must be one of fedgengmm, dem, fedgem, mdm, fedavg, fedprox, scaffold, communities, feddistr/);
    const refused = fedmix('client', '--algorithm', 'mdm', '--broker', 'mqtt://127.0.0.1:1', '--id', 'a', '--password', 'x', '--counts', '1,2,3', '--wait', '0');
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/could not connect to the MQTT broker at mqtt:\/\/127\.0\.0\.1:1/);
    expect((await fedmixInProcess('client', '--algorithm', 'mdm', '--broker', 'mqtt://x', '--id', 'bad id', '--counts', '1')).err).toMatch(/client id must be 1 to 64 characters/);
  });
});

describe('communities: the community anomaly detection paper\'s evaluation', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedmix-communities-'));
  const csv = join(dir, 'patterns.csv');
  // three classes of 8 features in (0, 1): class c is high on the features j with j % 3 == c, low elsewhere (noise 0.05)
  const next = xorshift32(2024);
  const u = () => next() / 2 ** 32;
  const lines = ['f0,f1,f2,f3,f4,f5,f6,f7,kind'];
  for (let i = 0; i < 900; i++) {
    const c = i % 3;
    const row = Array.from({ length: 8 }, (_, j) => Math.min(1, Math.max(0, (j % 3 === c ? 0.8 : 0.2) + 0.05 * (u() + u() + u() - 1.5) * 2)));
    lines.push([...row.map((v) => v.toFixed(4)), ['a', 'b', 'c'][c]].join(','));
  }
  writeFileSync(csv, lines.join('\n') + '\n');
  const small = ['--data', csv, '--label', 'kind', '--p', '2,3', '--q', '0.08,0.2', '--rows-per-client', '50', '--test-rows-per-client', '40', '--detector', 'gmm', '--covariance', 'diag', '--rounds', '10', '--learning-rate', '0.01', '--seed', '1',
    // one local epoch per round without early stopping (the training before issue 23's defaults): weak alone at this size, which is what communities fix
    '--epochs', '1', '--early-stopping', 'none'];
  type Report = {
    config: { clientsPerClass: number[]; q: number[]; classes: string[] };
    summary: { p: number; q: number; local: { mean: number }; community: { mean: number; std: number }; ideal: { mean: number }; ari: { mean: number }; associationBytes: { mean: number } }[];
    runs: { p: number; clients: number; inlierClass: string[]; associations: { q: number; communities: string[][]; ari: number; bytesUp: number; bytesDown: number; seconds: number; membership: { classes: string[]; rows: { counts: number[] }[] }; community: { byClient: Record<string, number> } }[] }[];
    transport: string;
  };
  let inProcess: Report;

  test('a sweep over p and q: the tables on stdout, the same numbers in the JSON', () => {
    const json = join(dir, 'in-process.json');
    const r = fedmix('communities', ...small, '--json', json);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/communities \[/); // progress bars only on a terminal
    expect(r.err).not.toMatch(/warning/); // no rows leave a client with a GMM detector
    expect(r.out).toMatch(/^p\s+q\s+local\s+community\s+ideal\s+ARI/m);
    expect(r.out).toMatch(/Communities by inlier class\ngroup\s+members\s+Ia\s+Ib\s+Ic/);
    inProcess = JSON.parse(readFileSync(json, 'utf8')) as Report;
    expect(inProcess.transport).toBe('in-process');
    expect(inProcess.config.classes).toEqual(['a', 'b', 'c']);
    expect(inProcess.summary.map((s) => [s.p, s.q])).toEqual([[2, 0.08], [2, 0.2], [3, 0.08], [3, 0.2]]);
    for (const run of inProcess.runs) {
      expect(run.clients).toBe(3 * run.p);
      for (const a of run.associations) {
        // patterns this distinct: the communities are the ideal groups, one class each
        expect(a.ari).toBe(1);
        expect(a.communities).toHaveLength(3);
        for (const row of a.membership.rows) expect(row.counts.filter((n) => n > 0)).toHaveLength(1);
        // every client uploads one detector and is sent the others': bytes both ways, counted
        expect(a.bytesUp).toBeGreaterThan(0);
        expect(a.bytesDown).toBeGreaterThan(a.bytesUp);
        expect(a.seconds).toBeGreaterThan(0);
      }
    }
    for (const s of inProcess.summary) {
      // the communities are the ideal groups: the same training, the same AUC
      expect(s.community.mean).toBe(s.ideal.mean);
      // and clearly above each client alone (local: 0.78 and 0.88 for p = 2 and 3 at this size)
      expect(s.community.mean).toBeGreaterThan(0.95);
      expect(s.community.mean).toBeGreaterThan(s.local.mean + 0.05);
      expect(s.ari.mean).toBe(1);
    }
    // the text's summary row carries the JSON's numbers
    const first = inProcess.summary[0]!;
    expect(r.out).toMatch(new RegExp(`^2\\s+0\\.08\\s+${first.local.mean.toFixed(3)} ± \\d\\.\\d{3}\\s+${first.community.mean.toFixed(3)} ± ${first.community.std.toFixed(3)}`, 'm'));
  }, 60_000);

  test('over the embedded MQTT broker: every federation crosses it, with the in-process results', () => {
    expect(inProcess).toBeDefined();
    const json = join(dir, 'mqtt.json');
    const r = fedmix('communities', ...small, '--p', '2', '--broker', 'embedded', '--json', json);
    expect(r.code, r.err).toBe(0);
    const m = JSON.parse(readFileSync(json, 'utf8')) as Report;
    expect(m.transport).toBe('mqtt (embedded)');
    const mine = inProcess.runs.find((x) => x.p === 2)!;
    expect(m.runs).toHaveLength(1);
    m.runs[0]!.associations.forEach((a, k) => {
      const b = mine.associations[k]!;
      expect(a.communities).toEqual(b.communities);
      expect(a.community.byClient).toEqual(b.community.byClient);
      // the same messages in the same codec
      expect(a.bytesUp).toBe(b.bytesUp);
      expect(a.bytesDown).toBe(b.bytesDown);
    });
    expect(m.summary.map((s) => s.local)).toEqual(inProcess.summary.filter((s) => s.p === 2).map((s) => s.local));
  }, 60_000);

  test('an ocsvm detector warns on stderr that support vectors are client rows', () => {
    const r = fedmix('communities', ...small, '--p', '2', '--q', '0.1', '--detector', 'ocsvm');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/warning: an ocsvm detector carries support vectors, which are rows of its client's training data/);
  }, 60_000);

  test('bad usage exits with status 2, a missing file with 1', async () => {
    let first = true;
    const bad = async (args: string[], message: RegExp) => {
      // the first as a process, the others through the same main()
      const r = first ? fedmix('communities', ...args) : await fedmixInProcess('communities', ...args);
      first = false;
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
    };
    await bad(['--label', 'kind'], /--data fashion-mnist or --data FILE\.csv/);
    await bad(['--data', csv], /--label COLUMN is required with a CSV file/);
    await bad([...small, '--p', '2,x'], /--p takes an integer or a comma-separated list, got "2,x"/);
    await bad([...small, '--q', '0.08,1.5'], /q must be a number in \[0, 1\], got 1\.5/);
    await bad([...small, '--contamination', '0.6'], /contamination must be a number in \(0, 0\.5\)/);
    await bad([...small, '--classes', 'a,zebra'], /classes\[1\] is "zebra", which no training row has/);
    await bad([...small, '--noise-epsilon', '0.5'], /needs both --noise-epsilon and --noise-clip/);
    await bad([...small, '--detector', 'ocsvm', '--noise-epsilon', '0.5', '--noise-clip', '2'], /--noise-epsilon is for --detector gmm/);
    await bad([...small, '--broker', 'carrier-pigeon'], /--broker takes "embedded" or a URL/);
    await bad([...small, '--method', 'fastest'], /--method must be one of fast-greedy, louvain/);
    const missing = fedmix('communities', '--data', join(dir, 'nowhere.csv'), '--label', 'kind');
    expect(missing.code).toBe(1);
    // the default ocsvm detector's warning comes first; then the error, one line
    expect(missing.err).toMatch(/\nfedmix communities: .*nowhere\.csv: no such file or directory\n$/);
    expect(missing.err).not.toMatch(/ at /); // a message, not a stack
  });
});

describe('a conventional CLI: help, exit statuses, --json -, --quiet, progress on terminals only, CSV/Arrow/Parquet data, the HTML report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedmix-conv-'));
  const at = (f: string) => join(dir, f);
  const thyroidPath = fileURLToPath(new URL('../ts/data/datasets/anomaly_thyroid.csv', import.meta.url));
  const thyroid = readFileSync(thyroidPath, 'utf8');
  const run = ['--anomaly-label', 'label', '--components', '3', '--repeats', '1', '--clients', '5', '--partition', 'iid', '--methods', 'fedgengmm,dem-kfed,central'];
  /** The scores of an experiment's JSON, without its timings. */
  const scores = (json: string) =>
    (JSON.parse(json) as { results: { method: string; mean: Record<string, number> }[] }).results.map((r) => [r.method, r.mean.logLikelihood, r.mean.aucPr, r.mean.rocAuc, r.mean.bytesUp, r.mean.rounds]);

  test('every command answers --help, -h and help <command> with all of its options, status 0', async () => {
    const { commands, main, optionsOf } = await import('../ts/cli/main.js');
    /** main() in this process, its stdout captured: the other forms of asking for help, without a process each */
    const inProcess = async (args: string[]) => {
      const chunks: string[] = [];
      const write = process.stdout.write;
      process.stdout.write = ((chunk: string | Uint8Array) => (chunks.push(String(chunk)), true)) as typeof process.stdout.write;
      try {
        return { code: await main(args), out: chunks.join(''), err: '' };
      } finally {
        process.stdout.write = write;
      }
    };
    for (const [name, c] of Object.entries(commands)) {
      const words = name.split(' ');
      // the built binary once per command; the other forms through the same main()
      const forms: [string[], (args: string[]) => Promise<{ code: number | null; out: string; err: string }>][] = [
        [[...words, '--help'], async (args) => fedmix(...args)],
        [[...words, '-h'], inProcess],
        [['help', ...words], inProcess],
        [[...words, '--seed', '3', '--help'], inProcess],
      ];
      for (const [args, run] of forms) {
        const r = await run(args);
        expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
        expect(r.out).toMatch(new RegExp(`^usage: fedmix ${name} \\[options\\]`));
        for (const option of Object.keys(optionsOf(c))) expect(r.out, `${name} --${option}`).toContain(`--${option}`);
      }
    }
    // a group of commands lists them
    expect(fedmix('mdm', '--help').out).toMatch(/usage: fedmix mdm <fit\|simulate>/);
    expect(fedmix('help', 'frobnicate').code).toBe(2);
  }, 120_000);

  test('bad usage is status 2 with one line saying what to change', async () => {
    for (const [i, [args, message]] of ([
      [['demo', '--seed', '-1'], /--seed needs a value; a value starting with a dash is written --seed=-1/],
      [['demo', 'thyroid'], /unexpected argument "thyroid"/],
      [['demo', '--quiet=yes'], /--quiet takes no value/],
      [['demo', '--json'], /--json needs a value/],
      [['experiment', '--data', thyroidPath, '--delimiter', '"', '--components', '3'], /delimiter must be one or more characters other than a quote/],
    ] as const).entries()) {
      const r = i === 0 ? fedmix(...args) : await fedmixInProcess(...args);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
  });

  test('a missing or unreadable --data file is one line and status 1, for every command that reads one', async () => {
    const missing = at('nowhere.csv');
    for (const [i, args] of [
      ['experiment', '--data', missing, '--components', '3'],
      ['fedgem', '--data', missing],
      ['mdm', 'fit', '--data', missing, '--k', '2'],
      ['mdm', 'simulate', '--data', missing, '--method', 'fully-iid'],
      ['feddistr', '--data', missing, '--superclass', 's'],
      ['client', '--algorithm', 'dem', '--broker', 'mqtt://127.0.0.1:1', '--id', 'a', '--data', missing],
    ].entries()) {
      // the first and the client (a broker connection) as processes
      const r = i === 0 || args[0] === 'client' ? fedmix(...args) : await fedmixInProcess(...args);
      expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(1);
      expect(r.err).toMatch(new RegExp(`^fedmix ${args[0] === 'mdm' ? `mdm ${args[1]}` : args[0]}: .*nowhere\\.csv: no such file or directory\\n$`));
    }
    const folder = await fedmixInProcess('experiment', '--data', dir, '--components', '3');
    expect(folder.code).toBe(1);
    expect(folder.err).toMatch(/: a folder, not a file\n$/);
    // a --json file that cannot be written is the same kind of failure
    const unwritable = await fedmixInProcess('experiment', '--data', thyroidPath, ...run, '--json', join(dir, 'no', 'such', 'folder.json'));
    expect(unwritable.code).toBe(1);
    expect(unwritable.err).toMatch(/folder\.json: no such file or directory\n$/);
    // a file that is there but malformed is bad data: status 2, naming the file and the line
    writeFileSync(at('ragged.csv'), 'a,b,c\n1,2,3\n4,5\n');
    const ragged = await fedmixInProcess('experiment', '--data', at('ragged.csv'), '--components', '2');
    expect(ragged.code).toBe(2);
    expect(ragged.err).toMatch(/ragged\.csv: CSV line 3 has 2 fields but the header has 3/);
  });

  test('--json - writes the JSON alone to stdout and the table to stderr; --quiet leaves stderr empty', () => {
    const file = at('scores.json');
    const plain = fedmix('experiment', '--data', thyroidPath, ...run, '--json', file);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out).toMatch(/^fedgengmm /m);
    const piped = fedmix('experiment', '--data', thyroidPath, ...run, '--json', '-');
    expect(piped.code, piped.err).toBe(0);
    expect(scores(piped.out)).toEqual(scores(readFileSync(file, 'utf8')));
    expect(piped.err).toMatch(/^fedgengmm /m);
    expect(piped.err).toMatch(/^method +log-likelihood/m);
    const quiet = fedmix('experiment', '--data', thyroidPath, ...run, '--json', '-', '--quiet');
    expect(quiet.code).toBe(0);
    expect(quiet.err).toBe('');
    expect(scores(quiet.out)).toEqual(scores(piped.out));
    // an honest run excluded nobody, and says so
    expect(JSON.parse(quiet.out).exclusions).toEqual([]);
    // mdm fit prints its model on stdout and its summary on stderr; -q keeps only the results
    writeFileSync(at('h.csv'), 'a,b\n' + Array.from({ length: 40 }, (_, i) => `${1 + ((i * 7) % 11)},${(i * 5) % 13}`).join('\n') + '\n');
    const mdm = fedmix('mdm', 'fit', '--data', at('h.csv'), '--k', '2', '--rounds', '3', '-q');
    expect(mdm.code, mdm.err).toBe(0);
    expect(JSON.parse(mdm.out).tau).toHaveLength(2);
    expect(mdm.err).toBe('');
  });

  test('a run that excluded clients: each on stderr with its reason (even with --quiet), in the JSON, status 3; more than half excluded fails, status 2', () => {
    // 300 rows of three clusters dealt by Dir(0.5) to 12 clients of 6 to 13 training rows: a local K of 8 fails on those with fewer rows
    const next = xorshift32(7);
    const u = () => (next() + 0.5) / 2 ** 32;
    const rows = Array.from({ length: 300 }, (_, i) => [(0.3 * (i % 3) + 0.1 * u()).toFixed(4), (0.5 * (i % 3) + 0.1 * u()).toFixed(4), (0.2 + 0.1 * u()).toFixed(4), i % 3].join(','));
    writeFileSync(at('small.csv'), `a,b,c,label\n${rows.join('\n')}\n`);
    const args = (k: number) => ['experiment', '--data', at('small.csv'), '--label', 'label', '--clients', '12', '--partition', 'dirichlet', '--alpha', '0.5', '--components', '3', '--client-k-range', `${k}..${k}`, '--methods', 'fedgengmm', '--repeats', '1', '--quiet', '--json', '-'];
    const r = fedmix(...args(8));
    expect(r.code, r.err).toBe(3);
    const lines = r.err.trim().split('\n');
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line).toMatch(/^fedmix experiment: warning: excluded fedgengmm, repeat 0, round 1: \d+: local training failed: X has [67] rows but nComponents = 8/);
    const json = JSON.parse(r.out);
    expect(json.exclusions).toEqual(lines.map((l) => l.replace('fedmix experiment: warning: excluded ', '')));
    expect(json.results[0].excluded).toHaveLength(4);
    const over = fedmix(...args(10));
    expect(over.code).toBe(2);
    expect(over.err).toMatch(/^fedmix experiment: round 1: 10 of the run's 12 clients are excluded, more than maxExcludedShare \(0\.5\) allows: 0: local training failed: X has 7 rows but nComponents = 10/);
    expect(over.out).toBe('');
  });

  test('progress bars only when stderr is a terminal, and not with --quiet', () => {
    // util-linux script(1) runs the command on a pseudo-terminal
    const onTerminal = (...args: string[]) => spawnSync('script', ['-qec', [process.execPath, cli, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], { encoding: 'utf8' });
    const tty = onTerminal('demo', '--repeats', '1', '--methods', 'fedgengmm,central');
    expect(tty.status, tty.stderr).toBe(0);
    expect(tty.stdout).toMatch(/\r\x1b\[2Kdemo \[#+\] 2\/2/);
    const quiet = onTerminal('demo', '--repeats', '1', '--methods', 'fedgengmm,central', '--quiet');
    expect(quiet.stdout).toMatch(/^fedgengmm /m);
    expect(quiet.stdout).not.toMatch(/demo \[/);
    const piped = fedmix('demo', '--repeats', '1', '--methods', 'fedgengmm,central');
    expect(piped.code).toBe(0);
    expect(piped.err).toBe('');
  }, 60_000);

  test('--data reads CSV with any --delimiter, Arrow IPC (file and stream) and Parquet to the same numbers', async () => {
    const { parseCsv } = await import('../ts/data/csv.js');
    const arrow = await import('apache-arrow');
    const pq = await import('parquet-wasm');
    const csv = parseCsv(thyroid);
    const columns = Object.fromEntries(csv.names.map((n, j) => [n, n === 'label' ? Int32Array.from(csv.columns[j]!, Number) : Float64Array.from(csv.columns[j]!, Number)]));
    const table = arrow.tableFromArrays(columns);
    writeFileSync(at('thyroid.arrow'), arrow.tableToIPC(table, 'file'));
    writeFileSync(at('thyroid.arrows'), arrow.tableToIPC(table, 'stream'));
    writeFileSync(at('thyroid.parquet'), pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'))));
    writeFileSync(at('thyroid.tsv'), thyroid.replace(/,/g, '\t'));
    writeFileSync(at('thyroid-semicolon.txt'), thyroid.replace(/,/g, ';'));
    const scoresOf = (file: string, ...extra: string[]) => {
      const r = fedmix('experiment', '--data', file, ...run, '--json', '-', ...extra);
      expect(r.code, `${file}: ${r.err}`).toBe(0);
      return scores(r.out);
    };
    const reference = scoresOf(thyroidPath);
    expect(reference.map((r) => r[0])).toEqual(['fedgengmm', 'dem-kfed', 'central']);
    expect(scoresOf(at('thyroid.tsv'), '--delimiter', 'tab')).toEqual(reference);
    expect(scoresOf(at('thyroid-semicolon.txt'), '--delimiter', ';')).toEqual(reference);
    expect(scoresOf(at('thyroid.arrow'))).toEqual(reference);
    expect(scoresOf(at('thyroid.arrows'))).toEqual(reference);
    expect(scoresOf(at('thyroid.parquet'))).toEqual(reference);
    // the wrong delimiter reads one column of text: said, not guessed
    const wrong = fedmix('experiment', '--data', at('thyroid.tsv'), ...run);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/has no column "label"; its columns are x0\tx1/);
    // a null in an Arrow column is an error naming it
    writeFileSync(at('nulls.arrow'), arrow.tableToIPC(arrow.tableFromArrays({ x0: [1, null, 3, 4], x1: [1, 2, 3, 4], label: [0, 0, 1, 0] }), 'file'));
    const nulls = fedmix('experiment', '--data', at('nulls.arrow'), ...run);
    expect(nulls.code).toBe(2);
    expect(nulls.err).toMatch(/column "x0".*null/);
    // other commands read the same files: fedgem's clusters from a Parquet file
    const blobs = fedmix('fedgem', '--data', at('thyroid.parquet'), '--label', 'label', '--clients', '2', '--clusters-per-client', '1..2', '--rounds', '2', '--central', 'none', '--json', '-', '-q');
    expect(blobs.code, blobs.err).toBe(0);
    expect(JSON.parse(blobs.out).data.features).toEqual(['x0', 'x1', 'x2', 'x3', 'x4', 'x5']);
  }, 120_000);

  test('parquet-wasm is imported only when a Parquet file is read', () => {
    const code = readFileSync(cli, 'utf8');
    expect(code).toMatch(/await import\("parquet-wasm"\)/);
    expect(code).not.toMatch(/require\("parquet-wasm"\)|parquet_wasm_bg/);
  });

  test('the CLI streams CSV files: chunk boundaries inside quoted fields, CRLF, a BOM and delimiters read as parseCsv reads the text', async () => {
    const { readCsvFile } = await import('../ts/cli/data.js');
    const { parseCsv } = await import('../ts/data/csv.js');
    const next = xorshift32(99);
    const cell = () => {
      const v = next() % 5;
      return v === 0 ? `"a, ""quoted""\nvalue ${next() % 1000}"` : v === 1 ? `"x;y"` : String((next() % 100000) / 7);
    };
    // about 1.5 MB: many of the stream's 64 kB chunks
    const rows = Array.from({ length: 30_000 }, () => [cell(), cell(), cell()].join(';'));
    const text = '\ufeffa;b;c\r\n' + rows.join('\r\n') + '\r\n';
    writeFileSync(at('big.csv'), text);
    const streamed = await readCsvFile(at('big.csv'), ';');
    expect(streamed.nRows).toBe(30_000);
    expect(streamed.names).toEqual(['a', 'b', 'c']);
    // the streamed table holds numbers, not text: its cells read back as text are parseCsv's (these numbers print in their shortest form)
    const columns = streamed.names.map((_, j) => streamed.texts(j));
    expect({ names: streamed.names, columns, nRows: streamed.nRows }).toEqual(parseCsv(text, { delimiter: ';' }));
    expect(columns.flat().some((c) => c.includes('\n'))).toBe(true);
    // the library's parseCsv takes the same delimiters, and refuses a quote or a line end as one (a typed error)
    const { InvalidDataError, InvalidParameterError } = await import('../ts/errors.js');
    expect(parseCsv('a\tb\n1\t"2\t3"\n', { delimiter: 'tab' })).toEqual({ names: ['a', 'b'], columns: [['1'], ['2\t3']], nRows: 1 });
    expect(() => parseCsv('a,b\n', { delimiter: '"' })).toThrow(InvalidParameterError);
    expect(() => parseCsv('a,b\n1,"2\n', {})).toThrow(new InvalidDataError('the CSV ends inside a quoted field'));
  });

  test('experiment --report writes one self-contained HTML file whose plots render offline', async () => {
    const report = at('report.html');
    const r = fedmix('experiment', '--data', thyroidPath, ...run, '--repeats', '2', '--report', report, '--json', '-', '-q');
    expect(r.code, r.err).toBe(0);
    const html = readFileSync(report, 'utf8');
    // nothing loaded from elsewhere: no src or href attributes, the plots drawn into the page as SVG
    expect(html).not.toMatch(/\s(src|href)=/i);
    expect(html.match(/<svg /g)).toHaveLength(4);
    const embedded = JSON.parse(/<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html)![1]!);
    const json = JSON.parse(r.out);
    expect(embedded.methods).toEqual(['fedgengmm', 'dem-kfed', 'central']);
    expect(embedded.logLikelihood.mean).toEqual(json.results.map((x: { mean: { logLikelihood: number } }) => x.mean.logLikelihood));
    expect(embedded.aucPr.runs[0]).toHaveLength(2);
    expect(embedded.traffic.map((t: { method: string }) => t.method)).toEqual(['fedgengmm', 'dem-kfed']);
    // distributed EM's curve, one value per round of each repeat
    const dem = json.results.find((x: { method: string }) => x.method === 'dem-kfed');
    expect(embedded.curves).toEqual([{ method: 'dem-kfed', runs: dem.curves }]);
    expect(dem.curves).toHaveLength(2);
    for (const curve of dem.curves as number[][]) {
      expect(curve.length).toBeGreaterThan(2);
      expect(curve[curve.length - 1]).toBeGreaterThan(curve[0]!); // EM climbs
    }
    expect(html).toContain('dem-kfed'); // the table too
    const { launchChromium, watchProblems } = await import('./support/browser.js');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      const requests: string[] = [];
      watchProblems(page, problems);
      page.on('request', (q) => requests.push(q.url()));
      await page.goto(`file://${report}`);
      await page.waitForSelector('.plot svg', { timeout: 10_000 });
      expect(await page.locator('.plot svg').count()).toBe(4);
      expect(problems).toEqual([]);
      expect(requests).toEqual([`file://${report}`]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
