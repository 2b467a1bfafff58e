// DirichletMultinomialMixture.fit (the central fit: Algorithm 1 and 100
// full-batch rounds of Algorithm 2 on the core's kernels, every row in one
// call per round) against fitMdm on the same 2,000 clients in the same run:
// the same full-batch algorithm through the federation runtime (one
// MdmClient per row, binary messages, the aggregator), and docs/algorithms/mdm.md's
// example configuration (cohorts of 1,000). The central and federated
// full-batch models must agree within 1e-9; the ratio is the point.
// Run: node bench/mdm-central.mjs (needs dist/, `npx tsup`).
import { DirichletMultinomialMixture, fitMdm, init } from '../dist/index.js';
import { table } from './common.mjs';

const M = 2_000;
const C = 62;
const K = 3;
const N_MAX = 400;
const ROUNDS = 100;

await init();
const truth = new DirichletMultinomialMixture({
  tau: [0.3, 0.3, 0.4],
  alpha: [Array.from({ length: C }, () => 0.1), Array.from({ length: C }, () => 1.0), Array.from({ length: C }, (_, j) => (j < 10 ? 2.0 : 0.2))],
  pi: Array.from({ length: K }, () => Array.from({ length: N_MAX }, (_, i) => (i >= 19 ? 1 / (N_MAX - 19) : 0))),
});
const { histograms } = truth.sample(M, { seed: 62 });
const time = (fn) => {
  const t = performance.now();
  const out = fn();
  return { out, ms: performance.now() - t };
};
const central = time(() => DirichletMultinomialMixture.fit(histograms, { nComponents: K, rounds: ROUNDS, maxCount: N_MAX, seed: 0 }));
const federated = time(() => fitMdm(histograms, { nComponents: K, rounds: ROUNDS, maxCount: N_MAX, seed: 0, encoding: 'none' }).model);
const readme = time(() => fitMdm(histograms, { nComponents: K, rounds: ROUNDS, cohort: 1000, initCohort: 1000, maxCount: N_MAX, seed: 0 }).model);
const worst = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]) / Math.max(Math.abs(b[i]), 1e-12)), 0);
const agree = Math.max(worst(central.out.alpha, federated.out.alpha), worst(central.out.tau, federated.out.tau), worst(central.out.pi, federated.out.pi));
if (!(agree < 1e-9)) throw new Error(`the central and federated full-batch models differ by ${agree} (relative)`);
console.log(`\nMDM fit, ${M} clients, C = ${C}, K = ${K}, N = ${N_MAX}, ${ROUNDS} rounds, seed 0 (one run each); central = federated full batch within ${agree.toExponential(1)}`);
console.log(table(['fit', 'seconds', 'central faster by'], [
  ['DirichletMultinomialMixture.fit (central, kernels)', (central.ms / 1000).toFixed(2), '1x'],
  ['fitMdm, every client every round (same model)', (federated.ms / 1000).toFixed(2), `${(federated.ms / central.ms).toFixed(1)}x`],
  ['fitMdm, cohorts of 1,000 (the docs' example)', (readme.ms / 1000).toFixed(2), `${(readme.ms / central.ms).toFixed(1)}x`],
]));
