#!/usr/bin/env bash
# Builds crates/fedmix-wasm twice (SIMD128 and scalar, same exports), optimizes
# both with wasm-opt into ts/wasm/fedmix-{simd,scalar}.wasm (the files the
# loader fetches or reads; tsup copies them to dist/) and embeds them as base64
# in ts/wasm/bytes.generated.ts for fedmix/inline: what wasm-pack would do,
# without wasm-bindgen (see README, "Building"). The modules named in
# modules.json's "relaxed" are built a third time with relaxed SIMD's fused
# multiply-adds (fedmix-relaxed-nn.wasm, ...; docs/wasm.md, "Relaxed SIMD"):
# LLVM 14 writes the proposal's prototype opcodes, which
# scripts/wasm-relaxed-renumber.mjs renumbers and checks by validating the
# result. Beside each build it keeps
# target/fedmix-<variant>.named.wasm, the same code with its function names,
# for scripts/wasm-size.mjs.
# Skips the work when the Rust sources have not changed since the last build.
# First regenerates ts/wasm/abi.generated.ts (the TypeScript side of the C ABI,
# from crates/fedmix-wasm/src/exports.rs; committed, cheap, always run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
node scripts/gen-wasm-abi.mjs

# Debian's toolchain has the wasm32 standard library; rustup's shims on PATH do not.
export RUSTC=/usr/bin/rustc
CARGO=/usr/bin/cargo
out=ts/wasm/bytes.generated.ts
stamp_dir=.setup-stamps
mkdir -p "$stamp_dir"
hash=$( (find crates -type f \( -name '*.rs' -o -name Cargo.toml -o -name modules.json \) -print0 | sort -z | xargs -0 sha256sum; sha256sum Cargo.toml Cargo.lock scripts/build-wasm.sh scripts/wasm-ld-no-stack-first.sh scripts/wasm-relaxed-renumber.mjs) | sha256sum | cut -d' ' -f1)

# The split build's layout (crates/fedmix-wasm/modules.json): every module imports one memory
layout() { node -e "const l = require('./crates/fedmix-wasm/modules.json'); console.log($1)"; }
features=$(layout "l.features.join(' ')")
relaxed=$(layout "l.relaxed.join(' ')")

# up to date only with every module of both builds there (a feature module deleted alone is built again)
built=yes
for variant in simd scalar; do
  for module in "" $features; do [ -f "ts/wasm/fedmix-$variant${module:+-$module}.wasm" ] || built=no; done
done
for module in $relaxed; do [ -f "ts/wasm/fedmix-relaxed-$module.wasm" ] || built=no; done
if [ "$built" = yes ] && [ -f "$out" ] && [ "$(cat "$stamp_dir/wasm" 2>/dev/null)" = "$hash" ]; then
  echo "build-wasm: up to date"
  exit 0
fi

feature_base=$(layout l.featureBase)
slot_bytes=$(layout l.slotBytes)
stack_bytes=$(layout l.stackBytes)

# What a module reserves of the memory: its __heap_base, read from the data section's layout
heap_base() {
  local text global
  text=$(wasm-dis "$1")
  global=$(sed -n 's/.*(export "__heap_base" (global \([^)]*\))).*/\1/p' <<<"$text")
  grep -F "(global $global i32 (i32.const " <<<"$text" | sed 's/.*(i32.const \([0-9]*\)).*/\1/'
}

# Node 20 validates relaxed SIMD only with this flag (Node 22 and later by default)
relaxed_node=(node)
if node --experimental-wasm-relaxed-simd -e 0 2>/dev/null; then relaxed_node=(node --experimental-wasm-relaxed-simd); fi

optimize() { # cargo's output, module name (fedmix-simd, fedmix-simd-nn, ...), wasm-opt's flags for relaxed SIMD
  # -g keeps the names (the code is the same, byte for byte, once they are stripped); cargo already dropped the DWARF
  wasm-opt -O3 -g --enable-simd ${3:-} --enable-sign-ext --enable-nontrapping-float-to-int --strip-producers "$1" -o "target/$2.named.wasm"
  wasm-opt --enable-simd ${3:-} --enable-sign-ext --enable-nontrapping-float-to-int --strip-debug "target/$2.named.wasm" -o "target/$2.wasm"
  if [ -n "${3:-}" ]; then
    # binaryen 108 reads and writes the prototype numbering too: renumber after it, the named copy as well
    "${relaxed_node[@]}" scripts/wasm-relaxed-renumber.mjs "target/$2.wasm"
    "${relaxed_node[@]}" scripts/wasm-relaxed-renumber.mjs "target/$2.named.wasm" >/dev/null
  fi
  install -m 644 "target/$2.wasm" "ts/wasm/$2.wasm"
}

build() { # variant rustflags [modules: the core and every feature when not given]
  local variant=$1 flags=$2 modules=${3:-core $features} opt=
  [ "$variant" = relaxed ] && opt=--enable-relaxed-simd
  local out="target/wasm-$variant/wasm32-unknown-unknown/release/fedmix_wasm.wasm"
  local end
  if [[ " $modules " == *" core "* ]]; then
  # the core: rustc's own layout (stack first), its memory imported so that the feature modules can share it
  CARGO_TARGET_DIR="target/wasm-$variant" RUSTFLAGS="$flags --remap-path-prefix=$root=." \
    "$CARGO" rustc --quiet --release --target wasm32-unknown-unknown -p fedmix-wasm --no-default-features --features core \
    -- -C link-arg=--import-memory
  end=$(heap_base "$out")
  if [ "$end" -gt "$feature_base" ]; then echo "build-wasm: the core's static data ends at $end, above featureBase $feature_base (modules.json)" >&2; exit 1; fi
  optimize "$out" "fedmix-$variant" $opt
  fi
  local i=-1 feature base
  for feature in $features; do
    i=$((i + 1))
    [[ " $modules " == *" $feature "* ]] || continue
    base=$((feature_base + i * slot_bytes))
    CARGO_TARGET_DIR="target/wasm-$variant" RUSTFLAGS="$flags --remap-path-prefix=$root=." \
      "$CARGO" rustc --quiet --release --target wasm32-unknown-unknown -p fedmix-wasm --no-default-features --features "$feature" \
      -- -C linker-flavor=wasm-ld -C linker="$root/scripts/wasm-ld-no-stack-first.sh" \
      -C link-arg=--import-memory -C link-arg=--global-base=$base -C link-arg=-zstack-size=$stack_bytes
    end=$(heap_base "$out")
    if [ "$end" -gt $((base + slot_bytes)) ]; then echo "build-wasm: module $feature ends at $end, beyond its slot [$base, $((base + slot_bytes))) (modules.json)" >&2; exit 1; fi
    optimize "$out" "fedmix-$variant-$feature" $opt
  done
}
# the two variants at once: each is a chain of single-threaded LTO links (codegen-units = 1), in its own target dir
build simd "-C target-feature=+simd128" & simd=$!
build scalar "-C target-feature=-simd128" & scalar=$!
# the relaxed modules: LLVM's fused multiply-add intrinsics are nightly features (RUSTC_BOOTSTRAP, this build
# only); rustc 1.63 warns that it does not know relaxed-simd, and passes it on to LLVM
RUSTC_BOOTSTRAP=1 build relaxed "-C target-feature=+simd128,+relaxed-simd --cfg fedmix_relaxed" "$relaxed" & relaxed_build=$!
failed=0
wait "$simd" || failed=1
wait "$scalar" || failed=1
wait "$relaxed_build" || failed=1
if [ "$failed" -ne 0 ]; then echo "build-wasm: a build failed (its message is above)" >&2; exit 1; fi

tmp=$(mktemp)
{
  echo "// Generated by scripts/build-wasm.sh from crates/fedmix-wasm; do not edit."
  echo "// The optimized SIMD128 and scalar builds of the same exports, base64-encoded: only"
  echo "// fedmix/inline imports this (the main entries load ts/wasm/fedmix-*.wasm as files)."
  for variant in simd scalar; do
    echo "export const ${variant^^}_WASM_BASE64 = {"
    printf '  core:\n    "%s",\n' "$(base64 -w0 "target/fedmix-$variant.wasm")"
    for feature in $features; do printf '  %s:\n    "%s",\n' "$feature" "$(base64 -w0 "target/fedmix-$variant-$feature.wasm")"; done
    echo "};"
  done
} > "$tmp"
chmod 644 "$tmp" # mktemp makes it private; the build output is not
mv "$tmp" "$out"
echo "$hash" > "$stamp_dir/wasm"
echo "build-wasm: simd $(stat -c %s target/fedmix-simd.wasm) bytes, scalar $(stat -c %s target/fedmix-scalar.wasm) bytes -> ts/wasm/fedmix-{simd,scalar}.wasm, $out"
