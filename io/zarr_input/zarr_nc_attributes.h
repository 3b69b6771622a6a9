/* A Zarr node's attributes written as netCDF attributes (of a variable,
 * or NC_GLOBAL) of the view of a Zarr store (zarr_view.h). */
#ifndef XIO_ZARR_NC_ATTRIBUTES_H
#define XIO_ZARR_NC_ATTRIBUTES_H

#include <stddef.h>

#include "h5_error.h"

/* Local.  The attributes of `json` (an object's text) put on varid of
 * `nc` (in define mode).  Those netCDF cannot hold are named, as
 * "SHOWN:KEY", in `skipped` (appended, comma-separated; NULL: ignored).
 * 0, or -1 with a message naming `shown`. */
int xio_zarr_nc_attributes(int nc, int varid, const char *json, const char *shown, char *skipped,
                           size_t skipped_size, xio_error *err);

#endif
