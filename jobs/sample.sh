#!/bin/bash
# Builds xpose, generates a sample matrix, transposes it with 2 MPI ranks in
# passes (memory budget well below the matrix), verifies it and prints the
# summary.  Installs missing Debian packages when run as root.
#   jobs/sample.sh [ROWS COLS [TYPE]]     (default 3001 x 2003 f64)
source "$(dirname "$0")/setup.sh"
rows="${1:-3001}" cols="${2:-2003}" type="${3:-f64}"
sample="$XPOSE_ROOT/sample"
mkdir -p "$sample"
mpirun -n 2 "$XPOSE_BUILD/xpose-gen" --force --type "$type" "$rows" "$cols" "$sample/matrix.h5"
mpirun -n 2 "$XPOSE_BUILD/xpose" --force --verify --verbose --memory 4M \
  "$sample/matrix.h5" "$sample/transposed.h5"
