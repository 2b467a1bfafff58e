/**
 * A group of simulated MDM users behind one runtime client, the way
 * pfl-research and Flower simulations scale to many users: the group holds
 * its users' histograms as one matrix and answers each server message once,
 * with the sum of its users' terms and their number (the envelope's `users`),
 * computed in ONE WASM call for all of them (the kernel's fm_mdm_round_stats
 * and fm_mdm_init_stats over m rows) instead of one call and one message per
 * user. Every MDM reply is a term of a sum, so the aggregate is the one the
 * users would have given one by one (up to the order of the additions); the
 * aggregator checks the group's sums against the users it claims
 * (messages.ts, readStats with users > 1).
 *
 * Each user keeps its own random choice in Algorithm 1 (its own seeded
 * generator, as MdmClient's), so a group answers as its users would have at
 * the same seeds. Under differential privacy nothing changes at the
 * aggregator: each user is clipped on its own inside the kernel, and the
 * noise, calibrated to one user, is added once to the round's sums. The
 * group's own reply is exact (a simulation: one process holds all its users'
 * data), which the aggregator never releases.
 *
 * The histograms are copied into WASM memory and checked there once, at the
 * first request (fm_mdm_histograms); every later call reads that copy and
 * checks only its fit to the model's C and N (the `_held` exports), instead
 * of copying the counts in and checking them again on every round. The copy
 * is the group's own (the arrays it was given are copied at construction, and
 * nothing outside the core writes the WASM copy) and is freed by dispose().
 *
 * A single client holding its own histogram (MdmClient, client.ts) is a group
 * of one user: its replies carry no `users`, as one user's never do.
 */
import { formatValue, InvalidDataError, InvalidMessageError } from '../../errors.js';
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { histogramRows } from '../../models/dirichlet-multinomial-mixture.js';
import { Rng } from '../../random.js';
import { guardRead } from '../../validate.js';
import { OwnedHandle, requireWasmMemory, withScope, type HandleLabel, type Scope } from '../../wasm/memory.js';
import { MAX_USERS, type Message } from '../messages/envelope.js';
import { densify } from '../messages/sparse.js';
import { wasRead } from '../messages/schema.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import {
  checkShape,
  EVALUATION,
  INIT_STATS,
  MDM_KINDS,
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
import { userGroupOptions, type MdmUserGroupOptions, type ResolvedMdmUserGroupOptions } from './options.js';

export type { MdmUserGroupOptions } from './options.js';

/** A broadcast model, checked, with its prepared form in WASM memory (made on first use). */
interface Broadcast {
  read: ReturnType<typeof readModelBroadcast>;
  prepared?: OwnedHandle;
}

const PREPARED_LABEL: HandleLabel = { what: 'a prepared MDM model', renew: 'the next request prepares a new one', redo: 'the next request prepares a new one' };

const HISTOGRAMS_LABEL: HandleLabel = { what: "a group's histograms in WASM memory", renew: 'the next request copies them in again', redo: 'the next request copies them in again' };

/**
 * Checked models by the broadcast they came in: in process, the clients of a
 * round share one read-only request (InProcessTransport), so the model is
 * checked, built and prepared in WASM once per round, not once per client.
 * A prepared model is freed when the transport releases the broadcast (or,
 * failing that, when the broadcast is collected).
 */
const broadcasts = new WeakMap<ModelBroadcast, Broadcast>();

function broadcastModel(request: ModelBroadcast, maxCells: number): Broadcast {
  // each client's own limit on what it accepts, before anything is shared
  checkShape(request.model, maxCells);
  let b = broadcasts.get(request);
  if (!b) broadcasts.set(request, (b = { read: readModelBroadcast(request, maxCells) }));
  return b;
}

/** The broadcast's model in WASM memory, prepared for client statistics (again after a trap reset the instance). */
function prepared(b: Broadcast): number {
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
function releaseBroadcast(request: Message): void {
  // only a read request (what respond() was given by its host) can have a prepared model
  if (wasRead(request) && request.kind === MDM_KINDS.model) broadcasts.get(request.payload as ModelBroadcast)?.prepared?.dispose();
}

export class MdmUserGroup implements ClientRole {
  readonly id: string;
  readonly protocol = MDM_PROTOCOL;
  /** how many users it stands for: its histograms' rows */
  readonly users: number;
  /** C, the categories of every user's histogram */
  readonly nCategories: number;
  /** the users' histograms, one row per user */
  readonly histograms: Matrix;
  /** the largest n among its users */
  readonly largest: number;
  /** the histograms row-major (users x C), checked at construction; the kernel reads `held`, copied from these */
  private readonly own: { counts: Float64Array; sizes: Float64Array };
  /** every user has this n (E then travels as one column), or undefined */
  private readonly commonSize: number | undefined;
  /** the histograms in WASM memory, checked there once (made at the first request) */
  private held: OwnedHandle | undefined;
  private readonly seeds: Float64Array;
  private readonly maxCells: number;
  /** the users' own generators, made at the first Algorithm 1 request */
  private rngs: Rng[] | undefined;
  /**
   * The fewest categories the histograms may have when the group is made.
   * MdmClient: 1, since a single client has always been checked against each
   * model's C only when a request arrives (and refuses it then).
   */
  protected static readonly minCategories: number = 2;

  /**
   * `histograms`: one row of non-negative integer counts per user (each with
   * at least one data point), one column per category. Checked here; against
   * each model's C and N when a message arrives.
   */
  constructor(id: string, histograms: MatrixLike, given: MdmUserGroupOptions | ResolvedMdmUserGroupOptions = {}) {
    this.id = requireClientId(id);
    // checked once (userGroupOptions), unless they are what its check returned
    const options = userGroupOptions.check(given);
    if (histograms === null || typeof histograms !== 'object') throw new InvalidDataError(`${id}: its users' histograms must be a matrix of counts (one row per user), got ${formatValue(histograms)}`);
    const rows = histogramRows(histograms, undefined, options.sizes);
    const { counts, sizes, m, c } = rows;
    if (m === 0) throw new InvalidDataError(`${id}: a group needs at least one user (one histogram row)`);
    if (m > MAX_USERS) throw new InvalidDataError(`${id}: ${m} users; a group stands for at most ${MAX_USERS}`);
    if (c < (new.target as typeof MdmUserGroup).minCategories) throw new InvalidDataError(`${id}: the histograms have ${c} categor${c === 1 ? 'y' : 'ies'}; they need at least 2`);
    let largest = 0;
    for (let i = 0; i < m; i++) {
      let sum = 0;
      for (let j = 0; j < c; j++) {
        const v = counts[i * c + j]!;
        if (!(v >= 0) || !Number.isInteger(v)) throw new InvalidDataError(`${id}: user ${i}: count ${j} is ${formatValue(v)}; counts must be non-negative integers`);
        sum += v;
      }
      if (sizes[i] !== sum) {
        throw new InvalidDataError(`${id}: user ${i}: its histogram sums to ${sum} but its size n is ${formatValue(sizes[i])}; n is the number of data points, the sum of the counts`);
      }
      if (sum < 1) throw new InvalidDataError(`${id}: user ${i}: its histogram is empty (n = 0); a user needs at least one data point`);
      largest = Math.max(largest, sum);
    }
    this.maxCells = options.maxCells;
    if (options.seeds !== undefined) {
      this.seeds = options.seeds;
      if (this.seeds.length !== m) throw new InvalidDataError(`${id}: ${this.seeds.length} seeds for ${m} users; give one seed per user`);
    } else {
      const rng = new Rng(options.seed);
      try {
        this.seeds = Float64Array.from(rng.uniform(m), (u) => Math.floor(u * 2 ** 32));
      } finally {
        rng.dispose();
      }
    }
    this.histograms = guardRead('histograms', () => Matrix.from(histograms));
    // copies: the given sizes may be the caller's own array, and the rows are what was checked above
    this.own = { counts: counts.slice(), sizes: sizes.slice() };
    this.commonSize = sizes.every((x) => x === sizes[0]) ? sizes[0] : undefined;
    this.users = m;
    this.nCategories = c;
    this.largest = largest;
  }

  /** the histograms row-major (users x C), a copy: for one user, its histogram */
  get counts(): Float64Array {
    return this.own.counts.slice();
  }

  /** every user's n, a copy */
  get sizes(): Float64Array {
    return this.own.sizes.slice();
  }

  /**
   * The histograms in WASM memory, copied in and checked once (fm_mdm_histograms),
   * then read by every call; again after dispose() or after a trap reset the instance.
   */
  private heldHistograms(): number {
    if (!this.held?.live) {
      const { counts, sizes } = this.own;
      requireWasmMemory(`the histograms of ${this.users} users`, 16 * (counts.length + sizes.length));
      const ptr = withScope((s) => {
        const out = s.u32(1);
        s.check(s.w.fm_mdm_histograms(s.f64From(counts), s.f64From(sizes), this.users, this.nCategories, out));
        return s.readU32(out, 1)[0]!;
      });
      this.held = new OwnedHandle(ptr, (w, p) => w.fm_mdm_histograms_free(p), HISTOGRAMS_LABEL);
    }
    return this.held.ptr;
  }

  /**
   * The group's answer to a server message: the sum of its users' terms.
   * Throws InvalidMessageError when the message cannot be used,
   * InvalidDataError when a user's data does not fit the model (the whole
   * group then refuses: all its users fail together).
   */
  respond(request: Message): Message {
    const m = readRequest(this.protocol, request);
    // the envelope says how many users a reply stands for only when more than one
    const users = this.users > 1 ? this.users : undefined;
    switch (m.kind) {
      case MDM_KINDS.initRequest:
        return INIT_STATS.create(this.id, m.round, this.initStats(m.payload as InitRequest), users);
      case MDM_KINDS.model:
        return STATS.create(this.id, m.round, this.statistics(m.payload as ModelBroadcast), users);
      case MDM_KINDS.evaluate:
        return EVALUATION.create(this.id, m.round, this.evaluation(m.payload as EvaluateRequest), users);
      default:
        throw new InvalidMessageError(`an MDM client does not answer ${m.kind} messages`);
    }
  }

  /** Its users' data against a model of C categories and sizes up to N: a typed error naming what to change. */
  protected fits(c: number, nMax: number): void {
    if (this.nCategories !== c) throw new InvalidDataError(`${this.id}: its users' histograms have ${this.nCategories} categories but the model has ${c}`);
    if (this.largest > nMax) {
      throw new InvalidDataError(`${this.id}: a user of n = ${this.largest} exceeds N = ${nMax}, the largest client size the model covers; raise N (maxCount) to at least ${this.largest}`);
    }
  }

  private initStats(request: InitRequest): InitStatsReply {
    const { k, c, nMax } = checkShape(request, this.maxCells);
    this.fits(c, nMax);
    const m = this.users;
    // Algorithm 1: each user draws k_i ~ U{1..K} from its own generator, never sent
    this.rngs ??= Array.from(this.seeds, (s) => new Rng(s));
    const components = new Uint32Array(m);
    for (let i = 0; i < m; i++) components[i] = this.rngs[i]!.choice(k, 1)[0]!;
    const held = this.heldHistograms();
    requireWasmMemory(`the Algorithm 1 sums of ${m} users`, 4 * m + 16 * (k * nMax + 2 * k * c));
    return withScope((s) => {
      const [e, p, q] = [s.f64(k * nMax), s.f64(k * c), s.f64(k * c)];
      s.check(s.w.fm_mdm_init_stats_held(held, k, nMax, s.u32From(components), e, p, q));
      return { e: s.readF64(e, k * nMax), p: s.readF64(p, k * c), q: s.readF64(q, k * c) };
    });
  }

  private statistics(request: ModelBroadcast): StatsReply {
    const broadcast = broadcastModel(request, this.maxCells);
    const { model, clip, logLikelihood } = broadcast.read;
    const { nComponents: k, nCategories: c, maxCount: nMax } = model;
    this.fits(c, nMax);
    const held = this.heldHistograms();
    const handle = prepared(broadcast);
    requireWasmMemory(`the statistics of ${this.users} users under ${k} components of ${c} categories`, 16 * (2 * k + k * c + k * nMax));
    return withScope((s) => {
      // omega (k), u (k x C), v (k), extra (3) in one block, read back in one copy; E apart
      const out = s.f64(2 * k + k * c + 3);
      const e = s.f64(k * nMax);
      // every user's terms summed in the core, each user's (u, v) clipped on its own
      s.check(s.w.fm_mdm_round_stats_held(handle, held, clip ?? Infinity, out, e, out + 8 * k, out + 8 * (k + k * c), out + 8 * (2 * k + k * c)));
      const all = s.readF64(out, 2 * k + k * c + 3);
      const reply: StatsReply = { omega: all.subarray(0, k), e: this.eStatistic(s, e, k, nMax), u: all.subarray(k, k + k * c), v: all.subarray(k + k * c, 2 * k + k * c) };
      if (logLikelihood) {
        reply.logLikelihood = all[2 * k + k * c]!;
        reply.unsupported = all[2 * k + k * c + 1]!;
      }
      return reply;
    });
  }

  /**
   * E, the sum of the users' omega^i in the columns of their sizes n_i, zero
   * elsewhere: where every user has the same n it is that one column, read
   * as such so that it travels sparse (messages/sparse.ts); otherwise whole.
   */
  private eStatistic(s: Scope, at: number, k: number, nMax: number): Float64Array {
    const n = this.commonSize;
    if (n === undefined) return s.readF64(at, k * nMax);
    const dense = new Float64Array(s.w.memory.buffer, at, k * nMax);
    const column = new Uint32Array(k);
    const values = new Float64Array(k);
    for (let q = 0; q < k; q++) values[q] = dense[(column[q] = q * nMax + n - 1)]!;
    return densify(column, values, k * nMax) as Float64Array;
  }

  private evaluation(request: EvaluateRequest): EvaluationReply {
    const models = readEvaluate(request, this.maxCells);
    for (const model of models) this.fits(model.nCategories, model.maxCount);
    const held = this.heldHistograms();
    requireWasmMemory(`the log-likelihoods of ${this.users} users`, 8 * this.users);
    const ll = models.map((model) =>
      withScope((s) => {
        // each candidate prepared for this call only (a batch of users tabulates, as DirichletMultinomialMixture.logPmf's)
        const out = s.u32(1);
        s.check(s.w.fm_mdm_prepare(model.nComponents, model.nCategories, model.maxCount, ...model.pointers(s), out));
        const handle = s.readU32(out, 1)[0]!;
        try {
          const at = s.f64(this.users);
          s.check(s.w.fm_mdm_log_pmf_held(handle, held, at, 0));
          return s.readF64(at, this.users);
        } finally {
          s.w.fm_mdm_prepared_free(handle);
        }
      }),
    );
    // a user counts only where every candidate gives it a positive probability (as MdmClient)
    const sums = new Float64Array(models.length);
    let counted = 0;
    for (let i = 0; i < this.users; i++) {
      if (!ll.every((x) => x[i]! > -Infinity)) continue;
      counted += 1;
      for (let q = 0; q < models.length; q++) sums[q]! += ll[q]![i]!;
    }
    return { logLikelihood: sums, counted };
  }

  /** A broadcast's prepared model is freed once every client that got it has answered. */
  requestDone(request: Message): void {
    releaseBroadcast(request);
  }

  /** Frees the users' generators and the histograms' WASM copy (a later request makes them again). */
  dispose(): void {
    this.held?.dispose();
    this.held = undefined;
    for (const r of this.rngs ?? []) if (!r.disposed) r.dispose();
    this.rngs = undefined;
  }
}
