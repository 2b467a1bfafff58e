/** Simulated clients from histograms (partition.mdm and its baselines) and the distance between sets of histograms. */
import { beforeAll, describe, expect, test } from 'vitest';
import { DirichletMultinomialMixture, histogramEnergyDistance, init, InvalidDataError, InvalidParameterError, partition } from '../ts/index.js';
import { expectClean } from './helpers.js';

beforeAll(async () => {
  await init();
});

/** 300 rows: class a (100), b (120), c (80), shuffled deterministically. */
const labels = Array.from({ length: 300 }, (_, i) => ['a', 'b', 'c'][(i * 7) % 300 < 100 ? 0 : (i * 7) % 300 < 220 ? 1 : 2]!);
const count = (cls: string) => labels.filter((l) => l === cls).length;

/** Each client's rows: distinct, and of the classes its histogram says. */
function checkDealt(p: { indices: Int32Array[]; histograms: Int32Array[]; classes: unknown[] }): void {
  p.indices.forEach((rows, c) => {
    expect(new Set(rows).size).toBe(rows.length);
    const h = p.classes.map((cls) => Array.from(rows).filter((r) => labels[r] === cls).length);
    expect(h).toEqual(Array.from(p.histograms[c]!));
  });
}

describe('partition from histograms', () => {
  test('conditionallyIid: exactly the given histograms; disjoint deals rows once', () => {
    expect([count('a'), count('b'), count('c')]).toEqual([100, 120, 80]);
    const histograms = [
      [10, 0, 5],
      [0, 20, 0],
      [30, 30, 30],
    ];
    const p = partition.conditionallyIid(labels, { histograms, seed: 1 });
    expect(p.histograms.map((h) => Array.from(h))).toEqual(histograms);
    expect(p.classes).toEqual(['a', 'b', 'c']);
    checkDealt(p);
    const q = partition.conditionallyIid(labels, { histograms, seed: 1, disjoint: true });
    checkDealt(q);
    const all = q.indices.flatMap((r) => Array.from(r));
    expect(new Set(all).size).toBe(all.length);
    expect(partition.conditionallyIid(labels, { histograms, seed: 1 })).toEqual(p);
    // columns in another order, named
    const r = partition.conditionallyIid(labels, { histograms: [[5, 0, 10]], classes: ['c', 'b', 'a'], seed: 2 });
    expect(r.classes).toEqual(['c', 'b', 'a']);
    expect(Array.from(r.indices[0]!).filter((i) => labels[i] === 'a')).toHaveLength(10);
  });

  test('running out of a class says which and what to change', () => {
    expectClean(() => partition.conditionallyIid(labels, { histograms: [[101, 0, 0]] }), InvalidDataError, /client 0 needs 101 rows of class a but the data holds only 100/);
    expectClean(
      () => partition.conditionallyIid(labels, { histograms: [[60, 0, 0], [60, 0, 0]], disjoint: true }),
      InvalidDataError,
      /client 1 needs 60 rows of class a but only 40 of its 100 remain undealt; simulate fewer clients or let clients share rows \(disjoint: false\)/,
    );
    expectClean(() => partition.conditionallyIid(labels, { histograms: [[1, 2]] }), InvalidDataError, /3 classes but the histograms have 2 columns; pass classes/);
    expectClean(() => partition.conditionallyIid(labels, { histograms: [[1, -2, 0]] }), InvalidDataError, /count 1 is -2/);
  });

  test("mdm: clients drawn from the model, the model's category names mapping columns to classes", () => {
    const model = new DirichletMultinomialMixture({
      tau: [0.5, 0.5],
      alpha: [
        [0.1, 0.1, 5],
        [5, 5, 0.1],
      ],
      pi: [
        [0, 0, 0, 0, 1, 0],
        [0, 0, 0, 0, 0, 1],
      ],
      categories: ['c', 'a', 'b'],
    });
    const p = partition.mdm(labels, { model, clients: 40, seed: 3 });
    expect(p.classes).toEqual(['c', 'a', 'b']);
    checkDealt(p);
    p.histograms.forEach((h, i) => expect(h.reduce((a, b) => a + b, 0)).toBe(p.components[i] === 0 ? 5 : 6));
    // component 0 clients hold mostly class b (its largest alpha, column 2)
    const b0 = p.histograms.filter((_, i) => p.components[i] === 0).reduce((a, h) => a + h[2]!, 0);
    expect(b0).toBeGreaterThan(0.8 * 5 * p.components.filter((k) => k === 0).length);
    expect(partition.mdm(labels, { model, clients: 40, seed: 3 })).toEqual(p);
    expectClean(() => partition.mdm(labels, { model, clients: 0 }), InvalidParameterError, /clients must be an integer in \[1, /);
  });

  test('fullyIid: sizes drawn from the true ones, rows from anywhere', () => {
    const p = partition.fullyIid(labels, { sizes: [3, 7, 7], clients: 50, seed: 4 });
    expect(p.indices).toHaveLength(50);
    for (const rows of p.indices) expect([3, 7]).toContain(rows.length);
    checkDealt(p);
    const d = partition.fullyIid(labels, { sizes: [10], clients: 30, seed: 4, disjoint: true });
    expect(new Set(d.indices.flatMap((r) => Array.from(r))).size).toBe(300);
    expectClean(() => partition.fullyIid(labels, { sizes: [10], clients: 31, disjoint: true }), InvalidDataError, /client 30 needs 10 rows but only 0 of 300 remain undealt/);
    expectClean(() => partition.fullyIid(labels, { sizes: [] }), InvalidParameterError, /sizes must hold/);
  });
});

describe('histogramEnergyDistance', () => {
  test('0 for the same set, symmetric, on proportions, equal to the definition', () => {
    const a = [
      [1, 0, 3],
      [2, 2, 0],
    ];
    const b = [
      [0, 5, 5],
      [4, 0, 0],
      [1, 1, 1],
    ];
    expect(histogramEnergyDistance(a, a)).toBe(0);
    expect(histogramEnergyDistance([[2, 0, 6], [1, 1, 0]], a)).toBeCloseTo(0, 15);
    const d = histogramEnergyDistance(a, b);
    expect(d).toBeCloseTo(histogramEnergyDistance(b, a), 14);
    const prop = (h: number[]) => h.map((x) => x / h.reduce((s, y) => s + y, 0));
    const dist = (x: number[], y: number[]) => Math.hypot(...prop(x).map((v, j) => v - prop(y)[j]!));
    const mean = (xs: number[][], ys: number[][]) => xs.reduce((s, x) => s + ys.reduce((t, y) => t + dist(x, y), 0), 0) / (xs.length * ys.length);
    expect(d).toBeCloseTo(2 * mean(a, b) - mean(a, a) - mean(b, b), 14);
    expect(d).toBeGreaterThan(0);
    expectClean(() => histogramEnergyDistance(a, [[1, 1]]), InvalidDataError, /a has 3 categories but b has 2/);
    expectClean(() => histogramEnergyDistance([[0, 0, 0]], a), InvalidDataError, /row 0 is empty/);
  });
});
