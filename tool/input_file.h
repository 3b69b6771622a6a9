/* Checks on the input before anything is opened. */
#ifndef TOOL_INPUT_FILE_H
#define TOOL_INPUT_FILE_H

#include <mpi.h>

#include "h5_error.h"

/* Collective.  Rank 0 checks that `path` is a readable regular HDF5 file
 * (a FIFO or device would block or mislead MPI-IO), or where `netcdf3` is
 * not NULL and this xpose reads them, a netCDF-3 file (*netcdf3 set). */
int tool_check_input(MPI_Comm comm, const char *path, int *netcdf3, xio_error *err);

#endif
