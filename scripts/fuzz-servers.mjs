#!/usr/bin/env node
// Fuzzes every server's receive path (test/support/fuzz-servers.mjs) with many
// mutated replies, on the built package: node scripts/fuzz-servers.mjs [runs per server] [seed]
// Prints, per server and mutation, how often the target client was excluded or
// kept (a harmless mutation), and every violation found; exits 1 if there is one.
import * as fedmix from '../dist/index.js';
import { fuzzServers, MUTATIONS } from '../test/support/fuzz-servers.mjs';

const runs = Number(process.argv[2] ?? 1000);
const seed = Number(process.argv[3] ?? 1);
await fedmix.init();
const started = performance.now();
const report = fuzzServers(fedmix, { seed, perServer: runs });
let violations = 0;
for (const [server, r] of Object.entries(report)) {
  console.log(`\n${server}: ${r.tried} mutated replies, ${r.excluded} excluded, ${r.kept} harmless and kept, ${r.violations.length} violations`);
  for (const m of MUTATIONS) {
    const c = r.byMutation[m];
    if (c) console.log(`  ${m.padEnd(50)} excluded ${String(c.excluded).padStart(5)}  kept ${String(c.kept).padStart(5)}`);
  }
  for (const v of r.violations) console.log(`  VIOLATION ${v}`);
  violations += r.violations.length;
}
console.log(`\nseed ${seed}, ${runs} per server, ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(violations > 0 ? 1 : 0);
