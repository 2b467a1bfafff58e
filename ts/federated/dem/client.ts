/**
 * The client role of distributed EM: it holds only its own rows (copied into
 * WASM memory once, resident for the whole run) and answers each server
 * message with a message. What leaves it is what the replies declare:
 * statistics of its rows under the broadcast model, once a summary of them,
 * and, for the initializations that ask, its local k-means clusters or a few
 * of its rows.
 */
import { Matrix, type MatrixLike } from '../../data/matrix.js';
import { InvalidDataError, InvalidMessageError } from '../../errors.js';
import { COV_CODE, type GaussianMixture } from '../../models/gaussian-mixture.js';
import { Rng } from '../../random.js';
import { seedParts } from '../../validate.js';
import { DEM_KFED_LOCAL_OPTIONS } from '../../wasm/abi.generated.js';
import { wasm } from '../../wasm/loader.js';
import { allocate, OwnedHandle, requireWasmMemory, withScope } from '../../wasm/memory.js';
import type { Message } from '../messages/envelope.js';
import { readRequest, requireClientId, type ClientRole } from '../runtime/roles.js';
import {
  DEM_COUNT,
  DEM_KINDS,
  DEM_KFED_LOCAL,
  DEM_PROTOCOL,
  DEM_STATS,
  DEM_SUBSET_ROWS,
  checkBroadcastShape,
  kfedLocalType,
  packedLength,
  readModelBroadcast,
  s2Length,
  type DataSummaryPayload,
  type KfedLocalReply,
  type KfedRequest,
  type ModelBroadcast,
  type StatsReply,
  type SubsetReply,
  type SubsetRequest,
} from './messages.js';

/**
 * Broadcast models by the request they came in: in process the clients of a
 * round share one read-only request (InProcessTransport), so the model is
 * checked and built in WASM once per round, not once per client. It is freed
 * when the transport releases the request (requestDone), or else when the
 * request is collected.
 */
const broadcasts = new WeakMap<ModelBroadcast, GaussianMixture>();

/** The broadcast's model and shift, checked against this client's features (a model a trap reset is built again). */
function broadcastModel(payload: ModelBroadcast, nFeatures: number): { model: GaussianMixture; summaryShift?: Float64Array } {
  const cached = broadcasts.get(payload);
  if (cached?.live) {
    // each client's own checks, before anything shared is used
    checkBroadcastShape(payload, nFeatures);
    return { model: cached, summaryShift: payload.summaryShift };
  }
  const read = readModelBroadcast(payload, nFeatures);
  broadcasts.set(payload, read.model);
  return read;
}

export class DemClient implements ClientRole {
  readonly id: string;
  readonly protocol = DEM_PROTOCOL;
  readonly nRows: number;
  readonly nFeatures: number;
  private readonly rows: OwnedHandle;
  /** the summary of the rows about the last shift asked for */
  private summary: { shift: Float64Array; payload: DataSummaryPayload } | undefined;

  /** `data`: the client's rows (zero rows allowed: such a client tells the server it has none). */
  constructor(id: string, data: MatrixLike) {
    this.id = requireClientId(id);
    const x = Matrix.from(data);
    if (x.nCols < 1) throw new InvalidDataError(`${id}: its data has no columns`);
    const bad = x.data.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) {
      throw new InvalidDataError(
        `${id}: its data contains ${x.data[bad]} at row ${bad % x.nRows}, column ${Math.floor(bad / x.nRows)}; remove or impute non-finite values`,
      );
    }
    this.nRows = x.nRows;
    this.nFeatures = x.nCols;
    const w = wasm();
    const bytes = Math.max(x.data.length, 1) * 8;
    const ptr = allocate(w, bytes);
    new Float64Array(w.memory.buffer, ptr, x.data.length).set(x.data);
    this.rows = new OwnedHandle(ptr, (w2, p) => w2.fm_free(p, bytes), { what: `client ${id}`, renew: 'create a new client', redo: 'create it again' });
  }

  /** The answer to a server request (checked against its declaration by the runtime). Throws InvalidMessageError when it cannot be used. */
  respond(request: Message): Message {
    const m = readRequest(this.protocol, request);
    switch (m.kind) {
      case DEM_KINDS.model:
        return DEM_STATS.create(this.id, m.round, this.statistics(m.payload as ModelBroadcast));
      case DEM_KINDS.kfedRequest:
        return DEM_KFED_LOCAL.create(this.id, m.round, this.kfedLocal(m.payload as KfedRequest));
      case DEM_KINDS.countRequest:
        return DEM_COUNT.create(this.id, m.round, { rows: this.nRows, features: this.nFeatures });
      case DEM_KINDS.subsetRequest:
        return DEM_SUBSET_ROWS.create(this.id, m.round, this.subset(m.payload as SubsetRequest));
      default:
        throw new InvalidMessageError(`a distributed-EM client does not answer ${m.kind} messages`);
    }
  }

  private statistics(payload: ModelBroadcast): StatsReply {
    const { model, summaryShift } = broadcastModel(payload, this.nFeatures);
    {
      const t = model.covarianceType;
      const k = model.nComponents;
      const d = this.nFeatures;
      const n = this.nRows;
      // the statistics in the core (about a copy of the means; full s2 as d x d matrices) and on their way out
      const s2 = t === 'full' ? k * d * d : t === 'tied' ? 0 : k * d;
      requireWasmMemory(`the statistics of ${k} ${t} components`, 8 * (2 * k + 3 * k * d + s2 + s2Length(t, k, d)));
      const reply = withScope((s) => {
        const nk = s.f64(k);
        const s1 = s.f64(k * d);
        const s2 = s.f64(s2Length(t, k, d));
        const ll = s.f64(1);
        s.check(s.w.fm_dem_client_stats(model.handle, this.rows.ptr, n, d, nk, s1, s2, ll));
        const r: StatsReply = {
          rows: n,
          logLikelihood: s.readF64(ll, 1)[0]!,
          nk: s.readF64(nk, k),
          s1: s.readF64(s1, k * d),
          s2: s.readF64(s2, s2Length(t, k, d)),
        };
        return r;
      });
      if (summaryShift) reply.summary = this.summarize(summaryShift, t === 'tied');
      return reply;
    }
  }

  /** A broadcast's model is freed once every client that got it has answered. */
  requestDone(request: Message): void {
    if (request.kind !== DEM_KINDS.model) return;
    const payload = request.payload as ModelBroadcast;
    broadcasts.get(payload)?.dispose();
    broadcasts.delete(payload);
  }

  /** The rows' summary about `shift`, computed once per shift (it never changes during a run). */
  private summarize(shift: Float64Array, tied: boolean): DataSummaryPayload {
    const cached = this.summary;
    if (cached && cached.shift.every((v, j) => v === shift[j]) && (cached.payload.sum !== undefined) === tied) return cached.payload;
    const d = this.nFeatures;
    const payload = withScope((s) => {
      const absMax = s.f64(d);
      const sum = s.f64(d);
      const scatter = s.f64(packedLength(d));
      s.check(s.w.fm_dem_client_summary(this.rows.ptr, this.nRows, d, s.f64From(shift), tied ? 1 : 0, absMax, sum, scatter));
      const p: DataSummaryPayload = { absMax: s.readF64(absMax, d) };
      if (tied) {
        p.sum = s.readF64(sum, d);
        p.scatter = s.readF64(scatter, packedLength(d));
      }
      return p;
    });
    this.summary = { shift, payload };
    return payload;
  }

  private kfedLocal(req: KfedRequest): KfedLocalReply {
    // k-means finds at most one cluster per row: room for more is never allocated (a request cannot make the client reserve it)
    const kl = Math.min(req.localClusters, Math.max(this.nRows, 1));
    const d = this.nFeatures;
    const lt = kfedLocalType(req.covarianceType);
    const [lo, hi] = seedParts(req.seed);
    return withScope((s) => {
      const k = s.f64(1);
      const centers = s.f64(kl * d);
      const nk = s.f64(kl);
      const s1 = s.f64(kl * d);
      const s2 = s.f64(s2Length(lt, kl, d));
      s.check(s.w.fm_dem_kfed_local(this.rows.ptr, s.struct(DEM_KFED_LOCAL_OPTIONS, { n: this.nRows, d, kLocal: kl, covType: COV_CODE[req.covarianceType], seedLo: lo, seedHi: hi }), k, centers, nk, s1, s2));
      const kf = s.readF64(k, 1)[0]!;
      return {
        rows: this.nRows,
        features: d,
        centers: s.readF64(centers, kf * d),
        nk: s.readF64(nk, kf),
        s1: s.readF64(s1, kf * d),
        s2: s.readF64(s2, s2Length(lt, kf, d)),
      };
    });
  }

  private subset({ count, seed }: SubsetRequest): SubsetReply {
    if (count > this.nRows) throw new InvalidMessageError(`asks for ${count} rows but the client has ${this.nRows}`);
    const d = this.nFeatures;
    const rng = new Rng(seed);
    let picked: Int32Array;
    try {
      picked = rng.choice(this.nRows, count);
    } finally {
      rng.dispose();
    }
    const n = this.nRows;
    const all = new Float64Array(wasm().memory.buffer, this.rows.ptr, n * d);
    const values = new Float64Array(count * d);
    picked.forEach((i, r) => {
      for (let j = 0; j < d; j++) values[r * d + j] = all[j * n + i]!;
    });
    return { count, values };
  }

  /** Frees the client's WASM copy of its rows. */
  dispose(): void {
    this.rows.dispose();
  }
}
