/* The pieces of an array's metadata read back (zarr_meta.h), inside the
 * zarr room: its codecs (zarr_meta_codecs.c), and what every field's
 * check needs (zarr_meta_fields.c).  Every field is untrusted: each is checked for its type
 * and range before it is used, and refused with a message naming the
 * array (`shown`), the field and its value. */
#ifndef XIO_ZARR_META_PARTS_H
#define XIO_ZARR_META_PARTS_H

#include <jansson.h>
#include <stddef.h>

#include "h5_error.h"
#include "zarr_array.h"

/* A JSON value's text for a message: compact, at most about 60
 * characters ("..." past them). */
void xio_zarr_json_shown(json_t *value, char *text, size_t size);

/* The `ndims` integers of `list` (a JSON list) into v, each at least
 * `least`: -1 with a message naming the field `what`. */
int xio_zarr_integers(json_t *list, int ndims, int64_t least, int64_t *v, const char *what,
                      const char *shown, xio_error *err);

/* v2's filters then compressor (of the .zarray `meta`), as the chunk
 * codec's pipeline. */
int xio_zarr_codecs_v2(xio_zarr_array *a, json_t *meta, const char *shown, xio_error *err);

/* v3's "codecs": "bytes" (its endian), then bytes-to-bytes codecs; or
 * sharding_indexed alone, the grid's chunks then shards of inner chunks
 * (a->chunks must be read already). */
int xio_zarr_codecs_v3(xio_zarr_array *a, json_t *codecs, const char *shown, xio_error *err);

#endif
