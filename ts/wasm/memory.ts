/**
 * Ownership of WASM memory from TypeScript. Transient buffers live in a Scope
 * that frees them all when the call returns or throws; long-lived objects (a
 * fitted model) hold an OwnedHandle whose dispose() frees it, with a
 * FinalizationRegistry only as a safety net. Typed-array views are created
 * right before use, because growing the memory detaches earlier ones.
 */
import { errorFromStatus, NotFittedError, WasmError } from '../errors.js';
import { coreConstant, coreConstantName } from './constants.js';
import { instance, type WasmExports } from './loader.js';

const decoder = new TextDecoder();

/** Reads, then frees, the message of the core's last error. */
export function takeLastError(w: WasmExports): string {
  const ptr = w.fm_last_error_ptr() >>> 0;
  const len = w.fm_last_error_len();
  const message = decoder.decode(new Uint8Array(w.memory.buffer, ptr, len).slice());
  w.fm_clear_error();
  return message;
}

/** fm_alloc found no memory: the instance is intact, unlike after a trap, so a caller may refuse the one request and go on. */
export class WasmAllocationError extends WasmError {}

export class Scope {
  readonly w: WasmExports;
  private readonly allocations: Array<[number, number]> = [];

  constructor() {
    this.w = instance().exports;
  }

  alloc(bytes: number): number {
    // wasm32 sizes are u32 and Rust allocations at most 2^31 - 1 bytes; larger
    // requests would otherwise reach the core wrapped modulo 2^32. Pointers
    // come back as i32: unsigned, so that addresses from 2 GiB on stay right.
    const ptr = Number.isSafeInteger(bytes) && bytes >= 0 && bytes < 2 ** 31 ? this.w.fm_alloc(bytes) >>> 0 : 0;
    if (ptr === 0) throw new WasmAllocationError(`out of WASM memory allocating ${bytes} bytes; process the data in smaller pieces`);
    this.allocations.push([ptr, bytes]);
    return ptr;
  }

  /** A buffer of `n` f64 values (contents unspecified until written by the core). */
  f64(n: number): number {
    return this.alloc(Math.max(n, 1) * 8);
  }

  /** A copy of `values` in WASM memory. */
  f64From(values: ArrayLike<number>): number {
    const ptr = this.f64(values.length);
    new Float64Array(this.w.memory.buffer, ptr, values.length).set(values);
    return ptr;
  }

  /**
   * A copy of a matrix's column-major values. Its buffer is checked against
   * its shape first: the shape is frozen, but an ArrayBuffer can still be
   * transferred (length 0) or resized under it, and the core must never read
   * past what the caller holds.
   */
  matrix(x: { readonly data: Float64Array; readonly nRows: number; readonly nCols: number; intact(): unknown }): number {
    x.intact();
    return this.f64From(x.data);
  }

  /** (pointer, length) of `values` copied in; (0, 0), the core's "not given", when undefined. */
  f64Optional(values: ArrayLike<number> | undefined): [number, number] {
    return values === undefined ? [0, 0] : [this.f64From(values), values.length];
  }

  u32(n: number): number {
    return this.alloc(Math.max(n, 1) * 4);
  }

  /** A copy of `values` (unsigned 32-bit integers) in WASM memory. */
  u32From(values: ArrayLike<number>): number {
    const ptr = this.u32(values.length);
    new Uint32Array(this.w.memory.buffer, ptr, values.length).set(values);
    return ptr;
  }

  readF64(ptr: number, n: number): Float64Array {
    return new Float64Array(this.w.memory.buffer, ptr, n).slice();
  }

  readU32(ptr: number, n: number): Uint32Array {
    return new Uint32Array(this.w.memory.buffer, ptr, n).slice();
  }

  /** Throws the typed error the core reported for a status other than ok. */
  check(status: number): void {
    if (status !== coreConstant('status', 'ok')) throw errorFromStatus(status, coreConstantName('status', status), takeLastError(this.w));
  }

  free(): void {
    // after a trap the instance is gone and so is its memory: nothing to free
    if (this.w === currentExportsOrUndefined()) {
      for (const [ptr, bytes] of this.allocations) this.w.fm_free(ptr, bytes);
    }
    this.allocations.length = 0;
  }
}

function currentExportsOrUndefined(): WasmExports | undefined {
  try {
    return instance().exports;
  } catch {
    return undefined;
  }
}

/** Runs `fn` with a Scope whose allocations are freed afterwards, even on error. */
export function withScope<T>(fn: (s: Scope) => T): T {
  const s = new Scope();
  try {
    return fn(s);
  } finally {
    s.free();
  }
}

/** How errors name a handle's owner and what to do once it is gone. */
export interface HandleLabel {
  /** e.g. 'this model' */
  what: string;
  /** after dispose(), e.g. 'fit or load a new one' */
  renew: string;
  /** after a trap reset the instance, e.g. 'fit or load it again' */
  redo: string;
}

const MODEL_LABEL: HandleLabel = { what: 'this model', renew: 'fit or load a new one', redo: 'fit or load it again' };

interface Held {
  ptr: number;
  generation: number;
  free: (w: WasmExports, ptr: number) => void;
}

const registry =
  typeof FinalizationRegistry === 'undefined'
    ? undefined
    : new FinalizationRegistry<Held>((held) => {
        const inst = currentInstanceOrUndefined();
        if (inst && inst.generation === held.generation) held.free(inst.exports, held.ptr);
      });

function currentInstanceOrUndefined(): ReturnType<typeof instance> | undefined {
  try {
    return instance();
  } catch {
    return undefined;
  }
}

/** An object that lives in WASM memory and is freed by dispose(). */
export class OwnedHandle {
  private held: Held | undefined;
  private readonly label: HandleLabel;

  constructor(ptr: number, free: (w: WasmExports, ptr: number) => void, label: HandleLabel = MODEL_LABEL) {
    this.label = label;
    this.held = { ptr, generation: instance().generation, free };
    registry?.register(this, this.held, this);
  }

  /** The pointer, after checking the object is alive and from the running instance. */
  get ptr(): number {
    const held = this.held;
    const { what, renew, redo } = this.label;
    if (!held) throw new NotFittedError(`${what} was disposed; ${renew}`);
    if (held.generation !== instance().generation) {
      throw new WasmError(`${what} belongs to a WASM instance that was reset after a trap; ${redo}`);
    }
    return held.ptr;
  }

  get disposed(): boolean {
    return this.held === undefined;
  }

  /** Whether ptr can be used: not disposed, and from the running instance (not one a trap reset). */
  get live(): boolean {
    return this.held !== undefined && this.held.generation === currentInstanceOrUndefined()?.generation;
  }

  dispose(): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    registry?.unregister(this);
    const inst = currentInstanceOrUndefined();
    if (inst && inst.generation === held.generation) held.free(inst.exports, held.ptr);
  }
}
