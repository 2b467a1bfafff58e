// npm run bench: every benchmark, each printing its ratio to the peer measured
// in the same run and writing it to bench/results/bench-<suite>.json (from
// which scripts/benchmarks-md.mjs writes BENCHMARKS.md). Pass suite names to
// run a subset: npm run bench -- gmm-em. `--quick` (or FEDMIX_BENCH_QUICK=1):
// small sizes, to check that the suites run and write; FEDMIX_BENCH_RESULTS:
// another folder for the results; FEDMIX_BENCH_NOTE: a note on the run (say,
// who else used the machine) recorded in each result's `measured`.
import { init } from '../dist/index.js';

const SUITES = {
  'gmm-em': () => import('./gmm-em.mjs'),
  'gmm-float32': () => import('./gmm-float32.mjs'),
  threads: () => import('./threads.mjs'),
  special: () => import('./special.mjs'),
  lsa: () => import('./lsa.mjs'),
  fedgengmm: () => import('./fedgengmm.mjs'),
  mdm: () => import('./mdm.mjs'),
  fedgem: () => import('./fedgem.mjs'),
  federation: () => import('./federation.mjs'),
  ocsvm: () => import('./ocsvm.mjs'),
  nn: () => import('./nn.mjs'),
  feddistr: () => import('./feddistr.mjs'),
  communities: () => import('./communities.mjs'),
  'secure-aggregation': () => import('./secure-aggregation.mjs'),
  'secure-aggregation-federation': () => import('./secure-aggregation-federation.mjs'),
};

const info = await init();
console.log(`fedmix benchmarks: ${info.backend} build, Node ${process.version}`);
const wanted = process.argv.slice(2).filter((a) => a !== '--quick');
const unknown = wanted.filter((name) => !(name in SUITES));
if (unknown.length) throw new Error(`no suite ${unknown.join(', ')}; the suites: ${Object.keys(SUITES).join(', ')}`);
for (const [name, load] of Object.entries(SUITES)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const suite = await load();
  await suite.run();
}
