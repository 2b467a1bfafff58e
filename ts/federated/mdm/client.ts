/**
 * The client role of federated MDM inference: it holds its own histogram (the
 * counts of one categorical feature over its data points) and answers each
 * server message with its term of a sum, computed in WASM: Algorithm 1's
 * E^i, P^i, Q^i for a component it picks at random itself (the server never
 * learns which), Algorithm 2's omega^i, E^i, u^i, v^i, or its log-likelihood
 * under candidate models.
 */
import { formatValue, InvalidDataError, InvalidMessageError } from '../../errors.js';
import type { DirichletMultinomialMixture } from '../../models/dirichlet-multinomial-mixture.js';
import { Rng } from '../../random.js';
import { readOptions, requireInteger, requireVector } from '../../validate.js';
import { MDM_INIT_STATS_OPTIONS, MDM_ROUND_STATS_OPTIONS } from '../../wasm/abi.generated.js';
import { OwnedHandle, requireWasmMemory, withScope, type HandleLabel } from '../../wasm/memory.js';
import type { Message } from '../messages/envelope.js';
import { densify } from '../messages/sparse.js';
import { wasRead } from '../messages/schema.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import {
  checkShape,
  EVALUATION,
  INIT_STATS,
  MDM_KINDS,
  MDM_MAX_CELLS,
  MDM_PROTOCOL,
  readEvaluate,
  readModelBroadcast,
  STATS,
  type EvaluateRequest,
  type EvaluationReply,
  type InitRequest,
  type InitStatsReply,
  type ModelBroadcast,
  type StatsReply,
} from './messages.js';

export interface MdmClientOptions {
  /** the client's size n, when known apart from its counts: it must equal their sum */
  size?: number;
  /** seed of the client's own random choice (its Algorithm 1 component) */
  seed?: number;
  /** the largest K x C and K x N (each) it accepts in a request (default and at most MDM_MAX_CELLS, 1e7) */
  maxCells?: number;
}

/** A broadcast model, checked, with its prepared form in WASM memory (made on first use). */
interface Broadcast {
  read: ReturnType<typeof readModelBroadcast>;
  prepared?: OwnedHandle;
}

const PREPARED_LABEL: HandleLabel = { what: 'a prepared MDM model', renew: 'the next request prepares a new one', redo: 'the next request prepares a new one' };

/**
 * Checked models by the broadcast they came in: in process, the clients of a
 * round share one read-only request (InProcessTransport), so the model is
 * checked, built and prepared in WASM once per round, not once per client.
 * A prepared model is freed when the transport releases the broadcast (or,
 * failing that, when the broadcast is collected).
 */
const broadcasts = new WeakMap<ModelBroadcast, Broadcast>();

export function broadcastModel(request: ModelBroadcast, maxCells: number): Broadcast {
  // each client's own limit on what it accepts, before anything is shared
  checkShape(request.model, maxCells);
  let b = broadcasts.get(request);
  if (!b) broadcasts.set(request, (b = { read: readModelBroadcast(request, maxCells) }));
  return b;
}

/** The broadcast's model in WASM memory, prepared for client statistics (again after a trap reset the instance). */
export function prepared(b: Broadcast): number {
  if (!b.prepared?.live) {
    const model = b.read.model;
    const ptr = withScope((s) => {
      const out = s.u32(1);
      s.check(s.w.fm_mdm_prepare(model.nComponents, model.nCategories, model.maxCount, ...model.pointers(s), out));
      return s.readU32(out, 1)[0]!;
    });
    b.prepared = new OwnedHandle(ptr, (w, p) => w.fm_mdm_prepared_free(p), PREPARED_LABEL);
  }
  return b.prepared.ptr;
}

/** Frees the prepared model of a broadcast once the transport is done with it (ClientRole.requestDone). */
export function releaseBroadcast(request: Message): void {
  // only a read request (what respond() was given by its host) can have a prepared model
  if (wasRead(request) && request.kind === MDM_KINDS.model) broadcasts.get(request.payload as ModelBroadcast)?.prepared?.dispose();
}

export class MdmClient implements ClientRole {
  readonly id: string;
  readonly protocol = MDM_PROTOCOL;
  /** the histogram: one count per category */
  readonly counts: Float64Array;
  /** n, the number of data points */
  readonly size: number;
  private readonly maxCells: number;
  private readonly rng: Rng;

  /**
   * `counts`: the client's histogram, one non-negative integer per category.
   * Checked here (non-negative integers, at least one data point, the size if
   * given) and against each model's C and N when a message arrives.
   */
  constructor(id: string, counts: ArrayLike<number>, given: MdmClientOptions = {}) {
    this.id = requireClientId(id);
    const options = readOptions(given, ['size', 'maxCells', 'seed']);
    if (counts === null || typeof counts !== 'object') throw new InvalidDataError(`${id}: its histogram must be an array of counts, got ${formatValue(counts)}`);
    this.counts = requireVector(`${id}: its histogram`, counts, InvalidDataError).slice();
    this.counts.forEach((v, j) => {
      if (!(v >= 0) || !Number.isInteger(v)) {
        throw new InvalidDataError(`${id}: count ${j} is ${formatValue(v)}; counts must be non-negative integers`);
      }
    });
    const sum = this.counts.reduce((a, b) => a + b, 0);
    if (options.size !== undefined && options.size !== sum) {
      throw new InvalidDataError(`${id}: its histogram sums to ${sum} but its size n is ${formatValue(options.size)}; n is the number of data points, the sum of the counts`);
    }
    if (sum < 1) throw new InvalidDataError(`${id}: its histogram is empty (n = 0); a client needs at least one data point`);
    this.size = sum;
    this.maxCells = requireInteger('maxCells', options.maxCells ?? MDM_MAX_CELLS, 1, MDM_MAX_CELLS);
    this.rng = new Rng(options.seed);
  }

  /**
   * The answer to a server message. Throws InvalidMessageError when the
   * message cannot be used, InvalidDataError when the client's data does not
   * fit the model (a request it has no WASM memory for is refused by its host).
   */
  respond(request: Message): Message {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case MDM_KINDS.initRequest:
        return INIT_STATS.create(this.id, m.round, this.initStats(m.payload as InitRequest));
      case MDM_KINDS.model:
        return STATS.create(this.id, m.round, this.statistics(m.payload as ModelBroadcast));
      case MDM_KINDS.evaluate:
        return EVALUATION.create(this.id, m.round, this.evaluation(m.payload as EvaluateRequest));
      default:
        throw new InvalidMessageError(`an MDM client does not answer ${m.kind} messages`);
    }
  }

  /** Its data against a model of C categories and sizes up to N: a typed error naming what to change. */
  private fits(c: number, nMax: number): void {
    if (this.counts.length !== c) {
      throw new InvalidDataError(`${this.id}: its histogram has ${this.counts.length} categories but the model has ${c}`);
    }
    if (this.size > nMax) {
      throw new InvalidDataError(`${this.id}: n = ${this.size} exceeds N = ${nMax}, the largest client size the model covers; raise N (maxCount) to at least ${this.size}`);
    }
  }

  private initStats(request: InitRequest): InitStatsReply {
    const { k, c, nMax } = checkShape(request, this.maxCells);
    this.fits(c, nMax);
    // Algorithm 1: k_i ~ U{1..K}, drawn here and never sent
    const component = this.rng.choice(k, 1);
    return withScope((s) => {
      const [e, p, q] = [s.f64(k * nMax), s.f64(k * c), s.f64(k * c)];
      const comp = s.u32(1);
      new Uint32Array(s.w.memory.buffer, comp, 1)[0] = component[0]!;
      s.check(s.w.fm_mdm_init_stats(s.struct(MDM_INIT_STATS_OPTIONS, { k, c, nMax, m: 1 }), s.f64From(this.counts), s.f64From([this.size]), comp, e, p, q));
      return { e: s.readF64(e, k * nMax), p: s.readF64(p, k * c), q: s.readF64(q, k * c) };
    });
  }

  private statistics(request: ModelBroadcast): StatsReply {
    const broadcast = broadcastModel(request, this.maxCells);
    const { model, clip, logLikelihood } = broadcast.read;
    const { nComponents: k, nCategories: c, maxCount: nMax } = model;
    this.fits(c, nMax);
    const handle = prepared(broadcast);
    // the sums (in the core and on their way out)
    requireWasmMemory(`the statistics of ${k} components of ${c} categories`, 16 * (2 * k + k * c + k * nMax));
    return withScope((s) => {
      // omega (k), u (k x C), v (k), extra (3) in one block, read back in one copy; E apart
      const out = s.f64(2 * k + k * c + 3);
      const e = s.f64(k * nMax);
      s.check(s.w.fm_mdm_round_stats(handle, s.f64From(this.counts), s.f64From([this.size]), s.struct(MDM_ROUND_STATS_OPTIONS, { m: 1, clip: clip ?? Infinity }), out, e, out + 8 * k, out + 8 * (k + k * c), out + 8 * (2 * k + k * c)));
      const all = s.readF64(out, 2 * k + k * c + 3);
      // E^i is omega^i in column n, zero elsewhere: read as that column, it travels sparse (messages/sparse.ts)
      const dense = new Float64Array(s.w.memory.buffer, e, k * nMax);
      const column = new Uint32Array(k);
      const values = new Float64Array(k);
      for (let q = 0; q < k; q++) values[q] = dense[(column[q] = q * nMax + this.size - 1)]!;
      const reply: StatsReply = {
        omega: all.subarray(0, k),
        e: densify(column, values, k * nMax) as Float64Array,
        u: all.subarray(k, k + k * c),
        v: all.subarray(k + k * c, 2 * k + k * c),
      };
      if (logLikelihood) {
        reply.logLikelihood = all[2 * k + k * c]!;
        reply.unsupported = all[2 * k + k * c + 1]!;
      }
      return reply;
    });
  }

  private evaluation(request: EvaluateRequest): EvaluationReply {
    const models = readEvaluate(request, this.maxCells);
    const ll = models.map((m: DirichletMultinomialMixture) => {
      this.fits(m.nCategories, m.maxCount);
      return m.logPmf([this.counts])[0]!;
    });
    // scores count only where every candidate gives the client a positive probability, so all are compared on the same clients
    const counted = ll.every((x) => x > -Infinity);
    return { logLikelihood: Float64Array.from(ll, (x) => (counted ? x : 0)), counted: counted ? 1 : 0 };
  }

  /** A broadcast's prepared model is freed once every client that got it has answered. */
  requestDone(request: Message): void {
    releaseBroadcast(request);
  }

  /** Frees the client's generator. */
  dispose(): void {
    if (!this.rng.disposed) this.rng.dispose();
  }
}
