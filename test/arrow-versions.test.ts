/**
 * The version matrix of the peer dependency: for apache-arrow 15 through 21,
 * a fresh project installs that version and the packed fedmix (npm pack of
 * dist/, shared with other files: test/support/packed.ts; so build first: `npx tsup`), then runs test/support/arrow-versions/
 * check.mjs (ESM) and check.cjs (CommonJS) there: a table of that version
 * fitted, its IPC bytes fitted, toArrow() an instance of that version's Table,
 * a dictionary label column used, nulls, and the messages' Arrow IPC codec
 * (a message encoded in each version's project decoded in every other's);
 * and fedmix's published types compiled against that version's.
 *
 * The projects are kept under the system temp folder (fedmix-arrow-versions/):
 * a project is installed with npm once per set of fedmix dependencies, and on
 * later runs only the new tarball is unpacked into node_modules/fedmix (what
 * npm install of a tarball does), so a repeated run takes seconds. Installs
 * run in parallel with --prefer-offline. When the npm registry is unreachable,
 * versions not installed yet are skipped with a message saying so.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, test } from 'vitest';
import { moduleGraph } from './support/dist-graph.js';
import { packedTarball } from './support/packed.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const VERSIONS = [15, 16, 17, 18, 19, 20, 21] as const;
const cache = join(tmpdir(), 'fedmix-arrow-versions');
const checks = join(root, 'test', 'support', 'arrow-versions');

interface Outcome {
  version?: string;
  checks?: Record<string, true | string>;
  cjs?: true | string;
  types?: true | string;
  /** the messages of every version's project, decoded in this one's */
  decoded?: (true | string)[];
  skipped?: string;
}
const outcomes = new Map<number, Outcome>();

/** npm with this machine's defaults, quiet. */
function npm(args: string[], cwd: string, timeout = 300_000) {
  return run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, timeout, maxBuffer: 16 << 20 });
}

async function registryReachable(): Promise<boolean> {
  try {
    await npm(['ping'], cache, 20_000);
    return true;
  } catch {
    return false;
  }
}

/** At most `limit` of the jobs at a time (two cores are shared here). */
async function pool<T>(items: readonly T[], limit: number, job: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: limit }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await job(item);
  }));
}

async function prepare(version: number, tarball: string, depsKey: string, online: boolean): Promise<void> {
  const dir = join(cache, `arrow-${version}`);
  const stamp = join(dir, 'installed.key');
  const key = `${version}\n${depsKey}`;
  const installed = existsSync(stamp) && readFileSync(stamp, 'utf8') === key && existsSync(join(dir, 'node_modules', 'apache-arrow'));
  if (installed) {
    // the dependencies are as installed: unpack only the new tarball, as npm would
    const target = join(dir, 'node_modules', 'fedmix');
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  } else {
    if (!online) {
      outcomes.set(version, { skipped: `apache-arrow@${version} is not installed in ${dir} yet and the npm registry is unreachable` });
      return;
    }
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `arrow-${version}-check`, private: true, version: '0.0.0' }));
    await npm(['install', '--prefer-offline', `apache-arrow@${version}`, tarball], dir);
    writeFileSync(stamp, key);
  }
  copyFileSync(join(checks, 'check.mjs'), join(dir, 'check.mjs'));
  copyFileSync(join(checks, 'check.cjs'), join(dir, 'check.cjs'));
  copyFileSync(join(checks, 'check-types.ts'), join(dir, 'check-types.ts'));
  const compilerOptions = { strict: true, noEmit: true, skipLibCheck: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: [] };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check-types.ts'] }));
  const esm = await run(process.execPath, ['check.mjs'], { cwd: dir, timeout: 120_000 });
  const cjs = await run(process.execPath, ['check.cjs'], { cwd: dir, timeout: 120_000 });
  // this repository's TypeScript over the project's types (fedmix's .d.ts and that apache-arrow's)
  const types = await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { cwd: dir, timeout: 120_000 }).then(
    () => true as const,
    (e: { stdout?: string; message: string }) => (e.stdout || e.message).slice(0, 2000),
  );
  outcomes.set(version, { ...(JSON.parse(esm.stdout.trim().split('\n').pop()!) as Outcome), ...(JSON.parse(cjs.stdout.trim().split('\n').pop()!) as Outcome), types });
}

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'index.js')) || !existsSync(join(root, 'dist', 'index.cjs'))) {
    throw new Error('dist/ is not built: run `bash scripts/build-wasm.sh && npx tsup` first');
  }
  mkdirSync(cache, { recursive: true });
  const { tarball } = packedTarball();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const depsKey = createHash('sha256').update(JSON.stringify([pkg.dependencies, pkg.peerDependencies])).digest('hex');
  const online = await registryReachable();
  await pool(VERSIONS, 4, (v) =>
    prepare(v, tarball, depsKey, online).catch((e: unknown) => {
      outcomes.set(v, { checks: { 'install and run': `${(e as Error).message}`.slice(0, 2000) } });
    }),
  );
  // every version's project decodes the message every other version's project encoded
  const ready = VERSIONS.filter((v) => outcomes.get(v)?.checks && existsSync(join(cache, `arrow-${v}`, 'message.bin')));
  for (const v of VERSIONS) {
    const o = outcomes.get(v);
    if (o?.checks && !ready.includes(v)) o.decoded = [`${join(cache, `arrow-${v}`, 'message.bin')} was not written by check.mjs`];
  }
  const messages = ready.map((v) => join(cache, `arrow-${v}`, 'message.bin'));
  await pool(ready, 4, async (v) => {
    const dir = join(cache, `arrow-${v}`);
    copyFileSync(join(checks, 'decode-messages.mjs'), join(dir, 'decode-messages.mjs'));
    const out = await run(process.execPath, ['decode-messages.mjs', ...messages], { cwd: dir, timeout: 120_000 }).catch((e: Error) => ({ stdout: JSON.stringify({ decoded: [e.message.slice(0, 500)] }) }));
    const last = out.stdout.trim().split('\n').pop()!;
    try {
      outcomes.get(v)!.decoded = (JSON.parse(last) as { decoded: (true | string)[] }).decoded ?? [`decode-messages.mjs printed ${last.slice(0, 300)}`];
    } catch {
      outcomes.get(v)!.decoded = [`decode-messages.mjs printed ${last.slice(0, 300)}`];
    }
  });
}, 900_000);

describe('apache-arrow peer versions, each in a fresh project with the packed fedmix', () => {
  test.for(VERSIONS)('apache-arrow %i', (version, ctx) => {
    const outcome = outcomes.get(version)!;
    const passed = Object.values(outcome.checks ?? {}).filter((r) => r === true).length;
    console.log(`apache-arrow ${outcome.version ?? version}: ${passed} of ${Object.keys(outcome.checks ?? {}).length} ESM checks, CommonJS ${outcome.cjs}, types ${outcome.types === true}, messages of ${outcome.decoded?.filter((d) => d === true).length} versions decoded`);
    if (outcome.skipped) {
      console.warn(`skipped: ${outcome.skipped}`);
      ctx.skip(outcome.skipped);
      return;
    }
    expect(outcome.version, 'the installed apache-arrow').toMatch(new RegExp(`^${version}\\.`));
    const failed = Object.entries(outcome.checks ?? {}).filter(([, r]) => r !== true);
    expect(failed, `apache-arrow ${outcome.version}`).toEqual([]);
    expect(Object.keys(outcome.checks ?? {})).toHaveLength(10);
    expect(outcome.cjs, 'CommonJS').toBe(true);
    expect(outcome.types, "fedmix's types over this version's").toBe(true);
    expect(outcome.decoded, "the messages every version's project encoded").toEqual(VERSIONS.map(() => true));
  });
});

test("the library's entries import apache-arrow, they do not bundle a copy", () => {
  // dist/web-worker.js alone bundles everything: a module Web Worker has no import map. Node's entries
  // (index-node, node) import apache-arrow, the others load it on demand (loadArrow: import()), and
  // dist/worker.js (a FedmixWorker's fits and federated clients: no Arrow data crosses it) not at all
  for (const file of ['index.js', 'index.cjs', 'index-node.js', 'index-node.cjs', 'node.js', 'node.cjs', 'experiments.js', 'experiments.cjs', 'worker.js', 'cli.cjs']) {
    const all = [...moduleGraph(file).values()].join('\n');
    if (file !== 'worker.js') expect(all, file).toMatch(/(from |require\(|import\()["']apache-arrow["']/);
    expect(all, file).not.toMatch(/class (RecordBatchReader|Table)\b/);
  }
});
