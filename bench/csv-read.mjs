// Reading a large CSV as every `--data FILE` of the CLI reads it (ts/cli/data.ts
// streams it through Papa Parse) into labelled features (labelledFromCsv, what
// `fedmix experiment`, `fedgem` and `communities` do next), in a child process
// whose peak resident set size (process.resourceUsage().maxRSS) is reported
// beside the file's size. The file is generated, seeded, in a temporary folder
// and removed afterwards.
//
//   node bench/csv-read.mjs                 a tall file: 1024 MB of 16 decimal features and a class column
//   node bench/csv-read.mjs --mb 256        a smaller tall file
//   node bench/csv-read.mjs --wide 1000000  a wide file: 1,000,000 features over 4 rows (column lookup)
//   --timeout S                             give up on the child after S seconds (default 600)
//
// Needs the sources' dependencies (npm install): the reading path is bundled from ts/ with esbuild.
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { uniform } from './common.mjs';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args[i + 1]);
};
const wide = arg('wide', 0);
const mb = arg('mb', 1024);
const timeout = arg('timeout', 600);

const dir = mkdtempSync(join(tmpdir(), 'fedmix-csv-read-'));
try {
  const csv = join(dir, 'data.csv');
  await generate(csv);
  const entry = join(dir, 'read.mjs');
  await bundle(entry);
  const bytes = statSync(csv).size;
  const r = spawnSync(process.execPath, [entry, csv], { encoding: 'utf8', timeout: timeout * 1000, maxBuffer: 1 << 20 });
  const what = wide ? `${wide} columns x 4 rows` : `${(bytes / 2 ** 20).toFixed(0)} MB`;
  if (r.error || r.status !== 0) {
    console.log(`csv read, ${what}: did not finish${r.error ? ` within ${timeout} s` : ` (status ${r.status}): ${r.stderr.split('\n').slice(0, 3).join(' ')}`}`);
  } else {
    const out = JSON.parse(r.stdout);
    console.log(
      `csv read, ${what} (${out.rows} rows x ${out.features} features): ${out.seconds.toFixed(2)} s (CPU ${out.cpuSeconds.toFixed(2)} s), peak RSS ${out.maxRssMB.toFixed(0)} MB ` +
        `(${(out.maxRssMB / (bytes / 2 ** 20)).toFixed(2)}x the file; an idle child peaks at ${out.idleRssMB.toFixed(0)} MB)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The seeded file: decimal features printed with 5 decimals and a class column c0..c9, or a wide file. */
async function generate(path) {
  const u = uniform(1);
  const normal = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const out = createWriteStream(path);
  const write = (s) => (out.write(s) ? undefined : new Promise((resolve) => out.once('drain', resolve)));
  if (wide) {
    await write(Array.from({ length: wide }, (_, j) => `f${j}`).join(',') + ',label\n');
    for (let i = 0; i < 4; i++) await write(Array.from({ length: wide }, () => normal().toFixed(3)).join(',') + `,c${i % 2}\n`);
  } else {
    const d = 16;
    await write(Array.from({ length: d }, (_, j) => `f${j}`).join(',') + ',label\n');
    let written = 0;
    for (let i = 0; written < mb * 2 ** 20; i++) {
      const rows = [];
      for (let r = 0; r < 1000; r++) {
        const k = (i * 1000 + r) % 10;
        rows.push(Array.from({ length: d }, (_, j) => (normal() + ((k + j) % 5)).toFixed(5)).join(',') + `,c${k}\n`);
      }
      const chunk = rows.join('');
      written += chunk.length;
      await write(chunk);
    }
  }
  await new Promise((resolve, reject) => out.end((e) => (e ? reject(e) : resolve())));
}

/** The child: the CLI's reader and labelledFromCsv, bundled from the sources. */
async function bundle(outfile) {
  const ts = (p) => JSON.stringify(fileURLToPath(new URL(`../ts/${p}`, import.meta.url)));
  const source = join(dir, 'read-entry.mjs');
  writeFileSync(
    source,
    `import { readDataFile } from ${ts('cli/data.ts')};
import { labelledFromCsv } from ${ts('experiment/dataset.ts')};
const idleRssMB = process.resourceUsage().maxRSS / 1024;
const t0 = performance.now();
const d = labelledFromCsv(await readDataFile(process.argv[2]), { label: 'label' });
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage();
console.log(JSON.stringify({ rows: d.X.nRows, features: d.X.nCols, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, maxRssMB: process.resourceUsage().maxRSS / 1024, idleRssMB }));
`,
  );
  await build({ entryPoints: [source], outfile, bundle: true, platform: 'node', format: 'esm', logLevel: 'error', external: ['parquet-wasm'] });
}
