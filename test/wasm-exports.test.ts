/**
 * The C ABI is declared once, in crates/fedmix-wasm/src/exports.rs: Rust
 * compiles each entry into its `#[no_mangle]` function, and
 * scripts/gen-wasm-abi.mjs generates from it ts/wasm/abi.generated.ts (the
 * WasmExports interface, the module placement, the option structs' field
 * tables, the constants' names; and abi-signatures.generated.ts, each
 * export's module and WebAssembly signature, EXPORTS).
 * This file holds the binaries to that declaration: the generated file is
 * current; every declared function is exported by the module it is placed in,
 * with the declared parameter and result types, and nothing else is exported.
 * Both builds, SIMD128 and scalar, every module of each (the core and the
 * feature modules of crates/fedmix-wasm/modules.json), and the layout that
 * lets them share one memory: each module's data and stack inside its own
 * part of it, the feature modules on the core's heap.
 *
 * The JS API gives only a function's parameter count, so the binaries' type
 * sections are read here. The modules are instantiated directly, not through
 * init(): the loader wraps every export in a trap guard whose `.length` is 0.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import layout from '../crates/fedmix-wasm/modules.json';
import * as abi from '../ts/wasm/abi.generated.js';
import { ABI_VERSION, OCSVM_FROM_PARTS_OPTIONS, type OptionStruct } from '../ts/wasm/abi.generated.js';
import { EXPORTS, HEAP_EXPORTS, type ExportSignature, type WasmType } from '../ts/wasm/abi-signatures.generated.js';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from '../ts/wasm/bytes.generated.js';
import { FEATURES, featureOf, HEAP_IMPORTS, INITIAL_PAGES } from '../ts/wasm/modules.js';
import type { ModuleName } from '../ts/wasm/source.js';

/** Globals the linker exports from every wasm32 cdylib; nothing in TypeScript uses them. */
const LINKER_GLOBALS = ['__data_end', '__heap_base'];

/** What the tests read of a module's binary that the JS API does not give. */
interface Parsed {
  /** parameter and result types of the exported functions (the JS API gives only `.length`) */
  signatures: Map<string, { params: WasmType[]; results: WasmType[] }>;
  /** the minimum pages of the imported memory */
  memoryMin: number | undefined;
  /** the active data segments: where instantiation writes them in the shared memory */
  segments: { offset: number; length: number }[];
  /** the initial values of the mutable i32 globals (the stack pointer) */
  mutableGlobals: number[];
}

/** Reads the type, import, function, global, export and data sections. */
function parseModule(bytes: Uint8Array): Parsed {
  let at = 8; // magic and version
  const u32 = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  const s32 = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[at++]!;
      v |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) return shift < 32 && b & 0x40 ? v | (-1 << shift) : v;
    }
  };
  const name = (): string => {
    const len = u32();
    const s = new TextDecoder().decode(bytes.subarray(at, at + len));
    at += len;
    return s;
  };
  /** A constant expression of one i32.const, as the linker writes offsets and initial values. */
  const i32Const = (what: string): number => {
    if (bytes[at++] !== 0x41) throw new Error(`${what} is not an i32.const; extend this parser`);
    const v = s32();
    if (bytes[at++] !== 0x0b) throw new Error(`${what} is longer than one i32.const; extend this parser`);
    return v;
  };
  const VALUE_TYPES: Record<number, WasmType> = { 0x7f: 'i32', 0x7e: 'i64', 0x7d: 'f32', 0x7c: 'f64' };
  const valueTypes = (): WasmType[] =>
    Array.from({ length: u32() }, () => {
      const t = VALUE_TYPES[bytes[at++]!];
      if (!t) throw new Error(`a value type other than i32, i64, f32 and f64 (${bytes[at - 1]}); extend this parser`);
      return t;
    });
  const types: { params: WasmType[]; results: WasmType[] }[] = [];
  const funcTypes: number[] = []; // imported functions first, then the module's own
  const exports: [string, number][] = [];
  let memoryMin: number | undefined;
  const segments: Parsed['segments'] = [];
  const mutableGlobals: number[] = [];
  while (at < bytes.length) {
    const id = bytes[at++]!;
    const size = u32();
    const end = at + size;
    if (id === 1) {
      for (let n = u32(); n > 0; n--) {
        if (bytes[at++] !== 0x60) throw new Error('unexpected type form');
        const params = valueTypes();
        types.push({ params, results: valueTypes() });
      }
    } else if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        name();
        name();
        const kind = bytes[at++];
        if (kind === 0) {
          funcTypes.push(u32());
        } else if (kind === 2) {
          const flags = u32();
          memoryMin = u32();
          if (flags & 1) u32(); // maximum
        } else {
          throw new Error(`a module imports something other than functions and a memory (kind ${kind}); extend this parser`);
        }
      }
    } else if (id === 3) {
      for (let n = u32(); n > 0; n--) funcTypes.push(u32());
    } else if (id === 6) {
      for (let n = u32(); n > 0; n--) {
        const type = bytes[at++];
        const mutable = bytes[at++] === 1;
        if (type !== 0x7f) throw new Error('a global other than an i32; extend this parser');
        const value = i32Const('a global\'s initial value');
        if (mutable) mutableGlobals.push(value);
      }
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const exportName = name();
        const kind = bytes[at++];
        const index = u32();
        if (kind === 0) exports.push([exportName, index]);
      }
    } else if (id === 11) {
      for (let n = u32(); n > 0; n--) {
        const flags = u32();
        if (flags === 1) {
          at += u32(); // passive: written only by memory.init, which the linker does not emit here
          continue;
        }
        if (flags === 2 && u32() !== 0) throw new Error('a data segment of another memory');
        if (flags !== 0 && flags !== 2) throw new Error(`data segment flags ${flags}; extend this parser`);
        const offset = i32Const('a data segment\'s offset');
        const length = u32();
        segments.push({ offset, length });
        at += length;
      }
    }
    at = end;
  }
  return { signatures: new Map(exports.map(([n, i]) => [n, types[funcTypes[i]!]!])), memoryMin, segments, mutableGlobals };
}

/** Every function the declaration places in a module: TypeScript's exports, and the heap the core lends the feature modules. */
const DECLARED: ReadonlyMap<string, ExportSignature> = new Map<string, ExportSignature>([...Object.entries(EXPORTS), ...Object.entries(HEAP_EXPORTS)]);
const declaredFunctions = Object.keys(EXPORTS);

test('the generated bindings are those of the declaration (run node scripts/gen-wasm-abi.mjs after changing crates/fedmix-wasm/src/exports.rs)', async () => {
  const gen = (await import(new URL('../scripts/gen-wasm-abi.mjs', import.meta.url).href)) as {
    generate(): string;
    generateSignatures(): string;
    generateFiles(): [string, string][];
    OUTPUT: string;
    SIGNATURES_OUTPUT: string;
    MAX_PARAMS: number;
  };
  expect(readFileSync(gen.OUTPUT, 'utf8')).toBe(gen.generate());
  expect(readFileSync(gen.SIGNATURES_OUTPUT, 'utf8')).toBe(gen.generateSignatures());
  // each module's files (ts/wasm/files-MODULE.generated.ts) and the list of them all
  const files = gen.generateFiles();
  expect(files).toHaveLength(2 + FEATURES.length);
  for (const [file, text] of files) expect(readFileSync(file, 'utf8'), file).toBe(text);
  // no export takes a long list of positional scalars: beyond MAX_PARAMS, only pointers (its scalars in an option struct)
  for (const [name, sig] of Object.entries(EXPORTS)) if (sig.params.length > gen.MAX_PARAMS) expect(sig.params.every((t) => t === 'i32'), name).toBe(true);
  expect(EXPORTS.fm_gmm_fit.params.length).toBeLessThanOrEqual(gen.MAX_PARAMS);
});

test("the placement: featureOf names each export's feature module, and nothing for the core's, every module's or a name not exported", () => {
  for (const [name, sig] of Object.entries({ ...EXPORTS, ...HEAP_EXPORTS })) expect(featureOf(name), name).toBe(sig.module === 'core' || sig.module === 'every' ? undefined : sig.module);
  for (const name of ['', 'fm_', 'dem_client_stats', 'fm_dem_client', 'fm_dem_client_stats ', 'fm_dem_client_stats fm_dem_server_step', 'xx_nn_new', 'constructor', 'toString']) expect(featureOf(name), name).toBeUndefined();
});

test('every option struct: the one writer puts each field at its offset in its type, and nothing outside the struct', async () => {
  const gen = (await import(new URL('../scripts/gen-wasm-abi.mjs', import.meta.url).href)) as {
    readDeclaration(): { structs: { name: string; bytes: number; fields: { name: string; rust: 'u32' | 'i32' | 'f32' | 'f64'; offset: number }[] }[] };
  };
  const GET = { u32: 'getUint32', i32: 'getInt32', f32: 'getFloat32', f64: 'getFloat64' } as const;
  const camel = (x: string) => x.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const { structs } = gen.readDeclaration();
  expect(structs.length).toBeGreaterThan(20);
  for (const s of structs) {
    const layout = (abi as unknown as Record<string, OptionStruct<Record<string, number>>>)[s.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()]!;
    expect(layout.bytes, s.name).toBe(s.bytes);
    expect(layout.offsets, s.name).toEqual(Object.fromEntries(s.fields.map((f) => [camel(f.name), f.offset])));
    // distinct values of each field's type (a negative i32, a fraction for f64, one f32 can hold exactly)
    const value = Object.fromEntries(s.fields.map((f, i) => [camel(f.name), { u32: 4_000_000_000 - i, i32: -1000 - i, f32: 0.5 + i, f64: 1 / 3 + i }[f.rust]]));
    const view = new DataView(new ArrayBuffer(s.bytes + 16));
    for (let i = 0; i < view.byteLength; i++) view.setUint8(i, 0xa5);
    layout.write(view, 8, value);
    for (const f of s.fields) expect(view[GET[f.rust]](8 + f.offset, true), `${s.name}.${f.name}`).toBe(value[camel(f.name)]);
    for (const i of [0, 7, 8 + s.bytes, view.byteLength - 1]) expect(view.getUint8(i), `${s.name}: byte ${i} outside the struct`).toBe(0xa5);
  }
});

/** The two functions every module exports: the loader checks each module's version and build by them. */
const SHARED = ['fm_abi_version', 'fm_simd'];
const MODULES: readonly ModuleName[] = ['core', ...FEATURES];

/** The module that should export `name`, by the declaration (a function of every module: the core). */
const homeOf = (name: string): ModuleName => featureOf(name) ?? 'core';

type Exports = Record<string, unknown>;

/** Every module of a build in one new memory, as the loader does it: the core first, then each feature on the core's heap. */
async function loadBuild(binaries: ReadonlyMap<ModuleName, Uint8Array<ArrayBuffer>>): Promise<Map<ModuleName, Exports>> {
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES });
  const core = (await WebAssembly.instantiate(binaries.get('core')!, { env: { memory } })).instance.exports;
  const heap = Object.fromEntries(HEAP_IMPORTS.map((n) => [n, core[n]!])) as WebAssembly.ModuleImports;
  const out = new Map<ModuleName, Exports>([['core', core]]);
  for (const f of FEATURES) out.set(f, (await WebAssembly.instantiate(binaries.get(f)!, { env: { memory }, core: heap })).instance.exports);
  return out;
}

test('the ABI version is generated from the crate', () => {
  expect(Number.isInteger(ABI_VERSION) && ABI_VERSION > 0).toBe(true);
  expect(readFileSync(new URL('../crates/fedmix-wasm/src/lib.rs', import.meta.url), 'utf8')).toContain(`const ABI_VERSION: i32 = ${ABI_VERSION};`);
});

describe.each([
  ['simd', SIMD_WASM_BASE64],
  ['scalar', SCALAR_WASM_BASE64],
] as const)('the %s build', (build, base64) => {
  const binaries = new Map(Object.entries(base64).map(([m, b]) => [m as ModuleName, new Uint8Array(Buffer.from(b, 'base64'))]));
  const parsed = new Map([...binaries].map(([m, bytes]) => [m, parseModule(bytes)]));
  let loading: Promise<Map<ModuleName, Exports>> | undefined;
  const load = () => (loading ??= loadBuild(binaries));

  test('it has the core module and one module per feature of crates/fedmix-wasm/modules.json', () => {
    expect([...binaries.keys()]).toEqual(MODULES);
    expect(FEATURES).toEqual(layout.features);
  });

  test('the parser reads every module as the engine does', async () => {
    const all = await load();
    for (const m of MODULES) {
      const exports = all.get(m)!;
      const functions = Object.keys(exports).filter((n) => typeof exports[n] === 'function');
      expect([...parsed.get(m)!.signatures.keys()].sort(), m).toEqual(functions.sort());
      for (const n of functions) expect(parsed.get(m)!.signatures.get(n)!.params.length, `${m} ${n}`).toBe((exports[n] as (...a: unknown[]) => unknown).length);
    }
  });

  test('every module imports the one memory, the feature modules the core\'s heap too, and nothing else', () => {
    const imports = (m: ModuleName) => WebAssembly.Module.imports(new WebAssembly.Module(binaries.get(m)!)).map((i) => `${i.module}.${i.name}:${i.kind}`).sort();
    expect(imports('core')).toEqual(['env.memory:memory']);
    const heap = HEAP_IMPORTS.map((n) => `core.${n}:function`);
    for (const f of FEATURES) expect(imports(f), f).toEqual([...heap, 'env.memory:memory'].sort());
    // the memory the loader creates is as large as every module asks for
    for (const m of MODULES) expect(parsed.get(m)!.memoryMin, m).toBeLessThanOrEqual(INITIAL_PAGES);
  });

  test('each module exports the functions ts/wasm/modules.ts places in it (its error for a module not loaded depends on it)', async () => {
    const all = await load();
    for (const m of MODULES) {
      const exports = all.get(m)!;
      const functions = Object.keys(exports).filter((n) => typeof exports[n] === 'function');
      expect(functions, m).toEqual(expect.arrayContaining(SHARED));
      const elsewhere = functions.filter((n) => !SHARED.includes(n) && homeOf(n) !== m);
      expect(elsewhere, `exported by the ${m} module but placed in another by ts/wasm/modules.ts`).toEqual([]);
      // a module with nothing of its own would not be told apart by the loader
      expect(functions.filter((n) => !SHARED.includes(n)).length, m).toBeGreaterThan(0);
    }
    for (const n of HEAP_IMPORTS) expect(typeof all.get('core')![n], n).toBe('function');
  });

  test('every declared function is exported by its module, with the declared parameter and result types', () => {
    const missing = declaredFunctions.filter((n) => !parsed.get(homeOf(n))!.signatures.has(n));
    expect(missing, 'declared but not exported by the module the declaration places it in').toEqual([]);
    const wrong = [...DECLARED]
      .filter(([n]) => parsed.get(homeOf(n))!.signatures.has(n))
      .map(([n, d]) => ({ name: n, declared: { params: d.params, results: d.result ? [d.result] : [] }, exported: parsed.get(homeOf(n))!.signatures.get(n)! }))
      .filter((r) => JSON.stringify(r.declared) !== JSON.stringify(r.exported));
    expect(wrong, 'signatures that differ').toEqual([]);
  });

  test('every exported function is declared: each module exports exactly its own, those of every module, and the core the heap it lends', () => {
    for (const m of MODULES) {
      const own = [...DECLARED].filter(([, d]) => d.module === m || d.module === 'every').map(([n]) => n);
      expect([...parsed.get(m)!.signatures.keys()].sort(), m).toEqual(own.sort());
    }
    expect(Object.keys(HEAP_EXPORTS)).toEqual([...HEAP_IMPORTS]);
    // the loader leaves them out of the exports TypeScript calls; so must the interface
    for (const n of HEAP_IMPORTS) expect(n in EXPORTS, n).toBe(false);
  });

  test('every module is of this ABI and of this build', async () => {
    const all = await load();
    for (const m of MODULES) {
      const e = all.get(m)! as { fm_abi_version(): number; fm_simd(): number };
      expect(e.fm_abi_version(), m).toBe(ABI_VERSION);
      expect(e.fm_simd(), m).toBe(build === 'simd' ? 1 : 0);
    }
  });

  test('no module exports a memory (they share the one imported); other non-functions are only the linker globals', async () => {
    const all = await load();
    for (const m of MODULES) {
      const exports = all.get(m)!;
      const others = Object.keys(exports).filter((n) => typeof exports[n] !== 'function');
      expect(others.sort(), m).toEqual([...LINKER_GLOBALS].sort());
    }
  });

  test('the layout of modules.json: the core below featureBase, each feature\'s data and stack in its own slot', async () => {
    const all = await load();
    const global = (m: ModuleName, n: string) => (all.get(m)![n] as WebAssembly.Global).value as number;
    const inside = (m: ModuleName, from: number, to: number) => {
      const p = parsed.get(m)!;
      expect(p.segments.length, `${m} has data`).toBeGreaterThan(0);
      for (const s of p.segments) {
        expect(s.offset, `${m} data`).toBeGreaterThanOrEqual(from);
        expect(s.offset + s.length, `${m} data`).toBeLessThanOrEqual(global(m, '__data_end'));
      }
      expect(global(m, '__heap_base'), m).toBeLessThanOrEqual(to);
      // the stack pointer starts inside the module's part, at least a stack above its data
      expect(p.mutableGlobals, `${m}: one mutable global, the stack pointer`).toHaveLength(1);
      return p.mutableGlobals[0]!;
    };
    // the core keeps rustc's layout: its stack first (from 0 up to the pointer), then its data
    const coreStack = inside('core', 0, layout.featureBase);
    expect(Math.min(...parsed.get('core')!.segments.map((s) => s.offset))).toBeGreaterThanOrEqual(coreStack);
    FEATURES.forEach((f, i) => {
      const base = layout.featureBase + i * layout.slotBytes;
      const stack = inside(f, base, base + layout.slotBytes);
      // wasm-ld without stack-first: the data from the slot's base, then the stack, growing down from its top
      expect(stack - global(f, '__data_end'), f).toBeGreaterThanOrEqual(layout.stackBytes);
      expect(stack, f).toBeLessThanOrEqual(base + layout.slotBytes);
    });
    expect(INITIAL_PAGES * 65536).toBe(layout.featureBase + FEATURES.length * layout.slotBytes);
  });

  test('the modules share one memory and the core\'s heap: a feature module reads what the core allocated, its handles and errors live in the core', async () => {
    // a memory of its own, so that the other tests' calls cannot disturb the counts
    const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES });
    const core = (await WebAssembly.instantiate(binaries.get('core')!, { env: { memory } })).instance.exports as unknown as {
      fm_heap_in_use(): number;
      fm_alloc(bytes: number): number;
      fm_free(ptr: number, bytes: number): void;
      fm_last_error_ptr(): number;
      fm_last_error_len(): number;
      fm_clear_error(): void;
      fm_constant_count(): number;
      fm_constant_name_ptr(i: number): number;
      fm_constant_name_len(i: number): number;
    } & Exports;
    // the core's static data (the names of its constants), before and after the svm module's data is written into the same memory
    const names = () =>
      Array.from({ length: core.fm_constant_count() }, (_, i) => new TextDecoder().decode(new Uint8Array(memory.buffer, core.fm_constant_name_ptr(i), core.fm_constant_name_len(i)).slice()));
    const before = names();
    expect(before.length).toBeGreaterThan(10);
    const heap = Object.fromEntries(HEAP_IMPORTS.map((n) => [n, core[n]!])) as WebAssembly.ModuleImports;
    const svm = (await WebAssembly.instantiate(binaries.get('svm')!, { env: { memory }, core: heap })).instance.exports as unknown as {
      fm_ocsvm_from_parts(options: number, sv: number, coef: number, support: number, outHandle: number): number;
      fm_ocsvm_decision_function(h: number, x: number, n: number, d: number, out: number): number;
      fm_ocsvm_free(h: number): void;
    };
    expect(names()).toEqual(before);

    const start = core.fm_heap_in_use();
    const f64 = (values: number[]) => {
      const p = core.fm_alloc(values.length * 8);
      new Float64Array(memory.buffer, p, values.length).set(values);
      return p;
    };
    const sv = f64([0, 0, 1, 2]); // two support vectors of 2 features
    const coef = f64([0.7, 0.3]);
    const x = f64([0.5, -1, 2, 0.5, 3, 2]); // the points (0.5, 0.5), (-1, 3), (2, 2), column-major as the core takes data
    const out = core.fm_alloc(3 * 8);
    const handle = core.fm_alloc(4);
    const parts = (kernel: number) => {
      const p = core.fm_alloc(OCSVM_FROM_PARTS_OPTIONS.bytes);
      OCSVM_FROM_PARTS_OPTIONS.write(new DataView(memory.buffer), p, { kernel, gamma: 0.5, nu: 0.5, d: 2, svLen: 4, nSv: 2, rho: 0.1, supportLen: 0 });
      return p;
    };
    const [rbfParts, badParts] = [parts(0), parts(7)];
    const buffers = core.fm_heap_in_use();
    expect(buffers).toBeGreaterThan(start);
    expect(svm.fm_ocsvm_from_parts(rbfParts, sv, coef, 0, handle)).toBe(0);
    const h = new Uint32Array(memory.buffer, handle, 1)[0]!;
    // the model the svm module made is on the core's heap
    expect(core.fm_heap_in_use()).toBeGreaterThan(buffers);
    expect(svm.fm_ocsvm_decision_function(h, x, 3, 2, out)).toBe(0);
    const rbf = (a: number[]) => 0.7 * Math.exp(-0.5 * (a[0]! ** 2 + a[1]! ** 2)) + 0.3 * Math.exp(-0.5 * ((a[0]! - 1) ** 2 + (a[1]! - 2) ** 2)) - 0.1;
    const got = Array.from(new Float64Array(memory.buffer, out, 3));
    [[0.5, 0.5], [-1, 3], [2, 2]].forEach((p, i) => expect(got[i]).toBeCloseTo(rbf(p), 12));
    svm.fm_ocsvm_free(h);
    expect(core.fm_heap_in_use()).toBe(buffers);
    // an error in the svm module is the core's last error
    expect(svm.fm_ocsvm_from_parts(badParts, sv, coef, 0, handle)).not.toBe(0);
    expect(new TextDecoder().decode(new Uint8Array(memory.buffer, core.fm_last_error_ptr(), core.fm_last_error_len()).slice())).toBe('unknown kernel code 7; use 0 (rbf) or 1 (linear)');
    core.fm_clear_error();
    for (const [p, bytes] of [[sv, 32], [coef, 16], [x, 48], [out, 24], [handle, 4], [rbfParts, OCSVM_FROM_PARTS_OPTIONS.bytes], [badParts, OCSVM_FROM_PARTS_OPTIONS.bytes]] as const) core.fm_free(p, bytes);
    expect(core.fm_heap_in_use()).toBe(start);
  });
});

test("the benchmarks' own instance (bench/wasm-handle.mjs) links every module of the SIMD build as the loader does", async () => {
  // the benches time single kernels through raw exports: after the split into modules a plain
  // instance of the core alone no longer instantiated (it imports its memory)
  const bench = (await import(new URL('../bench/wasm-handle.mjs', import.meta.url).href)) as { wasm(): Exports };
  const w = bench.wasm();
  const binaries = new Map(Object.entries(SIMD_WASM_BASE64).map(([m, b64]) => [m as ModuleName, new Uint8Array(Buffer.from(b64, 'base64'))]));
  for (const [module, exports] of await loadBuild(binaries)) {
    for (const [name, value] of Object.entries(exports)) if (typeof value === 'function') expect(typeof w[name], `${module}: ${name}`).toBe('function');
  }
  expect((w.fm_abi_version as () => number)()).toBe(ABI_VERSION);
  expect((w.fm_simd as () => number)()).toBe(1);
  // the benches read and write their buffers through it: the one memory every module imports
  const p = (w.fm_alloc as (n: number) => number)(16);
  new Float64Array((w.memory as WebAssembly.Memory).buffer, p, 2).set([4, 0.5]);
  (w.fm_digamma as (p: number, n: number) => void)(p, 2);
  expect(Array.from(new Float64Array((w.memory as WebAssembly.Memory).buffer, p, 2))).toEqual([expect.closeTo(1.2561176684318, 12), expect.closeTo(-1.9635100260214235, 12)]);
  (w.fm_free as (p: number, n: number) => void)(p, 16);
});

test("FedDistr's linear algebra is the core's (fm_cholesky, fm_symmetric_eigen, fm_sqrtm): scipy's values, through the bindings", async () => {
  const { init } = await import('../ts/wasm/loader.js');
  const { cholesky, isPositiveDefinite, sqrtm, symmetricEigen, symmetricFloor } = await import('../ts/distributions/gaussian.js');
  await init();
  const fixture = JSON.parse(readFileSync(new URL('./fixtures/linalg.json', import.meta.url), 'utf8')) as {
    cases: { name: string; d: number; a: number[]; sqrtm: number[]; eigvalsh_descending: number[]; cholesky?: number[] }[];
  };
  const close = (got: ArrayLike<number>, want: number[], abs: number, what: string) => {
    const scale = Math.max(1e-300, ...want.map(Math.abs));
    want.forEach((w, i) => expect(Math.abs(got[i]! - w), `${what}[${i}]`).toBeLessThanOrEqual(1e-10 * scale + abs));
  };
  for (const c of fixture.cases) {
    const norm = Math.max(...c.a.map(Math.abs));
    const singular = c.cholesky === undefined;
    // a zero eigenvalue's rounding noise e becomes sqrt(e) in the square root
    close(sqrtm(c.a, c.d), c.sqrtm, singular ? Math.sqrt(c.d * 2.2e-16 * norm) : 0, `${c.name} sqrtm`);
    close(symmetricEigen(c.a, c.d).values, c.eigvalsh_descending, 4 * c.d * 2.2e-16 * norm, `${c.name} eigenvalues`);
    if (c.cholesky) close(cholesky(c.a, c.d)!, c.cholesky, 0, `${c.name} cholesky`);
    else expect(cholesky(c.a, c.d), c.name).toBeUndefined();
    expect(isPositiveDefinite(c.a, c.d, 'full'), c.name).toBe(!singular);
  }
  // eigenvalues 3 and -1 floored at 0.5; a matrix shorter than d x d is no matrix (never read past its end)
  close(symmetricFloor([1, 2, 2, 1], 2, 0.5), [1.75, 1.25, 1.25, 1.75], 1e-14, 'floor');
  expect(cholesky([1, 0, 0], 2)).toBeUndefined();
  expect(() => sqrtm([1, 0, 0], 2)).toThrow('a 2 x 2 matrix has 4 values, got 3');
});
