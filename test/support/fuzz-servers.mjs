// The servers' receive paths under mutated replies: for each algorithm a small
// federation runs with one client (the target) whose first reply is replaced by
// a mutation of its honest reply, and after every run the harness checks that
//   - the run completed (a bad reply is a failure of its sender, never of the run),
//   - no honest client was excluded,
//   - if the target was excluded, the model is bit for bit the run without it,
//     and otherwise every number of the model is finite,
//   - nothing reached Object.prototype, and the WASM heap is back where it was.
// Plain JavaScript: test/fuzz-servers.test.ts runs a small sample with
// ts/index.ts, scripts/fuzz-servers.mjs a large one with dist/.

import { xorshift32 } from './xorshift.mjs';

const CLIENTS = 5;
const TARGET = `client-${CLIENTS - 1}`;

/** A seeded stream of uniforms and choices. */
function stream(seed) {
  const next = xorshift32(seed);
  const u = () => (next() + 0.5) / 2 ** 32;
  return { u, int: (n) => Math.floor(u() * n), pick: (a) => a[Math.floor(u() * a.length)] };
}

function blob(f, n, center, s, seed) {
  const r = stream(seed);
  const g = () => Math.sqrt(-2 * Math.log(r.u())) * Math.cos(2 * Math.PI * r.u());
  return f.Matrix.fromRows(Array.from({ length: n }, () => center.map((c) => c + s * g())));
}

/** Points of three clusters in the unit square, a different mix per client. */
function gmmData(f) {
  const centers = [[0.2, 0.2], [0.8, 0.3], [0.4, 0.8]];
  return Array.from({ length: CLIENTS }, (_, c) => f.Matrix.vstack([blob(f, 40, centers[c % 3], 0.05, 10 + c), blob(f, 20, centers[(c + 1) % 3], 0.05, 20 + c)]));
}

const list = (v) => Array.from(v);
const gmmNumbers = (m) => [...list(m.weights), ...list(m.means), ...list(m.covariances)];

/** Each algorithm: its clients, its server, and the numbers of what a run produced. */
export function federations(f) {
  const data = gmmData(f);
  const histograms = Array.from({ length: 12 }, (_, i) => [1 + (i % 5), 2 + ((3 * i) % 7), (i * 5) % 4, 3 + (i % 2)]);
  const mdmStart = new f.DirichletMultinomialMixture({
    tau: [0.5, 0.5],
    alpha: [[1, 2, 0.5, 1], [2, 1, 1, 0.5]],
    pi: [0, 1].map(() => Array.from({ length: 30 }, () => 1 / 30)),
  });
  return {
    dem: {
      clients: () => data.map((x, c) => new f.DemClient(`client-${c}`, x)),
      server: () => new f.DemServer({ nComponents: 3, nFeatures: 2, covarianceType: 'full', init: 'separated', maxRounds: 3, tol: 0 }),
      numbers: (m) => gmmNumbers(m),
      dispose: (m) => m.dispose(),
    },
    fedgengmm: {
      clients: () => data.map((x, c) => new f.FedGenGMMClient(`client-${c}`, x, { kMin: 1, kMax: 2, seed: c })),
      server: () => new f.FedGenGMMServer({ nComponents: 3, nFeatures: 2, seed: 3, h: 40 }),
      numbers: (m) => gmmNumbers(m.model),
      dispose: (m) => m.model.dispose(),
    },
    fedgem: {
      clients: () => data.map((x, c) => new f.FedGEMClient(`client-${c}`, x, { nComponents: 2, variance: 0.0025, seed: c })),
      // the clients' own variance: the first reply is the BALLS upload
      server: () => new f.FedGEMServer({ nFeatures: 2, rounds: 3, variance: 'clients' }),
      numbers: (m) => [m.estimatedK, ...list(m.globalCenters)],
      dispose: () => {},
    },
    'fedgem-spread': {
      // no variance: the first reply is the spread the server estimates it from
      clients: () => data.map((x, c) => new f.FedGEMClient(`client-${c}`, x, { nComponents: 2, seed: c })),
      server: () => new f.FedGEMServer({ nFeatures: 2, rounds: 3 }),
      numbers: (m) => [m.estimatedK, ...list(m.globalCenters), m.varianceEstimate.variance],
      dispose: () => {},
    },
    mdm: {
      clients: () => histograms.map((h, i) => new f.MdmClient(`client-${i}`, h, { seed: i })),
      server: () => new f.MdmServer({ nComponents: 2, nCategories: 4, maxCount: 30, rounds: 3, init: mdmStart, seed: 1 }),
      numbers: (m) => [...list(m.tau), ...list(m.alpha), ...list(m.pi)],
      dispose: () => {},
      target: `client-11`,
    },
    communities: {
      clients: () => data.map((x, c) => new f.CommunitiesClient(`client-${c}`, x, { detector: { kind: 'gmm', contamination: 0.1 } })),
      server: () => new f.CommunitiesServer({ nFeatures: 2, kind: 'gmm', contamination: 0.1, q: 0.1 }),
      // the graph as numbers: client positions of the nodes, of each edge's ends, and each node's community
      numbers: (m) => {
        const at = (id) => Number(id.slice('client-'.length));
        return [...m.nodes.map(at), ...m.edges.flat().map(at), ...m.nodes.map((id) => m.membership.get(id))];
      },
      dispose: () => {},
    },
  };
}

/** Every path to a value in a JSON tree: [parent, key] pairs. */
function places(value, out = [], depth = 0) {
  if (value === null || typeof value !== 'object' || depth > 6) return out;
  for (const key of Object.keys(value)) {
    out.push([value, key]);
    places(value[key], out, depth + 1);
  }
  return out;
}

/** The mutations of a reply's JSON form, by name; each changes `m` in place (or returns a replacement text). */
const TREE = {
  'delete a field': (m, r) => {
    const p = r.pick(places(m));
    if (p) delete p[0][p[1]];
  },
  'swap a type': (m, r) => {
    const p = r.pick(places(m));
    if (p) p[0][p[1]] = r.pick([null, true, 'x', [], {}, [[1]], { a: 1 }, '1e3', 0]);
  },
  'a huge number': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => typeof o[k] === 'number'));
    if (p) p[0][p[1]] = r.pick([1e308, -1e308, 2 ** 53 + 2, 2 ** 32 + 2, 5e-324, -0]);
  },
  'Infinity on the wire': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => typeof o[k] === 'number'));
    if (p) p[0][p[1]] = '__INF__';
  },
  'a negated number': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => typeof o[k] === 'number' && o[k] !== 0));
    if (p) p[0][p[1]] = -p[0][p[1]];
  },
  'an array scaled by 1e300': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => Array.isArray(o[k]) && o[k].every((x) => typeof x === 'number')));
    if (p) p[0][p[1]] = p[0][p[1]].map((x) => x * 1e300);
  },
  'an array scaled by 1e-300': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => Array.isArray(o[k]) && o[k].every((x) => typeof x === 'number')));
    if (p) p[0][p[1]] = p[0][p[1]].map((x) => x * 1e-300);
  },
  'an array cut short or grown': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => Array.isArray(o[k])));
    if (p) p[0][p[1]] = r.u() < 0.5 ? p[0][p[1]].slice(0, -1) : [...p[0][p[1]], 1];
  },
  'an extra field': (m, r) => {
    const p = r.pick([m, m.payload, ...places(m.payload).map(([o, k]) => o[k]).filter((v) => v && typeof v === 'object' && !Array.isArray(v))]);
    if (p && typeof p === 'object') p[r.pick(['extra', 'constructor', 'prototype', '__INJECT__'])] = { polluted: true };
  },
  'a prototype key': () => '__PROTO__',
  'deep nesting': (m, r) => {
    const p = r.pick(places(m));
    // written into the text, as no JSON.stringify could (it recurses)
    if (p) p[0][p[1]] = `__DEEP_${r.pick([100, 5000, 100_000])}__`;
  },
  'a huge array': (m, r) => {
    const p = r.pick(places(m).filter(([o, k]) => Array.isArray(o[k])));
    if (p) p[0][p[1]] = new Array(200_000).fill(1);
  },
  'a huge string': (m, r) => {
    const p = r.pick(places(m));
    if (p) p[0][p[1]] = 'x'.repeat(500_000);
  },
  'a spoofed sender': (m, r) => {
    m.from = r.pick(['client-0', '', 'server', 'client-99']);
  },
  'another round (a replay)': (m, r) => {
    m.round = r.pick([0, 2, 1e9, -1]);
  },
  'another kind or version': (m, r) => {
    if (r.u() < 0.5) m.kind = r.pick(['dem/count', 'fedgem/final', 'mdm/init-stats', 'fedgengmm/train', 'fedmix/refusal', 'x']);
    else m.version = r.pick([0, 2, '1']);
  },
};

/** Mutations of the binary form: bytes flipped, cut, extended, or a value overwritten with NaN, Infinity or 1e308. */
const BYTES = {
  'bytes flipped': (b, r) => {
    for (let i = 1 + r.int(4); i > 0; i--) b[r.int(b.length)] ^= 1 << r.int(8);
    return b;
  },
  'cut short': (b, r) => b.slice(0, r.int(b.length)),
  'garbage appended': (b, r) => {
    const out = new Uint8Array(b.length + 1 + r.int(64));
    out.set(b);
    for (let i = b.length; i < out.length; i++) out[i] = r.int(256);
    return out;
  },
  'a value overwritten with NaN, Infinity or 1e308': (b, r) => {
    // the last 8 aligned bytes before the end-of-stream marker are a value of the last column
    const at = (b.length - 16) & ~7;
    if (at > 0) new DataView(b.buffer, b.byteOffset).setFloat64(at, r.pick([NaN, Infinity, -Infinity, 1e308]), true);
    return b;
  },
};

export const MUTATIONS = [...Object.keys(TREE), ...Object.keys(BYTES)];

/** The wire bytes of a mutation of `honest` (its binary bytes). */
function mutate(f, honest, name, r) {
  if (name in BYTES) return BYTES[name](honest.slice(), r);
  const m = JSON.parse(f.encodeMessage(f.decodeMessage(honest)));
  const replaced = TREE[name](m, r);
  let text = JSON.stringify(m)
    .replaceAll('"__INF__"', '1e999')
    .replace(/"__DEEP_(\d+)__"/, (_, n) => '['.repeat(Number(n)) + '1' + ']'.repeat(Number(n)));
  if (replaced === '__PROTO__') text = text.replace('"payload":{', '"payload":{"__proto__":{"polluted":true},');
  return new TextEncoder().encode(text);
}

/**
 * Runs `perServer` mutations against each server in `servers` (default all),
 * from `seed`; returns, per server, how many runs excluded the target, how many
 * kept it, and every violation found (with the mutation that caused it).
 */
export function fuzzServers(f, { seed = 1, perServer = 20, servers, heap } = {}) {
  const all = federations(f);
  const report = {};
  for (const name of servers ?? Object.keys(all)) {
    const fed = all[name];
    const target = fed.target ?? TARGET;
    const r = stream(seed + name.length * 7919);
    const runWith = (replace) => {
      class Mutating extends f.InProcessTransport {
        exchangeSync(round, messages, options) {
          const ex = super.exchangeSync(round, messages, options);
          const got = ex.received.get(target);
          // the reply's wire bytes (in process, a binary reply is handed over without them: its message encoded again gives them)
          const bytes = got?.[0] instanceof Uint8Array ? got[0] : got?.[0] !== undefined ? f.encodeMessage(got[0].message, 'binary') : undefined;
          if (round === 1 && replace && bytes) ex.received.set(target, [replace(bytes)]);
          return ex;
        }
      }
      const clients = fed.clients();
      const server = fed.server();
      try {
        const run = f.runFederationSync(server, new Mutating(replace === 'without' ? clients.filter((c) => c.id !== target) : clients));
        const numbers = fed.numbers(run.model);
        fed.dispose(run.model);
        return { run, numbers };
      } finally {
        server.dispose?.();
        for (const c of clients) c.dispose?.();
      }
    };
    const without = runWith('without').numbers;
    const stats = { tried: 0, excluded: 0, kept: 0, violations: [] };
    const byMutation = {};
    for (let i = 0; i < perServer; i++) {
      const mutation = MUTATIONS[i % MUTATIONS.length];
      const before = heap?.();
      let outcome;
      try {
        outcome = runWith((honest) => mutate(f, honest, mutation, r));
      } catch (e) {
        stats.violations.push(`${mutation}: the run threw ${e?.constructor?.name}: ${String(e?.message).slice(0, 200)}`);
        continue;
      } finally {
        stats.tried += 1;
      }
      const out = outcome.run.excluded.map((e) => e.client);
      const polluted = Object.prototype.polluted !== undefined || Object.keys(Object.prototype).length > 0;
      if (polluted) stats.violations.push(`${mutation}: Object.prototype changed`);
      if (out.some((c) => c !== target)) stats.violations.push(`${mutation}: honest clients excluded: ${out.join(', ')}`);
      if (out.includes(target)) {
        stats.excluded += 1;
        const same = outcome.numbers.length === without.length && outcome.numbers.every((v, k) => Object.is(v, without[k]));
        if (!same) stats.violations.push(`${mutation}: excluded, but the model differs from the run without it`);
      } else {
        stats.kept += 1;
        if (!outcome.numbers.every(Number.isFinite)) stats.violations.push(`${mutation}: kept, and the model has a number that is not finite`);
      }
      if (heap && heap() !== before) stats.violations.push(`${mutation}: the WASM heap grew by ${heap() - before} bytes`);
      (byMutation[mutation] ??= { excluded: 0, kept: 0 })[out.includes(target) ? 'excluded' : 'kept'] += 1;
    }
    report[name] = { ...stats, byMutation };
  }
  return report;
}
