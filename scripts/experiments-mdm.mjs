// The MDM reproductions behind EXPERIMENTS.md. Build first (npm run build),
// then:   node scripts/experiments-mdm.mjs [table1] [table1-full] [select] [letter] [tau] [--json out.json]
// (no section: the first four). Prints markdown tables; --json keeps every number
// (per-round curves included). The committed results are in bench/results/mdm/;
//         node scripts/experiments-mdm.mjs --report bench/results/mdm/*.json
// prints EXPERIMENTS.md's MDM tables from them without rerunning anything.
//
// table1: Appendix C.3, Table 1 (low/medium/high heterogeneity, 1-3
//   components, C = 10): 10,000 clients of 100 points each (as Appendix A.2;
//   the paper does not state Pi for Table 1) drawn from the true MDM; Algorithm 1 on
//   a cohort of 1000, then 100 rounds with cohorts of 1000; per-entry relative
//   RMS error (equation 50 / sqrt(entries)) of A and tau after Hungarian
//   alignment, per round, for fedmix and for the plain numpy reference
//   (scripts/experiments-mdm-numpy.py) on the same clients; 3 seeds.
// table1-full: the low and high 3-component settings again, every client in
//   every round (the full-batch iteration of Theorem 3.1).
// select: Appendix A.2: tau = [0.2, 0.5, 0.3], the given A, n = 100; M = 100,
//   200, 1000 training clients, K = 1..6 fitted (full batch, 100 rounds), scored
//   on a fresh validation cohort of 1000; 5 seeds.
// tau: Table 1's medium-2 setting (the issue's pinned case) over 20 seeds,
//   fedmix against the numpy reference on the same clients: the error of the
//   final round's tau and A, and their mean over rounds 51-100; and the
//   one-cohort floor: the error of tau estimated by the true model's own
//   responsibilities over one random cohort of 1000 (what the final round's
//   tau = omega / |S| is, at best).
// letter: letter.csv (26 classes). 60% of the rows are dealt (disjointly) into
//   150 "true" clients drawn from a known 3-component MDM; the MDM is inferred
//   back from their histograms (federated, K = 3, and K chosen in 1..5); 150
//   clients are simulated from the other 40% with the learned MDM and with
//   the fully IID baseline; energy distance of each set's class proportions to
//   the true clients'; 5 seeds.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DirichletMultinomialMixture,
  fitMdm,
  histogramEnergyDistance,
  init,
  Matrix,
  mdmRecoveryError,
  partition,
  Rng,
  selectMdm,
} from '../dist/index.js';

const args = process.argv.slice(2);
const reportAt = args.indexOf('--report');
const jsonAt = args.indexOf('--json');
const jsonPath = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const sections = args.filter((a, i) => !a.startsWith('--') && (jsonAt < 0 || i !== jsonAt + 1));
const want = (s) => reportAt < 0 && (sections.length === 0 ? s !== 'tau' : sections.includes(s));
const scratch = mkdtempSync(join(tmpdir(), 'fedmix-mdm-exp-'));
const here = (f) => fileURLToPath(new URL(f, import.meta.url));
const out = {};

await init();

const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const sd = (v) => Math.sqrt(v.reduce((a, b) => a + (b - mean(v)) ** 2, 0) / Math.max(1, v.length - 1));
const pm = (v, d = 3) => `${mean(v).toFixed(d)} ± ${sd(v).toFixed(d)}`;
const uniformSizes = (k, lo, hi, nMax) => Array.from({ length: k }, () => Array.from({ length: nMax }, (_, i) => (i + 1 >= lo && i + 1 <= hi ? 1 / (hi - lo + 1) : 0)));
const rowMajor = (m) => {
  const v = new Float64Array(m.nRows * m.nCols);
  for (let j = 0; j < m.nCols; j++) for (let i = 0; i < m.nRows; i++) v[i * m.nCols + j] = m.data[j * m.nRows + i];
  return v;
};

function numpy(job) {
  const path = join(scratch, `job-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(job));
  const r = spawnSync('/usr/bin/python3', [here('./experiments-mdm-numpy.py'), path], {
    env: { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1' },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`numpy reference failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// Table 1 of the paper. Its "low heterogeneity, 3 components" row lists only two
// rows of A for three weights; the third is taken to be the 1-component row (1.0).
const ones = (v) => Array(10).fill(v);
const MED1 = [0.1, 0.2, 0.6, 1.0, 2.0, 0.1, 1.0, 2.0, 0.5, 0.5];
const MED2 = [2.5, 2.6, 2.7, 2.8, 3.0, 2.5, 2.0, 3.0, 1.0, 0.9];
const HIGH1 = [0.1, 0.2, 0.15, 0.18, 0.1, 0.05, 0.08, 0.4, 0.2, 0.12];
const HIGH2 = [2.5, 2.6, 2.0, 3.2, 1.5, 0.9, 0.8, 1.3, 3.1, 2.4];
const TABLE1 = [
  ['low', 1, [1.0], [ones(1.0)]],
  ['low', 2, [0.5, 0.5], [ones(0.5), ones(2.5)]],
  ['low', 3, [0.333, 0.334, 0.333], [ones(2.5), ones(0.5), ones(1.0)]],
  ['medium', 1, [1.0], [MED1]],
  ['medium', 2, [0.4, 0.6], [MED1, MED2]],
  ['medium', 3, [0.5, 0.2, 0.3], [[5.0, 4.0, 5.0, 1.0, 1.0, 1.0, 5.0, 4.0, 5.0, 1.0], MED1, MED2]],
  ['high', 1, [1.0], [HIGH1]],
  ['high', 2, [0.1, 0.9], [HIGH1, HIGH2]],
  ['high', 3, [0.8, 0.05, 0.15], [[5.0, 5.0, 0.2, 0.2, 3.1, 3.0, 3.2, 0.8, 0.9, 5.0], HIGH1, HIGH2]],
];
const CURVE_AT = [0, 1, 2, 5, 10, 20, 50, 100];

/** Table 1 settings (filtered by `keep`), Algorithm 1 on `initCohort`, then 100 rounds of `cohort` (undefined: every client). */
function table1(name, keep, cohort, initCohort) {
  const M = 10_000;
  const SEEDS = [1, 2, 3];
  out[name] = [];
  for (const [level, k, tau, alpha] of TABLE1.filter(keep)) {
    const truth = new DirichletMultinomialMixture({ tau, alpha, pi: uniformSizes(k, 100, 100, 100) });
    const runs = [];
    for (const seed of SEEDS) {
      const t0 = performance.now();
      const { histograms, components } = truth.sample(M, { seed: 1000 * seed + k });
      const fm = { alpha: [], tau: [] };
      const fit = fitMdm(histograms, {
        nComponents: k, rounds: 100, cohort, initCohort, maxCount: 100, seed,
        onRound: (_, m) => {
          const e = mdmRecoveryError(m, truth);
          fm.alpha.push(e.alphaPerEntry);
          fm.tau.push(e.tauPerEntry);
        },
      });
      const seconds = (performance.now() - t0) / 1000;
      const realized = tau.map((_, q) => components.filter((x) => x === q).length / M);
      const np = numpy({ counts: writeF64(rowMajor(histograms)), k, c: 10, nMax: 100, tau, alpha: alpha.flat(), rounds: 100, cohort: cohort ?? M, initCohort: initCohort ?? M, seed });
      runs.push({
        seed, fedmix: fm, numpy: np, seconds,
        realizedTauError: Math.sqrt(tau.reduce((a, t, q) => a + ((realized[q] - t) / t) ** 2, 0) / k),
        guards: fit.initGuards, last: fit.history.at(-1),
        scores: { learned: fit.model.score(histograms), truth: truth.score(histograms) },
      });
    }
    out[name].push({ level, k, tau, alpha, runs });
    console.error(`${name} ${level} K=${k} done`);
  }
  printTable1(name, out[name]);
}

/** The table of final errors and the per-round curve of the first seed. */
function printTable1(name, settings) {
  const rows = [];
  const curves = [];
  for (const { level, k, runs } of settings) {
    const last = (key, which) => runs.map((r) => r[key][which].at(-1));
    rows.push(`| ${level} | ${k} | ${pm(last('fedmix', 'alpha'))} | ${pm(last('fedmix', 'tau'))} | ${pm(last('numpy', 'alpha'))} | ${pm(last('numpy', 'tau'))} | ${pm(runs.map((r) => r.realizedTauError))} | ${runs.map((r) => (r.scores.learned - r.scores.truth).toFixed(3)).join(', ')} | ${mean(runs.map((r) => r.seconds)).toFixed(1)} |`);
    const r0 = runs[0];
    curves.push(`| ${level} | ${k} | ${CURVE_AT.map((t) => `${r0.fedmix.alpha[t].toFixed(3)} / ${r0.fedmix.tau[t].toFixed(3)}`).join(' | ')} |`);
  }
  const schedule = name === 'table1Full' ? 'every client in every round (full batch)' : 'Algorithm 1 on 1000, then cohorts of 1000';
  const seeds = settings[0].runs.map((r) => r.seed);
  console.log(`\n### Table 1 settings, ${schedule}: final per-entry relative RMS error after 100 rounds (mean ± sd over ${seeds.length} seeds)\n`);
  console.log('| heterogeneity | K | fedmix A | fedmix tau | numpy A | numpy tau | realized tau vs tau | fedmix mean log-likelihood minus the truth\'s, per seed | fedmix s/run |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  console.log(rows.join('\n'));
  console.log(`\n### Per round (seed ${seeds[0]}, ${schedule}), fedmix: A / tau per-entry relative RMS error\n`);
  console.log(`| heterogeneity | K | ${CURVE_AT.map((t) => `round ${t}`).join(' | ')} |`);
  console.log(`|---|---|${CURVE_AT.map(() => '---').join('|')}|`);
  console.log(curves.join('\n'));
}

if (want('table1')) table1('table1', () => true, 1000, 1000);
// the two settings the cohort schedule does not recover, with every client in every round
if (want('table1-full')) table1('table1Full', ([level, k]) => k === 3 && level !== 'medium', undefined, undefined);

if (want('tau')) {
  const [level, k, tau, alpha] = TABLE1.find(([l, kk]) => l === 'medium' && kk === 2);
  const truth = new DirichletMultinomialMixture({ tau, alpha, pi: uniformSizes(k, 100, 100, 100) });
  const M = 10_000;
  const COHORT = 1000;
  out.tau = [];
  for (let seed = 1; seed <= 20; seed++) {
    const { histograms } = truth.sample(M, { seed: 1000 * seed + k });
    const fm = { alpha: [], tau: [] };
    fitMdm(histograms, {
      nComponents: k, rounds: 100, cohort: COHORT, initCohort: COHORT, maxCount: 100, seed,
      onRound: (_, m) => {
        const e = mdmRecoveryError(m, truth);
        fm.alpha.push(e.alphaPerEntry);
        fm.tau.push(e.tauPerEntry);
      },
    });
    const np = numpy({ counts: writeF64(rowMajor(histograms)), k, c: 10, nMax: 100, tau, alpha: alpha.flat(), rounds: 100, cohort: COHORT, initCohort: COHORT, seed });
    // the floor: tau as the mean of the true model's responsibilities over one random cohort
    const rng = new Rng(seed + 5000);
    const cohort = Array.from(rng.choice(M, COHORT));
    rng.dispose();
    const proba = truth.predictProba(Matrix.fromRows(cohort.map((i) => Array.from({ length: 10 }, (_, j) => histograms.data[j * M + i]))));
    const floorTau = tau.map((_, q) => mean(Array.from(proba.column(q))));
    const floor = Math.sqrt(tau.reduce((a, t, q) => a + ((floorTau[q] - t) / t) ** 2, 0) / k);
    out.tau.push({ seed, fedmix: fm, numpy: np, floor });
    console.error(`tau seed ${seed} done`);
  }
  printTau(out.tau);
}

function printTau(runs) {
  const late = (v) => mean(v.slice(51));
  const row = (name, f) => `| ${name} | ${pm(runs.map((r) => f(r).tau.at(-1)))} | ${pm(runs.map((r) => late(f(r).tau)))} | ${pm(runs.map((r) => f(r).alpha.at(-1)))} | ${pm(runs.map((r) => late(f(r).alpha)))} |`;
  console.log(`\n### Medium heterogeneity, K = 2, cohorts of 1000: fedmix and numpy on the same clients (mean ± sd over ${runs.length} seeds)\n`);
  console.log('| | tau, final round | tau, mean of rounds 51-100 | A, final round | A, mean of rounds 51-100 |');
  console.log('|---|---|---|---|---|');
  console.log(row('fedmix', (r) => r.fedmix));
  console.log(row('numpy reference', (r) => r.numpy));
  console.log(`| the true model's responsibilities over one cohort (floor) | ${pm(runs.map((r) => r.floor))} | | | |`);
  const first10 = runs.slice(0, 10);
  console.log(`\nSeeds 1-10 alone, final round: tau ${pm(first10.map((r) => r.fedmix.tau.at(-1)))} (fedmix) against ${pm(first10.map((r) => r.numpy.tau.at(-1)))} (numpy); seeds 11-20: ${pm(runs.slice(10).map((r) => r.fedmix.tau.at(-1)))} against ${pm(runs.slice(10).map((r) => r.numpy.tau.at(-1)))}.`);
}

function writeF64(values) {
  const path = join(scratch, `counts-${Math.random().toString(36).slice(2)}.f64`);
  writeFileSync(path, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  return path;
}

if (want('select')) {
  const truth = new DirichletMultinomialMixture({
    tau: [0.2, 0.5, 0.3],
    alpha: [
      [0.1, 0.2, 0.1, 0.3, 0.1],
      [1, 4, 1, 2, 0.5],
      [10, 5, 3, 2, 30],
    ],
    pi: uniformSizes(3, 100, 100, 100),
  });
  const SEEDS = [1, 2, 3, 4, 5];
  out.select = [];
  for (const M of [100, 200, 1000]) {
    const perSeed = [];
    for (const seed of SEEDS) {
      const train = truth.sample(M, { seed: 10 * seed + M }).histograms;
      const validation = truth.sample(1000, { seed: 7919 * seed + M }).histograms;
      const r = selectMdm(train, { kRange: [1, 6], validation, rounds: 100, seed });
      perSeed.push({ seed, scores: r.candidates.map((c) => c.meanLogLikelihood), chosen: r.k, scored: r.scoredClients });
    }
    out.select.push({ M, perSeed });
    console.error(`select M=${M} done`);
  }
  printSelect(out.select);
}

function printSelect(select) {
  const lines = [];
  for (const { M, perSeed } of select) {
    const scores = [1, 2, 3, 4, 5, 6].map((_, i) => perSeed.map((s) => s.scores[i]));
    const strict = perSeed.map((s) => 1 + s.scores.indexOf(Math.max(...s.scores)));
    lines.push(`| ${M} | ${scores.map((v) => mean(v).toFixed(3)).join(' | ')} | ${perSeed.map((s) => s.chosen).join(', ')} | ${strict.join(', ')} |`);
  }
  console.log(`\n### Appendix A.2: mean validation log-likelihood per client (1000 fresh clients; mean over ${select[0].perSeed.length} seeds) and the K chosen\n`);
  console.log('| M | K=1 | K=2 | K=3 | K=4 | K=5 | K=6 | chosen (tolerance 0.01), per seed | best score alone, per seed |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  console.log(lines.join('\n'));
}

if (want('letter')) {
  const { parseCsv } = await import('../dist/index.js');
  const table = parseCsv(readFileSync(here('../../shared/datasets/letter.csv'), 'utf8'));
  const labels = table.columns[table.names.indexOf('label')];
  const letters = [...new Set(labels)].sort();
  const C = letters.length;
  const at = (set) => letters.map((l) => (set.includes(l) ? 1.5 : 0.05));
  const truth = new DirichletMultinomialMixture({
    tau: [0.3, 0.3, 0.4],
    alpha: [at('ABCDEFGHI'), at('JKLMNOPQR'), Array(C).fill(0.8)],
    pi: [...uniformSizes(2, 15, 35, 60), ...uniformSizes(1, 30, 60, 60)],
    categories: letters,
  });
  const SEEDS = [1, 2, 3, 4, 5];
  const M = 150;
  out.letter = [];
  for (const seed of SEEDS) {
    // 60% of the rows become the true clients' data, the other 40% the server's proxy data
    const shares = partition.iid(labels.length, { clients: 5, seed }).indices;
    const clientRows = shares.slice(0, 3).flatMap((r) => Array.from(r));
    const proxyRows = shares.slice(3).flatMap((r) => Array.from(r));
    const trueClients = partition.mdm(Array.from(clientRows, (i) => labels[i]), { model: truth, clients: M, seed, disjoint: true });
    const hist = Matrix.fromRows(trueClients.histograms);
    const sizes = trueClients.histograms.map((h) => h.reduce((a, b) => a + b, 0));
    const fit = fitMdm(hist, { nComponents: 3, rounds: 100, maxCount: 60, seed, categories: letters });
    const chosen = selectMdm(hist, { kRange: [1, 5], rounds: 100, maxCount: 60, validationCohort: 30, seed });
    const proxy = Array.from(proxyRows, (i) => labels[i]);
    const sim = partition.mdm(proxy, { model: fit.model, clients: M, seed: seed + 100 });
    const iid = partition.fullyIid(proxy, { sizes, clients: M, seed: seed + 200 });
    const fresh = truth.sample(M, { seed: seed + 300 }).histograms;
    const d = (h) => histogramEnergyDistance(Matrix.fromRows(h), hist);
    const entropy = (hs) => mean(hs.map((h) => {
      const n = h.reduce((a, b) => a + b, 0);
      return -h.reduce((a, x) => (x > 0 ? a + (x / n) * Math.log(x / n) : a), 0);
    }));
    const rec = mdmRecoveryError(fit.model, truth);
    out.letter.push({
      seed,
      distance: { mdm: d(sim.histograms), fullyIid: d(iid.histograms), freshTruth: histogramEnergyDistance(fresh, hist), conditionallyIid: 0 },
      entropy: { true: entropy(trueClients.histograms), mdm: entropy(sim.histograms), fullyIid: entropy(iid.histograms) },
      recovery: { alpha: rec.alphaPerEntry, tau: rec.tauPerEntry },
      kChosen: chosen.k,
      kScores: chosen.candidates.map((c) => c.meanLogLikelihood),
    });
    console.error(`letter seed ${seed} done`);
  }
  printLetter(out.letter, M);
}

function printLetter(L, M = 150) {
  const col = (f) => L.map(f);
  console.log(`\n### letter.csv: ${M} true clients from a known 3-component MDM, simulated clients from the other 40% of the rows (mean ± sd over ${L.length} seeds)\n`);
  console.log('| clients compared with the true ones | energy distance of class proportions | mean entropy of a client\'s class proportions (nats) |');
  console.log('|---|---|---|');
  console.log(`| true clients themselves | 0 | ${pm(col((r) => r.entropy.true))} |`);
  console.log(`| MDM-simulated (learned, K = 3) | ${pm(col((r) => r.distance.mdm), 4)} | ${pm(col((r) => r.entropy.mdm))} |`);
  console.log(`| fully IID | ${pm(col((r) => r.distance.fullyIid), 4)} | ${pm(col((r) => r.entropy.fullyIid))} |`);
  console.log(`| fresh draw from the true MDM (sampling floor) | ${pm(col((r) => r.distance.freshTruth), 4)} | |`);
  console.log(`\nRecovery of the true MDM (K = 3): A ${pm(col((r) => r.recovery.alpha))}, tau ${pm(col((r) => r.recovery.tau))} (per-entry relative RMS); K chosen in 1..5: ${col((r) => r.kChosen).join(', ')}`);
}

if (reportAt >= 0) {
  const results = Object.assign({}, ...args.slice(reportAt + 1).filter((a) => !a.startsWith('--')).map((f) => JSON.parse(readFileSync(f, 'utf8'))));
  if (results.table1) printTable1('table1', results.table1);
  if (results.table1Full) printTable1('table1Full', results.table1Full);
  if (results.select) printSelect(results.select);
  if (results.letter) printLetter(results.letter);
  if (results.tau) printTau(results.tau);
}

if (jsonPath) writeFileSync(jsonPath, JSON.stringify(out, null, 1) + '\n');
