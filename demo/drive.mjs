/**
 * Drives the browser demo (plain JavaScript, shared by its test and by
 * demo/screenshot.mjs): starts `node demo/serve.mjs --port 0` (Vite build and
 * preview on a free loopback port), and runs the page with chosen controls.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVE = fileURLToPath(new URL('./serve.mjs', import.meta.url));

/** Builds (unless build is false) and serves the demo; resolves with its URL once it listens. */
export function startDemoServer({ build = true, timeoutMs = 60_000 } = {}) {
  const child = spawn(process.execPath, [SERVE, '--port', '0', ...(build ? [] : ['--no-build'])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const stop = () =>
    new Promise((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the demo server did not start within ${timeoutMs} ms:\n${log}`));
    }, timeoutMs);
    const read = (chunk) => {
      log += chunk;
      const m = /^demo: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], stop, log: () => log });
      }
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', (c) => (log += c));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the demo server exited (${code}):\n${log}`));
    });
  });
}

/**
 * Opens the demo, sets the controls (partition, alpha, classes, clients,
 * repeats, seed: any subset) and runs it; resolves with the page's
 * window.fedmixDemo once the run is done (or has failed).
 */
export async function runDemo(page, url, controls = {}, { timeoutMs = 120_000 } = {}) {
  await page.goto(url);
  await page.waitForSelector('body[data-state="ready"], body[data-state="failed"]', { timeout: 30_000 });
  if ('partition' in controls) await page.selectOption('select[name="partition"]', controls.partition);
  for (const key of ['alpha', 'classes', 'clients', 'repeats', 'seed']) {
    if (key in controls) await page.fill(`input[name="${key}"]`, String(controls[key]));
  }
  await page.click('#run');
  await page.waitForSelector('body[data-state="done"], body[data-state="failed"]', { timeout: timeoutMs });
  return page.evaluate(() => globalThis.fedmixDemo);
}
