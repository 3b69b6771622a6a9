/* A store's view (zarr_view.h) read back against the store, through
 * other code than filled it: each array the view holds read again from
 * its chunk files, its values turned into this machine's order by HDF5
 * from the HDF5 type its metadata makes, and the view's variable read by
 * HDF5 into the same order.  The fill turns them by hand and netCDF-C
 * writes them; a fault in either (netcdf-c#1802 wrote big-endian
 * coordinates unconverted) is caught here, before anything is copied
 * from the view, not confirmed by an output compared with the view. */
#ifndef XIO_ZARR_VIEW_CHECK_H
#define XIO_ZARR_VIEW_CHECK_H

#include <stdint.h>

#include "h5_error.h"
#include "path_list.h"

/* Local, the view closed.  Every array of store `input` but those in
 * `skip` against its variable in the view at `view`, in slabs of about
 * piece_bytes: -1 with a message naming the first that differs.  A
 * joined view (join_view.h) holds the store's arrays along axis `along`
 * from its record `at` (along NULL: a store's own view). */
int xio_zarr_view_check(const char *input, const char *view, const xio_path_list *skip,
                        const char *along, int64_t at, uint64_t piece_bytes, xio_error *err);

#endif
