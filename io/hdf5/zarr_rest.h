/* The rest of an HDF5 (netCDF-4) file in a Zarr store, beside the
 * datasets a run rearranges: every other dataset an array of the store at
 * its own path (its groups groups), its attributes and axis names kept as
 * xarray reads them (zarr_attributes.h), in chunks of whole rows (about
 * 4 MiB along its first axis), and read back
 * against the input before the store is published.  netCDF's dimensions
 * that are not variables get no array.  Rank 0 alone: these are the
 * coordinates and bounds, small beside the data. */
#ifndef XIO_ZARR_REST_H
#define XIO_ZARR_REST_H

#include <hdf5.h>
#include <stdint.h>

#include "h5_error.h"
#include "path_list.h"
#include "zarr_array.h"

typedef struct {
  int arrays, groups;
  uint64_t bytes; /* of values */
} xio_zarr_rest_stats;

/* Names of axes with no name, numbered by their lengths across a store
 * (zarr_attributes.h's xio_zarr_axis_names). */
typedef struct {
  int64_t lengths[XIO_MAX_DIMS * 16];
  int count;
} xio_phony_dims;

/* Local.  The rest of `from` (but the datasets `rearranged`) into the
 * store at `store`, each array encoded by `codec`, `budget` bytes of
 * values read at a time.  `shown` names the input in messages. */
int xio_zarr_copy_rest(hid_t from, const char *shown, const char *store,
                       const xio_zarr_codec *codec, const xio_path_list *rearranged,
                       uint64_t budget, xio_phony_dims *phony, xio_zarr_rest_stats *stats,
                       xio_error *err);

/* Local.  Each array xio_zarr_copy_rest made read back from the store and
 * compared with its source in `from`: differs gets the first that is
 * not the same ("" where all are), *compared the bytes compared. */
int xio_zarr_compare_rest(hid_t from, const char *shown, const char *store,
                          const xio_zarr_codec *codec, const xio_path_list *rearranged,
                          uint64_t budget, char *differs, size_t differs_size, uint64_t *compared,
                          xio_error *err);

#endif
