#!/usr/bin/env bash
# Reruns the FedGEM experiments of EXPERIMENTS.md with `fedmix fedgem` and writes
# one JSON file per run to bench/results/fedgem/, plus commands.txt (every
# command with its wall time, the fedmix version and commit). Then print the
# tables with
#   node scripts/experiments-fedgem-report.mjs
#
# usage: [RESUME=1] [FEDMIX_BEFORE=CLI] bash scripts/experiments-fedgem.sh [a|b|c|d ...]   (default: all)
#   a: the sensitivity study on blobs (minimum center distance 2..8 standard
#      deviations; nominal, client-imbalance, cluster-imbalance), phi fixed at 1
#      and tuned, 10 repeats each, against a central GMM with the true K; the
#      known variance sigma^2 = 1 given, as the paper
#   b: abalone (rings grouped as the paper) and satellite, 10 repeats, sigma^2 = 1
#   c: a and b again with sigma^2 estimated federatedly (no --variance): blobs
#      unscaled and standardized, the real data standardized; and standardized
#      blobs with sigma^2 = 1 given (nominal), the trap the estimate removes
#   d: the estimated K on real data at the defaults (issue 23): glass, vowel,
#      vehicle, digits (the UCI sets of scripts/setup.sh, in .datasets/),
#      satellite, letter, abalone and shuttle, with the separation step (the
#      default) and without it (the paper's merge alone), against
#      scikit-learn's central GaussianMixture with K chosen by BIC
#      (scripts/experiments-fedgem-central-bic.py); and the honest clients'
#      exclusions on real partitions (scripts/experiments-fedgem-honest.mjs).
#      With FEDMIX_BEFORE=path/to/dist/cli.cjs of an older build (the commit
#      before the separation step), its runs too, as d-NAME-before.json
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
[ ${#parts[@]} -gt 0 ] || parts=(a b c d)

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
start_log 4

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
  d)
    uci=.datasets
    [ -s "$uci/digits.csv" ] || bash scripts/setup.sh
    # name | file | fedmix fedgem options | repeats | scikit-learn's options
    while IFS='|' read -r name file opts repeats peer; do
      # shellcheck disable=SC2086
      run "d-$name.json" --data "$file" $opts --repeats "$repeats" --seed 0
      # shellcheck disable=SC2086
      run "d-$name-off.json" --data "$file" $opts --repeats "$repeats" --seed 0 --separation off
      if [ -n "${FEDMIX_BEFORE:-}" ] && { [ "${RESUME:-}" != 1 ] || [ ! -s "$out/d-$name-before.json" ]; }; then
        # shellcheck disable=SC2086
        run_logged "d-$name-before.json" node "$FEDMIX_BEFORE" fedgem --data "$file" $opts --repeats "$repeats" --seed 0 --json "$out/d-$name-before.json"
      fi
      if [ "${RESUME:-}" != 1 ] || [ ! -s "$out/d-$name-central-bic.json" ]; then
        # shellcheck disable=SC2086
        run_logged "d-$name-central-bic.json" /usr/bin/python3 scripts/experiments-fedgem-central-bic.py "$out/d-$name-central-bic.json" "$file" $peer
      fi
    done <<SETS
glass|$uci/glass.csv||10|--repeats 5
vowel|$uci/vowel.csv||10|--repeats 5
vehicle|$uci/vehicle.csv|--clusters-per-client 2..3|10|--repeats 5
digits|$uci/digits.csv||10|--repeats 5
satellite|$data/satellite.csv|--clusters-per-client 2..4|10|--repeats 5
abalone|$data/abalone.csv|--label-groups 0-5,6,7,8,9,10,11-12,13- --one-hot sex --clusters-per-client 3..5|10|--label-groups 0-5,6,7,8,9,10,11-12,13- --one-hot sex --repeats 5
letter|$data/letter.csv||5|--repeats 3 --max-k 52 --covariance full
shuttle|$data/shuttle.csv|--clusters-per-client 2..4|5|--repeats 3 --covariance full
SETS
    if [ "${RESUME:-}" != 1 ] || [ ! -s "$out/d-honest.json" ]; then
      run_logged d-honest.json node scripts/experiments-fedgem-honest.mjs "$out/d-honest.json" 3
    fi
    ;;
  *)
    echo "unknown part $part (use a, b, c or d)" >&2
    exit 2
    ;;
  esac
done
rm -f "$out/.stderr"
