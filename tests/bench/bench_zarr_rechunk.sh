#!/bin/bash
# A Zarr store rechunked into a Zarr store of time series (issue 66,
# rechunker's job): xpose beside pangeo's rechunker at the same memory
# limit and with the same codec.
#   RECHUNKER_SRC=DIR tests/bench/bench_zarr_rechunk.sh [BUILD [RANKS [REPS [TIMES LATS LONS [BUDGETS [CODEC]]]]]]
# (default build/, 2 ranks, 3 repetitions, 7300 x 90 x 180 daily tas (451
# MiB of float32, make_climate.py), budgets "256M 64M", codec blosc-lz4,
# zarr-python's default: Blosc lz4 with byte shuffle, level 5; or
# blosc-zstd, level 3).  zarr-python (Debian's zarr 2.13, through xarray)
# writes the input store once: tas one record a chunk, with its
# coordinates.  Every run is the store's tas into `time/T,lat/16,lon/16`
# chunks, a Zarr v2 store with the same codec, the input's chunk files
# evicted before it, interleaved:
#   xpose-B      mpirun -n RANKS xpose --memory B --chunks ... --zarr-format 2 IN.zarr OUT.zarr
#                (the whole store: tas rechunked, its coordinates copied; read back
#                against checksums before it is published, in the time)
#   rechunker-B  rechunker's rechunk of the store's tas, max_mem B, Dask's threads on
#                every core, its intermediate store beside the output (only where
#                RECHUNKER_SRC names a folder holding its package: pangeo-data/rechunker
#                0.5.3's source, from the search tool's fetch, runs on Debian's
#                python3-dask and python3-zarr)
# Each row: mean seconds, 2 x bytes / time, the time against rechunker's at
# the same budget, peak RSS (GNU time; xpose: its largest rank) and #wrong
# (every output store read by zarr-python and compared with the input).
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" ranks="${2:-2}" reps="${3:-3}"
times="${4:-7300}" lats="${5:-90}" lons="${6:-180}" budgets="${7:-256M 64M}"
codec="${8:-blosc-lz4}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-zarr-rechunk-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
. "$here/mean_rows.sh"
spec="time/$times,lat/16,lon/16"
/usr/bin/python3 "$here/make_climate.py" "$dir/in.nc" "$times" "$lats" "$lons" tas
numcodecs_of="import numcodecs
compressor = {'blosc-lz4': numcodecs.Blosc('lz4', 5, numcodecs.Blosc.SHUFFLE),
              'blosc-zstd': numcodecs.Blosc('zstd', 3, numcodecs.Blosc.SHUFFLE)}['$codec']"
/usr/bin/python3 - <<EOF
import xarray as xr
$numcodecs_of
ds = xr.open_dataset("$dir/in.nc")[["tas"]]
ds.to_zarr("$dir/in.zarr", encoding={"tas": {"compressor": compressor, "chunks": (1, $lats, $lons)}})
EOF
rechunker=0
if [ -n "${RECHUNKER_SRC:-}" ] && PYTHONPATH="$RECHUNKER_SRC" /usr/bin/python3 -c \
  'import rechunker, zarr, dask' 2>/dev/null; then
  rechunker=1
fi
bytes=$((times * lats * lons * 4))
gnu_time() { /usr/bin/time -f %M -o "$dir/time.$$.$RANDOM" "$@"; }
export -f gnu_time
export dir

rechunk_store() { # max_mem
  PYTHONPATH="$RECHUNKER_SRC" /usr/bin/time -f %M -o "$dir/time.0" /usr/bin/python3 - "$1" <<EOF
import sys
import dask, zarr
from rechunker import rechunk
$numcodecs_of
dask.config.set(scheduler="threads", num_workers=$(nproc))
src = zarr.open_group("$dir/in.zarr", "r")
rechunk(src, {"tas": ($times, 16, 16)}, sys.argv[1], "$dir/out.zarr",
        target_options={"tas": {"compressor": compressor}}, temp_store="$dir/tmp.zarr").execute()
EOF
}

check() { # 0 where out.zarr holds the input's tas in time-series chunks, else 1
  /usr/bin/python3 -c "
import numpy as np, zarr
a = zarr.open_group('$dir/in.zarr', 'r')['tas']
b = zarr.open_group('$dir/out.zarr', 'r')['tas']
print(0 if np.array_equal(a[...], b[...]) and b.chunks == ($times, 16, 16) else 1)"
}

timed() { # name, command...: appends "name seconds max_rss_kb wrong"
  local name="$1" t0 t1 rss
  shift
  rm -rf "$dir/out.zarr" "$dir/tmp.zarr" "$dir"/time.*
  evict "$dir"/in.zarr/*/*
  t0=$(date +%s.%N)
  "$@" > "$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  rss=$(cat "$dir"/time.* 2>/dev/null | sort -n | tail -1)
  echo "$name $(awk "BEGIN {print $t1 - $t0}") ${rss:-0} $(check)" >> "$dir/results"
}

variants=()
for b in $budgets; do
  variants+=("xpose-$b")
  [ "$rechunker" -eq 0 ] || variants+=("rechunker-$b")
done
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    case "$v" in
      xpose-*) timed "$v" mpirun -q -n "$ranks" bash -c 'gnu_time "$0" "$@"' "$build/xpose" \
        --quiet --memory "${v#xpose-}" --chunks "$spec" --zarr-format 2 --compressor "$codec" \
        "$dir/in.zarr" "$dir/out.zarr" ;;
      rechunker-*) timed "$v" rechunk_store "${v#rechunker-}" ;;
    esac
  done
done

echo "# $(date -u +%F), $(uname -n), $(nproc) cores; a Zarr v2 store of tas $times x $lats x $lons" \
  "float32 ($((bytes / 1048576)) MiB, $codec, one record a chunk) into $spec;" \
  "xpose on $ranks rank(s), $reps rep(s)"
echo "| run | seconds | 2 x bytes / time | time vs rechunker's, same budget | peak RSS | #wrong |"
echo "|---|---|---|---|---|---|"
for v in "${variants[@]}"; do
  read -r name secs rate rss wrong < <(mean_row "$v" "$bytes")
  peer=$(mean_seconds "rechunker-${name#*-}")
  ratio=$([ -n "$peer" ] && [ "${name%%-*}" = xpose ] && awk "BEGIN {printf \"%.2f\", $secs / $peer}" || echo "-")
  echo "| $name | $secs | $rate MB/s | $ratio | $rss MiB | $wrong |"
done
