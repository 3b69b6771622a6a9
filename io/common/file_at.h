/* Bytes read or written at known offsets of a file (pread, pwrite), in
 * as many calls as it takes: a raw dataset's (raw_dataset.h), a netCDF-3
 * variable's (netcdf3.h).
 *
 * Both are local and return 0, or -1 with a message in err calling the
 * file `shown`. */
#ifndef XIO_FILE_AT_H
#define XIO_FILE_AT_H

#include <stddef.h>
#include <stdint.h>

#include "h5_error.h"

int xio_read_at(int fd, void *buf, size_t bytes, uint64_t offset, const char *shown,
                xio_error *err);
int xio_write_at(int fd, const void *buf, size_t bytes, uint64_t offset, const char *shown,
                 xio_error *err);

#endif
