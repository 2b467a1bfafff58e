#!/usr/bin/env bash
# Reruns the FedGEM experiments of EXPERIMENTS.md with `fedmix fedgem` and writes
# one JSON file per run to bench/results/fedgem/, plus commands.txt (every
# command with its wall time, the fedmix version and commit). Then print the
# tables with
#   node scripts/experiments-fedgem-report.mjs
#
# usage: [RESUME=1] bash scripts/experiments-fedgem.sh [a|b|c ...]   (default: all)
#   a: the sensitivity study on blobs (minimum center distance 2..8 standard
#      deviations; nominal, client-imbalance, cluster-imbalance), phi fixed at 1
#      and tuned, 10 repeats each, against a central GMM with the true K; the
#      known variance sigma^2 = 1 given, as the paper
#   b: abalone (rings grouped as the paper) and satellite, 10 repeats, sigma^2 = 1
#   c: a and b again with sigma^2 estimated federatedly (no --variance): blobs
#      unscaled and standardized, the real data standardized; and standardized
#      blobs with sigma^2 = 1 given (nominal), the trap the estimate removes
# RESUME=1 skips every run whose JSON file is already there (an interrupted
# rerun continues where it stopped; delete the files to rerun them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${FEDMIX_DATASETS:-../shared/datasets}
out=bench/results/fedgem
mkdir -p "$out"
[ -f dist/cli.cjs ] || bash scripts/setup.sh
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(a b c)

common=(--clients 10 --rounds 10 --local-steps 1 --repeats 10 --seed 0)

source scripts/experiment-log.sh
run() { # run NAME.json ARGS...
  local name=$1
  shift
  if [ "${RESUME:-}" = 1 ] && [ -s "$out/$name" ]; then
    echo "== $name: there, skipped (RESUME=1)" >&2
    return
  fi
  run_logged "$name" node dist/cli.cjs fedgem "$@" --json "$out/$name" >/dev/null
}
start_log 3

blobs() { # blobs SETTING DELTA PHI ARGS...: the sensitivity study's command
  local setting=$1 delta=$2 phi=$3
  shift 3
  echo --blobs --blob-clusters 10 --blob-features 2 --blob-samples 300 --min-distance "$delta" \
    --clusters-per-client 3..6 --imbalance "$setting" --phi "$phi" "$@" "${common[@]}"
}
abalone=(--data "$data/abalone.csv" --label label --label-groups "0-5,6,7,8,9,10,11-12,13-" --one-hot sex --scale standard --clusters-per-client 3..5)
satellite=(--data "$data/satellite.csv" --label label --scale standard --clusters-per-client 2..4)

for part in "${parts[@]}"; do
  case $part in
  a)
    for setting in none clients classes; do
      for delta in 2 3 4 5 6 8; do
        for phi in 1 tune; do
          # shellcheck disable=SC2046
          run "a-$setting-d$delta-phi$phi.json" $(blobs "$setting" "$delta" "$phi" --variance 1)
        done
      done
    done
    ;;
  b)
    for phi in 1 tune; do
      run "b-abalone-phi$phi.json" "${abalone[@]}" --variance 1 --phi $phi "${common[@]}"
      run "b-satellite-phi$phi.json" "${satellite[@]}" --variance 1 --phi $phi "${common[@]}"
    done
    ;;
  c)
    for scale in none standard; do
      for setting in none clients classes; do
        for delta in 2 3 4 5 6 8; do
          for phi in 1 tune; do
            # shellcheck disable=SC2046
            run "c-$scale-$setting-d$delta-phi$phi.json" $(blobs "$setting" "$delta" "$phi" --scale "$scale")
          done
        done
      done
    done
    for delta in 2 3 4 5 6 8; do
      for phi in 1 tune; do
        # shellcheck disable=SC2046
        run "c-standard-known-none-d$delta-phi$phi.json" $(blobs none "$delta" "$phi" --scale standard --variance 1)
      done
    done
    for phi in 1 tune; do
      run "c-abalone-phi$phi.json" "${abalone[@]}" --phi $phi "${common[@]}"
      run "c-satellite-phi$phi.json" "${satellite[@]}" --phi $phi "${common[@]}"
    done
    ;;
  *)
    echo "unknown part $part (use a, b or c)" >&2
    exit 2
    ;;
  esac
done
rm -f "$out/.stderr"
