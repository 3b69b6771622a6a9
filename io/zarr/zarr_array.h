/* A Zarr array in a directory store: its metadata, and its chunks, each
 * a file named by its key, encoded by the chunk codec (filters.h) with
 * the array's codecs.  Zarr v2 (.zarray, chunk keys "0.1.2") and v3
 * (zarr.json, the regular grid, keys "c/0/1/2"). */
#ifndef XIO_ZARR_ARRAY_H
#define XIO_ZARR_ARRAY_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

#include "chunk_writer.h"
#include "filters.h"
#include "h5_error.h"
#include "shape.h"
#include "shard.h"

typedef enum {
  XIO_ZARR_BLOSC_ZSTD, /* the default (user-guide.md says why) */
  XIO_ZARR_BLOSC_LZ4,
  XIO_ZARR_GZIP,
  XIO_ZARR_ZSTD,
  XIO_ZARR_UNCOMPRESSED
} xio_zarr_compressor;

/* How a store's arrays are written. */
typedef struct {
  int format; /* 2 or 3 */
  xio_zarr_compressor compressor;
  int level; /* < 0: the compressor's default */
} xio_zarr_codec;

/* "blosc-zstd" and the like (--zarr-codec's names); -1 where `name` is
 * none of them. */
int xio_zarr_compressor_of(const char *name, xio_zarr_compressor *compressor);
const char *xio_zarr_compressor_name(xio_zarr_compressor compressor);

typedef struct {
  char path[4096]; /* the array's directory */
  int format;
  int ndims; /* 0: a scalar */
  int64_t shape[XIO_MAX_DIMS], chunks[XIO_MAX_DIMS];
  char kind; /* 'i', 'u' or 'f' */
  size_t type_size;
  int big_endian;
  xio_zarr_codec codec;
  xio_filters codecs; /* the chunk codec's pipeline */
  unsigned char fill[16];
  int has_fill; /* else Zarr v2's null, v3's zero */
  /* v3: each chunk of the grid (chunks[]) a shard of inner chunks
   * (sharding_indexed, shard.h) */
  int sharded;
  xio_shard_layout shards;
  /* chunk keys: "c/0/1" (v3's default), "0.1" (v2's); a store read may
   * have either separator, and v3's "v2" encoding has no "c" */
  char separator;
  int key_prefix;
} xio_zarr_array;

/* Local.  `a` described: at `path`, of HDF5 `type` (an integer or a
 * float), shaped `shape` in chunks `chunks`, with `fill` (NULL: none) as
 * its fill value.  -1 with why (a type Zarr cannot take, say). */
int xio_zarr_array_init(xio_zarr_array *a, const char *path, const xio_zarr_codec *codec,
                        hid_t type, const xio_shape *shape, const int64_t *chunks, const void *fill,
                        char *why, size_t why_size);

/* Local, v3.  The array's chunks grouped into shards of `shard` values
 * along each axis (each rounded up to a whole number of chunks, at most
 * the array's extent rounded so): the grid's chunks become the shards.
 * A shard of one chunk leaves the array unsharded.  -1 with why for v2. */
int xio_zarr_array_shard(xio_zarr_array *a, const int64_t *shard, char *why, size_t why_size);

/* An array of more chunks than this is sharded by default: a store of
 * millions of files is slow to list, copy and remove, and parallel file
 * systems limit how many a user may have (rechunker#80). */
#define XIO_ZARR_MANY_FILES 1000

/* Local, v3, not yet sharded.  The default shards of an array of more
 * than XIO_ZARR_MANY_FILES chunks into `shard` (values along each axis):
 * its chunks grouped a doubling at a time along the axis with the most
 * shards left (the later on ties: each shard a compact block) until at
 * most that many files remain or a shard would pass most_bytes.  0 where
 * it needs none (or no shard of two chunks fits most_bytes). */
int xio_zarr_default_shards(const xio_zarr_array *a, uint64_t most_bytes, int64_t *shard);

/* The files of the array's chunks (of a sharded one: its shards). */
int64_t xio_zarr_files(const xio_zarr_array *a);

/* Bytes of one whole chunk (of a sharded array: of a shard). */
size_t xio_zarr_chunk_bytes(const xio_zarr_array *a);

/* Local.  The array's directory made and its metadata written: the axes
 * named `names` (xarray's _ARRAY_DIMENSIONS in v2, dimension_names in
 * v3), `attributes` a JSON object's text (NULL: none). */
int xio_zarr_array_create(const xio_zarr_array *a, char names[][128], const char *attributes,
                          xio_error *err);

/* Local.  A group's directory made, with its metadata. */
int xio_zarr_group_create(const char *path, int format, const char *attributes, xio_error *err);

/* The file of the chunk whose first element is at `origin`. */
int xio_zarr_chunk_path(const xio_zarr_array *a, const int64_t *origin, char *path, size_t size);

/* Local.  A chunk's encoded bytes written as its file (its directories
 * made as needed), replacing any before. */
int xio_zarr_put_chunk(const xio_zarr_array *a, const int64_t *origin, const void *bytes,
                       size_t size, xio_error *err);

/* Local.  The chunk files a's directory holds: their numbers (C order
 * over its grid of chunks, of shards where sharded), sorted, in a
 * malloc'd *numbers (NULL where none), from one walk of the directory;
 * files that are no chunk key of a's are passed over.  -1 where it cannot
 * be listed. */
int xio_zarr_list_chunks(const xio_zarr_array *a, int64_t **numbers, int64_t *count);

/* The chunk writer's files (chunk_writer.h): a's chunks, put by
 * xio_zarr_put_chunk; `a` must outlive them. */
void xio_zarr_chunk_files(const xio_zarr_array *a, xio_chunk_files *files);

#endif
