/**
 * The C ABI is declared by hand twice: the `#[no_mangle]` functions of
 * crates/fedmix-wasm and the `WasmExports` interface of ts/wasm/loader.ts. This
 * file holds them together: every declared function is exported with the same
 * number of parameters and, where the declaration returns void, no result;
 * every exported function is declared. Both builds, SIMD128 and scalar.
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
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from '../ts/wasm/bytes.generated.js';

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

/**
 * Parameter and result counts of the exported functions, from the module's
 * type, import, function and export sections (the JS API gives the parameter
 * count as `.length` but says nothing about results).
 */
function exportedSignatures(bytes: Uint8Array): Map<string, { params: number; results: number }> {
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
  const name = (): string => {
    const len = u32();
    const s = new TextDecoder().decode(bytes.subarray(at, at + len));
    at += len;
    return s;
  };
  const types: { params: number; results: number }[] = [];
  const funcTypes: number[] = []; // imported functions first, then the module's own
  const exports: [string, number][] = [];
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
        if (kind !== 0) throw new Error('the core imports something other than a function; extend this parser');
        funcTypes.push(u32());
      }
    } else if (id === 3) {
      for (let n = u32(); n > 0; n--) funcTypes.push(u32());
    } else if (id === 7) {
      for (let n = u32(); n > 0; n--) {
        const exportName = name();
        const kind = bytes[at++];
        const index = u32();
        if (kind === 0) exports.push([exportName, index]);
      }
    }
    at = end;
  }
  return new Map(exports.map(([n, i]) => [n, types[funcTypes[i]!]!]));
}

const declared = declaredExports();
const declaredFunctions = [...declared].filter(([, d]) => d.kind === 'function').map(([n]) => n);

test('the declarations are read: methods and their parameters, and memory', () => {
  expect(declaredFunctions.length).toBeGreaterThan(50);
  expect(declared.get('fm_gmm_fit')).toEqual({ kind: 'function', params: 20, returnsVoid: false });
  expect(declared.get('fm_clear_error')).toEqual({ kind: 'function', params: 0, returnsVoid: true });
  expect(declared.get('memory')).toEqual({ kind: 'property', type: 'WebAssembly.Memory' });
});

describe.each([
  ['simd', SIMD_WASM_BASE64],
  ['scalar', SCALAR_WASM_BASE64],
] as const)('the %s build', (_build, base64) => {
  const bytes = new Uint8Array(Buffer.from(base64, 'base64'));
  const signatures = exportedSignatures(bytes);
  const load = async () => (await WebAssembly.instantiate(bytes, {})).instance.exports;

  test('the parser reads the module as the engine does', async () => {
    const exports = await load();
    const functions = Object.keys(exports).filter((n) => typeof exports[n] === 'function');
    expect([...signatures.keys()].sort()).toEqual(functions.sort());
    for (const n of functions) expect(signatures.get(n)!.params, n).toBe((exports[n] as (...a: unknown[]) => unknown).length);
  });

  test('every declared function is exported, with as many parameters as declared', async () => {
    const exports = await load();
    const missing = declaredFunctions.filter((n) => typeof exports[n] !== 'function');
    expect(missing, 'declared in WasmExports but not exported by the core').toEqual([]);
    const wrong = declaredFunctions
      .map((n) => ({ name: n, declared: (declared.get(n) as { params: number }).params, exported: (exports[n] as (...a: unknown[]) => unknown).length }))
      .filter((r) => r.declared !== r.exported);
    expect(wrong, 'parameter counts that differ').toEqual([]);
  });

  test('every exported function is declared', async () => {
    const exports = await load();
    const undeclared = Object.keys(exports).filter((n) => typeof exports[n] === 'function' && declared.get(n)?.kind !== 'function');
    expect(undeclared, 'exported by the core but not declared in WasmExports').toEqual([]);
  });

  test('a function declared void returns nothing, any other returns one value', () => {
    const wrong = declaredFunctions
      .filter((n) => signatures.has(n)) // a missing one fails the first test
      .map((n) => ({ name: n, returnsVoid: (declared.get(n) as { returnsVoid: boolean }).returnsVoid, results: signatures.get(n)!.results }))
      .filter((r) => r.results !== (r.returnsVoid ? 0 : 1));
    expect(wrong, 'declared results that differ').toEqual([]);
  });

  test('the memory is exported and declared; other non-functions are only the linker globals', async () => {
    const exports = await load();
    expect(exports.memory).toBeInstanceOf(WebAssembly.Memory);
    const others = Object.keys(exports).filter((n) => typeof exports[n] !== 'function' && n !== 'memory');
    expect(others.filter((n) => !LINKER_GLOBALS.includes(n))).toEqual([]);
    const properties = [...declared].filter(([, d]) => d.kind === 'property').map(([n]) => n);
    expect(properties).toEqual(['memory']);
  });
});
