# Sourced by the experiment drivers (scripts/experiments-*.sh), after they set
# $out (the results folder) and $parts (the parts asked for): every run's
# command line and wall time go to $out/commands.txt, under a header naming the
# fedmix version, the commit and the machine, so a result file can be traced.
log="$out/commands.txt"

# A fresh header when the log is new or every part ($1 of them) is rerun; a
# partial rerun appends to the log it extends.
start_log() {
  local stamp
  stamp="fedmix $(node -p "require('./package.json').version"), commit $(git rev-parse HEAD)$(git diff --quiet -- ts crates || echo ' (product code modified!)'), $(date -u +%FT%TZ), $(nproc) cores"
  if [ ! -f "$log" ] || { [ ${#parts[@]} -eq "$1" ] && [ -z "${only:-}" ]; }; then
    {
      echo "# $stamp"
      echo "# name	wall time	command"
    } >"$log"
  else
    # a partial rerun: the lines below it ran at this commit
    echo "# rerun of ${parts[*]}${only:+ for $only}: $stamp" >>"$log"
  fi
}

# run_logged NAME CMD...: runs CMD (its stderr shown only if it fails) and logs it.
# Exit status 3 is fedmix's "finished, and excluded clients": the result is
# written and lists them (a partition can leave a client too few rows), so the
# run counts, and the log says so.
run_logged() {
  local name=$1
  shift
  local t0 t1 status=0
  t0=$(date +%s.%N)
  echo "== $name" >&2
  "$@" 2>"$out/.stderr" || status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
    cat "$out/.stderr" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  printf '%s\t%.1f s\t%s%s\n' "$name" "$(echo "$t1 - $t0" | bc)" "$*" "$([ "$status" -eq 3 ] && printf '\t# exit 3: clients excluded, listed in the result')" >>"$log"
}
