/**
 * The HTML report's plots (`fedmix experiment --report`, ts/experiments/fedgengmm/plots.ts), read back from the
 * SVG the report writes for a results file of EXPERIMENTS.md (thyroid, shift partition: local's
 * log-likelihood is -1305 where the other methods lie between -3.5 and 1.1):
 * - a method far below the others does not squash them: their means span most of the value axis, and
 *   the far one is drawn broken at the axis' edge with its value written;
 * - method names under the axis do not overlap at the report's font size, however many and however
 *   long; a shortened name keeps its full text in a tooltip;
 * - one method has one colour in every plot;
 * - legends name what is drawn (no "Value: --" cursor readout).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { reportHtml } from '../ts/experiments/fedgengmm/report.js';
import type { FedGenGMMExperimentReport } from '../ts/experiments/index.js';
import { METHODS } from '../ts/experiments/fedgengmm/run.js';
import { farMethods, perMethodSvg } from '../ts/experiments/fedgengmm/plots.js';

const results = (name: string) => JSON.parse(readFileSync(new URL(`../bench/results/fedgengmm/${name}.json`, import.meta.url), 'utf8')) as FedGenGMMExperimentReport;
const thyroid = results('a-anomaly_thyroid-shift1');
const html = reportHtml(thyroid, 'thyroid, shift', 'the table');

interface Svg {
  kind: string;
  text: string;
}
const svgs = (page: string): Svg[] => [...page.matchAll(/<svg [^>]*data-plot="([^"]+)"[\s\S]*?<\/svg>/g)].map((m) => ({ kind: m[1]!, text: m[0] }));
const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];

interface MethodMark {
  method: string;
  color: string;
  far?: string;
  body: string;
}
/** Each method's group of marks in a plot. */
function methodMarks(svg: string): MethodMark[] {
  return [...svg.matchAll(/<g class="method"([^>]*)>([\s\S]*?)<\/g>/g)].map((m) => ({ method: attr(m[1]!, 'data-method')!, color: attr(m[1]!, 'data-color')!, far: attr(m[1]!, 'data-far'), body: m[2]! }));
}

/** The corners of each x-axis label's box: its text's estimated width (0.6 em a character) by one em, turned as its transform says. */
function labelBoxes(svg: string): { text: string; title: string; corners: [number, number][] }[] {
  return [...svg.matchAll(/<text class="x-label"([^>]*)><title>([^<]*)<\/title>([^<]*)<\/text>/g)].map((m) => {
    const tag = m[1]!;
    const size = Number(attr(tag, 'font-size'));
    const x = Number(attr(tag, 'x'));
    const y = Number(attr(tag, 'y'));
    const text = m[3]!.replace(/&amp;/g, '&').replace(/&lt;/g, '<');
    const w = text.length * 0.6 * size;
    const anchor = attr(tag, 'text-anchor');
    const x0 = anchor === 'middle' ? x - w / 2 : anchor === 'end' ? x - w : x;
    const rot = /rotate\(([-\d.]+) ([-\d.]+) ([-\d.]+)\)/.exec(attr(tag, 'transform') ?? '');
    const [a, cx, cy] = rot ? [(Number(rot[1]) * Math.PI) / 180, Number(rot[2]), Number(rot[3])] : [0, x, y];
    const turn = ([px, py]: [number, number]): [number, number] => [cx + (px - cx) * Math.cos(a) - (py - cy) * Math.sin(a), cy + (px - cx) * Math.sin(a) + (py - cy) * Math.cos(a)];
    const corners: [number, number][] = [[x0, y - size * 0.8], [x0 + w, y - size * 0.8], [x0 + w, y + size * 0.2], [x0, y + size * 0.2]];
    return { text, title: m[2]!, corners: corners.map(turn) };
  });
}

/** Whether two convex polygons overlap (separating axis test). */
function overlap(p: [number, number][], q: [number, number][]): boolean {
  for (const poly of [p, q]) {
    for (let i = 0; i < poly.length; i++) {
      const [x1, y1] = poly[i]!;
      const [x2, y2] = poly[(i + 1) % poly.length]!;
      const [nx, ny] = [y2 - y1, x1 - x2];
      const proj = (r: [number, number][]) => r.map(([x, y]) => x * nx + y * ny);
      const [a, b] = [proj(p), proj(q)];
      if (Math.max(...a) <= Math.min(...b) || Math.max(...b) <= Math.min(...a)) return false;
    }
  }
  return true;
}

function expectNoOverlap(svg: string): void {
  const boxes = labelBoxes(svg);
  expect(boxes.length).toBeGreaterThan(0);
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes[i]!.corners, boxes[j]!.corners), `"${boxes[i]!.text}" and "${boxes[j]!.text}"`).toBe(false);
}

describe('the report of a results file (thyroid, shift partition)', () => {
  const plots = svgs(html);

  test('four plots, as SVG in the page', () => {
    expect(plots.map((p) => p.kind)).toEqual(['per-method', 'per-method', 'traffic', 'dem']);
  });

  test('local, far below the others, does not squash them: their means span most of the axis, and local is drawn broken with its value', () => {
    const ll = plots[0]!.text;
    const area = /<g class="plot-area" data-top="([\d.]+)" data-bottom="([\d.]+)"/.exec(ll)!;
    const [top, bottom] = [Number(area[1]), Number(area[2])];
    const marks = methodMarks(ll);
    expect(marks.map((m) => m.method)).toEqual(thyroid.results.map((r) => r.method));
    const local = marks.find((m) => m.method === 'local')!;
    expect(local.far).toBe('below');
    expect(local.body).toMatch(/class="axis-break"/);
    expect(local.body).toContain('-1305 ↓');
    const ys = marks.filter((m) => !m.far).map((m) => Number(/class="mean-mark"[^>]*y1="([-\d.]+)"/.exec(m.body)![1]));
    expect(ys).toHaveLength(5);
    for (const y of ys) {
      expect(y).toBeGreaterThanOrEqual(top);
      expect(y).toBeLessThanOrEqual(bottom);
    }
    // the five means (-3.49 to 1.14) cover at least half of the plot's height
    expect((Math.max(...ys) - Math.min(...ys)) / (bottom - top)).toBeGreaterThan(0.5);
  });

  test('the far-method rule on every results file of part a: local is set apart where it squashes the rest, and never a method close to the others', () => {
    for (const name of ['a-anomaly_cardio-shift1', 'a-anomaly_thyroid-shift1', 'a-satellite-dir0.1', 'a-shuttle-dir1.0', 'a-letter-dir1.0']) {
      const r = results(name);
      const means = r.results.map((x) => x.mean.logLikelihood);
      const far = farMethods(means);
      const near = means.filter((_, i) => !far[i]);
      const span = Math.max(...near) - Math.min(...near);
      for (let i = 0; i < means.length; i++) {
        // what is set apart lies at least four spans of the rest away from it; what stays is within the axis
        if (far[i]) expect(Math.min(Math.abs(means[i]! - Math.min(...near)), Math.abs(means[i]! - Math.max(...near))), `${name} ${r.results[i]!.method}`).toBeGreaterThan(4 * span);
      }
      expect(near.length).toBeGreaterThanOrEqual(Math.max(3, Math.ceil(means.length / 2)));
    }
    // nothing is set apart when no gap exceeds four times the span of the rest, nor with three methods or fewer
    expect(farMethods([1.14, 0.09, 1.14, 0.99, 0.65, 0.7])).toEqual([false, false, false, false, false, false]);
    expect(farMethods([1, 2, -1000])).toEqual([false, false, false]);
    expect(farMethods([47.8, 48.2, 46.4, 46.6, 48.3, -374])).toEqual([false, false, false, false, false, true]);
  });

  test('one colour per method across the plots, a different one for each method', () => {
    const maps = plots.map((p) => new Map(methodMarks(p.text).map((m) => [m.method, m.color])));
    const all = new Map<string, string>();
    for (const map of maps) {
      for (const [method, color] of map) {
        expect(all.get(method) ?? color, method).toBe(color);
        all.set(method, color);
      }
    }
    expect(new Set(all.values()).size).toBe(all.size);
    // the marks are drawn in that colour, and the traffic and EM legends show it beside the method's name
    for (const p of plots) for (const m of methodMarks(p.text)) expect(m.body).toContain(`"${m.color}"`);
    for (const p of plots.slice(2)) {
      const legend = [...p.text.matchAll(/<g class="legend-entry" data-label="([^"]+)" data-color="([^"]+)"/g)].map((m) => [m[1], m[2]]);
      expect(legend).toEqual(methodMarks(p.text).map((m) => [m.method, m.color]));
    }
  });

  test('legends name what is drawn: no "Value: --"', () => {
    expect(html).not.toMatch(/Value/);
    expect(html).not.toMatch(/:\s*--/);
    for (const p of plots) expect(p.text).toMatch(/<g class="legend">/);
    expect(plots[0]!.text).toMatch(/mean over the repeats/);
  });

  test('the method names under the axes do not overlap', () => {
    expectNoOverlap(plots[0]!.text);
    expectNoOverlap(plots[1]!.text);
  });
});

describe('method names under the axis', () => {
  const values = { mean: METHODS.map((_, i) => i), runs: METHODS.map((_, i) => [i, i + 0.5]) };
  test.for([900, 600, 420, 320])('every method of the experiment, %i px wide: no overlap; a shortened name has its full text as a tooltip', (width) => {
    const svg = perMethodSvg({ title: 't', methods: [...METHODS, 'a method with a very long name indeed'], values: { mean: [...values.mean, 1], runs: [...values.runs, [1]] }, width, label: 'v', baseline: 'data' });
    expectNoOverlap(svg);
    const boxes = labelBoxes(svg);
    expect(boxes.map((b) => b.title)).toEqual([...METHODS, 'a method with a very long name indeed']);
    for (const b of boxes) expect(b.text === b.title || (b.text.endsWith('…') && b.title.startsWith(b.text.slice(0, -1)))).toBe(true);
    // the labels stay inside the picture
    const height = Number(attr(svg.slice(0, svg.indexOf('>')), 'height'));
    for (const b of boxes) for (const [x, y] of b.corners) expect(x >= -1 && y <= height + 1, `${b.text} at ${width} px`).toBe(true);
  });

  test('names that fit stay level and whole', () => {
    const svg = perMethodSvg({ title: 't', methods: ['fedgengmm', 'central', 'local'], values: { mean: [1, 2, 3], runs: [[1], [2], [3]] }, width: 900, label: 'v', baseline: 'zero' });
    expect(svg).not.toMatch(/class="x-label"[^>]*transform/);
    expect(labelBoxes(svg).map((b) => b.text)).toEqual(['fedgengmm', 'central', 'local']);
  });
});
