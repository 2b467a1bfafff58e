#!/bin/sh
# The linker of the feature modules (scripts/build-wasm.sh): wasm-ld without
# rustc's --stack-first, which would put every module's stack at address 0 and
# its data right above, where the core module's are. Without it, --global-base
# places a module's data, then its stack, in its own slot of the shared memory.
for arg in "$@"; do
  shift
  [ "$arg" = "--stack-first" ] || set -- "$@" "$arg"
done
exec wasm-ld-14 "$@"
