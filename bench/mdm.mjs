// One Algorithm 2 round of the MDM paper over 10,000 clients (C = 62 classes,
// K = 3 components, FEMNIST's shape) against the same round written with
// numpy/scipy (bench/peers/mdm.py, from scripts/mdm_reference.py), same
// histograms, same model, measured in the same run. The bar: at least
// 3x faster.
//
// "kernel": the clients' statistics of all 10,000 histograms summed in one
// WASM call (fm_mdm_prepare, then fm_mdm_round_stats: eq 12's responsibilities through log rising
// factorials, eqs 13-14 through digamma differences against a psi(alpha)
// computed once) plus the server update (fm_mdm_update), copies into WASM
// included: what numpy's vectorized round computes. "federated": the same
// round through the federation runtime, in process: 10,000 MdmClient objects
// each answering the broadcast in WASM, every message encoded and decoded both
// ways (binary; bench/federation.mjs compares the encodings), checked and
// summed by the MdmAggregator, the server's update; the sums are the kernel's.
import { DirichletMultinomialMixture, InProcessTransport, MdmClient, MdmServer, runFederationSync } from '../dist/index.js';
import { begin, median, runPeer, sized, timed, writeF64 } from './common.mjs';
import { wasm } from './wasm-handle.mjs';

export const M = sized(10_000, 300);
export const C = 62;
export const K = 3;
export const N_MAX = 400;
const REPEATS = sized(9, 1);
const FEDERATED_REPEATS = sized(3, 1);

/** FEMNIST-like clients: sizes 20..400, three kinds of class mix (sparse, even, digit-heavy). */
export function clients() {
  const alpha = [
    Array.from({ length: C }, () => 0.1),
    Array.from({ length: C }, () => 1.0),
    Array.from({ length: C }, (_, j) => (j < 10 ? 2.0 : 0.2)),
  ];
  const pi = Array.from({ length: K }, () => Array.from({ length: N_MAX }, (_, i) => (i >= 19 ? 1 / (N_MAX - 19) : 0)));
  const truth = new DirichletMultinomialMixture({ tau: [0.3, 0.3, 0.4], alpha, pi });
  const { histograms } = truth.sample(M, { seed: 62 });
  // the round's model: Algorithm 1 would give something like the truth, blurred
  const model = new DirichletMultinomialMixture({
    tau: [1 / 3, 1 / 3, 1 / 3],
    alpha: alpha.map((row, k) => row.map((a, j) => a * (1 + 0.3 * Math.sin(1 + j + 7 * k)))),
    pi: Array.from({ length: K }, () => Array.from({ length: N_MAX }, () => 1 / N_MAX)),
  });
  const counts = new Float64Array(M * C);
  for (let j = 0; j < C; j++) for (let i = 0; i < M; i++) counts[i * C + j] = histograms.data[j * M + i];
  return { counts, model, nonzero: counts.reduce((a, x) => a + (x > 0 ? 1 : 0), 0) };
}

/** The kernel round through the raw exports of the SIMD build. */
export function kernelRound(w, counts, model) {
  const sizes = new Float64Array(M);
  for (let i = 0; i < M; i++) for (let j = 0; j < C; j++) sizes[i] += counts[i * C + j];
  const f64 = (n) => w.fm_alloc(n * 8);
  const put = (v) => {
    const p = f64(v.length);
    new Float64Array(w.memory.buffer, p, v.length).set(v);
    return p;
  };
  const bufs = [];
  const keep = (p, n) => (bufs.push([p, n * 8]), p);
  const run = () => {
    const cp = keep(put(counts), counts.length);
    const sp = keep(put(sizes), M);
    const [tau, alpha, pi] = [keep(put(model.tau), K), keep(put(model.alpha), K * C), keep(put(model.pi), K * N_MAX)];
    const [omega, e, u, v, extra] = [keep(f64(K), K), keep(f64(K * N_MAX), K * N_MAX), keep(f64(K * C), K * C), keep(f64(K), K), keep(f64(3), 3)];
    const handle = keep(f64(1), 1);
    if (w.fm_mdm_prepare(K, C, N_MAX, tau, alpha, pi, handle) !== 0) throw new Error('fm_mdm_prepare failed');
    const prepared = new Uint32Array(w.memory.buffer, handle, 1)[0];
    // the option structs of crates/fedmix-wasm/src/exports.rs, at the offsets ts/wasm/abi.generated.ts gives
    // (MdmRoundStatsOptions { m: u32, clip: f64 }, MdmUpdateOptions { k, c, n_max: u32, clients: f64, noisy: i32 })
    const roundStats = keep(f64(2), 2);
    new DataView(w.memory.buffer).setUint32(roundStats, M, true);
    new DataView(w.memory.buffer).setFloat64(roundStats + 8, Infinity, true);
    const status = w.fm_mdm_round_stats(prepared, cp, sp, roundStats, omega, e, u, v, extra);
    w.fm_mdm_prepared_free(prepared);
    if (status !== 0) throw new Error('fm_mdm_round_stats failed');
    const [t2, a2, p2, fl] = [keep(f64(K), K), keep(f64(K * C), K * C), keep(f64(K * N_MAX), K * N_MAX), keep(f64(1), 1)];
    const update = keep(f64(4), 4);
    const view = new DataView(w.memory.buffer);
    [K, C, N_MAX].forEach((x, i) => view.setUint32(update + 4 * i, x, true));
    view.setFloat64(update + 16, M, true);
    view.setInt32(update + 24, 0, true);
    if (w.fm_mdm_update(update, tau, alpha, pi, omega, e, u, v, t2, a2, p2, fl) !== 0) throw new Error('fm_mdm_update failed');
    const out = new Float64Array(w.memory.buffer, a2, K * C).slice();
    for (const [p, n] of bufs.splice(0)) w.fm_free(p, n);
    return out;
  };
  return run;
}

export async function run() {
  const results = begin('mdm', 'npm run bench -- mdm');
  const { counts, model, nonzero } = clients();
  const kernel = timed(kernelRound(wasm(), counts, model), REPEATS);
  // the federated round: 10,000 client roles, one broadcast, one aggregate
  const roles = Array.from({ length: M }, (_, i) => new MdmClient(`client-${i}`, counts.subarray(i * C, (i + 1) * C), { seed: i }));
  const transport = new InProcessTransport(roles);
  const federated = timed(() => {
    const server = new MdmServer({ nComponents: K, nCategories: C, maxCount: N_MAX, rounds: 1, init: model, seed: 1 });
    try {
      return runFederationSync(server, transport).model.alpha;
    } finally {
      server.dispose();
    }
  }, FEDERATED_REPEATS);
  for (const r of roles) r.dispose();
  const peer = runPeer('mdm.py', { counts: writeF64('mdm-counts.f64', counts), k: K, c: C, nMax: N_MAX, tau: Array.from(model.tau), alpha: Array.from(model.alpha), pi: Array.from(model.pi), repeats: REPEATS });
  const worst = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]) / Math.abs(b[i])), 0);
  const agree = Math.max(worst(kernel.out, peer.alpha), worst(federated.out, peer.alpha));
  if (!(agree < 1e-9)) throw new Error(`the updated alpha differs from numpy's by ${agree} (relative)`);
  const np = median(peer.ms);
  results.print(
    `MDM: one Algorithm 2 round, ${M} clients, C = ${C}, K = ${K}, N = ${N_MAX} (${(nonzero / M).toFixed(1)} non-zero counts per client), ms (median of ${REPEATS}, federated of ${FEDERATED_REPEATS}; numpy ${peer.numpy} / scipy ${peer.scipy}, one thread); updated alpha equal to numpy's within ${agree.toExponential(1)}`,
    [`round (${M.toLocaleString('en-US')} clients, C = ${C}, K = ${K}, N = ${N_MAX})`, 'fedmix ms', 'numpy/scipy ms', 'speedup'],
    [
      ['kernel: statistics of every client + update', kernel.ms.toFixed(1), np.toFixed(1), `${(np / kernel.ms).toFixed(2)}x`],
      ['federated: client roles, binary messages, aggregator, server', federated.ms.toFixed(0), np.toFixed(1), `${(np / federated.ms).toFixed(2)}x`],
    ],
  );
  await results.write();
}
