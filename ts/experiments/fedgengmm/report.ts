/**
 * `--report out.html` of `fedmix experiment` (and `fedmix demo`): one HTML
 * file that opens anywhere, offline, and reads without JavaScript: the plots
 * of ./plots.ts (shared with the browser demo) as SVG in the
 * page, the text table, and the plots' numbers as JSON for whoever reads the
 * file back.
 */
import { writeFileAtomicSync } from '../../atomic-write.js';
import type { ExperimentReport } from './run.js';
import { reportData, reportPlots } from './plots.js';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
/** JSON safe inside <script>: every "<" escaped (only strings hold one), so nothing in it can end the element. */
const jsonInScript = (s: string) => s.replace(/</g, '\\u003c');

/** The width the plots are drawn at (the page's column is 940 px). */
const PLOT_WIDTH = 900;

/** The report as one HTML document: the plots as SVG, the table, the data. */
export function reportHtml(r: ExperimentReport, title: string, table: string): string {
  const data = reportData(r, title);
  const plots = reportPlots(data, PLOT_WIDTH);
  const plot = (id: keyof typeof plots) => `<div class="plot" id="${id}">${plots[id]}</div>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1em auto; max-width: 940px; }
pre { font-size: 12px; overflow-x: auto; background: #f6f6f6; padding: 0.8em; }
.plot { margin: 1.5em 0; }
.plot svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${plot('plot-ll')}
${plot('plot-aucpr')}
${plots['plot-traffic'] ? plot('plot-traffic') : '<p>No method of this run sent messages, so there is no traffic plot.</p>'}
${plots['plot-dem'] ? plot('plot-dem') : ''}
<h2>Results</h2>
<pre>${escapeHtml(table)}</pre>
<script type="application/json" id="report-data">${jsonInScript(JSON.stringify(data))}</script>
</body>
</html>
`;
}

export function writeReport(path: string, r: ExperimentReport, title: string, table: string): void {
  writeFileAtomicSync(path, reportHtml(r, title, table));
}
