/**
 * secureSum: the SecAgg+ protocol run among parties in this process, each
 * with its own keys, over the real state machines (protocol.ts). What it
 * returns is what a secure-aggregation server learns: the sum of the
 * survivors' vectors (within the quantization bound), who survived, and who
 * dropped at which stage. `drop` simulates clients leaving at a stage.
 */
import { formatValue, InvalidParameterError } from '../../errors.js';
import { guardRead } from '../../read-guard.js';
import { readOptions, requireVector } from '../../validate.js';
import type { DistributedNoise } from '../distributed-noise.js';
import { fixedPoint, MAX_CONTRIBUTORS } from './fixed-point.js';
import { defaultNeighbours, defaultThreshold } from './graph.js';
import { CURVES, detectCurve, type Curve } from './keys.js';
import { SecureAggregationClient, SecureAggregationServer, type SecureAggregationParams, type SecureAggregationResult } from './protocol.js';
import { cryptoRandom } from './shamir.js';

/** The stages a simulated client can drop at: before sending that stage's message. */
export interface SecureSumDrops {
  advertise?: readonly string[];
  shares?: readonly string[];
  masked?: readonly string[];
  unmask?: readonly string[];
}

export interface SecureSumOptions {
  /** the largest |value| of any entry of any contribution (declared, not measured: a larger value is refused) */
  clip: number;
  /** neighbours per client (default defaultNeighbours(n); n - 1 = all pairs) */
  neighbours?: number;
  /** shares needed to reconstruct a client's secrets (default defaultThreshold(neighbours)) */
  threshold?: number;
  /** clients that leave before each stage's message */
  drop?: SecureSumDrops;
  /** the curve of key agreement (default X25519 where WebCrypto has it, else P-256) */
  curve?: Curve;
  /** distributed DP: each client adds a Skellam share (distributedNoise(...) for these clients; its fixed point replaces clip's) */
  noise?: DistributedNoise;
  /** bound into the keys (default 'secure-sum', round 0) */
  run?: string;
  round?: number;
}

const STAGES = ['advertise', 'shares', 'masked', 'unmask'] as const;

function readDrops(value: unknown, ids: ReadonlySet<string>): Record<(typeof STAGES)[number], Set<string>> {
  const o = (value === undefined ? {} : readOptions(value as SecureSumDrops, STAGES, 'drop')) as SecureSumDrops;
  const out = { advertise: new Set<string>(), shares: new Set<string>(), masked: new Set<string>(), unmask: new Set<string>() };
  for (const stage of STAGES) {
    const list = o[stage];
    if (list === undefined) continue;
    if (!Array.isArray(list)) throw new InvalidParameterError(`drop.${stage} must be a list of contributors' ids, got ${formatValue(list)}`);
    for (const id of list) {
      if (typeof id !== 'string' || !ids.has(id)) throw new InvalidParameterError(`drop.${stage} names ${formatValue(id)}, not a contributor`);
      out[stage].add(id);
    }
  }
  return out;
}

/**
 * The sum of `contributions` (id -> vector, all of one length, every entry
 * in [-clip, clip]) by secure aggregation: in-process clients and server run
 * SecAgg+ and the server's result is returned. Fewer than threshold clients
 * left at any stage: a SecureAggregationError, never a wrong sum.
 */
export async function secureSum(contributions: ReadonlyMap<string, Float64Array>, options: SecureSumOptions): Promise<SecureAggregationResult> {
  const o = readOptions(options, ['clip', 'neighbours', 'threshold', 'drop', 'curve', 'run', 'round', 'noise'], 'options');
  const noise = o.noise as DistributedNoise | undefined;
  if (noise !== undefined && (noise === null || typeof noise !== 'object' || noise.fixedPoint?.clip !== o.clip)) {
    throw new InvalidParameterError(`noise must be distributedNoise({ clip, ... }) at this clip ${formatValue(o.clip)}, got ${formatValue(noise)}`);
  }
  const clients: string[] = [];
  const inputs = new Map<string, Float64Array>();
  let length: number | undefined;
  guardRead('contributions', () => {
    if (!(contributions instanceof Map)) throw new InvalidParameterError(`contributions must be a Map from ids to Float64Arrays, got ${formatValue(contributions)}`);
    const n = contributions.size;
    if (n < 2 || n > MAX_CONTRIBUTORS) throw new InvalidParameterError(`secure aggregation needs 2 to ${MAX_CONTRIBUTORS} contributions, got ${n}`);
    for (const [id, v] of contributions) {
      if (typeof id !== 'string' || id.length === 0) throw new InvalidParameterError(`contribution ids must be non-empty strings, got ${formatValue(id)}`);
      // a copy: the protocol reads it after awaits, when the caller could have changed it
      const vector = requireVector(`contributions[${id}]`, v).slice();
      length ??= vector.length;
      if (vector.length !== length) throw new InvalidParameterError(`contributions must be of one length: ${id} has ${vector.length} values, the first ${length}`);
      clients.push(id);
      inputs.set(id, vector);
    }
  });
  const n = clients.length;
  const drops = guardRead('drop', () => readDrops(o.drop, new Set(clients)));
  const curve = o.curve === undefined ? await detectCurve() : o.curve;
  if (!CURVES.includes(curve)) throw new InvalidParameterError(`curve must be 'X25519' or 'P-256', got ${formatValue(curve)}`);
  const neighbours = o.neighbours ?? defaultNeighbours(n);
  const params: SecureAggregationParams = {
    run: o.run ?? 'secure-sum',
    round: o.round ?? 0,
    clients,
    neighbours,
    threshold: o.threshold ?? (Number.isInteger(neighbours) && neighbours >= 1 ? defaultThreshold(neighbours) : NaN),
    graphSeed: new Uint8Array(32),
    curve,
    length: length!,
    fixedPoint: noise ? noise.fixedPoint : fixedPoint(o.clip as number, n),
    ...(noise ? { noise: { skellamMu: noise.skellamMu } } : {}),
  };
  cryptoRandom(params.graphSeed);
  const server = new SecureAggregationServer(params);
  // every input checked before any party spends work on it
  for (const [id, v] of inputs) {
    for (let i = 0; i < v.length; i++) {
      if (!(Math.abs(v[i]!) <= params.fixedPoint.clip)) throw new InvalidParameterError(`contributions[${id}][${i}] is ${formatValue(v[i])}, outside [-clip, clip] with clip ${params.fixedPoint.clip}`);
    }
  }
  const parties = new Map<string, SecureAggregationClient>();
  for (const id of clients) parties.set(id, await SecureAggregationClient.create(id, params));
  const live = (stage: (typeof STAGES)[number]): string[] => clients.filter((id) => {
    if (!drops[stage].has(id)) return true;
    server.drop(id);
    return false;
  });

  for (const id of live('advertise')) server.acceptAdvertise(id, parties.get(id)!.advertise());
  const keys = server.advertised();
  for (const id of live('shares')) {
    const k = keys.get(id);
    if (!k) continue;
    const { shares, commitment } = await parties.get(id)!.shareKeys(k);
    server.acceptShares(id, shares, commitment);
  }
  const routed = server.routed();
  for (const id of live('masked')) {
    const r = routed.get(id);
    if (!r) continue;
    const { masked, refused } = await parties.get(id)!.maskedInput(r, inputs.get(id)!);
    server.acceptMasked(id, masked, refused);
  }
  const { survivors, dropped } = server.unmaskRequest();
  const alive = new Set(survivors);
  for (const id of live('unmask')) if (alive.has(id)) server.acceptUnmask(id, parties.get(id)!.unmask(survivors, dropped));
  return server.result();
}
