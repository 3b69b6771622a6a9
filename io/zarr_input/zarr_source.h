/* The values of a Zarr store's array that a run rearranges, read from
 * its chunk files (each rank the chunks of its blocks, decoded by the
 * chunk codec on its threads, a missing chunk read as the fill value, as
 * Zarr says), in place of the view's empty variable (zarr_view.h): no
 * HDF5 call, so the reads run beside the writes (xio_reads_alone). */
#ifndef XIO_ZARR_SOURCE_H
#define XIO_ZARR_SOURCE_H

#include "h5_matrix.h"
#include "zarr_array.h"

/* Local.  Makes m (the view's variable of array m->dataset) read its
 * values from that array of store `input`; -1 with a message where the
 * store's array is not shaped and typed as m. */
int xio_zarr_attach(xio_matrix *m, const char *input, xio_error *err);

/* Positions of axis 0 of array `a` (rows of row_bytes) read at once
 * where it is copied whole: about piece_bytes of them, in whole chunks
 * along it (at least one chunk's), so that no chunk is decoded twice. */
int64_t xio_zarr_slab_rows(const xio_zarr_array *a, uint64_t row_bytes, uint64_t piece_bytes);

/* Local.  The one value of scalar array `a` (named `shown`), as stored:
 * its chunk file's, or the fill value where it has none. */
int xio_zarr_scalar_read(const xio_zarr_array *a, unsigned char *value, const char *shown,
                         xio_error *err);

#endif
