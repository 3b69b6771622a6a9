#!/bin/bash
# The GPU kernel as it is against another version of it, side by side on
# one GPU: builds xpose-bench twice (this tree, and this tree with
# cuda/backend/cuda_kernels.cu replaced by BASE_KERNEL), then runs the two
# interleaved REPS times in one call and prints, per shape and element
# size, both times (median of each run's --iters) and each against
# cudaMemcpy of the same bytes in the same process.  Every row's #wrong
# must be 0.  On a GPU machine, after `source .device/setup.sh`:
#   git show REV:cuda/backend/cuda_kernels.cu > base-kernels.cu   # here, then carry it
# (src/backend/cuda_kernels.cu in revisions before cuda/ was made)
#   tests/bench/kernel_side_by_side.sh base-kernels.cu
# Environment: SHAPES (xpose-bench --shapes), SIZES (--sizes), REPS (2),
# ITERS (20), OUT (logs; ./gpu-logs), and CUDA_FLAGS for the tree's build
# (e.g. -D switches a variant reads).
set -euo pipefail
base_kernel="$(realpath "${1:?usage: $0 BASE_KERNEL.cu}")"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${OUT:-$root/gpu-logs}"
shapes="${SHAPES:-16384x16384,32768x32768,16411x12289,12289x16411,20011x30011}"
sizes="${SIZES:-1,2,4,8,16}"
reps="${REPS:-2}"
iters="${ITERS:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

source "$root/jobs/gpu-configure.sh"

# The base tree: this one without its builds and packages, the kernel replaced.
mkdir "$work/base-src"
tar -C "$root" --exclude=./.git --exclude=./.device --exclude=./build --exclude='./build-*' \
  --exclude=./gpu-logs -cf - . | tar -C "$work/base-src" -xf -
cp "$base_kernel" "$work/base-src/cuda/backend/cuda_kernels.cu"

build() {  # name, source tree, extra CUDA flags
  gpu_configure "$2" "$work/$1" -DCMAKE_CUDA_FLAGS="$3" > "$out/side-by-side-$1-build.log" 2>&1 &&
    cmake --build "$work/$1" -j "$(nproc)" --target xpose-bench >> "$out/side-by-side-$1-build.log" 2>&1
}
build base "$work/base-src" "" & base_pid=$!
build tree "$root" "${CUDA_FLAGS:-}" & tree_pid=$!
wait $base_pid || { echo "the base build failed: $out/side-by-side-base-build.log"; exit 1; }
wait $tree_pid || { echo "this tree's build failed: $out/side-by-side-tree-build.log"; exit 1; }

nvidia-smi -L || true
for rep in $(seq "$reps"); do
  for v in base tree; do
    "$work/$v/tests/bench/xpose-bench" --shapes "$shapes" --sizes "$sizes" --iters "$iters" \
      > "$out/side-by-side-$v-$rep.log" 2>&1
  done
done

# One line per shape and size: cudaMemcpy's times, then each version's times and % of its copy.
python3 - "$out" "$reps" <<'EOF'
import collections, glob, sys
out, reps = sys.argv[1], int(sys.argv[2])
rows, order, wrong = collections.defaultdict(list), [], 0
for rep in range(1, reps + 1):
    for v in ("base", "tree"):
        for line in open(f"{out}/side-by-side-{v}-{rep}.log"):
            f = line.split()
            if len(f) < 8 or f[2] not in ("cudaMemcpy", "xpose", "cublas-geam"):
                continue
            key = (f[0], int(f[1]))
            if key not in order:
                order.append(key)
            rows[key + (v, f[2])].append(f"{float(f[4]):.3f} ({f[6]})")
            wrong += int(f[7]) if f[7].isdigit() else 0
print(f"{'shape':<14}{'elem':>5}  cudaMemcpy ms | base ms (% of copy) | tree ms (% of copy) | geam")
for shape, es in order:
    copy = [r.split()[0] for r in rows[(shape, es, "base", "cudaMemcpy")] + rows[(shape, es, "tree", "cudaMemcpy")]]
    geam = rows[(shape, es, "tree", "cublas-geam")]
    print(f"{shape:<14}{es:>5}  {' '.join(copy)} | {' '.join(rows[(shape, es, 'base', 'xpose')])} | "
          f"{' '.join(rows[(shape, es, 'tree', 'xpose')])} | {' '.join(geam) or '-'}")
print(f"#wrong over every row: {wrong}")
sys.exit(1 if wrong else 0)
EOF
