// Secure aggregation's cost in process: the SecAgg+ state machines
// (SecureAggregationClient / SecureAggregationServer, no transport) at n = 10,
// 100 and 1,000 clients with the default degree and threshold, against plain
// summing of the same Float64Array contributions in the same run. Bytes are
// those of the protocol's messages (keys, ciphertexts, masked vector, unmask
// shares, and what each client receives), not of any envelope; the
// federation suite adds a transport's. Also: the ChaCha20 mask's throughput
// over 1e6 values (the core's fm_secagg_mask, copies in and out included).
// Each size runs twice: with the consistency check (verification keys,
// signatures of the survivor set: what the federation always runs) and
// without it (the four-stage protocol that trusts the server's dropouts).
import { defaultNeighbours, defaultThreshold, detectSignatureScheme, fixedPoint, SecureAggregationClient, SecureAggregationServer } from '../dist/index.js';
import { createCipheriv } from 'node:crypto';
import { begin, sized, timed, uniform } from './common.mjs';
import { wasm } from './wasm-handle.mjs';

const SIZES = sized([10, 100, 1000], [10, 30]);
const LENGTH = sized(1000, 100);
const MASK_VALUES = sized(1_000_000, 10_000);

const mapBytes = (m) => [...m.values()].reduce((s, v) => s + v.length, 0);

async function secureRound(n, signature) {
  const clients = Array.from({ length: n }, (_, i) => `client-${i}`);
  const k = defaultNeighbours(n);
  const params = {
    run: 'bench',
    round: 1,
    clients,
    neighbours: k,
    threshold: defaultThreshold(k),
    graphSeed: crypto.getRandomValues(new Uint8Array(32)),
    curve: 'X25519',
    length: LENGTH,
    fixedPoint: fixedPoint(1, n),
    ...(signature ? { signature } : {}),
  };
  const u = uniform(n);
  const inputs = clients.map(() => Float64Array.from({ length: LENGTH }, () => 2 * u() - 1));
  let clientMs = 0;
  let serverMs = 0;
  const sent = new Float64Array(n);
  const received = new Float64Array(n);
  const clock = async (fn) => {
    const t0 = performance.now();
    const out = await fn();
    return [out, performance.now() - t0];
  };
  const server = new SecureAggregationServer(params);
  const parties = [];
  for (const id of clients) {
    const [c, ms] = await clock(() => SecureAggregationClient.create(id, params));
    clientMs += ms;
    parties.push(c);
  }
  for (const [i, c] of parties.entries()) {
    const [keys, ms] = await clock(() => c.advertise());
    clientMs += ms;
    sent[i] += keys.cPk.length + keys.sPk.length + (keys.vk?.length ?? 0);
    serverMs += (await clock(() => server.acceptAdvertise(clients[i], keys)))[1];
  }
  let [view, ms] = await clock(() => server.advertised());
  serverMs += ms;
  for (const [i, c] of parties.entries()) {
    const keys = view.get(clients[i]);
    received[i] += [...keys.values()].reduce((s, k) => s + k.cPk.length + k.sPk.length + (k.vk?.length ?? 0), 0);
    const [out, ms2] = await clock(() => c.shareKeys(keys));
    clientMs += ms2;
    sent[i] += mapBytes(out.shares) + out.commitment.length;
    serverMs += (await clock(() => server.acceptShares(clients[i], out.shares, out.commitment)))[1];
  }
  let routed;
  [routed, ms] = await clock(() => server.routed());
  serverMs += ms;
  for (const [i, c] of parties.entries()) {
    const r = routed.get(clients[i]);
    received[i] += mapBytes(r);
    const [out, ms2] = await clock(() => c.maskedInput(r, inputs[i]));
    clientMs += ms2;
    sent[i] += out.masked.length;
    serverMs += (await clock(() => server.acceptMasked(clients[i], out.masked, out.refused)))[1];
  }
  let request;
  [request, ms] = await clock(() => server.unmaskRequest());
  serverMs += ms;
  let vouched = new Map(clients.map((id) => [id, new Map()]));
  if (signature) {
    // the consistency round: the survivor set out, one signature back, the neighbours' signatures out
    for (const [i, c] of parties.entries()) {
      received[i] += request.survivors.join('').length;
      const [sig, ms2] = await clock(() => c.signSurvivors(request.survivors));
      clientMs += ms2;
      sent[i] += sig.length;
      serverMs += (await clock(() => server.acceptSignature(clients[i], sig)))[1];
    }
    [vouched, ms] = await clock(() => server.signatures());
    serverMs += ms;
  }
  for (const [i, c] of parties.entries()) {
    const signatures = vouched.get(clients[i]);
    received[i] += request.survivors.join('').length + request.dropped.join('').length + mapBytes(signatures);
    if (signature) clientMs += (await clock(() => c.acceptSignatures(signatures)))[1];
    const [answer, ms2] = await clock(() => c.unmask(request.survivors, request.dropped));
    clientMs += ms2;
    sent[i] += mapBytes(answer);
    serverMs += (await clock(() => server.acceptUnmask(clients[i], answer)))[1];
  }
  let result;
  [result, ms] = await clock(() => server.result());
  serverMs += ms;
  // plain summing of the same contributions, as a server that sees them would
  const plain = timed(() => {
    const s = new Float64Array(LENGTH);
    for (const v of inputs) for (let j = 0; j < LENGTH; j++) s[j] += v[j];
    return s;
  }, 5);
  let worst = 0;
  for (let j = 0; j < LENGTH; j++) worst = Math.max(worst, Math.abs(result.sum[j] - plain.out[j]));
  const mean = (a) => a.reduce((s, v) => s + v, 0) / a.length;
  return { n, k, t: params.threshold, check: signature ?? 'off', clientMs: clientMs / n, serverMs, sent: mean(sent), received: mean(received), plainMs: plain.ms, worst, bound: result.bound };
}

export async function run() {
  const results = begin('secure-aggregation', 'npm run bench -- secure-aggregation');
  const rows = [];
  const scheme = await detectSignatureScheme();
  for (const n of SIZES) for (const signature of [scheme, undefined]) {
    const r = await secureRound(n, signature);
    rows.push([
      r.n,
      r.check,
      `${r.k} / ${r.t}`,
      r.clientMs.toFixed(1),
      r.serverMs.toFixed(0),
      (r.sent / 1024).toFixed(1),
      (r.received / 1024).toFixed(1),
      ((8 * LENGTH) / 1024).toFixed(1),
      r.plainMs.toFixed(3),
      `${r.worst.toExponential(1)} <= ${r.bound.toExponential(1)}`,
    ]);
  }
  results.print(
    `SecAgg+ in process, ${LENGTH} values per client, no dropouts, with and without the consistency check: per-client time and bytes (sent, received) against plain summing of the same Float64Arrays`,
    ['n', 'consistency check', 'k / t', 'client ms', 'server ms', 'client sent KiB', 'client received KiB', 'plain sent KiB', 'plain sum ms', '|secure - plain| <= bound'],
    rows,
  );

  // the mask alone: ChaCha20 over MASK_VALUES u64 words, in the core, copies in and out included
  const w = wasm();
  const bytes = MASK_VALUES * 8;
  const ptr = w.fm_alloc(bytes);
  const seed = w.fm_alloc(32);
  new Uint8Array(w.memory.buffer, seed, 32).set(crypto.getRandomValues(new Uint8Array(32)));
  const vector = new Uint8Array(bytes);
  const kernel = timed(() => w.fm_secagg_mask(ptr, MASK_VALUES, seed, 0), sized(9, 1)).ms;
  const copied = timed(() => {
    new Uint8Array(w.memory.buffer, ptr, bytes).set(vector);
    w.fm_secagg_mask(ptr, MASK_VALUES, seed, 0);
    vector.set(new Uint8Array(w.memory.buffer, ptr, bytes));
  }, sized(9, 1)).ms;
  w.fm_free(ptr, bytes);
  w.fm_free(seed, 32);
  // the same key stream from Node's OpenSSL (native, vectorized): the machine's reference
  const key = crypto.getRandomValues(new Uint8Array(32));
  const openssl = timed(() => createCipheriv('chacha20', key, new Uint8Array(16)).update(vector), sized(9, 1)).ms;
  const mbs = (ms) => (bytes / 2 ** 20 / (ms / 1000)).toFixed(0);
  results.print(
    `ChaCha20 mask over ${MASK_VALUES.toExponential(0)} u64 values (${(bytes / 2 ** 20).toFixed(1)} MiB), median ms`,
    ['what', 'ms', 'MiB/s'],
    [
      ['fm_secagg_mask (in WASM memory)', kernel.toFixed(2), mbs(kernel)],
      ['with the copies in and out', copied.toFixed(2), mbs(copied)],
      ["node:crypto's chacha20 (OpenSSL, native)", openssl.toFixed(2), mbs(openssl)],
    ],
  );
  await results.write();
}
