import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Each test file's seconds in a whole-suite run (scripts/test-durations.mjs writes the table). vitest
 * orders by its own results cache, which a clean checkout does not have: it then starts the largest
 * files first, and a short file can be large while a long one (processes, browsers, npm) is small and
 * ends up running alone at the end. Longest first, from this table, keeps both workers busy to the end.
 */
const durations = JSON.parse(readFileSync(new URL('./test/support/durations.json', import.meta.url), 'utf8')) as Record<string, number>;

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order (its cache, else size) for files the table does not know yet; they go first, being unknown
    const known = (f: TestSpecification) => durations[relative(f.project.config.root, f.moduleId)] ?? Infinity;
    return (await super.sort(files)).sort((a, b) => known(b) - known(a));
  }
}

export default defineConfig({
  plugins: [
    {
      // CSV datasets are imported as text, as tsup's loader does for the CLI
      name: 'csv-as-text',
      transform(code, id) {
        return id.endsWith('.csv') ? { code: `export default ${JSON.stringify(code)};`, map: null } : undefined;
      },
    },
  ],
  test: {
    include: ['test/**/*.test.ts'],
    // apache-arrow loaded at once, as fedmix's Node entry does (ts/index-node.ts)
    setupFiles: ['test/support/arrow-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // each file gets its own module state, so a file can load the scalar build
    isolate: true,
    pool: 'forks',
    // two files at a time on a two-core machine (vitest's default leaves one core idle): most files wait on processes,
    // brokers and sockets as much as on the CPU, and no test asserts a time
    maxWorkers: 2,
    minWorkers: 1,
    sequence: { sequencer: LongestFirst },
  },
});
