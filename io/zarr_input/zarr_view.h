/* A Zarr store as input, seen as netCDF-4: "the view", a netCDF-4 file
 * that netCDF-C makes with the store's arrays as variables (their axes
 * as dimensions, coordinates where an array is named as its axis, their
 * attributes and fill values, chunks as the store's), which the tool then
 * reads with HDF5 as it reads a netCDF-3 input's view (netcdf3_view.h).
 * The view holds the values of the arrays the run copies; those it
 * rearranges take no space in it, their values read from the store's
 * chunk files (zarr_source.h).
 *
 * Both functions are local (rank 0's, with no rank holding the view open)
 * and return 0, or -1 with a message naming the store or its array. */
#ifndef XIO_ZARR_VIEW_H
#define XIO_ZARR_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "path_list.h"

/* Makes (or replaces) the view of store `input` (a group of arrays, v2 or
 * v3) at `view`: every array, no values.  `warning` says what was left
 * out (attributes netCDF has no form for), or is empty. */
int xio_zarr_view_create(const char *input, const char *view, char *warning, size_t warning_size,
                         xio_error *err);

/* Copies into the view the values of every array of `input` but those
 * in `skip`, in slabs of about piece_bytes, then reads them back against
 * the store (zarr_view_check.h). */
int xio_zarr_view_fill(const char *input, const char *view, const xio_path_list *skip,
                       uint64_t piece_bytes, xio_error *err);

#endif
