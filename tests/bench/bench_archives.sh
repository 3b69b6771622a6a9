#!/bin/bash
# Climate archives as they are (issue 42): the files of its table, made
# here, and the tools people use on them, side by side in one command.
#   tests/bench/bench_archives.sh [BUILD [REPS]]     (default build/, 3)
# Files (make_climate.py: time unlimited, one time step per chunk, shuffle
# + zlib 4; FILES picks some, e.g. FILES="tas95 matrix"):
#   tas95   tas 1461 x 90 x 180 (95 MB of float32)
#   tas323  tas 1461 x 192 x 288 (323 MB)
#   taspr   tas and pr 730 x 180 x 360 (2 x 189 MB)
#   matrix  an 8000 x 12000 float64 HDF5 matrix, shuffle + gzip 4 in
#           250 x 500 chunks (768 MB)
#   rechunk tas323 rechunked to time/1461,lat/16,lon/16, its axes in place
#   classic, offset64  tas95 as netCDF-3 classic and 64-bit offset files
#           (nccopy -k), against tas95 itself
# Runs, interleaved over REPS, every file evicted before every run:
#   ncpdq         ncpdq -a lat,lon,time (the netCDF files; the baseline)
#   h5repack      h5repack -l m:CHUNK=500x250: recompressing the matrix
#                 without transposing it (its baseline)
#   nccopy        nccopy -c time/1461,lat/16,lon/16 (rechunk's baseline)
#   h5repack-l    h5repack -l tas:CHUNK=1461x16x16 (the same, by HDF5)
#   xpose-1       xpose --dims lat,lon,time (the matrix: transposed;
#                 rechunk: --chunks time/1461,lat/16,lon/16), 1 rank on
#                 every core (mpirun --bind-to none)
#   xpose-2       the same, 2 ranks
#   xpose-2-nv    the same, 2 ranks, --no-verify
#   nc4-1, nc4-2  xpose --dims lat,lon,time on tas95.nc, 1 and 2 ranks: the
#                 baselines of the netCDF-3 files' xpose-1 and xpose-2
# Every output is compared value by value with numpy's transpose of the
# input (rechunk: with the input, and its chunks checked) after its run
# (not timed).  Prints a table: mean time, its ratio to
# the file's baseline (the netCDF-3 files' xpose-N: to nc4-N).
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" reps="${2:-3}"
files="${FILES:-tas95 tas323 taspr matrix rechunk classic offset64}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-archives-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
. "$here/evict.sh"
py=/usr/bin/python3 # Debian's, with h5py and netCDF4

make_file() { # name
  case "$1" in
    tas95) $py "$here/make_climate.py" "$dir/tas95.nc" 1461 90 180 ;;
    tas323) $py "$here/make_climate.py" "$dir/tas323.nc" 1461 192 288 ;;
    rechunk) [ -e "$dir/tas323.nc" ] || make_file tas323 ;;
    classic | offset64)
      [ -e "$dir/tas95.nc" ] || make_file tas95
      nccopy -k "$([ "$1" = classic ] && echo classic || echo 64-bit-offset)" "$dir/tas95.nc" \
        "$dir/$1.nc" ;;
    taspr) $py "$here/make_climate.py" "$dir/taspr.nc" 730 180 360 tas,pr ;;
    matrix) $py - "$dir/matrix.h5" <<'EOF' ;;
import sys, h5py, numpy as np
rng = np.random.default_rng(42)
x = np.linspace(0, 1, 12000)
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("m", (8000, 12000), "f8", chunks=(250, 500), compression="gzip",
                         compression_opts=4, shuffle=True)
    for i in range(0, 8000, 250):
        rows = np.arange(i, i + 250)[:, None]
        d[i:i + 250] = np.sin(rows * 0.01) + np.cos(x * 7)[None, :] + rng.normal(0, 0.01, (250, 12000))
EOF
  esac
}

input_of() { # file, run
  case "$1/${2:-}" in
    matrix/*) echo "$dir/matrix.h5" ;;
    rechunk/*) echo "$dir/tas323.nc" ;;
    classic/nc4-* | offset64/nc4-*) echo "$dir/tas95.nc" ;;
    *) echo "$dir/$1.nc" ;;
  esac
}
output_of() { case "$1" in matrix) echo "$dir/out.h5" ;; *) echo "$dir/out.nc" ;; esac; }
runs_of() {
  case "$1" in
    matrix) echo h5repack xpose-1 xpose-2 xpose-2-nv ;;
    rechunk) echo nccopy h5repack-l xpose-1 xpose-2 xpose-2-nv ;;
    classic | offset64) echo nc4-1 xpose-1 nc4-2 xpose-2 ;;
    *) echo ncpdq xpose-1 xpose-2 xpose-2-nv ;;
  esac
}

run() { # file, run: the command, its output at output_of's
  local in out dims=(--dims lat,lon,time)
  in="$(input_of "$1" "$2")" out="$(output_of "$1")"
  [ "$1" != matrix ] || dims=()
  [ "$1" != rechunk ] || dims=(--chunks time/1461,lat/16,lon/16)
  case "$2" in
    ncpdq) ncpdq -O -a lat,lon,time "$in" "$out" ;;
    h5repack) h5repack -l m:CHUNK=500x250 "$in" "$out" ;;
    nccopy) nccopy -c time/1461,lat/16,lon/16 "$in" "$out" ;;
    h5repack-l) h5repack -l tas:CHUNK=1461x16x16 "$in" "$out" ;;
    xpose-1) mpirun -q --bind-to none -n 1 "$build/xpose" --quiet "${dims[@]}" "$in" "$out" ;;
    xpose-2) mpirun -q -n 2 "$build/xpose" --quiet "${dims[@]}" "$in" "$out" ;;
    xpose-2-nv) mpirun -q -n 2 "$build/xpose" --quiet --no-verify "${dims[@]}" "$in" "$out" ;;
    nc4-1) mpirun -q --bind-to none -n 1 "$build/xpose" --quiet "${dims[@]}" "$dir/tas95.nc" "$out" ;;
    nc4-2) mpirun -q -n 2 "$build/xpose" --quiet "${dims[@]}" "$dir/tas95.nc" "$out" ;;
  esac
}

check() { # file, run: the output against numpy (netCDF-3 files: against tas95.nc, h5py's)
  $py - "$(input_of "$1" nc4-)" "$(output_of "$1")" "$2" "$1" <<'EOF'
import sys, h5py, numpy as np
src, out, how, name = sys.argv[1:]
with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
    names = ["m"] if "m" in a else [n for n in ("tas", "pr") if n in a]
    for n in names:
        x, y = a[n][...], b[n][...]
        same = how == "h5repack" or name == "rechunk"
        want = x if same else x.T if n == "m" else x.transpose(1, 2, 0)
        if not np.array_equal(want, y) or not np.any(y):
            sys.exit(f"{how}: {out}:/{n} is not the transpose of {src}:/{n}")
        if name == "rechunk" and b[n].chunks != (1461, 16, 16):
            sys.exit(f"{how}: {out}:/{n} has chunks {b[n].chunks}, not 1461 x 16 x 16")
EOF
}

for name in $files; do make_file "$name"; done
: > "$dir/results"
for rep in $(seq "$reps"); do
  for name in $files; do # (not f: evict's loop sets f)
    for r in $(runs_of "$name"); do
      rm -f "$(output_of "$name")"
      evict "$(input_of "$name" "$r")"
      t0=$(date +%s.%N)
      run "$name" "$r" > "$dir/log" 2>&1 || { cat "$dir/log" >&2; exit 1; }
      t1=$(date +%s.%N)
      check "$name" "$r"
      echo "$name $r $(awk "BEGIN {print $t1 - $t0}")" | tee -a "$dir/results" >&2
    done
  done
done

echo
echo "# $(date +%F), $(hostname), $(nproc) cores, $reps repetitions, xpose $(git -C "$here" describe --always --dirty 2>/dev/null || echo '?')"
echo "| file | run | time (s) | of the baseline's |"
echo "|---|---|---|---|"
awk -v files="$files" '
  { n[$1 " " $2]++; t[$1 " " $2] += $3; order[$1] = order[$1] (order[$1] ? " " : "") $2 }
  END {
    split(files, fs, " ")
    for (i = 1; i in fs; i++) {
      f = fs[i]; split(order[f], rs, " "); first = f " " rs[1]
      for (j = 1; j in rs; j++) {
        k = f " " rs[j]
        if (seen[k]++) continue
        b = rs[j] ~ /^xpose-[12]$/ && (f " nc4-" substr(rs[j], 7)) in n ? f " nc4-" substr(rs[j], 7) : first
        printf("| %s | %s | %.2f | %.2f |\n", f, rs[j], t[k] / n[k], t[k] / n[k] / (t[b] / n[b]))
      }
    }
  }' "$dir/results"
