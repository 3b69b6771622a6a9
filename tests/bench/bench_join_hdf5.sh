#!/bin/bash
# Inputs joined as HDF5 files (join_h5_view.h), side by side with the same
# run on the one file, in one command:
#   tests/bench/bench_join_hdf5.sh [BUILD [REPS [RANKS]]]   (default build/, 3, 2)
# Files:
#   matrix   one contiguous float32 /m of ROWS x COLS (MATRIX=ROWS,COLS,
#            default 8192,8192: 256 MiB) against the same rows as PARTS
#            files (default 8): --concat /m --axes 1,0
#   grouped  make_climate.py's series (SIZE=TIMES,LATS,LONS, default
#            3650,90,180: tas compressed, one record a chunk) with a group
#            /ocean holding sst(time, lat, lon) beside it, which netCDF-C's
#            join does not take, against the same as 10 yearly files:
#            --dims lat,lon,time
# Runs interleaved over REPS, every file evicted before every run, each
# output checked (xpose verify of the inputs joined, and the joined run's
# rearranged values against the one file's with h5py).
# Prints a table: the mean time of each, and its ratio to its baseline.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" reps="${2:-3}" ranks="${3:-2}"
IFS=, read -r rows cols <<<"${MATRIX:-8192,8192}"
IFS=, read -r times lats lons <<<"${SIZE:-3650,90,180}"
parts="${PARTS:-8}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-join-hdf5-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
. "$here/split_records.sh"
py=/usr/bin/python3 # Debian's, with h5py and netCDF4

$py - "$dir" "$rows" "$cols" "$parts" <<'EOF'
import sys, h5py, numpy as np
d, rows, cols, parts = sys.argv[1], *map(int, sys.argv[2:])
rng = np.random.default_rng(57)
with h5py.File(f"{d}/matrix-one.h5", "w") as one:
    m = one.create_dataset("m", (rows, cols), "<f4")
    edges = np.linspace(0, rows, parts + 1).astype(int)
    for p in range(parts):
        block = rng.random((edges[p + 1] - edges[p], cols), dtype="f4") + 1
        m[edges[p]:edges[p + 1]] = block
        with h5py.File(f"{d}/matrix-{p}.h5", "w") as f:
            f["m"] = block
EOF
$py "$here/make_climate.py" "$dir/grouped-one.nc" "$times" "$lats" "$lons" >/dev/null
split_records "$dir/grouped-one.nc" "$times" 10 "$dir/grouped-"
$py - "$dir" <<'EOF'
import glob, sys, netCDF4, numpy as np
for path in sorted(glob.glob(f"{sys.argv[1]}/grouped-*.nc")):
    with netCDF4.Dataset(path, "a") as nc:
        n = len(nc.dimensions["time"])
        sst = nc.createGroup("ocean").createVariable("sst", "f4", ("time", "lat", "lon"), zlib=True,
                                                     chunksizes=(1, *nc["tas"].shape[1:]))
        sst[:] = nc["tas"][:] + 30
EOF

run() { # name checked-as inputs...: the run, timed; then xpose verify of it
  local name="$1" out="$dir/out-$1.h5"
  shift
  evict "$dir"/*.h5 "$dir"/*.nc
  rm -f "$out"
  local start end
  start=$(date +%s.%N)
  mpirun -q --bind-to none -n "$ranks" "$build/xpose" -q "$@" "$out"
  end=$(date +%s.%N)
  echo "$name $(echo "$end - $start" | bc)" >>"$dir/times"
  mpirun -q --bind-to none -n "$ranks" "$build/xpose" verify -q "$@" "$out"
}

same() { # a b dataset: equal
  $py - "$@" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    if not np.array_equal(a[sys.argv[3]][...], b[sys.argv[3]][...]):
        sys.exit(f"{sys.argv[1]} and {sys.argv[2]} differ")
EOF
}

matrices=$(for p in $(seq 0 $((parts - 1))); do echo "$dir/matrix-$p.h5"; done)
years=$(for y in $(seq 0 9); do echo "$dir/grouped-$y.nc"; done)
for rep in $(seq "$reps"); do
  run matrix-one --axes 1,0 "$dir/matrix-one.h5"
  # shellcheck disable=SC2086 # a path a word
  run matrix --concat /m --axes 1,0 $matrices
  same "$dir/out-matrix-one.h5" "$dir/out-matrix.h5" m
  run grouped-one --dims lat,lon,time "$dir/grouped-one.nc"
  # shellcheck disable=SC2086
  run grouped --dims lat,lon,time $years
  same "$dir/out-grouped-one.h5" "$dir/out-grouped.h5" ocean/sst
  same "$dir/out-grouped-one.h5" "$dir/out-grouped.h5" tas
done

echo "# bench_join_hdf5: $rows x $cols float32 in 1 and $parts files; $times x $lats x $lons"
echo "# (tas, /ocean/sst) in 1 and 10 files; $ranks rank(s), $reps repetitions, $(date -u +%F),"
echo "# $(git -C "$here" describe --always --dirty 2>/dev/null)"
echo "| run | mean (s) | of its baseline |"
echo "|---|---|---|"
mean() { awk -v n="$1" '$1 == n {s += $2; c++} END {printf "%.2f", s / c}' "$dir/times"; }
for pair in matrix-one:matrix-one matrix:matrix-one grouped-one:grouped-one grouped:grouped-one; do
  name=${pair%%:*} base=${pair##*:}
  echo "| $name | $(mean "$name") | $(echo "scale=2; $(mean "$name") / $(mean "$base")" | bc)x |"
done
