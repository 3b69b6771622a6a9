/* Several netCDF files joined along their record (unlimited) dimension,
 * seen as one: "the view", a netCDF-4 file that netCDF-C makes with the
 * first input's dimensions, variables (their chunks and filters) and
 * attributes, as many records as all the inputs hold, which the tool then
 * reads with HDF5 as its input (as ncrcat joins them, and as a netCDF-3
 * input is read: netcdf3_view.h).  The variables the run copies are
 * copied into it: the fixed ones from the first input, the records of
 * the others from each input in turn; those it rearranges take no space
 * in it, their values read from the inputs themselves (join_source.h).
 *
 * Inputs are netCDF-4 or netCDF-3 files (each as it is), of one group,
 * of netCDF's atomic types.  Each is opened in turn, never two at once
 * but the view and the first.
 *
 * Both functions are local (rank 0's, with no rank holding the view
 * open) and return 0, or -1 with a message naming the input(s).  They
 * read `files` in place of the inputs where given (NULL: the inputs
 * themselves), each a file that stands for its input: Zarr stores' own
 * netCDF-4 views (zarr_view.h); messages name the inputs. */
#ifndef XIO_JOIN_VIEW_H
#define XIO_JOIN_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "path_list.h"

/* Makes (or replaces) the view of the inputs at `view`: the first's
 * structure, no records yet.  They are joined along their record
 * dimension, or along the fixed one named `concat` (NULL: none named),
 * the first of every variable that has it, which the view makes its
 * record dimension; the variables that have it (the joined ones) into
 * *joined, which the caller frees. */
int xio_join_view_create(const char *const *inputs, const char *const *files, const char *concat,
                         const char *view, xio_path_array *joined, xio_error *err);

/* In one pass over the `count` inputs: checks that each has the first's
 * variables, types and dimensions (the record dimension's length aside)
 * and the same values of the fixed variables, the first difference
 * failing it, naming both files and the variable; copies into the view
 * the values of every variable but the record variables in `skip`, in
 * pieces of about piece_bytes (records input by input, fixed ones from
 * the first); gives the view all the records.  records[i]: input i's
 * records.  A record coordinate (the variable named as the record
 * dimension) that does not increase from one input to the next is said
 * in `warning` (a line; "" for none). */
int xio_join_view_fill(const char *const *inputs, const char *const *files, int count,
                       const char *view, const xio_path_list *skip, uint64_t piece_bytes,
                       int64_t *records, char *warning, size_t warning_size, xio_error *err);

#endif
