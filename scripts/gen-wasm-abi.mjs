#!/usr/bin/env node
/**
 * Generates ts/wasm/abi.generated.ts from the one declaration of the C ABI in
 * crates/fedmix-wasm:
 *   - src/exports.rs: every export (`export!(feature fn module::name(params) -> result)`)
 *     and every option struct (`option_structs! { ... }`);
 *   - src/constants.rs: the names of the core's constants table, by group;
 *   - src/lib.rs: ABI_VERSION;  modules.json: the feature modules.
 * Rust reads the same declarations through its macros (src/lib.rs), so a
 * signature that differs from its implementation does not compile.
 *
 *   node scripts/gen-wasm-abi.mjs           write the file (scripts/build-wasm.sh runs it)
 *   node scripts/gen-wasm-abi.mjs --check   exit 1 when the committed file is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const crate = `${root}crates/fedmix-wasm/`;
export const OUTPUT = `${root}ts/wasm/abi.generated.ts`;

/**
 * An export takes at most this many parameters; one that needs more passes all
 * its scalars in an option struct and keeps only pointers positional (a
 * pointer in a struct would have another layout natively, where the core's
 * tests call the exports).
 */
export const MAX_PARAMS = 8;

/** The WebAssembly value type of a Rust parameter or result type on wasm32. */
function wasmType(rust, where) {
  const t = rust.replace(/\s+/g, ' ').trim();
  if (/^\*(const|mut) /.test(t)) return 'i32';
  if (['usize', 'isize', 'u32', 'i32', 'u16', 'i16', 'u8', 'i8', 'bool'].includes(t)) return 'i32';
  if (t === 'u64' || t === 'i64') return 'i64';
  if (t === 'f32' || t === 'f64') return t;
  throw new Error(`${where}: type ${t} has no WebAssembly value type this generator knows`);
}

/** Size (and alignment: the same for these) of an option struct's field type; repr(C) with these types is the naive layout. */
const FIELD_BYTES = { u32: 4, i32: 4, f32: 4, f64: 8 };
/** The letter of a field's type in a struct's field table (the generated optionStruct reads it). */
const FIELD_KIND = { u32: 'u', i32: 'i', f32: 'f', f64: 'd' };

const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const pascal = (s) => camel(s).replace(/^./, (c) => c.toUpperCase());
const screaming = (s) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** `name: type` pairs separated by commas at depth 0 (types hold no commas here). */
function fields(text, where) {
  return text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const docs = [...p.matchAll(/\/\/\/ ?(.*)/g)].map((m) => m[1]);
      const bare = p.replace(/\/\/\/.*$/gm, '').trim();
      const m = /^(\w+)\s*:\s*(.+)$/s.exec(bare);
      if (!m) throw new Error(`${where}: cannot read parameter ${JSON.stringify(p)}`);
      return { name: m[1], rust: m[2].replace(/\s+/g, ' ').trim(), docs };
    });
}

/** The doc comment lines (///) just above `index` in `src`. */
function docsBefore(src, index) {
  const lines = src.slice(0, index).split('\n');
  lines.pop(); // the line the item starts on
  const docs = [];
  while (lines.length && /^\s*\/\/\//.test(lines[lines.length - 1])) docs.unshift(lines.pop().replace(/^\s*\/\/\/ ?/, ''));
  return docs;
}

export function readDeclaration() {
  const src = readFileSync(`${crate}src/exports.rs`, 'utf8');
  const layout = JSON.parse(readFileSync(`${crate}modules.json`, 'utf8'));
  const modules = ['core', ...layout.features];
  const exports = [];
  const re = /^export!\(\s*(every|lent|"(\w+)")\s+fn\s+(\w+)::(\w+)\(([^)]*)\)\s*(?:->\s*([^;]+?))?\s*\);/gms;
  for (const m of src.matchAll(re)) {
    const name = m[4];
    const where = `exports.rs ${name}`;
    const placement = m[1] === 'every' || m[1] === 'lent' ? m[1] : m[2];
    if (placement !== 'every' && placement !== 'lent' && !modules.includes(placement)) throw new Error(`${where}: module ${placement} is not core nor a feature of modules.json`);
    const params = fields(m[5], where).map((p) => ({ ...p, wasm: wasmType(p.rust, where) }));
    const scalars = params.filter((p) => !p.rust.startsWith('*'));
    if (params.length > MAX_PARAMS && scalars.length > 0) {
      throw new Error(`${where} takes ${params.length} parameters, ${scalars.map((p) => p.name).join(', ')} of them scalars; above ${MAX_PARAMS} its scalars go into an option struct`);
    }
    exports.push({ name, module: placement === 'lent' ? 'core' : placement, lent: placement === 'lent', params, result: m[6] ? wasmType(m[6], where) : undefined, docs: docsBefore(src, m.index) });
  }
  const every = src.match(/^export!\(/gm)?.length ?? 0;
  if (every !== exports.length) throw new Error(`exports.rs has ${every} export! entries, the generator read ${exports.length}: keep to the form export!(feature fn module::name(params) -> result);`);
  const names = new Set();
  for (const e of exports) {
    if (names.has(e.name)) throw new Error(`exports.rs declares ${e.name} twice`);
    names.add(e.name);
  }

  const structs = [];
  const block = /^option_structs! \{\n(.*?)^\}/ms.exec(src);
  if (block) {
    const offset = block.index + block[0].indexOf(block[1]);
    for (const m of block[1].matchAll(/"(\w+)"\s+struct\s+(\w+)\s*\{([^}]*)\}/g)) {
      const where = `exports.rs struct ${m[2]}`;
      if (!modules.includes(m[1])) throw new Error(`${where}: module ${m[1]} is not core nor a feature of modules.json`);
      let at = 0;
      let align = 1;
      const fs = fields(m[3], where).map((f) => {
        const bytes = FIELD_BYTES[f.rust];
        if (!bytes) throw new Error(`${where}.${f.name}: an option struct holds only ${Object.keys(FIELD_BYTES).join(', ')} (its layout is then the same on wasm32 and natively)`);
        at = Math.ceil(at / bytes) * bytes;
        align = Math.max(align, bytes);
        const out = { ...f, offset: at, bytes };
        at += bytes;
        return out;
      });
      structs.push({ name: m[2], module: m[1], fields: fs, bytes: Math.ceil(at / align) * align, docs: docsBefore(src, offset + m.index) });
    }
  }

  const constantsSrc = readFileSync(`${crate}src/constants.rs`, 'utf8');
  const table = /static TABLE: &\[\(&str, f64\)\] = &\[\n(.*?)^\];/ms.exec(constantsSrc);
  if (!table) throw new Error('constants.rs: no static TABLE');
  const groups = new Map();
  let comment = [];
  for (const line of table[1].split('\n')) {
    const c = /^\s*\/\/ ?(.*)$/.exec(line);
    if (c) {
      comment.push(c[1]);
      continue;
    }
    const row = /^\s*\("([\w-]+)\.([\w+-]+)",/.exec(line);
    if (!row) {
      if (line.trim()) throw new Error(`constants.rs: cannot read the row ${JSON.stringify(line)}`);
      continue;
    }
    if (!groups.has(row[1])) groups.set(row[1], { docs: comment, members: [] });
    else if (comment.length) throw new Error(`constants.rs: a comment inside group ${row[1]}; comments name a group, above its first row`);
    groups.get(row[1]).members.push(row[2]);
    comment = [];
  }

  // the covariance lengths by type: CovarianceType::shape_powers of the core, its one home
  const gmmSrc = readFileSync(`${root}crates/fedmix-core/src/gmm/mod.rs`, 'utf8');
  const powersFn = /pub const fn shape_powers\(self\) -> \(u32, u32\) \{(.*?)\n {4}\}/s.exec(gmmSrc);
  if (!powersFn) throw new Error('crates/fedmix-core/src/gmm/mod.rs: no CovarianceType::shape_powers');
  const shapePowers = [...powersFn[1].matchAll(/CovarianceType::(\w+) => \((\d+), (\d+)\),/g)].map((m) => [m[1].toLowerCase(), Number(m[2]), Number(m[3])]);
  if (shapePowers.length !== 4) throw new Error(`CovarianceType::shape_powers: read ${shapePowers.length} arms, expected 4 (one \`CovarianceType::X => (a, b),\` a line)`);

  const abi = /^const ABI_VERSION: i32 = (\d+);/m.exec(readFileSync(`${crate}src/lib.rs`, 'utf8'));
  if (!abi) throw new Error('lib.rs: no const ABI_VERSION');
  const pages = (layout.featureBase + layout.features.length * layout.slotBytes) / 65536;
  if (!Number.isInteger(pages)) throw new Error('modules.json: featureBase and slotBytes are not whole pages (64 KiB)');
  const relaxed = layout.relaxed ?? [];
  for (const m of relaxed) if (!modules.includes(m)) throw new Error(`modules.json: relaxed module ${m} is not core nor a feature`);
  return { abiVersion: Number(abi[1]), features: layout.features, relaxed, initialPages: pages, exports, structs, groups, shapePowers };
}

function doc(lines, indent) {
  if (!lines.length) return '';
  const body = lines.map((l) => l.replace(/\*\//g, '*\\/'));
  return body.length === 1 ? `${indent}/** ${body[0]} */\n` : `${indent}/**\n${body.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

const TS_TYPE = { i32: 'number', i64: 'bigint', f32: 'number', f64: 'number' };

export function generate() {
  const d = readDeclaration();
  const o = [];
  o.push('// Generated by scripts/gen-wasm-abi.mjs from crates/fedmix-wasm (src/exports.rs, src/constants.rs,');
  o.push('// src/lib.rs, modules.json); do not edit. `npm run build` and scripts/setup.sh regenerate it.');
  o.push('');
  o.push('/** ABI_VERSION of crates/fedmix-wasm: the loader refuses a module of another. */');
  o.push(`export const ABI_VERSION = ${d.abiVersion};`);
  o.push('');
  o.push('/** The feature modules beside the core, in the order of crates/fedmix-wasm/modules.json (each has its slot of memory). */');
  o.push(`export const FEATURES = [${d.features.map((f) => `'${f}'`).join(', ')}] as const;`);
  o.push('/** A module beside the core, as `init({ features })` names it. */');
  // spelled out, so the public type stands alone in the API reference
  o.push(`export type Feature = ${d.features.map((f) => `'${f}'`).join(' | ')};`);
  o.push('');
  // a number, so that programs carry no copy of modules.json
  o.push('/**');
  o.push(' * Pages (64 KiB) of the memory all modules share before anything is allocated (modules.json): the');
  o.push(" * core's stack and data below featureBase, then one slot of slotBytes per feature for its data and");
  o.push(' * stack (the heap grows above).');
  o.push(' */');
  o.push(`export const INITIAL_PAGES = ${d.initialPages};`);
  o.push('/** The modules built a third time with relaxed SIMD (modules.json); the relaxed build takes the SIMD build\'s other modules. */');
  o.push(`export const RELAXED_MODULES = [${d.relaxed.map((f) => `'${f}'`).join(', ')}] as const;`);
  o.push('/** The C ABI of crates/fedmix-wasm. Pointers and sizes are numbers (wasm32). */');
  o.push('export interface WasmExports {');
  o.push('  memory: WebAssembly.Memory;');
  for (const e of d.exports.filter((x) => !x.lent)) {
    o.push(doc(e.docs, '  ').replace(/\n$/, '') || undefined);
    o.push(`  ${e.name}(${e.params.map((p) => `${camel(p.name)}: ${TS_TYPE[p.wasm]}`).join(', ')}): ${e.result ? TS_TYPE[e.result] : 'void'};`);
  }
  o.push('}');
  o.push('');
  // the placement as one string of names a feature: a map of every export cost programs 3 KB
  o.push('/**');
  o.push(' * The exports of each feature module, without their `fm_` prefix, separated by spaces: what init()');
  o.push(' * loads for a call. Every other export TypeScript calls is the core\'s (or every module\'s).');
  o.push(' */');
  o.push('export const FEATURE_EXPORTS: { readonly [F in Feature]: string } = {');
  for (const f of d.features) o.push(`  ${f}: '${d.exports.filter((e) => e.module === f).map((e) => e.name.replace(/^fm_/, '')).join(' ')}',`);
  o.push('};');
  o.push('');
  o.push('/** The module of every export TypeScript calls (a feature module, the core, or every module), as a type: FEATURE_EXPORTS is its value. */');
  o.push('export interface ExportModules {');
  for (const e of d.exports.filter((x) => !x.lent)) {
    if (!e.name.startsWith('fm_')) throw new Error(`exports.rs ${e.name}: every export is named fm_*`);
    o.push(`  ${e.name}: '${e.module}';`);
  }
  o.push('}');
  o.push('');
  o.push('/** The core\'s heap, which it lends the feature modules (they import these); TypeScript never calls them. */');
  o.push(`export const HEAP_EXPORTS = [${d.exports.filter((x) => x.lent).map((e) => `'${e.name}'`).join(', ')}] as const;`);
  o.push('');
  o.push('/** The rows of the core\'s constants table (crates/fedmix-wasm/src/constants.rs) by group; the values are read from the core at init(). */');
  o.push('export const CORE_CONSTANTS = {');
  for (const [g, { docs, members }] of d.groups) {
    o.push(doc(docs, '  ').replace(/\n$/, '') || undefined);
    o.push(`  ${g}: [${members.map((m) => `'${m}'`).join(', ')}],`);
  }
  o.push('} as const;');
  o.push('');
  o.push('/**');
  o.push(' * CovarianceType::shape_powers of crates/fedmix-core: a covariance array of');
  o.push(' * type t for k components of d features holds k^a d^b values, [a, b] = this[t].');
  o.push(' */');
  o.push(`export const COVARIANCE_SHAPE_POWERS = { ${d.shapePowers.map(([t, a, b]) => `${t}: [${a}, ${b}]`).join(', ')} } as const;`);
  o.push('');
  o.push('/** An option struct of the C ABI: its size in WASM memory and the writer of its #[repr(C)] layout. */');
  o.push('export interface OptionStruct<T> {');
  o.push('  readonly bytes: number;');
  o.push('  /** byte offset of each field */');
  o.push('  readonly offsets: { readonly [K in keyof T]: number };');
  o.push('  write(view: DataView, at: number, value: T): void;');
  o.push('}');
  o.push('');
  o.push('const SETTERS = { u: \'setUint32\', i: \'setInt32\', f: \'setFloat32\', d: \'setFloat64\' } as const;');
  o.push('');
  o.push('/**');
  o.push(' * One writer for every option struct, driven by its field table: a field a word, its type letter');
  o.push(' * (u u32, i i32, f f32, d f64), its byte offset and its name, as scripts/gen-wasm-abi.mjs laid it out.');
  o.push(' */');
  o.push('function optionStruct<T>(bytes: number, table: string): OptionStruct<T> {');
  o.push('  const fields = table.split(\' \').map((f) => /^(\\w)(\\d+)(\\w+)$/.exec(f)!);');
  o.push('  return {');
  o.push('    bytes,');
  o.push('    offsets: Object.fromEntries(fields.map((f) => [f[3], +f[2]!])) as OptionStruct<T>[\'offsets\'],');
  o.push('    write(view, at, value) {');
  o.push('      for (const [, kind, offset, key] of fields) view[SETTERS[kind as keyof typeof SETTERS]](at + +offset!, (value as Record<string, number>)[key!]!, true);');
  o.push('    },');
  o.push('  };');
  o.push('}');
  for (const s of d.structs) {
    o.push('');
    o.push(doc(s.docs, '').replace(/\n$/, '') || undefined);
    o.push(`export interface ${s.name} {`);
    for (const f of s.fields) {
      o.push(doc(f.docs, '  ').replace(/\n$/, '') || undefined);
      o.push(`  ${camel(f.name)}: number;`);
    }
    o.push('}');
    o.push(`/** The layout of ${s.name} (${s.bytes} bytes, module ${s.module}). */`);
    o.push(`export const ${screaming(s.name)} = /* @__PURE__ */ optionStruct<${s.name}>(${s.bytes}, '${s.fields.map((f) => `${FIELD_KIND[f.rust]}${f.offset}${camel(f.name)}`).join(' ')}');`);
  }
  o.push('');
  return o.filter((l) => l !== undefined).join('\n');
}

/**
 * ts/wasm/abi-signatures.generated.ts: each export's WebAssembly signature,
 * which test/wasm-exports.test.ts checks the binaries against (apart, so that
 * no program carries them).
 */
export function generateSignatures() {
  const d = readDeclaration();
  const o = [];
  o.push('// Generated by scripts/gen-wasm-abi.mjs from crates/fedmix-wasm/src/exports.rs; do not edit.');
  o.push('// The signatures the tests check the binaries against (programs do not import this file).');
  o.push("import type { Feature, WasmExports } from './abi.generated.js';");
  o.push('');
  o.push('/** A WebAssembly value type. */');
  o.push("export type WasmType = 'i32' | 'i64' | 'f32' | 'f64';");
  o.push('');
  o.push('/** Where an export lives (a feature module, the core, or every module) and its WebAssembly signature. */');
  o.push('export interface ExportSignature {');
  o.push("  module: 'core' | Feature | 'every';");
  o.push('  params: readonly WasmType[];');
  o.push('  result: WasmType | undefined;');
  o.push('}');
  o.push('');
  const sig = (e) => `{ module: '${e.module}', params: [${e.params.map((p) => `'${p.wasm}'`).join(', ')}], result: ${e.result ? `'${e.result}'` : 'undefined'} }`;
  o.push('/** Every export TypeScript calls, with its signature. */');
  o.push("export const EXPORTS: { readonly [N in Exclude<keyof WasmExports, 'memory'>]: ExportSignature } = {");
  for (const e of d.exports.filter((x) => !x.lent)) o.push(`  ${e.name}: ${sig(e)},`);
  o.push('};');
  o.push('');
  o.push('/** The core\'s heap, lent to the feature modules, with its signatures. */');
  o.push('export const HEAP_EXPORTS = {');
  for (const e of d.exports.filter((x) => x.lent)) o.push(`  ${e.name}: ${sig(e)},`);
  o.push('} as const satisfies Record<string, ExportSignature>;');
  o.push('');
  return o.join('\n');
}

export const SIGNATURES_OUTPUT = `${root}ts/wasm/abi-signatures.generated.ts`;

/**
 * ts/wasm/files-MODULE.generated.ts: one module's files (each build's), registered with the loader
 * when imported (ts/wasm/source.ts). Each URL is written out whole, in the form bundlers (Vite,
 * webpack, Parcel) recognise as an asset, and only in this file: a bundler emits a module's files
 * only into a program whose entries import it (package.json "exports"; docs/browsers-and-workers.md).
 */
export function generateFiles() {
  const d = readDeclaration();
  const out = [];
  for (const m of ['core', ...d.features]) {
    const builds = ['simd', 'scalar', ...(d.relaxed.includes(m) ? ['relaxed'] : [])];
    const o = [];
    o.push('// Generated by scripts/gen-wasm-abi.mjs from crates/fedmix-wasm/modules.json; do not edit.');
    o.push(`// The files of the ${m === 'core' ? 'core module' : `'${m}' module`}: importing this lets init() load it from beside the library.`);
    o.push("import { registerModuleFiles } from './source.js';");
    o.push('');
    o.push(`registerModuleFiles('${m}', {`);
    for (const b of builds) o.push(`  ${b}: () => new URL('./fedmix-${b}${m === 'core' ? '' : `-${m}`}.wasm', import.meta.url),`);
    o.push('});');
    o.push('');
    out.push([`${root}ts/wasm/files-${m}.generated.ts`, o.join('\n')]);
  }
  const o = [];
  o.push('// Generated by scripts/gen-wasm-abi.mjs from crates/fedmix-wasm/modules.json; do not edit.');
  o.push("// Every module's files: what `fedmix` (the whole library) and the workers that run any algorithm import.");
  for (const m of ['core', ...d.features]) o.push(`import './files-${m}.generated.js';`);
  o.push('');
  out.push([`${root}ts/wasm/files-all.generated.ts`, o.join('\n')]);
  return out;
}

export { pascal };

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const [file, text] of [[OUTPUT, generate()], [SIGNATURES_OUTPUT, generateSignatures()], ...generateFiles()]) {
    let old = '';
    try {
      old = readFileSync(file, 'utf8');
    } catch {
      // first run
    }
    const name = file.slice(root.length);
    if (process.argv.includes('--check')) {
      if (old !== text) {
        console.error(`${name} is stale: run node scripts/gen-wasm-abi.mjs (or npm run build)`);
        process.exit(1);
      }
    } else if (old !== text) {
      writeFileSync(file, text);
      console.log(`gen-wasm-abi: wrote ${name}`);
    }
  }
}
