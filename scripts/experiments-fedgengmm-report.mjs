// Markdown tables for EXPERIMENTS.md from the JSON files that
// scripts/experiments-fedgengmm.sh writes to bench/results/fedgengmm/.
// usage: node scripts/experiments-fedgengmm-report.mjs [dir]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? new URL('../bench/results/fedgengmm/', import.meta.url).pathname;
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
const load = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'));
const DEMS = ['dem-separated', 'dem-subset', 'dem-kfed'];
const res = (r, m) => r.results.find((x) => x.method === m);
const pm = (x, k, d = 3) => `${x.mean[k].toFixed(d)} ± ${x.std[k].toFixed(d)}`;
const kb = (b) => (b === 0 ? '0' : b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(1)} MB` : `${(b / 1024).toFixed(1)} kB`);
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const excludedRuns = (x) => x.excluded.length;
/** mean excluded clients per repeat */
const excl = (r, m) => {
  const x = res(r, m);
  return x ? x.excluded.length / x.runs.length : 0;
};

// ---- runs of part a: dataset, scheme, alpha
const aRuns = files
  .filter((f) => f.startsWith('a-'))
  .map((f) => {
    const m = f.match(/^a-(.+)-(dir|shift)([\d.]+)\.json$/);
    return { file: f, ds: m[1], scheme: m[2] === 'dir' ? 'Dir' : 'shift/Quantity', alpha: Number(m[3]), r: load(f) };
  })
  .sort((a, b) => (a.ds === b.ds ? a.alpha - b.alpha : a.ds.localeCompare(b.ds)));
const order = ['letter', 'satellite', 'shuttle', 'anomaly_cardio', 'anomaly_thyroid', 'anomaly_pendigits', 'anomaly_waveform'];
aRuns.sort((a, b) => order.indexOf(a.ds) - order.indexOf(b.ds) || a.alpha - b.alpha);
const label = (x) => `${x.ds} K=${x.r.config.components}, ${x.scheme === 'Dir' ? `Dir(${x.alpha})` : `shift α=${x.alpha}`}`;

const out = [];
out.push('### (a) global log-likelihood (mean per training row)\n');
out.push(
  table(
    ['data, partition', 'FedGenGMM', 'DEM init 1 (separated)', 'DEM init 2 (subset)', 'DEM init 3 (k-FED)', 'central', 'gap to central', 'best DEM', 'within 5%', '≥ best DEM'],
    aRuns.map((x) => {
      const f = res(x.r, 'fedgengmm');
      const c = res(x.r, 'central');
      const dems = DEMS.map((m) => res(x.r, m));
      const best = dems.reduce((a, b) => (b.mean.logLikelihood > a.mean.logLikelihood ? b : a));
      const gap = (f.mean.logLikelihood - c.mean.logLikelihood) / Math.abs(c.mean.logLikelihood);
      const ge = f.mean.logLikelihood >= best.mean.logLikelihood;
      const onPar = !ge && best.mean.logLikelihood - f.mean.logLikelihood <= Math.max(f.std.logLikelihood, best.std.logLikelihood);
      return [
        label(x),
        pm(f, 'logLikelihood', 2),
        ...dems.map((d) => pm(d, 'logLikelihood', 2)),
        pm(c, 'logLikelihood', 2),
        `${(100 * gap).toFixed(1)}% (${(f.mean.logLikelihood - c.mean.logLikelihood).toFixed(2)} nats)`,
        best.method.replace('dem-', ''),
        Math.abs(gap) <= 0.05 || gap > 0 ? 'yes' : '**no**',
        ge ? 'yes' : onPar ? 'no (within 1 std)' : '**no**',
      ];
    }),
  ),
);

out.push('\n### (b) communication: rounds and bytes (mean over repeats and the three heterogeneity levels)\n');
const byDs = [...new Set(aRuns.map((x) => x.ds))];
const rowsB = [];
for (const ds of byDs) {
  const xs = aRuns.filter((x) => x.ds === ds);
  for (const m of ['fedgengmm', ...DEMS]) {
    const runs = xs.flatMap((x) => res(x.r, m).runs);
    const mean = (k) => runs.reduce((a, r) => a + r[k], 0) / runs.length;
    const sd = (k) => Math.sqrt(runs.reduce((a, r) => a + (r[k] - mean(k)) ** 2, 0) / (runs.length - 1));
    const perAlpha = xs.map((x) => res(x.r, m).mean.rounds.toFixed(1)).join(' / ');
    rowsB.push([`${ds} K=${xs[0].r.config.components}`, m, `${mean('rounds').toFixed(1)} ± ${sd('rounds').toFixed(1)}`, perAlpha, kb(mean('bytesUp')), kb(mean('bytesDown')), kb(mean('bytesUp') + mean('bytesDown'))]);
  }
}
out.push(table(['data', 'method', 'rounds', 'rounds per α (low → high)', 'bytes up', 'bytes down', 'total'], rowsB));

out.push('\n### (c) AUC-PR against centralized EM\n');
out.push(
  table(
    ['data, partition', 'FedGenGMM', 'central', 'FedGenGMM − central', 'within 0.03', 'DEM 1', 'DEM 2', 'DEM 3', 'local'],
    aRuns.map((x) => {
      const f = res(x.r, 'fedgengmm');
      const c = res(x.r, 'central');
      const d = f.mean.aucPr - c.mean.aucPr;
      return [label(x), pm(f, 'aucPr'), pm(c, 'aucPr'), d.toFixed(3), d >= -0.03 ? 'yes' : '**no**', ...DEMS.map((m) => pm(res(x.r, m), 'aucPr')), pm(res(x.r, 'local'), 'aucPr')];
    }),
  ),
);

out.push('\n### (d) local models against heterogeneity (α low → high)\n');
out.push(
  table(
    ['data', 'local log-lik. per α', 'local AUC-PR per α', 'FedGenGMM log-lik. per α', 'log-lik. rises with α', 'AUC-PR rises with α'],
    byDs.map((ds) => {
      const xs = aRuns.filter((x) => x.ds === ds);
      const ll = xs.map((x) => res(x.r, 'local').mean.logLikelihood);
      const ap = xs.map((x) => res(x.r, 'local').mean.aucPr);
      const mono = (v) => v.every((y, i) => i === 0 || y >= v[i - 1]);
      return [
        `${ds} (${xs.map((x) => x.alpha).join(', ')})`,
        xs.map((x) => pm(res(x.r, 'local'), 'logLikelihood', 1)).join(' / '),
        xs.map((x) => pm(res(x.r, 'local'), 'aucPr')).join(' / '),
        xs.map((x) => res(x.r, 'fedgengmm').mean.logLikelihood.toFixed(2)).join(' / '),
        mono(ll) ? 'yes' : '**no**',
        mono(ap) ? 'yes' : '**no**',
      ];
    }),
  ),
);

out.push('\n### excluded clients in parts (a)-(d) (mean per repeat)\n');
const exRows = aRuns
  .map((x) => [label(x), ...['fedgengmm', ...DEMS, 'local'].map((m) => excl(x.r, m).toFixed(1))])
  .filter((r) => r.slice(1).some((v) => v !== '0.0'));
out.push(exRows.length ? table(['data, partition', 'FedGenGMM', 'DEM 1', 'DEM 2', 'DEM 3', 'local'], exRows) : 'none');

// ---- part e
const eRuns = files
  .filter((f) => f.startsWith('e-'))
  .map((f) => ({ file: f, ds: f.match(/^e-(.+)-(dir|shift)/)[1], r: load(f) }))
  .sort((a, b) => order.indexOf(a.ds) - order.indexOf(b.ds));
out.push('\n### (e) clients K_c = 5, global K = 20, against centralized K = 20\n');
out.push(
  table(
    ['data, partition', 'FedGenGMM AUC-PR', 'central AUC-PR', 'difference', 'within 0.03', 'FedGenGMM log-lik.', 'central log-lik.', 'bytes up', 'excluded/repeat'],
    eRuns.map((x) => {
      const f = res(x.r, 'fedgengmm');
      const c = res(x.r, 'central');
      const d = f.mean.aucPr - c.mean.aucPr;
      const p = x.r.config.partition === 'dirichlet' ? `Dir(${x.r.config.alpha})` : `shift α=${x.r.config.alpha}`;
      return [`${x.ds}, ${p}`, pm(f, 'aucPr'), pm(c, 'aucPr'), d.toFixed(3), d >= -0.03 ? 'yes' : '**no**', pm(f, 'logLikelihood', 2), pm(c, 'logLikelihood', 2), kb(f.mean.bytesUp), excl(x.r, 'fedgengmm').toFixed(1)];
    }),
  ),
);

// ---- part f
const fRuns = files
  .filter((f) => f.startsWith('f-') || f.startsWith('ftime-'))
  .map((f) => {
    const m = f.match(/^(f|ftime)-(.+)-(dir0\.2|shift1|iid)-c(\d+)\.json$/);
    return { file: f, kind: m[1], ds: m[2], part: m[3], n: Number(m[4]), r: load(f) };
  });
const series = [...new Set(fRuns.map((x) => `${x.kind}|${x.ds}|${x.part}`))].sort(
  (a, b) => (a.startsWith('ftime') - b.startsWith('ftime')) || order.indexOf(a.split('|')[1]) - order.indexOf(b.split('|')[1]),
);
function fit(xs, ys) {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  const sxy = xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0);
  const sxx = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
  const b = sxy / sxx;
  const a = my - b * mx;
  const ssr = ys.reduce((s, y, i) => s + (y - a - b * xs[i]) ** 2, 0);
  const sst = ys.reduce((s, y) => s + (y - my) ** 2, 0);
  return { a, b, r2: 1 - ssr / sst };
}
out.push('\n### (f) number of clients\n');
const rowsF = [];
const fits = [];
for (const s of series) {
  const xs = fRuns.filter((x) => `${x.kind}|${x.ds}|${x.part}` === s).sort((a, b) => a.n - b.n);
  const [kind, ds, part] = s.split('|');
  const p = part === 'dir0.2' ? 'Dir(0.2)' : part === 'shift1' ? 'shift α=1' : 'IID';
  for (const x of xs) {
    const f = res(x.r, 'fedgengmm');
    const c = res(x.r, 'central');
    const ex = excl(x.r, 'fedgengmm');
    rowsF.push([
      `${ds} K=${x.r.config.components}, ${p}${kind === 'ftime' ? ' (timing)' : ''}`,
      String(x.n),
      `${(x.r.dataset.trainRows / x.n).toFixed(0)}`,
      `${ex.toFixed(1)}`,
      pm(f, 'aucPr'),
      c ? pm(c, 'aucPr') : '-',
      c ? (f.mean.aucPr - c.mean.aucPr).toFixed(3) : '-',
      pm(f, 'logLikelihood', 2),
      c ? pm(c, 'logLikelihood', 2) : '-',
      `${f.mean.serverSeconds.toFixed(3)} ± ${f.std.serverSeconds.toFixed(3)}`,
    ]);
  }
  if (xs.length >= 3) {
    // every run, against the clients that were given and against those accepted
    const pts = xs.flatMap((x) => {
      const f = res(x.r, 'fedgengmm');
      return f.runs.map((run, i) => ({ n: x.n, acc: x.n - f.excluded.filter((e) => e.startsWith(`repeat ${i},`)).length, t: run.serverSeconds }));
    });
    const byN = fit(pts.map((p) => p.n), pts.map((p) => p.t));
    const byAcc = fit(pts.map((p) => p.acc), pts.map((p) => p.t));
    const ns = xs.map((x) => x.n);
    const means = xs.map((x) => res(x.r, 'fedgengmm').mean.serverSeconds);
    const perClient = means.map((m, i) => (1000 * m) / ns[i]);
    const onMeans = fit(ns, means);
    const loglog = fit(ns.map(Math.log), means.map(Math.log));
    fits.push([
      `${ds}, ${p}${kind === 'ftime' ? ' (timing)' : ''}`,
      `${ns[0]}-${ns[ns.length - 1]}`,
      `${(1000 * byN.b).toFixed(2)} ms/client + ${(1000 * byN.a).toFixed(0)} ms`,
      byN.r2.toFixed(3),
      `${(1000 * byAcc.b).toFixed(2)} ms/client + ${(1000 * byAcc.a).toFixed(0)} ms`,
      byAcc.r2.toFixed(3),
      onMeans.r2.toFixed(3),
      loglog.b.toFixed(2),
      perClient.map((v) => v.toFixed(1)).join(' / '),
    ]);
  }
}
out.push(table(['series', 'clients', 'train rows/client', 'excluded/repeat', 'FedGenGMM AUC-PR', 'central AUC-PR', 'difference', 'FedGenGMM log-lik.', 'central log-lik.', 'serverSeconds'], rowsF));
out.push('\nLeast-squares lines through every run (5 per client count) of the FedGenGMM server time; R² of the line through the means; slope of log(mean time) against log(clients) (1 = linear):\n');
out.push(table(['series', 'clients', 'line against clients given', 'R²', 'line against clients accepted', 'R²', 'R² (means)', 'log-log slope', 'ms per client at each count'], fits));
// ---- part h: the two server steps on the same local models
const hRuns = files
  .filter((f) => /^h-[aef]-/.test(f))
  .map((f) => {
    const m = f.match(/^h-(a|e|f)-(.+)-(dir[\d.]+|shift\d)(?:-c(\d+))?\.json$/);
    return { file: f, grid: m[1], ds: m[2], part: m[3], n: Number(m[4] ?? 20), r: load(f) };
  })
  .sort((a, b) => a.grid.localeCompare(b.grid) || order.indexOf(a.ds) - order.indexOf(b.ds) || a.part.localeCompare(b.part, 'en', { numeric: true }) || a.n - b.n);
if (hRuns.length) {
  out.push('\n### Server step: sampling (H = 100) against hierarchical EM (N = training rows)\n');
  const cell = (x, m, k, d) => (res(x.r, m) ? pm(res(x.r, m), k, d) : '-');
  const rowsH = hRuns.map((x) => {
    const s = res(x.r, 'fedgengmm');
    const h = res(x.r, 'fedgengmm-hierarchical');
    const p = x.part.startsWith('dir') ? `Dir(${x.part.slice(3)})` : `shift α=${x.part.slice(5)}`;
    const what = `${x.ds} K=${x.r.config.components}${x.r.config.clientKRange ? `, K_c=${x.r.config.clientKRange[0]}` : ''}, ${p}, ${x.n} clients`;
    const dll = h.mean.logLikelihood - s.mean.logLikelihood;
    const dap = h.mean.aucPr - s.mean.aucPr;
    // a difference counts when it exceeds the larger of the two spreads over repeats
    const verdict = (d, a, b) => (Math.abs(d) <= Math.max(a, b) ? 'tie' : d > 0 ? 'hierarchical' : 'sampling');
    return [
      what,
      pm(s, 'logLikelihood', 2), pm(h, 'logLikelihood', 2), cell(x, 'central', 'logLikelihood', 2), `${dll >= 0 ? '+' : ''}${dll.toFixed(2)}`, verdict(dll, s.std.logLikelihood, h.std.logLikelihood),
      pm(s, 'aucPr'), pm(h, 'aucPr'), cell(x, 'central', 'aucPr', 3), `${dap >= 0 ? '+' : ''}${dap.toFixed(3)}`, verdict(dap, s.std.aucPr, h.std.aucPr),
      `${(1000 * s.mean.serverSeconds).toFixed(0)} / ${(1000 * h.mean.serverSeconds).toFixed(0)}`,
      `${(s.mean.serverSeconds / h.mean.serverSeconds).toFixed(0)}x`,
    ];
  });
  out.push(
    table(
      ['data, partition', 'log-lik. sampling', 'log-lik. hierarchical', 'log-lik. central', 'Δ log-lik.', 'better', 'AUC-PR sampling', 'AUC-PR hierarchical', 'AUC-PR central', 'Δ AUC-PR', 'better', 'server ms (sampling / hier.)', 'server speedup'],
      rowsH,
    ),
  );
  const count = (col, v) => rowsH.filter((r) => r[col] === v).length;
  out.push(`\nOf ${rowsH.length} settings, log-likelihood: hierarchical better in ${count(5, 'hierarchical')}, sampling in ${count(5, 'sampling')}, tie in ${count(5, 'tie')}; AUC-PR: hierarchical better in ${count(10, 'hierarchical')}, sampling in ${count(10, 'sampling')}, tie in ${count(10, 'tie')} (a tie: the difference of the means within the larger std over the 5 repeats).`);
}
// the virtual rows N of the hierarchical step, against the default run of part h (N = the training rows)
const nRuns = files
  .filter((f) => f.startsWith('h-n-'))
  .map((f) => {
    const m = f.match(/^h-n-(.+)-(dir[\d.]+)-n(\d+)\.json$/);
    return { ds: m[1], part: m[2], nv: Number(m[3]), r: load(f) };
  });
if (nRuns.length) {
  out.push('\n### Hierarchical EM: the virtual rows N (Dir(0.3), 20 clients)\n');
  const rowsN = [];
  for (const ds of order.filter((d) => nRuns.some((x) => x.ds === d))) {
    const base = hRuns.find((x) => x.grid === 'a' && x.ds === ds && x.part === nRuns.find((y) => y.ds === ds).part);
    const cells = [...nRuns.filter((x) => x.ds === ds).map((x) => ({ nv: x.nv, s: res(x.r, 'fedgengmm-hierarchical') })), ...(base ? [{ nv: base.r.dataset.trainRows, s: res(base.r, 'fedgengmm-hierarchical'), isDefault: true }] : [])].sort((a, b) => a.nv - b.nv);
    for (const c of cells) rowsN.push([`${ds} K=${(base ?? nRuns.find((x) => x.ds === ds)).r.config.components}`, `${c.nv}${c.isDefault ? ' (default: training rows)' : ''}`, pm(c.s, 'logLikelihood', 2), pm(c.s, 'aucPr')]);
  }
  out.push(table(['data', 'N', 'log-lik.', 'AUC-PR'], rowsN));
}
console.log(out.join('\n'));
