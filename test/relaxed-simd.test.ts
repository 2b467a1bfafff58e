/**
 * The relaxed-SIMD build (docs/wasm.md, "Relaxed SIMD"): init() takes it only
 * where the engine validates relaxed SIMD, and its networks agree with the
 * SIMD build's within rounding. Node 20 validates relaxed SIMD only with
 * --experimental-wasm-relaxed-simd, so the agreement runs in a child process
 * with that flag (test/support/relaxed-agreement.mjs, on dist/).
 *
 * Bounds: the fused multiply-add rounds once where the SIMD build rounds twice,
 * so results differ from the SIMD build's by a few ulps per product, which
 * training carries on: within 1e-5 (relative, normwise) for one batch's outputs
 * and gradients and the fixtures' single epochs (measured at most 3.2e-7), as
 * the SIMD and scalar builds are held to; after whole trainings (FedAvg on the
 * digits, 3 epochs of Fashion-MNIST) losses and predicted probabilities within
 * 1e-4 (measured 3.6e-6) and parameters within 1e-2 (measured 1.3e-3); against
 * PyTorch the same 1e-5 as the SIMD build, and the accuracy within 1 point.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { init, WasmError } from '../ts/index.js';
import { resetForTests } from '../ts/wasm/loader.js';
import { engineHasRelaxedSimd } from '../ts/wasm/source.js';

const DIGITS_CSV_GZ = '/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz';

interface Agreement {
  relaxedInfo: { simd: boolean; backend: string; features: string[] };
  simdInfo: { simd: boolean; backend: string; features: string[] };
  builds: Record<string, number>;
  identical: string[];
  torch: Record<string, { relaxed: number; simd: number }>;
  accuracy: { relaxed: number; simd: number };
}

describe('relaxed SIMD', () => {
  test("init() takes the relaxed build only where the engine validates it; 'relaxed' asked for elsewhere is a typed error", async () => {
    resetForTests();
    if (engineHasRelaxedSimd()) {
      // Node 22 and later
      expect((await init({ features: [] })).backend).toBe('relaxed');
    } else {
      const e = await init({ backend: 'relaxed', features: [] }).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(WasmError);
      expect((e as Error).message).toMatch(/does not validate WebAssembly relaxed SIMD .*--experimental-wasm-relaxed-simd/);
      expect(await init({ features: [] })).toEqual({ simd: true, backend: 'simd', features: [] });
    }
    resetForTests();
  });

  test('the relaxed build agrees with the SIMD build and PyTorch on the fixtures, FedAvg on the digits and Fashion-MNIST', () => {
    const script = fileURLToPath(new URL('./support/relaxed-agreement.mjs', import.meta.url));
    const r = spawnSync(process.execPath, ['--experimental-wasm-relaxed-simd', script, DIGITS_CSV_GZ], { encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const a = JSON.parse(r.stdout) as Agreement;
    expect(a.relaxedInfo).toEqual({ simd: true, backend: 'relaxed', features: ['nn'] });
    expect(a.simdInfo).toEqual({ simd: true, backend: 'simd', features: ['nn'] });
    console.log('relaxed vs SIMD (relative, normwise):', JSON.stringify(a.builds), 'accuracy', JSON.stringify(a.accuracy));
    for (const [key, diff] of Object.entries(a.builds)) {
      // one batch or one fixture epoch: a few ulps; whole trainings carry the rounding on through every step, and
      // Adam's step (m / sqrt(v)) turns an ulp of a near-zero gradient into a visible step: parameters drift more
      // than the losses and predictions they give
      const bound = !/^(fedavg|fashion)/.test(key) ? 1e-5 : /parameters/.test(key) ? 1e-2 : 1e-4;
      expect(diff, key).toBeLessThan(bound);
    }
    // the fused multiply-adds ran: the builds' GEMMs round differently, so trained parameters are not the same bits
    expect(a.builds['fashion-mnist parameters']).toBeGreaterThan(0);
    expect(a.builds['fedavg digits parameters']).toBeGreaterThan(0);
    for (const [key, { relaxed, simd }] of Object.entries(a.torch)) {
      expect(simd, `SIMD ${key}`).toBeLessThan(1e-5);
      expect(relaxed, `relaxed ${key}`).toBeLessThan(1e-5);
    }
    expect(Math.abs(a.accuracy.relaxed - a.accuracy.simd)).toBeLessThan(0.01);
    expect(a.accuracy.simd).toBeGreaterThan(0.7);
  }, 120_000);
});
