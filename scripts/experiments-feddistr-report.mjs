// Prints the FedDistr tables of EXPERIMENTS.md from bench/results/feddistr/*.json
// (written by scripts/experiments-feddistr.sh). A cell whose run is missing
// prints "missing".
import { existsSync, readFileSync } from 'node:fs';

const dir = new URL('../bench/results/feddistr/', import.meta.url);
const load = (name) => (existsSync(new URL(name, dir)) ? JSON.parse(readFileSync(new URL(name, dir), 'utf8')) : undefined);
const row = (cells) => `| ${cells.join(' | ')} |`;
const head = (cells) => [row(cells), row(cells.map(() => '---'))].join('\n');
const f3 = (v) => (v === null || v === undefined ? '–' : v.toFixed(3));
const mb = (v) => (v === null || v === undefined ? '–' : (v / 1e6).toFixed(2));
const kb = (v) => (v === null || v === undefined ? '–' : (v / 1e3).toFixed(0));
const coefficients = ['0', '0.003', '0.06', '0.3', '1'];
const FED_ALL = ['fedavg', 'fedprox', 'scaffold'];
const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
const sd = (v) => {
  const m = mean(v);
  return Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, v.length - 1));
};
const ms = (v) => (v.length ? `${mean(v).toFixed(3)} ± ${sd(v).toFixed(3)}` : '–');

/** The first round of a curve reaching `target`, as text ("> n" when none does). */
function reach(curve, target) {
  if (target === undefined || target === null) return '–';
  const p = curve.find((x) => x.accuracy >= target);
  return p ? String(p.round) : `> ${curve.length}`;
}

function grid(part, tag, title, clientCounts, FED) {
  console.log(`### ${title}: accuracy (claims a and b)\n`);
  console.log(head(['clients', 'target coef.', 'achieved coef.', 'FedDistr generative', 'FedDistr MLP', 'bases found / true', 'ARI', ...FED.map((m) => `${m} @100`), 'central']));
  const rounds = [];
  const bytes = [];
  for (const c of clientCounts) {
    for (const e of coefficients) {
      const r = load(`${part}-${tag}-c${c}-e${e}.json`);
      if (!r) {
        console.log(row([c, e, 'missing', '', '', '', '', ...FED.map(() => ''), '']));
        continue;
      }
      const run = r.runs[0];
      const fd = run.feddistr;
      const b = (m) => run.baselines.find((x) => x.method === m);
      console.log(row([c, e, run.coefficient.toFixed(4), f3(fd.accuracy.generative), f3(fd.accuracy.mlp), `${fd.estimatedBaseDistributions} / ${fd.trueBaseDistributions}`, f3(fd.adjustedRandIndex), ...FED.map((m) => f3(b(m)?.finalAccuracy)), f3(b('central')?.finalAccuracy)]));
      rounds.push(row([c, e, ...FED.flatMap((m) => (b(m) ? [reach(b(m).curve, fd.accuracy.generative), reach(b(m).curve, fd.accuracy.mlp)] : ['–', '–']))]));
      const diag = load(`${part === 'a' ? 'b' : 'e'}-${tag}-c${c}-e${e}-diag.json`);
      const avg = b('fedavg');
      const perRound = avg.curve[0].bytes;
      const dfd = diag?.runs[0].feddistr;
      const own = (x) => x.bytes - x.describeBytes;
      bytes.push(
        row([
          c,
          e,
          mb(fd.bytesUp),
          mb(fd.bytesDown - fd.describeBytes),
          mb(fd.describeBytes),
          mb(fd.bytes),
          kb(perRound),
          (own(fd) / perRound).toFixed(1),
          dfd ? f3(dfd.accuracy.generative) : 'missing',
          dfd ? mb(own(dfd)) : '',
          dfd ? (own(dfd) / perRound).toFixed(1) : '',
          dfd ? reach(avg.curve, dfd.accuracy.generative) : '',
          dfd ? reach(b('scaffold').curve, dfd.accuracy.generative) : '',
        ]),
      );
    }
  }
  console.log(`\n### ${title}: rounds to reach FedDistr's one-round accuracy (the paper's Table 2; generative / MLP)\n`);
  console.log(head(['clients', 'target coef.', ...FED.flatMap((m) => [`${m} → gen.`, `${m} → MLP`])]));
  for (const line of rounds) console.log(line);
  console.log(`\n### ${title}: bytes (claim c; MB = 10^6 bytes, both ways)\n`);
  console.log(head(['clients', 'target coef.', 'FedDistr up', 'FedDistr down (the set)', 'FedDistr requests (the encoder)', 'FedDistr total', 'FedAvg per round (kB)', 'FedDistr up + set, in FedAvg rounds', 'diag.: generative acc.', 'diag.: up + set (MB)', 'diag.: in FedAvg rounds', 'FedAvg rounds to diag. acc.', 'SCAFFOLD rounds to diag. acc.']));
  for (const line of bytes) console.log(line);
  console.log();
}

function noise(part, tag, title, reference) {
  console.log(`### ${title}: utility against privacy noise (claim d; 10 clients)\n`);
  const eps = ['1', '0.5', '0.2', '0.1', '0.05'];
  console.log(head(['target coef.', 'no noise: generative / MLP', ...eps.map((x) => `ε = ${x}`)]));
  for (const e of ['0', '0.06']) {
    const ref = load(`${reference}-${tag}-c10-e${e}.json`)?.runs[0].feddistr.accuracy;
    const cells = eps.map((x) => {
      const r = load(`${part}-${tag}-c10-e${e}-eps${x}.json`);
      return r ? `${f3(r.runs[0].feddistr.accuracy.generative)} / ${f3(r.runs[0].feddistr.accuracy.mlp)}` : 'missing';
    });
    console.log(row([e, ref ? `${f3(ref.generative)} / ${f3(ref.mlp)}` : 'missing', ...cells]));
  }
  console.log();
}

function longer() {
  console.log("### letter.csv, 10 clients: FedAvg and SCAFFOLD for 500 rounds (claim a past 100 rounds)\n");
  const at = [50, 100, 200, 300, 500];
  console.log(head(['target coef.', 'FedDistr generative / MLP', 'FedDistr MB', ...at.map((k) => `FedAvg @${k}`), ...at.map((k) => `SCAFFOLD @${k}`), 'FedAvg → gen. / MLP', 'SCAFFOLD → gen. / MLP', 'FedAvg MB to MLP', 'SCAFFOLD MB to MLP']));
  for (const e of ['0', '0.003', '0.06']) {
    const r = load(`g-letter-c10-e${e}-r500.json`);
    if (!r) {
      console.log(row([e, 'missing']));
      continue;
    }
    const run = r.runs[0];
    const fd = run.feddistr;
    const b = (m) => run.baselines.find((x) => x.method === m);
    const to = (m) => `${reach(b(m).curve, fd.accuracy.generative)} / ${reach(b(m).curve, fd.accuracy.mlp)}`;
    const bytesTo = (m) => {
      const p = b(m).curve.find((x) => x.accuracy >= fd.accuracy.mlp);
      return p ? mb(p.bytes) : `> ${mb(b(m).curve[b(m).curve.length - 1].bytes)}`;
    };
    console.log(row([e, `${f3(fd.accuracy.generative)} / ${f3(fd.accuracy.mlp)}`, mb(fd.bytes), ...at.map((k) => f3(b('fedavg').curve[k - 1]?.accuracy)), ...at.map((k) => f3(b('scaffold').curve[k - 1]?.accuracy)), to('fedavg'), to('scaffold'), bytesTo('fedavg'), bytesTo('scaffold')]));
  }
  console.log();
}

function repeated(part, tag, title, FED) {
  console.log(`### ${title}, 10 clients, 3 repeats (seeds 1, 1001, 2001; mean ± std; 100 rounds)${part === 'l' ? ", at issue 23's defaults" : ''}\n`);
  console.log(head(['target coef.', 'achieved coef.', 'FedDistr generative', 'FedDistr MLP', 'bases found', ...FED.map((m) => `${m} @100`), 'central', 'FedAvg → gen. / MLP (mean of the runs matching, of 3)', 'SCAFFOLD → gen. / MLP']));
  const matched = (r, m, model) => {
    const x = r.summary.baselines.find((b) => b.method === m).roundsToMatch[model];
    return x.matched ? `${x.mean.toFixed(0)} (${x.matched})` : '> 100 (0)';
  };
  for (const e of coefficients) {
    const r = load(`${part}-${tag}-c10-e${e}-x3.json`);
    if (!r) {
      console.log(row([e, 'missing']));
      continue;
    }
    const runs = r.runs;
    const fin = (m) => runs.map((x) => x.baselines.find((y) => y.method === m).finalAccuracy);
    console.log(row([e, ms(runs.map((x) => x.coefficient)), ms(runs.map((x) => x.feddistr.accuracy.generative)), ms(runs.map((x) => x.feddistr.accuracy.mlp)), runs.map((x) => x.feddistr.estimatedBaseDistributions).join(', '), ...FED.map((m) => ms(fin(m))), ms(fin('central')), ...['fedavg', 'scaffold'].map((m) => `${matched(r, m, 'generative')} / ${matched(r, m, 'mlp')}`)]));
  }
  console.log();
}

/** Issue 23: scikit-learn's digits at the defaults (m), against the central MLP and the scikit-learn/scipy peer. */
function digits() {
  console.log("### digits, 10 clients, seeds 1-5 (mean ± std): fedmix at issue 23's defaults, the central MLP and the scikit-learn/scipy peer on the same splits and partitions\n");
  console.log(head(['target coef.', 'fedmix generative', 'fedmix MLP', 'central MLP', 'peer, the defaults', 'peer, the method before', 'uploaded', 'consolidated', 'excluded']));
  for (const e of ['0', '0.06', '0.3', '1']) {
    const r = load(`m-digits-c10-e${e}-x5.json`);
    if (!r) {
      console.log(row([e, 'missing']));
      continue;
    }
    const [d, m] = r.peer;
    console.log(row([e, ms(r.runs.map((x) => x.generative)), ms(r.runs.map((x) => x.mlp)), ms(r.runs.map((x) => x.central)), ms(d.runs.map((x) => x.accuracy)), ms(m.runs.map((x) => x.accuracy)), r.runs.map((x) => x.uploaded).join(', '), r.runs.map((x) => x.consolidated).join(', '), String(r.runs.reduce((a, x) => a + x.excluded.length, 0))]));
  }
  console.log();
}

/**
 * Issue 23: h and i rerun at the new defaults (l: FedDistr and central), before
 * and after side by side; the FedAvg family's curves are h's and i's (the same
 * seeds, splits and partitions), the rounds to reach FedDistr's new accuracy
 * read off them.
 */
function rerun(tag, before, title, FED) {
  console.log(`### ${title}, 10 clients, 3 repeats (seeds 1, 1001, 2001; mean ± std): FedDistr before (${before}) and at issue 23's defaults (l)\n`);
  console.log(head(['target coef.', 'generative before', 'generative now', 'MLP before', 'MLP now', 'bases before', 'bases now', 'MB before', 'MB now', 'central', ...FED.map((m) => `${m} → gen. / MLP now (runs matching, of 3)`)]));
  for (const e of coefficients) {
    const b = load(`${before}-${tag}-c10-e${e}-x3.json`);
    const l = load(`l-${tag}-c10-e${e}-x3.json`);
    if (!b || !l) {
      console.log(row([e, 'missing']));
      continue;
    }
    const acc = (r, m) => r.runs.map((x) => x.feddistr.accuracy[m]);
    const rounds = (m, model) => {
      const hits = l.runs.map((x, k) => reach(b.runs[k].baselines.find((y) => y.method === m).curve, x.feddistr.accuracy[model])).filter((t) => !t.startsWith('>'));
      return hits.length ? `${mean(hits.map(Number)).toFixed(0)} (${hits.length})` : '> 100 (0)';
    };
    console.log(row([e, ms(acc(b, 'generative')), ms(acc(l, 'generative')), ms(acc(b, 'mlp')), ms(acc(l, 'mlp')), b.runs.map((x) => x.feddistr.estimatedBaseDistributions).join(', '), l.runs.map((x) => x.feddistr.estimatedBaseDistributions).join(', '), ms(b.runs.map((x) => x.feddistr.bytes / 1e6)), ms(l.runs.map((x) => x.feddistr.bytes / 1e6)), ms(l.runs.map((x) => x.baselines.find((y) => y.method === 'central').finalAccuracy)), ...FED.map((m) => `${rounds(m, 'generative')} / ${rounds(m, 'mlp')}`)]));
  }
  console.log();
}

function weighted() {
  console.log("### 10 clients: the parallel sets' representative, the dominant member (a, d) or the count-weighted merge (k); FedDistr generative / MLP\n");
  console.log(head(['data', ...coefficients.map((e) => `coef. ${e}: dominant`), ...coefficients.map((e) => `coef. ${e}: weighted`)]));
  for (const [tag, ref] of [['letter', 'a'], ['fmnist', 'd']]) {
    const cell = (name) => {
      const r = load(name);
      return r ? `${f3(r.runs[0].feddistr.accuracy.generative)} / ${f3(r.runs[0].feddistr.accuracy.mlp)}` : 'missing';
    };
    console.log(row([tag === 'letter' ? 'letter.csv' : 'Fashion-MNIST', ...coefficients.map((e) => cell(`${ref}-${tag}-c10-e${e}.json`)), ...coefficients.map((e) => cell(`k-${tag}-c10-e${e}-weighted.json`))]));
  }
  console.log();
}

function mqtt() {
  console.log('### Over MQTT: letter.csv, 10 clients, coefficient 0.06, every client an MQTT client of the embedded broker (j) against in process (a)\n');
  const a = load('a-letter-c10-e0.06.json');
  const j = load('j-letter-c10-e0.06-mqtt.json');
  if (!a || !j) {
    console.log('missing\n');
    return;
  }
  const strip = (r) => JSON.stringify({ ...r, run: undefined }, (k, v) => (k === 'seconds' ? undefined : v));
  const secs = (r) => [r.runs[0].feddistr.seconds, ...r.runs[0].baselines.map((b) => b.seconds)];
  console.log(head(['', 'FedDistr s', ...a.runs[0].baselines.map((b) => `${b.method} s`), 'generative', 'MLP', 'FedDistr bytes', 'FedAvg bytes (100 rounds)']));
  for (const [name, r] of [['in process', a], ['over MQTT', j]]) {
    const run = r.runs[0];
    console.log(row([name, ...secs(r).map((x) => x.toFixed(1)), f3(run.feddistr.accuracy.generative), f3(run.feddistr.accuracy.mlp), String(run.feddistr.bytes), String(run.baselines[0].curve[99].bytes)]));
  }
  console.log(`\nThe two reports, wall times aside, are ${strip(a) === strip(j) ? 'identical' : 'DIFFERENT'}.\n`);
}

grid('a', 'letter', 'letter.csv', [5, 10, 20], FED_ALL);
longer();
repeated('h', 'letter', 'letter.csv', FED_ALL);
noise('c', 'letter', 'letter.csv', 'a');
weighted();
grid('d', 'fmnist', 'Fashion-MNIST', [5, 10, 20], ['fedavg', 'scaffold']);
repeated('i', 'fmnist', 'Fashion-MNIST', ['fedavg', 'scaffold']);
noise('f', 'fmnist', 'Fashion-MNIST', 'd');
mqtt();
digits();
rerun('letter', 'h', 'letter.csv', FED_ALL);
rerun('fmnist', 'i', 'Fashion-MNIST', ['fedavg', 'scaffold']);
