/**
 * Where a build of the WebAssembly core comes from, and how it is compiled:
 * streaming from a URL in browsers (the default: the .wasm file next to the
 * module, as `new URL('./fedmix-simd.wasm', import.meta.url)`, which bundlers
 * turn into an emitted asset), read from the package folder in Node, or from
 * bytes, a URL, a Response or a compiled Module given to init().
 *
 * The default URLs are not here: each module's are in ./files-MODULE.generated.ts,
 * which registers them (registerModuleFiles) when a package entry that can use
 * that module imports it. A bundler emits an asset for every such URL in the
 * program's module graph, used or not, so a program that imports `fedmix/core`
 * carries only the core's files, and `fedmix` (every entry) all of them.
 */
import { formatThrown, formatValue, InvalidParameterError, WasmError } from '../errors.js';
import { guardRead, readOptions } from '../validate.js';
import { RELAXED_MODULES } from './abi.generated.js';
import { FEATURES, type Feature } from './modules.js';

/**
 * A build of the core: 'relaxed' (SIMD128 with relaxed SIMD's fused
 * multiply-adds in the modules where they pay, RELAXED_MODULES, and the SIMD
 * build's other modules), 'simd' (SIMD128) or 'scalar'.
 */
export type Backend = 'relaxed' | 'simd' | 'scalar';

/**
 * One build of the core, as init() accepts it: its bytes, a URL (a string is
 * resolved against the page; in Node a string without a scheme is a file
 * path), a fetch() Response (or a promise of one), or a compiled
 * WebAssembly.Module.
 */
export type WasmSource = string | URL | ArrayBuffer | ArrayBufferView | Response | PromiseLike<Response> | WebAssembly.Module;

/** The core module and the feature modules (see ./modules.ts). */
export type ModuleName = 'core' | Feature;

/**
 * One build's modules: the core module's source, or a record of sources by
 * module (`{ core, dem, nn, ... }`); a module not given comes from where
 * init() finds it by default.
 */
export type BuildSource = WasmSource | { readonly [M in ModuleName]?: WasmSource };

/** The builds init() may choose from, by backend. */
export type WasmSources = { readonly [B in Backend]?: BuildSource };

/**
 * The smallest module that uses a SIMD128 instruction (i8x16.splat, i8x16.popcnt
 * of a constant: what wasm-feature-detect probes), so that choosing a build
 * costs no download: an engine that validates it runs the SIMD build.
 */
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

export function engineHasSimd(): boolean {
  return WebAssembly.validate(SIMD_PROBE);
}

/**
 * A function of the two instructions the relaxed build uses: f32x4.relaxed_madd
 * and f64x2.relaxed_madd on splats of 0, in their final encoding (0xfd 0x85 0x02,
 * 0xfd 0x87 0x02). Engines with relaxed SIMD on validate it: current Chromium,
 * Node 22 and later, Node 20 with --experimental-wasm-relaxed-simd.
 */
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 30, 1, 28, 0,
  65, 0, 253, 15, 65, 0, 253, 15, 65, 0, 253, 15, 253, 133, 2, 65, 0, 253, 15, 65, 0, 253, 15, 253, 135, 2, 11,
]);

export function engineHasRelaxedSimd(): boolean {
  return WebAssembly.validate(RELAXED_PROBE);
}

/** The build whose file a module of `backend` is: the relaxed build's modules other than RELAXED_MODULES are the SIMD build's. */
export function fileBuild(backend: Backend, module: ModuleName): Backend {
  return backend === 'relaxed' && !(RELAXED_MODULES as readonly ModuleName[]).includes(module) ? 'simd' : backend;
}

/** A module's files by build (the relaxed build's own only for RELAXED_MODULES), as URLs made when first needed. */
export type ModuleFiles = { readonly [B in Backend]?: () => URL };

/** The modules whose files the imported entries registered (./files-*.generated.ts), in registration order. */
const registered = new Map<ModuleName, ModuleFiles>();

/** Called by ./files-MODULE.generated.ts when an entry that can use MODULE imports it. */
export function registerModuleFiles(module: ModuleName, files: ModuleFiles): void {
  registered.set(module, files);
}

/** The feature modules whose files are registered: what init() without features loads when it starts fedmix. */
export function registeredFeatures(): Feature[] {
  return FEATURES.filter((f) => registered.has(f));
}

/**
 * A module's file shipped next to the library's modules (dist/ in the package,
 * ts/wasm/ in the sources, where scripts/build-wasm.sh puts them), as registered
 * by the entries imported; only the modules init() loads are fetched.
 */
export function defaultSource(backend: Backend, module: ModuleName): URL {
  const build = fileBuild(backend, module);
  const files = registered.get(module)?.[build];
  if (!files) {
    throw new WasmError(
      `the ${backend} build's ${module} module has no file here: no entry this program imports uses it. Import an entry that does (fedmix, or the feature's: docs/browsers-and-workers.md), ` +
        `pass it in init({ wasm: { ${backend}: { ${module}: ... } } }), or leave '${module}' out of init({ features })`,
    );
  }
  try {
    return files();
  } catch (e) {
    // a Cloudflare Worker's bundle: its modules have no URL to find a file beside (docs/runtimes.md)
    throw new WasmError(
      `the ${backend} build's ${module} module has no URL to load it from here (${formatThrown(e)}): this runtime gives fedmix's code no file URL (import.meta.url). ` +
        `Pass the compiled module in init({ wasm: { ${backend}: { ${module}: ... } } }), or leave '${module}' out of init({ features })`,
    );
  }
}

/** The file name of a module of a build: fedmix-simd.wasm, fedmix-simd-nn.wasm, fedmix-relaxed-nn.wasm, ... */
export function moduleFile(backend: Backend, module: ModuleName): string {
  const build = fileBuild(backend, module);
  return module === 'core' ? `fedmix-${build}.wasm` : `fedmix-${build}-${module}.wasm`;
}

/** A source as init() received it, checked and read once (getters and Proxies run here, not later). */
export type CheckedSource =
  | { kind: 'module'; module: WebAssembly.Module }
  | { kind: 'bytes'; bytes: Uint8Array<ArrayBuffer> }
  | { kind: 'response'; response: Response | PromiseLike<Response> }
  | { kind: 'url'; url: URL }
  | { kind: 'path'; path: string };

const FORMS = 'bytes (ArrayBuffer or a typed array), a URL or string, a Response (or a promise of one) or a WebAssembly.Module';

/**
 * Checks a build's sources as init() received them (`name`: "options.wasm.simd"):
 * one source, the core module's, or a record of sources by module.
 */
export function checkBuildSource(name: string, value: unknown): Map<ModuleName, CheckedSource> {
  const proto = value !== null && typeof value === 'object' ? guardRead(name, () => Object.getPrototypeOf(value) as unknown) : undefined;
  const plain = (proto === Object.prototype || proto === null) && typeof guardRead(name, () => (value as { then?: unknown }).then) !== 'function';
  if (!plain) return new Map([['core', checkSource(name, value)]]);
  const names: readonly ModuleName[] = ['core', ...FEATURES];
  const record = readOptions(value as Record<string, unknown>, names, name);
  const out = new Map<ModuleName, CheckedSource>();
  for (const m of names) if (record[m] !== undefined) out.set(m, checkSource(`${name}.${m}`, record[m]));
  if (out.size === 0) throw new InvalidParameterError(`${name} must be ${FORMS}, or a record of them by module ({ core, ${FEATURES.join(', ')} }); got an object with none of them`);
  return out;
}

/** Checks one user-given source; `name` is how the message names it (e.g. "wasm.simd"). */
export function checkSource(name: string, value: unknown): CheckedSource {
  if (typeof value === 'string') {
    if (value.length === 0) throw new InvalidParameterError(`${name} must be ${FORMS}, got an empty string`);
    return resolveString(name, value);
  }
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    throw new InvalidParameterError(`${name} must be ${FORMS}, got ${formatValue(value)}`);
  }
  const is = (C: unknown) => typeof C === 'function' && guardRead(name, () => value instanceof (C as new () => unknown));
  if (is(WebAssembly.Module)) return { kind: 'module', module: value as WebAssembly.Module };
  if (is(URL)) return { kind: 'url', url: new URL((value as URL).href) };
  if (is(ArrayBuffer) || (typeof SharedArrayBuffer === 'function' && is(SharedArrayBuffer))) {
    return { kind: 'bytes', bytes: copyBytes(name, () => new Uint8Array(value as ArrayBuffer)) };
  }
  if (guardRead(name, () => ArrayBuffer.isView(value))) {
    const v = value as ArrayBufferView;
    return { kind: 'bytes', bytes: copyBytes(name, () => new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) };
  }
  if (is((globalThis as { Response?: unknown }).Response)) return { kind: 'response', response: value as Response };
  if (typeof guardRead(name, () => (value as { then?: unknown }).then) === 'function') return { kind: 'response', response: value as PromiseLike<Response> };
  throw new InvalidParameterError(`${name} must be ${FORMS}, got ${formatValue(value)}`);
}

/** A private copy: the caller's buffer may change or be transferred while the build compiles. */
function copyBytes(name: string, view: () => Uint8Array): Uint8Array<ArrayBuffer> {
  const bytes = guardRead(name, () => view().slice());
  if (bytes.length === 0) throw new InvalidParameterError(`${name} is empty (0 bytes); pass the contents of fedmix-simd.wasm or fedmix-scalar.wasm`);
  return bytes;
}

function isNode(): boolean {
  return typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node === 'string';
}

function resolveString(name: string, s: string): CheckedSource {
  let absolute: URL | undefined;
  try {
    absolute = new URL(s);
  } catch {
    absolute = undefined;
  }
  // "C:\dir\fedmix-simd.wasm" parses as a URL of scheme "c:"; in Node it is a path
  if (absolute && !(isNode() && /^[a-z]:$/i.test(absolute.protocol))) return { kind: 'url', url: absolute };
  const base = (globalThis as { location?: { href?: unknown } }).location?.href;
  if (typeof base === 'string') return { kind: 'url', url: new URL(s, base) };
  if (isNode()) return { kind: 'path', path: s };
  throw new InvalidParameterError(`${name} is the relative URL ${formatValue(s)}, but there is no page to resolve it against; pass an absolute URL`);
}

/** Defined (true) only in fedmix/browser's build (tsup.config.ts), which must name no Node built-in. */
declare const __FEDMIX_BROWSER__: boolean | undefined;

/** The Node file system module, without naming it where a browser bundler would try to resolve it. */
async function nodeFs(): Promise<{ readFile(path: string | URL): Promise<Uint8Array<ArrayBuffer>> }> {
  // constant-folded in the browser build, so the import below is left out of it
  if (typeof __FEDMIX_BROWSER__ !== 'undefined') throw new WasmError('fedmix/browser reads no files; pass a URL, bytes or a Response to init({ wasm })');
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof proc?.getBuiltinModule === 'function') return proc.getBuiltinModule('node:fs/promises') as never;
  const id = 'node:fs/promises';
  return (await import(/* webpackIgnore: true */ /* @vite-ignore */ id)) as never;
}

async function compileBytes(what: string, bytes: BufferSource): Promise<WebAssembly.Module> {
  try {
    return await WebAssembly.compile(bytes);
  } catch (e) {
    throw new WasmError(`${what} is not a WebAssembly build this engine can compile (${formatThrown(e)})`);
  }
}

async function compileResponse(what: string, given: Response | PromiseLike<Response>): Promise<WebAssembly.Module> {
  let response: Response;
  try {
    response = await given;
  } catch (e) {
    throw new WasmError(`${what} could not be fetched (${formatThrown(e)})`);
  }
  const R = (globalThis as { Response?: new () => Response }).Response;
  if (typeof R !== 'function' || !(response instanceof R)) throw new InvalidParameterError(`${what} must resolve to a fetch() Response, got ${formatValue(response)}`);
  if (!response.ok) {
    throw new WasmError(`${what} could not be fetched: HTTP ${response.status}${response.url ? ` from ${response.url}` : ''}. Serve the package's .wasm files next to its JavaScript, pass init({ wasm }), or import fedmix/inline`);
  }
  if (response.bodyUsed) throw new InvalidParameterError(`${what} is a Response whose body was already read; pass a fresh one`);
  // streaming compilation (while the bytes arrive) needs the right MIME type; servers that
  // send another one still work, by the slower path
  const type = response.headers.get('Content-Type') ?? '';
  if (typeof WebAssembly.compileStreaming === 'function' && /^application\/wasm\b/i.test(type)) {
    try {
      return await WebAssembly.compileStreaming(response);
    } catch (e) {
      throw new WasmError(`${what} is not a WebAssembly build this engine can compile (${formatThrown(e)})`);
    }
  }
  let bytes: ArrayBuffer;
  try {
    bytes = await response.arrayBuffer();
  } catch (e) {
    throw new WasmError(`${what} could not be read (${formatThrown(e)})`);
  }
  return compileBytes(what, bytes);
}

async function readFile(what: string, path: string | URL): Promise<WebAssembly.Module> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await (await nodeFs()).readFile(path);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new WasmError(
      `${what} could not be read${code === 'ENOENT' ? ' (no such file)' : ''}: ${formatThrown(e)}.` +
        (code === 'ENOENT' ? ' A bundle that left the .wasm files behind needs init({ wasm }) or fedmix/inline' : ''),
    );
  }
  return compileBytes(what, bytes);
}

/** Compiles one checked source; `what` names it in errors (e.g. "the SIMD build (wasm.simd)"). */
export async function compileSource(what: string, source: CheckedSource): Promise<WebAssembly.Module> {
  switch (source.kind) {
    case 'module':
      return source.module;
    case 'bytes':
      return compileBytes(what, source.bytes);
    case 'response':
      return compileResponse(what, source.response);
    case 'path':
      return readFile(`${what} at ${source.path}`, source.path);
    case 'url': {
      const where = `${what} at ${source.url.href}`;
      // Node's fetch() has no file: URLs; Deno and Bun set process.versions.node too and read files the same way
      if (source.url.protocol === 'file:' && isNode()) return readFile(where, source.url);
      if (typeof fetch !== 'function') throw new WasmError(`${where} cannot be fetched: this engine has no fetch(); pass the bytes with init({ wasm })`);
      let response: Promise<Response>;
      try {
        response = fetch(source.url.href);
      } catch (e) {
        throw new WasmError(`${where} could not be fetched (${formatThrown(e)})`);
      }
      return compileResponse(where, response);
    }
  }
}
