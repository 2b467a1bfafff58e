/**
 * Run by test/arrow-versions.test.ts inside a fresh project that installed one
 * apache-arrow version and the packed fedmix: every check of item "Arrow of
 * any version" against that version's own classes. Prints one JSON line:
 * { version, checks: { name: true | "what went wrong" } }.
 */
import { deepStrictEqual, ok } from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import * as f from 'fedmix';

const version = JSON.parse(readFileSync(new URL('./node_modules/apache-arrow/package.json', import.meta.url), 'utf8')).version;
const checks = {};
const check = (name, fn) => {
  try {
    fn();
    checks[name] = true;
  } catch (e) {
    checks[name] = `${e?.name}: ${e?.message}`.slice(0, 400);
  }
};

await f.init();
// two blobs, 240 rows: x as Float64, y as Float32 (so y's values are what Float32 holds)
let s = 7;
const u = () => ((s = (s * 1103515245 + 12345) % 2 ** 31), s / 2 ** 31);
const n = 240;
const x = Float64Array.from({ length: n }, (_, i) => (i % 2 ? 6 : -6) + 2 * (u() - 0.5));
const y = Float32Array.from({ length: n }, (_, i) => (i % 2 ? 3 : -3) + 2 * (u() - 0.5));
const labels = Array.from({ length: n }, (_, i) => (i % 2 ? 'right' : 'left'));
const table = new arrow.Table({ x: arrow.makeVector(x), y: arrow.makeVector(y) });
const matrix = f.Matrix.fromColumns([x, Float64Array.from(y)]);
const fit = (X) => {
  const gm = new f.GaussianMixture({ nComponents: 2, seed: 1 }).fit(X);
  const out = { means: Array.from(gm.means), weights: Array.from(gm.weights) };
  gm.dispose();
  return out;
};
const reference = fit(matrix);

check('one apache-arrow in the tree (no copy under fedmix)', () => ok(!existsSync(new URL('./node_modules/fedmix/node_modules/apache-arrow', import.meta.url))));
check('a table of this version is recognised', () => ok(f.isArrowTable(table) && f.isArrowVector(table.getChild('x'))));
check('fit(table)', () => deepStrictEqual(fit(table), reference));
check('fit(IPC file bytes)', () => deepStrictEqual(fit(arrow.tableToIPC(table, 'file')), reference));
check('fit(IPC stream bytes)', () => deepStrictEqual(fit(arrow.tableToIPC(table, 'stream')), reference));
check('distributedEM([table, IPC bytes, RecordBatch])', () => {
  const options = { nComponents: 2, featureRange: [-10, 10], seed: 2 };
  const parts = [table.slice(0, 80), arrow.tableToIPC(table.slice(80, 160)), table.slice(160).batches[0]];
  const mats = [[0, 80], [80, 160], [160, 240]].map(([a, b]) => matrix.selectRows(Array.from({ length: b - a }, (_, i) => a + i)));
  const got = f.distributedEM(parts, options);
  const want = f.distributedEM(mats, options);
  deepStrictEqual(Array.from(got.model.means), Array.from(want.model.means));
  got.model.dispose();
  want.model.dispose();
});
check("toArrow() returns this version's Table", () => {
  const gm = new f.GaussianMixture({ nComponents: 2, seed: 1 }).fit(table);
  const t = gm.toArrow();
  ok(t instanceof arrow.Table, 'GaussianMixture.toArrow()');
  deepStrictEqual(Array.from(t.getChild('weight').toArray()), reference.weights);
  deepStrictEqual(Array.from(t.getChild('mean').get(1).toArray()), reference.means.slice(2, 4));
  // and this version writes and reads it back
  deepStrictEqual(arrow.tableFromIPC(arrow.tableToIPC(t)).numRows, 2);
  ok(matrix.toArrow() instanceof arrow.Table, 'Matrix.toArrow()');
  ok(new f.KMeans({ nClusters: 2, seed: 1 }).fit(table).toArrow() instanceof arrow.Table, 'KMeans.toArrow()');
  const results = f.toArrowTable({ score: gm.scoreSamples(table), label: gm.predict(table), proba: gm.predictProba(table) });
  ok(results instanceof arrow.Table, 'toArrowTable');
  deepStrictEqual(results.schema.fields.map((fl) => fl.name), ['score', 'label', 'proba_0', 'proba_1']);
  ok(f.toArrowVector(gm.scoreSamples(table)) instanceof arrow.Vector, 'toArrowVector');
  ok(f.partitionToArrow(f.partition.iid(n, { clients: 3, seed: 1 })) instanceof arrow.Table, 'partitionToArrow');
  gm.dispose();
});
check('a dictionary label column as labels (partition and metrics)', () => {
  const dict = arrow.vectorFromArray(labels, new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()));
  ok(dict.type.typeId === arrow.Type.Dictionary);
  deepStrictEqual(f.partition.dirichlet(dict, { clients: 3, alpha: 0.5, seed: 3 }), f.partition.dirichlet(labels, { clients: 3, alpha: 0.5, seed: 3 }));
  deepStrictEqual(f.adjustedRandScore(dict, arrow.makeVector(Int32Array.from(labels, (l) => (l === 'right' ? 1 : 0)))), 1);
  const back = f.toArrowVector(Int32Array.of(1, 0), { classes: ['left', 'right'] });
  ok(back instanceof arrow.Vector && back.type.typeId === arrow.Type.Dictionary);
  deepStrictEqual([back.get(0), back.get(1)], ['right', 'left']);
});
check('nulls: an error naming the column, or dropped rows', () => {
  const holed = new arrow.Table({ x: arrow.vectorFromArray([1, null, 3, 4], new arrow.Float64()), y: arrow.vectorFromArray([1, 2, 3, 4], new arrow.Float64()) });
  let thrown;
  try {
    f.Matrix.fromArrow(holed);
  } catch (e) {
    thrown = e;
  }
  ok(thrown instanceof f.InvalidDataError && /column "x" has 1 null/.test(thrown.message), String(thrown));
  deepStrictEqual(f.Matrix.fromArrow(holed, { nulls: 'drop' }).toRows(), [[1, 1], [3, 3], [4, 4]]);
});
check('messages: the Arrow IPC codec encodes and decodes, and this version reads the stream', () => {
  const m = f.message('dem/stats', 'client-7', 4, { rows: 120, logLikelihood: -321.5, nk: new Float64Array([60.5, 59.5]), s1: new Float64Array([1, 2, 3, 4]), s2: new Float64Array([0.5, 0.25]) });
  const bytes = f.encodeMessage(m, 'binary');
  const back = f.decodeMessage(bytes);
  deepStrictEqual(Array.from(back.payload.s1), [1, 2, 3, 4]);
  deepStrictEqual(back.round, 4);
  // for test/arrow-versions.test.ts to decode with every other version's project
  writeFileSync(new URL('./message.bin', import.meta.url), bytes);
  const t = arrow.tableFromIPC(bytes);
  deepStrictEqual(t.numRows, 1);
  deepStrictEqual(Array.from(t.getChild('payload.s1').get(0).toArray()), [1, 2, 3, 4]);
});

console.log(JSON.stringify({ version, checks }));
