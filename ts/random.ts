/**
 * Random draws from the core's one generator (xoshiro256++ in
 * crates/fedmix-core/src/rng.rs, distributions in distributions.rs), so that a
 * seed means the same stream in TypeScript and Rust, in the SIMD and the scalar
 * build (see DESIGN.md, Randomness).
 */
import { Matrix } from './data/matrix.js';
import { formatValue, InvalidParameterError } from './errors.js';
import { wasm } from './wasm/loader.js';
import { OwnedHandle, withScope, type HandleLabel, type Scope } from './wasm/memory.js';
import { isArray, LIMITS, readArray, readOptions, requireInteger, requirePositive, requireVector, seedParts } from './validate.js';
import { keepClassName } from './class-name.js';

/** Most values one call returns (n, or n x k for the matrix draws): LIMITS.values. */
const MAX_DRAWS = LIMITS.values;

/** n draws of k values each, checked: n x k values at most. */
function requireDraws(n: unknown, k: number): number {
  return requireInteger('n', n, 0, k === 0 ? MAX_DRAWS : Math.floor(MAX_DRAWS / k));
}

const RNG_LABEL: HandleLabel = { what: 'this Rng', renew: 'create a new Rng', redo: 'create a new Rng' };

/**
 * A seeded generator living in WASM memory. Each call continues the stream, so
 * `new Rng(7)` followed by the same calls gives the same numbers everywhere.
 * A call that throws (bad parameters) draws nothing. Free it with dispose();
 * a FinalizationRegistry frees forgotten ones eventually.
 * gamma(), dirichlet(), logDirichlet() and categorical() run in the 'dirichlet'
 * feature module (init() loads it unless given features without it); the
 * other draws are the core's.
 *
 * ```ts
 * const rng = new Rng(42);
 * rng.normal(3);                        // Float64Array(3)
 * rng.dirichlet([0.05, 0.05, 0.05], 10); // Matrix 10 x 3, rows sum to 1
 * rng.dispose();
 * ```
 */
/**
 * Where a generator's stream is, as JSON-safe numbers (Rng.getState,
 * Rng.setState): the four 64-bit words of xoshiro256++ as eight 32-bit
 * halves (low half first), and the second normal of the last polar pair,
 * which the next normal() returns (null when none is held).
 */
export interface RngState {
  words: number[];
  spare: number | null;
}

/** Numbers in the core's form of a state: the eight halves, the spare's flag, the spare. */
const STATE_LEN = 10;

/** Seed words for the next Rng constructed by Rng.unpredictable (read once by the constructor). */
let entropy: [number, number] | undefined;

export class Rng {
  static {
    keepClassName(this, 'Rng');
  }

  private readonly handle: OwnedHandle;

  /**
   * A generator seeded with 64 bits from the platform's cryptographic source
   * (crypto.getRandomValues): for noise that must not be predictable from any
   * seed a caller or an observer knows. An InvalidParameterError where there is
   * no such source (then pass a seed explicitly, knowing it must stay secret).
   */
  static unpredictable(): Rng {
    const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint32Array) => Uint32Array } }).crypto;
    if (typeof c?.getRandomValues !== 'function') {
      throw new InvalidParameterError('this platform has no crypto.getRandomValues to seed privacy noise from; pass a noise seed explicitly and keep it secret');
    }
    const [lo, hi] = c.getRandomValues(new Uint32Array(2));
    entropy = [lo!, hi!];
    try {
      return new Rng();
    } finally {
      entropy = undefined;
    }
  }

  /** Without a seed, a fresh one is drawn (results vary from run to run). */
  constructor(seed?: number) {
    const [lo, hi] = entropy ?? seedParts(seed);
    this.handle = new OwnedHandle(wasm().fm_rng_new(lo, hi), (w, p) => w.fm_rng_free(p), RNG_LABEL);
  }

  get disposed(): boolean {
    return this.handle.disposed;
  }

  /** Frees the generator's WASM memory; calling it again is harmless. */
  dispose(): void {
    this.handle.dispose();
  }

  private draw<T>(fn: (s: Scope, h: number) => T): T {
    const h = this.handle.ptr;
    return withScope((s) => fn(s, h));
  }

  /**
   * Where the stream is now, as JSON-safe numbers: a generator given it with
   * setState() draws from here on exactly what this one would (a saved run
   * continues its random choices so).
   */
  getState(): RngState {
    return this.draw((s, h) => {
      const out = s.f64(STATE_LEN);
      s.w.fm_rng_get_state(h, out);
      const v = s.readF64(out, STATE_LEN);
      return { words: Array.from(v.subarray(0, 8)), spare: v[8] === 1 ? v[9]! : null };
    });
  }

  /**
   * Moves the stream to a state getState() gave. A state no generator can be
   * in (words that are not eight 32-bit halves, all zeros, a spare normal that
   * is not finite) is an InvalidParameterError, and the generator is then
   * unchanged.
   */
  setState(state: RngState): void {
    const need = `a generator's state must be { words: eight 32-bit numbers, spare: a number or null }, got ${formatValue(state)}`;
    if (state === null || typeof state !== 'object') throw new InvalidParameterError(need);
    // read once, under guard and strictly (a Proxy or a getter runs here only)
    const o = readOptions(state, ['words', 'spare'], 'state');
    const words = isArray('state.words', o.words) ? readArray('state.words', o.words, 8) : undefined;
    const spare = o.spare;
    if (!words || words.length !== 8 || !(spare === null || typeof spare === 'number')) throw new InvalidParameterError(need);
    const values = [...words.map((w, i) => (typeof w === 'number' ? w : requireInteger(`words[${i}]`, w, 0))), spare === null ? 0 : 1, spare ?? 0];
    this.draw((s, h) => s.check(s.w.fm_rng_set_state(h, s.f64From(values))));
  }

  /** n uniforms in [0, 1) (53 random bits each). */
  uniform(n: number): Float64Array {
    requireInteger('n', n, 0, MAX_DRAWS);
    return this.draw((s, h) => {
      const out = s.f64(n);
      s.w.fm_rng_uniform(h, n, out);
      return s.readF64(out, n);
    });
  }

  /** n standard normals (Marsaglia's polar method). */
  normal(n: number): Float64Array {
    requireInteger('n', n, 0, MAX_DRAWS);
    return this.draw((s, h) => {
      const out = s.f64(n);
      s.w.fm_rng_normal(h, n, out);
      return s.readF64(out, n);
    });
  }

  /**
   * n draws of Gamma(shape, scale) (mean shape * scale; Marsaglia-Tsang). For
   * shape < 1 a draw below the smallest double (about 5e-324) is returned as 0,
   * which at shape 0.001 is about half of them: use dirichlet() for
   * proportions, it works in logs and never loses them.
   */
  gamma(shape: number, n: number, scale = 1): Float64Array {
    requirePositive('shape', shape);
    requirePositive('scale', scale);
    requireInteger('n', n, 0, MAX_DRAWS);
    return this.draw((s, h) => {
      const out = s.f64(n);
      s.check(s.w.fm_rng_gamma(h, shape, scale, n, out));
      return s.readF64(out, n);
    });
  }

  /**
   * n draws of Dirichlet(alpha), one per row of an n x k matrix whose rows sum
   * to 1. Tiny concentrations (0.05, 0.001) are fine: components far below the
   * largest come out as exact zeros, never NaN.
   */
  dirichlet(alpha: ArrayLike<number>, n: number): Matrix {
    return this.dirichletDraws('fm_rng_dirichlet', alpha, n);
  }

  /**
   * n draws of Dirichlet(alpha) as the natural logs of their components (the
   * same stream as dirichlet()): finite even for the components that
   * dirichlet() returns as exact zeros, for when their relative sizes matter.
   */
  logDirichlet(alpha: ArrayLike<number>, n: number): Matrix {
    return this.dirichletDraws('fm_rng_log_dirichlet', alpha, n);
  }

  private dirichletDraws(fn: 'fm_rng_dirichlet' | 'fm_rng_log_dirichlet', alpha: ArrayLike<number>, n: number): Matrix {
    const a = requireVector('alpha', alpha);
    const k = a.length;
    requireDraws(n, k);
    return this.draw((s, h) => {
      const out = s.f64(n * k);
      s.check(s.w[fn](h, s.f64From(a), k, n, out));
      return new Matrix(s.readF64(out, n * k), n, k);
    });
  }

  /**
   * n histograms of Multinomial(trials, probs), one per row of an n x k matrix
   * of counts (each row sums to trials). probs must be >= 0 and sum to 1 within
   * 1e-8. Exact for any trials up to 2^53 - 1, in time independent of trials.
   */
  multinomial(trials: number, probs: ArrayLike<number>, n = 1): Matrix {
    requireInteger('trials', trials, 0);
    const p = requireVector('probs', probs);
    const k = p.length;
    requireDraws(n, k);
    return this.draw((s, h) => {
      const out = s.f64(n * k);
      s.check(s.w.fm_rng_multinomial(h, trials, s.f64From(p), k, n, out));
      return new Matrix(s.readF64(out, n * k), n, k);
    });
  }

  /** n category indices drawn with probabilities probs (>= 0, summing to 1 within 1e-8). */
  categorical(probs: ArrayLike<number>, n: number): Int32Array {
    const p = requireVector('probs', probs);
    requireInteger('n', n, 0, MAX_DRAWS);
    return this.draw((s, h) => {
      const out = s.u32(n);
      s.check(s.w.fm_rng_categorical(h, s.f64From(p), p.length, n, out));
      return new Int32Array(s.readU32(out, n));
    });
  }

  /** k distinct indices of 0..n-1 (without replacement), in random order; n at most LIMITS.population (2^31 - 1). */
  choice(n: number, k: number): Int32Array {
    requireInteger('n', n, 0, LIMITS.population);
    requireInteger('k', k, 0, Math.min(n, MAX_DRAWS));
    return this.draw((s, h) => {
      const out = s.u32(k);
      s.check(s.w.fm_rng_choice(h, n, k, out));
      return new Int32Array(s.readU32(out, k));
    });
  }

  /** A uniformly random permutation of 0..n-1. */
  permutation(n: number): Int32Array {
    requireInteger('n', n, 0, MAX_DRAWS);
    return this.draw((s, h) => {
      const out = s.u32(n);
      s.w.fm_rng_permutation(h, n, out);
      return new Int32Array(s.readU32(out, n));
    });
  }
}

/** A uniformly random permutation of 0..n-1: `new Rng(seed).permutation(n)`. */
export function permutation(n: number, seed?: number): Uint32Array {
  requireInteger('n', n, 0, MAX_DRAWS);
  const rng = new Rng(seed);
  try {
    return new Uint32Array(rng.permutation(n).buffer);
  } finally {
    rng.dispose();
  }
}

/** A 32-bit avalanche (murmur3's finalizer): every input bit moves about half the output bits. */
export function mixBits(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** FNV-1a over a string's UTF-16 code units: a client id as a 32-bit number. */
export function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * A client's own seed from a run's seed and the client's id (32 bits): the
 * run's seed reproduces every client wherever it runs, and clients of one run
 * never share a stream (one seed for all would have them draw alike, e.g.
 * every MDM client the same Algorithm 1 component).
 */
export function clientSeed(seed: number, id: string): number {
  const s = requireInteger('seed', seed, 0);
  if (typeof id !== 'string') throw new InvalidParameterError(`a client id must be a string, got ${formatValue(id)}`);
  const h = mixBits(s >>> 0) ^ mixBits(Math.floor(s / 2 ** 32) + 0x9e3779b9);
  return mixBits(h ^ idHash(id));
}

/**
 * The i-th of consecutive seeds from a seed (seed + i, a one-call function's
 * client i), within every seed's bound [0, 2^53 - 1]: past the top it wraps
 * to 0, so every seed a caller may give gives each client one.
 */
export function seedPlus(seed: number, i: number): number {
  return seed <= Number.MAX_SAFE_INTEGER - i ? seed + i : seed - 2 ** 53 + i;
}
