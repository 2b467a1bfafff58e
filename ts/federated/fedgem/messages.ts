/**
 * FedGEM's messages and their checks on receipt.
 *
 *   client -> server  BALLS      each round: maximizers, radii, counts, |D_c|
 *   server -> client  CENTERS    each round: the client's updated centers
 *   client -> server  FINAL      after training: centers, counts, |D_c|
 *   server -> client  CANDIDATES when phi is tuned: the global centers for each phi
 *   client -> server  SILHOUETTES its validation silhouette under each candidate
 *   server -> client  RESULT     phi, the estimated K, the global centers and
 *                                the client's memberships
 */
import { InvalidMessageError } from '../../errors.js';
import { finiteNumbers, type Message } from '../message.js';

export const BALLS = 'fedgem/balls';
export const CENTERS = 'fedgem/centers';
export const FINAL = 'fedgem/final';
export const CANDIDATES = 'fedgem/candidates';
export const SILHOUETTES = 'fedgem/silhouettes';
export const RESULT = 'fedgem/result';

type Numbers = number[] | Float64Array;

export interface BallsPayload {
  nComponents: number;
  nFeatures: number;
  /** nComponents x nFeatures, row-major */
  maximizers: Numbers;
  radii: Numbers;
  /** N_k: each component's share of the client's rows (they sum to nSamples) */
  counts: Numbers;
  nSamples: number;
}

export interface FinalPayload {
  nComponents: number;
  nFeatures: number;
  centers: Numbers;
  counts: Numbers;
  nSamples: number;
}

export interface CentersPayload {
  centers: Numbers;
}

export interface CandidatesPayload {
  candidates: { phi: number; estimatedK: number; centers: Numbers }[];
}

export interface SilhouettesPayload {
  /** per candidate: the mean silhouette of the client's validation rows, or null when undefined (one cluster) */
  values: (number | null)[];
  nValidation: number;
}

export interface ResultPayload {
  phi: number;
  estimatedK: number;
  /** estimatedK x nFeatures */
  globalCenters: Numbers;
  /** the super-cluster of each of the client's components */
  memberships: number[];
}

/** Most components one client may upload (the server's work and memory grow with them). */
export const MAX_COMPONENTS = 4096;
/** Most rows a client may claim (beyond any real client): counts weigh the merge, so one claim cannot swamp it. */
export const MAX_SAMPLES = 2 ** 48;
/** Most validation rows a client may claim: they weigh the silhouettes, their squares the standard error (kept finite). */
export const MAX_VALIDATION = 2 ** 40;

/** A client's components as the server keeps them. */
export interface ReceivedComponents {
  client: string;
  k: number;
  centers: Float64Array;
  radii?: Float64Array;
  counts: Float64Array;
  nSamples: number;
}

function payload(m: Message, who: string): Record<string, unknown> {
  const p = m.payload as Record<string, unknown> | null;
  if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new InvalidMessageError(`${who}: the payload must be an object`);
  return p;
}

function positiveInteger(name: string, v: unknown, who: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new InvalidMessageError(`${who}: ${name} must be a positive integer, got ${String(v)}`);
  return v;
}

/**
 * The shared checks of BALLS and FINAL: shapes, the dimension of the
 * federation, at least two rows per component (a component fitted to one row
 * has no spread to estimate), counts that add up to the rows, distinct centers.
 */
function components(m: Message, centersField: 'maximizers' | 'centers', nFeatures: number | undefined): ReceivedComponents & { d: number } {
  const who = `client ${m.from}`;
  const p = payload(m, who);
  const k = positiveInteger('nComponents', p.nComponents, who);
  if (k > MAX_COMPONENTS) throw new InvalidMessageError(`${who}: nComponents is ${k}; a client may upload at most ${MAX_COMPONENTS} components`);
  const d = positiveInteger('nFeatures', p.nFeatures, who);
  if (nFeatures !== undefined && d !== nFeatures) {
    throw new InvalidMessageError(`${who}: its centers have ${d} features but this federation has ${nFeatures}`);
  }
  const n = positiveInteger('nSamples', p.nSamples, who);
  if (n > MAX_SAMPLES) throw new InvalidMessageError(`${who}: nSamples is ${n}; at most 2^48 rows per client are accepted`);
  if (n < 2 * k) {
    throw new InvalidMessageError(`${who}: ${n} rows for ${k} components; a client needs at least two rows per component`);
  }
  const centers = finiteNumbers(centersField, p[centersField], k * d, who);
  const counts = finiteNumbers('counts', p.counts, k, who);
  let total = 0;
  counts.forEach((c, i) => {
    if (!(c >= 0)) throw new InvalidMessageError(`${who}: counts[${i}] is ${c}; counts must be non-negative`);
    total += c;
  });
  if (Math.abs(total - n) > 1e-6 * n) throw new InvalidMessageError(`${who}: counts sum to ${total}, not to its ${n} rows`);
  // equal centers: sorted row by row (O(K log K) comparisons), equal rows end up adjacent
  const compare = (a: number, b: number) => {
    for (let j = 0; j < d; j++) {
      const x = centers[a * d + j]!;
      const y = centers[b * d + j]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
  const order = Array.from({ length: k }, (_, i) => i).sort((a, b) => compare(a, b) || a - b);
  for (let i = 1; i < k; i++) {
    const [a, b] = [order[i - 1]!, order[i]!];
    if (compare(a, b) === 0) throw new InvalidMessageError(`${who}: components ${a} and ${b} have the same center; a client's components must differ`);
  }
  return { client: m.from, k, d, centers, counts, nSamples: n };
}

/** A BALLS upload, checked; radii must be finite and non-negative (0: that component has stopped moving). */
export function receiveBalls(m: Message, nFeatures: number | undefined): ReceivedComponents & { d: number } {
  const who = `client ${m.from}`;
  const c = components(m, 'maximizers', nFeatures);
  const radii = finiteNumbers('radii', payload(m, who).radii, c.k, who);
  radii.forEach((r, i) => {
    if (!(r >= 0)) throw new InvalidMessageError(`${who}: radii[${i}] is ${r}; a radius must be non-negative`);
  });
  return { ...c, radii };
}

export function receiveFinal(m: Message, nFeatures: number | undefined): ReceivedComponents & { d: number } {
  return components(m, 'centers', nFeatures);
}

export function receiveSilhouettes(m: Message, candidates: number): { values: (number | null)[]; nValidation: number } {
  const who = `client ${m.from}`;
  const p = payload(m, who);
  const v = p.values;
  if (!Array.isArray(v) || v.length !== candidates) {
    throw new InvalidMessageError(`${who}: values must hold one silhouette per candidate (${candidates})`);
  }
  v.forEach((s, i) => {
    if (s !== null && !(typeof s === 'number' && s >= -1 && s <= 1)) {
      throw new InvalidMessageError(`${who}: values[${i}] is ${String(s)}; a silhouette is a number in [-1, 1] or null`);
    }
  });
  const n = p.nValidation;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new InvalidMessageError(`${who}: nValidation must be a non-negative integer`);
  if (n > MAX_VALIDATION) throw new InvalidMessageError(`${who}: nValidation is ${n}; at most 2^40 validation rows are accepted`);
  // a copy: the sender keeps its array
  return { values: Array.from(v as (number | null)[]), nValidation: n };
}

/** A server message as a client checks it: `expected` numbers of `d` features. */
export function receiveCenters(m: Message, rows: number, d: number): Float64Array {
  return finiteNumbers('centers', payload(m, 'the server').centers, rows * d, 'the server');
}
