#!/bin/bash
source .device/setup.sh
rm -rf build-gpu; jobs/gpu-check.sh > $OUT/check.log 2>&1 || { tail -20 $OUT/check.log; exit 1; }
cmake -S . -B build-gpu -DXPOSE_TEST_PYTHON=$(which python3) > $OUT/cmake.log 2>&1
cd build-gpu && ctest -R "options|e2e_axes|e2e_whole_file|e2e_errors" --output-on-failure > $OUT/ctest.log 2>&1
grep -E "Test +#|^FAIL|^ERROR|tests passed" $OUT/ctest.log
cd /tmp && python3 - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(0)
with h5py.File('c.h5', 'w') as f:
    d = f.create_dataset('v', (64, 1024, 2048), '<f4')
    for i in range(64): d[i] = rng.random((1024, 2048), dtype=np.float32)
PY
for order in "--axes 1,2,0" "--axes 0,2,1" "--axes 2,1,0"; do
  sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null
  mpirun -n 1 /work/main/build-gpu/xpose --force $order c.h5 co.h5 2>&1 | tail -1
  mpirun -n 1 /work/main/build-gpu/xpose verify $order c.h5 co.h5 2>&1 | tail -1
done
