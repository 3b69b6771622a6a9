/* The values of a Zarr store's array that a run rearranges, read from
 * its chunk files (each rank the chunks of its blocks, decoded by the
 * chunk codec on its threads, a missing chunk read as the fill value, as
 * Zarr says), in place of the view's empty variable (zarr_view.h): no
 * HDF5 call, so the reads run beside the writes (xio_reads_alone). */
#ifndef XIO_ZARR_SOURCE_H
#define XIO_ZARR_SOURCE_H

#include "h5_matrix.h"

/* Local.  Makes m (the view's variable of array m->dataset) read its
 * values from that array of store `input`; -1 with a message where the
 * store's array is not shaped and typed as m. */
int xio_zarr_attach(xio_matrix *m, const char *input, xio_error *err);

#endif
