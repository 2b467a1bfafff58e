/**
 * Deno's and Bun's program (copied beside the packed fedmix by the test): the
 * checks in process, printed as one JSON line, then a client joining the
 * federation whose broker URL is argv's (mqtt:// over TCP, or ws://) with
 * argv's slice of the rows, printed as a second line.
 */
import * as fedmix from 'fedmix';
import { inProcess, joinFederation } from './checks.mjs';
import data from './data.json' with { type: 'json' };

const runtime = typeof globalThis.Deno === 'object' ? `deno ${globalThis.Deno.version.deno}` : typeof globalThis.Bun === 'object' ? `bun ${globalThis.Bun.version}` : 'unknown';
const [url, id, federation, password, slice] = globalThis.Deno ? globalThis.Deno.args : globalThis.process.argv.slice(2);
console.log(JSON.stringify({ runtime, ...(await inProcess(fedmix, { rows: data.rows })) }));
console.log(JSON.stringify(await joinFederation(fedmix, { rows: data.rows[Number(slice)], url, federation, id, password })));
