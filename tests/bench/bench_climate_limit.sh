#!/bin/bash
# Issue 24's larger-than-memory case: the climate file grown to about
# 4 GiB of tas, rearranged whole (--dims lat,lon,time) under a memory
# limit, against ncpdq under the same limit.
#   tests/bench/bench_climate_limit.sh [BUILD [RANKS [TIMES [LIMIT]]]]
# (default build/, 2 ranks, 19400 time steps of 192 x 288: 4.0 GiB of tas,
# limit 2G).  Each tool runs in a cgroup (v1 memory controller, or v2)
# whose memory limit is LIMIT, as a Slurm job's is; the table gives its exit
# status, time, the largest resident memory of one process (GNU time; for
# xpose its largest rank) and the cgroup's peak, which counts the page
# cache the writes fill (reclaimable) too.  xpose reads the limit as its
# default budget (tool/process/node_memory.c) and its output is checked with
# `xpose verify`.  Needs root (cgroups) and about 3 x the file's size on disk.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" ranks="${2:-2}" times="${3:-19400}" limit="${4:-2G}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-climate-limit-XXXXXX")"
if [ -d /sys/fs/cgroup/memory ]; then
  cgroup=/sys/fs/cgroup/memory/xpose-bench-$$ limit_file=memory.limit_in_bytes
  peak_file=memory.max_usage_in_bytes
else
  cgroup=/sys/fs/cgroup/xpose-bench-$$ limit_file=memory.max peak_file=memory.peak
fi
trap 'rm -rf "$dir"; rmdir "$cgroup" 2>/dev/null || true' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir "$cgroup"
bytes=$(numfmt --from=iec "$limit")
echo "$bytes" > "$cgroup/$limit_file"
. "$here/evict.sh"
/usr/bin/python3 "$here/make_climate.py" "$dir/in.nc" "$times" 192 288
limited() {  # name, command...: runs it in the cgroup, appends a table row
  local name="$1"
  shift
  rm -f "$dir/out.nc"
  evict "$dir/in.nc"
  # a fresh peak: v1 resets on a write, v2 counts from the group's start
  echo 0 > "$cgroup/$peak_file" 2>/dev/null || true
  local t0 t1 status=0
  rm -f "$dir"/time.*
  t0=$(date +%s.%N)
  bash -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$cgroup" "$@" > "$dir/$name.log" 2>&1 ||
    status=$?
  t1=$(date +%s.%N)
  local peak rss
  peak=$(cat "$cgroup/$peak_file" 2>/dev/null || echo 0)
  rss=$(cat "$dir"/time.* 2>/dev/null | grep -E '^[0-9]+$' | sort -n | tail -1)
  local outcome="exit $status"
  [ "$status" -eq 137 ] && outcome="$outcome (killed: out of memory)"
  [ "$status" -ne 0 ] && [ "$status" -ne 137 ] &&
    outcome="$outcome: $(grep -m1 -iE 'error' "$dir/$name.log" | cut -c1-80 || true)"
  echo "| $name | $outcome | $(awk "BEGIN {printf \"%.1f\", $t1 - $t0}") |" \
    "$(( ${rss:-0} / 1024 )) | $((peak / 1048576)) |" >> "$dir/results"
  echo "# $(tail -1 "$dir/results")" >&2
  return 0
}
gnu_time() { /usr/bin/time -f %M -o "$dir/time.$$.$RANDOM" "$@"; }
export -f gnu_time
export dir
limited ncpdq /usr/bin/time -f %M -o "$dir/time.0" ncpdq -O -a lat,lon,time "$dir/in.nc" \
  "$dir/out.nc"
limited xpose mpirun -q -n "$ranks" bash -c 'gnu_time "$0" "$@"' "$build/xpose" --quiet \
  --dims lat,lon,time "$dir/in.nc" "$dir/out.nc"
if [ -f "$dir/out.nc" ]; then
  mpirun -q -n "$ranks" "$build/xpose" verify --quiet --dims lat,lon,time "$dir/in.nc" \
    "$dir/out.nc" && echo "# xpose's output verified" >&2
fi
echo
echo "# $(date +%F), $(hostname), $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GiB;" \
  "tas $times x 192 x 288 float32 ($(du -m "$dir/in.nc" | cut -f1) MB file), memory limit" \
  "$limit, $ranks xpose ranks"
echo "| tool | outcome | time (s) | largest RSS (MiB) | cgroup peak, page cache too (MiB) |"
echo "|---|---|---|---|---|"
cat "$dir/results"
