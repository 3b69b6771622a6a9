/* An output file held by one writer, rank 0, while the others hand it
 * their data: for chunks written as stored (H5Dwrite_chunk), which
 * parallel HDF5 1.10 cannot take from several ranks.
 *
 * Parallel HDF5 keeps the metadata of a file (its chunk index, its free
 * space) the same on every rank by having every rank make every change.
 * H5Dwrite_chunk allocates and indexes a chunk on the calling rank alone,
 * so ranks of one MPI-IO file that each write their own chunks tear that
 * apart (two ranks of a 30-line probe spun in HDF5 1.10.8 and never
 * returned); called by every rank for every chunk, each would write every
 * chunk's bytes.  So the file goes to one rank for the passes: every rank
 * closes it, rank 0 opens it alone (MPI-IO on MPI_COMM_SELF: the same
 * driver and flushes), and when the passes end it goes back.  A matrix
 * of chunk files (a Zarr array's) needs none: each rank writes its own,
 * and these calls do nothing. */
#ifndef XIO_ONE_WRITER_H
#define XIO_ONE_WRITER_H

#include "h5_matrix.h"

/* Collective.  Whether m (written by every rank, no other object of its
 * file open) can be handed to one writer. */
int xio_one_writer_possible(const xio_matrix *m, xio_error *err);

/* Collective.  m's file closed on every rank and opened again on rank 0
 * alone, its dataset too (m->one_writer); `name` (4096 bytes) gets the
 * name it was opened by, for xio_one_writer_end.  On failure m is closed
 * on every rank (xio_close does nothing). */
int xio_one_writer_begin(xio_matrix *m, char *name, xio_error *err);

/* Collective.  m's file closed by its one writer and opened again, by
 * `name`, on every rank, its dataset too.  On failure m is closed. */
int xio_one_writer_end(xio_matrix *m, const char *name, xio_error *err);

#endif
