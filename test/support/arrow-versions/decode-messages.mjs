/**
 * Run by test/arrow-versions.test.ts in each version's project with the paths
 * of the messages every project's check.mjs encoded: fedmix decodes each (the
 * schema message of every apache-arrow version is read by this one's fedmix)
 * and this apache-arrow version reads each stream. Prints { decoded: [...] }:
 * true, or what went wrong, per path.
 */
import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';
import { decodeMessage, init } from 'fedmix';

await init();
const decoded = process.argv.slice(2).map((path) => {
  try {
    const bytes = new Uint8Array(readFileSync(path));
    const m = decodeMessage(bytes);
    const s1 = Array.from(m.payload.s1);
    if (m.kind !== 'dem/stats' || m.round !== 4 || s1.join() !== '1,2,3,4') throw new Error(`decoded ${JSON.stringify({ kind: m.kind, round: m.round, s1 })}`);
    const t = tableFromIPC(bytes);
    if (Array.from(t.getChild('payload.nk').get(0).toArray()).join() !== '60.5,59.5') throw new Error('apache-arrow read other values');
    return true;
  } catch (e) {
    return `${path}: ${e?.name}: ${e?.message}`.slice(0, 300);
  }
});
console.log(JSON.stringify({ decoded }));
