/* A Zarr store's metadata read back (jansson): what a directory holds (a
 * group or an array, v2 or v3), a group's arrays, and an array's shape,
 * chunks, data type, fill value, codecs and chunk keys as an
 * xio_zarr_array (zarr_array.h), with its axis names and attributes.
 * What xpose cannot read exactly (another codec or data type, Fortran
 * order, a transpose codec, an index at a shard's start) is refused,
 * naming the array and what it has.  Every function is local and returns
 * 0, or -1 with a message naming `shown` (the path the user gave). */
#ifndef XIO_ZARR_META_H
#define XIO_ZARR_META_H

#include "h5_error.h"
#include "path_list.h"
#include "zarr_array.h"

/* The most a chunk (of a sharded array, an inner chunk) may hold, and a
 * shard's inner chunks, in a store read: a thread holds a chunk whole,
 * and a shard's index is read whole (the chunk writer's limit too). */
#define XIO_ZARR_MOST_CHUNK_BYTES ((uint64_t)1 << 30)
#define XIO_ZARR_MOST_INNER_CHUNKS ((uint64_t)1 << 20)

typedef enum { XIO_ZARR_NONE, XIO_ZARR_GROUP, XIO_ZARR_ARRAY } xio_zarr_node;

/* What the directory `path` is: a group or an array (*format 2 or 3), or
 * neither (no .zgroup, .zarray or zarr.json in it). */
int xio_zarr_node_at(const char *path, xio_zarr_node *node, int *format, xio_error *err);

/* The arrays of the group at `path`, as absolute names ("/tas"), in the
 * order of their names.  A group inside it is refused. */
int xio_zarr_group_arrays(const char *path, const char *shown, xio_path_array *names,
                          xio_error *err);

/* The group's attributes, a JSON object's text (malloc'd; "{}" where it
 * has none). */
int xio_zarr_group_attributes(const char *path, const char *shown, char **attributes,
                              xio_error *err);

/* The directory of array `name` ("/tas" or "tas") of `store`. */
void xio_zarr_array_path(const char *store, const char *name, char *path, size_t size);

/* The array at `path` described into `a`, every field checked first
 * (zarr_meta_parts.h): refused, naming the field and its value, where out
 * of range, of another type, inconsistent with another, or of a size
 * whose product passes 2^63 bytes; its axes' names into names
 * (empty where the store does not name them: *named 0); its attributes,
 * without v2's _ARRAY_DIMENSIONS, a JSON object's text (malloc'd).
 * names, named and attributes may be NULL where not wanted (the names are
 * checked all the same).  `kind` 'S' is v2's "|S1", netCDF's characters. */
int xio_zarr_array_read(const char *path, const char *shown, xio_zarr_array *a, char names[][128],
                        int *named, char **attributes, xio_error *err);

#endif
