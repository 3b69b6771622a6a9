#!/bin/bash
# Builds xpose and runs the whole test suite (unit, MPI with 1-4 ranks,
# end to end through the tools).  Installs missing Debian packages when run
# as root.  Extra arguments go to ctest (e.g. -R e2e, -L mpi).
source "$(dirname "$0")/setup.sh"
cd "$XPOSE_BUILD"
ctest --output-on-failure -j "$(nproc)" "$@"
