// A separate instance of the optimized SIMD build (dist/fedmix-simd.wasm, from
// scripts/build-wasm.sh), for timing single kernels through their raw exports.
import { readFileSync } from 'node:fs';

let exports;
export function wasm() {
  if (!exports) {
    const bytes = readFileSync(new URL('../dist/fedmix-simd.wasm', import.meta.url));
    exports = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports;
  }
  return exports;
}
