// A separate instance of the optimized SIMD build (dist/fedmix-simd.wasm and its
// feature modules, from scripts/build-wasm.sh), for timing single kernels through
// their raw exports: one memory, the core, then every feature module linked to
// the core's heap, as ts/wasm/loader.ts does.
import { readFileSync } from 'node:fs';

const file = (name) => new URL(`../dist/${name}`, import.meta.url);

let exports;
export function wasm() {
  if (!exports) {
    const { featureBase, slotBytes, features } = JSON.parse(readFileSync(new URL('../crates/fedmix-wasm/modules.json', import.meta.url), 'utf8'));
    const memory = new WebAssembly.Memory({ initial: (featureBase + features.length * slotBytes) / 65536 });
    const core = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file('fedmix-simd.wasm'))), { env: { memory } }).exports;
    // memory: the one every module imports (no module exports it)
    exports = { ...core, memory };
    for (const feature of features) {
      const mod = new WebAssembly.Module(readFileSync(file(`fedmix-simd-${feature}.wasm`)));
      // the heap functions a feature module imports from the core, by the names it asks for
      const heap = Object.fromEntries(WebAssembly.Module.imports(mod).filter((i) => i.module === 'core').map((i) => [i.name, core[i.name]]));
      const own = new WebAssembly.Instance(mod, { env: { memory }, core: heap }).exports;
      for (const [name, value] of Object.entries(own)) if (!(name in exports)) exports[name] = value;
    }
  }
  return exports;
}
