/* HDF5 (netCDF-4) attributes and axis names as a Zarr store keeps them,
 * so that xarray decodes a store as it decodes the file: text as strings,
 * numbers as numbers (a list where there are several), _FillValue as the
 * array's fill value, netCDF-4's and HDF5's bookkeeping left out. */
#ifndef XIO_ZARR_ATTRIBUTES_H
#define XIO_ZARR_ATTRIBUTES_H

#include <hdf5.h>

#include "h5_error.h"
#include "shape.h"

/* Local.  obj's attributes as the text of a JSON object (malloc'd, in
 * *json), for a store of `format`: v2 writes NaN as Python's json does,
 * v3 as the string "NaN".  With `history` (a file's root), its history
 * attribute starts with that line, as NCO's tools write it.  An
 * attribute of a type JSON cannot hold (a compound, a reference) fails,
 * named with `shown`. */
int xio_zarr_attributes(hid_t obj, int format, const char *history, const char *shown, char **json,
                        xio_error *err);

/* Local.  dset's fill value, from its _FillValue attribute (netCDF's,
 * CF's), into fill (type_size bytes of the dataset's type): 1 where it
 * has one, else 0. */
int xio_zarr_fill_value(hid_t dset, hid_t type, void *fill);

/* Local.  The names of dset's axes (its labels, or the netCDF dimension
 * each is; a dimension scale's one axis, its own name), else
 * "phony_dim_N", numbered by the axis's length in `phony` (lengths met
 * so far, first met first; *phony_count of at most XIO_MAX_DIMS * 16). */
int xio_zarr_axis_names(hid_t dset, int ndims, const int64_t *dims, int64_t *phony,
                        int *phony_count, char names[][128], xio_error *err);

/* Local.  Whether dset is a netCDF dimension that is not a variable (a
 * dimension scale netCDF-C made for the length alone): no array of its
 * own in a store. */
int xio_is_netcdf_dimension_only(hid_t dset);

#endif
