/**
 * `--report out.html` of `fedmix experiment` (and `fedmix demo`): one HTML
 * file that opens anywhere, offline. uPlot (a dependency, read from its
 * package when a report is written) and its CSS are inlined with the numbers;
 * the plots: log-likelihood and AUC-PR per method (each repeat a point, the
 * mean a bar), the rounds against the bytes each federated run sent, and
 * distributed EM's curve round by round (when a dem method ran). The
 * text table is included too, so the report reads without JavaScript.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ExperimentReport } from '../experiment/fedgengmm.js';

/** The report's data, as the page script reads it. */
export interface ReportData {
  title: string;
  methods: string[];
  logLikelihood: { mean: number[]; runs: number[][] };
  aucPr: { mean: number[]; runs: number[][] };
  /** per federated method (bytes > 0): each run's rounds and bytes (up + down) */
  traffic: { method: string; rounds: number[]; bytes: number[] }[];
  /** distributed EM, round by round: per method, each run's average client log-likelihood */
  curves: { method: string; runs: number[][] }[];
}

export function reportData(r: ExperimentReport, title: string): ReportData {
  const methods = r.results.map((x) => x.method);
  return {
    title,
    methods,
    logLikelihood: { mean: r.results.map((x) => x.mean.logLikelihood), runs: r.results.map((x) => x.runs.map((s) => s.logLikelihood)) },
    aucPr: { mean: r.results.map((x) => x.mean.aucPr), runs: r.results.map((x) => x.runs.map((s) => s.aucPr)) },
    traffic: r.results
      .filter((x) => x.mean.bytesUp + x.mean.bytesDown > 0)
      .map((x) => ({ method: x.method, rounds: x.runs.map((s) => s.rounds), bytes: x.runs.map((s) => s.bytesUp + s.bytesDown) })),
    curves: r.results.filter((x) => x.curves?.length).map((x) => ({ method: x.method, runs: x.curves! })),
  };
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** JSON safe inside <script>: every "<" escaped (only strings hold one), so nothing in it can end the element. */
const jsonInScript = (s: string) => s.replace(/</g, '\\u003c');
/** Code safe inside <script>: "</script" written "<\/script", the same in a string, a regex or a comment. */
const codeInScript = (s: string) => s.replace(/<\/(script)/gi, '<\\/$1');

/** Draws the plots from the embedded data (runs in the browser). */
const PAGE_SCRIPT = String.raw`
const data = JSON.parse(document.getElementById('report-data').textContent);
const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
const width = Math.min(900, document.body.clientWidth - 20);
function perMethod(id, title, values) {
  const n = data.methods.length;
  const xs = data.methods.map((_, i) => i);
  const repeats = Math.max(...values.runs.map((r) => r.length));
  const series = [{}, { label: 'mean', stroke: '#1f77b4', fill: 'rgba(31,119,180,0.35)', paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } }];
  const cols = [xs, values.mean];
  for (let k = 0; k < repeats; k++) {
    series.push({ label: 'repeat ' + (k + 1), stroke: '#d62728', paths: () => null, points: { show: true, size: 6, fill: '#d62728' } });
    cols.push(values.runs.map((r) => (k < r.length ? r[k] : null)));
  }
  new uPlot({
    title, width, height: 300, series,
    scales: { x: { time: false, range: [-0.5, n - 0.5] } },
    axes: [{ splits: () => xs, values: (u, splits) => splits.map((i) => data.methods[i] ?? '') }, {}],
    legend: { show: true },
  }, cols, document.getElementById(id));
}
// a scatter (uPlot's mode 2) draws its own points, as uPlot's scatter demo does
function drawPoints(u, seriesIdx) {
  const size = 9 * devicePixelRatio;
  uPlot.orient(u, seriesIdx, (series, dataX, dataY, scaleX, scaleY, valToPosX, valToPosY, xOff, yOff, xDim, yDim, moveTo, lineTo, rect, arc) => {
    const d = u.data[seriesIdx];
    const p = new Path2D();
    for (let i = 0; i < d[0].length; i++) {
      const cx = valToPosX(d[0][i], scaleX, xDim, xOff);
      const cy = valToPosY(d[1][i], scaleY, yDim, yOff);
      p.moveTo(cx + size / 2, cy);
      arc(p, cx, cy, size / 2, 0, 2 * Math.PI);
    }
    u.ctx.fillStyle = series.stroke();
    u.ctx.fill(p);
  });
  return null;
}
function traffic(id) {
  const series = [{}].concat(data.traffic.map((t, i) => ({ label: t.method, stroke: colors[i % colors.length], fill: colors[i % colors.length], paths: drawPoints })));
  new uPlot({
    mode: 2, title: 'rounds against bytes sent (each repeat a point)', width, height: 320, series,
    scales: { x: { time: false, auto: true }, y: { auto: true, distr: 3 } },
    axes: [{ label: 'rounds' }, { label: 'bytes (up + down)', size: 70 }],
  }, [null].concat(data.traffic.map((t) => [t.rounds, t.bytes])), document.getElementById(id));
}
function demCurves(id) {
  // one line per method and repeat over the rounds; runs that stopped earlier end earlier
  const rounds = Math.max(...data.curves.flatMap((c) => c.runs.map((r) => r.length)));
  const xs = Array.from({ length: rounds }, (_, i) => i + 1);
  const series = [{ label: 'round' }];
  const cols = [xs];
  data.curves.forEach((c, i) => c.runs.forEach((run, k) => {
    series.push({ label: c.method + (c.runs.length > 1 ? ' #' + (k + 1) : ''), stroke: colors[i % colors.length], width: 1.5 });
    cols.push(xs.map((_, j) => (j < run.length ? run[j] : null)));
  }));
  new uPlot({
    title: 'distributed EM round by round: average client log-likelihood', width, height: 320, series,
    scales: { x: { time: false } },
    axes: [{ label: 'round' }, { label: 'log-likelihood', size: 60 }],
  }, cols, document.getElementById(id));
}
perMethod('plot-ll', 'test log-likelihood per method', data.logLikelihood);
perMethod('plot-aucpr', 'AUC-PR per method', data.aucPr);
if (data.traffic.length) traffic('plot-traffic');
if (data.curves.length) demCurves('plot-dem');
document.body.dataset.rendered = 'yes';
`;

/** The report as one HTML document: uPlot, its CSS, the data and the drawing script inlined. */
export function reportHtml(r: ExperimentReport, title: string, table: string): string {
  const require = createRequire(import.meta.url);
  const uplotJs = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
  const uplotCss = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  const data = reportData(r, title);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${uplotCss}
body { font: 14px system-ui, sans-serif; margin: 1em auto; max-width: 940px; }
pre { font-size: 12px; overflow-x: auto; background: #f6f6f6; padding: 0.8em; }
.plot { margin: 1.5em 0; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<div class="plot" id="plot-ll"></div>
<div class="plot" id="plot-aucpr"></div>
${data.traffic.length ? '<div class="plot" id="plot-traffic"></div>' : '<p>No method of this run sent messages, so there is no traffic plot.</p>'}
${data.curves.length ? '<div class="plot" id="plot-dem"></div>' : ''}
<h2>Results</h2>
<pre>${escapeHtml(table)}</pre>
<script type="application/json" id="report-data">${jsonInScript(JSON.stringify(data))}</script>
<script>${codeInScript(uplotJs)}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

export function writeReport(path: string, r: ExperimentReport, title: string, table: string): void {
  writeFileSync(path, reportHtml(r, title, table));
}
