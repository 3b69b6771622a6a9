#!/bin/bash
# Many files into one time series (issue 57), side by side in one command:
#   tests/bench/bench_join.sh [BUILD [REPS [RANKS]]]   (default build/, 3, 1)
# Files (make_climate.py: tas(time, lat, lon) float32, one record a chunk,
# shuffle + zlib 4; SIZE=TIMES,LATS,LONS changes the shape, default
# 3650,90,180; DAILY=N the number of daily files, default 1000):
#   one     the whole series in one file (the baseline)
#   yearly  the same records as 10 files of a tenth each (ncks -d time)
#   daily   N files of one record each, 90 x 180 (a baseline of its own:
#           one-daily, the same N records in one file)
# Runs, interleaved over REPS, every file evicted before every run:
#   xpose --dims lat,lon,time on RANKS ranks (mpirun --bind-to none), each
#   output compared with the one-file run's (ncrcat + ncpdq's equality is
#   the tests' business: tests/e2e/test_join.py).
# Prints a table: the mean time of each, and its ratio to its baseline.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" reps="${2:-3}" ranks="${3:-1}"
IFS=, read -r times lats lons <<<"${SIZE:-3650,90,180}"
daily="${DAILY:-1000}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-join-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
. "$here/split_records.sh"
py=/usr/bin/python3 # Debian's, with netCDF4

$py "$here/make_climate.py" "$dir/one.nc" "$times" "$lats" "$lons" >/dev/null
split_records "$dir/one.nc" "$times" 10 "$dir/year"
ls "$dir"/year?.nc >"$dir/yearly.txt"
$py "$here/make_climate.py" "$dir/one-daily.nc" "$daily" 90 180 >/dev/null
$py - "$dir" "$daily" <<'EOF'
import sys, netCDF4
d, n = sys.argv[1], int(sys.argv[2])
with netCDF4.Dataset(f"{d}/one-daily.nc") as src, open(f"{d}/daily.txt", "w") as listing:
    for i in range(n):
        path = f"{d}/day{i:05d}.nc"
        with netCDF4.Dataset(path, "w") as nc:
            nc.setncatts({a: src.getncattr(a) for a in src.ncattrs()})
            for name, dim in src.dimensions.items():
                nc.createDimension(name, None if dim.isunlimited() else len(dim))
            for name, v in src.variables.items():
                filters = v.filters() or {}
                chunks = v.chunking()
                w = nc.createVariable(name, v.dtype, v.dimensions, zlib=filters.get("zlib", False),
                                      shuffle=filters.get("shuffle", False),
                                      complevel=filters.get("complevel", 4),
                                      chunksizes=None if chunks == "contiguous" else chunks,
                                      fill_value=getattr(v, "_FillValue", None))
                w.setncatts({a: v.getncattr(a) for a in v.ncattrs() if a != "_FillValue"})
                w[...] = v[i:i + 1] if v.dimensions[:1] == ("time",) else v[...]
        listing.write(path + "\n")
EOF

run() { # name inputs...
  local name="$1" out="$dir/out-$1.nc"
  shift
  evict "$dir"/*.nc # one sync and one drop of the cache for all the files
  rm -f "$out"
  local start end
  start=$(date +%s.%N)
  mpirun -q --bind-to none -n "$ranks" "$build/xpose" -q --dims lat,lon,time "$@" "$out"
  end=$(date +%s.%N)
  echo "$name $(echo "$end - $start" | bc)" >>"$dir/times"
}

same() { # a b: the tas of both equal
  $py - "$1" "$2" <<'EOF'
import sys, netCDF4, numpy as np
with netCDF4.Dataset(sys.argv[1]) as a, netCDF4.Dataset(sys.argv[2]) as b:
    if not np.array_equal(a["tas"][...], b["tas"][...]):
        sys.exit(f"{sys.argv[1]} and {sys.argv[2]} differ")
EOF
}

for rep in $(seq "$reps"); do
  run one "$dir/one.nc"
  run yearly --inputs "$dir/yearly.txt"
  same "$dir/out-one.nc" "$dir/out-yearly.nc"
  run one-daily "$dir/one-daily.nc"
  run daily --inputs "$dir/daily.txt"
  same "$dir/out-one-daily.nc" "$dir/out-daily.nc"
done

echo "# bench_join: $times x $lats x $lons in 1 and 10 files, $daily daily files of 90 x 180;"
echo "# $ranks rank(s), $reps repetitions, $(date -u +%F), $(git -C "$here" describe --always --dirty 2>/dev/null)"
echo "| run | mean (s) | of its baseline |"
echo "|---|---|---|"
mean() { awk -v n="$1" '$1 == n {s += $2; c++} END {printf "%.2f", s / c}' "$dir/times"; }
for pair in one:one yearly:one one-daily:one-daily daily:one-daily; do
  name=${pair%%:*} base=${pair##*:}
  echo "| $name | $(mean "$name") | $(echo "scale=2; $(mean "$name") / $(mean "$base")" | bc)x |"
done
