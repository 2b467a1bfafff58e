/**
 * The built package (dist/, `npx tsup`) shows users what is theirs: the
 * declarations leave out what the sources mark @internal (fitResident,
 * fromHandle, pointers, ...; tsup's dts with stripInternal), and classes keep
 * their names in both module formats and through a user's minifier (bundling
 * would print Matrix as _Matrix, minifying as e; ts/class-name.ts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, test } from 'vitest';

const dist = (f: string) => fileURLToPath(new URL(`../dist/${f}`, import.meta.url));
const CLASSES = ['Matrix', 'GaussianMixture', 'KMeans', 'PCA', 'StandardScaler', 'DirichletMultinomialMixture', 'OneClassSVM', 'Rng', 'InvalidParameterError'];

type Exports = Record<string, unknown>;

/** The exported classes of a module, by export name. */
function classes(exports: Exports): [string, { name: string }][] {
  return Object.entries(exports).filter((e): e is [string, { name: string }] => typeof e[1] === 'function' && /^class\b/.test(Function.prototype.toString.call(e[1])));
}

/** Every exported class is named as exported. */
function expectNamed(exports: Exports, label: string): void {
  const found = classes(exports);
  expect(found.length, label).toBeGreaterThan(40);
  expect(found.filter(([name, cls]) => cls.name !== name).map(([name, cls]) => `${name} as ${cls.name}`), label).toEqual([]);
}

/** Every exported error names its instances as exported, and its class too. */
function expectErrorsNamed(exports: Exports, label: string): void {
  const errors = classes(exports).filter(([name]) => name.endsWith('Error') && name !== 'ContributionError');
  expect(errors.length, label).toBeGreaterThanOrEqual(11);
  for (const [name, cls] of errors) {
    expect(cls.name, `${label}: ${name}`).toBe(name);
    expect(new (cls as unknown as new (m: string) => Error)('m').name, `${label}: ${name}`).toBe(name);
  }
}

describe('the built package', () => {
  test('declarations hold no @internal member', () => {
    // index.d.ts and the declaration chunks it shares with node.d.ts and inline.d.ts
    const files = readdirSync(dist('')).filter((f) => f.endsWith('.d.ts'));
    expect(files).toContain('index.d.ts');
    const dts = files.map((f) => readFileSync(dist(f), 'utf8')).join('\n');
    for (const name of ['fitResident', 'fromHandle', 'scoreSamplesResident', 'pointers(']) expect(dts, name).not.toContain(name);
    expect(dts).not.toContain('@internal');
    // the public API is all still there
    expect(dts).toMatch(/declare class GaussianMixture\b/);
    expect(dts).toMatch(/static fit\(histograms: MatrixLike, options\?: MdmCentralFitOptions\)/);
  });

  test('classes keep their names (ESM and CommonJS)', async () => {
    const esm = (await import(dist('index.js'))) as Exports;
    const cjs = createRequire(import.meta.url)(dist('index.cjs')) as Exports;
    for (const c of CLASSES) {
      expect((esm[c] as { name: string }).name, c).toBe(c);
      expect((cjs[c] as { name: string }).name, c).toBe(c);
    }
    expectNamed(esm, 'index.js');
    expectNamed(cjs, 'index.cjs');
    // fedmix/node's own classes (WorkerTransport, ...)
    for (const [label, node] of [['node.js', await import(dist('node.js'))], ['node.cjs', createRequire(import.meta.url)(dist('node.cjs'))]] as [string, Exports][]) {
      const found = classes(node);
      expect(found.map(([name]) => name), label).toContain('WorkerTransport');
      for (const [name, cls] of found) expect(cls.name, `${label}: ${name}`).toBe(name);
    }
    expectErrorsNamed(esm, 'index.js');
  });

  test("errors keep their names through a user's minifier", async () => {
    // a user's production build: dist/index.js bundled and minified, without esbuild's keepNames
    const dir = mkdtempSync(join(tmpdir(), 'fedmix-minified-'));
    try {
      const out = join(dir, 'bundle.mjs');
      await build({ entryPoints: [dist('index.js')], bundle: true, minify: true, format: 'esm', platform: 'node', external: ['mqtt'], outfile: out, logLevel: 'silent' });
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      expectErrorsNamed((await import(pathToFileURL(out).href)) as Exports, 'minified');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
