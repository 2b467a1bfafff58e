/**
 * The FedGenGMM experiment's plots, drawn with uPlot: log-likelihood and
 * AUC-PR per method (the mean a bar, each repeat a point), rounds against the
 * bytes each federated run sent, and distributed EM's curve round by round.
 * One home for the two pages that draw them: the HTML report of `fedmix
 * experiment --report` inlines the drawing functions as source text, and the
 * browser demo (demo/) imports them. So each drawing function is
 * self-contained: it names nothing but its parameters and browser globals
 * (no imports, no module constants, no calls to its neighbours).
 */
import type { ExperimentReport } from './fedgengmm.js';

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

/** The series colours (the report inlines them as data). */
export const PLOT_COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

/** What these functions use of uPlot (each returns its chart, which destroy() takes down) (the caller supplies the library: inlined in the report, imported by the demo). */
export interface UPlotLib {
  new (options: object, data: unknown[], target: HTMLElement): { destroy(): void };
  paths: { bars(options: { size: [number, number] }): unknown };
  orient(u: unknown, seriesIdx: number, draw: (...a: any[]) => void): void;
}

/** Bars of the mean per method, each repeat a point. */
export function perMethodPlot(uPlot: UPlotLib, target: HTMLElement, title: string, methods: string[], values: MethodValues, width: number): { destroy(): void } {
  const n = methods.length;
  const xs = methods.map((_, i) => i);
  const repeats = Math.max(0, ...values.runs.map((r) => r.length));
  const series: object[] = [{}, { label: 'mean', stroke: '#1f77b4', fill: 'rgba(31,119,180,0.35)', paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } }];
  const cols: unknown[] = [xs, values.mean];
  for (let k = 0; k < repeats; k++) {
    series.push({ label: 'repeat ' + (k + 1), stroke: '#d62728', paths: () => null, points: { show: true, size: 6, fill: '#d62728' } });
    cols.push(values.runs.map((r) => (k < r.length ? r[k] : null)));
  }
  return new uPlot(
    {
      title,
      width,
      height: 300,
      series,
      scales: { x: { time: false, range: [-0.5, n - 0.5] } },
      axes: [{ splits: () => xs, values: (_u: unknown, splits: number[]) => splits.map((i) => methods[i] ?? '') }, {}],
      legend: { show: true },
    },
    cols,
    target,
  );
}

/** Rounds against bytes sent, one point per federated run (a scatter: uPlot's mode 2, drawing its own points as uPlot's scatter demo does). */
export function trafficPlot(uPlot: UPlotLib, target: HTMLElement, traffic: TrafficPoints[], colors: string[], width: number): { destroy(): void } {
  const drawPoints = (u: { data: number[][][]; ctx: CanvasRenderingContext2D }, seriesIdx: number) => {
    const size = 9 * devicePixelRatio;
    uPlot.orient(u, seriesIdx, (series: { stroke: () => string }, _dx: unknown, _dy: unknown, scaleX: unknown, scaleY: unknown, valToPosX: (v: number, s: unknown, dim: number, off: number) => number, valToPosY: (v: number, s: unknown, dim: number, off: number) => number, xOff: number, yOff: number, xDim: number, yDim: number, _moveTo: unknown, _lineTo: unknown, _rect: unknown, arc: (p: Path2D, x: number, y: number, r: number, a0: number, a1: number) => void) => {
      const d = u.data[seriesIdx]!;
      const p = new Path2D();
      for (let i = 0; i < d[0]!.length; i++) {
        const cx = valToPosX(d[0]![i]!, scaleX, xDim, xOff);
        const cy = valToPosY(d[1]![i]!, scaleY, yDim, yOff);
        p.moveTo(cx + size / 2, cy);
        arc(p, cx, cy, size / 2, 0, 2 * Math.PI);
      }
      u.ctx.fillStyle = series.stroke();
      u.ctx.fill(p);
    });
    return null;
  };
  const series = [{}].concat(traffic.map((t, i) => ({ label: t.method, stroke: colors[i % colors.length], fill: colors[i % colors.length], paths: drawPoints })));
  return new uPlot(
    {
      mode: 2,
      title: 'rounds against bytes sent (each repeat a point)',
      width,
      height: 320,
      series,
      // explicit ranges: uPlot's own for one point (a single run, or runs alike) spends seconds on a
      // zero-width log axis, and keeps the page from answering its workers meanwhile
      scales: {
        x: { time: false, range: (_u: unknown, lo: number, hi: number) => (lo === hi ? [Math.max(0, lo - 1), hi + 1] : [Math.max(0, lo - 0.05 * (hi - lo)), hi + 0.05 * (hi - lo)]) },
        y: {
          distr: 3,
          range: (_u: unknown, lo: number, hi: number) => {
            const a = Math.pow(10, Math.floor(Math.log10(lo)));
            const b = Math.pow(10, Math.ceil(Math.log10(hi)));
            return [a, b > a ? b : a * 10];
          },
        },
      },
      // rounds are whole numbers: whole-number ticks
      axes: [{ label: 'rounds', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }, { label: 'bytes (up + down)', size: 70 }],
    },
    [null, ...traffic.map((t) => [t.rounds, t.bytes])],
    target,
  );
}

/** One line per method and repeat over the EM rounds; runs that stopped earlier end earlier. */
export function demCurvesPlot(uPlot: UPlotLib, target: HTMLElement, curves: DemCurves[], colors: string[], width: number): { destroy(): void } {
  const rounds = Math.max(1, ...curves.flatMap((c) => c.runs.map((r) => r.length)));
  const xs = Array.from({ length: rounds }, (_, i) => i + 1);
  const series: object[] = [{ label: 'round' }];
  const cols: unknown[] = [xs];
  curves.forEach((c, i) =>
    c.runs.forEach((run, k) => {
      series.push({ label: c.method + (c.runs.length > 1 ? ' #' + (k + 1) : ''), stroke: colors[i % colors.length], width: 1.5 });
      cols.push(xs.map((_, j) => (j < run.length ? run[j] : null)));
    }),
  );
  return new uPlot(
    {
      title: 'distributed EM round by round: average client log-likelihood',
      width,
      height: 320,
      series,
      scales: { x: { time: false, range: [1, Math.max(2, rounds)] } },
      axes: [{ label: 'round', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] }, { label: 'log-likelihood', size: 60 }],
    },
    cols,
    target,
  );
}
