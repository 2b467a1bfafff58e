/**
 * The lifecycle that GaussianMixture and OneClassSVM share: the fitted model
 * lives in the WASM core behind one handle the object owns, with the fit's
 * statistics read once and the parameter arrays read on first use; fit or
 * load replaces it, dispose() frees it, and a call without it says whether
 * the model was never fitted or was disposed. Held as a private field, not
 * a base class, so that the public declarations never name it.
 * @internal
 */
import { Matrix, type MatrixLike } from '../data/matrix.js';
import { notFitted } from '../errors.js';
import type { WasmExports } from '../wasm/loader.js';
import { OwnedHandle, requireWasmMemory, withScope, type Scope } from '../wasm/memory.js';

/** What differs between the models: their C ABI calls and what errors say. @internal */
export interface WasmModelSpec<S, R extends string> {
  /** the class's name, as errors say it */
  name: string;
  /** frees a handle (fm_*_free) */
  free: (w: WasmExports, ptr: number) => void;
  /** how many values fm_*_info writes */
  infoLength: number;
  /** copies a handle's statistics to `out` (fm_*_info) */
  info: (w: WasmExports, handle: number, out: number) => void;
  /** the statistics from the values info wrote */
  stats: (info: Float64Array) => S;
  /** what a fit of n rows of d features is, for the out-of-memory error */
  fitting: (n: number, d: number) => string;
  /** a lower bound of a fit's peak in WASM memory besides the rows */
  fitBytes: (n: number, d: number) => number;
  /** how many values the parameter array `which` holds */
  readLength: (stats: S, which: R) => number;
  /** copies the parameter array `which` to `out` (fm_*_read) */
  read: (w: WasmExports, handle: number, which: R, out: number) => void;
}

/** A fitted model's handle, statistics and parameter cache (see the module's note). @internal */
export class WasmModelState<S, R extends string> {
  private owned: OwnedHandle | undefined;
  /** whether dispose() freed the model (and no fit or load since), so a call can say so */
  private disposed = false;
  private stats: S | undefined;
  private readonly cache = new Map<R, Float64Array>();

  constructor(private readonly spec: WasmModelSpec<S, R>) {}

  /**
   * Copies X into WASM memory, once the rows and the fit's own needs are
   * known to fit, and fits on it there with the model's `fitResident`.
   */
  fit(X: MatrixLike, fitResident: (s: Scope, ptr: number, n: number, d: number) => void): void {
    const x = Matrix.from(X);
    requireWasmMemory(this.spec.fitting(x.nRows, x.nCols), 8 * x.data.length + this.spec.fitBytes(x.nRows, x.nCols));
    withScope((s) => fitResident(s, s.matrix(x), x.nRows, x.nCols));
  }

  /** Refuses a fit on resident rows that WASM memory cannot hold (fitResident's first step). */
  requireFitMemory(n: number, d: number): void {
    requireWasmMemory(this.spec.fitting(n, d), this.spec.fitBytes(n, d));
  }

  /** Takes ownership of a handle the core created, replacing any previous model. */
  adopt(s: Scope, handle: number): void {
    this.owned?.dispose();
    this.owned = new OwnedHandle(handle, this.spec.free);
    this.disposed = false;
    this.cache.clear();
    const info = s.f64(this.spec.infoLength);
    this.spec.info(s.w, handle, info);
    this.stats = this.spec.stats(s.readF64(info, this.spec.infoLength));
  }

  /** The live handle and its statistics, or the NotFittedError (DisposedError after dispose()) saying why not. */
  fitted(): { handle: number; stats: S } {
    if (!this.owned || !this.stats) throw notFitted(this.spec.name, this.disposed, 'call fit(X)');
    return { handle: this.owned.ptr, stats: this.stats };
  }

  get isFitted(): boolean {
    return this.owned !== undefined && !this.owned.disposed;
  }

  /** Fitted, and in the running instance (not one a trap reset). */
  get live(): boolean {
    return this.owned !== undefined && this.owned.live;
  }

  /** The parameter array `which`, read from the core once per fit; the cached array itself, so callers copy what they hand out. */
  read(which: R): Float64Array {
    const { handle, stats } = this.fitted();
    let v = this.cache.get(which);
    if (!v) {
      const len = this.spec.readLength(stats, which);
      v = withScope((s) => {
        const out = s.f64(len);
        this.spec.read(s.w, handle, which, out);
        return s.readF64(out, len);
      });
      this.cache.set(which, v);
    }
    return v;
  }

  /** Frees the model's WASM memory; the model is unfitted (disposed) afterwards. */
  dispose(): void {
    this.owned?.dispose();
    this.owned = undefined;
    this.disposed = true;
    this.stats = undefined;
    this.cache.clear();
  }
}
