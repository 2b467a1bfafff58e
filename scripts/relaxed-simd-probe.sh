#!/usr/bin/env bash
# Can this toolchain (Debian's rustc 1.63, LLVM 14) emit relaxed SIMD's fused
# multiply-adds (f32x4.relaxed_madd, f64x2.relaxed_madd)? Builds a two-function
# module through LLVM's own intrinsics, shows the opcodes LLVM 14 writes (the
# proposal's 2021 prototype numbering), rewrites them to the final numbering
# and runs the result in Node with and without --experimental-wasm-relaxed-simd.
# What it finds is in docs/wasm.md, "Relaxed SIMD". Takes about a second.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/probe.rs" <<'EOF'
#![no_std]
#![feature(link_llvm_intrinsics, simd_ffi, repr_simd)]
#[repr(simd)]
#[derive(Copy, Clone)]
pub struct F32x4(f32, f32, f32, f32);
#[repr(simd)]
#[derive(Copy, Clone)]
pub struct F64x2(f64, f64);
#[allow(improper_ctypes)]
extern "C" {
    #[link_name = "llvm.wasm.fma.v4f32"]
    fn fma_f32x4(a: F32x4, b: F32x4, c: F32x4) -> F32x4;
    #[link_name = "llvm.wasm.fma.v2f64"]
    fn fma_f64x2(a: F64x2, b: F64x2, c: F64x2) -> F64x2;
}
#[no_mangle]
pub unsafe extern "C" fn madd4(a: *const F32x4, b: *const F32x4, c: *const F32x4, o: *mut F32x4) {
    *o = fma_f32x4(*a, *b, *c);
}
#[no_mangle]
pub unsafe extern "C" fn madd2(a: *const F64x2, b: *const F64x2, c: *const F64x2, o: *mut F64x2) {
    *o = fma_f64x2(*a, *b, *c);
}
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
EOF
# relaxed-simd is not among rustc 1.63's known target features (it warns) but
# reaches LLVM; the intrinsics need nightly features, which RUSTC_BOOTSTRAP unlocks
RUSTC_BOOTSTRAP=1 /usr/bin/rustc --target wasm32-unknown-unknown --crate-type cdylib -O \
  -C target-feature=+simd128,+relaxed-simd "$dir/probe.rs" -o "$dir/probe.wasm" 2>"$dir/rustc.log" || { cat "$dir/rustc.log"; exit 1; }
grep -o "unknown feature.*" "$dir/rustc.log" | sort -u || true
echo "binaryen $(wasm-opt --version | cut -d' ' -f3) reads the code as:"
wasm-dis --enable-simd --enable-relaxed-simd "$dir/probe.wasm" | grep -o '(f[0-9x]*\.relaxed_[a-z]*' | sort -u
node - "$dir/probe.wasm" <<'EOF'
const bytes = require('fs').readFileSync(process.argv[2]);
const hex = (a) => Array.from(a, (b) => b.toString(16).padStart(2, '0')).join(' ');
// LLVM 14: f32x4.fma = 0xfd 0xaf 0x01, f64x2.fma = 0xfd 0xcf 0x01 (prototype);
// final relaxed SIMD: f32x4.relaxed_madd = 0xfd 0x85 0x02, f64x2.relaxed_madd = 0xfd 0x87 0x02.
// A byte scan is enough for this two-function module (not for a real build: see the docs).
const out = Buffer.from(bytes);
const found = [];
for (let i = 0; i + 2 < out.length; i++) {
  if (out[i] === 0xfd && out[i + 2] === 0x01 && (out[i + 1] === 0xaf || out[i + 1] === 0xcf)) {
    found.push(hex(out.subarray(i, i + 3)));
    out[i + 1] = out[i + 1] === 0xaf ? 0x85 : 0x87;
    out[i + 2] = 0x02;
  }
}
console.log(`LLVM 14 wrote ${found.join(', ')}; as written, Node ${process.version} validates it: ${WebAssembly.validate(bytes)}`);
require('fs').writeFileSync(process.argv[2] + '.final', out);
EOF
for flag in "" --experimental-wasm-relaxed-simd; do
  node $flag - "$dir/probe.wasm.final" "$flag" <<'EOF'
const bytes = require('fs').readFileSync(process.argv[2]);
const ok = WebAssembly.validate(bytes);
let result = '';
if (ok) {
  const { exports: e } = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  const f = new Float32Array(e.memory.buffer, 4096, 16);
  f.set([1, 2, 3, 4, 10, 10, 10, 10, 0.5, 0.5, 0.5, 0.5]);
  e.madd4(4096, 4112, 4128, 4144);
  const d = new Float64Array(e.memory.buffer, 8192, 8);
  d.set([1, 2, 3, 3, 100, 1000]);
  e.madd2(8192, 8208, 8224, 8240);
  result = `; madd4(a, b, c) = [${Array.from(f.subarray(12))}], madd2 = [${Array.from(d.subarray(6, 8))}] (a * b + c)`;
}
console.log(`renumbered, node ${process.argv[3] || '(no flag)'} validates it: ${ok}${result}`);
EOF
done
