/**
 * fedmix/inline: the whole library, with both builds of the WebAssembly core
 * (every module of each) embedded as base64 in the JavaScript, for hosts that cannot serve or read
 * the .wasm files beside it (no bundler asset handling, single-file bundles,
 * some edge runtimes). About 1 MB more JavaScript than `fedmix`, which loads
 * only the one build the engine needs; everything else is the same module
 * (one instance, one Matrix class) whichever entry a program imports.
 *
 * @module fedmix/inline
 */
import { initWith, type Backend, type DefaultSources, type InitInfo, type InitOptions, type ModuleName } from './wasm/loader.js';
import type { CheckedSource } from './wasm/source.js';
import { SCALAR_WASM_BASE64, SIMD_WASM_BASE64 } from './wasm/bytes.generated.js';

export * from './index.js';

function decodeBase64(s: string): Uint8Array<ArrayBuffer> {
  const table = new Uint8Array(128);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  const clean = s.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < clean.length; i++) {
    acc = (acc << 6) | table[clean.charCodeAt(i)]!;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/**
 * Only the modules loaded, of the chosen build, are decoded. The relaxed-SIMD build is not embedded
 * (its modules would add their bytes for every engine): init() here chooses between SIMD and scalar,
 * unless options.wasm gives the relaxed modules.
 */
const embedded: DefaultSources = Object.assign(
  (backend: Backend, module: ModuleName): CheckedSource => ({ kind: 'bytes', bytes: decodeBase64((backend === 'scalar' ? SCALAR_WASM_BASE64 : SIMD_WASM_BASE64)[module]) }),
  { has: (backend: Backend) => backend !== 'relaxed' },
);

/**
 * Loads the WASM core from the embedded builds (or from `options.wasm`, as
 * `init` of fedmix does). Idempotent and safe to call concurrently.
 */
export function init(options: InitOptions = {}): Promise<InitInfo> {
  return initWith(embedded, options);
}
