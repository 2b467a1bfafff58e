/** BENCHMARKS.md is what scripts/benchmarks-md.mjs writes from the benches' results, never edited by hand. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { benchmarksMarkdown } from '../scripts/benchmarks-md.mjs';

interface Results {
  suite: string;
  command: string;
  measured: Record<string, unknown>;
  tables: { title?: string; columns: string[]; rows: string[][] }[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = join(ROOT, 'bench/results');
const readResults = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Results;

describe('BENCHMARKS.md', () => {
  test('equals what scripts/benchmarks-md.mjs writes (run it after changing bench/results/ or the template)', () => {
    const committed = readFileSync(new URL('../BENCHMARKS.md', import.meta.url), 'utf8');
    expect(committed).toBe(benchmarksMarkdown());
  });

  test('every table of the results is in it, with its numbers', () => {
    const text = readFileSync(new URL('../BENCHMARKS.md', import.meta.url), 'utf8');
    const gmm = readResults(join(RESULTS, 'bench-gmm-em.json'));
    for (const row of gmm.tables[0]!.rows) expect(text).toContain(`| ${row.join(' | ')} |`);
  });

  test('a suite run in quick mode writes its own results, in the committed shape, and the script renders them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-bench-results-'));
    try {
      // the committed results, then the quick run's own in place of its suite's
      for (const f of readdirSync(RESULTS)) if (/^bench-.*\.json$/.test(f)) copyFileSync(join(RESULTS, f), join(dir, f));
      const run = spawnSync(process.execPath, ['bench/run.mjs', '--quick', 'special'], {
        cwd: ROOT,
        env: { ...process.env, FEDMIX_BENCH_RESULTS: dir, FEDMIX_BENCH_NOTE: 'a test run' },
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
      const written = readResults(join(dir, 'bench-special.json'));
      const committed = readResults(join(RESULTS, 'bench-special.json'));
      expect(written.suite).toBe('special');
      expect(written.command).toBe('npm run bench -- special --quick');
      expect(written.measured).toMatchObject({ node: process.version, quick: true, note: 'a test run' });
      expect(['simd', 'scalar']).toContain(written.measured.backend);
      expect(Math.abs(Date.now() - Date.parse(String(written.measured.date)))).toBeLessThan(3_600_000);
      expect(written.measured.machine).toMatch(/\d+ cores/);
      // the shape the template's table stands for: the committed run's columns and rows, other numbers
      expect(written.tables.map((t) => t.columns)).toEqual(committed.tables.map((t) => t.columns));
      const [table] = written.tables;
      expect(table!.rows.map((r) => r[0])).toEqual(committed.tables[0]!.rows.map((r) => r[0]));
      expect(table!.title).toMatch(/^digamma over 1e\+4 values/);
      for (const row of table!.rows) {
        expect(row).toHaveLength(table!.columns.length);
        // times in ms and the speedups (the peer's time over fedmix's), as the bench prints them
        for (const j of [1, 2, 4, 5, 7]) expect(row[j]).toMatch(/^\d+\.\d\d$/);
        for (const j of [3, 6]) expect(row[j]).toMatch(/^\d+\.\d\dx$/);
      }
      const text = benchmarksMarkdown(ROOT, dir);
      for (const row of table!.rows) expect(text).toContain(`| ${row.join(' | ')} |`);
      expect(text).toContain(`*Measured ${String(written.measured.date).slice(0, 10)} by \`npm run bench -- special --quick\``);
      expect(text).toContain('; a test run.*');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
