#!/bin/bash
# What publishing safely costs and what resuming saves, on this machine's
# storage, side by side in one run.
#   tests/bench/bench_safety.sh [BUILD [ROWS COLS [RANKS [REPS [MEMORY]]]]]
# (default build/, 16384 x 16384 float32 = 1 GiB, 2 ranks, 3 repetitions,
# --memory 128M: passes to stop between)
#
# Every run starts with the input and any old output evicted from the page
# cache (posix_fadvise DONTNEED), and the variants are interleaved:
#   cp + sync     the storage floor: read and write the same bytes
#   --no-verify   transpose, publish without reading back
#   default       transpose, read the output back from storage, compare
#   --verify      also re-read the input
# Then resume: a clean run's time, against a run stopped (SIGUSR1, the
# batch system's warning) at about half its time plus the --resume run
# that finishes it.  Every output is checked with `xpose verify`.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" rows="${2:-16384}" cols="${3:-16384}" ranks="${4:-2}" reps="${5:-3}" memory="${6:-128M}"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-bench-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
run() { mpirun -q -n "$ranks" "$@"; }
xpose() { run "$build/xpose" --quiet --memory "$memory" "$@"; }
. "$(dirname "$0")/evict.sh"
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }

run "$build/xpose-gen" --quiet --type f32 "$rows" "$cols" "$dir/in.h5:/m"
bytes=$(( rows * cols * 4 ))
echo "# $(date +%F), $(hostname), $(nproc) cores; $rows x $cols float32 ($((bytes >> 20)) MiB), $ranks rank(s), --memory $memory, $reps repetitions; storage: $(df -h --output=source,fstype "$dir" | tail -1)"

declare -A total
variants=(copy no-verify default verify)
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    rm -f "$dir/out.h5"
    evict "$dir/in.h5"
    case "$v" in
      copy) t=$(seconds bash -c "cp '$dir/in.h5' '$dir/out.h5' && sync '$dir/out.h5'") ;;
      no-verify) t=$(seconds xpose --no-verify "$dir/in.h5" "$dir/out.h5") ;;
      default) t=$(seconds xpose "$dir/in.h5" "$dir/out.h5") ;;
      verify) t=$(seconds xpose --verify "$dir/in.h5" "$dir/out.h5") ;;
    esac
    if [ "$v" != copy ]; then run "$build/xpose" verify --quiet "$dir/in.h5" "$dir/out.h5"; fi
    total[$v]=$(echo "${total[$v]:-0} + $t" | bc)
  done
done
echo
echo "| variant | time (s) | GB/s (2 x bytes / time) | / --no-verify |"
echo "|---|---|---|---|"
base=$(echo "${total[no-verify]} / $reps" | bc -l)
for v in "${variants[@]}"; do
  mean=$(echo "${total[$v]} / $reps" | bc -l)
  printf "| %s | %.2f | %.2f | %.2f |\n" "$v" "$mean" "$(echo "2 * $bytes / $mean / 1000000000" | bc -l)" \
    "$(echo "$mean / $base" | bc -l)"
done

# Resume: stop a run at about half its clean time, then finish it.
rm -f "$dir/out.h5"
evict "$dir/in.h5"
clean=$(seconds xpose "$dir/in.h5" "$dir/out.h5")
rm -f "$dir/out.h5"
evict "$dir/in.h5"
t0=$(date +%s.%N)
# mpirun itself, not a shell function's subshell, gets the signal.
mpirun -q -n "$ranks" "$build/xpose" --quiet --memory "$memory" --checkpoint 1 "$dir/in.h5" \
  "$dir/out.h5" 2>/dev/null &
pid=$!
sleep "$(echo "$clean / 2" | bc -l)"
kill -USR1 "$pid"
wait "$pid" || true
t1=$(date +%s.%N)
record=$(tr -d '\0' < "$dir/out.h5.xpose-resume" || true)
done_passes="$(echo "$record" | grep -a '^passes_done' | sort -k2 -n | tail -1 | cut -d' ' -f2) of $(
  echo "$record" | grep -a '^grid' | head -1 | awk '{print $2 * $3}') passes recorded"
evict "$dir/in.h5" "$dir/out.h5.xpose-partial"
resumed=$(seconds xpose --resume "$dir/in.h5" "$dir/out.h5")
run "$build/xpose" verify --quiet "$dir/in.h5" "$dir/out.h5"
first=$(echo "$t1 - $t0" | bc)
echo
echo "| resume | time (s) |"
echo "|---|---|"
printf "| one clean run | %.2f |\n" "$clean"
printf "| stopped at about half (%s) | %.2f |\n" "${done_passes:-?}" "$first"
printf "| --resume to the end | %.2f |\n" "$resumed"
printf "| stopped + resumed, over one clean run | %.2f |\n" "$(echo "($first + $resumed) / $clean" | bc -l)"
printf "| resumed part, over one clean run (a restart from scratch: 1.00) | %.2f |\n" \
  "$(echo "$resumed / $clean" | bc -l)"
