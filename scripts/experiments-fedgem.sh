#!/usr/bin/env bash
# Reruns the FedGEM experiments of EXPERIMENTS.md with `fedmix fedgem` and writes
# one JSON file per run to bench/results/fedgem/, plus commands.txt (every
# command with its wall time, the fedmix version and commit). Then print the
# tables with
#   node scripts/experiments-fedgem-report.mjs
#
# usage: bash scripts/experiments-fedgem.sh [a|b ...]   (default: both)
#   a: the sensitivity study on blobs (minimum center distance 2..8 standard
#      deviations; nominal, client-imbalance, cluster-imbalance), phi fixed at 1
#      and tuned, 10 repeats each, against a central GMM with the true K
#   b: abalone (rings grouped as the paper) and satellite, 10 repeats
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${FEDMIX_DATASETS:-../shared/datasets}
out=bench/results/fedgem
mkdir -p "$out"
[ -f dist/cli.cjs ] || bash scripts/setup.sh
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(a b)

common=(--clients 10 --rounds 10 --local-steps 1 --repeats 10 --seed 0)

source scripts/experiment-log.sh
run() { # run NAME.json ARGS...
  local name=$1
  shift
  run_logged "$name" node dist/cli.cjs fedgem "$@" --json "$out/$name" >/dev/null
}
start_log 2

for part in "${parts[@]}"; do
  case $part in
  a)
    for setting in none clients classes; do
      for delta in 2 3 4 5 6 8; do
        for phi in 1 tune; do
          run "a-$setting-d$delta-phi$phi.json" --blobs --blob-clusters 10 --blob-features 2 --blob-samples 300 \
            --min-distance $delta --clusters-per-client 3..6 --imbalance $setting --phi $phi "${common[@]}"
        done
      done
    done
    ;;
  b)
    for phi in 1 tune; do
      run "b-abalone-phi$phi.json" --data "$data/abalone.csv" --label label --label-groups "0-5,6,7,8,9,10,11-12,13-" \
        --one-hot sex --scale standard --clusters-per-client 3..5 --phi $phi "${common[@]}"
      run "b-satellite-phi$phi.json" --data "$data/satellite.csv" --label label --scale standard \
        --clusters-per-client 2..4 --phi $phi "${common[@]}"
    done
    ;;
  *)
    echo "unknown part $part (use a or b)" >&2
    exit 2
    ;;
  esac
done
rm -f "$out/.stderr"
