#!/usr/bin/env node
/**
 * The numbers of docs/privacy.md's distributed-DP section: Skellam draws a
 * second (WASM, through skellamNoise) at several mu, and epsilon at delta 1e-5
 * of calibrated Skellam shares (distributedNoise: 100 clients, threshold 60,
 * 100,000 values of L2 norm <= 1) against the Gaussian mechanism at the same
 * noise multiplier, without subsampling.
 *
 *     bash scripts/setup.sh && node scripts/skellam-numbers.mjs
 */
import { distributedNoise, init, privacyEpsilon, skellamNoise } from '../dist/index.js';

await init();
for (const mu of [0.5, 5, 50, 1e4, 1e9, 2 ** 48]) {
  skellamNoise(1000, mu);
  const n = 1_000_000;
  const t = performance.now();
  skellamNoise(n, mu);
  console.log(`mu ${mu}: ${(n / ((performance.now() - t) / 1000) / 1e6).toFixed(2)} M draws/s`);
}
for (const z of [0.8, 2, 5, 10]) {
  const noise = distributedNoise({ clip: 1, noiseMultiplier: z, length: 100_000, clients: 100, threshold: 60 });
  for (const steps of [1, 50]) {
    const sk = privacyEpsilon({ ...noise.step, steps, delta: 1e-5 });
    const g = privacyEpsilon({ noiseMultiplier: z, samplingRate: 1, steps, delta: 1e-5 });
    console.log(
      `z ${z}, ${steps} rounds: skellam epsilon ${sk.epsilon.toPrecision(5)} (order ${sk.order}), gaussian ${g.epsilon.toPrecision(5)} (order ${g.order});` +
        ` share mu ${noise.skellamMu.toPrecision(4)}, scale 2^${Math.log2(noise.fixedPoint.scale)}, noise sd ${noise.stddev.toPrecision(6)}`,
    );
  }
}
