/* Checks on the input before anything is opened. */
#ifndef TOOL_INPUT_FILE_H
#define TOOL_INPUT_FILE_H

#include <mpi.h>

#include "h5_error.h"

/* Collective.  Rank 0 checks that `path` is a readable regular HDF5 file
 * (a FIFO or device would block or mislead MPI-IO). */
int tool_check_input(MPI_Comm comm, const char *path, xio_error *err);

#endif
