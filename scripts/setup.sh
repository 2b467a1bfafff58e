#!/usr/bin/env bash
# Everything a fresh Debian 12 machine needs to build, test and run fedmix.
# Idempotent: installs only missing Debian packages, reinstalls npm packages only
# when package-lock.json changed, rebuilds WASM only when the Rust sources changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
stamps=.setup-stamps
mkdir -p "$stamps"

# Debian packages: the Rust toolchain with its wasm32 std (rustup cannot fetch
# targets here), the linker, wasm-opt, the scikit-learn/scipy/mpmath/igraph peers of the
# fixtures and benchmarks, PyTorch (the networks' peer), Fashion-MNIST (the
# networks' real input, in /usr/share/datasets/fashion-mnist), Chromium for the
# browser tests (and the browser demo's: demo/, built by Vite from npm), and mosquitto, the external MQTT broker the federation tests
# run against; r-cran-mlbench and python3-rdata for the UCI sets (glass, vowel, vehicle) the FedGEM tests
# and experiments read.
packages=(rustc cargo libstd-rust-dev-wasm32 lld-14 binaryen python3-sklearn python3-scipy python3-numpy python3-mpmath python3-igraph python3-torch dataset-fashion-mnist chromium mosquitto r-cran-mlbench python3-rdata)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages, exactly as locked
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$stamps/npm" 2>/dev/null)" != "$lock_hash" ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamps/npm"
fi

# the UCI sets as CSV (glass, vowel, vehicle, digits) in .datasets/, again when the exporter changed
export_hash=$(sha256sum scripts/export-uci-csv.py | cut -d' ' -f1)
if [ ! -s .datasets/digits.csv ] || [ "$(cat "$stamps/datasets" 2>/dev/null)" != "$export_hash" ]; then
  /usr/bin/python3 scripts/export-uci-csv.py .datasets
  echo "$export_hash" > "$stamps/datasets"
fi

bash scripts/build-wasm.sh
npx --no-install tsup --silent
echo "setup: ready"
