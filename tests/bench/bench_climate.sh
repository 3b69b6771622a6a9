#!/bin/bash
# Climate time slices into time series, side by side with the tools people
# use for it: issue 24's benchmark.
#   tests/bench/bench_climate.sh [BUILD [RANKS [REPS [TIMES LATS LONS]]]]
# (default build/, 2 ranks, 3 repetitions, 1461 x 192 x 288: 323 MB of tas).
# make_climate.py writes a CF-style netCDF-4 file (tas(time, lat, lon)
# float32, one record per chunk, zlib 4 + shuffle; other variables and
# attributes beside it); then, interleaved, every file evicted from the
# page cache before each run:
#   ncpdq-all        ncpdq -a lat,lon,time on the whole file (NCO)
#   ncpdq-tas        the same, tas alone (-v tas)
#   nccopy           nccopy rechunking tas for time series (-c time/T,lat/8,lon/32)
#   xpose            xpose --dims lat,lon,time on the whole file, default budget
#   xpose-zlib       the same, zlib compressing the chunks (XPOSE_DEFLATE=zlib)
#   xpose-128M       the same with --memory 128M
#   xpose-only-128M  the same, tas alone (--only)
# Each row: mean time, its ratios to ncpdq-all's and nccopy's, and the
# largest resident memory of one process (GNU time; for xpose the largest
# rank).  Every xpose output is checked with `xpose verify` (not timed:
# the whole file, or with --only tas alone); ncpdq's with h5py.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" ranks="${2:-2}" reps="${3:-3}"
times="${4:-1461}" lats="${5:-192}" lons="${6:-288}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-climate-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
/usr/bin/python3 "$here/make_climate.py" "$dir/in.nc" "$times" "$lats" "$lons"
timed() {  # name, command...: appends "seconds max_rss_kb" of the run
  local name="$1" log="$dir/time.$1"
  shift
  rm -f "$dir/out.nc" "$dir"/time.*
  evict "$dir/in.nc"
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  local rss
  rss=$(cat "$dir"/time.* 2>/dev/null | sort -n | tail -1)
  echo "$name $(awk "BEGIN {print $t1 - $t0}") ${rss:-0}" >> "$dir/results"
}
gnu_time() { /usr/bin/time -f %M -o "$dir/time.$$.$RANDOM" "$@"; }
export -f gnu_time
export dir
variants=(ncpdq-all ncpdq-tas nccopy xpose xpose-zlib xpose-128M xpose-only-128M)
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    case "$v" in
      ncpdq-all) timed "$v" /usr/bin/time -f %M -o "$dir/time.0" ncpdq -O -a lat,lon,time \
        "$dir/in.nc" "$dir/out.nc" ;;
      ncpdq-tas) timed "$v" /usr/bin/time -f %M -o "$dir/time.0" ncpdq -O -v tas \
        -a lat,lon,time "$dir/in.nc" "$dir/out.nc" ;;
      nccopy) timed "$v" /usr/bin/time -f %M -o "$dir/time.0" nccopy -V tas,lat,lon,time \
        -c "time/$times,lat/8,lon/32" "$dir/in.nc" "$dir/out.nc" ;;
      xpose) timed "$v" mpirun -q -n "$ranks" bash -c 'gnu_time "$0" "$@"' "$build/xpose" \
        --quiet --dims lat,lon,time "$dir/in.nc" "$dir/out.nc" ;;
      xpose-zlib) timed "$v" mpirun -q -n "$ranks" -x XPOSE_DEFLATE=zlib bash -c \
        'gnu_time "$0" "$@"' "$build/xpose" --quiet --dims lat,lon,time "$dir/in.nc" "$dir/out.nc" ;;
      xpose-128M) timed "$v" mpirun -q -n "$ranks" bash -c 'gnu_time "$0" "$@"' "$build/xpose" \
        --quiet --memory 128M --dims lat,lon,time "$dir/in.nc" "$dir/out.nc" ;;
      xpose-only-128M) timed "$v" mpirun -q -n "$ranks" bash -c 'gnu_time "$0" "$@"' \
        "$build/xpose" --quiet --only --memory 128M --dims lat,lon,time "$dir/in.nc" \
        "$dir/out.nc" ;;
    esac
    echo "# rep $rep: $(tail -1 "$dir/results")" >&2
    case "$v" in
      xpose-only*) mpirun -q -n "$ranks" "$build/xpose" verify --quiet --only \
        --dims lat,lon,time "$dir/in.nc" "$dir/out.nc" ;;
      xpose*) mpirun -q -n "$ranks" "$build/xpose" verify --quiet --dims lat,lon,time \
        "$dir/in.nc" "$dir/out.nc" ;;
      ncpdq-tas) /usr/bin/python3 -c "
import sys, h5py, numpy as np
a = h5py.File(sys.argv[1])['tas'][...]
b = h5py.File(sys.argv[2])['tas'][...]
sys.exit(0 if np.array_equal(a.transpose(1, 2, 0), b) else 'ncpdq: not the permutation')" \
        "$dir/in.nc" "$dir/out.nc" ;;
    esac
  done
done
echo
echo "# $(date +%F), $(hostname), $(nproc) cores; tas $times x $lats x $lons float32" \
  "($(du -m "$dir/in.nc" | cut -f1) MB file), $ranks xpose ranks, $reps repetitions"
echo "| variant | time (s) | of ncpdq-all's | of nccopy's | largest RSS (MB) |"
echo "|---|---|---|---|---|"
awk -v order="${variants[*]}" '
  { n[$1]++; t[$1] += $2; if ($3 > m[$1]) m[$1] = $3 }
  END {
    split(order, names, " ")
    ncpdq = t["ncpdq-all"] / n["ncpdq-all"]; nccopy = t["nccopy"] / n["nccopy"]
    for (i = 1; i in names; i++) {
      v = names[i]; mean = t[v] / n[v]
      printf("| %s | %.2f | %.2f | %.2f | %.0f |\n", v, mean, mean / ncpdq, mean / nccopy,
             m[v] / 1024)
    }
  }' "$dir/results"
