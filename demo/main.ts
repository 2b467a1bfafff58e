/**
 * The browser demo: the FedGenGMM experiment (runFedGenGMMExperiment of fedmix/experiments,
 * the function behind `fedmix demo`) on the embedded thyroid set, with every
 * client of every federation in a module Web Worker of its own
 * (WebWorkerTransport, one worker per client) exchanging encoded messages with
 * the server on this page through the federation runtime. The plots are the
 * HTML report's (ts/experiments/fedgengmm/plots.ts); distributed EM's curve grows as its
 * rounds arrive.
 */
import * as fedmix from 'fedmix';
import type { ClientSpec, RoundRecord } from 'fedmix';
import { FEDGENGMM_EXPERIMENT_METHODS, labelledFromCsv, runFedGenGMMExperiment, type LabelledData } from 'fedmix/experiments';
import type { FedGenGMMExperimentConfig, FedGenGMMExperimentReport, FedGenGMMRunScores } from 'fedmix/experiments';
import './style.css';
import thyroidCsv from '../ts/data/datasets/anomaly_thyroid.csv?raw';
import { bytesText, demCurvesSvg, meanStd, reportData, reportPlots, type DemCurves, type ReportData } from '../ts/experiments/fedgengmm/plots.js';
import { DEMO_CONFIG } from '../ts/experiments/fedgengmm/demo-config.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const form = $<HTMLFormElement>('controls');
const status = $<HTMLParagraphElement>('status');
const table = $<HTMLTableElement>('results');

/** What the page exposes for its test (and for a curious console): the last run's config, report and worker count. */
interface DemoState {
  state: 'loading' | 'ready' | 'running' | 'done' | 'failed';
  config?: FedGenGMMExperimentConfig;
  report?: FedGenGMMExperimentReport;
  workersStarted: number;
  /** distributed EM's curve as it arrived round by round (per method, per repeat) */
  liveCurves: Record<string, number[][]>;
  /** every round of every federation as the runtime recorded it: its kind, the exchange's milliseconds and the failures */
  rounds: { method: string; repeat: number; round: number; kind: string; exchangeMs: number; failures: string[] }[];
  error?: string;
  simd?: boolean;
}
const demo: DemoState = { state: 'loading', workersStarted: 0, liveCurves: {}, rounds: [] };
(globalThis as unknown as { fedmixDemo: DemoState }).fedmixDemo = demo;

function setState(state: DemoState['state'], text: string): void {
  demo.state = state;
  document.body.dataset.state = state;
  status.textContent = text;
}

function plotWidth(): number {
  return Math.max(320, Math.min(900, document.body.clientWidth - 20));
}

/** Draws one plot (SVG text) into its element, in place of what was there. */
function draw(id: string, svg: string): void {
  $(id).innerHTML = svg;
}

function clearPlot(id: string): void {
  $(id).replaceChildren();
}

function drawPlots(data: ReportData, live: DemCurves[]): void {
  const plots = reportPlots({ ...data, curves: [] }, plotWidth());
  draw('plot-ll', plots['plot-ll']);
  draw('plot-aucpr', plots['plot-aucpr']);
  if (plots['plot-traffic']) draw('plot-traffic', plots['plot-traffic']);
  drawDem(live.length ? live : data.curves, data.methods);
}

function drawDem(curves: DemCurves[], methods: string[] = []): void {
  if (curves.some((c) => c.runs.some((r) => r.length > 0))) draw('plot-dem', demCurvesSvg(curves, methods, plotWidth()));
}

/** The plots' data from the runs finished so far (the report's own shape, means over the repeats done). */
function partialData(methods: string[], runs: Map<string, FedGenGMMRunScores[]>): ReportData {
  const done = methods.filter((m) => (runs.get(m)?.length ?? 0) > 0);
  const mean = (m: string, k: keyof FedGenGMMRunScores) => {
    const r = runs.get(m)!;
    return r.reduce((a, x) => a + x[k], 0) / r.length;
  };
  return {
    title: '',
    methods: done,
    logLikelihood: { mean: done.map((m) => mean(m, 'logLikelihood')), runs: done.map((m) => runs.get(m)!.map((x) => x.logLikelihood)) },
    aucPr: { mean: done.map((m) => mean(m, 'aucPr')), runs: done.map((m) => runs.get(m)!.map((x) => x.aucPr)) },
    traffic: done
      .filter((m) => mean(m, 'bytesUp') > 0)
      .map((m) => ({ method: m, rounds: runs.get(m)!.map((x) => x.rounds), bytes: runs.get(m)!.map((x) => x.bytesUp + x.bytesDown) })),
    curves: [],
  };
}

function liveCurves(): DemCurves[] {
  return Object.entries(demo.liveCurves).map(([method, runs]) => ({ method, runs }));
}

/** The results table: the means as text, and every shown number at full precision in data-value (what the test compares). */
function showTable(report: FedGenGMMExperimentReport): void {
  const body = table.tBodies[0]!;
  body.replaceChildren();
  for (const x of report.results) {
    const tr = body.insertRow();
    tr.dataset.method = x.method;
    const cell = (text: string, key?: keyof FedGenGMMRunScores) => {
      const td = tr.insertCell();
      td.textContent = text;
      if (key) {
        td.dataset.key = key;
        td.dataset.value = String(x.mean[key]);
      }
    };
    cell(x.method);
    cell(meanStd(x.mean.logLikelihood, x.std.logLikelihood), 'logLikelihood');
    cell(meanStd(x.mean.aucPr, x.std.aucPr), 'aucPr');
    cell(meanStd(x.mean.rocAuc, x.std.rocAuc), 'rocAuc');
    cell(x.mean.rounds === 0 ? '-' : x.mean.rounds.toFixed(1), 'rounds');
    cell(bytesText(x.mean.bytesUp), 'bytesUp');
    cell(bytesText(x.mean.bytesDown), 'bytesDown');
    cell(x.mean.seconds.toFixed(2));
  }
  table.hidden = false;
}

interface DemoControls {
  partition: 'iid' | 'dirichlet' | 'shift';
  alpha: number;
  classes: number;
  clients: number;
  repeats: number;
  seed: number;
}

/**
 * The experiment's config: `fedmix demo`'s settings with the page's choices.
 * Thyroid has no classes, so Dir(alpha) deals k-means clusters of the
 * training rows (clusterClasses); the shift scheme cuts the rows into its
 * artificial classes.
 */
function demoConfig(c: DemoControls): FedGenGMMExperimentConfig {
  const base: FedGenGMMExperimentConfig = {
    ...DEMO_CONFIG,
    clientKRange: [DEMO_CONFIG.clientKRange[0], DEMO_CONFIG.clientKRange[1]],
    methods: [...FEDGENGMM_EXPERIMENT_METHODS],
    partition: c.partition,
    clients: c.clients,
    repeats: c.repeats,
    seed: c.seed,
  };
  if (c.partition === 'shift') return { ...base, alpha: c.alpha, classes: c.classes };
  if (c.partition === 'dirichlet') return { ...base, alpha: c.alpha, clusterClasses: c.classes };
  return base;
}

function controls(): DemoControls {
  const f = new FormData(form);
  const num = (k: string) => Number(f.get(k));
  return { partition: String(f.get('partition')) as DemoControls['partition'], alpha: num('alpha'), classes: num('classes'), clients: num('clients'), repeats: num('repeats'), seed: num('seed') };
}

/** The alpha field means Dir(alpha)'s concentration, or classes per client for the shift scheme. */
function labelControls(): void {
  const p = controls().partition;
  $('alpha-label').textContent = p === 'dirichlet' ? 'α (Dir concentration)' : 'classes per client';
  form.querySelector<HTMLInputElement>('[name=alpha]')!.disabled = p === 'iid';
  $('classes-label').textContent = p === 'dirichlet' ? 'k-means clusters' : 'artificial classes';
  form.querySelector<HTMLInputElement>('[name=classes]')!.disabled = p === 'iid';
}

async function run(data: LabelledData): Promise<void> {
  const config = demoConfig(controls());
  demo.config = config;
  demo.report = undefined;
  demo.liveCurves = {};
  demo.rounds = [];
  demo.error = undefined;
  for (const id of ['plot-ll', 'plot-aucpr', 'plot-traffic', 'plot-dem']) clearPlot(id);
  table.hidden = true;
  const button = $<HTMLButtonElement>('run');
  button.disabled = true;
  const methods = config.methods!;
  const runs = new Map<string, FedGenGMMRunScores[]>();
  let frame = 0;
  const drawSoon = () => {
    // rounds come faster than frames: one redraw per frame
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      drawPlots(partialData(methods, runs), liveCurves());
    });
  };
  setState('running', `Running: ${config.clients} clients, each in a Web Worker…`);
  try {
    const report = await runFedGenGMMExperiment(data, config, {
      clients: async (specs: ClientSpec[], { encoding }) => {
        demo.workersStarted += specs.length;
        return fedmix.WebWorkerTransport.start(specs, { workers: specs.length, encoding });
      },
      onRound: ({ method, repeat, record }: { method: string; repeat: number; record: RoundRecord }) => {
        demo.rounds.push({ method, repeat, round: record.round, kind: record.kind, exchangeMs: record.ms.exchange, failures: record.failures.map((f) => f.reason) });
        const ll = (record.metrics as { logLikelihood?: number } | undefined)?.logLikelihood;
        if (!method.startsWith('dem') || ll === undefined) return;
        const curves = (demo.liveCurves[method] ??= []);
        (curves[repeat] ??= []).push(ll);
        status.textContent = `Repeat ${repeat + 1}/${config.repeats}, ${method}: EM round ${curves[repeat]!.length}, average client log-likelihood ${ll.toFixed(4)}`;
        drawSoon();
      },
      onRun: ({ method, scores }) => {
        runs.set(method, [...(runs.get(method) ?? []), scores]);
        drawSoon();
      },
    });
    cancelAnimationFrame(frame);
    frame = 0;
    demo.report = report;
    showTable(report);
    drawPlots(reportData(report, ''), []);
    const d = report.dataset;
    setState('done', `Done: ${d.trainRows} training rows over ${config.clients} clients (${config.partition}), ${d.testRows} test rows of which ${d.anomalies} anomalous; ${demo.workersStarted} Web Workers started. ${demo.simd ? 'SIMD' : 'Scalar'} WebAssembly build.`);
  } catch (e) {
    demo.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    setState('failed', `Failed: ${demo.error}`);
  } finally {
    button.disabled = false;
  }
}

async function main(): Promise<void> {
  // the core module, distributed EM's (FedGenGMM's hierarchical step, the DEM baselines) and 'dirichlet'
  // (the Dirichlet partitions' draws): 222 KB of WebAssembly gzipped instead of every module; the worker
  // clients get the same three
  const { simd } = await fedmix.init({ features: ['dem', 'dirichlet'] });
  demo.simd = simd;
  const data = labelledFromCsv(thyroidCsv, { anomalyLabel: 'label' });
  form.querySelector('[name=partition]')!.addEventListener('change', () => {
    // each meaning of alpha has its own usual value: Dir(0.3), 2 classes per client
    const p = controls().partition;
    if (p !== 'iid') form.querySelector<HTMLInputElement>('[name=alpha]')!.value = String(p === 'dirichlet' ? 0.3 : DEMO_CONFIG.alpha);
    labelControls();
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void run(data);
  });
  labelControls();
  setState('ready', `Ready: ${data.X.nRows} rows x ${data.X.nCols} features (${simd ? 'SIMD' : 'scalar'} WebAssembly build). Choose a partition and the number of clients, then Run.`);
}

main().catch((e: unknown) => {
  demo.error = String(e);
  setState('failed', `Failed to start: ${demo.error}`);
});
