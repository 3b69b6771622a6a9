/* A chunk that is a file of its own (a Zarr array's), read whole. */
#ifndef XIO_CHUNK_FILE_H
#define XIO_CHUNK_FILE_H

#include <stddef.h>

#include <stdint.h>

#include "filters.h"

struct xio_shard_layout;

/* Local, on any thread.  The file at `path` read into the scratch's
 * buffer (filters.h): its bytes at *bytes, *size of them.  0; 1 where
 * there is no such file; -1 with why ("cannot be read: ..."). */
int xio_chunk_file_read(const char *path, xio_codec_scratch *scratch, const unsigned char **bytes,
                        size_t *size, char *why, size_t why_size);

/* Local, on any thread.  The inner chunk at `origin` (its first value,
 * in the array) of the shard (l's: shard.h) stored in the file at
 * `path`: the shard's index read from the file's end and checked, then
 * the inner chunk's bytes read into the scratch's buffer, at *bytes.  0;
 * 1 where there is no such file, or the shard holds no such chunk (Zarr:
 * the fill value); -1 with why. */
int xio_chunk_file_read_inner(const char *path, const struct xio_shard_layout *l,
                              const int64_t *origin, xio_codec_scratch *scratch,
                              const unsigned char **bytes, size_t *size, char *why,
                              size_t why_size);

/* Local, on any thread.  A chunk of chunk_bytes holding `fill` (one
 * value of type_size bytes; NULL: zeros) in the scratch's buffer: what a
 * missing chunk file holds.  NULL when out of memory. */
const unsigned char *xio_chunk_file_fill(const void *fill, size_t type_size, size_t chunk_bytes,
                                         xio_codec_scratch *scratch);

#endif
