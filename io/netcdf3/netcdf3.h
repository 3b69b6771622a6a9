/* A netCDF-3 file's variables where they lie (classic, 64-bit offset and
 * CDF-5), read as the blocks the passes move, with pread.
 *
 * Why: a netCDF-3 variable is one array of big-endian values at a fixed
 * offset (a fixed-size variable), or one slab per record at a fixed
 * stride (a record variable).  Reading it at those offsets needs no
 * library and no collective I/O, so each rank reads its own blocks at
 * the disk's rate; netCDF-C's parallel API for these formats goes through
 * PnetCDF, which Debian's netCDF-C is built without.  The header is read
 * as the format's specification lays it out (netCDF-C's and PnetCDF's
 * "file format specification"); the rest of the file (attributes,
 * dimensions, small variables) is read by netCDF-C (netcdf3_view.h).
 *
 * Every function is local and returns 0, or -1 with a message in err
 * naming the file. */
#ifndef XIO_NETCDF3_H
#define XIO_NETCDF3_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"
#include "shape.h"

/* One variable of the file. */
typedef struct {
  char name[257]; /* NC_MAX_NAME, and its end */
  int ndims;      /* record variables: the record dimension first */
  int64_t dims[XIO_MAX_DIMS];
  int record;          /* its first axis is the record dimension */
  size_t type_size;    /* of one value: 1, 2, 4 or 8 bytes */
  uint64_t begin;      /* file offset of its first value (of its first record) */
  uint64_t slab_bytes; /* of one record (of all of it where it has no records) */
} xio_nc3_var;

typedef struct {
  int version;           /* 1 classic, 2 64-bit offset, 5 CDF-5 */
  int64_t records;       /* the record dimension's length */
  uint64_t record_bytes; /* from one record's start to the next's */
  int nvars;
  xio_nc3_var *vars;
} xio_nc3_layout;

/* Reads path's header (netcdf3_header.c): every variable, where it lies;
 * every count, length, name, type and offset checked against the format
 * and the file's size, so that a damaged header is refused here, before
 * netCDF-C (which trusts it) reads it. */
int xio_nc3_layout_read(const char *path, xio_nc3_layout *layout, xio_error *err);
void xio_nc3_layout_free(xio_nc3_layout *layout);

/* The byte after the "CDF" that starts a netCDF-3 file (its version: 1
 * classic, 2 64-bit offset, 5 CDF-5), or -1 where path does not start so
 * (or cannot be read). */
int xio_nc3_signature(const char *path);

/* The header of path read and checked as xio_nc3_layout_read does. */
int xio_nc3_header_check(const char *path, xio_error *err);

/* One variable opened for reading. */
typedef struct xio_nc3_source xio_nc3_source;

/* Opens variable `name` (its netCDF-4 view's dataset path, "/name" or
 * "/_nc4_non_coord_name", is accepted) of path,
 * whose axes must be `shape`'s; messages call it `shown`. */
int xio_nc3_source_open(const char *path, const char *name, const xio_shape *shape,
                        const char *shown, xio_nc3_source **source, xio_error *err);

/* The block [row, row + nrows) x [col, col + ncols) of the variable folded
 * as a matrix of `cols` columns of elements of elem_size bytes (its values
 * in their own order: h5_matrix.h's input), row-major and contiguous in
 * buf, in this machine's byte order. */
int xio_nc3_source_read(const xio_nc3_source *source, int64_t cols, size_t elem_size, int64_t row,
                        int64_t nrows, int64_t col, int64_t ncols, void *buf, xio_error *err);

/* NULL is accepted. */
void xio_nc3_source_free(xio_nc3_source *source);

#endif
