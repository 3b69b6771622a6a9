#!/bin/bash
# The multi-GPU sweep: for each shape and element size, xpose-bench
# --distributed on RANKS GPUs (one rank each), NCCL's exchange alone, then
# the NCCL engine's transpose and p2p's as ratios to it (the same bytes, the
# same run; the medians' times divided, to 3 decimals); every transpose
# verified (#wrong counts wrong elements on every rank).  Prints a markdown
# table; each run's log goes to LOGS.
#   tests/bench/bench_gpus.sh BUILD [RANKS [LOGS]]
# SHAPES="RxC:E ..." replaces the sweep (E: bytes per element); ITERS (3)
# the timed runs per row, of which the median is taken.
set -uo pipefail
build=${1:?usage: bench_gpus.sh BUILD [RANKS [LOGS]]}
ranks=${2:-4}
logs=${3:-${OUT:-/tmp}/bench-gpus}
mkdir -p "$logs"
# Strong scaling (one matrix for any number of GPUs), weak scaling (8 GiB
# per GPU on 4: 131072 x 65536, its transpose and the square), odd sizes
# that no tile divides, and 1- to 16-byte elements.
default_shapes="65536x65536:4 65537x65537:1 65537x65537:2 65536x65536:2 65538x65538:4 46341x46341:8
32771x32771:16 98304x65536:4 65536x98304:4 65568x65536:4 131072x65536:4 65536x131072:4
92682x92682:4 262144x131072:1 131072x65536:8"
echo "| shape | elem | GiB per GPU | NCCL alone (ms) | NCCL engine | p2p | #wrong |"
echo "|---|---|---|---|---|---|---|"
for item in ${SHAPES:-$default_shapes}; do
  shape=${item%:*} size=${item#*:}
  log="$logs/$shape-$size.log"
  timeout 600 mpirun -q -n "$ranks" "$build/tests/bench/xpose-bench" --distributed "$shape" \
    --sizes "$size" --iters "${ITERS:-3}" --exchange nccl,p2p > "$log" 2>&1
  rc=$?
  awk -v shape="$shape" -v size="$size" -v ranks="$ranks" -v rc="$rc" '
    function ratio(t) { return t == "" ? "-" : sprintf("%.3f", t / alone) }
    $1 == "nccl" && $2 == "exchange" { alone = $5 }
    $1 == "nccl" && $2 == "transpose" { nccl = $4; wrong += $7 }
    $1 ~ /^p2p/ && $2 == "transpose" { p2p = $4; wrong += $7 }
    END {
      split(shape, d, "x")
      gib = d[1] * d[2] * size / ranks / 2^30
      if (rc != 0 || alone == "") { printf "| %s | %s | %.1f | failed (exit %s) | | | |\n", shape, size, gib, rc; exit }
      printf "| %s | %s | %.1f | %s | %s | %s | %d |\n", shape, size, gib, alone, ratio(nccl), ratio(p2p), wrong
    }' "$log"
done
