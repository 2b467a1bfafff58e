// npm run bench: every benchmark, each printing its ratio to the peer measured
// in the same run. Pass suite names to run a subset: npm run bench -- gmm-em
import { init } from '../dist/index.js';

const SUITES = {
  'gmm-em': () => import('./gmm-em.mjs'),
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
};

const info = await init();
console.log(`fedmix benchmarks: ${info.backend} build, Node ${process.version}`);
const wanted = process.argv.slice(2);
for (const [name, load] of Object.entries(SUITES)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const suite = await load();
  await suite.run();
}
