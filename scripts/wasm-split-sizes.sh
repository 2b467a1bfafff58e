#!/usr/bin/env bash
# What the split of crates/fedmix-wasm into modules (modules.json) costs against
# coarser splits, in shipped bytes: builds, for the SIMD variant, the core module
# merged with the given groups of features (as scripts/build-wasm.sh builds the
# core: its own heap, the memory imported, same flags and wasm-opt passes), and
# prints each candidate split's total with gzip -9 (node's zlib), taking the
# feature modules left apart from ts/wasm/ (run scripts/build-wasm.sh first).
#
#   bash scripts/wasm-split-sizes.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export RUSTC=/usr/bin/rustc
out=target/split
mkdir -p "$out"
build_core() { # name, features (comma-separated, with core)
  CARGO_TARGET_DIR=target/wasm-split RUSTFLAGS="-C target-feature=+simd128 --remap-path-prefix=$root=." \
    /usr/bin/cargo rustc --quiet --release --target wasm32-unknown-unknown -p fedmix-wasm --no-default-features --features "$2" \
    -- -C link-arg=--import-memory
  wasm-opt -O3 --enable-simd --enable-sign-ext --enable-nontrapping-float-to-int --strip-debug --strip-producers \
    target/wasm-split/wasm32-unknown-unknown/release/fedmix_wasm.wasm -o "$out/$1.wasm"
}
build_core all core,dem,svm,nn,dirichlet,fedgem,assignment
build_core core-dem core,dem
build_core all-but-nn core,dem,svm,dirichlet,fedgem,assignment
node --input-type=module - "$out" <<'JS'
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
const out = process.argv[2];
const size = (f) => { const b = readFileSync(f); return { raw: b.length, gz: gzipSync(b, { level: 9 }).length }; };
const shipped = (m) => size(`ts/wasm/fedmix-simd${m === 'core' ? '' : `-${m}`}.wasm`);
const splits = {
  'today: core + 6 feature modules': [shipped('core'), ...['dem', 'svm', 'nn', 'dirichlet', 'fedgem', 'assignment'].map(shipped)],
  'core+dem merged, 5 feature modules': [size(`${out}/core-dem.wasm`), ...['svm', 'nn', 'dirichlet', 'fedgem', 'assignment'].map(shipped)],
  'two modules: everything but nn, and nn': [size(`${out}/all-but-nn.wasm`), shipped('nn')],
  'one module': [size(`${out}/all.wasm`)],
};
const kb = (b) => (b / 1024).toFixed(1);
console.log('| split (SIMD build) | modules | raw KB | gzip -9 KB | core module gzip KB |');
console.log('|---|---|---|---|---|');
for (const [name, parts] of Object.entries(splits)) {
  const raw = parts.reduce((a, p) => a + p.raw, 0);
  const gz = parts.reduce((a, p) => a + p.gz, 0);
  console.log(`| ${name} | ${parts.length} | ${kb(raw)} | ${kb(gz)} | ${kb(parts[0].gz)} |`);
}
JS
