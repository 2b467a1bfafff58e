// Secure aggregation's default clip (2^36) on real data: distributed EM with
// secureAggregation at its defaults (init 'separated': the default k-FED
// initialization sends local clusters, which are not sums) on abalone,
// satellite and shuttle, raw and scaled, dealt IID to 5 clients as the DEM
// tests deal them. Prints, per run, the refusals (an honest client refused by
// the clip would show here), the quantization bound and the largest
// difference of the model from the plain run's (relative to max(1, |x|)),
// then any ridge a full covariance's secure sum needed (docs/privacy.md).
//
//   bash scripts/setup.sh && node scripts/secure-aggregation-clip.mjs
import { readFileSync } from 'node:fs';
import * as f from '../dist/index.js';
import { labelledFromCsv } from '../dist/experiments.js';

await f.init();
const data = (name, drop = []) => labelledFromCsv(readFileSync(new URL(`../../shared/datasets/${name}.csv`, import.meta.url), 'utf8'), { label: 'label', drop });
const SETS = [
  { name: 'abalone', k: 3, read: () => data('abalone', ['sex']) },
  { name: 'satellite', k: 6, read: () => data('satellite') },
  { name: 'shuttle', k: 7, read: () => data('shuttle') },
];

function model(m) {
  const j = m.toJSON();
  return ['weights', 'means', 'covariances'].flatMap((k) => Array.from(j[k]));
}

console.log('dataset    scaling   K  cov   rounds  refused  max |x|   bound     max model diff (relative to max(1, |x|))');
for (const set of SETS) {
  const raw = set.read().X;
  for (const scaling of ['raw', 'standard']) {
    const X = scaling === 'raw' ? raw : new f.StandardScaler().fitTransform(raw);
    let largest = 0;
    for (const v of X.data) largest = Math.max(largest, Math.abs(v));
    const parts = f.partition.iid(X.nRows, { clients: 5, seed: 7 }).indices.map((rows) => X.selectRows(rows));
    for (const covarianceType of ['diag', 'full']) {
      const options = { nComponents: set.k, nFeatures: X.nCols, covarianceType, init: 'separated', seed: 1 };
      const clients = () => parts.map((p, i) => new f.DemClient(`client-${i}`, p));
      const plainServer = new f.DemServer(options);
      const plain = f.runFederationSync(plainServer, clients());
      const server = new f.DemServer(options);
      let line;
      try {
        const secure = await f.runFederation(server, clients(), { secureAggregation: {} });
        const bound = Math.max(...secure.history.filter((h) => h.secure).map((h) => h.secure.bound));
        const a = model(plain.model);
        const b = model(secure.model);
        const diff = a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i]) / Math.max(1, Math.abs(x))), 0);
        const refused = secure.failures.filter((x) => x.kind === 'refused' || x.excluded).length;
        line = `${String(secure.rounds).padStart(6)}  ${String(refused).padStart(7)}  ${largest.toExponential(2).padStart(8)}  ${bound.toExponential(2)}  ${diff.toExponential(2)}${plain.rounds === secure.rounds ? '' : ` (plain ${plain.rounds} rounds)`}`;
        if (refused) line += `  ${secure.failures[0].reason.slice(0, 160)}`;
        // what a full covariance's secure sum needed (DEM's quantizationRidge / quantizationEmpty metrics)
        for (const h of secure.history) {
          for (const r of h.metrics?.quantizationRidge ?? []) line += `  round ${h.round}: ridge ${r.ridge.toExponential(2)} on component ${r.component}`;
          if (h.metrics?.quantizationEmpty) line += `  round ${h.round}: component(s) ${h.metrics.quantizationEmpty.join(', ')} empty`;
        }
      } catch (e) {
        line = `failed: ${e.constructor.name}: ${e.message.slice(0, 200)}`;
      } finally {
        server.dispose();
        plainServer.dispose();
      }
      console.log(`${set.name.padEnd(10)} ${scaling.padEnd(9)} ${String(set.k).padEnd(2)} ${covarianceType.padEnd(5)} ${line}`);
    }
  }
}
