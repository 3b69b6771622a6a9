/* MPI-IO hints for the files io/ opens: those given on the command line
 * (xpose --mpi-hint KEY=VALUE), on top of what the MPI library reads by
 * itself (ROMIO reads the file named by ROMIO_HINTS). */
#ifndef XIO_MPI_HINTS_H
#define XIO_MPI_HINTS_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

#include "h5_error.h"

/* Local.  Sets the hints, "KEY=VALUE" each, for every file opened from
 * now on.  -1 with a message when one is malformed or MPI refuses it. */
int xio_mpi_hints_set(const char *const *pairs, int count, xio_error *err);

/* The hints to open files with; MPI_INFO_NULL when none were set. */
MPI_Info xio_mpi_hints(void);

/* Local.  The hints in force on an HDF5 file opened through MPI-IO, as
 * that layer reports them (MPI_File_get_info: its defaults too),
 * "key=value, ...". */
void xio_mpi_hints_in_force(hid_t file, char *text, size_t size);

#endif
