#!/usr/bin/env node
// Renumbers relaxed SIMD's fused multiply-adds in a module built by LLVM 14
// (Debian's rustc 1.63), which writes the proposal's 2021 prototype opcodes,
// to the final ones engines validate (docs/wasm.md, "Relaxed SIMD"):
//   f32x4.fma  0xfd 0xaf 0x01 -> f32x4.relaxed_madd 0xfd 0x85 0x02
//   f64x2.fma  0xfd 0xcf 0x01 -> f64x2.relaxed_madd 0xfd 0x87 0x02
// Both encodings are three bytes, so the rewrite is in place. It walks the
// code section instruction by instruction (a byte scan would also match
// immediates: constants, shuffles, offsets), and refuses any instruction it
// does not know, any other prototype relaxed opcode, and a module with no
// fused multiply-add (a build that lost them). Then the engine must validate
// the result: run it as `node --experimental-wasm-relaxed-simd` on Node 20.
//
// Usage: node --experimental-wasm-relaxed-simd scripts/wasm-relaxed-renumber.mjs IN.wasm [OUT.wasm]
// (OUT defaults to IN). Prints how many of each it renumbered.
import { readFileSync, writeFileSync } from 'node:fs';

const PROTOTYPE_TO_FINAL = new Map([
  [0xaf, { name: 'f32x4.relaxed_madd', final: 0x105 }],
  [0xcf, { name: 'f64x2.relaxed_madd', final: 0x107 }],
]);
/** The rest of the 2021 prototype's relaxed opcodes: the kernels use none of them (swizzle, trunc, fms, laneselect, min/max, q15mulr, dot). */
const OTHER_PROTOTYPE = new Set([0xa2, 0xa5, 0xa6, 0xc5, 0xc6, 0xb0, 0xd0, 0xb2, 0xb3, 0xd2, 0xd3, 0xb4, 0xe2, 0xd4, 0xee]);

class Reader {
  constructor(bytes, pos) {
    this.b = bytes;
    this.pos = pos;
  }
  byte() {
    if (this.pos >= this.b.length) throw new Error('unexpected end of module');
    return this.b[this.pos++];
  }
  u32() {
    let result = 0;
    let shift = 0;
    for (;;) {
      const x = this.byte();
      result += (x & 0x7f) * 2 ** shift;
      if ((x & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) throw new Error(`LEB128 too long at ${this.pos}`);
    }
  }
  /** a signed LEB128 (i32/i64 constants, block types): only its length matters here */
  sleb() {
    for (let n = 0; ; n++) {
      if ((this.byte() & 0x80) === 0) return;
      if (n > 10) throw new Error(`LEB128 too long at ${this.pos}`);
    }
  }
  skip(n) {
    this.pos += n;
  }
  memarg() {
    this.u32();
    this.u32();
  }
}

const VALTYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

/** Walks one function body's instructions up to `end`, renumbering the fused multiply-adds; counts them in `found`. */
function walkBody(r, end, found) {
  while (r.pos < end) {
    const at = r.pos;
    const op = r.byte();
    if (op === 0x02 || op === 0x03 || op === 0x04) {
      const t = r.b[r.pos];
      if (t === 0x40 || VALTYPES.has(t)) r.skip(1);
      else r.sleb();
    } else if (op === 0x0c || op === 0x0d || op === 0x10 || (op >= 0x20 && op <= 0x26) || op === 0xd2) r.u32();
    else if (op === 0x0e) {
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.u32();
    } else if (op === 0x11) {
      r.u32();
      r.u32();
    } else if (op === 0x1c) {
      const n = r.u32();
      r.skip(n);
    } else if (op >= 0x28 && op <= 0x3e) r.memarg();
    else if (op === 0x3f || op === 0x40 || op === 0xd0) r.skip(1);
    else if (op === 0x41 || op === 0x42) r.sleb();
    else if (op === 0x43) r.skip(4);
    else if (op === 0x44) r.skip(8);
    else if (op === 0xfc) {
      const sub = r.u32();
      if (sub <= 7 || sub === 13) {
        if (sub === 13) r.u32();
      } else if (sub === 8 || sub === 12 || sub === 14) {
        r.u32();
        r.u32();
      } else if (sub === 9 || (sub >= 15 && sub <= 17)) r.u32();
      else if (sub === 10) r.skip(2);
      else if (sub === 11) r.skip(1);
      else throw new Error(`unknown instruction 0xfc ${sub} at byte ${at}`);
    } else if (op === 0xfd) {
      const opAt = r.pos;
      const sub = r.u32();
      const renumber = PROTOTYPE_TO_FINAL.get(sub);
      if (renumber) {
        if (r.pos - opAt !== 2) throw new Error(`unexpected encoding of 0xfd ${sub} at byte ${at}`);
        r.b[opAt] = (renumber.final & 0x7f) | 0x80;
        r.b[opAt + 1] = renumber.final >> 7;
        found.set(renumber.name, (found.get(renumber.name) ?? 0) + 1);
      } else if (OTHER_PROTOTYPE.has(sub) || sub > 0xff) throw new Error(`relaxed or unknown SIMD instruction 0xfd ${sub} at byte ${at}: only the fused multiply-adds are renumbered`);
      else if (sub <= 0x0b || sub === 0x5c || sub === 0x5d) r.memarg();
      else if (sub === 0x0c || sub === 0x0d) r.skip(16);
      else if (sub >= 0x15 && sub <= 0x22) r.skip(1);
      else if (sub >= 0x54 && sub <= 0x5b) {
        r.memarg();
        r.skip(1);
      }
    } else if (op <= 0x01 || op === 0x05 || op === 0x0b || op === 0x0f || op === 0x1a || op === 0x1b || (op >= 0x45 && op <= 0xc4) || op === 0xd1) {
      // no immediates
    } else throw new Error(`unknown instruction 0x${op.toString(16)} at byte ${at}`);
  }
  if (r.pos !== end) throw new Error(`a function body overran its size (at ${r.pos}, end ${end})`);
}

/** Renumbers `bytes` in place; returns the count of each renumbered instruction. */
export function renumber(bytes) {
  const r = new Reader(bytes, 8);
  if (bytes.readUInt32LE(0) !== 0x6d736100 || bytes.readUInt32LE(4) !== 1) throw new Error('not a WebAssembly module');
  const found = new Map();
  let sawCode = false;
  while (r.pos < bytes.length) {
    const id = r.byte();
    const size = r.u32();
    const end = r.pos + size;
    if (id === 10) {
      sawCode = true;
      const n = r.u32();
      for (let i = 0; i < n; i++) {
        const bodySize = r.u32();
        const bodyEnd = r.pos + bodySize;
        const groups = r.u32();
        for (let g = 0; g < groups; g++) {
          r.u32();
          r.skip(1);
        }
        walkBody(r, bodyEnd, found);
      }
      if (r.pos !== end) throw new Error('the code section has bytes after its last function');
    }
    r.pos = end;
  }
  if (!sawCode) throw new Error('the module has no code section');
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output = input] = process.argv.slice(2);
  if (!input) {
    console.error('usage: node --experimental-wasm-relaxed-simd scripts/wasm-relaxed-renumber.mjs IN.wasm [OUT.wasm]');
    process.exit(2);
  }
  const bytes = Buffer.from(readFileSync(input));
  const found = renumber(bytes);
  const summary = [...found].map(([name, n]) => `${n} ${name}`).join(', ');
  if (found.size === 0) {
    console.error(`wasm-relaxed-renumber: ${input} has no fused multiply-add; is it a relaxed build (--cfg fedmix_relaxed, +relaxed-simd)?`);
    process.exit(1);
  }
  if (!WebAssembly.validate(bytes)) {
    console.error(`wasm-relaxed-renumber: ${input} renumbered (${summary}) does not validate in Node ${process.version}; run it with --experimental-wasm-relaxed-simd (Node 20) or Node 22+`);
    process.exit(1);
  }
  writeFileSync(output, bytes);
  console.log(`wasm-relaxed-renumber: ${output}: ${summary}; validates`);
}
