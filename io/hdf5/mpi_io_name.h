/* The name a file is opened by through MPI-IO.
 *
 * Open MPI's OMPIO (4.1) writes "<name>.locktest.<rank>" into a 256-byte
 * buffer when it opens a file, and aborts the process ("buffer overflow
 * detected") where that does not fit: a name of 245 bytes or more, fewer
 * on more ranks.  So a file under a long absolute path is opened by its
 * path relative to the working directory where that is shorter, and one
 * whose name is still too long is refused with the limit named, unless
 * OMPI_MCA_io leaves OMPIO out (ROMIO takes such names). */
#ifndef XIO_MPI_IO_NAME_H
#define XIO_MPI_IO_NAME_H

#include <mpi.h>
#include <stddef.h>

#include "h5_error.h"

/* Local.  The name to open `path` by into `name`; -1, with a message
 * naming `shown` (the user's name for it), where MPI-IO would fail on it
 * on comm's ranks. */
int xio_mpi_io_name(MPI_Comm comm, const char *path, const char *shown, char *name, size_t size,
                    xio_error *err);

#endif
