/* A netCDF-3 input seen as netCDF-4: "the view", a netCDF-4 file that
 * netCDF-C makes with the input's dimensions, variables and attributes,
 * which the tool then reads with HDF5 as if it were the input.
 *
 * Why: everything xpose does with a file (choosing datasets by their
 * dimensions, making the output with the same attributes, dimension
 * scales and fill values, copying the rest, verifying it) is done with
 * HDF5, and netCDF-C knows how netCDF-3's structure maps onto netCDF-4's
 * (what `nccopy -k nc4` writes).  The view holds the data of the variables
 * the run copies; those it rearranges take no space in it, their values
 * read from the input itself (netcdf3.h).
 *
 * Both functions are local (rank 0's, with no rank holding the view open)
 * and return 0, or -1 with a message naming the input `shown`. */
#ifndef XIO_NETCDF3_VIEW_H
#define XIO_NETCDF3_VIEW_H

#include <stdint.h>

#include "h5_error.h"
#include "path_list.h"

/* Makes (or replaces) the view of `input` at `view`: every dimension,
 * variable and attribute, no data; record variables as long as the input's
 * record dimension. */
int xio_nc3_view_create(const char *input, const char *view, xio_error *err);

/* Copies into the view the values of every variable of `input` but those
 * in `skip`, in pieces of about piece_bytes. */
int xio_nc3_view_fill(const char *input, const char *view, const xio_path_list *skip,
                      uint64_t piece_bytes, xio_error *err);

#endif
