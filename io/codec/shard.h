/* Zarr v3's sharding_indexed codec, as a coder of whole chunks: a shard
 * (one chunk of the array's grid, one file) holds inner chunks, each
 * encoded by the inner codecs, one after another in C order, then their
 * index (each one's offset and length, little-endian 64-bit) and the
 * index's crc32c ("index_location": "end"). */
#ifndef XIO_SHARD_H
#define XIO_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "filters.h"
#include "shape.h"

typedef struct xio_shard_layout {
  int ndims;
  int64_t shard[XIO_MAX_DIMS], inner[XIO_MAX_DIMS]; /* each shard[i] a multiple of inner[i] */
  size_t type_size;
  xio_filters codecs; /* an inner chunk's */
} xio_shard_layout;

/* Inner chunks in a shard, and the most bytes a shard encodes to. */
int64_t xio_shard_chunks(const xio_shard_layout *l);
size_t xio_shard_bound(const xio_shard_layout *l);

/* Bytes of an inner chunk's values; the most they encode to, the room
 * its encoder is given (given more, Blosc fills it: the shard outgrows
 * its bound); and the room one takes in a shard's xio_shard_bound, that
 * and its index entry. */
size_t xio_shard_inner_bytes(const xio_shard_layout *l);
size_t xio_shard_inner_bound(const xio_shard_layout *l);
size_t xio_shard_inner_room(const xio_shard_layout *l);

/* The first value's position of inner chunk k (C order over the shard's
 * inner grid) of the shard at shard_origin. */
void xio_shard_inner_origin(const xio_shard_layout *l, const int64_t *shard_origin, int64_t k,
                            int64_t *origin);

/* Local.  A shard whose inner chunks were encoded apart, chunk k's
 * sizes[k] bytes (at most xio_shard_inner_bound) at slots + k *
 * xio_shard_inner_room: packed into out
 * (at or before slots: xio_shard_bound bytes from slots are its room),
 * one after another, then the index and its crc32c.  The shard's bytes. */
size_t xio_shard_pack(const xio_shard_layout *l, unsigned char *slots, const size_t *sizes,
                      unsigned char *out);

/* Local, on any thread.  A shard's values (C order over l->shard)
 * encoded into out (room bytes): its length in *size.  1 where it does not
 * fit the room, -1 when out of memory. */
int xio_shard_encode(const xio_shard_layout *l, const unsigned char *values, unsigned char *out,
                     size_t room, size_t *size, xio_codec_scratch *scratch);

/* Bytes of a shard's index (its file's last bytes), and the number of
 * the inner chunk at `origin` (its first value, in the array) within its
 * shard, C order over the shard's inner grid. */
size_t xio_shard_index_bytes(const xio_shard_layout *l);
int64_t xio_shard_inner_number(const xio_shard_layout *l, const int64_t *origin);

/* Local.  Inner chunk k's place in its shard, from the shard's `index`
 * (xio_shard_index_bytes of them) after data_bytes of inner chunks: 0
 * with *at and *length; 1 where the shard holds none (Zarr: the fill
 * value); -1 with why the index is damaged ("fails its crc32c checksum",
 * "places inner chunk 3 outside the shard"). */
int xio_shard_entry(const xio_shard_layout *l, const unsigned char *index, uint64_t data_bytes,
                    int64_t k, uint64_t *at, uint64_t *length, char *why, size_t why_size);

#endif
