// Reading a large CSV as every `--data FILE` of the CLI reads it (ts/cli/data.ts
// streams it through Papa Parse) into labelled features (labelledFromCsv, what
// `fedmix experiment`, `fedgem` and `communities` do next), in a child process
// whose peak resident set size (process.resourceUsage().maxRSS) is reported
// beside the file's size. The file is generated, seeded, in a temporary folder
// and removed afterwards.
//
//   node bench/csv-read.mjs                 the table of BENCHMARKS.md: tall files of 1024 and 64 MB (16
//                                           decimal features and a class column), wide files of 100,000 and
//                                           1,000,000 features over 4 rows (column lookup)
//   node bench/csv-read.mjs --mb 256        one tall file
//   node bench/csv-read.mjs --wide 1000000  one wide file
//   --timeout S                             give up on a child after S seconds (default 600)
//   --quick                                 a 2 MB tall file and a 2,000-column wide one
// Writes bench/results/bench-csv-read.json (bench/common.mjs).
//
// Needs the sources' dependencies (npm install): the reading path is bundled from ts/ with esbuild.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { begin, QUICK, sized, uniform } from './common.mjs';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args[i + 1]);
};
const timeout = arg('timeout', 600);
/** the files to read: one given by --mb or --wide, or the table's four */
const CASES = args.includes('--wide')
  ? [{ wide: arg('wide') }]
  : args.includes('--mb')
    ? [{ mb: arg('mb') }]
    : sized([{ mb: 1024 }, { mb: 64 }, { wide: 100_000 }, { wide: 1_000_000 }], [{ mb: 2 }, { wide: 2_000 }]);

const results = begin('csv-read', `node bench/csv-read.mjs${process.argv.slice(2).map((a) => ` ${a}`).join('')}`);
const dir = mkdtempSync(join(tmpdir(), 'fedmix-csv-read-'));
const rows = [];
try {
  const entry = join(dir, 'read.mjs');
  await bundle(entry);
  for (const c of CASES) rows.push(await measure(entry, c));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
results.print(
  `Reading CSV as the CLI's --data does (the streaming reader, then labelledFromCsv), in a child process: its peak RSS and CPU time${QUICK ? ' (quick mode)' : ''}`,
  ['file', 'peak RSS', 'CPU', 'wall'],
  rows,
);
await results.write();

/** One file generated, read in a child, and removed: its row of the table. */
async function measure(entry, { mb = 0, wide = 0 }) {
  const csv = join(dir, 'data.csv');
  await generate(csv, { mb, wide });
  const bytes = statSync(csv).size;
  const r = await run(entry, csv);
  rmSync(csv, { force: true });
  const fileMB = bytes / 2 ** 20;
  const peak = (rss) => `${rss.toLocaleString('en-US', { maximumFractionDigits: 0 })} MB${wide ? '' : ` (${(rss / fileMB).toFixed(2)}x the file)`}`;
  if (r.status !== 0 || !r.out) {
    const why = r.timedOut ? `not finished within ${timeout} s` : `failed (status ${r.status}${r.signal ? `, ${r.signal}` : ''}): ${r.err.split('\n').filter((l) => /error|heap/i.test(l)).slice(0, 2).join(' ')}`;
    const what = wide ? `${wide.toLocaleString('en-US')} columns x 4 rows` : `${fileMB.toFixed(0)} MB`;
    return [what, r.hwmMB ? `${peak(r.hwmMB)}, then ${why}` : why, `${r.cpuSeconds.toFixed(0)} s, unfinished`, '-'];
  }
  const out = r.out;
  const what = wide
    ? `${out.features.toLocaleString('en-US')} columns x ${out.rows} rows`
    : `${fileMB.toFixed(0)} MB, ${out.rows.toLocaleString('en-US')} rows x ${out.features} features and a class`;
  console.log(`csv read, ${what}: an idle child peaks at ${out.idleRssMB.toFixed(0)} MB`);
  return [what, peak(out.maxRssMB), `${out.cpuSeconds.toFixed(2)} s`, `${out.seconds.toFixed(2)} s`];
}

/**
 * Runs the child; on Linux its peak RSS so far (VmHWM) and CPU time are read
 * from /proc every second, so a child that runs out of time or memory still
 * reports what it reached.
 */
function run(entry, csv) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, csv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let err = '';
    let hwmMB = 0;
    let cpuSeconds = 0;
    let timedOut = false;
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (err += b));
    const poll = setInterval(() => {
      try {
        const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (kb) hwmMB = Number(kb[1]) / 1024;
        // utime and stime, in clock ticks (100 a second), fields 14 and 15 of stat, after the parenthesized name
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
        cpuSeconds = (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        // not Linux, or the child has just ended
      }
    }, 1000);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeout * 1000);
    child.on('close', (status, signal) => {
      clearInterval(poll);
      clearTimeout(timer);
      let out;
      try {
        out = JSON.parse(stdout);
      } catch {
        out = undefined;
      }
      resolve({ status, signal, out, err, hwmMB, cpuSeconds, timedOut });
    });
  });
}

/** The seeded file: decimal features printed with 5 decimals and a class column c0..c9, or a wide file. */
async function generate(path, { mb, wide }) {
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
import { labelledFromCsv } from ${ts('experiments/dataset.ts')};
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
