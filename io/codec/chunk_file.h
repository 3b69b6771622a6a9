/* A chunk that is a file of its own (a Zarr array's), read whole. */
#ifndef XIO_CHUNK_FILE_H
#define XIO_CHUNK_FILE_H

#include <stddef.h>

#include "filters.h"

/* Local, on any thread.  The file at `path` read into the scratch's
 * buffer (filters.h): its bytes at *bytes, *size of them.  0; 1 where
 * there is no such file; -1 with why ("cannot be read: ..."). */
int xio_chunk_file_read(const char *path, xio_codec_scratch *scratch, const unsigned char **bytes,
                        size_t *size, char *why, size_t why_size);

/* Local, on any thread.  A chunk of chunk_bytes holding `fill` (one
 * value of type_size bytes; NULL: zeros) in the scratch's buffer: what a
 * missing chunk file holds.  NULL when out of memory. */
const unsigned char *xio_chunk_file_fill(const void *fill, size_t type_size, size_t chunk_bytes,
                                         xio_codec_scratch *scratch);

#endif
