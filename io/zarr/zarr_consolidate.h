/* Zarr v2's consolidated metadata (.zmetadata, zarr-python's
 * consolidate_metadata): every .zgroup, .zarray and .zattrs of a store in
 * one file, so that readers (xarray's open_zarr) list the store with one
 * read, not one per array. */
#ifndef XIO_ZARR_CONSOLIDATE_H
#define XIO_ZARR_CONSOLIDATE_H

#include "h5_error.h"

/* Local.  The store at `path` consolidated. */
int xio_zarr_consolidate(const char *path, xio_error *err);

#endif
