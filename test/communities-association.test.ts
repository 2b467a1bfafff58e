/**
 * Community association (issue 13 items 2, 3, 5, 11): local detectors
 * thresholded at their contamination quantile, the two-round association on
 * the runtime (mutual links, communities), the paper's partition, and bad
 * input. The Fashion-MNIST case is small (3 classes x 3 clients x 150 rows,
 * 10 principal components, a one-component full-covariance GMM detector) so
 * the file runs in seconds.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import {
  adjustedRandScore,
  associate,
  CommunitiesClient,
  CommunitiesServer,
  communities,
  init,
  InProcessTransport,
  InvalidDataError,
  InvalidMessageError,
  InvalidParameterError,
  LocalDetector,
  Matrix,
  partition,
  PCA,
  runFederationSync,
  type ClientRole,
  type Message,
} from '../ts/index.js';
import { loadFashionMnist } from '../ts/node.js';
import { DECISIONS, DETECTOR, FIT, RELAY, type DetectorPayload, type RelayPayload } from '../ts/federated/communities/messages.js';
import { wasm } from '../ts/wasm/loader.js';
import { blobs, editPayload, Recording } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** The Fashion-MNIST federation: 3 classes, p = 3 clients each, d = 0.1, 150 rows per client, 10 principal components. */
const CLASSES = [1, 7, 8]; // trouser, sneaker, bag
async function fashionClients(seed: number) {
  const train = await loadFashionMnist({ split: 'train', n: 6000, sample: 'stratified', seed });
  const test = await loadFashionMnist({ split: 'test', n: 1500, sample: 'stratified', seed });
  const keep = (labels: Int32Array) => [...labels.keys()].filter((i) => CLASSES.includes(labels[i]!));
  const tr = keep(train.labels);
  const te = keep(test.labels);
  // the projection is learned from the public test split, never from a client's rows
  const pca = new PCA({ nComponents: 10 }).fit(test.X.selectRows(te));
  const X = pca.transform(train.X.selectRows(tr));
  const labels = Int32Array.from(tr, (i) => train.labels[i]!);
  const p = partition.contaminated(labels, { clientsPerClass: 3, contamination: 0.1, rowsPerClient: 150, seed });
  return { parts: p.indices.map((rows) => X.selectRows(rows)), p };
}

/** How often two clients of one ideal group share a community (pairs within groups). */
function togetherShare(group: Int32Array, membership: Map<string, number>): number {
  let same = 0;
  let pairs = 0;
  for (let a = 0; a < group.length; a++) {
    for (let b = a + 1; b < group.length; b++) {
      if (group[a] !== group[b]) continue;
      pairs++;
      if (membership.get(String(a)) === membership.get(String(b))) same++;
    }
  }
  return same / pairs;
}

/** n rows of a 2-d Gaussian cloud centred at (shift, shift). */
function cloud(n: number, seed: number, shift: number): Matrix {
  const x = blobs(n, 2, 1, seed, 0);
  for (let i = 0; i < x.data.length; i++) x.data[i] = x.data[i]! + shift;
  return x;
}

describe('LocalDetector', () => {
  const X = () => cloud(200, 3, 0);

  test('the threshold is the contamination quantile of its own training scores (numpy percentile, linear)', () => {
    for (const kind of ['gmm', 'ocsvm', 'autoencoder'] as const) {
      const det = new LocalDetector({ kind, contamination: 0.1, autoencoder: { hiddenLayers: [4, 2, 4], outputActivation: 'identity', epochs: 3, seed: 1 } }).fit(X());
      const s = Float64Array.from(det.scoreSamples(X())).sort();
      const pos = (s.length - 1) * 0.9;
      const expected = s[Math.floor(pos)]! + (s[Math.ceil(pos)]! - s[Math.floor(pos)]!) * (pos - Math.floor(pos));
      expect(det.threshold).toBeCloseTo(expected, 12);
      const pred = det.predict(X());
      const scores = det.scoreSamples(X());
      pred.forEach((v, i) => expect(v).toBe(scores[i]! > det.threshold ? -1 : 1));
      expect(Math.abs(det.inlierShare(X()) - 0.9)).toBeLessThanOrEqual(1 / 200);
      // in_ii from the fit's own scores: the same number as scoring the rows again
      expect(det.trainingInlierShare).toBe(det.inlierShare(X()));
      const loaded = LocalDetector.fromJSON(det.toJSON());
      expect(loaded.trainingInlierShare).toBeNaN();
      loaded.dispose();
      det.dispose();
    }
  });

  test('toJSON / fromJSON: the same scores and threshold; a GMM shares only mixture parameters, an OCSVM carries training rows', () => {
    const heap = wasm().fm_heap_in_use();
    for (const kind of ['gmm', 'ocsvm', 'autoencoder'] as const) {
      const det = new LocalDetector({ kind, contamination: 0.2, autoencoder: { hiddenLayers: [3], outputActivation: 'identity', epochs: 2, seed: 2 } }).fit(X());
      const json = JSON.parse(JSON.stringify(det.toJSON()));
      expect(Object.keys(json).filter((k) => ['ocsvm', 'gmm', 'autoencoder'].includes(k))).toEqual([kind]);
      const back = LocalDetector.fromJSON(json);
      expect(back.threshold).toBe(det.threshold);
      const a = det.scoreSamples(X());
      const b = back.scoreSamples(X());
      a.forEach((v, i) => expect(b[i]).toBeCloseTo(v, kind === 'autoencoder' ? 5 : 9));
      if (kind === 'gmm') expect(Object.keys(json.gmm).sort()).toEqual(['covarianceType', 'covariances', 'means', 'weights']);
      if (kind === 'ocsvm') {
        // the first support vector is one of the client's rows, verbatim
        const rows = X().toRows();
        const sv = json.ocsvm.supportVectors.slice(0, 2);
        expect(rows.some((r: number[]) => r[0] === sv[0] && r[1] === sv[1])).toBe(true);
      }
      det.dispose();
      back.dispose();
    }
    expect(wasm().fm_heap_in_use()).toBe(heap);
  });

  test('contamination outside (0, 0.5), too few rows, a bad JSON: typed errors', () => {
    for (const c of [0, 0.5, 0.7, -0.1, NaN]) expect(() => new LocalDetector({ contamination: c })).toThrow(InvalidParameterError);
    expect(() => new LocalDetector({ kind: 'gmm', gmm: { nComponents: 3 } }).fit(cloud(2, 1, 0))).toThrow(InvalidDataError);
    const det = new LocalDetector({ kind: 'gmm' }).fit(X());
    const json = det.toJSON();
    det.dispose();
    expect(() => LocalDetector.fromJSON({ ...json, nFeatures: 3 })).toThrow(InvalidParameterError);
    expect(() => LocalDetector.fromJSON({ ...json, threshold: NaN })).toThrow(InvalidParameterError);
    expect(() => LocalDetector.fromJSON({ ...json, gmm: { ...json.gmm!, means: [NaN, 0] } })).toThrow(InvalidParameterError);
  });
});

describe('partition.contaminated', () => {
  // 4 classes of 300, 250, 280, 260 rows
  const sizes = [300, 250, 280, 260];
  const labels = sizes.flatMap((n, k) => new Array<number>(n).fill(k * 10));
  const testLabels = sizes.flatMap((n, k) => new Array<number>(Math.floor(n / 3)).fill(k * 10));

  test('inlier share 1 - d, one circulating outlier class, every row at most once, balanced, seeded', () => {
    const p = partition.contaminated(labels, { clientsPerClass: 3, contamination: 0.1, testLabels, seed: 4 });
    expect(p.indices.length).toBe(12);
    const m = p.indices[0]!.length;
    const used = new Set<number>();
    p.indices.forEach((rows, c) => {
      expect(rows.length).toBe(m);
      for (const i of rows) {
        expect(used.has(i)).toBe(false);
        used.add(i);
      }
      const inl = rows.filter((i) => labels[i] === p.inlierClass[c]).length;
      const out = rows.filter((i) => labels[i] === p.outlierClass[c]).length;
      expect(inl + out).toBe(m);
      expect(out).toBe(Math.round(0.1 * m));
      expect(p.outlierClass[c]).not.toBe(p.inlierClass[c]);
      expect(p.classes[p.group[c]!]).toBe(p.inlierClass[c]);
      // test rows: the same two classes, outliers in ratio d / (1 - d)
      const t = p.testIndices![c]!;
      const tin = [...t].filter((i) => testLabels[i] === p.inlierClass[c]).length;
      expect(tin + [...t].filter((i) => testLabels[i] === p.outlierClass[c]).length).toBe(t.length);
      expect(t.length - tin).toBe(Math.round((tin * 0.1) / 0.9));
    });
    // the largest size every class allows: the smallest class (250) holds 3 clients' inliers plus its outlier uses
    expect(m).toBeGreaterThan(70);
    // within a group the outlier classes circulate through the other three
    for (let g = 0; g < 4; g++) expect(new Set(p.outlierClass.slice(3 * g, 3 * g + 3)).size).toBe(3);
    expect(partition.contaminated(labels, { clientsPerClass: 3, contamination: 0.1, seed: 4 }).indices).toEqual(p.indices);
    expect(partition.contaminated(labels, { clientsPerClass: 3, contamination: 0.1, seed: 5 }).indices).not.toEqual(p.indices);
  });

  test('bad options: typed errors', () => {
    expect(() => partition.contaminated(labels, { clientsPerClass: 3, contamination: 0.5 })).toThrow(InvalidParameterError);
    expect(() => partition.contaminated(labels, { clientsPerClass: 200, contamination: 0.1 })).toThrow(InvalidDataError);
    expect(() => partition.contaminated(new Array(10).fill(1), { clientsPerClass: 1, contamination: 0.1 })).toThrow(InvalidDataError);
    expect(() => partition.contaminated(labels, { clientsPerClass: 2, contamination: 0.1, testLabels: [99, 0] })).toThrow(InvalidDataError);
  });
});

describe('association on Fashion-MNIST', () => {
  // Measured over seeds 1 to 6 at q = 0.08 (this file's history): ARI 0.84, 0.75, 0.84, 1, 0.84, 1; the misses
  // are one sneaker/bag client left alone, never a merge of classes. Seeds 1 to 3 are run here: each at least 0.7,
  // and within-group pairs together far more often than not.
  test('clients sharing an inlier class end up together; ARI against the ideal groups', async () => {
    const heap = wasm().fm_heap_in_use();
    for (const seed of [1, 2, 3]) {
      const { parts, p } = await fashionClients(seed);
      const r = associate(parts, { detector: { kind: 'gmm', contamination: 0.1 }, q: 0.08 });
      const pred = Array.from(p.group, (_, i) => r.membership.get(String(i))!);
      expect(adjustedRandScore(Array.from(p.group), pred)).toBeGreaterThanOrEqual(0.7);
      expect(togetherShare(p.group, r.membership)).toBeGreaterThan(0.5);
      // no community mixes inlier classes
      for (const c of r.communities) expect(new Set(c.map((id) => p.group[Number(id)])).size).toBe(1);
      expect(r.tests).toBe(9 * 8);
      expect(r.federation.traffic.rounds).toBe(2);
      expect(r.excluded).toEqual([]);
    }
    expect(wasm().fm_heap_in_use()).toBe(heap);
  }, 60_000);

  test('the sampled variant tests fewer pairs and moves fewer bytes than all pairs', async () => {
    const { parts } = await fashionClients(1);
    const all = associate(parts, { detector: { kind: 'gmm', contamination: 0.1 } });
    const sampled = associate(parts, { detector: { kind: 'gmm', contamination: 0.1 }, partners: 2, seed: 3 });
    expect(sampled.tests).toBeLessThan(all.tests);
    expect(sampled.federation.traffic.bytesDown).toBeLessThan(all.federation.traffic.bytesDown);
    expect(sampled.federation.traffic.bytesDown + sampled.federation.traffic.bytesUp).toBeLessThan(all.federation.traffic.bytesDown + all.federation.traffic.bytesUp);
    // a pair is tested both ways or not at all, so the mutual rule can link it
    const tested = new Set(sampled.decisions.map((d) => `${d.client}>${d.partner}`));
    for (const d of sampled.decisions) expect(tested.has(`${d.partner}>${d.client}`)).toBe(true);
    // the detectors are the same (seeded fits), so every sampled decision is the all-pairs one, and its links a subset
    const allSaid = new Map(all.decisions.map((d) => [`${d.client}>${d.partner}`, d.accept]));
    for (const d of sampled.decisions) expect(d.accept).toBe(allSaid.get(`${d.client}>${d.partner}`));
    const allEdges = new Set(all.edges.map((e) => e.join('-')));
    for (const e of sampled.edges) expect(allEdges.has(e.join('-'))).toBe(true);
    // the same seed, the same plan
    expect(associate(parts, { detector: { kind: 'gmm', contamination: 0.1 }, partners: 2, seed: 3 }).decisions).toEqual(sampled.decisions);
  }, 30_000);
});

describe('every detector kind, both community methods', () => {
  test('two clouds of three clients each: two communities', () => {
    const parts = [0, 1, 2, 3, 4, 5].map((i) => cloud(80, 11 + i, i < 3 ? 0 : 10));
    for (const kind of ['ocsvm', 'gmm', 'autoencoder'] as const) {
      for (const method of ['fast-greedy', 'louvain'] as const) {
        const r = associate(parts, { detector: { kind, contamination: 0.1, autoencoder: { hiddenLayers: [8, 2, 8], outputActivation: 'identity', epochs: 30, seed: 1 } }, q: 0.15, method, seed: 2 });
        expect(r.communities, `${kind} ${method}`).toEqual([
          ['0', '1', '2'],
          ['3', '4', '5'],
        ]);
        expect(r.method).toBe(method);
      }
    }
  }, 30_000);
});

describe('many small detectors', () => {
  test('250 GMM clients over the binary wire: relays split so no message names too many arrays', () => {
    // a GMM detector is a few hundred bytes, so the byte budget alone would put all 249 partners in
    // one relay, whose Arrow schema (a field per array) would pass the decoder's 64 KiB bound
    const parts = Array.from({ length: 250 }, (_, i) => cloud(12, 100 + i, i % 2 ? 0 : 10));
    const r = associate(parts, { detector: { kind: 'gmm', contamination: 0.1, gmm: { covarianceType: 'diag' } }, q: 0.2, encoding: 'binary', seed: 1 });
    expect(r.excluded).toEqual([]);
    expect(r.communities.length).toBeGreaterThanOrEqual(2);
    expect(r.federation.rounds).toBeGreaterThan(2);
  }, 120_000);
});

/** Five clients whose decisions come from a table, their detectors from real fits. */
const IDS = ['a', 'b', 'c', 'd', 'e'];
class Stub implements ClientRole {
  readonly protocol;
  private readonly inner: CommunitiesClient;
  constructor(
    readonly id: string,
    private readonly accepts: Record<string, boolean>,
  ) {
    this.inner = new CommunitiesClient(id, cloud(40, IDS.indexOf(id) + 1, 0), { detector: { kind: 'gmm' } });
    this.protocol = this.inner.protocol;
  }
  respond(m: Message): Message {
    if (m.kind !== RELAY.kind) return this.inner.respond(m);
    const partners = (m.payload as RelayPayload).partners.map((x) => x.token);
    // the server numbers clients in the order their detectors arrived: the transport's order, IDS
    return DECISIONS.create(this.id, m.round, { partners: Uint32Array.from(partners), accept: partners.map((t) => this.accepts[IDS[t]!] ?? false) });
  }
  dispose(): void {
    this.inner.dispose();
  }
}

describe('mutual links', () => {
  test('a link only where both accepted each other; an isolated client is a community of its own', () => {
    const table: Record<string, Record<string, boolean>> = {
      a: { b: true, c: true, d: false, e: false },
      b: { a: true, c: true, d: true, e: false },
      c: { a: false, b: true, d: false, e: false },
      d: { a: true, b: true, c: true, e: true },
      e: { a: true, b: false, c: false, d: false },
    };
    const clients = IDS.map((id) => new Stub(id, table[id]!));
    const run = runFederationSync(new CommunitiesServer({ nFeatures: 2, kind: 'gmm' }), new InProcessTransport(clients));
    const r = run.model;
    // b-d: b accepts d and d accepts b; a-e: only e accepts a; a-c: only a accepts c
    expect(r.edges).toEqual([
      ['a', 'b'],
      ['b', 'c'],
      ['b', 'd'],
    ]);
    expect(r.decisions.length).toBe(20);
    for (const d of r.decisions) expect(d.accept).toBe(table[d.client]![d.partner]);
    const direct = communities({ nodes: IDS, edges: r.edges }, { method: 'fast-greedy' });
    expect(r.communities).toEqual(direct.communities);
    expect(r.communities).toContainEqual(['e']);
    expect(r.modularity).toBe(direct.modularity);
    for (const c of clients) c.dispose();
  });
});

describe('bad input (item 11)', () => {
  /** Six honest clients in two clouds, and the association of a run over `roles`. */
  const honest = (id: string) => new CommunitiesClient(id, cloud(60, id.charCodeAt(0), id < 'd' ? 0 : 8), { detector: { kind: 'gmm' } });
  const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
  const run = (roles: ClientRole[]) => runFederationSync(new CommunitiesServer({ nFeatures: 2, kind: 'gmm', q: 0.1 }), new InProcessTransport(roles));
  const without = (bad: string) => {
    const roles = ids.filter((id) => id !== bad).map(honest);
    try {
      return run(roles).model;
    } finally {
      roles.forEach((c) => c.dispose());
    }
  };

  const cases: [string, string, (reply: Message) => Message][] = [
    ['a detector of the wrong dimension', DETECTOR.kind, editPayload((p) => (p.detector.nFeatures = 3))],
    ['a detector with NaN', DETECTOR.kind, (r) => ({ ...r, payload: { detector: { ...(r.payload as any).detector, gmm: { ...(r.payload as any).detector.gmm, means: Float64Array.of(NaN, 0) } } } })],
    ['a covariance that is not positive definite', DETECTOR.kind, editPayload((p) => (p.detector.gmm.covariances = [-1, 0, 0, -1]))],
    ['decisions for an unknown partner', DECISIONS.kind, editPayload((p) => (p.partners[0] = 99))],
    ['decisions for fewer partners than sent', DECISIONS.kind, editPayload((p) => (p.partners.pop(), p.accept.pop()))],
    ['more decisions than partners', DECISIONS.kind, editPayload((p) => p.accept.push(true))],
    ['a partner named twice', DECISIONS.kind, editPayload((p) => (p.partners[1] = p.partners[0]))],
  ];
  for (const [name, kind, edit] of cases) {
    test(`${name}: the client is excluded and the graph is the one of the run without it`, () => {
      const heap = wasm().fm_heap_in_use();
      const roles: ClientRole[] = ids.map((id) => (id === 'b' ? new Recording(honest(id), (r) => (r.kind === kind ? edit(r) : r)) : honest(id)));
      const r = run(roles);
      roles.forEach((c) => (c instanceof Recording ? (c.inner as CommunitiesClient) : (c as CommunitiesClient)).dispose());
      expect(r.excluded.map((e) => e.client)).toEqual(['b']);
      // NaN cannot even be sent (the encoder refuses it on the client's side): a refusal; the others fail the server's checks
      expect(r.failures[0]!.kind).toBe(name.includes('NaN') ? 'refused' : 'invalid');
      const clean = without('b');
      expect(r.model.nodes).toEqual(clean.nodes);
      expect(r.model.edges).toEqual(clean.edges);
      expect(r.model.communities).toEqual(clean.communities);
      expect(r.model.nodes).not.toContain('b');
      expect(wasm().fm_heap_in_use()).toBe(heap);
    });
  }

  test('a detector with NaN handed to the server directly: InvalidMessageError from accept, the server unchanged', () => {
    const server = new CommunitiesServer({ nFeatures: 2, kind: 'gmm' });
    const request = server.configure({ round: 1, clients: ['a'], available: ['a'] }).get('a')!;
    const c = honest('a');
    try {
      const reply = c.respond(request);
      const det = (reply.payload as DetectorPayload).detector;
      const bad = { ...reply, payload: { detector: { ...det, gmm: { ...det.gmm!, means: Float64Array.of(NaN, 0) } } } };
      expect(() => server.accept(bad as Message, request)).toThrow(InvalidMessageError);
      expect(server.accept(reply, request)).toBeTruthy();
    } finally {
      c.dispose();
    }
  });

  test('a client with too few rows for its detector: a typed error when made, excluded by associate', () => {
    expect(() => new CommunitiesClient('x', cloud(2, 1, 0), { detector: { kind: 'gmm', gmm: { nComponents: 3 } } })).toThrow(InvalidDataError);
    const parts = [cloud(40, 1, 0), cloud(40, 2, 0), cloud(1, 3, 0), cloud(40, 4, 0)];
    const r = associate(parts, { detector: { kind: 'gmm' } });
    expect(r.excluded.map((e) => e.client)).toEqual(['2']);
    expect(r.nodes).toEqual(['0', '1', '3']);
    expect(() => associate(parts, { detector: { kind: 'gmm' }, onInvalidClient: 'throw' })).toThrow(InvalidDataError);
  });

  test('q outside [0, 1], contamination outside (0, 0.5), unknown options: typed errors before anything runs', () => {
    for (const q of [-0.01, 1.01, NaN, Infinity]) {
      expect(() => new CommunitiesServer({ nFeatures: 2, q })).toThrow(InvalidParameterError);
      expect(() => associate([cloud(10, 1, 0)], { q })).toThrow(InvalidParameterError);
    }
    expect(new CommunitiesServer({ nFeatures: 2, q: 0 }).q).toBe(0);
    expect(new CommunitiesServer({ nFeatures: 2, q: 1 }).q).toBe(1);
    for (const contamination of [0, 0.5, 1]) {
      expect(() => new CommunitiesServer({ nFeatures: 2, contamination })).toThrow(InvalidParameterError);
      expect(() => associate([cloud(10, 1, 0)], { detector: { contamination } })).toThrow(InvalidParameterError);
    }
    expect(() => new CommunitiesServer({ nFeatures: 2, partners: 0 })).toThrow(InvalidParameterError);
    expect(() => new CommunitiesServer({ nFeatures: 2, method: 'girvan' as never })).toThrow(InvalidParameterError);
  });

  test('a relay with q outside [0, 1] is refused by the client', () => {
    const c = honest('a');
    const partner = honest('b');
    try {
      c.respond(FIT.create('server', 1, {}));
      const det = (partner.respond(FIT.create('server', 1, {})).payload as DetectorPayload).detector;
      expect(() => c.respond(RELAY.create('server', 2, { q: 1.5, partners: [{ token: 1, detector: det }] }))).toThrow(InvalidMessageError);
      const ok = c.respond(RELAY.create('server', 2, { q: 0.5, partners: [{ token: 1, detector: det }] }));
      expect((ok.payload as { accept: boolean[] }).accept.length).toBe(1);
    } finally {
      c.dispose();
      partner.dispose();
    }
  });
});
