#!/usr/bin/env node
/**
 * `npm run demo:web`: builds the browser demo with Vite into demo/dist/ and
 * serves it on 127.0.0.1 (Vite's preview server), printing the URL.
 *
 *   node demo/serve.mjs [--port 5180] [--no-build]
 *
 * --port 0 takes a free port. Needs dist/ (npm run build, or scripts/setup.sh,
 * which `npm run demo:web` runs first).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build, preview } from 'vite';

const configFile = fileURLToPath(new URL('./vite.config.mjs', import.meta.url));
const usage = 'usage: node demo/serve.mjs [--port N] [--no-build]';
let args;
try {
  args = parseArgs({ options: { port: { type: 'string', default: '5180' }, 'no-build': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } } }).values;
} catch (e) {
  console.error(`${e.message}\n${usage}`);
  process.exit(2);
}
if (args.help) {
  console.log(`${usage}\n  --port N     the port on 127.0.0.1 (default 5180; 0 takes a free one)\n  --no-build   serve demo/dist/ as it is`);
  process.exit(0);
}
const port = Number(args.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be an integer in [0, 65535], got ${args.port}\n${usage}`);
  process.exit(2);
}
if (!existsSync(fileURLToPath(new URL('../dist/experiments.js', import.meta.url)))) {
  console.error('dist/experiments.js not found: build the package first (npm run build, or bash scripts/setup.sh)');
  process.exit(1);
}
if (!args['no-build']) {
  const t0 = performance.now();
  await build({ configFile });
  console.error(`demo: built demo/dist/ in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const server = await preview({ configFile, preview: { host: '127.0.0.1', port, strictPort: port !== 0, open: false } });
const address = server.httpServer.address();
// the URL on a line of its own (a test reads it)
console.log(`demo: http://127.0.0.1:${address.port}/`);
const stop = () => server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
