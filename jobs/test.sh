#!/bin/bash
# Builds xpose and runs the whole test suite (unit, MPI with 1-4 ranks,
# end to end through the tools).  Installs missing Debian packages when run
# as root.  Extra arguments go to ctest (e.g. -R e2e, -L mpi).
source "$(dirname "$0")/setup.sh"
# zarrita (npm) reads the Zarr v3 stores in the tests, as a JavaScript
# client would; without npm or the registry those reads are skipped.
if [ ! -d "$XPOSE_BUILD/zarrita/node_modules/zarrita" ] && command -v npm >/dev/null; then
  timeout 120 npm install --silent --prefix "$XPOSE_BUILD/zarrita" zarrita@0.4.0 >/dev/null 2>&1 ||
    echo "setup: could not install zarrita from npm: the tests skip their Zarr v3 reads"
fi
cd "$XPOSE_BUILD"
ctest --output-on-failure -j "$(nproc)" "$@"
