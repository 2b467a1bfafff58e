/**
 * The built package (dist/, `npx tsup`) shows users what is theirs: the
 * declarations leave out what the sources mark @internal (fitResident,
 * fromHandle, pointers, ...; tsup's dts with stripInternal), and classes keep
 * their names in both module formats (keepNames: bundling would print Matrix
 * as _Matrix).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const dist = (f: string) => fileURLToPath(new URL(`../dist/${f}`, import.meta.url));
const CLASSES = ['Matrix', 'GaussianMixture', 'KMeans', 'PCA', 'StandardScaler', 'DirichletMultinomialMixture', 'OneClassSVM', 'Rng', 'InvalidParameterError'];

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
    const esm = (await import(dist('index.js'))) as Record<string, { name: string }>;
    const cjs = createRequire(import.meta.url)(dist('index.cjs')) as Record<string, { name: string }>;
    for (const c of CLASSES) {
      expect(esm[c]!.name, c).toBe(c);
      expect(cjs[c]!.name, c).toBe(c);
    }
  });
});
