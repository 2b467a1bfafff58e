/**
 * OneClassSVM against scikit-learn 1.2.1's (fixtures from scripts/gen-fixtures.py,
 * group ocsvm) on real data: the thyroid anomaly set, letter.csv and
 * Fashion-MNIST clients, gamma 'scale' and 'auto', nu 0.1 and 0.5, and a few
 * other settings. The issue's bars: dual objective within 1e-6 relative,
 * decision values within 1e-4 of the largest absolute decision value,
 * identical predictions except within that margin. Beyond them, the solver
 * takes libsvm's steps, so the iteration counts and the support vectors are
 * the same too.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { csvToMatrix, init, Matrix, OneClassSVM, parseCsv, type OneClassSVMOptions } from '../ts/index.js';
import { loadFashionMnist } from '../ts/node.js';
import { fixture, maxAbsoluteError } from './helpers.js';

interface Dataset {
  source: 'csv' | 'fashion-mnist';
  file?: string;
  train: number[];
  test: number[];
}
interface Case {
  dataset: string;
  options: OneClassSVMOptions;
  gamma: number;
  nIter: number;
  converged: boolean;
  offset: number;
  objective: number;
  support: number[];
  dualCoef: number[];
  decision: number[];
  decisionTest: number[];
  scoreSamplesTest: number[];
  predict: number[];
  predictTest: number[];
}

const { datasets, cases } = fixture<{ datasets: Record<string, Dataset>; cases: Case[] }>('ocsvm.json');

const csvRows = new Map<string, Matrix>();
/** The first rows of each Fashion-MNIST split, as many as the fixtures name (fedmix/node's loader, Debian's files). */
const fashion = new Map<'train' | 'test', Matrix>();

function load(ds: Dataset, which: 'train' | 'test'): Matrix {
  const rows = ds[which];
  if (ds.source === 'fashion-mnist') return fashion.get(which)!.selectRows(rows);
  let all = csvRows.get(ds.file!);
  if (!all) {
    const table = parseCsv(readFileSync(fileURLToPath(new URL(`../../shared/datasets/${ds.file}`, import.meta.url)), 'utf8'));
    all = csvToMatrix(table, { exclude: ['label'] }).X;
    csvRows.set(ds.file!, all);
  }
  return all.selectRows(rows);
}

const maxAbs = (v: ArrayLike<number>) => Array.from(v).reduce((a, x) => Math.max(a, Math.abs(x)), 0);

beforeAll(async () => {
  await init();
  for (const split of ['train', 'test'] as const) {
    const last = Math.max(...Object.values(datasets).filter((d) => d.source === 'fashion-mnist').flatMap((d) => d[split]));
    fashion.set(split, (await loadFashionMnist({ split, n: last + 1 })).X);
  }
});

describe.each(cases.map((c) => [`${c.dataset} ${JSON.stringify(c.options)}`, c] as const))('%s', (_name, c) => {
  const ds = datasets[c.dataset]!;

  test('matches scikit-learn', () => {
    const X = load(ds, 'train');
    const Xtest = load(ds, 'test');
    const m = new OneClassSVM(c.options).fit(X);
    try {
      expect(m.effectiveGamma / c.gamma - 1).toBeLessThan(1e-12);
      // the bars
      expect(Math.abs(m.objective - c.objective) / c.objective).toBeLessThan(1e-6);
      const dec = m.decisionFunction(X);
      const decTest = m.decisionFunction(Xtest);
      const scale = maxAbs(c.decision);
      const margin = 1e-4 * scale;
      expect(maxAbsoluteError(dec, c.decision)).toBeLessThan(margin);
      expect(maxAbsoluteError(decTest, c.decisionTest)).toBeLessThan(margin);
      for (const [pred, want, sk] of [
        [m.predict(X), c.predict, c.decision],
        [m.predict(Xtest), c.predictTest, c.decisionTest],
      ] as const) {
        for (let i = 0; i < want.length; i++) if (Math.abs(sk[i]!) > margin) expect(pred[i], `row ${i}`).toBe(want[i]);
      }
      expect(maxAbsoluteError(m.scoreSamples(Xtest), c.scoreSamplesTest)).toBeLessThan(margin);
      // libsvm's steps: the same iterations, support vectors and coefficients
      expect(m.nIter).toBe(c.nIter);
      expect(m.converged).toBe(c.converged);
      expect(Array.from(m.support)).toEqual(c.support);
      expect(m.nSupport).toBe(c.support.length);
      expect(maxAbsoluteError(m.dualCoef, c.dualCoef)).toBeLessThan(1e-9);
      expect(Math.abs(m.offset - c.offset)).toBeLessThan(1e-9 * Math.max(1, Math.abs(c.offset)));
      expect(m.supportVectors.nRows).toBe(c.support.length);
      expect(m.supportVectors.row(0)).toEqual(X.row(c.support[0]!));
      if (process.env.FEDMIX_OCSVM_REPORT) {
        const rel = (a: ArrayLike<number>, b: ArrayLike<number>) => maxAbsoluteError(a, b) / scale;
        console.log(
          `${c.dataset} ${JSON.stringify(c.options)}: objective ${(Math.abs(m.objective - c.objective) / c.objective).toExponential(2)}, ` +
            `decision ${rel(dec, c.decision).toExponential(2)} / ${rel(decTest, c.decisionTest).toExponential(2)} of ${scale.toPrecision(4)}, ` +
            `nIter ${m.nIter} (${c.nIter}), nSupport ${m.nSupport}`,
        );
      }
    } finally {
      m.dispose();
    }
  });
});

describe('the kernel cache', () => {
  // The cache holds every column the Fashion-MNIST fits need by default, the
  // first ones computed at once as tiles of a matrix product; with room for
  // two, every column is computed alone, dropped and computed again. Every
  // kernel value is the same either way, so are the solver's steps: the same
  // model, to the bit.
  const fashionCases = cases.filter((c) => datasets[c.dataset]!.source === 'fashion-mnist');

  test.each(fashionCases.map((c) => [`${c.dataset} ${JSON.stringify(c.options)}`, c] as const))('%s: a cache of two columns gives the same model', (_name, c) => {
    const ds = datasets[c.dataset]!;
    const X = load(ds, 'train');
    const Xtest = load(ds, 'test');
    const fit = (cacheSize?: number) => {
      const m = new OneClassSVM({ ...c.options, cacheSize }).fit(X);
      const out = { nIter: m.nIter, offset: m.offset, objective: m.objective, support: Array.from(m.support), dualCoef: Array.from(m.dualCoef), decision: Array.from(m.decisionFunction(Xtest)) };
      m.dispose();
      return out;
    };
    // 0.001 MiB is 262 values, less than two columns of X's rows: the cache keeps two
    const small = fit(0.001);
    expect(small.support).toEqual(c.support);
    expect(small).toEqual(fit(undefined));
  });
});
