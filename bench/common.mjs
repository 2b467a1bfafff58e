// Shared by the benchmarks: timing statistics, seeded data, the Python peer
// runner, quick mode, and the writer of bench/results/bench-<suite>.json.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvToMatrix, init, Matrix, MinMaxScaler, parseCsv, Rng } from '../dist/index.js';

/**
 * Quick mode (`--quick` on the command line, or FEDMIX_BENCH_QUICK=1): every
 * suite at small sizes and few repeats, to check that it runs and writes
 * well-formed results. Its times mean nothing.
 */
export const QUICK = process.argv.includes('--quick') || process.env.FEDMIX_BENCH_QUICK === '1';

/** The normal size, or the quick one in quick mode. */
export const sized = (normal, quick) => (QUICK ? quick : normal);

export function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * fn once to warm up (unless `warmUp` is false), then `repeats` timed runs,
 * each given its index: the median milliseconds and the last result.
 */
export function timed(fn, repeats, { warmUp = true } = {}) {
  if (warmUp) fn(0);
  const ms = [];
  let out;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    out = fn(r);
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), out };
}

/** A seeded xorshift32 source of uniform numbers in (0, 1). */
export function uniform(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s + 0.5) / 2 ** 32;
  };
}

/** Gaussian blobs, column-major, from a seeded xorshift generator. */
export function blobs(n, d, k, seed) {
  const u = uniform(seed);
  const m = Matrix.zeros(n, d);
  for (let i = 0; i < n; i++) {
    const c = i % k;
    for (let j = 0; j < d; j++) m.data[j * n + i] = Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u()) + ((c * 7 + j * 3) % 11) * 0.8;
  }
  return m;
}

/** shuttle.csv (58,000 x 9, without its label), min-max scaled; every `step`-th row. */
export function loadShuttle(step = 1) {
  const t = parseCsv(readFileSync(new URL('../../shared/datasets/shuttle.csv', import.meta.url), 'utf8'));
  const X = new MinMaxScaler().fitTransform(csvToMatrix(t, { exclude: ['label'] }).X);
  return step === 1 ? X : X.selectRows(Array.from({ length: Math.ceil(X.nRows / step) }, (_, i) => i * step));
}

/** nClients IID shares of the rows, equal in size, from a seeded permutation (the pipelines' cost hardly depends on the split). */
export function iidShares(X, nClients, seed) {
  const rng = new Rng(seed);
  const order = rng.permutation(X.nRows);
  rng.dispose();
  const size = Math.floor(X.nRows / nClients);
  return Array.from({ length: nClients }, (_, c) => X.selectRows(order.subarray(c * size, (c + 1) * size)));
}

export const scratch = mkdtempSync(join(tmpdir(), 'fedmix-bench-'));

/** Writes a Float64Array (little-endian) for a peer to read; returns the path. */
export function writeF64(name, values) {
  const path = join(scratch, name);
  writeFileSync(path, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  return path;
}

/** Writes the column-major values of a Matrix for a peer to read. */
export function writeMatrix(name, m) {
  return writeF64(name, m.data);
}

function peerCommand(script, job, threads = 1) {
  const jobPath = join(scratch, `job-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(jobPath, JSON.stringify(job));
  return {
    command: '/usr/bin/python3',
    args: [new URL(`./peers/${script}`, import.meta.url).pathname, jobPath],
    env: { ...process.env, OMP_NUM_THREADS: String(threads), OPENBLAS_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) },
    jobPath,
  };
}

const lastJson = (text) => JSON.parse(text.trim().split('\n').pop());

/** Runs a Python peer (Debian's interpreter, one BLAS thread unless `threads` says more) with a job file; returns its JSON. */
export function runPeer(script, job, threads = 1) {
  const c = peerCommand(script, job, threads);
  const r = spawnSync(c.command, c.args, { env: c.env, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`peer ${script} failed: ${r.stderr}`);
  return lastJson(r.stdout);
}

/**
 * Starts a Python peer as runPeer does, without waiting: it runs while this
 * process computes (its output goes to files, so a busy event loop cannot
 * stall it). `done` resolves to its JSON once it has exited.
 */
export function startPeer(script, job) {
  const c = peerCommand(script, job);
  const outPath = `${c.jobPath}.out`;
  const errPath = `${c.jobPath}.err`;
  const out = openSync(outPath, 'w');
  const err = openSync(errPath, 'w');
  const child = spawn(c.command, c.args, { env: c.env, stdio: ['ignore', out, err] });
  closeSync(out);
  closeSync(err);
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`peer ${script} failed: ${readFileSync(errPath, 'utf8')}`));
      else resolve(lastJson(readFileSync(outPath, 'utf8')));
    });
  });
  return { done };
}

/** A table as text, for the console. */
export function table(headers, rows) {
  const widths = headers.map((h, j) => Math.max(h.length, ...rows.map((r) => String(r[j]).length)));
  const line = (cells) => '| ' + cells.map((c, j) => String(c).padEnd(widths[j])).join(' | ') + ' |';
  return [line(headers), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...rows.map(line)].join('\n');
}

/** The 1, 5 and 15 minute load averages, as printed. */
const loadNow = () => loadavg().map((v) => Number(v.toFixed(2)));

/**
 * The results of one run of a suite: `begin` when the suite starts (it notes
 * the time and the machine's load), `print` each table as it is measured (a
 * title line, then the table), and `write` at the end:
 * bench/results/bench-<suite>.json (or in FEDMIX_BENCH_RESULTS), the file
 * scripts/benchmarks-md.mjs writes BENCHMARKS.md from:
 * { suite, command, measured, tables: [{ title, columns, rows }] }, cells as
 * printed; the command says --quick in quick mode. FEDMIX_BENCH_NOTE adds a note on the run (say, who else used the
 * machine) to `measured`.
 */
export function begin(suite, command) {
  if (QUICK && !command.includes('--quick')) command += ' --quick';
  const started = { at: new Date(), ms: performance.now(), load: loadNow() };
  const tables = [];
  return {
    print(title, columns, rows) {
      for (const [i, r] of rows.entries()) {
        if (r.length !== columns.length) throw new Error(`${suite}: row ${i} of "${title}" has ${r.length} cells for ${columns.length} columns`);
      }
      const t = { title, columns, rows: rows.map((r) => r.map(String)) };
      tables.push(t);
      console.log(`\n${title}`);
      console.log(table(columns, t.rows));
      return t;
    },
    async write() {
      const { backend } = await init();
      const note = process.env.FEDMIX_BENCH_NOTE;
      const measured = {
        date: started.at.toISOString(),
        seconds: Number(((performance.now() - started.ms) / 1000).toFixed(1)),
        node: process.version,
        backend,
        machine: `${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.platform} ${process.arch}`,
        load: { start: started.load, end: loadNow() },
        ...(QUICK ? { quick: true } : {}),
        ...(note ? { note } : {}),
      };
      const dir = process.env.FEDMIX_BENCH_RESULTS ?? fileURLToPath(new URL('./results/', import.meta.url));
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `bench-${suite}.json`);
      writeFileSync(path, `${JSON.stringify({ suite, command, measured, tables }, null, 1)}\n`);
      console.log(`(written: ${path})`);
      return path;
    },
  };
}
