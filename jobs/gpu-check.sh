#!/bin/bash
# On a GPU test machine (see ../shared/device/README.md), after
# `source .device/setup.sh`: builds xpose against the carried Open MPI and
# parallel HDF5, then runs the named steps, logging each under $OUT (or
# ./gpu-logs) and printing a short summary.
#   jobs/gpu-check.sh kernels sanitizer bench
# Steps: kernels (GPU kernel test), sanitizer (compute-sanitizer on a small
# case), bench (xpose-bench, one GPU), ctest (the whole suite).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-$root/gpu-logs}"
build="$root/build-gpu${XPOSE_MPI:+-$XPOSE_MPI}"  # one build per MPI (setup.sh's XPOSE_MPI)
mkdir -p "$out"
cd "$root"

# Debian's h5pcc hardcodes prefix=/usr; the packages are unpacked elsewhere.
hdf5_hint=()
if [ -x /opt/debroot/usr/bin/h5pcc.openmpi ]; then
  sed 's#^prefix="/usr"#prefix="/opt/debroot/usr"#' /opt/debroot/usr/bin/h5pcc.openmpi > /tmp/h5pcc
  chmod +x /tmp/h5pcc
  export HDF5_CC=mpicc HDF5_CLINKER=mpicc
  hdf5_hint=(-DHDF5_C_COMPILER_EXECUTABLE=/tmp/h5pcc)
fi
nvidia-smi -L
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DXPOSE_CUDA=ON "${hdf5_hint[@]}" && cmake --build "$build" -j "$(nproc)"; } \
       > "$out/build.log" 2>&1; then
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
    variants)  # the kernel's tuning switches, side by side
      for v in "-DXPOSE_STREAMING_HINTS=1" "-DXPOSE_STREAMING_HINTS=0" "-DXPOSE_TILES_DOWN_FIRST=1"; do
        nvcc -O3 -std=c++17 -arch=sm_90 $v -Icuda -Itests cuda/transpose_kernels.cu tests/cuda_test_util.cu \
          tests/bench/xpose_bench.c -lcublas -o /tmp/bench_variant || continue
        echo "-- $v"
        /tmp/bench_variant --shapes 16384x16384,32768x32768,16411x12289 --sizes 1,2,4,8,16 --iters 10 2>&1 \
          | tee -a "$out/variants.log" | awk '$3 == "xpose" || $3 == "cublas-geam"'
      done ;;
    *) echo "unknown step $step"; false ;;
  esac || status=1
done
exit $status
