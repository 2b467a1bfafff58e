/**
 * Issue 13, items 6 and 7: the paper's evaluation as one sweep
 * (runCommunityExperiment: p list x q list x repeats, everything the tables
 * need, association bytes and time), the local baseline's early stopping, and
 * the optional Gaussian noise on a GMM detector's shared parameters. On small
 * synthetic data in (0, 1), so the file runs in seconds.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { associate, init, InvalidParameterError, LocalDetector, Matrix } from '../ts/index.js';
import { runCommunityExperiment, trainCommunities, type CommunityClient } from '../ts/experiments/index.js';
import { gaussianSigma } from '../ts/privacy/gaussian-noise.js';
import { blobs, xorshift32 } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** n rows of 6 features in (0, 1) per class: class c is high on features j with j % 3 == c; labels 0, 1, 2 in turn. */
function patterns(n: number, seed: number): { X: Matrix; labels: number[] } {
  const next = xorshift32(seed);
  const u = () => next() / 2 ** 32;
  const rows: number[][] = [];
  const labels: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % 3;
    rows.push(Array.from({ length: 6 }, (_, j) => Math.min(1, Math.max(0, (j % 3 === c ? 0.8 : 0.2) + 0.1 * (u() - 0.5)))));
    labels.push(c);
  }
  return { X: Matrix.fromRows(rows), labels };
}

describe('runCommunityExperiment', () => {
  const train = patterns(600, 1);
  const test_ = patterns(300, 2);
  const data = { train: { X: train.X, labels: train.labels }, test: { X: test_.X, labels: test_.labels } };
  const config = {
    clientsPerClass: [2, 3],
    q: [0.08, 0.5],
    detector: 'gmm' as const,
    detectorOptions: { gmm: { covarianceType: 'diag' as const } },
    training: { rounds: 10, learningRate: 0.01 },
    rowsPerClient: 40,
    testRowsPerClient: 30,
    repeats: 2,
    seed: 3,
  };

  test('p x q x repeats: every run, the tables and the pooled summary', () => {
    const steps: string[] = [];
    const r = runCommunityExperiment(data, { ...config, onProgress: (done, total, what) => steps.push(`${done}/${total} ${what}`) });
    // per p and repeat: 2 associations, local, ideal, 2 community trainings
    expect(steps).toHaveLength(2 * 2 * 6);
    expect(steps.at(-1)).toMatch(/^24\/24 p = 3, repeat 2: communities, q = 0\.5$/);
    expect(r.runs.map((x) => [x.p, x.repeat, x.seed])).toEqual([[2, 0, 3], [2, 1, 4], [3, 0, 3], [3, 1, 4]]);
    expect(r.config).toMatchObject({ clientsPerClass: [2, 3], q: [0.08, 0.5], classes: [0, 1, 2], detector: 'gmm', federated: 'autoencoder', partners: 'all', method: 'fast-greedy' });
    for (const run of r.runs) {
      expect(run.clients).toBe(3 * run.p);
      expect(run.rowsPerClient).toBe(40);
      expect(run.associations.map((a) => a.q)).toEqual([0.08, 0.5]);
      const a = run.associations[0]!;
      // all pairs: n (n - 1) decisions
      expect(a.tests).toBe(run.clients * (run.clients - 1));
      expect(a.rounds).toBe(2);
      expect(a.bytesDown).toBeGreaterThan(a.bytesUp);
      // q = 0.08 finds the ideal groups on patterns this distinct; their training is the ideal run's
      expect(a.ari).toBe(1);
      expect(a.communities).toEqual(run.ideal);
      expect(a.community.byClient).toEqual(run.idealRun.byClient);
      expect(a.membership.rows.map((m) => m.counts)).toEqual([[run.p, 0, 0], [0, run.p, 0], [0, 0, run.p]]);
      expect(a.merged).toEqual([]);
    }
    // the summary pools every client of every repeat
    const row = r.summary.find((s) => s.p === 3 && s.q === 0.08)!;
    const values = r.runs.filter((x) => x.p === 3).flatMap((x) => Object.values(x.local.byClient));
    expect(values).toHaveLength(18);
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    expect(row.local.mean).toBeCloseTo(mean, 12);
    expect(row.local.std).toBeCloseTo(Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length), 12);
    expect(row.ari).toEqual({ mean: 1, std: 0 });
    // patterns this distinct are easy for a client alone too: the community is as good, not worse
    expect(row.community.mean).toBeGreaterThanOrEqual(row.local.mean);
    expect(row.community.mean).toBeGreaterThan(0.95);
    expect(r.summary.map((s) => [s.p, s.q])).toEqual([[2, 0.08], [2, 0.5], [3, 0.08], [3, 0.5]]);
  }, 60_000);

  test('a loose q merges classes: the merged community is broken down by class (Tables V/VI)', () => {
    const r = runCommunityExperiment(data, { ...config, clientsPerClass: 2, q: 1, repeats: 1 });
    const a = r.runs[0]!.associations[0]!;
    // q = 1 accepts every partner: one community of everyone
    expect(a.communities).toHaveLength(1);
    expect(a.ari).toBe(0);
    expect(a.merged.map((m) => [m.group, m.inlierClass, m.clients])).toEqual([[0, 0, 2], [0, 1, 2], [0, 2, 2]]);
    for (const m of a.merged) expect(Object.keys(m.auc)).toEqual(['local', 'community', 'ideal']);
  }, 60_000);

  test('bad input: typed errors before any federation', () => {
    const bad = (c: object, hint: RegExp) => expect(() => runCommunityExperiment(data, { ...config, ...c })).toThrow(hint);
    bad({ q: [0.08, 2] }, /q must be a number in \[0, 1\]/);
    bad({ clientsPerClass: [] }, /clientsPerClass must hold at least one value/);
    bad({ classes: [0] }, /at least 2 classes/);
    bad({ classes: [0, 9] }, /classes\[1\] is 9, which no training row has/);
    bad({ contamination: 0.5 }, /contamination must be a number in \(0, 0\.5\)/);
    bad({ training: { seed: 1 } }, /training\.seed is set by the experiment/);
    expect(() => runCommunityExperiment({ train: data.train, test: { X: Matrix.zeros(3, 2), labels: [0, 1, 2] } }, config)).toThrow(/the test rows have 2 features, the training rows 6/);
    expect(() => runCommunityExperiment(data, { ...config, detector: 'svm' as never })).toThrow(InvalidParameterError);
  });
});

describe('a client alone: early stopping (earlyStopping, localEpochs)', () => {
  const { X } = patterns(120, 5);
  const clients: CommunityClient[] = [{ id: 'a', X, test: { X: X.selectRows([0, 1, 2, 3, 4, 5]), outlier: [0, 0, 0, 1, 1, 1] } }];
  const train = (o: object) => trainCommunities(clients, 'local', { hiddenLayers: [4], learningRate: 0.01, seed: 2, ...o });
  const params = (o: object) => train(o).training[0]!.parameters!;
  const heldOut = (patience: number) => ({ monitor: 'validation-loss' as const, patience });

  test('without early stopping it is one run of localEpochs epochs: rounds x epochs by default, bit for bit', () => {
    expect(params({ localEpochs: 6, earlyStopping: 'none' })).toEqual(params({ rounds: 3, epochs: 2, earlyStopping: 'none' }));
    expect(train({ rounds: 3, epochs: 2, earlyStopping: 'none' }).training[0]!.epochs).toBe(6);
  });

  test('it stops once the held-out error stops improving: more allowed epochs change nothing after that', () => {
    const stopped = train({ localEpochs: 400, earlyStopping: heldOut(1) });
    expect(params({ localEpochs: 401, earlyStopping: heldOut(1) })).toEqual(stopped.training[0]!.parameters!);
    // the epochs it ran are in the result, fewer than allowed
    expect(stopped.training[0]!.epochs).toBeLessThan(400);
    expect(stopped.epochs!.mean).toBe(stopped.training[0]!.epochs);
    // and it did train on its 90%: not the run on all rows
    expect(stopped.training[0]!.parameters!).not.toEqual(params({ localEpochs: stopped.training[0]!.epochs!, earlyStopping: 'none' }));
    expect(() => params({ localEpochs: 5, earlyStopping: { monitor: 'validation-loss', validationShare: 0.5 } })).toThrow(/validationShare must be a number in \(0, 0\.5\)/);
    expect(() => params({ earlyStopping: { monitor: 'validation-loss', contamination: 0.1 } })).toThrow(InvalidParameterError);
    expect(() => params({ earlyStopping: { monitor: 'loss' } })).toThrow(InvalidParameterError);
  });

  test('by default it stops on the separation of its errors at contamination 0.1, at most rounds x epochs epochs', () => {
    const r = train({});
    expect(r.training[0]!.epochs).toBeGreaterThan(0);
    expect(r.training[0]!.epochs).toBeLessThanOrEqual(10 * 10);
    expect(params({})).toEqual(params({ earlyStopping: { monitor: 'separation', contamination: 0.1, patience: 3 }, localEpochs: 100 }));
    // it stopped before the cap and kept an earlier epoch than the last it ran
    expect(r.training[0]!.epochs).toBeLessThan(100);
    expect(params({})).not.toEqual(params({ earlyStopping: 'none', localEpochs: r.training[0]!.epochs! }));
  });
});

describe('Gaussian noise on a GMM detector', () => {
  const X = blobs(2000, 2, 2, 7, 3);
  const noise = { clip: 20, epsilon: 1, delta: 1e-5 };

  test('the noise is the calibrated Gaussian mechanism: its spread matches sigma, its center the exact fit', () => {
    // one diagonal component, rows inside the clip (no clipping): the exact fit is the sample mean
    let maxNorm = 0;
    const mean = [0, 1].map((j) => X.column(j).reduce((s, v) => s + v, 0) / X.nRows);
    for (let i = 0; i < X.nRows; i++) maxNorm = Math.max(maxNorm, Math.hypot(X.get(i, 0), X.get(i, 1)));
    expect(maxNorm).toBeLessThan(noise.clip);
    const sigma = gaussianSigma((2 * noise.clip) / X.nRows, noise.epsilon / 2, noise.delta / 2);
    const offsets: number[] = [];
    for (let s = 0; s < 150; s++) {
      const det = new LocalDetector({ kind: 'gmm', gmm: { covarianceType: 'diag' }, noise, noiseSeed: s }).fit(X);
      const j = det.toJSON().gmm!;
      offsets.push(j.means[0]! - mean[0]!, j.means[1]! - mean[1]!);
      expect(j.weights).toEqual([1]);
      for (const v of Array.from(j.covariances)) expect(v).toBeGreaterThan(0);
      det.dispose();
    }
    const m = offsets.reduce((t, v) => t + v, 0) / offsets.length;
    const sd = Math.sqrt(offsets.reduce((t, v) => t + (v - m) ** 2, 0) / offsets.length);
    // 300 draws: the spread within 15% of sigma, the center within 4 standard errors
    expect(sd / sigma).toBeGreaterThan(0.85);
    expect(sd / sigma).toBeLessThan(1.15);
    expect(Math.abs(m)).toBeLessThan((4 * sigma) / Math.sqrt(offsets.length));
  });

  test('a noisy mixture stays valid (weights sum to 1, covariances positive definite) and is thresholded on its own scores', () => {
    const strong = { clip: 5, epsilon: 0.5, delta: 1e-5 };
    for (const covarianceType of ['full', 'diag'] as const) {
      const det = new LocalDetector({ kind: 'gmm', contamination: 0.1, gmm: { nComponents: 2, covarianceType, seed: 1 }, noise: strong, noiseSeed: 4 }).fit(X.selectRows(Array.from({ length: 200 }, (_, i) => i)));
      const j = det.toJSON();
      const w = Array.from(j.gmm!.weights);
      expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      for (const v of w) expect(v).toBeGreaterThan(0);
      // what travels loads, and reads as the same detector
      const back = LocalDetector.fromJSON(JSON.parse(JSON.stringify(j)));
      expect(back.scoreSamples(X)).toEqual(det.scoreSamples(X));
      // the threshold is the noisy model's own contamination quantile
      expect(det.inlierShare(X.selectRows(Array.from({ length: 200 }, (_, i) => i)))).toBeCloseTo(0.9, 2);
      back.dispose();
      det.dispose();
    }
  });

  test('noise is fresh unless a seed is given; the seed reproduces it', () => {
    const fit = (noiseSeed?: number) => {
      const det = new LocalDetector({ kind: 'gmm', noise, noiseSeed }).fit(X);
      const means = Array.from(det.toJSON().gmm!.means);
      det.dispose();
      return means;
    };
    expect(fit(9)).toEqual(fit(9));
    expect(fit(9)).not.toEqual(fit(10));
    expect(fit()).not.toEqual(fit());
  });

  test('associate passes the noise to every client, each its own seed', () => {
    const parts = [0, 1, 2, 3].map((k) => X.selectRows(Array.from({ length: 200 }, (_, i) => k * 200 + i)));
    const run = (noiseSeed: number) => associate(parts, { detector: { kind: 'gmm', noise }, noiseSeed, q: 0.1 });
    const a = run(1);
    expect(a.excluded).toEqual([]);
    expect(a.nodes).toHaveLength(4);
    expect(run(1).decisions).toEqual(a.decisions);
  });

  test('bad noise options: typed errors naming the problem', () => {
    expect(() => new LocalDetector({ kind: 'ocsvm', noise })).toThrow(/noise is for the 'gmm' detector/);
    expect(() => new LocalDetector({ kind: 'gmm', gmm: { covarianceType: 'tied' }, noise })).toThrow(/noise needs 'full' or 'diag' covariances/);
    expect(() => new LocalDetector({ kind: 'gmm', noise: { ...noise, epsilon: 2 } })).toThrow(/epsilon <= 1/);
    expect(() => new LocalDetector({ kind: 'gmm', noise: { ...noise, clip: -1 } })).toThrow(InvalidParameterError);
    expect(() => new LocalDetector({ kind: 'gmm', noise: { ...noise, delta: 1 } })).toThrow(/delta is 1; it must be below 1/);
  });
});

describe('the relay in messages of at most maxRelayBytes', () => {
  // six clients in two clouds; a full-covariance 2-d GMM detector is 7 values in 3 arrays (~912 bytes by the
  // server's estimate, which counts a schema field per array)
  const parts = [0, 1, 2, 3, 4, 5].map((k) => {
    const x = blobs(60, 2, 1, 20 + k, 0);
    if (k >= 3) for (let i = 0; i < x.data.length; i++) x.data[i] = x.data[i]! + 8;
    return x;
  });
  const run = (maxRelayBytes?: number) => associate(parts, { detector: { kind: 'gmm' }, q: 0.1, maxRelayBytes });

  test('a small budget spreads each client\'s five partners over rounds, with the one-message association', () => {
    const whole = run();
    const chunked = run(2000); // two detectors per message
    expect(whole.federation.traffic.rounds).toBe(2);
    // fit, then 2 + 2 + 1 partners
    expect(chunked.federation.traffic.rounds).toBe(4);
    expect(chunked.federation.history.slice(1).map((r) => r.asked)).toEqual([6, 6, 6]);
    expect(chunked.decisions).toEqual(whole.decisions);
    expect(chunked.edges).toEqual(whole.edges);
    expect(chunked.communities).toEqual(whole.communities);
    expect(chunked.communities).toEqual([['0', '1', '2'], ['3', '4', '5']]);
    // a budget below one detector still sends one per message
    expect(run(1).federation.traffic.rounds).toBe(6);
    expect(() => run(0)).toThrow(/maxRelayBytes/);
  });
});
