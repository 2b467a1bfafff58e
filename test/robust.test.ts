/**
 * Robust aggregation against numpy and scipy (test/fixtures/robust.json from
 * scripts/gen-fixtures.py): coordinate-wise median and trimmed mean, and the
 * scale test servers use to suspect the client that broke an aggregate.
 */
import { describe, expect, test } from 'vitest';
import { coordinateMedian, InvalidParameterError, trimmedMean } from '../ts/index.js';
import { median, outliers, OUTLIER_SCALE } from '../ts/federated/robust.js';
import { fixture } from './helpers.js';

interface Case {
  m: number;
  d: number;
  x: number[];
  median: number[];
  trimmed: { proportion: number; mean: number[] }[];
}
const { cases } = fixture<{ cases: Case[] }>('robust.json');
const rows = (c: Case) => Array.from({ length: c.m }, (_, i) => c.x.slice(i * c.d, (i + 1) * c.d));

describe('against numpy and scipy', () => {
  test.each(cases.map((c) => [`${c.m} vectors of ${c.d}`, c] as const))('%s: coordinate-wise median = numpy.median(axis=0), trimmed mean = scipy.stats.trim_mean', (_, c) => {
    // == rather than toEqual: a median of -0 and 0 may come out with either sign
    coordinateMedian(rows(c)).forEach((v, j) => expect(v === c.median[j]).toBe(true));
    for (const t of c.trimmed) {
      const got = trimmedMean(rows(c), t.proportion);
      got.forEach((v, j) => expect(Math.abs(v - t.mean[j]!)).toBeLessThanOrEqual(1e-15 * Math.max(1, Math.abs(t.mean[j]!))));
    }
  });

  test('one client far off moves the mean by its size, the median and the trimmed mean hardly at all', () => {
    const c = cases.find((x) => x.m === 25)!;
    const mean = rows(c).reduce((a, r) => a.map((v, j) => v + r[j]! / c.m), new Array<number>(c.d).fill(0));
    const med = coordinateMedian(rows(c));
    const trimmed = trimmedMean(rows(c), 0.1);
    const largest = (v: ArrayLike<number>) => Math.max(...Array.from(v, Math.abs));
    expect(largest(mean)).toBeGreaterThan(1e4);
    expect(largest(med)).toBeLessThan(3);
    expect(largest(trimmed)).toBeLessThan(3);
  });
});

describe('bad input', () => {
  test('empty, ragged and impossible proportions are InvalidParameterErrors', () => {
    expect(() => coordinateMedian([])).toThrow(InvalidParameterError);
    expect(() => coordinateMedian([[1, 2], [3]])).toThrow(/coordinateMedian\[1\] has 1 values; coordinateMedian\[0\] has 2/);
    expect(() => trimmedMean([[1]], 0.5)).toThrow(/below 0.5/);
    expect(() => trimmedMean([[1]], -0.1)).toThrow(InvalidParameterError);
    expect(() => trimmedMean([[1]], NaN)).toThrow(InvalidParameterError);
  });
});

describe('the scale test for a broken aggregate', () => {
  test(`a client more than ${OUTLIER_SCALE} times the others' median scale is suspected, largest first; honest spreads are not`, () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(outliers([1, 2, 1.5, 900, 3])).toEqual([]);
    expect(outliers([1, 2, 1.5, 1e12, 3, 1e7])).toEqual([3, 5]);
    expect(outliers([1, NaN, 2])).toEqual([1]);
    expect(outliers([5])).toEqual([]);
  });
});
