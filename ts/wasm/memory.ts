/**
 * Ownership of WASM memory from TypeScript. Transient buffers live in a Scope
 * that frees them all when the call returns or throws; long-lived objects (a
 * fitted model) hold an OwnedHandle whose dispose() frees it, with a
 * FinalizationRegistry only as a safety net. Typed-array views are created
 * right before use, because growing the memory detaches earlier ones.
 *
 * Running out of memory is a WasmAllocationError, never a trap: a request
 * whose buffers cannot fit is refused before the call (requireWasmMemory),
 * and the core reports the allocations it cannot make as a status. Memory
 * never shrinks; init({ fresh: true }) starts over with an empty instance.
 */
import { errorFromStatus, InvalidDataError, NotFittedError, WasmAllocationError, WasmError } from '../errors.js';
import { isDetached } from '../validate.js';
import { coreConstant, coreConstantName } from './constants.js';
import type { OptionStruct } from './abi.generated.js';
import { instance, type WasmExports } from './loader.js';

/** wasm32 addresses 4 GiB: no WASM memory grows beyond it. */
export const WASM32_MAX_BYTES = 2 ** 32;

const decoder = new TextDecoder();

/** Reads, then frees, the message of the core's last error (its numbers written out: see showNumbers). */
export function takeLastError(w: WasmExports): string {
  const ptr = w.fm_last_error_ptr() >>> 0;
  const len = w.fm_last_error_len();
  const message = decoder.decode(new Uint8Array(w.memory.buffer, ptr, len).slice());
  w.fm_clear_error();
  return showNumbers(message);
}

/**
 * A number in a message of the core travels as its value: a mark and the 16
 * hex digits of its bits (fedmix_core::error::show and display), so that no
 * module carries Rust's float formatting. Written here as those write it
 * natively: U+E000 as JavaScript does, with the exponent's sign dropped
 * (1e21, not 1e+21); U+E001 as Rust's `{}` (inf, and never an exponent).
 */
const NUMBER_TOKEN = /([\uE000\uE001])([0-9a-f]{16})/g;
const bits = new DataView(new ArrayBuffer(8));

export function showNumbers(message: string): string {
  return /[\uE000\uE001]/.test(message)
    ? message.replace(NUMBER_TOKEN, (_, mark: string, hex: string) => {
        bits.setBigUint64(0, BigInt(`0x${hex}`));
        const v = bits.getFloat64(0);
        return mark === '\uE000' ? (Object.is(v, -0) ? '-0' : String(v).replace('e+', 'e')) : rustDisplay(v);
      })
    : message;
}

/** An f64 as Rust's `{}` writes it: the shortest digits that read back, positional. */
function rustDisplay(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  if (!Number.isFinite(v)) return `${sign}inf`;
  const text = String(Math.abs(v));
  const exp = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exp) return sign + text;
  const digits = exp[1]! + (exp[2] ?? '');
  const e = Number(exp[3]);
  return sign + (e >= 0 ? digits + '0'.repeat(e - digits.length + 1) : `0.${'0'.repeat(-e - 1)}${digits}`);
}

/** Bytes the core's heap holds (a usize: read unsigned, it passes 2 GiB). */
export function heapInUse(w: WasmExports): number {
  return w.fm_heap_in_use() >>> 0;
}

function bytesText(b: number): string {
  return `${b} bytes (${(b / 2 ** 20).toFixed(1)} MiB)`;
}

/**
 * At most how many bytes a request can still get: wasm32's 4 GiB less what
 * the core holds (its static data and stack, the reserve it keeps for every
 * call, and the heap in use). An upper bound: freed blocks may be too
 * scattered to hold one large buffer.
 */
export function availableWasmBytes(): number {
  const { exports: w, baseBytes } = instance();
  return Math.max(0, WASM32_MAX_BYTES - baseBytes - coreConstant('memory', 'reserve') - heapInUse(w));
}

/** The error for a request WASM memory cannot serve: `asked` (' allocating ...', ': ...' or ' (...)') says what was asked; then how memory stands and what to do. */
function outOfMemory(asked: string): WasmAllocationError {
  const w = instance().exports;
  return new WasmAllocationError(
    `out of WASM memory${asked}; WASM memory holds ${bytesText(w.memory.buffer.byteLength)} of at most ${bytesText(WASM32_MAX_BYTES)}, ` +
      `${bytesText(heapInUse(w))} in use, at most ${bytesText(availableWasmBytes())} available. Dispose models and clients ` +
      'you no longer need or process the data in smaller pieces; WASM memory never shrinks, and init({ fresh: true }) starts an ' +
      'empty instance (models made before it must be made again)',
  );
}

/**
 * Refuses, before anything is allocated, a request of at least `bytes` bytes
 * (`what`, e.g. 'fitting 3 full components to 100 rows of 2 features') that
 * cannot fit in what WASM memory can still provide. `bytes` is a lower bound
 * of the call's peak; what it misses, the core reports as a status.
 */
export function requireWasmMemory(what: string, bytes: number): void {
  if (!(bytes <= availableWasmBytes())) throw outOfMemory(`: ${what} needs at least ${bytesText(bytes)}`);
}

/**
 * `bytes` bytes of WASM memory (16-byte aligned) for the caller to free with
 * fm_free(ptr, bytes), or the WasmAllocationError saying why there are none.
 */
export function allocate(w: WasmExports, bytes: number): number {
  // wasm32 sizes are u32 and Rust allocations at most 2^31 - 1 bytes; larger
  // requests would otherwise reach the core wrapped modulo 2^32. Pointers
  // come back as i32: unsigned, so that addresses from 2 GiB on stay right.
  const ptr = Number.isSafeInteger(bytes) && bytes >= 0 && bytes < 2 ** 31 ? w.fm_alloc(bytes) >>> 0 : 0;
  if (ptr === 0) throw outOfMemory(` allocating ${bytes} bytes`);
  return ptr;
}

export class Scope {
  readonly w: WasmExports;
  private readonly allocations: Array<[number, number]> = [];

  constructor() {
    this.w = instance().exports;
  }

  alloc(bytes: number): number {
    const ptr = allocate(this.w, bytes);
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
    try {
      new Float64Array(this.w.memory.buffer, ptr, values.length).set(values);
    } catch (e) {
      // a caller's typed array whose buffer was transferred away: intact() sees most of these first
      if (e instanceof TypeError && ArrayBuffer.isView(values) && isDetached(values as Float64Array)) {
        throw new InvalidDataError('the data\'s ArrayBuffer was transferred (detached) before it could be copied into WASM memory; pass data that stays with this thread');
      }
      throw e;
    }
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

  /** An option struct of the C ABI written into WASM memory (its layout generated from crates/fedmix-wasm/src/exports.rs). */
  struct<T>(layout: OptionStruct<T>, value: T): number {
    const ptr = this.alloc(layout.bytes);
    layout.write(new DataView(this.w.memory.buffer), ptr, value);
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
    if (status === coreConstant('status', 'ok')) return;
    const name = coreConstantName('status', status);
    const message = takeLastError(this.w);
    throw name === 'allocation' ? outOfMemory(` (the core ${message})`) : errorFromStatus(status, name, message);
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
      throw new WasmError(`${what} belongs to a WASM instance that was replaced (by init({ fresh: true }) or after a trap); ${redo}`);
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
