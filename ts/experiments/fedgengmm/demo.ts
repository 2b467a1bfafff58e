/**
 * `fedmix demo`: the FedGenGMM experiment on the embedded thyroid anomaly
 * dataset (3,772 rows, 6 features, 93 anomalies). Thyroid has no classes, so
 * the training inliers are made heterogeneous as the paper made WADI: the shift
 * scheme cuts them into M artificial classes and deals them out by
 * Quantity(alpha). Every method is fitted and scored side by side.
 */
import { thyroid } from '../../data/datasets/index.js';
import { DEMO_CONFIG } from './demo-config.js';
import { METHODS, runExperiment, type ExperimentConfig } from './run.js';
import type { OptionSpec, Options } from '../../cli/args.js';
import type { NamedCommand } from '../../cli/command.js';
import { experimentConfig, experimentExclusions, experimentOptions, formatReport } from './command.js';
import type { CommandResult } from '../../cli/io.js';
import { progressBar } from '../../cli/progress.js';
import { writeReport } from './report.js';

const { data: _data, label: _label, 'anomaly-label': _anomaly, ...rest } = experimentOptions;

/** The experiment's options with the demo's defaults (./demo-config.ts, shared with the browser demo). */
export const demoOptions: Record<string, OptionSpec> = {
  ...rest,
  clients: { ...rest.clients!, default: DEMO_CONFIG.clients },
  partition: { ...rest.partition!, default: DEMO_CONFIG.partition },
  alpha: { ...rest.alpha!, default: DEMO_CONFIG.alpha },
  beta: { ...rest.beta!, default: DEMO_CONFIG.beta },
  classes: { ...rest.classes!, default: DEMO_CONFIG.classes },
  components: { ...rest.components!, default: DEMO_CONFIG.components },
  'client-k-range': { ...rest['client-k-range']!, default: [DEMO_CONFIG.clientKRange[0], DEMO_CONFIG.clientKRange[1]] },
  covariance: { ...rest.covariance!, default: DEMO_CONFIG.covarianceType },
  h: { ...rest.h!, default: DEMO_CONFIG.h },
  tol: { ...rest.tol!, default: DEMO_CONFIG.tol },
  repeats: { ...rest.repeats!, default: DEMO_CONFIG.repeats },
  seed: { ...rest.seed!, default: DEMO_CONFIG.seed },
  encoding: { ...rest.encoding!, default: DEMO_CONFIG.encoding },
  methods: { ...rest.methods!, default: METHODS.join(',') },
};

export async function runDemoCommand(o: Options): Promise<CommandResult> {
  const d = thyroid();
  const config: ExperimentConfig = { ...experimentConfig(o), onProgress: progressBar('demo') };
  const report = runExperiment({ X: d.X, featureNames: d.featureNames, anomaly: d.anomaly }, config);
  const title = `fedmix demo: FedGenGMM and its baselines on the ${d.description}`;
  const text = formatReport(report, title);
  if (typeof o.report === 'string') writeReport(o.report, report, title, text);
  return {
    text,
    json: { data: { file: 'embedded: anomaly_thyroid.csv', anomalyLabel: 'label' }, ...report },
    excluded: experimentExclusions(report),
  };
}

export const demoCommand: NamedCommand = {
  name: 'demo',
  summary: 'FedGenGMM and its baselines on the embedded thyroid anomaly dataset',
  options: demoOptions,
  run: runDemoCommand,
};
