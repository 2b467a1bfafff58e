#!/usr/bin/env bash
# Reruns the FedDistr experiments of EXPERIMENTS.md (issue 14, item 7) with
# `fedmix feddistr` and writes one JSON file per run to bench/results/feddistr/,
# plus commands.txt (every command with its wall time, the fedmix version and
# commit). Then print the tables with
#   node scripts/experiments-feddistr-report.mjs
# A run whose JSON is already there is skipped, so an interrupted grid resumes.
#
# usage: bash scripts/experiments-feddistr.sh [a|b|c|d|e|f|g|h|i|j|k|l|m ...]   (default: a to k, in this order)
#   letter.csv (26 letters as 13 task classes A+B, C+D, ..., identity encoder):
#   a: 5, 10, 20 clients x coefficients 0, 0.003, 0.06, 0.3, 1 (IID); FedDistr
#      (full covariances) against FedAvg, FedProx, SCAFFOLD (100 rounds) and
#      central; 1 repeat (seed 1)
#   b: the grid of a with diagonal covariances, FedDistr only (the baselines'
#      curves do not depend on it: same seeds, same splits and partitions as a)
#   c: privacy noise: 10 clients at coefficients 0 and 0.06, epsilon 1 .. 0.05
#      (clip 40: no letter row is longer), FedDistr only, 1 repeat
#   Fashion-MNIST (10 classes as 5 task classes, an Autoencoder 784-128-16-128-784
#   fitted on 2,000 public rows; 6,000 client rows, 2,000 test rows):
#   d: as a without FedProx (FedAvg's twin at mu 0.01 on letter.csv); with 20
#      clients the 10 subclasses are each shared by two owners, so the least
#      coefficient reachable is above 0 (the JSON reports what was achieved)
#   e: as b for d
#   f: as c for Fashion-MNIST (clip 40: the 99th percentile of the codes' norms is 36.5)
#   letter.csv, longer and repeated:
#   g: 10 clients at coefficients 0, 0.003, 0.06: FedAvg and SCAFFOLD for 500
#      rounds (how many rounds they need to match, past a's 100), 1 repeat
#   h: a's 10-client row with 3 repeats (seeds 1, 1001, 2001: fresh splits and
#      partitions), 100 rounds
#   i: d's 10-client row with 3 repeats (the same rows; the Autoencoder, the
#      partition and every model seeded afresh per repeat)
#   j: a's cell of 10 clients at 0.06 over MQTT (--broker embedded): every
#      client an MQTT client of the embedded broker; compared with a's JSON
#   k: the 10-client rows of a and d with the count-weighted merge of parallel
#      sets (--merge weighted) instead of the dominant member, FedDistr only
#   issue 23's defaults (covariances shrunk by OAS, BIC of the Gaussians
#   uploaded, the sampling-noise bound with complete linkage):
#   l: h and i again (letter and Fashion-MNIST, 10 clients, 3 repeats, the
#      same seeds, splits and partitions), FedDistr and central only: the
#      FedAvg family's curves do not depend on FedDistr, so the rounds they
#      need to reach its new accuracy are read off h's and i's curves
#   m: scikit-learn's 8x8 digits (0+1, 2+3, ... as task classes), 10 clients at
#      coefficients 0, 0.06, 0.3, 1, seeds 1-5, against the central MLP and the
#      scikit-learn/scipy peer (scripts/experiments-feddistr-digits.mjs)
# The grid is sized for a shared 2-core machine (one repeat, 100 rounds; the
# whole of it took about 20 minutes there). Runs one at a time, at nice 5.
# FEDMIX_CLI picks the CLI (default dist/cli.cjs), so a copy can run while the
# tree is rebuilt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${FEDMIX_DATASETS:-../shared/datasets}
cli=${FEDMIX_CLI:-dist/cli.cjs}
out=bench/results/feddistr
mkdir -p "$out"
[ -f "$cli" ] || bash scripts/setup.sh
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(a b c d e f g h i j k)

letter=(--data "$data/letter.csv" --label label --groups "A+B,C+D,E+F,G+H,I+J,K+L,M+N,O+P,Q+R,S+T,U+V,W+X,Y+Z" --seed 1)
fashion=(--data fashion-mnist --fmnist-rows 6000 --public-rows 2000 --test-rows 2000 --latent 16 --seed 1)
coefficients=(0 0.003 0.06 0.3 1)

source scripts/experiment-log.sh
run() { # run NAME.json ARGS...
  local name=$1
  shift
  if [ -f "$out/$name" ]; then
    echo "== $name (done before, skipped)" >&2
    return
  fi
  run_logged "$name" nice -n 5 node "$cli" feddistr "$@" --json "$out/$name.part" >/dev/null
  mv "$out/$name.part" "$out/$name"
}
start_log 11
# a partial rerun says where it ran too
[ ${#parts[@]} -eq 11 ] || echo "# parts ${parts[*]}: fedmix $(node -p "require('./package.json').version"), commit $(git rev-parse HEAD)$(git diff --quiet -- ts crates || echo ' (product code modified!)'), $(date -u +%FT%TZ)" >>"$log"

for part in "${parts[@]}"; do
  case $part in
  a | d)
    if [ "$part" = a ]; then set_=("${letter[@]}" --rounds 100); tag=letter; counts=(10 5 20); else set_=("${fashion[@]}" --rounds 100 --baselines fedavg,scaffold,central); tag=fmnist; counts=(10 5 20); fi
    for clients in "${counts[@]}"; do
      for e in "${coefficients[@]}"; do
        run "$part-$tag-c$clients-e$e.json" "${set_[@]}" --clients $clients --entanglement $e
      done
    done
    ;;
  b | e)
    if [ "$part" = b ]; then set_=("${letter[@]}"); tag=letter; counts=(10 5 20); else set_=("${fashion[@]}"); tag=fmnist; counts=(10 5 20); fi
    for clients in "${counts[@]}"; do
      for e in "${coefficients[@]}"; do
        run "$part-$tag-c$clients-e$e-diag.json" "${set_[@]}" --clients $clients --entanglement $e --covariance diagonal --baselines none
      done
    done
    ;;
  c | f)
    if [ "$part" = c ]; then set_=("${letter[@]}" --clip 40); tag=letter; else set_=("${fashion[@]}" --clip 40); tag=fmnist; fi
    for e in 0 0.06; do
      for eps in 1 0.5 0.2 0.1 0.05; do
        run "$part-$tag-c10-e$e-eps$eps.json" "${set_[@]}" --clients 10 --entanglement $e --noise $eps --baselines none
      done
    done
    ;;
  g)
    for e in 0 0.003 0.06; do
      run "g-letter-c10-e$e-r500.json" "${letter[@]}" --clients 10 --entanglement $e --rounds 500 --baselines fedavg,scaffold --curve 50
    done
    ;;
  h)
    for e in "${coefficients[@]}"; do
      run "h-letter-c10-e$e-x3.json" "${letter[@]}" --clients 10 --entanglement $e --rounds 100 --repeats 3
    done
    ;;
  j)
    run "j-letter-c10-e0.06-mqtt.json" "${letter[@]}" --rounds 100 --clients 10 --entanglement 0.06 --broker embedded
    ;;
  k)
    for e in "${coefficients[@]}"; do
      run "k-letter-c10-e$e-weighted.json" "${letter[@]}" --clients 10 --entanglement $e --merge weighted --baselines none
      run "k-fmnist-c10-e$e-weighted.json" "${fashion[@]}" --clients 10 --entanglement $e --merge weighted --baselines none
    done
    ;;
  i)
    for e in "${coefficients[@]}"; do
      run "i-fmnist-c10-e$e-x3.json" "${fashion[@]}" --clients 10 --entanglement $e --rounds 100 --baselines fedavg,scaffold,central --repeats 3
    done
    ;;
  l)
    for e in "${coefficients[@]}"; do
      run "l-letter-c10-e$e-x3.json" "${letter[@]}" --clients 10 --entanglement $e --baselines central --repeats 3
      run "l-fmnist-c10-e$e-x3.json" "${fashion[@]}" --clients 10 --entanglement $e --baselines central --repeats 3
    done
    ;;
  m)
    for e in 0 0.06 0.3 1; do
      name="m-digits-c10-e$e-x5.json"
      if [ -f "$out/$name" ]; then
        echo "== $name (done before, skipped)" >&2
        continue
      fi
      run_logged "$name" nice -n 5 node scripts/experiments-feddistr-digits.mjs --entanglement $e --json "$out/$name.part" >/dev/null
      mv "$out/$name.part" "$out/$name"
    done
    ;;
  *)
    echo "unknown part $part (use a to m)" >&2
    exit 2
    ;;
  esac
done
rm -f "$out/.stderr"
