# Sourced by jobs/sample.sh and jobs/test.sh: installs what xpose needs on a
# Debian or Ubuntu machine (as root; otherwise says what to install), then
# configures and builds xpose in $XPOSE_BUILD (default: build/).
set -euo pipefail
XPOSE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
XPOSE_BUILD="${XPOSE_BUILD:-$XPOSE_ROOT/build}"
XPOSE_PACKAGES="cmake make gcc pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  libdeflate-dev libzstd-dev libblosc-dev libjansson-dev libnetcdf-mpi-dev libopenblas-dev python3 python3-h5py python3-numpy hdf5-tools
  netcdf-bin python3-netcdf4 python3-xarray python3-zarr nco cdo man-db"

xpose_install_packages() {
  command -v dpkg-query >/dev/null || {
    echo "setup: not a Debian-like system; make sure these (or equivalents) are installed:"
    echo "  $XPOSE_PACKAGES"
    return 0
  }
  local missing=() p
  for p in $XPOSE_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages; install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

xpose_build() {
  cmake -S "$XPOSE_ROOT" -B "$XPOSE_BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$XPOSE_BUILD" -j "$(nproc)" >/dev/null
  echo "setup: built xpose in $XPOSE_BUILD"
}

# Open MPI refuses to run as root unless told; CI and containers run as root.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

xpose_install_packages
xpose_build
