/**
 * The other side of FedGenGMM's and MDM's checks: on real data, at the
 * defaults, under every partition of issue 23 (IID, Dir(0.1), Dir(0.3), one
 * class per client, quantity skew, a client with far fewer rows than
 * features), no honest client is excluded and FedGenGMM's scale suspicion
 * names none. A small seeded sample of scripts/honest-federations.mjs (every
 * dataset; EXPERIMENTS.md, "Honest federations").
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import * as fedmix from '../ts/index.js';
import { init, Matrix, MinMaxScaler, Rng, type GaussianMixture } from '../ts/index.js';
import { labelledFromCsv, type LabelledData } from '../ts/experiments/index.js';
import { modelScale } from '../ts/federated/fedgengmm/server.js';
import { outliers } from '../ts/federated/robust.js';
import { histograms, honestFedGenGMM, honestMdm, honestPartition, SCHEMES, tinyRows } from './support/honest-federations.mjs';

const dataset = (name: string) => labelledFromCsv(readFileSync(new URL(`../../shared/datasets/${name}.csv`, import.meta.url), 'utf8'), { label: 'label' });

/** n rows of the data at random (seeded), with their labels. */
function sample(d: LabelledData, n: number, seed: number): { X: Matrix; labels: Int32Array } {
  const rng = new Rng(seed);
  const rows = Array.from(rng.permutation(d.X.nRows).subarray(0, n));
  rng.dispose();
  return { X: d.X.selectRows(rows), labels: Int32Array.from(rows, (i) => d.labels![i]!) };
}

const suspects = (models: GaussianMixture[]) => outliers(models.map(modelScale));

beforeAll(async () => {
  await init();
});

describe('FedGenGMM on satellite (1,200 rows, 36 features, 10 clients), clients and server at their defaults', () => {
  test.each(SCHEMES)('%s: no client excluded, none suspected of an outlying scale, by either server step', (scheme) => {
    const { X, labels } = sample(dataset('satellite'), 1200, 1);
    const parts = honestPartition(fedmix, scheme, labels, { clients: 10, nFeatures: X.nCols, seed: 2 });
    if (scheme === 'tiny-client') expect(parts.at(-1)!.length).toBe(tinyRows(36));
    for (const serverStep of ['sample', 'hierarchical'] as const) {
      const r = honestFedGenGMM(fedmix, X, parts, { nComponents: 6, serverStep, seed: 3, suspects });
      expect(r.excluded, serverStep).toEqual([]);
      expect(r.suspects, serverStep).toEqual([]);
      expect(r.model).toBe(6);
    }
  });

  test('a declared feature range lets every honest upload through (the rows scaled into it)', () => {
    const { X, labels } = sample(dataset('satellite'), 1200, 1);
    const scaled = new MinMaxScaler().fit(X).transform(X);
    for (const scheme of ['dir-0.1', 'one-class', 'tiny-client']) {
      const parts = honestPartition(fedmix, scheme, labels, { clients: 10, nFeatures: X.nCols, seed: 2 });
      expect(honestFedGenGMM(fedmix, scaled, parts, { nComponents: 6, featureRange: [0, 1], seed: 3 }).excluded, scheme).toEqual([]);
    }
  });
});

describe('MDM on the class histograms of letter (26 classes; 2,000 rows, 20 clients) at the defaults (every client, 100 rounds)', () => {
  test.each(SCHEMES)('%s: no client excluded by the aggregator\'s bounds', (scheme) => {
    const { X, labels } = sample(dataset('letter'), 2000, 4);
    const hist = histograms(labels, honestPartition(fedmix, scheme, labels, { clients: 20, nFeatures: X.nCols, seed: 5 }));
    const r = honestMdm(fedmix, hist, 'fit', { seed: 6 });
    expect(r.excluded).toEqual([]);
    if (scheme === 'one-class') {
      // no maximum-likelihood estimate on single-class clients: a typed error that says so, no exclusion
      expect(r.error).toMatch(/every client in the initialization cohort holds a single class/);
    } else {
      expect(r.error).toBeUndefined();
    }
  });

  // K selection scores a validation client only where every candidate's size distribution pi gives its size a positive
  // probability: under quantity skew the 20 sizes are all distinct, none is scored, and selectMdm says so (a typed error,
  // no exclusion; scripts/honest-federations.mjs counts such runs)
  test.each([
    ['dir-0.3', ['groups', 'select', 'privacy']],
    ['quantity-skew', ['groups', 'privacy']],
    ['tiny-client', ['groups', 'select', 'privacy']],
  ] as const)('%s: the groups\' bounds, the evaluation round and the clip bound exclude no one either', (scheme, variants) => {
    const { X, labels } = sample(dataset('letter'), 2000, 4);
    const hist = histograms(labels, honestPartition(fedmix, scheme, labels, { clients: 20, nFeatures: X.nCols, seed: 5 }));
    for (const variant of variants) {
      const r = honestMdm(fedmix, hist, variant, { seed: 6, rounds: 30 });
      expect([variant, r.excluded, r.error]).toEqual([variant, [], undefined]);
    }
  });
});
