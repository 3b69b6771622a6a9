#!/bin/bash
# The daily CF file rechunked into time series as a Zarr store (issue 66):
# xpose to Zarr v2 and v3 with each codec, beside xpose to netCDF-4 and
# xarray + Dask's to_zarr with the same codec and level.
#   tests/bench/bench_zarr.sh [BUILD [RANKS [REPS [TIMES LATS LONS [CODECS]]]]]
# (default build/, 2 ranks, 3 repetitions, 7300 x 90 x 180 daily tas (451
# MiB of float32, make_climate.py: one record a chunk, shuffle + deflate
# 4), codecs "gzip:1 blosc-lz4 blosc-zstd", numcodecs' default levels).
# Every run is `--chunks time/T,lat/16,lon/16` of the whole file (xpose's
# v3 rows of tas alone, --only: v3 has no data type for the file's
# station names), the input evicted before it, interleaved:
#   xpose-nc        mpirun -n RANKS xpose ... OUT.nc (deflate 4 + shuffle, as the input)
#   xpose-vF-CODEC  mpirun -n RANKS xpose --zarr-format F --compressor CODEC ... OUT.zarr
#   dask-CODEC      xarray.open_dataset(IN).load().chunk(...).to_zarr(OUT) (in memory:
#                   chunked lazily, each tile reads the whole file), Dask's threads on
#                   every core, the same compressor (Debian's zarr 2: v2)
# xpose verifies what it wrote before it publishes (in the time); every
# store is read again afterwards and compared with the input (#wrong):
# zarr-python for v2, zarrita (npm, in BUILD/zarrita) for v3.  Each row:
# mean seconds, 2 x bytes / time, the time against Dask's with the same
# codec, peak RSS (GNU time; xpose: its largest rank).
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" ranks="${2:-2}" reps="${3:-3}"
times="${4:-7300}" lats="${5:-90}" lons="${6:-180}"
codecs="${7:-gzip:1 blosc-lz4 blosc-zstd}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-zarr-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
. "$here/mean_rows.sh"
spec="time/$times,lat/16,lon/16"
/usr/bin/python3 "$here/make_climate.py" "$dir/in.nc" "$times" "$lats" "$lons" tas
bytes=$((times * lats * lons * 4))
launch=(mpirun -q -n "$ranks")
gnu_time() { /usr/bin/time -f %M -o "$dir/time.$$.$RANDOM" "$@"; }
export -f gnu_time
export dir

dask_zarr() { # codec
  /usr/bin/time -f %M -o "$dir/time.0" /usr/bin/python3 - "$1" <<EOF
import sys
import dask, numcodecs, xarray as xr
dask.config.set(scheduler="threads", num_workers=$(nproc))
name, _, level = sys.argv[1].partition(":")
compressor = {"gzip": lambda: numcodecs.GZip(int(level or 1)),
              "blosc-lz4": lambda: numcodecs.Blosc("lz4", int(level or 5), numcodecs.Blosc.SHUFFLE),
              "blosc-zstd": lambda: numcodecs.Blosc("zstd", int(level or 3), numcodecs.Blosc.SHUFFLE)}[name]()
ds = xr.open_dataset("$dir/in.nc").load().chunk({"time": -1, "lat": 16, "lon": 16})
ds.to_zarr("$dir/out.zarr", encoding={"tas": {"compressor": compressor, "chunks": ($times, 16, 16)}})
EOF
}

check() { # name: 0 where the store holds the input's tas in time-series chunks, else 1
  case "$1" in
    *-v3-*)
      cp "$here/../zarr/read_v3.mjs" "$build/zarrita/" && mkdir -p "$dir/v3" &&
        node "$build/zarrita/read_v3.mjs" "$dir/out.zarr" "$dir/v3" tas >/dev/null 2>&1 &&
        /usr/bin/python3 -c "
import json, netCDF4, numpy as np
a = netCDF4.Dataset('$dir/in.nc')['tas']; a.set_auto_maskandscale(False)
b = np.fromfile('$dir/v3/tas.bin', '<f4').reshape(a.shape)
meta = json.load(open('$dir/out.zarr/tas/zarr.json'))
print(0 if np.array_equal(a[...], b) and meta['chunk_grid']['configuration']['chunk_shape'] == [$times, 16, 16] else 1)" ||
        echo 1 ;;
    *-nc) echo 0 ;; # read back by xpose before it was published
    *) /usr/bin/python3 -c "
import netCDF4, numpy as np, zarr
a = netCDF4.Dataset('$dir/in.nc')['tas']; a.set_auto_maskandscale(False)
b = zarr.open_group('$dir/out.zarr', 'r')['tas']
print(0 if np.array_equal(a[...], b[...]) and b.chunks == ($times, 16, 16) else 1)" ;;
  esac
}

timed() { # name, command...: appends "name seconds max_rss_kb wrong"
  local name="$1" t0 t1 rss
  shift
  rm -rf "$dir/out.nc" "$dir/out.zarr" "$dir"/time.* "$dir/v3"
  evict "$dir/in.nc"
  t0=$(date +%s.%N)
  "$@" > "$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  rss=$(cat "$dir"/time.* 2>/dev/null | sort -n | tail -1)
  echo "$name $(awk "BEGIN {print $t1 - $t0}") ${rss:-0} $(check "$name")" >> "$dir/results"
}

xpose_run() { # extra options...
  "${launch[@]}" bash -c 'gnu_time "$0" "$@"' "$build/xpose" --quiet --chunks "$spec" "$@"
}

variants=(xpose-nc)
for c in $codecs; do variants+=("xpose-v2-$c" "xpose-v3-$c" "dask-$c"); done
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    case "$v" in
      xpose-nc) timed "$v" xpose_run "$dir/in.nc" "$dir/out.nc" ;;
      xpose-v2-*) timed "$v" xpose_run --zarr-format 2 --compressor "${v#xpose-v2-}" \
        "$dir/in.nc" "$dir/out.zarr" ;;
      xpose-v3-*) timed "$v" xpose_run --zarr-format 3 --only --compressor "${v#xpose-v3-}" \
        "$dir/in.nc:/tas" "$dir/out.zarr" ;;
      dask-*) timed "$v" dask_zarr "${v#dask-}" ;;
    esac
  done
done

echo "# $(date -u +%F), $(uname -n), $(nproc) cores; tas $times x $lats x $lons float32" \
  "($((bytes / 1048576)) MiB), into $spec; xpose on $ranks rank(s), $reps rep(s)"
echo "| run | seconds | 2 x bytes / time | time vs Dask's, same codec | peak RSS | #wrong |"
echo "|---|---|---|---|---|---|"
for v in "${variants[@]}"; do
  read -r name secs rate rss wrong < <(mean_row "$v" "$bytes")
  codec="${name#xpose-v?-}"
  dask=$(mean_seconds "dask-$codec")
  ratio=$([ -n "$dask" ] && [ "$name" != "dask-$codec" ] && awk "BEGIN {printf \"%.2f\", $secs / $dask}" || echo "-")
  echo "| $name | $secs | $rate MB/s | $ratio | $rss MiB | $wrong |"
done
