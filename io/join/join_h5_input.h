/* A netCDF-4 input of a join read into the view (join_view.h) through
 * HDF5 itself, where it is plain: netCDF-C's open reads every variable's
 * metadata and dimension scales (0.45 ms a file, against HDF5's 0.04),
 * which is most of the time of an archive of a thousand daily files.
 *
 * Plain: the view's variables (the first input's) each a dataset of its
 * name, of the same type (byte order aside), rank and lengths (the
 * records aside), every record variable of as many records, no other
 * object but the view's dimensions.  Anything else, and any value that
 * differs, is left to netCDF-C (join_view.c), which says what differs. */
#ifndef XIO_JOIN_H5_INPUT_H
#define XIO_JOIN_H5_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "path_list.h"

/* What the fill learns of a plain input: its records, and its record
 * coordinate's first and last values (spanned 0: it has none). */
typedef struct {
  size_t records;
  int spanned;
  double first, last;
} xio_join_h5_found;

/* Local.  Reads the netCDF-4 input at `path` into `view` (netCDF-C's id
 * of the view, open for writing) as join_view.c's netCDF-C fill does:
 * its record variables but those in `skip` from the view's record `at`,
 * in pieces of about piece_bytes, its fixed ones compared with the
 * view's.  1 where it did all that; 0 where the input is not plain or a
 * value differs or anything failed, the view's records from `at` then
 * left for netCDF-C to write again. */
int xio_join_h5_fill(const char *path, int view, size_t at, const xio_path_list *skip,
                     uint64_t piece_bytes, xio_join_h5_found *found);

#endif
