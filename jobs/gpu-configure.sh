# Sourced by the scripts that build xpose on a GPU test machine (after
# `source .device/setup.sh`): gpu_configure SOURCE BUILD [cmake arguments]
# configures a Release CUDA build for Hopper against the carried packages.

# Debian's h5pcc hardcodes prefix=/usr; the packages are unpacked elsewhere.
gpu_hdf5_hint=()
if [ -x /opt/debroot/usr/bin/h5pcc.openmpi ]; then
  sed 's#^prefix="/usr"#prefix="/opt/debroot/usr"#' /opt/debroot/usr/bin/h5pcc.openmpi > /tmp/h5pcc
  chmod +x /tmp/h5pcc
  export HDF5_CC=mpicc HDF5_CLINKER=mpicc
  gpu_hdf5_hint=(-DHDF5_C_COMPILER_EXECUTABLE=/tmp/h5pcc)
fi

gpu_configure() {
  local src="$1" dir="$2"
  shift 2
  cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DXPOSE_CUDA=ON \
    "${gpu_hdf5_hint[@]}" "$@"
}
