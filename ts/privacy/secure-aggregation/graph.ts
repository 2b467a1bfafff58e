/**
 * The SecAgg+ neighbour graph (Bell, Bonawitz, Gascón, Lepoint and Raykova
 * 2020, "Secure Single-Server Aggregation with (Poly)Logarithmic Overhead"):
 * a Harary graph H(k, n) - clients on a ring, each linked to the k/2 nearest
 * on either side (and, for odd k, to the one opposite) - over a random order
 * of the clients drawn from a public 32-byte seed by ChaCha20 in the core, so
 * every client and the server derive the same graph and no one chooses it.
 * It is symmetric and every client has exactly k neighbours; k = n - 1 is the
 * complete graph of Bonawitz et al. 2017 (SecAgg).
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { withScope } from '../../wasm/memory.js';

/** The fraction of clients the default degree assumes may drop out or collude with the server. */
export const DEFAULT_BAD_FRACTION = 1 / 3;
/** The statistical security of the default degree: the graph of honest survivors is disconnected with probability below 2^-40. */
export const DEFAULT_SECURITY_BITS = 40;
/** Up to this many clients the default is the complete graph. */
export const ALL_PAIRS_UP_TO = 8;

/** A seeded random order of n clients: order[p] is the client (its index in the list) at ring position p. */
function ringOrder(seed: Uint8Array, n: number): Uint32Array {
  return withScope((s) => {
    const k = s.alloc(32);
    new Uint8Array(s.w.memory.buffer, k, 32).set(seed);
    const out = s.u32(n);
    s.w.fm_secagg_permutation(k, n, out);
    return s.readU32(out, n);
  });
}

/** Why k cannot be the degree of a symmetric graph of n clients, or undefined when it can. */
export function degreeProblem(n: number, k: number): string | undefined {
  if (!(Number.isInteger(k) && k >= 1 && k <= n - 1)) return `neighbours must be an integer in [1, ${n - 1}] (the other clients), got ${formatValue(k)}`;
  if (k % 2 === 1 && n % 2 === 1 && k !== n - 1) return `no graph of ${n} clients gives each an odd number (${k}) of neighbours: use ${k + 1}`;
  return undefined;
}

/**
 * The neighbours of each client (by index in `clients`), each list in the
 * clients' order: a Harary graph of degree `k` over the order drawn from `seed`.
 */
export function neighbourGraph(n: number, k: number, seed: Uint8Array): number[][] {
  if (!(Number.isInteger(n) && n >= 2 && n <= 65_535)) throw new InvalidParameterError(`a neighbour graph needs 2 to 65,535 clients, got ${formatValue(n)}`);
  const problem = degreeProblem(n, k);
  if (problem) throw new InvalidParameterError(problem);
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new InvalidParameterError(`the graph seed must be a Uint8Array of 32 bytes, got ${formatValue(seed)}`);
  const out: number[][] = Array.from({ length: n }, () => []);
  if (k === n - 1) {
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) out[i]!.push(j);
    return out;
  }
  const order = ringOrder(seed, n);
  const link = (p: number, q: number): void => {
    out[order[p]!]!.push(order[q]!);
  };
  for (let p = 0; p < n; p++) {
    for (let d = 1; d <= k >> 1; d++) {
      link(p, (p + d) % n);
      link(p, (p - d + n) % n);
    }
    if (k % 2 === 1) link(p, (p + n / 2) % n);
  }
  for (const list of out) list.sort((a, b) => a - b);
  return out;
}

/**
 * ln of the union bound on the probability that removing `bad` random clients
 * of n disconnects a Harary graph of even degree k (Bell et al. 2020): a cut
 * needs two runs of k/2 consecutive removed clients on the ring, at one of
 * n (n - k - 1) / 2 pairs of places, each pair removed with probability
 * bad! (n - k)! / ((bad - k)! n!).
 */
function lnDisconnected(n: number, k: number, bad: number): number {
  if (k > bad) return -Infinity;
  let ln = Math.log(n) + Math.log(n - k - 1) - Math.LN2;
  for (let i = 0; i < k; i++) ln += Math.log((bad - i) / (n - i));
  return ln;
}

/**
 * The default degree k for n clients: all pairs up to 8 clients; beyond, the
 * least even k for which the graph of honest survivors stays connected with
 * probability at least 1 - 2^-40 when up to a third of the clients drop out
 * or collude (Bell et al. 2020's analysis of the Harary graph; it grows as
 * O(log n)), and n - 1 when no smaller degree does.
 */
export function defaultNeighbours(n: number): number {
  if (!(Number.isInteger(n) && n >= 2 && n <= 65_535)) throw new InvalidParameterError(`n must be an integer in [2, 65535], got ${formatValue(n)}`);
  if (n <= ALL_PAIRS_UP_TO) return n - 1;
  const bad = Math.floor(DEFAULT_BAD_FRACTION * n);
  const target = -(DEFAULT_SECURITY_BITS + 1) * Math.LN2;
  for (let k = 2; k < n - 1; k += 2) if (lnDisconnected(n, k, bad) < target) return k;
  return n - 1;
}

/**
 * The default threshold for degree k: a strict majority of the neighbours,
 * floor(k / 2) + 1. Bell et al. 2020 take t in (the neighbours that may
 * collude, the neighbours expected to survive]; with up to a third of the
 * clients bad, a majority is above the first and below the second.
 */
export function defaultThreshold(k: number): number {
  if (!(Number.isInteger(k) && k >= 1 && k <= 65_534)) throw new InvalidParameterError(`k must be an integer in [1, 65534], got ${formatValue(k)}`);
  return Math.floor(k / 2) + 1;
}
