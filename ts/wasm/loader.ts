/**
 * Loads the WebAssembly core once: the relaxed-SIMD build where the engine
 * validates relaxed SIMD, the SIMD128 build where it supports that (tiny probe
 * modules say so before anything is downloaded), the scalar build otherwise, as the core module and the feature modules init() is asked
 * for (./modules.ts), all in one memory. Only the chosen build's modules are
 * fetched and compiled: by default the .wasm files next to this module (see
 * ./source.ts), or what init() is given.
 */
import { formatThrown, formatValue, InvalidParameterError, WasmError } from '../errors.js';
import { guardRead, isArray, readOptions } from '../validate.js';
import { ABI_VERSION, type WasmExports } from './abi.generated.js';
import { FEATURE_USES, FEATURES, featureOf, HEAP_IMPORTS, INITIAL_PAGES, type Feature } from './modules.js';
import {
  checkBuildSource,
  compileSource,
  defaultSource,
  registeredFeatures,
  engineHasRelaxedSimd,
  engineHasSimd,
  fileBuild,
  moduleFile,
  type Backend,
  type BuildSource,
  type CheckedSource,
  type ModuleName,
  type WasmSource,
  type WasmSources,
} from './source.js';

export type { Backend, BuildSource, Feature, ModuleName, WasmSource, WasmSources };

/** The C ABI, generated from its declaration in crates/fedmix-wasm/src/exports.rs (scripts/gen-wasm-abi.mjs). */
export type { WasmExports };

export interface InitOptions {
  /**
   * 'auto' (default) takes the relaxed-SIMD build where the engine validates
   * relaxed SIMD (current Chromium, Node 22 and later, Node 20 with
   * --experimental-wasm-relaxed-simd), SIMD128 where it supports that, scalar
   * otherwise. 'relaxed' runs the networks' GEMM with fused multiply-adds: results
   * differ from the SIMD build's by rounding (docs/wasm.md).
   */
  backend?: 'auto' | Backend;
  /**
   * The feature modules to load beside the core module (GaussianMixture,
   * KMeans, the scalers, random numbers, FedGenGMM's sampled server
   * step): 'all' or a list of 'dem' (distributed EM, FedGenGMM's hierarchical
   * step), 'svm' (OneClassSVM), 'nn' (networks, FedAvg), 'dirichlet' (special
   * functions, MDM, Rng's gamma, Dirichlet and categorical draws), 'fedgem', 'assignment' (linearSumAssignment, FedDistr,
   * PCA, the symmetric eigendecomposition), 'float32' (GaussianMixture's
   * precision: 'float32').
   * Not given: when init() starts fedmix, every module the package entries
   * the program imports can use (all of them with `fedmix`; 'dem', 'dirichlet'
   * and 'float32' with `fedmix/core`; docs/browsers-and-workers.md), none added when it runs.
   * A page that names only what it uses downloads less; a later init()
   * with more features loads them into the running instance. Using a feature
   * not loaded throws a WasmError naming it.
   */
  features?: 'all' | readonly Feature[];
  /**
   * Replace the running instance with a new one, whose memory is empty: the
   * way to give WASM memory back (it never shrinks). Every model, client and
   * generator made before must be made again (using one throws a WasmError).
   */
  fresh?: boolean;
  /**
   * Where the builds come from, instead of the files next to the module
   * (fedmix-simd.wasm, fedmix-simd-nn.wasm, ..., fedmix-scalar.wasm, ...):
   * `{ relaxed, simd, scalar }`, each the core module's source (bytes, a URL or
   * string, a Response or a promise of one, or a compiled WebAssembly.Module)
   * or a record of sources by module (`{ core, nn, ... }`; a module not in it
   * comes from beside the module). Only the builds given are candidates (give
   * both to keep the choice by engine); only the chosen one is fetched. Used
   * when a module is loaded: ignored while an instance runs, unless `fresh`;
   * a module once loaded is kept compiled, so a later `fresh` needs no source again.
   */
  wasm?: WasmSources;
}

export interface InitInfo {
  /** true when a SIMD128 build runs ('relaxed' or 'simd') */
  simd: boolean;
  /** the build that runs: 'relaxed' (SIMD128 with fused multiply-adds in its relaxed modules), 'simd' or 'scalar' */
  backend: Backend;
  /** the feature modules loaded beside the core */
  features: readonly Feature[];
}

interface Instance {
  /** every loaded module's exports in one object (a feature's are added when it loads) */
  exports: WasmExports;
  backend: Backend;
  /** The core's constants by name (`group.member`; see ./constants.ts). */
  constants: ReadonlyMap<string, number>;
  /** Increases with every instantiation; handles from older ones are dead. */
  generation: number;
  /** Memory size before any allocation: every module's static data and stack. */
  baseBytes: number;
  /** The compiled modules it runs: what workers are sent, and what `fresh` instantiates again. */
  modules: Map<ModuleName, WebAssembly.Module>;
  /** the core's exports unwrapped: the heap the feature modules import */
  core: WebAssembly.Exports;
  /** what init() reports: the same object until a feature module is added */
  info: InitInfo;
}

/**
 * Where a module of a build comes from when init() is given none; fedmix/inline passes the embedded bytes.
 * `has` says whether a build is there at all (every build when absent); `features`, the feature modules
 * an init() without features loads when it starts fedmix (every one when absent).
 */
export type DefaultSources = ((backend: Backend, module: ModuleName) => CheckedSource) & { has?: (backend: Backend) => boolean; features?: () => readonly Feature[] };

/** The files beside the library that the imported entries registered (./source.ts): `fedmix` registers every module's, `fedmix/core` the core's. */
const assetSources: DefaultSources = Object.assign((backend: Backend, module: ModuleName): CheckedSource => ({ kind: 'url', url: defaultSource(backend, module) }), {
  features: registeredFeatures,
});

let current: Instance | undefined;
let pending: Promise<Instance> | undefined;
/** the build `pending` is loading, so that a concurrent init() asking for the other one fails instead of getting it */
let pendingBackend: Backend | undefined;
/** feature modules being added to the running instance, one init() after another */
let adding: Promise<unknown> = Promise.resolve();
let generation = 0;
let poisoned: string | undefined;
/**
 * The modules loaded so far, compiled, by build: `fresh` and a reload after a
 * trap instantiate them again instead of fetching (or asking for the bytes) again.
 */
const built = new Map<Backend, Map<ModuleName, WebAssembly.Module>>();

/**
 * Wraps every exported function so that a trap (a bug in the core: it never
 * panics on bad input, it returns an error status) poisons the instance instead
 * of leaving callers on a memory of unknown state.
 */
function guard(raw: WebAssembly.Exports, into: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'function' || HEAP_IMPORTS.includes(name as never)) continue;
    const f = value as (...a: number[]) => number;
    into[name] = (...args: number[]) => {
      try {
        return f(...args);
      } catch (e) {
        if (e instanceof WebAssembly.RuntimeError) {
          poisoned = `${name} trapped (${e.message})`;
          current = undefined;
          throw new WasmError(
            `the WASM core trapped in ${name}: ${e.message}. This is a fedmix bug; models created before it are invalid. Call await init() to start a fresh instance.`,
          );
        }
        throw e;
      }
    };
  }
}

/** What the exports object answers for a function of a module not loaded: the error that says which to load. */
const notLoaded: object = new Proxy(
  {},
  {
    get(_target, name) {
      const feature = typeof name === 'string' ? featureOf(name) : undefined;
      if (feature === undefined) return undefined;
      throw new WasmError(
        `${FEATURE_USES[feature]} needs fedmix's '${feature}' module, which was not loaded: call await init({ features: [..., '${feature}'] }) ` +
          "(an init() without features that starts fedmix loads every module the entries imported use: all of them with 'fedmix')",
      );
    },
  },
);

const BUILD_NAMES: Record<Backend, string> = { relaxed: 'the relaxed-SIMD build', simd: 'the SIMD build', scalar: 'the scalar build' };
/** What fm_simd returns for a module of each build's files. */
const SIMD_CODES: Record<Backend, number> = { scalar: 0, simd: 1, relaxed: 2 };

function moduleName(backend: Backend, module: ModuleName): string {
  return module === 'core' ? BUILD_NAMES[backend] : `${BUILD_NAMES[backend]}'s ${module} module`;
}

/** Instantiates one module into `memory` (a feature module with the core's heap) and checks it is this fedmix's. */
async function instantiateModule(backend: Backend, module: ModuleName, mod: WebAssembly.Module, what: string, memory: WebAssembly.Memory, core?: WebAssembly.Exports): Promise<WebAssembly.Exports> {
  const imports: WebAssembly.Imports = { env: { memory } };
  if (core) imports.core = Object.fromEntries(HEAP_IMPORTS.map((n) => [n, core[n]!]));
  let raw: WebAssembly.Instance;
  try {
    raw = await WebAssembly.instantiate(mod, imports);
  } catch (e) {
    // a module of another program (other imports) or one too large for this engine's memory
    throw new WasmError(`${what} could not be instantiated (${formatThrown(e)}); is it ${moduleFile(backend, module)} of this fedmix version?`);
  }
  const { fm_abi_version: abiOf, fm_simd: simdOf } = raw.exports as { fm_abi_version?: unknown; fm_simd?: unknown };
  if (typeof abiOf !== 'function' || typeof simdOf !== 'function') throw new WasmError(`${what} is not a fedmix ${module === 'core' ? 'core' : 'module'} (it has no fm_abi_version export)`);
  const abi = (abiOf as () => number)();
  if (abi !== ABI_VERSION) {
    throw new WasmError(`${what} has core ABI ${abi}, which does not match this fedmix's TypeScript (${ABI_VERSION}); use the .wasm files of the same version (or rebuild with scripts/build-wasm.sh)`);
  }
  // the relaxed build takes the SIMD build's modules where it has no relaxed one of its own
  const code = (simdOf as () => number)();
  const expected = fileBuild(backend, module);
  if (code !== SIMD_CODES[expected]) {
    const is = code === 2 ? 'relaxed-SIMD' : code === 1 ? 'SIMD' : code === 0 ? 'scalar' : `unknown (${code})`;
    throw new WasmError(`${what} is the ${is} build, given as the ${expected} one`);
  }
  const own = featureOf(Object.keys(raw.exports).find((n) => featureOf(n) !== undefined) ?? '') ?? 'core';
  if (own !== module) throw new WasmError(`${what} is fedmix's ${own === 'core' ? 'core' : `'${own}'`} module, given as the ${module === 'core' ? 'core' : `'${module}'`} one`);
  return raw.exports;
}

/** Where each module comes from: given, already compiled, or the default. */
interface Sources {
  given: ReadonlyMap<Backend, ReadonlyMap<ModuleName, CheckedSource>> | undefined;
  defaults: DefaultSources;
}

/** How errors name a module: "the SIMD build's nn module (options.wasm.simd)". */
function describeModule(backend: Backend, module: ModuleName, sources: Sources): string {
  return `${moduleName(backend, module)}${sources.given?.get(backend)?.has(module) ? ` (options.wasm.${backend})` : ''}`;
}

function compileModule(backend: Backend, module: ModuleName, sources: Sources): Promise<WebAssembly.Module> {
  // a module the relaxed build shares with the SIMD build may be given as the SIMD build's
  const build = fileBuild(backend, module);
  const source = sources.given?.get(backend)?.get(module) ?? (build !== backend ? sources.given?.get(build)?.get(module) : undefined);
  const what = describeModule(backend, module, sources);
  const ready = source ? undefined : built.get(build)?.get(module);
  return ready ? Promise.resolve(ready) : compileSource(what, source ?? sources.defaults(backend, module));
}

/** Adds feature modules to `inst` (compiled in parallel, instantiated in order). */
async function addFeatures(inst: Instance, features: readonly Feature[], sources: Sources): Promise<void> {
  const todo = features.filter((f) => !inst.modules.has(f));
  const compiled = await Promise.all(todo.map((f) => compileModule(inst.backend, f, sources)));
  if (current !== inst) throw new WasmError('the WASM instance was replaced (init({ fresh: true }) or a trap) while its feature modules loaded; call await init() again');
  const memory = inst.exports.memory;
  for (let i = 0; i < todo.length; i++) {
    const feature = todo[i]!;
    const raw = await instantiateModule(inst.backend, feature, compiled[i]!, describeModule(inst.backend, feature, sources), memory, inst.core);
    guard(raw, inst.exports as unknown as Record<string, unknown>);
    inst.modules.set(feature, compiled[i]!);
    rememberBuilt(inst.backend, feature, compiled[i]!);
  }
  inst.info = infoOf(inst);
}

function rememberBuilt(backend: Backend, module: ModuleName, mod: WebAssembly.Module): void {
  const build = fileBuild(backend, module);
  let m = built.get(build);
  if (!m) built.set(build, (m = new Map()));
  m.set(module, mod);
}

/** A new instance: a fresh memory, the core module in it, then `features`. */
async function instantiate(backend: Backend, features: readonly Feature[], sources: Sources): Promise<Instance> {
  // every module is fetched and compiled at once; the core is instantiated first, since the others use its heap
  const core = compileModule(backend, 'core', sources);
  const rest = Promise.all(features.map((f) => compileModule(backend, f, sources)));
  // handled now: it may fail while the core is still loading (Node ends the process on an unhandled rejection),
  // and is awaited, its error thrown, below; if the core fails first, the core's error is the one reported
  rest.catch(() => undefined);
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES });
  const coreMod = await core;
  const raw = await instantiateModule(backend, 'core', coreMod, describeModule(backend, 'core', sources), memory);
  const exports = Object.create(notLoaded) as Record<string, unknown>;
  guard(raw, exports);
  exports.memory = memory;
  const w = exports as unknown as WasmExports;
  generation += 1;
  const inst: Instance = {
    exports: w,
    backend,
    constants: readConstants(w),
    generation,
    baseBytes: memory.buffer.byteLength,
    modules: new Map([['core', coreMod]]),
    core: raw,
    info: { simd: backend !== 'scalar', backend, features: [] },
  };
  rememberBuilt(backend, 'core', coreMod);
  const mods = await rest;
  for (let i = 0; i < features.length; i++) {
    const f = features[i]!;
    const fr = await instantiateModule(backend, f, mods[i]!, describeModule(backend, f, sources), memory, raw);
    guard(fr, exports);
    inst.modules.set(f, mods[i]!);
    rememberBuilt(backend, f, mods[i]!);
  }
  inst.info = infoOf(inst);
  return inst;
}

function infoOf(inst: Instance): InitInfo {
  return { simd: inst.backend !== 'scalar', backend: inst.backend, features: FEATURES.filter((f) => inst.modules.has(f)) };
}

/** The core's table of constants (names static in its memory, values plain numbers). */
function readConstants(w: WasmExports): ReadonlyMap<string, number> {
  const decoder = new TextDecoder();
  const table = new Map<string, number>();
  for (let i = 0; i < w.fm_constant_count(); i++) {
    const name = decoder.decode(new Uint8Array(w.memory.buffer, w.fm_constant_name_ptr(i) >>> 0, w.fm_constant_name_len(i)).slice());
    table.set(name, w.fm_constant_value(i));
  }
  return table;
}

/** The build to load: the requested one, or by engine among those available (all, unless init() was given some). */
function chooseBackend(requested: 'auto' | Backend, given: ReadonlyMap<Backend, unknown> | undefined, defaults: DefaultSources): Backend {
  const simdOk = engineHasSimd();
  // the relaxed build is probed only where it could be loaded (a host's defaults may have none: canLoad)
  const relaxedOk = () => simdOk && engineHasRelaxedSimd();
  const available = (b: Backend) => (given === undefined ? defaults.has?.(b) ?? true : given.has(b));
  if (requested === 'simd' && !simdOk) throw new WasmError('this engine does not support WebAssembly SIMD128; use backend "scalar" or "auto"');
  if (requested === 'relaxed' && !relaxedOk()) {
    throw new WasmError(
      "this engine does not validate WebAssembly relaxed SIMD (Node 20 needs --experimental-wasm-relaxed-simd; Node 22 and current Chromium have it); use backend 'simd', 'scalar' or 'auto'",
    );
  }
  if (requested !== 'auto') {
    if (!available(requested)) {
      throw new InvalidParameterError(
        given ? `backend '${requested}' was asked for, but options.wasm gives no ${requested} build` : `backend '${requested}' was asked for, but this entry embeds no ${requested} build; pass it in options.wasm`,
      );
    }
    return requested;
  }
  if (available('relaxed') && relaxedOk()) return 'relaxed';
  if (simdOk && available('simd')) return 'simd';
  if (available('scalar')) return 'scalar';
  throw new WasmError('this engine does not support WebAssembly SIMD128 and options.wasm gives only the SIMD build; give wasm.scalar too');
}

/** options.wasm, checked: the sources given, by backend and module (undefined when none was given). */
function readSources(value: unknown): Map<Backend, Map<ModuleName, CheckedSource>> | undefined {
  if (value === undefined) return undefined;
  // strict: another key (a misspelt 'simd') is an InvalidParameterError naming it
  const sources = readOptions(value as WasmSources, ['simd', 'scalar', 'relaxed'], 'options.wasm') as WasmSources;
  const out = new Map<Backend, Map<ModuleName, CheckedSource>>();
  for (const b of ['simd', 'scalar', 'relaxed'] as const) if (sources[b] !== undefined) out.set(b, checkBuildSource(`options.wasm.${b}`, sources[b]));
  if (out.size === 0) throw new InvalidParameterError('options.wasm gives no build: pass { relaxed }, { simd } and/or { scalar }');
  return out;
}

/** options.features, checked: the feature modules asked for (undefined when not given). */
function readFeatures(value: unknown): Feature[] | undefined {
  if (value === undefined) return undefined;
  if (value === 'all') return [...FEATURES];
  const list = isArray('features', value) ? (value as unknown[]) : undefined;
  if (!list || list.length > FEATURES.length * 4) throw new InvalidParameterError(`features must be 'all' or a list of ${FEATURES.map((f) => `'${f}'`).join(', ')}, got ${formatValue(value)}`);
  const out: Feature[] = [];
  for (let i = 0; i < list.length; i++) {
    const f = guardRead(`features[${i}]`, () => list[i]);
    if (typeof f !== 'string' || !FEATURES.includes(f as Feature)) {
      throw new InvalidParameterError(`features[${i}] must be one of ${FEATURES.map((x) => `'${x}'`).join(', ')} (the core needs no name), got ${formatValue(f)}`);
    }
    if (!out.includes(f as Feature)) out.push(f as Feature);
  }
  return out;
}

/**
 * Loads the WASM core. Idempotent and safe to call concurrently: every caller
 * awaits the same instantiation. Reports which build runs. After a trap, or
 * with `fresh`, it starts a fresh instance.
 */
export function init(options: InitOptions = {}): Promise<InitInfo> {
  return initWith(assetSources, options);
}

/** init() with `defaults` for the modules it is not given (the files next to the module, or the embedded bytes of fedmix/inline). */
export async function initWith(defaults: DefaultSources, options: InitOptions = {}): Promise<InitInfo> {
  if (options === null || typeof options !== 'object') throw new InvalidParameterError(`init() takes { backend: 'auto' | 'relaxed' | 'simd' | 'scalar', features, fresh, wasm }, got ${formatValue(options)}`);
  const read = readOptions(options, ['backend', 'features', 'fresh', 'wasm'], "init()'s options");
  const requested = read.backend ?? 'auto';
  if (requested !== 'auto' && requested !== 'relaxed' && requested !== 'simd' && requested !== 'scalar') {
    throw new InvalidParameterError(`backend must be 'auto', 'relaxed', 'simd' or 'scalar', got ${formatValue(requested)}`);
  }
  const fresh: unknown = read.fresh;
  if (fresh !== undefined && typeof fresh !== 'boolean') throw new InvalidParameterError(`fresh must be true or false, got ${formatValue(fresh)}`);
  // not given: every module for a new instance, nothing more for a running one (init() stays idempotent)
  const asked = readFeatures(read.features);
  const sources: Sources = { given: readSources(read.wasm), defaults };
  if (fresh && current) {
    // dropped, not freed: its memory goes with it once nothing refers to it
    current = undefined;
  }
  // one rule whether the build is running or still loading: an explicit request for the other one fails
  const loaded = current?.backend ?? (pending ? pendingBackend : undefined);
  if (loaded !== undefined && requested !== 'auto' && requested !== loaded) {
    throw new WasmError(
      `fedmix is already ${current ? 'running' : 'loading'} the ${loaded} build; init({ backend: '${requested}' }) must come first, before any other init()`,
    );
  }
  if (!current && !pending) {
    const backend = chooseBackend(requested, sources.given, defaults);
    pendingBackend = backend;
    pending = instantiate(backend, asked ?? defaults.features?.() ?? FEATURES, sources).then(
      (inst) => {
        current = inst;
        poisoned = undefined;
        pending = undefined;
        pendingBackend = undefined;
        return inst;
      },
      (err) => {
        pending = undefined;
        pendingBackend = undefined;
        throw err instanceof WasmError || err instanceof InvalidParameterError ? err : new WasmError(`could not load the WASM core: ${formatThrown(err)}`);
      },
    );
  }
  const inst = current ?? (await pending!);
  if (asked?.some((f) => !inst.modules.has(f))) {
    // one addition at a time, so that two init()s never instantiate the same module twice
    const next = adding.then(() => addFeatures(inst, asked, sources));
    adding = next.catch(() => undefined);
    try {
      await next;
    } catch (err) {
      throw err instanceof WasmError || err instanceof InvalidParameterError ? err : new WasmError(`could not load fedmix's feature modules: ${formatThrown(err)}`);
    }
  }
  return inst.info;
}

/**
 * The running build's modules, compiled: what a worker transport sends its
 * workers so that they run the same build from the same bytes, however the
 * page got it.
 */
export function runningBuild(): { backend: Backend; modules: { [M in ModuleName]?: WebAssembly.Module } } | undefined {
  return current ? { backend: current.backend, modules: Object.fromEntries(current.modules) } : undefined;
}

/** The running instance; throws a WasmError naming the fix when there is none. */
export function instance(): Instance {
  if (!current) {
    throw new WasmError(
      poisoned
        ? `the WASM core is unusable after a trap (${poisoned}); call await init() to start a fresh instance`
        : 'fedmix is not initialized: call `await init()` once before using it',
    );
  }
  return current;
}

export function wasm(): WasmExports {
  return instance().exports;
}

/** Which build runs, or undefined before init(). */
export function backendInfo(): InitInfo | undefined {
  return current?.info;
}

/** Drops the instance so a test can load the other build. Not part of the public API. */
export function resetForTests(): void {
  current = undefined;
  built.clear();
  pending = undefined;
  pendingBackend = undefined;
  adding = Promise.resolve();
  poisoned = undefined;
}
