#!/bin/bash
# Installs libxpose into a temporary prefix and uses it as a user would: a
# CMake project with find_package(xpose) and xpose::xpose, and a compile
# with `pkg-config --cflags --libs xpose` alone, each run under mpiexec on
# 1 and 3 ranks, checking every element.  A shared library must also carry
# its version in its soname, export the API of xpose.h and nothing else,
# and need no CUDA library; its consumers must not need the CUDA toolkit.
#
#   check_package.sh installed BUILD_DIR           install that build
#   check_package.sh build SOURCE_DIR [CMAKE_ARGS]  configure and build one first
#
# From ctest: MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS, CC.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/xpose-package-XXXXXX")"
trap 'rm -rf "$work"' EXIT
read -r -a preflags <<< "${MPIEXEC_PREFLAGS:-}"

fail() {
  echo "FAILED: $*" >&2
  exit 1
}
logged() {  # log name, command...: quiet unless it fails
  local log="$work/$1.log"
  shift
  "$@" > "$log" 2>&1 || { tail -30 "$log"; fail "$*"; }
}

mode="$1"
shift
case "$mode" in
  installed) build="$1" ;;
  build)
    source_dir="$1"
    shift
    build="$work/build"
    logged configure cmake -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DXPOSE_BUILD_TESTS=OFF -DXPOSE_BUILD_BENCHMARKS=OFF "$@"
    logged build cmake --build "$build" -j "$(nproc)"
    ;;
  *) fail "unknown mode '$mode'" ;;
esac
prefix="$work/prefix"
logged install cmake --install "$build" --prefix "$prefix"
library="$(find "$prefix" -name 'libxpose.*' -not -type l | head -1)"
[ -n "$library" ] || fail "no libxpose installed under $prefix"
libdir="$(dirname "$library")"
for f in include/xpose.h include/xpose_config.h; do
  [ -f "$prefix/$f" ] || fail "$f was not installed"
done
[ -f "$libdir/cmake/xpose/xposeConfig.cmake" ] || fail "no xposeConfig.cmake"
[ -f "$libdir/cmake/xpose/xposeConfigVersion.cmake" ] || fail "no xposeConfigVersion.cmake"
[ -f "$libdir/pkgconfig/xpose.pc" ] || fail "no xpose.pc"
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

shared=no
case "$library" in *.so*) shared=yes ;; esac
cuda_libraries='libcudart|libnccl|libcuda\.|libcublas'
if [ "$shared" = yes ]; then
  soname="$(readelf -d "$library" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
  [[ "$soname" =~ ^libxpose\.so\.[0-9]+ ]] || fail "unversioned soname '$soname'"
  [ -e "$libdir/$soname" ] || fail "no $soname beside $library"
  exported="$(nm -D --defined-only "$library" | awk '{print $3}' | sort)"
  declared="$(grep -o '^XPOSE_API [^(]*(' "$prefix/include/xpose.h" |
    sed -E 's/.*[ *](xpose_[a-z0-9_]+)\($/\1/' | sort)"
  if [ "$exported" != "$declared" ]; then
    diff <(echo "$declared") <(echo "$exported") >&2 || true
    fail "$library exports other symbols than the API of xpose.h (< declared, > exported)"
  fi
  echo "shared: soname $soname, exports the $(echo "$declared" | wc -l) functions of xpose.h only"
  if ldd "$library" | grep -E "$cuda_libraries"; then fail "$library needs a CUDA library"; fi
fi
if [ -x "$prefix/bin/xpose" ]; then
  if ldd "$prefix/bin/xpose" | grep -E "$cuda_libraries"; then fail "xpose needs a CUDA library"; fi
  echo "tool: $("$prefix/bin/xpose" --version)"
fi

run() {  # what, program: on 1 and 3 ranks, hangs fail after 120 s
  for ranks in 1 3; do
    timeout 120 "${MPIEXEC:-mpiexec}" "${MPIEXEC_NUMPROC_FLAG:--n}" "$ranks" "${preflags[@]}" "$2" \
      || fail "$1 on $ranks rank(s) (exit $?)"
  done
}

# The CMake consumer.  A shared library carries the CUDA runtime inside, so
# its users must not need the CUDA toolkit: forbid finding it.
no_toolkit=()
[ "$shared" = yes ] && no_toolkit=(-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
logged consumer-configure cmake -S "$here/consumer" -B "$work/cmake-consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="${CC:-cc}" "${no_toolkit[@]}"
logged consumer-build cmake --build "$work/cmake-consumer"
run "find_package(xpose) consumer" "$work/cmake-consumer/consumer"

# The pkg-config consumer: its flags alone, with the plain C compiler.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
flags="$(pkg-config --cflags --libs xpose)"
echo "pkg-config --cflags --libs xpose: $flags"
# shellcheck disable=SC2086  # the flags are words
logged pkg-config-build "${CC:-cc}" -o "$work/pc-consumer" "$here/consumer/consumer.c" $flags
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run "pkg-config consumer" \
  "$work/pc-consumer"
echo "package: all checks passed"
