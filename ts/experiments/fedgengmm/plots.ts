/**
 * The FedGenGMM experiment's plots, drawn as SVG text: log-likelihood and
 * AUC-PR per method (the mean a mark, each repeat a point), rounds against
 * the bytes each federated run sent, and distributed EM's curve round by
 * round. One home for the two pages that show them: the HTML report of
 * `fedmix experiment --report` writes the SVG into the page (it reads without
 * JavaScript), and the browser demo (demo/) draws the same SVG as results
 * arrive.
 *
 * What the layout guards against, each tested in test/report-plots.test.ts:
 * - a method far from the others (local at -1304 beside methods between -4
 *   and 1) would squash them: the value axis covers the other methods, and
 *   the far one is drawn at the axis' edge, broken, with its value written;
 * - method names wider than their slot would collide: they turn, and a name
 *   too long even then is shortened with its full text in a tooltip;
 * - one method, one colour in every plot (fixed by the method's name);
 * - legends name what is drawn, nothing that needs a cursor.
 */
import { METHODS, type ExperimentReport } from './run.js';

/** The plots' data, as the report embeds it and the demo builds it. */
export interface ReportData {
  title: string;
  methods: string[];
  logLikelihood: MethodValues;
  aucPr: MethodValues;
  /** per federated method (bytes > 0): each run's rounds and bytes (up + down) */
  traffic: TrafficPoints[];
  /** distributed EM, round by round: per method, each run's average client log-likelihood */
  curves: DemCurves[];
}

/** One value per method: the mean over repeats and every repeat's value. */
export interface MethodValues {
  mean: number[];
  runs: number[][];
}

export interface TrafficPoints {
  method: string;
  rounds: number[];
  bytes: number[];
}

export interface DemCurves {
  method: string;
  runs: number[][];
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

/** A mean and standard deviation as the results tables show them. */
export const meanStd = (m: number, s: number, digits = 3): string => `${m.toFixed(digits)} ± ${s.toFixed(digits)}`;

/** Bytes as the results tables show them ('-' for none). */
export const bytesText = (b: number): string => (b === 0 ? '-' : b < 1024 ? `${b.toFixed(0)} B` : `${(b / 1024).toFixed(1)} kB`);

/** The series colours (Tableau 10): the experiment's methods take them in the order of METHODS. */
export const PLOT_COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

/**
 * The colour of a method, the same in every plot, report and demo page: fixed by its place in the
 * experiment's METHODS, so it does not change with the methods a run has (a method of no run of the
 * list takes the colours after them, in the order `methods` gives).
 */
export function methodColor(method: string, methods: readonly string[] = []): string {
  const known = (METHODS as readonly string[]).indexOf(method);
  const others = methods.filter((m) => !(METHODS as readonly string[]).includes(m));
  const i = known >= 0 ? known : METHODS.length + Math.max(0, others.indexOf(method));
  return PLOT_COLORS[i % PLOT_COLORS.length]!;
}

/** The font size of the plots' text in px, and the width of a character of it as the layout estimates it (sans-serif, generous). */
export const PLOT_FONT_SIZE = 12;
const CHAR_WIDTH = 0.62;
const textWidth = (s: string, size = PLOT_FONT_SIZE) => s.length * CHAR_WIDTH * size;

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (v: number) => (Math.round(v * 100) / 100).toString();

/** A number as an axis or a label shows it: about four significant digits, no trailing zeros. */
export function valueText(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-3) return v.toExponential(2).replace(/\.?0+e/, 'e');
  return Number(v.toPrecision(4)).toString();
}

/** Round tick values covering [lo, hi], about `count` of them. */
function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!(hi > lo)) {
    const pad = Math.abs(lo) * 0.1 || 1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const first = Math.floor(lo / step) * step;
  const ticks: number[] = [];
  for (let t = first; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  if (ticks[ticks.length - 1]! < hi) ticks.push(Number((ticks[ticks.length - 1]! + step).toPrecision(12)));
  return ticks;
}

/**
 * Which methods are far from the others (by their means): the lowest or highest mean is set apart
 * while its gap to the next exceeds four times the span of the rest, the rest keeping at least three
 * methods and half of them. A log axis cannot do this (log-likelihoods are negative as often as not).
 */
export function farMethods(means: readonly number[]): boolean[] {
  const order = means.map((_, i) => i).filter((i) => Number.isFinite(means[i])).sort((a, b) => means[a]! - means[b]!);
  const far = means.map((v) => !Number.isFinite(v));
  const keep = Math.max(3, Math.ceil(order.length / 2));
  let lo = 0;
  let hi = order.length - 1;
  while (hi - lo + 1 > keep) {
    const v = (k: number) => means[order[k]!]!;
    const gapLow = v(lo + 1) - v(lo);
    const gapHigh = v(hi) - v(hi - 1);
    if (gapLow >= gapHigh && gapLow > 4 * (v(hi) - v(lo + 1))) far[order[lo++]!] = true;
    else if (gapHigh > gapLow && gapHigh > 4 * (v(hi - 1) - v(lo))) far[order[hi--]!] = true;
    else break;
  }
  return far;
}

interface XLabels {
  /** degrees, 0 or negative (turned up to the right, read from the bottom left) */
  angle: number;
  /** the text each label shows (shortened with "…" where needed) */
  shown: string[];
  /** the height the labels take below the axis */
  height: number;
}

/**
 * Method names under their slots (centred at `xs`): level when every name fits its slot, else turned
 * by 40 degrees (the gap between neighbours across the text is then slot x sin 40°, over one line), and
 * shortened to `maxWidth`, or to the room left of its slot, when even that is too long.
 */
function layoutXLabels(names: readonly string[], xs: readonly number[], slot: number, maxWidth = 170): XLabels {
  const widest = Math.max(0, ...names.map((n) => textWidth(n)));
  if (widest <= slot - 6) return { angle: 0, shown: [...names], height: PLOT_FONT_SIZE + 8 };
  const angle = slot * Math.sin((40 * Math.PI) / 180) >= PLOT_FONT_SIZE * 1.3 ? -40 : -90;
  const rad = (Math.abs(angle) * Math.PI) / 180;
  const shown = names.map((n, i) => {
    // a turned name runs down to the left of its slot: no further than the picture's edge
    const room = angle === -90 ? maxWidth : Math.min(maxWidth, (xs[i]! - 4) / Math.cos(rad));
    const maxChars = Math.max(4, Math.floor(room / (CHAR_WIDTH * PLOT_FONT_SIZE)));
    return n.length > maxChars ? `${n.slice(0, maxChars - 1)}…` : n;
  });
  const longest = Math.max(...shown.map((s) => textWidth(s)));
  return { angle, shown, height: longest * Math.sin(rad) + PLOT_FONT_SIZE * Math.cos(rad) + 10 };
}

function xLabelsSvg(names: readonly string[], xs: readonly number[], y: number, layout: XLabels): string {
  return names
    .map((name, i) => {
      const text = escapeXml(layout.shown[i]!);
      const title = `<title>${escapeXml(name)}</title>`;
      if (layout.angle === 0) return `<text class="x-label" x="${num(xs[i]!)}" y="${num(y + PLOT_FONT_SIZE + 4)}" text-anchor="middle" font-size="${PLOT_FONT_SIZE}">${title}${text}</text>`;
      const ax = xs[i]! + PLOT_FONT_SIZE * 0.35;
      const ay = y + 6;
      return `<text class="x-label" x="${num(ax)}" y="${num(ay)}" text-anchor="end" font-size="${PLOT_FONT_SIZE}" transform="rotate(${layout.angle} ${num(ax)} ${num(ay)})">${title}${text}</text>`;
    })
    .join('');
}

function svgOpen(width: number, height: number, title: string, kind: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" class="fedmix-plot" data-plot="${kind}" width="${width}" height="${num(height)}" viewBox="0 0 ${width} ${num(height)}" font-family="system-ui, sans-serif" font-size="${PLOT_FONT_SIZE}" role="img" aria-label="${escapeXml(title)}"><title>${escapeXml(title)}</title><text class="plot-title" x="${width / 2}" y="18" text-anchor="middle" font-size="${PLOT_FONT_SIZE + 2}" font-weight="600">${escapeXml(title)}</text>`;
}

/** A legend row under the title: a swatch and a name per entry (what is drawn, never a cursor readout). */
function legendSvg(entries: readonly { label: string; color: string; mark: 'box' | 'dot' | 'line' | 'tick' }[], x0: number, y: number, width: number): { svg: string; height: number } {
  let x = x0;
  let row = 0;
  const parts: string[] = [];
  for (const e of entries) {
    const w = 18 + textWidth(e.label) + 14;
    if (x + w > width && x > x0) {
      x = x0;
      row++;
    }
    const cy = y + row * (PLOT_FONT_SIZE + 8);
    const mark =
      e.mark === 'box'
        ? `<rect x="${num(x)}" y="${num(cy - 9)}" width="12" height="10" fill="${e.color}"/>`
        : e.mark === 'dot'
          ? `<circle cx="${num(x + 6)}" cy="${num(cy - 4)}" r="3.5" fill="${e.color}" stroke="#fff" stroke-width="0.8"/>`
          : e.mark === 'tick'
            ? `<line x1="${num(x)}" x2="${num(x + 12)}" y1="${num(cy - 4)}" y2="${num(cy - 4)}" stroke="${e.color}" stroke-width="3"/>`
            : `<line x1="${num(x)}" x2="${num(x + 12)}" y1="${num(cy - 4)}" y2="${num(cy - 4)}" stroke="${e.color}" stroke-width="2"/>`;
    parts.push(`<g class="legend-entry" data-label="${escapeXml(e.label)}" data-color="${e.color}">${mark}<text x="${num(x + 17)}" y="${num(cy)}">${escapeXml(e.label)}</text></g>`);
    x += w;
  }
  return { svg: `<g class="legend">${parts.join('')}</g>`, height: (row + 1) * (PLOT_FONT_SIZE + 8) };
}

function yAxisSvg(ticks: readonly number[], y: (v: number) => number, left: number, right: number, label: string, tickText: (v: number) => string = valueText): string {
  const lines = ticks.map((t) => `<line x1="${left}" x2="${right}" y1="${num(y(t))}" y2="${num(y(t))}" stroke="#e3e3e3"/><text class="y-tick" x="${left - 6}" y="${num(y(t) + 4)}" text-anchor="end">${escapeXml(tickText(t))}</text>`);
  const mid = (y(ticks[0]!) + y(ticks[ticks.length - 1]!)) / 2;
  return `<g class="y-axis">${lines.join('')}<text class="axis-label" transform="rotate(-90 14 ${num(mid)})" x="14" y="${num(mid)}" text-anchor="middle">${escapeXml(label)}</text></g>`;
}

export interface PerMethodOptions {
  title: string;
  methods: readonly string[];
  values: MethodValues;
  width: number;
  /** the value axis' name */
  label: string;
  /**
   * 'zero': bars from 0 (a score in [0, 1] such as AUC-PR); 'data': the axis covers the methods' values
   * (a log-likelihood has no natural zero), each mean a mark, a method far from the others set apart.
   */
  baseline: 'zero' | 'data';
}

/** Per method: the mean (a bar from 0, or a mark) and every repeat (a point), in the method's colour. */
export function perMethodSvg(o: PerMethodOptions): string {
  const { methods, values, width } = o;
  const n = methods.length;
  const left = 64;
  const right = width - 16;
  const slot = (right - left) / Math.max(1, n);
  const xs = methods.map((_, i) => left + slot * (i + 0.5));
  const labels = layoutXLabels(methods, xs, slot);
  const legend = legendSvg(
    [
      { label: o.baseline === 'zero' ? 'mean over the repeats (bar)' : 'mean over the repeats (mark)', color: '#555', mark: o.baseline === 'zero' ? 'box' : 'tick' },
      { label: 'each repeat (point)', color: '#555', mark: 'dot' },
    ],
    left,
    40,
    right,
  );
  const top = 30 + legend.height + 8;
  const plotHeight = 220;
  const bottom = top + plotHeight;
  const height = bottom + labels.height + 8;
  const far = o.baseline === 'data' ? farMethods(values.mean) : methods.map(() => false);
  const inAxis = values.mean.flatMap((m, i) => (far[i] ? [] : [m, ...(values.runs[i] ?? [])])).filter(Number.isFinite);
  let lo = inAxis.length ? Math.min(...inAxis) : 0;
  let hi = inAxis.length ? Math.max(...inAxis) : 1;
  if (o.baseline === 'zero') lo = Math.min(0, lo);
  else {
    const pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
    lo -= pad;
    hi += pad;
  }
  const ticks = niceTicks(lo, hi);
  const [t0, t1] = [ticks[0]!, ticks[ticks.length - 1]!];
  const y = (v: number) => bottom - ((v - t0) / (t1 - t0)) * plotHeight;
  const marks = methods.map((m, i) => {
    const color = methodColor(m, methods);
    const mean = values.mean[i]!;
    const runs = values.runs[i] ?? [];
    const half = Math.min(28, slot * 0.3);
    const x = xs[i]!;
    const tip = `<title>${escapeXml(`${m}: mean ${valueText(mean)}${runs.length ? `; repeats ${runs.map(valueText).join(', ')}` : ''}`)}</title>`;
    if (far[i]) {
      // off the axis: drawn to the edge it lies beyond, broken there, its value written beside it
      const below = mean < t0;
      const edge = below ? bottom : top;
      const inner = below ? bottom - 26 : top + 26;
      const zig = below ? bottom - 12 : top + 12;
      const z = `M${num(x - half)} ${num(zig + 3)} L${num(x - half / 2)} ${num(zig - 3)} L${num(x)} ${num(zig + 3)} L${num(x + half / 2)} ${num(zig - 3)} L${num(x + half)} ${num(zig + 3)}`;
      const textY = below ? inner - 6 : inner + 14;
      return `<g class="method" data-method="${escapeXml(m)}" data-color="${color}" data-far="${below ? 'below' : 'above'}" data-mean="${mean}">${tip}<rect class="mean-bar" x="${num(x - half)}" y="${num(Math.min(edge, inner))}" width="${num(2 * half)}" height="${num(Math.abs(edge - inner))}" fill="${color}" fill-opacity="0.55"/><path class="axis-break" d="${z}" stroke="#fff" stroke-width="4" fill="none"/><path d="${z}" stroke="${color}" stroke-width="1.2" fill="none"/><text class="far-value" x="${num(x)}" y="${num(textY)}" text-anchor="middle" fill="#222">${escapeXml(`${valueText(mean)} ${below ? '↓' : '↑'}`)}</text></g>`;
    }
    const points = runs.filter((r) => r >= t0 && r <= t1).map((r, k) => `<circle class="repeat" cx="${num(x + (runs.length > 1 ? ((k / (runs.length - 1)) * 2 - 1) * half * 0.5 : 0))}" cy="${num(y(r))}" r="3.5" fill="${color}" stroke="#fff" stroke-width="0.8"/>`);
    const meanMark =
      o.baseline === 'zero'
        ? `<rect class="mean-bar" x="${num(x - half)}" y="${num(Math.min(y(mean), y(0)))}" width="${num(2 * half)}" height="${num(Math.abs(y(0) - y(mean)))}" fill="${color}" fill-opacity="0.55"/>`
        : `<line class="mean-mark" x1="${num(x - half)}" x2="${num(x + half)}" y1="${num(y(mean))}" y2="${num(y(mean))}" stroke="${color}" stroke-width="3"/>`;
    return `<g class="method" data-method="${escapeXml(m)}" data-color="${color}" data-mean="${mean}">${tip}${meanMark}${points.join('')}</g>`;
  });
  const axis = `<line x1="${left}" x2="${right}" y1="${num(bottom)}" y2="${num(bottom)}" stroke="#888"/>`;
  return `${svgOpen(width, height, o.title, 'per-method')}${legend.svg}<g class="plot-area" data-top="${num(top)}" data-bottom="${num(bottom)}">${yAxisSvg(ticks, y, left, right, o.label)}${marks.join('')}${axis}</g>${xLabelsSvg(methods, xs, bottom, labels)}</svg>`;
}

/** A byte count on a log axis: 1 B, 10 kB, 100 MB. */
const byteTick = (b: number): string => {
  const unit = ['B', 'kB', 'MB', 'GB'].find((_, p) => b < Math.pow(1024, p + 1)) ?? 'GB';
  const p = ['B', 'kB', 'MB', 'GB'].indexOf(unit);
  return `${Number((b / Math.pow(1024, p)).toPrecision(3))} ${unit}`;
};

/** Rounds against bytes sent (up + down, a log axis: bytes are positive and span decades), one point per federated run. */
export function trafficSvg(traffic: readonly TrafficPoints[], methods: readonly string[], width: number): string {
  const title = 'rounds against bytes sent (each repeat a point)';
  const left = 78;
  const right = width - 16;
  const legend = legendSvg(traffic.map((t) => ({ label: t.method, color: methodColor(t.method, methods), mark: 'dot' as const })), left, 40, right);
  const top = 30 + legend.height + 8;
  const plotHeight = 220;
  const bottom = top + plotHeight;
  const rounds = traffic.flatMap((t) => t.rounds);
  const bytes = traffic.flatMap((t) => t.bytes).filter((b) => b > 0);
  const rMax = Math.max(1, ...rounds);
  const xTicks = niceTicks(0, rMax, 6).filter((t) => Number.isInteger(t) || t === 0);
  const x1 = xTicks[xTicks.length - 1]!;
  const x = (r: number) => left + (r / x1) * (right - left);
  // ticks at 1, 10 and 100 B, kB, MB, GB (1 kB = 1024 B, as the tables count): about a decade apart
  const steps = [0, 1, 2, 3].flatMap((p) => [1, 10, 100].map((m) => m * Math.pow(1024, p)));
  const bLo = bytes.length ? Math.min(...bytes) : 1;
  const bHi = bytes.length ? Math.max(...bytes) : 1024;
  const first = Math.max(0, steps.findIndex((_, i) => steps[i + 1] === undefined || steps[i + 1]! > bLo));
  const last = Math.max(first + 1, steps.findIndex((s) => s >= bHi) >= 0 ? steps.findIndex((s) => s >= bHi) : steps.length - 1);
  const yTicks = steps.slice(first, last + 1);
  const [l0, l1] = [Math.log10(yTicks[0]!), Math.log10(yTicks[yTicks.length - 1]!)];
  const y = (b: number) => bottom - ((Math.log10(b) - l0) / (l1 - l0)) * plotHeight;
  const points = traffic.map((t) => {
    const color = methodColor(t.method, methods);
    const dots = t.rounds.map((r, k) => (t.bytes[k]! > 0 ? `<circle class="run" cx="${num(x(r))}" cy="${num(y(t.bytes[k]!))}" r="4" fill="${color}" fill-opacity="0.85"><title>${escapeXml(`${t.method}: ${r} rounds, ${bytesText(t.bytes[k]!)}`)}</title></circle>` : ''));
    return `<g class="method" data-method="${escapeXml(t.method)}" data-color="${color}">${dots.join('')}</g>`;
  });
  const xAxis = xTicks.map((t) => `<text class="x-tick" x="${num(x(t))}" y="${num(bottom + 16)}" text-anchor="middle">${t}</text>`).join('');
  const height = bottom + 44;
  return `${svgOpen(width, height, title, 'traffic')}${legend.svg}<g class="plot-area">${yAxisSvg(yTicks, y, left, right, 'bytes (up + down)', byteTick)}${points.join('')}<line x1="${left}" x2="${right}" y1="${num(bottom)}" y2="${num(bottom)}" stroke="#888"/>${xAxis}<text class="axis-label" x="${num((left + right) / 2)}" y="${num(bottom + 36)}" text-anchor="middle">rounds</text></g></svg>`;
}

/** One line per method and repeat over the EM rounds; runs that stopped earlier end earlier. */
export function demCurvesSvg(curves: readonly DemCurves[], methods: readonly string[], width: number): string {
  const title = 'distributed EM round by round: average client log-likelihood';
  const left = 64;
  const right = width - 16;
  const legend = legendSvg(curves.map((c) => ({ label: c.method, color: methodColor(c.method, methods), mark: 'line' as const })), left, 40, right);
  const top = 30 + legend.height + 8;
  const plotHeight = 220;
  const bottom = top + plotHeight;
  const rounds = Math.max(2, ...curves.flatMap((c) => c.runs.map((r) => r.length)));
  const all = curves.flatMap((c) => c.runs.flat()).filter(Number.isFinite);
  const lo = all.length ? Math.min(...all) : 0;
  const hi = all.length ? Math.max(...all) : 1;
  const ticks = niceTicks(lo, hi);
  const [t0, t1] = [ticks[0]!, ticks[ticks.length - 1]!];
  const x = (r: number) => left + ((r - 1) / (rounds - 1)) * (right - left);
  const y = (v: number) => bottom - ((v - t0) / (t1 - t0)) * plotHeight;
  const lines = curves.map((c) => {
    const color = methodColor(c.method, methods);
    const paths = c.runs.map((run, k) => `<path class="run" d="${run.map((v, j) => `${j ? 'L' : 'M'}${num(x(j + 1))} ${num(y(v))}`).join(' ')}" stroke="${color}" stroke-width="1.5" fill="none"><title>${escapeXml(`${c.method}${c.runs.length > 1 ? ` #${k + 1}` : ''}: ${run.length} rounds, last ${valueText(run[run.length - 1] ?? NaN)}`)}</title></path>`);
    return `<g class="method" data-method="${escapeXml(c.method)}" data-color="${color}">${paths.join('')}</g>`;
  });
  const xTicks = niceTicks(1, rounds, 6).filter((t) => t >= 1 && t <= rounds && Number.isInteger(t));
  const xAxis = xTicks.map((t) => `<text class="x-tick" x="${num(x(t))}" y="${num(bottom + 16)}" text-anchor="middle">${t}</text>`).join('');
  const height = bottom + 44;
  return `${svgOpen(width, height, title, 'dem')}${legend.svg}<g class="plot-area">${yAxisSvg(ticks, y, left, right, 'log-likelihood')}${lines.join('')}<line x1="${left}" x2="${right}" y1="${num(bottom)}" y2="${num(bottom)}" stroke="#888"/>${xAxis}<text class="axis-label" x="${num((left + right) / 2)}" y="${num(bottom + 36)}" text-anchor="middle">round</text></g></svg>`;
}

/** The report's plots, by the id of the element each goes into (the traffic and EM plots only when there is something to draw). */
export function reportPlots(data: ReportData, width: number): Record<'plot-ll' | 'plot-aucpr', string> & Partial<Record<'plot-traffic' | 'plot-dem', string>> {
  return {
    'plot-ll': perMethodSvg({ title: 'test log-likelihood per method', methods: data.methods, values: data.logLikelihood, width, label: 'log-likelihood per row', baseline: 'data' }),
    'plot-aucpr': perMethodSvg({ title: 'AUC-PR per method', methods: data.methods, values: data.aucPr, width, label: 'AUC-PR', baseline: 'zero' }),
    ...(data.traffic.length ? { 'plot-traffic': trafficSvg(data.traffic, data.methods, width) } : {}),
    ...(data.curves.some((c) => c.runs.some((r) => r.length > 0)) ? { 'plot-dem': demCurvesSvg(data.curves, data.methods, width) } : {}),
  };
}
