import { defineConfig } from 'vitest/config';

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
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // each file gets its own module state, so a file can load the scalar build
    isolate: true,
    pool: 'forks',
    // two files at a time on a two-core machine (vitest's default leaves one core idle): most files wait on processes,
    // brokers and sockets as much as on the CPU, and no test asserts a time
    maxWorkers: 2,
    minWorkers: 1,
  },
});
