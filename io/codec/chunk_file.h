/* A chunk that is a file of its own (a Zarr array's), read whole. */
#ifndef XIO_CHUNK_FILE_H
#define XIO_CHUNK_FILE_H

#include <stddef.h>

#include <stdint.h>

#include "filters.h"
#include "h5_error.h"
#include "shape.h"

struct xio_shard_layout;

/* Chunks that are files of their own, each rank storing its own (the
 * chunk writer, chunk_writer.h), in place of an HDF5 dataset's one
 * writer: a Zarr array's files (zarr_array.h).  put() writes one
 * chunk's encoded bytes, on any thread; path() names the file of the
 * chunk at `origin`, for the chunk reader (chunk_reader.h). */
typedef struct xio_chunk_files {
  xio_filters filters;
  int64_t chunk[XIO_MAX_DIMS];
  const void *fill; /* one value's bytes, what edge chunks hold past the end */
  int (*put)(void *target, const int64_t *origin, const void *bytes, size_t size, xio_error *err);
  int (*path)(const void *target, const int64_t *origin, char *path, size_t size);
  void *target;
  /* each file a shard of inner chunks (shard.h), `chunk` its shape; NULL:
   * one chunk, through `filters` */
  const struct xio_shard_layout *shards;
  /* Where it can: the numbers (C order over the grid of `chunk`s) of the
   * files that exist, sorted (malloc'd); -1 where they cannot be listed.
   * NULL: each is opened as it is asked for. */
  int (*list)(const void *target, int64_t **numbers, int64_t *count);
} xio_chunk_files;

/* The most bytes a stored chunk of chunk_bytes encoded by `filters`
 * may hold as read: twice what any of its encoders writes, and a page; a
 * file longer is damaged, and is not read into memory. */
uint64_t xio_chunk_file_most(const xio_filters *filters, size_t chunk_bytes);

/* Local, on any thread.  The file at `path` read into the scratch's
 * buffer (filters.h): its bytes at *bytes, *size of them.  0; 1 where
 * there is no such file; -1 with why ("cannot be read: ...", or, where
 * it holds more than `most` bytes, "(PATH): ... it is damaged"). */
int xio_chunk_file_read(const char *path, uint64_t most, xio_codec_scratch *scratch,
                        const unsigned char **bytes, size_t *size, char *why, size_t why_size);

/* Local, on any thread.  The inner chunk at `origin` (its first value,
 * in the array) of the shard (l's: shard.h) stored in the file at
 * `path`: the shard's index read from the file's end and checked, then
 * the inner chunk's bytes (at most `most`) read into the scratch's
 * buffer, at *bytes.  0; 1 where there is no such file, or the shard
 * holds no such chunk (Zarr: the fill value); -1 with why. */
int xio_chunk_file_read_inner(const char *path, const struct xio_shard_layout *l, uint64_t most,
                              const int64_t *origin, xio_codec_scratch *scratch,
                              const unsigned char **bytes, size_t *size, char *why,
                              size_t why_size);

/* Local, on any thread.  A chunk of chunk_bytes holding `fill` (one
 * value of type_size bytes; NULL: zeros) in the scratch's buffer: what a
 * missing chunk file holds.  NULL when out of memory. */
const unsigned char *xio_chunk_file_fill(const void *fill, size_t type_size, size_t chunk_bytes,
                                         xio_codec_scratch *scratch);

#endif
