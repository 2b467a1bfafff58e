/**
 * `--report out.html` of `fedmix experiment` (and `fedmix demo`): one HTML
 * file that opens anywhere, offline. uPlot (a dependency, read from its
 * package when a report is written), its CSS and the drawing functions of
 * ts/experiment/plots.ts (shared with the browser demo) are inlined with the
 * numbers; the text table is included too, so the report reads without
 * JavaScript.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ExperimentReport } from '../experiment/fedgengmm.js';
import { demCurvesPlot, perMethodPlot, PLOT_COLORS, reportData, trafficPlot } from '../experiment/plots.js';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** JSON safe inside <script>: every "<" escaped (only strings hold one), so nothing in it can end the element. */
const jsonInScript = (s: string) => s.replace(/</g, '\\u003c');
/** Code safe inside <script>: "</script" written "<\/script", the same in a string, a regex or a comment. */
const codeInScript = (s: string) => s.replace(/<\/(script)/gi, '<\\/$1');

/**
 * Draws the plots from the embedded data (runs in the browser): the drawing
 * functions of ts/experiment/plots.ts, inlined as their source text.
 */
function pageScript(): string {
  return `
const data = JSON.parse(document.getElementById('report-data').textContent);
const colors = ${JSON.stringify(PLOT_COLORS)};
const perMethodPlot = ${perMethodPlot.toString()};
const trafficPlot = ${trafficPlot.toString()};
const demCurvesPlot = ${demCurvesPlot.toString()};
const width = Math.min(900, document.body.clientWidth - 20);
perMethodPlot(uPlot, document.getElementById('plot-ll'), 'test log-likelihood per method', data.methods, data.logLikelihood, width);
perMethodPlot(uPlot, document.getElementById('plot-aucpr'), 'AUC-PR per method', data.methods, data.aucPr, width);
if (data.traffic.length) trafficPlot(uPlot, document.getElementById('plot-traffic'), data.traffic, colors, width);
if (data.curves.length) demCurvesPlot(uPlot, document.getElementById('plot-dem'), data.curves, colors, width);
document.body.dataset.rendered = 'yes';
`;
}

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
<script>${codeInScript(pageScript())}</script>
</body>
</html>
`;
}

export function writeReport(path: string, r: ExperimentReport, title: string, table: string): void {
  writeFileSync(path, reportHtml(r, title, table));
}
