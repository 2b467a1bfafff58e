#!/usr/bin/env node
/**
 * What each part of the WebAssembly core costs in bytes: reads a .wasm that
 * still has its name section (scripts/build-wasm.sh keeps one beside each
 * shipped build: target/fedmix-simd.named.wasm), sizes every function body of
 * the code section and adds them up by Rust module path.
 *
 *   node scripts/wasm-size.mjs [file.wasm] [--depth 2] [--top 25] [--json]
 *
 * wasm-opt inlines functions that have one caller into it, which credits much
 * of the core to the fm_* exports; cargo's own output, before wasm-opt
 * (target/wasm-simd/wasm32-unknown-unknown/release/fedmix_wasm.wasm), keeps
 * more of them apart and attributes better.
 *
 * --depth: how many path components make a group (fedmix_core::gmm at 2,
 * fedmix_core::gmm::em at 3). --top: how many single functions to list.
 * Gzipped sizes are of the whole file (gzip does not split by function).
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/** One LEB128 unsigned integer at `pos`: [value, next position]. */
function uleb(bytes, pos) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[pos++];
    if (b === undefined) throw new Error('truncated LEB128');
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [value, pos];
    shift += 7;
  }
}

function readName(bytes, pos) {
  const [len, start] = uleb(bytes, pos);
  return [new TextDecoder().decode(bytes.subarray(start, start + len)), start + len];
}

/** Sections, imported function count, body sizes and names of a module. */
export function parseModule(bytes) {
  if (bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) throw new Error('not a WebAssembly module');
  const sections = [];
  const names = new Map();
  const exports = new Map();
  let importedFunctions = 0;
  let bodies = [];
  let pos = 8;
  while (pos < bytes.length) {
    const id = bytes[pos];
    const [size, start] = uleb(bytes, pos + 1);
    const end = start + size;
    let label = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'][id] ?? `id ${id}`;
    if (id === 0) {
      const [name, p] = readName(bytes, start);
      label = `custom "${name}"`;
      if (name === 'name') readFunctionNames(bytes, p, end, names);
    } else if (id === 2) {
      let [count, p] = uleb(bytes, start);
      for (let i = 0; i < count; i++) {
        [, p] = readName(bytes, p);
        [, p] = readName(bytes, p);
        const kind = bytes[p++];
        if (kind === 0) {
          [, p] = uleb(bytes, p);
          importedFunctions++;
        } else if (kind === 1) p = skipTable(bytes, p);
        else if (kind === 2) p = skipLimits(bytes, p);
        else if (kind === 3) p += 2;
        else throw new Error(`unknown import kind ${kind}`);
      }
    } else if (id === 7) {
      let [count, p] = uleb(bytes, start);
      for (let i = 0; i < count; i++) {
        let name;
        [name, p] = readName(bytes, p);
        const kind = bytes[p++];
        let index;
        [index, p] = uleb(bytes, p);
        if (kind === 0) exports.set(index, name);
      }
    } else if (id === 10) {
      let [count, p] = uleb(bytes, start);
      bodies = [];
      for (let i = 0; i < count; i++) {
        const [len, q] = uleb(bytes, p);
        bodies.push(q + len - p); // the body and its size prefix
        p = q + len;
      }
    }
    sections.push({ label, bytes: end - pos });
    pos = end;
  }
  const functions = bodies.map((size, i) => {
    const index = importedFunctions + i;
    return { index, size, name: names.get(index) ?? exports.get(index) ?? `func[${index}]` };
  });
  return { sections, functions };
}

function skipLimits(bytes, p) {
  const flags = bytes[p++];
  [, p] = uleb(bytes, p);
  if (flags & 1) [, p] = uleb(bytes, p);
  return p;
}

function skipTable(bytes, p) {
  return skipLimits(bytes, p + 1);
}

function readFunctionNames(bytes, p, end, names) {
  while (p < end) {
    const sub = bytes[p++];
    const [size, start] = uleb(bytes, p);
    if (sub === 1) {
      let [count, q] = uleb(bytes, start);
      for (let i = 0; i < count; i++) {
        let index;
        let name;
        [index, q] = uleb(bytes, q);
        [name, q] = readName(bytes, q);
        names.set(index, name);
      }
    }
    p = start + size;
  }
}

const ESCAPES = { $LT$: '<', $GT$: '>', $u20$: ' ', $u27$: "'", $u5b$: '[', $u5d$: ']', $u7b$: '{', $u7d$: '}', $u3b$: ';', $u2b$: '+', $u22$: '"', $RF$: '&', $BP$: '*', $C$: ',', $SP$: '@', '..': '::' };

/** Rust's legacy mangling (_ZN...E) to a path, without the trailing hash. */
export function demangle(name) {
  if (!name.startsWith('_ZN') || !name.endsWith('E')) return name;
  const parts = [];
  let p = 3;
  while (p < name.length - 1) {
    let digits = '';
    while (/[0-9]/.test(name[p])) digits += name[p++];
    if (!digits) return name;
    parts.push(name.slice(p, p + Number(digits)));
    p += Number(digits);
  }
  if (/^h[0-9a-f]{16}$/.test(parts[parts.length - 1] ?? '')) parts.pop();
  return parts
    .map((s) => s.replace(/^_\$/, '$').replace(/\$[A-Za-z0-9]+\$|\.\./g, (m) => ESCAPES[m] ?? m))
    .join('::');
}

/** The module path a function belongs to, `depth` components deep (an impl counts as its type's module). */
export function groupOf(path, depth) {
  let p = path;
  // `<fedmix_core::gmm::Model as core::fmt::Debug>::fmt` belongs to fedmix_core::gmm
  const impl = /^<(?:&(?:mut )?)?([A-Za-z_][\w:]*)/.exec(p);
  if (impl) p = impl[1];
  const parts = p.split('::').filter(Boolean);
  if (parts.length <= 1) return p.startsWith('fm_') ? 'exports (fm_*)' : '(no path)';
  // a trailing function name is not a module: keep at most all but the last component
  return parts.slice(0, Math.min(depth, parts.length - 1)).join('::');
}

function main() {
  const args = process.argv.slice(2);
  const flag = (name, fallback) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const v = Number(args[i + 1]);
    args.splice(i, 2);
    if (!Number.isInteger(v) || v < 0) throw new Error(`${name} takes a whole number`);
    return v;
  };
  const depth = flag('--depth', 2);
  const top = flag('--top', 25);
  const json = args.includes('--json');
  const files = args.filter((a) => !a.startsWith('--'));
  const file = files[0] ?? 'target/fedmix-simd.named.wasm';
  const bytes = readFileSync(file);
  const { sections, functions } = parseModule(bytes);
  const code = functions.reduce((s, f) => s + f.size, 0);
  const groups = new Map();
  for (const f of functions) {
    const path = demangle(f.name);
    const g = groupOf(path, depth);
    const entry = groups.get(g) ?? { group: g, bytes: 0, functions: 0 };
    entry.bytes += f.size;
    entry.functions += 1;
    groups.set(g, entry);
    f.path = path;
  }
  const byGroup = [...groups.values()].sort((a, b) => b.bytes - a.bytes);
  const largest = [...functions].sort((a, b) => b.size - a.size).slice(0, top);
  if (json) {
    console.log(JSON.stringify({ file, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, sections, code, groups: byGroup, largest }, null, 2));
    return;
  }
  const kb = (n) => `${(n / 1024).toFixed(1).padStart(7)} KB`;
  console.log(`${file}: ${kb(bytes.length)}, gzip -9 ${kb(gzipSync(bytes, { level: 9 }).length)}, ${functions.length} functions`);
  console.log('\nsections');
  for (const s of sections) console.log(`  ${kb(s.bytes)}  ${s.label}`);
  console.log(`\ncode by module (depth ${depth})`);
  for (const g of byGroup) console.log(`  ${kb(g.bytes)}  ${((100 * g.bytes) / code).toFixed(1).padStart(5)}%  ${String(g.functions).padStart(4)} fn  ${g.group}`);
  console.log(`\nlargest ${top} functions`);
  for (const f of largest) console.log(`  ${kb(f.size)}  ${f.path}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
