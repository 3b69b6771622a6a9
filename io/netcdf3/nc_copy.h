/* A netCDF file's structure and values copied into a netCDF-4 file with
 * netCDF-C: the views that HDF5 reads in place of a netCDF-3 input
 * (netcdf3_view.h) or of several inputs joined (join_view.h).
 *
 * Every function is local and returns 0, or -1 with a message in err
 * naming `input`. */
#ifndef XIO_NC_COPY_H
#define XIO_NC_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"

/* 0, or -1 with netCDF-C's reason for `what` in err. */
int xio_nc_failed(int status, const char *what, const char *path, xio_error *err);

/* Each of n values of `size` bytes at v reversed in place: into or out
 * of this machine's byte order. */
void xio_reverse_bytes(unsigned char *v, size_t n, size_t size);

/* Writes `values` (of this machine's byte order, `count` from `start`)
 * into variable varid of nc, as nc_put_vara should.  netCDF-C before
 * 4.10.1 writes a variable of the other byte order into a file it opened
 * again without converting them (netcdf-c#1802: a big-endian coordinate
 * of 1, 2, 3 read back as 4.6e-41, ...); so the first of them is written
 * and read back as a value of distinct bytes first, and where it comes
 * back reversed they are given reversed.  `values` may be left so. */
int xio_nc_put_vara(int nc, int varid, const size_t *start, const size_t *count, void *values,
                    const char *what, const char *path, xio_error *err);

/* Defines in `out` (open, in define mode) the dimensions, variables and
 * attributes of `in`, in its order (each dimension keeps its id), the
 * record dimension unlimited (and `record`, a dimension's id, or -1); a
 * netCDF-4 input's variables with its chunks, filters and byte order. */
int xio_nc_define_all(int in, int out, int record, const char *input, xio_error *err);

/* Copies variable v of `in` into the same variable of `out`, from the
 * latter's record (first position) `at`, in slabs of about piece_bytes. */
int xio_nc_copy_values(int in, int out, int v, size_t at, uint64_t piece_bytes, const char *input,
                       xio_error *err);

/* Gives every dataset of `view` (an HDF5 file) along an unlimited first
 * axis `records` of them: HDF5 keeps no length for netCDF-4's unlimited
 * dimension, readers take the longest dataset along it. */
int xio_nc_extend_records(const char *view, size_t records, const char *input, xio_error *err);

#endif
