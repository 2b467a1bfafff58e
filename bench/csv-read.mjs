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
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  const what = wide ? `${wide} columns x 4 rows` : `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const r = await run(entry, csv);
  const peak = (mb) => `peak RSS ${mb.toFixed(0)} MB (${(mb / (bytes / 2 ** 20)).toFixed(2)}x the file)`;
  if (r.status !== 0 || !r.out) {
    const why = r.timedOut ? `within ${timeout} s` : `(status ${r.status}${r.signal ? `, ${r.signal}` : ''}): ${r.err.split('\n').filter((l) => /error|heap/i.test(l)).slice(0, 2).join(' ')}`;
    console.log(`csv read, ${what}: did not finish ${why}; ${r.hwmMB ? peak(r.hwmMB) : 'peak RSS unknown'} by then, after ${r.cpuSeconds.toFixed(0)} s of CPU`);
  } else {
    const out = r.out;
    console.log(
      `csv read, ${what} (${out.rows} rows x ${out.features} features): ${out.seconds.toFixed(2)} s (CPU ${out.cpuSeconds.toFixed(2)} s), ${peak(out.maxRssMB)}; ` +
        `an idle child peaks at ${out.idleRssMB.toFixed(0)} MB`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
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
