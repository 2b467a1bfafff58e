#!/usr/bin/env bash
# Reruns every experiment of EXPERIMENTS.md (the FedGenGMM paper's claims, with
# `fedmix experiment` on the shared datasets) and writes one JSON file per run
# to bench/results/fedgengmm/, plus commands.txt (every command line with its
# wall time, the fedmix version and commit). Then print the tables with
#   node scripts/experiments-fedgengmm-report.mjs
#
# usage: bash scripts/experiments-fedgengmm.sh [k|a|e|f|ftime|h ...]   (default: all)
#        FEDGENGMM_ONLY="anomaly_thyroid anomaly_waveform" bash scripts/experiments-fedgengmm.sh a
#        (only the runs of those datasets: a partial rerun, appended to commands.txt)
# Part h compares the two server steps (sampling and hierarchical EM) on the
# grids of a, e and f, the same local models reaching both; a run of part h
# whose JSON is already there is skipped, so an interrupted part h resumes.
# Settings (the issue's): 20 clients unless varied, 5 repeats, diag covariance,
# H = 100, tol 1e-3, k-means initialization (the CLI's defaults, given explicitly).
# K per dataset from scripts/choose-k.mjs (see EXPERIMENTS.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
data=${FEDMIX_DATASETS:-../shared/datasets}
out=bench/results/fedgengmm
mkdir -p "$out"
[ -f dist/cli.cjs ] || bash scripts/setup.sh
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(k a e f ftime h)

common=(--covariance diag --h 100 --tol 0.001 --repeats 5 --seed 0)
all=fedgengmm,dem-separated,dem-subset,dem-kfed,central,local

# name -> K (chosen by scripts/choose-k.mjs) and how the dataset is used
declare -A K=([letter]=40 [satellite]=20 [shuttle]=15 [anomaly_cardio]=8 [anomaly_thyroid]=10 [anomaly_pendigits]=20 [anomaly_waveform]=10)
class_sets=(letter satellite shuttle)
anomaly_sets=(anomaly_cardio anomaly_thyroid anomaly_pendigits anomaly_waveform)

source scripts/experiment-log.sh
only=${FEDGENGMM_ONLY:-}
run() { # run NAME.json ARGS...
  local name=$1
  shift
  if [ -n "$only" ]; then
    local ds keep=
    for ds in $only; do [[ $name == *-"$ds"-* ]] && keep=1; done
    [ -n "$keep" ] || return 0
  fi
  run_logged "$name" node dist/cli.cjs experiment "$@" --json "$out/$name"
}
# run_once NAME.json ARGS...: run, unless its JSON is there from before
run_once() {
  if [ -f "$out/$1" ]; then
    echo "== $1 (done before, skipped)" >&2
    return
  fi
  run "$@"
}
start_log 6
steps=fedgengmm,fedgengmm-hierarchical

for part in "${parts[@]}"; do
  case $part in
  k) # the validation curves behind K (scripts/choose-k.mjs); the K table above is what they gave
    for ds in "${class_sets[@]}"; do node scripts/choose-k.mjs "$data/$ds.csv" class | tail -1; done >"$out/choose-k.jsonl"
    for ds in "${anomaly_sets[@]}"; do node scripts/choose-k.mjs "$data/$ds.csv" anomaly --shift | tail -1; done >>"$out/choose-k.jsonl"
    ;;
  a) # claims (a)-(d): every method, three heterogeneity levels
    for ds in "${class_sets[@]}"; do
      for alpha in 0.1 0.3 1.0; do
        run "a-$ds-dir$alpha.json" --data "$data/$ds.csv" --label label --partition dirichlet --alpha $alpha \
          --clients 20 --components "${K[$ds]}" --methods $all "${common[@]}"
      done
    done
    for ds in "${anomaly_sets[@]}"; do
      for alpha in 1 2 3; do
        run "a-$ds-shift$alpha.json" --data "$data/$ds.csv" --anomaly-label label --partition shift --alpha $alpha \
          --beta 0.5 --classes 10 --clients 20 --components "${K[$ds]}" --methods $all "${common[@]}"
      done
    done
    ;;
  e) # claim (e): K_c = 5 on the clients, global K = 20; centralized K = 20
    for ds in "${class_sets[@]}"; do
      run "e-$ds-dir0.2.json" --data "$data/$ds.csv" --label label --partition dirichlet --alpha 0.2 \
        --clients 20 --components 20 --client-k-range 5..5 --methods fedgengmm,central "${common[@]}"
    done
    for ds in "${anomaly_sets[@]}"; do
      run "e-$ds-shift1.json" --data "$data/$ds.csv" --anomaly-label label --partition shift --alpha 1 \
        --beta 0.5 --classes 10 --clients 20 --components 20 --client-k-range 5..5 --methods fedgengmm,central "${common[@]}"
    done
    ;;
  f) # claim (f): 20 to 320 clients, as long as the mean client holds at least K training rows
    for ds in "${class_sets[@]}" anomaly_pendigits anomaly_thyroid; do
      for n in 20 40 80 160 320; do
        case $ds in
        letter) rows=6666 ;; satellite) rows=2145 ;; shuttle) rows=19333 ;; anomaly_pendigits) rows=4700 ;; anomaly_thyroid) rows=2575 ;;
        esac
        [ $((rows / n)) -ge "${K[$ds]}" ] || continue
        if [[ $ds == anomaly_* ]]; then
          run "f-$ds-shift1-c$n.json" --data "$data/$ds.csv" --anomaly-label label --partition shift --alpha 1 \
            --beta 0.5 --classes 10 --clients $n --components "${K[$ds]}" --methods fedgengmm,central "${common[@]}"
        else
          run "f-$ds-dir0.2-c$n.json" --data "$data/$ds.csv" --label label --partition dirichlet --alpha 0.2 \
            --clients $n --components "${K[$ds]}" --methods fedgengmm,central "${common[@]}"
        fi
      done
    done
    ;;
  ftime) # claim (f), server time alone: IID clients, so that no client is excluded and |S| = 100 * 15 * clients exactly
    for n in 20 40 80 160 320; do
      run "ftime-shuttle-iid-c$n.json" --data "$data/shuttle.csv" --label label --partition iid \
        --clients $n --components 15 --methods fedgengmm "${common[@]}"
    done
    ;;
  h) # the server steps side by side: sampling (H = 100) against hierarchical EM (N = the training rows), central for reference
    for ds in "${class_sets[@]}"; do
      for alpha in 0.1 0.3 1.0; do
        run_once "h-a-$ds-dir$alpha.json" --data "$data/$ds.csv" --label label --partition dirichlet --alpha $alpha \
          --clients 20 --components "${K[$ds]}" --methods $steps,central "${common[@]}"
      done
    done
    for ds in "${anomaly_sets[@]}"; do
      for alpha in 1 2 3; do
        run_once "h-a-$ds-shift$alpha.json" --data "$data/$ds.csv" --anomaly-label label --partition shift --alpha $alpha \
          --beta 0.5 --classes 10 --clients 20 --components "${K[$ds]}" --methods $steps,central "${common[@]}"
      done
    done
    for ds in "${class_sets[@]}"; do
      run_once "h-e-$ds-dir0.2.json" --data "$data/$ds.csv" --label label --partition dirichlet --alpha 0.2 \
        --clients 20 --components 20 --client-k-range 5..5 --methods $steps "${common[@]}"
    done
    for ds in "${anomaly_sets[@]}"; do
      run_once "h-e-$ds-shift1.json" --data "$data/$ds.csv" --anomaly-label label --partition shift --alpha 1 \
        --beta 0.5 --classes 10 --clients 20 --components 20 --client-k-range 5..5 --methods $steps "${common[@]}"
    done
    for n in 20 80 320; do
      run_once "h-f-shuttle-dir0.2-c$n.json" --data "$data/shuttle.csv" --label label --partition dirichlet --alpha 0.2 \
        --clients $n --components 15 --methods $steps "${common[@]}"
    done
    for n in 20 80 160; do
      run_once "h-f-letter-dir0.2-c$n.json" --data "$data/letter.csv" --label label --partition dirichlet --alpha 0.2 \
        --clients $n --components 40 --methods $steps "${common[@]}"
    done
    # the virtual rows N: 1,000 and 100,000 against the default (the training rows: 6,666, 2,145, 19,333)
    for ds in "${class_sets[@]}"; do
      for nv in 1000 100000; do
        run_once "h-n-$ds-dir0.3-n$nv.json" --data "$data/$ds.csv" --label label --partition dirichlet --alpha 0.3 \
          --clients 20 --components "${K[$ds]}" --methods fedgengmm-hierarchical --virtual-samples $nv "${common[@]}"
      done
    done
    ;;
  *) echo "unknown part $part (k, a, e, f, ftime, h)" >&2; exit 2 ;;
  esac
done
rm -f "$out/.stderr"
echo "done: $out" >&2
