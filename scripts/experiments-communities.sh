#!/usr/bin/env bash
# Reruns the community anomaly-detection experiments of EXPERIMENTS.md
# (issue 13, items 6 and 9) with `fedmix communities` and writes one JSON file
# per run to bench/results/communities/ (the text tables beside it, .txt),
# plus commands.txt (every command with its wall time, the fedmix version and
# commit). A run whose JSON is already there is skipped, so an interrupted
# grid resumes.
#
# usage: bash scripts/experiments-communities.sh [a|b|c|d|e ...]   (default: a b c e)
#   every run: the paper's public pipeline (OneClassSVM nu 0.5, gamma 'auto',
#   pyod's contamination threshold; fast greedy; autoencoder 64-32-64 by FedAvg),
#   d = 0.1, q = 0.08 and 0.06, local baseline up to 40 epochs with early
#   stopping on 10% (the paper's code), seed 1
#   a: Fashion-MNIST, p = 9 (90 clients of 666 rows), 10 FedAvg rounds of one epoch
#   b: letter.csv (26 letters, 80/20 split), p = 3 and 9, 10 rounds (the paper's budget)
#   c: letter.csv, p = 3 and 9, 40 rounds (the budget small clients need)
#   d: Fashion-MNIST, p = 18, 27, 36 (Tables III/IV's sweep; 19-34 minutes each here)
#   e: letter.csv, p = 3 and 9, 40 rounds, the GMM detector (one full-covariance
#      component; fedmix's option, sharing mixture parameters instead of rows)
# On the shared 2-core machine a took about an hour (the association of each q
# is its own run: about 25 minutes under load); b and c take minutes.
# FEDMIX_CLI picks the CLI (default dist/cli.cjs), so a copy can run while the
# tree is rebuilt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${FEDMIX_DATASETS:-../shared/datasets}
cli=${FEDMIX_CLI:-dist/cli.cjs}
out=bench/results/communities
mkdir -p "$out"
[ -f "$cli" ] || bash scripts/setup.sh
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(a b c e)

common=(--contamination 0.1 --q 0.08,0.06 --local-epochs 40 --seed 1)
letter=(--data "$data/letter.csv" --label label)

source scripts/experiment-log.sh
run() { # run NAME ARGS...: NAME.json and NAME.txt
  local name=$1
  shift
  if [ -f "$out/$name.json" ]; then
    echo "== $name (done before, skipped)" >&2
    return
  fi
  run_logged "$name" nice -n 5 node "$cli" communities "$@" "${common[@]}" --json "$out/$name.part" >"$out/$name.txt"
  mv "$out/$name.part" "$out/$name.json"
}
start_log 4

for part in "${parts[@]}"; do
  case $part in
  a) run fmnist-p9 --data fashion-mnist --p 9 ;;
  b) for p in 3 9; do run "letter-p$p" "${letter[@]}" --p $p; done ;;
  c) for p in 3 9; do run "letter-p$p-r40" "${letter[@]}" --p $p --rounds 40; done ;;
  d) for p in 18 27 36; do run "fmnist-p$p" --data fashion-mnist --p $p; done ;;
  e) for p in 3 9; do run "letter-p$p-r40-gmm" "${letter[@]}" --p $p --rounds 40 --detector gmm; done ;;
  *) echo "unknown part $part (a, b, c, d or e)" >&2; exit 2 ;;
  esac
done
