/* Checks on the input before anything is opened. */
#ifndef TOOL_INPUT_FILE_H
#define TOOL_INPUT_FILE_H

#include <mpi.h>

#include "h5_error.h"

typedef enum { TOOL_INPUT_HDF5, TOOL_INPUT_NETCDF3, TOOL_INPUT_ZARR } tool_input_kind;

/* Collective.  Rank 0 checks that `path` is a readable regular HDF5 file
 * (a FIFO or device would block or mislead MPI-IO), or where `kind` is
 * not NULL and this xpose reads them, a netCDF-3 file or a Zarr store (a
 * directory; *kind says which). */
int tool_check_input(MPI_Comm comm, const char *path, tool_input_kind *kind, xio_error *err);

/* xpose's hidden mode that reads a file's metadata in a process of its
 * own (input_file.c): `xpose --metadata-walk PATH`, run by the checks
 * above; main() hands it PATH before MPI starts.  Exit 0, or 1 where the
 * file cannot be walked; a crash is the caller's to tell. */
#define TOOL_METADATA_WALK "--metadata-walk"
int tool_metadata_walk_main(const char *path);

#endif
