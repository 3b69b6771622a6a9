#!/bin/bash
# An hourly year of compressed tas into time series (issue 55), beside the
# simplest program doing the same job and the tools people use, in one
# command:
#   tests/bench/bench_year.sh [BUILD [REPS]]          (default build/, 1)
# The year: make_year.py's CF tas(time, lat, lon) float32, shuffle + zlib 4,
# one record a chunk, time unlimited; YEAR_SHAPE (default "8760 181 360":
# 2.28 GB of values, about 616 MB stored), YEAR_SKELETON a skeleton to copy
# where netCDF4-python is missing (the GPU machine: .device/climate-year.nc).
# Runs (RUNS picks them; every file evicted, drop_caches where root may,
# before each; each output checked after its run, not timed):
#   zproto          ZPROTO (a build of ../shared/device/zproto.c): the floor,
#                   in memory on every core (chunks 9 x 10 x TIMES/3; the
#                   time it prints, before its own sampled check)
#   gpu             xpose --dims lat,lon,time, one rank on the GPU, every core
#                   (mpirun --bind-to none -n 1)
#   host-N          the same on N host ranks (N = 1: --bind-to none)
#   ...-nv          --no-verify
#   ...-small       --memory a sixteenth of the values
#   ...-hdf5        XPOSE_CODEC=hdf5: HDF5's pipeline, as before the codec
#   rechunk-...     --chunks time/TIMES,lat/16,lon/16 instead, axes in place
#   zarr-...        the same rechunk into a Zarr v3 store in shards of
#                   4 x 4 chunks (--shards time/TIMES,lat/64,lon/64),
#                   --verify: every value checked against the input re-read
#                   (no client of v3 stores on the GPU machine)
#   ncpdq           ncpdq -a lat,lon,time (NCO; the transposes' baseline)
#   nccopy          nccopy -c time/TIMES,lat/16,lon/16 (the rechunks' baseline)
#   ncrcat-ncpdq    the year as 12 monthly files (ncks -d, made once, not
#                   timed): ncrcat, then ncpdq, timed together
#   months-...      any xpose run above on those 12 files joined (--inputs);
#                   its baseline the same run on the one file
# Checks: 256 values of every output read through HDF5's own filters by
# h5py, against the input; xpose's outputs also by `xpose verify` (every
# value and attribute; zproto's have no attributes, NCO's their own).
# NCO_PATH: a folder holding ncpdq, nccopy, ncrcat and ncks (default: PATH),
# NCO_LIBRARY_PATH the libraries they alone load (the GPU machine's
# .device/nco.tar.xz: /tmp/nco/lib).
# Prints a table: mean time, its ratio to zproto's and to the baseline's
# (ncpdq, nccopy for rechunks, the one file's run for months-...), and 2 x
# values / time.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" reps="${2:-1}"
here="$(cd "$(dirname "$0")" && pwd)"
read -r times lats lons <<<"${YEAR_SHAPE:-8760 181 360}"
cpus=$(nproc)
runs="${RUNS:-zproto gpu gpu-nv host-$cpus host-$cpus-nv gpu-small rechunk-gpu rechunk-host-$cpus ncpdq nccopy ncrcat-ncpdq}"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-year-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
[ -z "${NCO_PATH:-}" ] || export PATH="$NCO_PATH:$PATH"
nco() { LD_LIBRARY_PATH="${NCO_LIBRARY_PATH:-${LD_LIBRARY_PATH:-}}" "$@"; }
py=python3
/usr/bin/python3 -c "import h5py" 2>/dev/null && py=/usr/bin/python3 # Debian's, where it has h5py
. "$here/evict.sh"
values=$((times * lats * lons * 4))

$py "$here/make_year.py" "$dir/year.nc" "$times" "$lats" "$lons" \
  ${YEAR_SKELETON:+--skeleton "$YEAR_SKELETON"}
if [[ " $runs " == *" ncrcat-ncpdq "* || " $runs " == *" months-"* ]]; then
  for m in $(seq 0 11); do
    nco ncks -O -d "time,$((m * times / 12)),$(((m + 1) * times / 12 - 1))" "$dir/year.nc" \
      "$dir/month$(printf %02d "$m").nc"
  done
  ls "$dir"/month*.nc > "$dir/months.txt"
fi
echo "the year: $times x $lats x $lons float32, $(du -h "$dir/year.nc" | cut -f1) stored" >&2

run() { # name: the command, its output at $dir/out.nc (a store: out.zarr)
  local name="${1#months-}" env=() opts=(--dims lat,lon,time) launch inputs=("$dir/year.nc")
  local output="$dir/out.nc"
  [[ "$1" != months-* ]] || inputs=(--inputs "$dir/months.txt")
  case "$name" in
    zproto) "${ZPROTO:?ZPROTO names a build of zproto.c}" "$dir/year.nc" tas "$dir/out.nc" "$cpus" 9 10 \
      $((times / 3)) 4; return ;;
    ncpdq) nco ncpdq -O -a lat,lon,time "$dir/year.nc" "$dir/out.nc"; return ;;
    nccopy) nco nccopy -c "time/$times,lat/16,lon/16" "$dir/year.nc" "$dir/out.nc"; return ;;
    ncrcat-ncpdq)
      nco ncrcat -O "$dir"/month*.nc "$dir/joined.nc"
      nco ncpdq -O -a lat,lon,time "$dir/joined.nc" "$dir/out.nc"
      rm -f "$dir/joined.nc"
      return ;;
  esac
  [[ "$name" != rechunk-* ]] || opts=(--chunks "time/$times,lat/16,lon/16")
  if [[ "$name" == zarr-* ]]; then
    opts=(--chunks "time/$times,lat/16,lon/16" --shards "time/$times,lat/64,lon/64" --verify)
    output="$dir/out.zarr" name="${name#zarr-}"
  fi
  [[ "$name" != *-nv* ]] || opts+=(--no-verify)
  [[ "$name" != *-small* ]] || opts+=(--memory $((values / 16)))
  [[ "$name" != *-hdf5* ]] || env=(XPOSE_CODEC=hdf5)
  local ranks="${name#rechunk-}"
  ranks="${ranks%%-nv*}" ranks="${ranks%%-small*}" ranks="${ranks%%-hdf5*}"
  case "$ranks" in
    gpu) launch=(mpirun -q --bind-to none -n 1) ;;
    host-1) launch=(mpirun -q --bind-to none -n 1) opts+=(--backend host) ;;
    host-*) launch=(mpirun -q -n "${ranks#host-}") opts+=(--backend host) ;;
    *) echo "unknown run $name" >&2; return 2 ;;
  esac
  env "${env[@]}" "${launch[@]}" "$build/xpose" --verbose "${opts[@]}" "${inputs[@]}" "$output"
}

check() { # name: the output against the year (xpose's every value, the others' a sample)
  local how=(--dims lat,lon,time) order=transposed name="${1#months-}"
  if [[ "$name" == zarr-* ]]; then # checked by the run (--verify), against the input
    grep -q "verified against the input" "$dir/log" && [ -d "$dir/out.zarr" ] && return 0
    echo "$1: not verified" >&2
    return 1
  fi
  if [[ "$name" == rechunk-* || "$name" == nccopy ]]; then how=() order=rechunked; fi
  local against=(--only "$dir/year.nc:/tas") # the months' own attributes: against them
  [[ "$1" != months-* ]] || against=(--inputs "$dir/months.txt")
  [[ "$name" != gpu* && "$name" != host-* && "$name" != rechunk-* ]] ||
    mpirun -q --bind-to none -n 1 "$build/xpose" verify --quiet \
    "${how[@]}" "${against[@]}" "$dir/out.nc" ||
    { echo "$1: xpose verify: not the $order year" >&2; return 1; }
  $py - "$dir/year.nc" "$dir/out.nc" "$order" "$1" "$times" <<'EOF'
import sys, h5py, numpy as np
src, out, order, name, times = sys.argv[1:6]
rng = np.random.default_rng(55)
with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
    x, y = a["tas"], b["tas"]
    T, Y, X = x.shape
    want = (T, Y, X) if order == "rechunked" else (Y, X, T)
    if y.shape != want: sys.exit(f"{name}: shape {y.shape}, not {want}")
    if order == "rechunked" and name != "zproto" and y.chunks != (int(times), 16, 16):
        sys.exit(f"{name}: chunks {y.chunks}")
    for t, i, j in zip(rng.integers(0, T, 256), rng.integers(0, Y, 256), rng.integers(0, X, 256)):
        got = y[t, i, j] if order == "rechunked" else y[i, j, t]
        if got != x[t, i, j]: sys.exit(f"{name}: ({t}, {i}, {j}) reads {got}, not {x[t, i, j]}")
EOF
}

: > "$dir/results"
for rep in $(seq "$reps"); do
  for name in $runs; do
    rm -rf "$dir/out.nc" "$dir/out.zarr"
    evict "$dir/year.nc" "$dir"/month*.nc
    t0=$(date +%s.%N)
    run "$name" > "$dir/log" 2>&1 || { cat "$dir/log" >&2; exit 1; }
    t1=$(date +%s.%N)
    { echo "== $name, repetition $rep"; cat "$dir/log"; } >> "${OUT:-$dir}/year-runs.log"
    check "$name"
    seconds=$(awk "BEGIN {print $t1 - $t0}")
    # zproto's own time: its sampled check after it is not the job
    [ "$name" != zproto ] || seconds=$(sed -n 's/^zproto: \([0-9.]*\) s,.*/\1/p' "$dir/log")
    echo "$name $seconds" | tee -a "$dir/results" >&2
  done
done

echo
echo "# $(date +%F), $(hostname), $cpus cores, the year $times x $lats x $lons, $reps repetition(s), xpose $(git -C "$here" describe --always --dirty 2>/dev/null || echo '?')"
echo "| run | time (s) | of zproto's | of the baseline's | GB/s |"
echo "|---|---|---|---|---|"
awk -v runs="$runs" -v values="$values" '
  { n[$1]++; t[$1] += $2 }
  END {
    split(runs, rs, " ")
    for (i = 1; i in rs; i++) {
      r = rs[i]; if (!(r in n)) continue
      m = t[r] / n[r]
      z = "zproto" in n ? sprintf("%.2f", m / (t["zproto"] / n["zproto"])) : "-"
      b = r ~ /^months-/ ? substr(r, 8) : r ~ /^rechunk-|^zarr-|^nccopy/ ? "nccopy" : "ncpdq"
      base = b in n ? sprintf("%.3f", m / (t[b] / n[b])) : "-"
      printf("| %s | %.2f | %s | %s | %.2f |\n", r, m, z, base, 2 * values / m / 1e9)
    }
  }' "$dir/results"
