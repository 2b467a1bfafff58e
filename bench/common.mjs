// Shared by the benchmarks: timing statistics, seeded data, the Python peer runner.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Matrix } from '../dist/index.js';

export function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** fn once to warm up, then `repeats` timed runs: the median milliseconds and the last result. */
export function timed(fn, repeats) {
  fn();
  const ms = [];
  let out;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    out = fn();
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

function peerCommand(script, job) {
  const jobPath = join(scratch, `job-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(jobPath, JSON.stringify(job));
  return {
    command: '/usr/bin/python3',
    args: [new URL(`./peers/${script}`, import.meta.url).pathname, jobPath],
    env: { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
    jobPath,
  };
}

const lastJson = (text) => JSON.parse(text.trim().split('\n').pop());

/** Runs a Python peer (Debian's interpreter, one BLAS thread) with a job file; returns its JSON. */
export function runPeer(script, job) {
  const c = peerCommand(script, job);
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

export function table(headers, rows) {
  const widths = headers.map((h, j) => Math.max(h.length, ...rows.map((r) => String(r[j]).length)));
  const line = (cells) => '| ' + cells.map((c, j) => String(c).padEnd(widths[j])).join(' | ') + ' |';
  return [line(headers), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...rows.map(line)].join('\n');
}
