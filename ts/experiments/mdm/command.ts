/**
 * `fedmix mdm fit` and `fedmix mdm simulate`: learn a mixture of
 * Dirichlet-multinomials from client histograms (federated, in process), and
 * turn a central labelled dataset into simulated clients drawn from it or from
 * the paper's baselines.
 *
 * Histogram CSV: a header naming the categories, then one row per client with
 * one count per category (n is the row sum). Model JSON: { tau (K numbers),
 * alpha (K rows of C), pi (K rows of N), categories }. Assignment CSV: a header
 * "client,row", then one line per row a client holds (row: the 0-based data row
 * of the central CSV).
 */
import { readFileSync } from 'node:fs';
import { writeFileAtomicSync } from '../../atomic-write.js';
import type { Matrix } from '../../data/matrix.js';
import { InvalidParameterError } from '../../errors.js';
import { mdm } from '../../federated/mdm/descriptor.js';
import { fitMdm, type MdmFitResult } from '../../federated/mdm/run.js';
import { selectMdm } from '../../federated/mdm/select.js';
import type { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { partition } from '../../partition/index.js';
import type { Partition } from '../../partition/shared.js';
import type { OptionSpec, Options } from '../../cli/args.js';
import type { NamedCommand } from '../../cli/command.js';
import { readDataFile } from '../../cli/data.js';
import { exclusionLine, note, type CommandResult } from '../../cli/io.js';
import { progressBar } from '../../cli/progress.js';

export const mdmFitOptions: Record<string, OptionSpec> = {
  data: { type: 'string', help: 'histogram CSV: a header of category names, one row of counts per client (required)' },
  k: { type: 'int', help: 'number of components K' },
  'k-range': { type: 'range', help: 'choose K in A..B by validation log-likelihood (Appendix A.1), instead of --k' },
  rounds: { type: 'int', default: 100, help: "Algorithm 2's rounds T" },
  cohort: { type: 'int', help: 'clients per round (default: every client, the full-batch iteration)' },
  'init-cohort': { type: 'int', help: "Algorithm 1's cohort (default: --cohort)" },
  'max-count': { type: 'int', help: 'N, the largest client size the model covers (default: the largest row sum)' },
  'validation-cohort': { type: 'int', help: 'with --k-range: clients held out to score the candidates (default 20%, at most 1000)' },
  tolerance: { type: 'number', default: 0.01, help: 'with --k-range: keep the smallest K within this many nats (mean per client) of the best' },
  'noise-multiplier': { type: 'number', help: 'Gaussian noise on the aggregates, in sensitivities (central DP); needs --clip' },
  clip: { type: 'number', help: "bound on each client's (u, v) L2 norm when adding noise" },
  'exact-validation': {
    type: 'flag',
    help: "with --k-range and --noise-multiplier: accept that choosing K releases exact (noise-free) sums of the validation clients' log-likelihoods",
  },
  seed: { type: 'int', default: 0, help: 'seed of the cohort draws and every other random choice but the noise' },
  'max-excluded-share': { type: 'number', default: 0.5, help: 'the run fails once more than this share of the clients is excluded (their contributions failed a check)' },
  'noise-seed': { type: 'int', help: "seed of the privacy noise, for tests only: whoever knows it can subtract the noise (default: fresh from the system's cryptographic generator)" },
  out: { type: 'string', help: 'write the model JSON here (default: print it)' },
};

export const mdmSimulateOptions: Record<string, OptionSpec> = {
  model: { type: 'string', help: 'model JSON from `fedmix mdm fit` (for --method mdm)' },
  data: { type: 'string', help: 'the central dataset, a CSV with a header (required)' },
  label: { type: 'string', default: 'label', help: 'the column whose classes the histograms count' },
  method: { type: 'string', default: 'mdm', choices: ['mdm', 'fully-iid', 'conditionally-iid'], help: 'how histograms are chosen' },
  histograms: { type: 'string', help: "the true clients' histogram CSV (for fully-iid: their sizes; for conditionally-iid: the histograms themselves)" },
  clients: { type: 'int', help: 'clients to simulate (default: as many as --histograms has rows)' },
  disjoint: { type: 'flag', help: 'deal rows without replacement across clients (default: clients sample the data independently)' },
  seed: { type: 'int', default: 0, help: 'seed' },
  out: { type: 'string', help: 'write the assignment CSV (client,row) here (default: print it)' },
};

/** A histogram CSV as a matrix (rows: clients) and its category names. */
export async function readHistogramCsv(path: string, o: Options = {}): Promise<{ histograms: Matrix; categories: string[] }> {
  const { X, names } = (await readDataFile(path, o)).toMatrix();
  return { histograms: X, categories: names };
}

function privacyOf(o: Options): { noiseMultiplier: number; clip: number } | undefined {
  const z = o['noise-multiplier'] as number | undefined;
  const clip = o.clip as number | undefined;
  if (z === undefined && clip === undefined) return undefined;
  if (z === undefined || clip === undefined) throw new InvalidParameterError('--noise-multiplier and --clip go together');
  return { noiseMultiplier: z, clip };
}

function describeFit(fit: MdmFitResult): string {
  const last = fit.history[fit.history.length - 1];
  const ll = last?.meanLogLikelihood;
  const parts = [`${fit.history.length} rounds`, `${fit.traffic.messagesUp} client messages`, `${(fit.traffic.bytesUp / 1e6).toFixed(1)} MB up`];
  if (ll !== undefined) parts.push(`last round's mean log-likelihood ${ll.toFixed(4)}`);
  if (fit.excluded.length) parts.push(`${fit.excluded.length} clients excluded`);
  return parts.join(', ');
}

export async function runMdmFitCommand(o: Options): Promise<CommandResult> {
  if (typeof o.data !== 'string') throw new InvalidParameterError('--data FILE is required (the histogram CSV)');
  if ((o.k === undefined) === (o['k-range'] === undefined)) throw new InvalidParameterError('give --k K or --k-range A..B (one of them)');
  const { histograms, categories } = await readHistogramCsv(o.data, o);
  const common = {
    rounds: o.rounds as number,
    cohort: o.cohort as number | undefined,
    initCohort: o['init-cohort'] as number | undefined,
    maxCount: o['max-count'] as number | undefined,
    privacy: privacyOf(o),
    seed: o.seed as number,
    noiseSeed: o['noise-seed'] as number | undefined,
    maxExcludedShare: o['max-excluded-share'] as number,
    categories,
  };
  let model: DirichletMultinomialMixture;
  let lines: string[];
  let json: Record<string, unknown>;
  let excluded: string[];
  if (o.k !== undefined) {
    const bar = progressBar('mdm fit');
    const rounds = common.rounds;
    const fit = fitMdm(histograms, { ...common, nComponents: o.k as number, onRound: (r) => r > 0 && bar(r, rounds, `round ${r}`) });
    model = fit.model;
    lines = [`K = ${model.nComponents}: ${describeFit(fit)}`];
    if (fit.initGuards.length) lines.push(`initialization guards: ${fit.initGuards.join(', ')}`);
    json = { k: model.nComponents, history: fit.history, initGuards: fit.initGuards, traffic: fit.traffic, excluded: fit.excluded };
    excluded = fit.excluded.map((e) => exclusionLine(e));
  } else {
    const [a, b] = o['k-range'] as [number, number];
    if (common.privacy && o['exact-validation'] !== true) {
      throw new InvalidParameterError(
        "--k-range with --noise-multiplier: choosing K releases exact (noise-free) sums of the validation clients' log-likelihoods, which the privacy guarantee does not cover; " +
          'add --exact-validation to accept that, or fit a fixed --k',
      );
    }
    const bar = progressBar('mdm fit');
    let done = 0;
    const sel = selectMdm(histograms, {
      ...common,
      kRange: [a, b],
      validationCohort: o['validation-cohort'] as number | undefined,
      tolerance: o.tolerance as number,
      exactValidation: o['exact-validation'] === true,
      onCandidate: (k) => bar(++done, b - a + 1, `K = ${k}`),
    });
    model = sel.model;
    lines = [
      `K = ${sel.k} chosen by validation log-likelihood on ${sel.scoredClients} of ${sel.validationClients} held-out clients (tolerance ${o.tolerance}):`,
      ...sel.candidates.map((c) => `  K = ${c.k}: ${c.meanLogLikelihood.toFixed(4)}${c.k === sel.k ? '  <- chosen' : ''}`),
    ];
    json = {
      k: sel.k,
      candidates: sel.candidates.map((c) => ({ k: c.k, meanLogLikelihood: c.meanLogLikelihood, history: c.fit.history, initGuards: c.fit.initGuards })),
      validationClients: sel.validationClients,
      scoredClients: sel.scoredClients,
      traffic: sel.traffic,
    };
    excluded = [
      ...sel.candidates.flatMap((c) => c.fit.excluded.map((e) => exclusionLine(e, `K = ${c.k}`))),
      ...sel.excluded.map((e) => exclusionLine(e, 'validation')),
    ];
  }
  // saved as the registry saves an MDM federation's result (`fedmix server --algorithm mdm --out`): either file is a --model of `mdm simulate`
  const saved = mdm.artifact.save(model);
  const modelText = JSON.stringify(saved, null, 2);
  if (typeof o.out === 'string') {
    writeFileAtomicSync(o.out, modelText + '\n');
    lines.push(`model written to ${o.out}`);
    return { text: [`fedmix mdm fit: ${o.data}, ${histograms.nRows} clients, C = ${model.nCategories}, N = ${model.maxCount}`, ...lines].join('\n'), json: { ...json, model: saved }, excluded };
  }
  // no --out: stdout carries the model alone, the summary goes to stderr
  note(lines.join('\n'));
  return { text: modelText, json: { ...json, model: saved }, excluded };
}

export async function runMdmSimulateCommand(o: Options): Promise<CommandResult> {
  if (typeof o.data !== 'string') throw new InvalidParameterError('--data FILE is required (the central dataset)');
  const table = await readDataFile(o.data, o);
  const labels = table.texts(table.column(o.label as string));
  const method = o.method as 'mdm' | 'fully-iid' | 'conditionally-iid';
  const truth = typeof o.histograms === 'string' ? await readHistogramCsv(o.histograms, o) : undefined;
  const seed = o.seed as number;
  const disjoint = o.disjoint === true;
  let p: Partition;
  if (method === 'mdm') {
    if (typeof o.model !== 'string') throw new InvalidParameterError('--method mdm needs --model FILE (from `fedmix mdm fit`)');
    const model = mdm.artifact.load(readFileSync(o.model, 'utf8'));
    const clients = (o.clients as number | undefined) ?? truth?.histograms.nRows;
    if (clients === undefined) throw new InvalidParameterError('give --clients M (or --histograms, to simulate as many clients as it has rows)');
    p = partition.mdm(labels, { model, clients, seed, disjoint });
  } else {
    if (!truth) throw new InvalidParameterError(`--method ${method} needs --histograms FILE (the true clients' histograms)`);
    const classes = truth.categories;
    if (method === 'conditionally-iid') {
      if (o.clients !== undefined && o.clients !== truth.histograms.nRows) throw new InvalidParameterError('conditionally-iid simulates exactly the clients of --histograms; drop --clients');
      p = partition.conditionallyIid(labels, { histograms: truth.histograms, classes, seed, disjoint });
    } else {
      const h = truth.histograms;
      const sizes = Array.from({ length: h.nRows }, (_, i) => {
        let n = 0;
        for (let j = 0; j < h.nCols; j++) n += h.data[j * h.nRows + i]!;
        return n;
      });
      p = partition.fullyIid(labels, { sizes, clients: o.clients as number | undefined, seed, disjoint });
    }
  }
  const lines = ['client,row'];
  p.indices.forEach((rows, c) => rows.forEach((r) => lines.push(`${c},${r}`)));
  const csv = lines.join('\n');
  const total = p.indices.reduce((a, r) => a + r.length, 0);
  const summary = `fedmix mdm simulate (${method}): ${p.indices.length} clients, ${total} rows dealt (mean ${(total / p.indices.length).toFixed(1)} per client) from ${table.nRows} rows of ${o.data}`;
  const json = { method, clients: p.indices.length, classes: p.classes, histograms: p.histograms.map((h) => Array.from(h)) };
  if (typeof o.out === 'string') {
    writeFileAtomicSync(o.out, csv + '\n');
    return { text: `${summary}; assignment written to ${o.out}`, json };
  }
  note(summary);
  return { text: csv, json };
}

/** `fedmix mdm fit` and `fedmix mdm simulate`. */
export const mdmCommands: readonly NamedCommand[] = [
  {
    name: 'mdm fit',
    summary: 'learn a mixture of Dirichlet-multinomials from client histograms (federated, in process)',
    options: mdmFitOptions,
    run: runMdmFitCommand,
  },
  {
    name: 'mdm simulate',
    summary: 'deal a labelled central dataset into simulated clients (MDM, fully IID, conditionally IID)',
    options: mdmSimulateOptions,
    run: runMdmSimulateCommand,
  },
];
