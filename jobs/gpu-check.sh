#!/bin/bash
# On a GPU test machine (see ../shared/device/README.md), after
# `source .device/setup.sh`: builds xpose against the carried Open MPI and
# parallel HDF5, then runs the named steps, logging each under $OUT (or
# ./gpu-logs) and printing a short summary.
#   jobs/gpu-check.sh kernels sanitizer bench
# Steps: kernels (GPU kernel test), sanitizer (compute-sanitizer on a small
# case), bench (xpose-bench, one GPU), ctest (the whole suite), gpu-tests
# (the GPU tests, verbosely), distributed (xpose-bench on XPOSE_RANKS GPUs, 2 by default), tools
# (the xpose tool on 2 GPUs with each engine, in passes, verified), package
# (the installed-package tests), shared-gpu (more ranks than GPUs: auto
# avoids NCCL, --exchange nccl fails at once), nccl-fail (NCCL's set-up
# fails on one rank: every rank fails, none hangs), p2p (the p2p engine: the
# GPU tests, with pretend nodes and a rank that cannot open its peers'
# outputs; compute-sanitizer on 2 ranks; the tool through it, on one node
# and on pretend nodes; its benchmark beside NCCL on 2 GPUs), ncu (hardware counters),
# e2e (the end-to-end tests, on GPUs; there mpirun forwards no signal to the
# ranks and PMIx warns on stderr, so the stop tests and those reading stderr
# whole fail: a fact of those machines, seen with a shell rank), io-bench
# (out of core against cp + sync: tests/bench/bench_io.sh, one rank per GPU,
# 16 GiB), year (the hourly year of compressed tas: tests/bench/bench_year.sh,
# its RUNS and XPOSE_YEAR_REPS, beside zproto and NCO from .device/).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/gpu-logs}"
build="$root/build-gpu${XPOSE_MPI:+-$XPOSE_MPI}"  # one build per MPI (setup.sh's XPOSE_MPI)
mkdir -p "$out"
cd "$root"

source "$root/jobs/gpu-configure.sh"
nvidia-smi -L
# The e2e tests need h5py and numpy: the machine's python3 has them, its /usr/bin/python3 not.
if ! { gpu_configure . "$build" -DXPOSE_TEST_PYTHON="$(command -v python3)" &&
  cmake --build "$build" -j "$(nproc)"; } > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
echo "built in $build"
status=0
for step in "$@"; do
  echo "== $step"
  case "$step" in
    kernels) "$build/tests/test_cuda_kernels" 2>&1 | tee "$out/kernels.log" | tail -3 ;;
    sanitizer)
      compute-sanitizer --tool memcheck --error-exitcode 9 "$build/tests/test_cuda_kernels" --quick \
        2>&1 | tee "$out/sanitizer.log" | tail -3 ;;
    bench) "$build/tests/bench/xpose-bench" 2>&1 | tee "$out/bench.log" ;;
    ctest) (cd "$build" && ctest --output-on-failure -j 8) 2>&1 | tee "$out/ctest.log" | tail -15 ;;
    gpu-tests)  # the GPU kernel test and the GPU MPI tests, verbosely
      (cd "$build" && ctest -L gpu -V) > "$out/gpu-tests${XPOSE_MPI:+-$XPOSE_MPI}.log" 2>&1
      rc=$?
      grep -E "^[0-9]+: (engine|GPU|skipped)|tests passed|Failed|FAILED" "$out/gpu-tests${XPOSE_MPI:+-$XPOSE_MPI}.log" | tail -20
      [ $rc -eq 0 ] ;;
    ncu)  # hardware counters of the kernel on an aligned and an odd shape
      for shape in 16384x16384 16411x12289; do
        ncu --clock-control none -k regex:transpose_ -c 1 --section SpeedOfLight \
          --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
          "$build/tests/bench/xpose-bench" --shapes $shape --sizes 4 --iters 1 --warmup 0
      done > "$out/ncu.log" 2>&1
      grep -E "DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Duration|L2 Hit|Mem Busy|Max Bandwidth|Stall|Warp Cycles Per Issued" "$out/ncu.log" | head -40 ;;
    tools)  # the tool on 2 GPUs, each engine, passes far smaller than the data, verified
      ldd "$build/xpose" | grep -E "libcudart|libnccl" && echo "xpose links CUDA libraries"
      log="$out/tools${XPOSE_MPI:+-$XPOSE_MPI}.log" failed=0
      "$build/xpose-gen" --force --quiet --type f64 4099 3001 /tmp/gpu-check-in.h5 || failed=1
      for engine in nccl mpi staged; do
        mpirun -n 2 "$build/xpose" --backend cuda --exchange $engine --gpu-memory 4M --memory 64M \
          --verify --force /tmp/gpu-check-in.h5 /tmp/gpu-check-out.h5 >> "$log" 2>&1
        rc=$?
        echo "$engine: exit $rc: $(grep "^xpose: /tmp" "$log" | tail -1)"
        [ $rc -eq 0 ] || failed=1
      done
      [ $failed -eq 0 ] ;;
    shared-gpu)  # 2 GPUs per 5 ranks: NCCL must be refused on every rank, never hang
      log="$out/shared-gpu${XPOSE_MPI:+-$XPOSE_MPI}.log" failed=0
      "$build/xpose-gen" --force --quiet --type f32 3001 2003 /tmp/gpu-check-in.h5 || failed=1
      for engine in auto nccl; do
        timeout 180 mpirun -n 5 --oversubscribe "$build/xpose" --backend cuda --exchange $engine \
          --memory 8M --force /tmp/gpu-check-in.h5 /tmp/gpu-check-out.h5 >> "$log" 2>&1
        rc=$?
        echo "$engine: exit $rc: $(grep -E "^xpose: (/tmp|error)" "$log" | tail -1)"
        case "$engine:$rc" in auto:0 | nccl:1) ;; *) failed=1 ;; esac
      done
      [ $failed -eq 0 ] ;;
    nccl-fail)  # rank 1 cannot bootstrap NCCL (no such interface); rank 0 must not wait forever
      log="$out/nccl-fail${XPOSE_MPI:+-$XPOSE_MPI}.log"
      "$build/xpose-gen" --force --quiet --type f32 3001 2003 /tmp/gpu-check-in.h5
      args=(--backend cuda --exchange nccl --force /tmp/gpu-check-in.h5 /tmp/gpu-check-out.h5)
      start=$(date +%s)
      XPOSE_NCCL_INIT_TIMEOUT=20 timeout 300 mpirun -q -n 1 "$build/xpose" "${args[@]}" : \
        -n 1 env NCCL_SOCKET_IFNAME=no-such-interface "$build/xpose" "${args[@]}" > "$log" 2>&1
      rc=$?
      echo "exit $rc after $(( $(date +%s) - start )) s: $(grep "^xpose: error" "$log" | tail -1)"
      [ $rc -eq 1 ] && [ ! -e /tmp/gpu-check-out.h5 ] ;;
    package) (cd "$build" && ctest -L package --output-on-failure) 2>&1 | tee "$out/package.log" | tail -8 ;;
    e2e) (cd "$build" && ctest -L e2e --output-on-failure -j 4) 2>&1 | tee "$out/e2e.log" | tail -12 ;;
    year)  # the hourly year into time series, beside zproto and NCO's tools
      [ -d /tmp/nco ] || tar -C /tmp -xJf "$root/.device/nco.tar.xz"
      lib=/opt/debroot/usr/lib/x86_64-linux-gnu
      mpicc -O2 -pthread -I/opt/debroot/usr/include -I/opt/debroot/usr/include/hdf5/openmpi \
        "$root/.device/zproto.c" \
        -o /tmp/zproto -L"$lib/hdf5/openmpi" -L"$lib" -lhdf5 -ldeflate
      ZPROTO=/tmp/zproto NCO_PATH=/tmp/nco/bin NCO_LIBRARY_PATH=/tmp/nco/lib \
        YEAR_SKELETON="$root/.device/climate-year.nc" TMPDIR="${XPOSE_IO_BENCH_DIR:-/var/tmp}" \
        tests/bench/bench_year.sh "$build" "${XPOSE_YEAR_REPS:-1}" 2>&1 | tee "$out/year.log" | tail -16 ;;
    io-bench)  # out of core against cp + sync, one rank per GPU (tests/bench/bench_io.sh)
      gpus=$(nvidia-smi -L | wc -l)
      read -r rows cols <<<"${XPOSE_IO_BENCH_SHAPE:-65536 65536}"
      XPOSE_BENCH_LAUNCH="mpirun -q -n $gpus" TMPDIR="${XPOSE_IO_BENCH_DIR:-/var/tmp}" \
        tests/bench/bench_io.sh "$build" "$rows" "$cols" "$gpus" "${XPOSE_IO_BENCH_REPS:-1}" \
        2>&1 | tee "$out/io-bench.log" | tail -14 ;;
    p2p)  # the p2p engine: GPU tests, sanitizer, the tool, then against NCCL
      # Three at a time: most of their time is NCCL starting up, not the GPUs.
      (cd "$build" && ctest -L gpu -j 3 --output-on-failure) > "$out/p2p-tests.log" 2>&1
      echo "GPU tests: exit $?"
      grep -E "tests passed|\*\*\*|Failed" "$out/p2p-tests.log" | head -12
      timeout 300 mpirun -n 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$build/tests/bench/xpose-bench" --distributed 1031x2053 --iters 1 --exchange p2p \
        > "$out/p2p-sanitizer.log" 2>&1
      echo "compute-sanitizer, p2p on 2 ranks: exit $? ($(grep -c "ERROR SUMMARY: 0 errors" "$out/p2p-sanitizer.log") clean)"
      "$build/xpose-gen" --force --quiet --type f64 4099 3001 /tmp/gpu-check-in.h5
      for nodes in 1 2; do
        for engine in p2p auto; do
          XPOSE_PRETEND_NODES=$nodes timeout 300 mpirun -n 2 "$build/xpose" --backend cuda \
            --exchange $engine --gpu-memory 4M --memory 64M --verify --verbose --force \
            /tmp/gpu-check-in.h5 /tmp/gpu-check-out.h5 > "$out/p2p-tool-$nodes-$engine.log" 2>&1
          echo "tool, $nodes pretend node(s), --exchange $engine: exit $?: $(grep -ohE "\(cuda, [^)]*\)|^xpose: error.*" "$out/p2p-tool-$nodes-$engine.log" | head -1)"
        done
      done
      for shape in 65536x65536 16411x12289; do
        timeout 300 mpirun -n 2 "$build/tests/bench/xpose-bench" --distributed "$shape" --iters 5 \
          --exchange nccl,p2p 2>&1 | tee "$out/p2p-bench-$shape.log"
      done ;;
    distributed)  # xpose-bench on XPOSE_RANKS GPUs (default 2), every exchange engine
      mpirun -n "${XPOSE_RANKS:-2}" "$build/tests/bench/xpose-bench" --distributed 65536x65536 --iters 5 2>&1 \
        | tee "$out/distributed${XPOSE_MPI:+-$XPOSE_MPI}.log" ;;
    *) echo "unknown step $step"; false ;;
  esac || status=1
done
exit $status
