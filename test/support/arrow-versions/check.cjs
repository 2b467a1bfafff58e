/**
 * The CommonJS side of check.mjs: require('fedmix') takes the same peer
 * apache-arrow as require('apache-arrow'). Prints { cjs: true | "error" }.
 */
const arrow = require('apache-arrow');
const f = require('fedmix');

(async () => {
  try {
    await f.init();
    const table = new arrow.Table({ x: arrow.makeVector(Float64Array.from({ length: 40 }, (_, i) => (i % 2 ? 5 : -5) + (i % 7) / 7)) });
    const gm = new f.GaussianMixture({ nComponents: 2, seed: 1 }).fit(arrow.tableToIPC(table));
    if (!(gm.toArrow() instanceof arrow.Table)) throw new Error("toArrow() is not this apache-arrow's Table");
    if (!(f.Matrix.from(table).toArrow() instanceof arrow.Table)) throw new Error("Matrix.toArrow() is not this apache-arrow's Table");
    console.log(JSON.stringify({ cjs: true }));
  } catch (e) {
    console.log(JSON.stringify({ cjs: `${e && e.name}: ${e && e.message}` }));
  }
})();
