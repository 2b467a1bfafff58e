// Records what the four federated algorithms produce at fixed seeds, so that a
// change of their plumbing (the runtime port of issue 10) can be checked to
// give the same numbers: test/runtime-port.test.ts runs the same cases and
// compares with test/fixtures/runtime-port.json exactly.
//
// The committed fixture was written at commit 07495bd, before the port, from
// dist/ (npm run build). Regenerate it only when a numeric change is intended,
// and say so in the commit.
//
//   node scripts/record-runtime-port.mjs > test/fixtures/runtime-port.json
import { writeFileSync } from 'node:fs';
import * as fedmix from '../dist/index.js';
import { runtimePortCases } from '../test/runtime-port-cases.mjs';

await fedmix.init();
const out = {};
for (const [name, run] of Object.entries(runtimePortCases(fedmix))) out[name] = run();
const text = JSON.stringify(out) + '\n';
if (process.argv[2]) writeFileSync(process.argv[2], text);
else process.stdout.write(text);
