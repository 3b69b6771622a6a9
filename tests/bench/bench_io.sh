#!/bin/bash
# Out-of-core throughput against the storage's floor, side by side in one run.
#   tests/bench/bench_io.sh [BUILD [ROWS COLS [RANKS [REPS [TYPE]]]]]
# (default build/, 32768 x 32768 float32 = 4 GiB, 1 rank, 3 repetitions).
# XPOSE_BENCH_LAUNCH overrides the launcher (default: mpirun -q -n RANKS);
# XPOSE_BENCH_ARGS adds options to every xpose run (--backend, --mpi-hint);
# XPOSE_BENCH_GEN_ARGS to xpose-gen's (a chunked, compressed input:
# "--layout chunked=256x256 --filter gzip=1");
# XPOSE_BENCH_VARIANTS picks the variants (default: dd-read dd-write
# dd-both cp+sync no-verify default small mpi-io); XPOSE_BENCH_SIMPLE sets
# the simple transpose's band height and threads (default "4096 8");
# OOC_IO names a build of ../shared/device/ooc_io.c (square shapes).
#
# Every run starts with the input and any old output evicted from the page
# cache (posix_fadvise DONTNEED, through dd: no root needed), and the variants are
# interleaved, repetition by repetition:
#   dd-read      the disk reading the input alone (dd, 16 MiB requests)
#   dd-write     the disk writing as many bytes alone (dd from /dev/zero, then sync)
#   dd-both      both at once: the disk's limit for reading one file while
#                writing another
#   cp+sync      the floor: read and write the same bytes (cp, then sync the copy)
#   simple       the simplest raw transpose of the same bytes (simple_transpose.c:
#                row bands read, transposed by threads, each output row's piece
#                written into the page cache, one fsync), its time split shown
#   ooc_io       ../shared/device/ooc_io.c's transpose of a raw file of the same
#                size (OOC_IO; made once by `ooc_io gen`), as the issue measured it
#   h5repack     HDF5's own copy of the file, no transpose (then sync)
#   no-verify    xpose at its default budget, publishing without a read-back
#   small        xpose --no-verify with a budget 64x smaller than the data
#   sequential   xpose --no-verify with XPOSE_IO_THREAD=0: no overlap
#   mpi-io       xpose --no-verify --io mpi-io: HDF5's collective path
#   env:K=V,...  xpose --no-verify with these environment variables
#   default      xpose as users run it: the output read back before publishing
#   env-default:K=V,...  the same with these environment variables
#   opts:A,B     xpose --no-verify A B (options, comma-separated)
#   other:V      variant V (no-verify, default, opts:...) with the xpose of
#                the build XPOSE_BENCH_OTHER names: another version, interleaved
# Rates are 2 x bytes / time (dd-read and dd-write: bytes / time); "of
# cp+sync" and "of dd-both" are those runs' times over the variant's.
# Every output is checked, not timed: xpose's with `xpose verify`, the raw
# transposes' by sampling.  xpose runs with --verbose: each run's time
# split follows the table.
set -euo pipefail
build="$(cd "${1:-build}" && pwd)" rows="${2:-32768}" cols="${3:-32768}" ranks="${4:-1}"
reps="${5:-3}" type="${6:-f32}"
dir="$(mktemp -d "${TMPDIR:-/var/tmp}/xpose-bench-XXXXXX")"
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
read -r -a launch <<<"${XPOSE_BENCH_LAUNCH:-mpirun -q -n $ranks}"
read -r -a extra <<<"${XPOSE_BENCH_ARGS:-}"
read -r -a gen_extra <<<"${XPOSE_BENCH_GEN_ARGS:-}"
read -r -a variants <<<"${XPOSE_BENCH_VARIANTS:-dd-read dd-write dd-both cp+sync no-verify default small mpi-io}"
case "$type" in i8 | u8) es=1 ;; i16 | u16) es=2 ;; f32 | i32 | u32) es=4 ;; *) es=8 ;; esac
bytes=$((rows * cols * es))
small_budget=$((bytes / 64))
. "$(dirname "$0")/evict.sh"
read -r -a simple <<<"${XPOSE_BENCH_SIMPLE:-4096 8}"
xpose_build="$build"
xpose() { "${launch[@]}" "$xpose_build/xpose" --verbose "${extra[@]}" "$@" "$dir/in.h5" "$dir/out.h5"; }
zeros() { dd if=/dev/zero of="$1" bs=16M count=$(((bytes + (16 << 20) - 1) >> 24)) status=none && sync "$1"; }
run_variant() {
  case "$1" in
    dd-read) dd if="$dir/in.h5" of=/dev/null bs=16M status=none ;;
    dd-write) zeros "$dir/out.h5" ;;
    dd-both) dd if="$dir/in.h5" of=/dev/null bs=16M status=none & zeros "$dir/out.h5" && wait ;;
    cp+sync) cp "$dir/in.h5" "$dir/out.h5" && sync "$dir/out.h5" ;;
    simple) "$build/tests/bench/simple_transpose" "$dir/in.h5" /m "$dir/out.h5" "${simple[@]}" ;;
    ooc_io) "$OOC_IO" xpose "$dir/in.raw" "$dir/out.h5" "$rows" "${simple[0]}" 1 "${simple[1]}" 1 buffered ;;
    h5repack) h5repack "$dir/in.h5" "$dir/out.h5" && sync "$dir/out.h5" ;;
    no-verify) xpose --no-verify ;;
    small) xpose --no-verify --memory "$small_budget" ;;
    sequential) XPOSE_IO_THREAD=0 xpose --no-verify ;;
    mpi-io) xpose --no-verify --io mpi-io ;;
    env:*) IFS=, read -r -a vars <<<"${1#env:}" && env "${vars[@]}" "${launch[@]}" \
      "$build/xpose" --verbose "${extra[@]}" --no-verify "$dir/in.h5" "$dir/out.h5" ;;
    default) xpose ;;
    env-default:*) IFS=, read -r -a vars <<<"${1#env-default:}" && env "${vars[@]}" "${launch[@]}" \
      "$build/xpose" --verbose "${extra[@]}" "$dir/in.h5" "$dir/out.h5" ;;
    opts:*) IFS=, read -r -a opts <<<"${1#opts:}" && xpose --no-verify "${opts[@]}" ;;
    other:*) xpose_build="$XPOSE_BENCH_OTHER" run_variant "${1#other:}"; xpose_build="$build" ;;
  esac
}

"${launch[@]}" "$build/xpose-gen" --quiet "${gen_extra[@]}" --type "$type" "$rows" "$cols" "$dir/in.h5:/m"
case " ${variants[*]} " in *" ooc_io "*) "$OOC_IO" gen "$dir/in.raw" "$rows" >/dev/null ;; esac
echo "# $(date +%F), $(hostname), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB;" \
  "$rows x $cols $type ($((bytes >> 20)) MiB) ${gen_extra[*]:-contiguous}, ${launch[*]}, ${extra[*]:-no extra options}," \
  "$reps repetitions; storage: $(df -h --output=source,fstype "$dir" | tail -1 | tr -s ' ')"
declare -A total runs
splits=()
for rep in $(seq "$reps"); do
  for v in "${variants[@]}"; do
    rm -f "$dir/out.h5"
    evict "$dir/in.h5" "$dir/in.raw"
    t0=$(date +%s.%N)
    run_variant "$v" >"$dir/log" 2>&1 || { cat "$dir/log"; exit 1; }
    t1=$(date +%s.%N)
    total[$v]=$(awk "BEGIN {print ${total[$v]:-0} + $t1 - $t0}")
    runs[$v]=$((${runs[$v]:-0} + 1))
    echo "# rep $rep: $v $(awk "BEGIN {print $t1 - $t0}") s" >&2
    split=$(grep -hE "^simple_transpose|time on rank 0|read back and verified|set-up|partial output made|rank 0 before|the passes:|GB/s" "$dir/log" || true)
    [ -z "$split" ] || splits+=("$v, rep $rep: $(echo "$split" | sed 's/^xpose: //' | tr '\n' ' ')")
    case "$v" in
      dd-* | cp+sync | h5repack) ;;
      simple) "$build/tests/bench/simple_transpose" --check "$dir/in.h5" /m "$dir/out.h5" ;;
      ooc_io) "$OOC_IO" check "$dir/out.h5" "$rows" ;;
      *) "${launch[@]}" "$build/xpose" verify --quiet "$dir/in.h5" "$dir/out.h5" ;;
    esac
  done
done
echo
echo "| variant | time (s) | GB/s | of cp+sync | of dd-both |"
echo "|---|---|---|---|---|"
floor=$(awk "BEGIN {print ${total[cp+sync]:-0} / ${runs[cp+sync]:-1}}")
both=$(awk "BEGIN {print ${total[dd-both]:-0} / ${runs[dd-both]:-1}}")
declare -A shown
for v in "${variants[@]}"; do
  [ -z "${shown[$v]:-}" ] || continue
  shown[$v]=1
  awk -v v="$v" -v total="${total[$v]}" -v reps="${runs[$v]}" -v bytes="$bytes" -v floor="$floor" \
    -v both="$both" 'BEGIN {
    mean = total / reps
    moved = v == "dd-read" || v == "dd-write" ? bytes : 2 * bytes
    share = floor > 0 ? sprintf("%.0f%%", 100 * floor / mean) : "-"
    share_both = both > 0 ? sprintf("%.0f%%", 100 * both / mean) : "-"
    printf("| %s | %.2f | %.2f | %s | %s |\n", v, mean, moved / mean / 1e9, share, share_both) }'
done
echo
for line in "${splits[@]}"; do echo "- $line"; done
