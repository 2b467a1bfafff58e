/** BENCHMARKS.md is what scripts/benchmarks-md.mjs writes from the benches' results, never edited by hand. */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { benchmarksMarkdown } from '../scripts/benchmarks-md.mjs';

describe('BENCHMARKS.md', () => {
  test('equals what scripts/benchmarks-md.mjs writes (run it after changing bench/results/ or the template)', () => {
    const committed = readFileSync(new URL('../BENCHMARKS.md', import.meta.url), 'utf8');
    expect(committed).toBe(benchmarksMarkdown());
  });

  test('every table of the results is in it, with its numbers', () => {
    const text = readFileSync(new URL('../BENCHMARKS.md', import.meta.url), 'utf8');
    const gmm = JSON.parse(readFileSync(new URL('../bench/results/bench-gmm-em.json', import.meta.url), 'utf8')) as { tables: { rows: string[][] }[] };
    for (const row of gmm.tables[0]!.rows) expect(text).toContain(`| ${row.join(' | ')} |`);
  });
});
