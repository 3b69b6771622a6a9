#!/bin/bash
# The tool as built (with CUDA where the toolkit was found) on a node
# without the CUDA libraries, as when it is built on a login node and run on
# CPU nodes: it needs none of them to load (ldd), and with them out of reach
# it starts, transposes on the host with one note saying why, and refuses
# --backend cuda with exit 2.  As root, a private mount namespace hides the
# CUDA toolkit and every directory of CUDA or NCCL libraries the loader
# knows outside the system's own; either way LD_LIBRARY_PATH loses the
# directories that hold them.
#   check_no_cuda_runtime.sh XPOSE XPOSE_GEN
# From ctest: MPIEXEC, MPIEXEC_NUMPROC_FLAG, MPIEXEC_PREFLAGS.
set -euo pipefail
shopt -s extglob
xpose="$(readlink -f "$1")" gen="$(readlink -f "$2")"
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

if [ "${3:-}" != --hidden ]; then
  if ldd "$xpose" | grep -E 'libcudart|libnccl|libcuda\.'; then fail "$xpose needs CUDA libraries"; fi
  echo "ldd $xpose: no CUDA library"
  # The toolkit, and where the loader finds CUDA and NCCL libraries; not the
  # system's library directories, which the tools themselves need.
  hide=()
  for dir in $(readlink -f /usr/local/cuda 2>/dev/null) \
    $(ldconfig -p | sed -n 's/.*\(libcudart\|libnccl\|libcuda\)\.so.* => \(.*\)/\2/p' | xargs -r -n1 dirname); do
    dir="$(readlink -f "$dir")"
    case "$dir" in /lib* | /usr/lib* | /usr/lib64*) continue ;; esac
    inside=no
    for h in "${hide[@]}"; do [[ "$dir/" == "$h/"* ]] && inside=yes; done
    [ -d "$dir" ] && [ "$inside" = no ] && hide+=("$dir")
  done
  if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    echo "hiding: ${hide[*]:-nothing found to hide}"
    exec unshare -m bash -ec 'for d in "${@:4}"; do mount -t tmpfs none "$d"; done; exec bash "$0" "$1" "$2" "$3"' \
      "$0" "$xpose" "$gen" --hidden "${hide[@]}"
  fi
  echo "note: cannot hide the CUDA libraries here (needs root and mount namespaces);" \
    "checking with them off LD_LIBRARY_PATH only"
fi

kept=()
IFS=: read -r -a entries <<< "${LD_LIBRARY_PATH:-}"
for dir in "${entries[@]}"; do
  compgen -G "$dir/lib@(cudart|nccl|cuda).so*" > /dev/null || kept+=("$dir")
done
LD_LIBRARY_PATH="$(IFS=:; echo "${kept[*]}")"
export LD_LIBRARY_PATH
read -r -a preflags <<< "${MPIEXEC_PREFLAGS:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/xpose-no-cuda-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"
run() {  # ranks, command...: output in run.out and run.err
  local ranks="$1"
  shift
  set +e
  timeout 120 "${MPIEXEC:-mpiexec}" "${MPIEXEC_NUMPROC_FLAG:--n}" "$ranks" "${preflags[@]}" "$@" \
    > run.out 2> run.err
  status=$?
  set -e
  [ "$status" -ne 124 ] || fail "hung: $*"
}

run 2 "$gen" 301 203 in.h5
[ "$status" -eq 0 ] || { cat run.err; fail "xpose-gen exit $status"; }
run 2 "$xpose" --verbose --verify in.h5 out.h5
[ "$status" -eq 0 ] || { cat run.err; fail "xpose exit $status"; }
cat run.out
if grep -q "(host, mpi)" run.out; then
  if "$xpose" --version | grep -q "CUDA backend"; then # no GPU anywhere: said with --verbose
    [ "$(grep -c "^xpose: transposing on the host (--backend host says so): " run.err)" -eq 1 ] ||
      { cat run.err; fail "no single line on why the host runs"; }
    grep "^xpose: transposing on the host" run.err
  fi
  run 2 "$xpose" --backend cuda in.h5 out2.h5
  [ "$status" -eq 2 ] || { cat run.err; fail "--backend cuda without a GPU: exit $status, not 2"; }
  [ ! -e out2.h5 ] || fail "--backend cuda without a GPU left out2.h5"
  grep "^xpose: error: " run.err
fi
echo "without the CUDA libraries: all checks passed"
