#!/bin/bash
# Orders of one and two moves (README "N-D datasets"), side by side
# with NCO's ncpdq, on a 4-D CF variable: ta(time, lev, lat, lon) float32,
# one (time, lev) record per chunk, zlib 4 + shuffle, time unlimited.
#   tests/bench/bench_orders.sh [BUILD [RANKS [REPS [TIMES LEVS LATS LONS]]]]
# (default build/, 2 ranks, 2 repetitions, 365 x 8 x 90 x 180: 189 MB of ta).
# Interleaved, the input evicted from the page cache before each run:
#   dims lon,lat        (time, lev, lon, lat): one move, a matrix per (time, lev)
#   dims lat,lon,time   ncpdq's rule, (lat, lev, lon, time): two moves
#   reversed            (lon, lat, lev, time), numpy's .T: two moves, the
#                       first reordering (time, lev) as (lev, time)
# each by ncpdq -a (the variable alone) and by xpose --only (default budget).
# Every output is checked: xpose's with `xpose verify` (value by value
# where the order is several moves), ncpdq's against numpy (neither timed).
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" ranks="${2:-2}" reps="${3:-2}"
times="${4:-365}" levs="${5:-8}" lats="${6:-90}" lons="${7:-180}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-orders-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
/usr/bin/python3 - "$dir/in.nc" "$times" "$levs" "$lats" "$lons" <<'PY'
import sys, netCDF4, numpy as np
path, t, l, y, x = sys.argv[1], *map(int, sys.argv[2:])
rng = np.random.default_rng(25)
with netCDF4.Dataset(path, "w") as nc:
    for name, n in (("time", None), ("lev", l), ("lat", y), ("lon", x)):
        nc.createDimension(name, n)
    ta = nc.createVariable("ta", "f4", ("time", "lev", "lat", "lon"), zlib=True, complevel=4,
                           shuffle=True, chunksizes=(1, 1, y, x))
    field = 250 + 30 * np.cos(np.linspace(-1.5, 1.5, y))[:, None] * np.ones(x)
    for i in range(t):
        ta[i] = (field + rng.normal(0, 1, (l, y, x))).astype("f4")
PY
# name, ncpdq's -a, xpose's order options (none: reversed), numpy's order
cases=("lon,lat|time,lev,lon,lat|--dims lon,lat|0,1,3,2"
       "lat,lon,time|lat,lon,time|--dims lat,lon,time|2,1,3,0"
       "reversed|lon,lat,lev,time||3,2,1,0")
for rep in $(seq "$reps"); do
  for c in "${cases[@]}"; do
    IFS='|' read -r name nco order axes <<< "$c"
    for tool in ncpdq xpose; do
      rm -f "$dir/out.nc"
      evict "$dir/in.nc"
      t0=$(date +%s.%N)
      if [ $tool = ncpdq ]; then
        ncpdq -O -v ta -a "$nco" "$dir/in.nc" "$dir/out.nc"
      else
        # shellcheck disable=SC2086
        mpirun -q -n "$ranks" "$build/xpose" --quiet --only $order "$dir/in.nc:/ta" "$dir/out.nc"
      fi
      t1=$(date +%s.%N)
      echo "$name $tool $(awk "BEGIN {print $t1 - $t0}")" >> "$dir/results"
      echo "# rep $rep: $(tail -1 "$dir/results")" >&2
      if [ $tool = xpose ]; then
        # shellcheck disable=SC2086
        mpirun -q -n "$ranks" "$build/xpose" verify --quiet --only $order "$dir/in.nc:/ta" \
          "$dir/out.nc"
      else
        /usr/bin/python3 -c "
import sys, netCDF4, numpy as np
a = netCDF4.Dataset(sys.argv[1])['ta'][:]
b = netCDF4.Dataset(sys.argv[2])['ta'][:]
sys.exit(0 if np.array_equal(a.transpose($axes), b) else 'ncpdq: not the permutation')" \
          "$dir/in.nc" "$dir/out.nc"
      fi
    done
  done
done
echo
echo "# $(date +%F), $(hostname), $(nproc) cores; ta $times x $levs x $lats x $lons float32" \
  "($(du -m "$dir/in.nc" | cut -f1) MB file), $ranks xpose ranks, $reps repetitions"
echo "| order | moves | ncpdq (s) | xpose (s) | xpose / ncpdq |"
echo "|---|---|---|---|---|"
awk '
  { n[$1 " " $2]++; t[$1 " " $2] += $3; if (!($1 in seen)) { seen[$1] = 1; names[++k] = $1 } }
  END {
    split("1 2 2", moves, " ")
    for (i = 1; i <= k; i++) {
      a = t[names[i] " ncpdq"] / n[names[i] " ncpdq"]; b = t[names[i] " xpose"] / n[names[i] " xpose"]
      printf("| %s | %s | %.2f | %.2f | %.2f |\n", names[i], moves[i], a, b, b / a)
    }
  }' "$dir/results"
