#!/bin/bash
# An archive larger than the budget rechunked into time series (issue 65):
# xpose at several budgets beside nccopy -c and, where its source is given,
# pangeo's rechunker at the same memory limits.
#   tests/bench/bench_rechunk.sh [BUILD [RANKS [REPS [TIMES LATS LONS [VARIABLES [BUDGETS]]]]]]
# (default build/, 1 rank, 3 repetitions, 7300 x 90 x 180 daily tas: 451 MiB
# of float32, "tas" (or "tas,pr": two variables), budgets "1G 256M 128M
# 64M 28M").  make_climate.py writes the CF file (one record a chunk,
# shuffle + deflate 4); every run is `--chunks time/T,lat/16,lon/16` of the
# whole file, each file evicted before it, interleaved:
#   xpose-B      mpirun -n RANKS xpose --memory B (one rank: --bind-to none, every core)
#   nccopy       nccopy -c time/T,lat/16,lon/16 (one process, netCDF-C)
#   rechunker-B  rechunker's rechunk of the variables of a Zarr copy of the
#                file (made once, shuffle + zlib 4 as the file), max_mem B,
#                the same codec out; only where RECHUNKER_SRC names a folder
#                holding its package (its source from the search tool's
#                fetch runs on Debian's python3-dask and python3-zarr)
# Each row: mean seconds, 2 x bytes / time, the ratio to the first xpose
# row's rate, the largest resident memory of one process (GNU time; for
# xpose the largest rank) against the budget, and the rows whose output
# differs (#wrong): xpose's checked by `xpose verify`, the others' by
# numpy against the input.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" ranks="${2:-1}" reps="${3:-3}"
times="${4:-7300}" lats="${5:-90}" lons="${6:-180}" variables="${7:-tas}"
budgets="${8:-1G 256M 128M 64M 28M}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-rechunk-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
. "$here/mean_rows.sh"
spec="time/$times,lat/16,lon/16"
/usr/bin/python3 "$here/make_climate.py" "$dir/in.nc" "$times" "$lats" "$lons" "$variables"
rechunker=0
if [ -n "${RECHUNKER_SRC:-}" ] && PYTHONPATH="$RECHUNKER_SRC" /usr/bin/python3 -c \
  'import rechunker, zarr, dask' 2>/dev/null; then
  rechunker=1
  /usr/bin/python3 - "$dir/in.nc" "$dir/src.zarr" "$variables" <<'EOF'
import sys
import numcodecs, xarray as xr
ds = xr.open_dataset(sys.argv[1])
enc = {v: {"compressor": numcodecs.Zlib(4), "filters": [numcodecs.Shuffle(4)],
           "chunks": (1, ds.sizes["lat"], ds.sizes["lon"])} for v in sys.argv[3].split(",")}
ds[sys.argv[3].split(",")].to_zarr(sys.argv[2], encoding=enc)
EOF
fi
bytes=$(/usr/bin/python3 -c "print($times * $lats * $lons * 4 * $(echo "$variables" | tr ',' '\n' | wc -l))")

# one rank takes every core (its codec's threads), as Dask's threads do
launch=(mpirun -q -n "$ranks")
[ "$ranks" -ne 1 ] || launch+=(--bind-to none)
gnu_time() { /usr/bin/time -f %M -o "$dir/time.$$.$RANDOM" "$@"; }
export -f gnu_time
export dir
timed() { # name, command...: appends "name seconds max_rss_kb"
  local name="$1" t0 t1 rss
  shift
  rm -rf "$dir/out.nc" "$dir/out.zarr" "$dir/tmp.zarr" "$dir"/time.*
  evict "$dir/in.nc" "$dir"/src.zarr/*/*
  t0=$(date +%s.%N)
  "$@" > "$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  rss=$(cat "$dir"/time.* 2>/dev/null | sort -n | tail -1)
  echo "$name $(awk "BEGIN {print $t1 - $t0}") ${rss:-0} $(check "$name")" >> "$dir/results"
}
check() { # name: 0 where the output holds the input's values, else 1
  case "$1" in
    xpose-*) "${launch[@]}" "$build/xpose" verify --chunks "$spec" "$dir/in.nc" "$dir/out.nc" \
      >/dev/null 2>&1 && echo 0 || echo 1 ;;
    nccopy) /usr/bin/python3 -c "
import sys, netCDF4, numpy as np
a, b = netCDF4.Dataset('$dir/in.nc'), netCDF4.Dataset('$dir/out.nc')
ok = all(np.array_equal(a[v][...], b[v][...]) and b[v].chunking()[1:] == [16, 16]
         for v in '$variables'.split(','))
print(0 if ok else 1)" ;;
    rechunker-*) PYTHONPATH="$RECHUNKER_SRC" /usr/bin/python3 -c "
import netCDF4, numpy as np, zarr
a, b = netCDF4.Dataset('$dir/in.nc'), zarr.open_group('$dir/out.zarr', 'r')
ok = all(np.array_equal(a[v][...], b[v][...]) and b[v].chunks[1:] == (16, 16)
         for v in '$variables'.split(','))
print(0 if ok else 1)" ;;
  esac
}
rechunk_zarr() { # max_mem
  PYTHONPATH="$RECHUNKER_SRC" /usr/bin/time -f %M -o "$dir/time.0" /usr/bin/python3 - "$1" <<EOF
import sys
import dask, numcodecs, zarr
from rechunker import rechunk
dask.config.set(scheduler="threads", num_workers=$(nproc))
src = zarr.open_group("$dir/src.zarr", "r")
names = "$variables".split(",")
target = {v: ($times, 16, 16) for v in names}
opts = {v: {"compressor": numcodecs.Zlib(4), "filters": [numcodecs.Shuffle(4)]} for v in names}
rechunk(src, target, sys.argv[1], "$dir/out.zarr", target_options=opts,
        temp_store="$dir/tmp.zarr").execute()
EOF
}

variants=()
for b in $budgets; do variants+=("xpose-$b"); done
variants+=(nccopy)
[ "$rechunker" -eq 0 ] || for b in $budgets; do variants+=("rechunker-$b"); done
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    case "$v" in
      xpose-*) timed "$v" "${launch[@]}" bash -c 'gnu_time "$0" "$@"' "$build/xpose" \
        --quiet --no-verify --memory "${v#xpose-}" --chunks "$spec" "$dir/in.nc" "$dir/out.nc" ;;
      nccopy) timed "$v" /usr/bin/time -f %M -o "$dir/time.0" nccopy -c "$spec" "$dir/in.nc" \
        "$dir/out.nc" ;;
      rechunker-*) timed "$v" rechunk_zarr "${v#rechunker-}" ;;
    esac
  done
done

echo "# $(date -u +%F), $(uname -n), $(nproc) cores; $variables $times x $lats x $lons float32" \
  "($(awk "BEGIN {printf \"%.0f\", $bytes / 1048576}") MiB), into $spec; $ranks rank(s), $reps rep(s)"
echo "| run | seconds | 2 x bytes / time | rate vs xpose-${budgets%% *} | peak RSS | #wrong |"
echo "|---|---|---|---|---|---|"
first=""
for v in "${variants[@]}"; do
  read -r name secs rate rss wrong < <(mean_row "$v" "$bytes")
  [ -n "$first" ] || first="$rate"
  echo "| $name | $secs | $rate MB/s | $(awk "BEGIN {printf \"%.2f\", $rate / $first}") |" \
    "$rss MiB | $wrong |"
done
