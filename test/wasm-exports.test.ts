/**
 * The C ABI is declared by hand twice: the `#[no_mangle]` functions of
 * crates/fedmix-wasm and the `WasmExports` interface of ts/wasm/loader.ts. This
 * file holds them together: every declared function is exported, by the
 * module ts/wasm/modules.ts says it lives in, with the same number of
 * parameters and, where the declaration returns void, no result; every
 * exported function is declared. Both builds, SIMD128 and scalar, every module
 * of each (the core and the feature modules of crates/fedmix-wasm/modules.json),
 * and the layout that lets them share one memory: each module's data and stack
 * inside its own part of it, the feature modules on the core's heap.
 *
 * Interfaces vanish at runtime, so the declarations are read from the source
 * with the TypeScript compiler API. The modules are instantiated here directly,
 * not through init(): the loader wraps every export in a trap guard whose
 * `.length` is 0.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import layout from '../crates/fedmix-wasm/modules.json';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from '../ts/wasm/bytes.generated.js';
import { FEATURES, featureOf, HEAP_IMPORTS, INITIAL_PAGES } from '../ts/wasm/modules.js';
import type { ModuleName } from '../ts/wasm/source.js';

const LOADER = fileURLToPath(new URL('../ts/wasm/loader.ts', import.meta.url));

/** Globals the linker exports from every wasm32 cdylib; nothing in TypeScript uses them. */
const LINKER_GLOBALS = ['__data_end', '__heap_base'];

type Declared = { kind: 'function'; params: number; returnsVoid: boolean } | { kind: 'property'; type: string };

/** The members of `interface WasmExports` in ts/wasm/loader.ts. */
function declaredExports(): Map<string, Declared> {
  const source = ts.createSourceFile(LOADER, readFileSync(LOADER, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = source.statements.filter((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'WasmExports');
  if (found.length !== 1) throw new Error(`expected one interface WasmExports in ts/wasm/loader.ts, found ${found.length}`);
  const out = new Map<string, Declared>();
  for (const m of found[0]!.members) {
    if (!m.name || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) throw new Error(`WasmExports has a member without a plain name: ${m.getText(source)}`);
    const name = m.name.text;
    if (out.has(name)) throw new Error(`WasmExports declares ${name} twice`);
    if (ts.isMethodSignature(m)) {
      if (m.parameters.some((p) => p.dotDotDotToken || p.questionToken)) throw new Error(`${name}: an export has a fixed number of parameters`);
      out.set(name, { kind: 'function', params: m.parameters.length, returnsVoid: m.type?.kind === ts.SyntaxKind.VoidKeyword });
    } else if (ts.isPropertySignature(m) && m.type && ts.isFunctionTypeNode(m.type)) {
      out.set(name, { kind: 'function', params: m.type.parameters.length, returnsVoid: m.type.type.kind === ts.SyntaxKind.VoidKeyword });
    } else if (ts.isPropertySignature(m) && m.type) {
      out.set(name, { kind: 'property', type: m.type.getText(source) });
    } else {
      throw new Error(`WasmExports member ${name} is neither a method nor a typed property`);
    }
  }
  return out;
}

/** What the tests read of a module's binary that the JS API does not give. */
interface Parsed {
  /** parameter and result counts of the exported functions (the JS API gives only `.length`) */
  signatures: Map<string, { params: number; results: number }>;
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
  const types: { params: number; results: number }[] = [];
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
        const params = u32();
        at += params; // one byte per number type
        const results = u32();
        at += results;
        types.push({ params, results });
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

const declared = declaredExports();
const declaredFunctions = [...declared].filter(([, d]) => d.kind === 'function').map(([n]) => n);

test('the declarations are read: methods and their parameters, and memory', () => {
  expect(declaredFunctions.length).toBeGreaterThan(50);
  expect(declared.get('fm_gmm_fit')).toEqual({ kind: 'function', params: 20, returnsVoid: false });
  expect(declared.get('fm_clear_error')).toEqual({ kind: 'function', params: 0, returnsVoid: true });
  expect(declared.get('memory')).toEqual({ kind: 'property', type: 'WebAssembly.Memory' });
});


/** The two functions every module exports: the loader checks each module's version and build by them. */
const SHARED = ['fm_abi_version', 'fm_simd'];
const MODULES: readonly ModuleName[] = ['core', ...FEATURES];
/** The ABI version the loader expects (a constant it does not export). */
const ABI_VERSION = Number(/const ABI_VERSION = (\d+);/.exec(readFileSync(LOADER, 'utf8'))?.[1]);

/** The module that should export `name`, by ts/wasm/modules.ts's table. */
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

test('the ABI version is read from the loader', () => {
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
      for (const n of functions) expect(parsed.get(m)!.signatures.get(n)!.params, `${m} ${n}`).toBe((exports[n] as (...a: unknown[]) => unknown).length);
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

  test('every declared function is exported by its module, with as many parameters as declared', async () => {
    const all = await load();
    const missing = declaredFunctions.filter((n) => typeof all.get(homeOf(n))![n] !== 'function');
    expect(missing, 'declared in WasmExports but not exported by the module ts/wasm/modules.ts places it in').toEqual([]);
    const wrong = declaredFunctions
      .map((n) => ({ name: n, declared: (declared.get(n) as { params: number }).params, exported: (all.get(homeOf(n))![n] as (...a: unknown[]) => unknown).length }))
      .filter((r) => r.declared !== r.exported);
    expect(wrong, 'parameter counts that differ').toEqual([]);
  });

  test('every exported function is declared, except the heap the core lends the feature modules', async () => {
    const all = await load();
    const undeclared = MODULES.flatMap((m) =>
      Object.keys(all.get(m)!)
        .filter((n) => typeof all.get(m)![n] === 'function' && declared.get(n)?.kind !== 'function')
        .map((n) => `${m}: ${n}`),
    );
    expect(undeclared.sort(), 'exported but not declared in WasmExports').toEqual(HEAP_IMPORTS.map((n) => `core: ${n}`).sort());
    // the loader leaves them out of the exports TypeScript calls; so must the declaration
    for (const n of HEAP_IMPORTS) expect(declared.has(n), n).toBe(false);
  });

  test('a function declared void returns nothing, any other returns one value', () => {
    const wrong = MODULES.flatMap((m) =>
      [...parsed.get(m)!.signatures]
        .filter(([n]) => declared.get(n)?.kind === 'function')
        .map(([n, sig]) => ({ module: m, name: n, returnsVoid: (declared.get(n) as { returnsVoid: boolean }).returnsVoid, results: sig.results }))
        .filter((r) => r.results !== (r.returnsVoid ? 0 : 1)),
    );
    expect(wrong, 'declared results that differ').toEqual([]);
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
    // the loader adds the memory it made to the exports TypeScript uses
    const properties = [...declared].filter(([, d]) => d.kind === 'property').map(([n]) => n);
    expect(properties).toEqual(['memory']);
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
      fm_ocsvm_from_parts(...a: number[]): number;
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
    const buffers = core.fm_heap_in_use();
    expect(buffers).toBeGreaterThan(start);
    expect(svm.fm_ocsvm_from_parts(0, 0.5, 0.5, 2, sv, 4, coef, 2, 0.1, 0, 0, handle)).toBe(0);
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
    expect(svm.fm_ocsvm_from_parts(7, 0.5, 0.5, 2, sv, 4, coef, 2, 0.1, 0, 0, handle)).not.toBe(0);
    expect(new TextDecoder().decode(new Uint8Array(memory.buffer, core.fm_last_error_ptr(), core.fm_last_error_len()).slice())).toBe('unknown kernel code 7; use 0 (rbf) or 1 (linear)');
    core.fm_clear_error();
    for (const [p, bytes] of [[sv, 32], [coef, 16], [x, 48], [out, 24], [handle, 4]] as const) core.fm_free(p, bytes);
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
