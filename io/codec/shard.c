/* Zarr v3's shards (shard.h). */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

enum { INDEX_ENTRY = 16, CRC_BYTES = 4 };

int64_t xio_shard_chunks(const xio_shard_layout *l) {
  int64_t n = 1;
  for (int i = 0; i < l->ndims; i++) n *= l->shard[i] / l->inner[i];
  return n;
}

size_t xio_shard_inner_bytes(const xio_shard_layout *l) {
  size_t bytes = l->type_size;
  for (int i = 0; i < l->ndims; i++) bytes *= (size_t)l->inner[i];
  return bytes;
}

size_t xio_shard_inner_bound(const xio_shard_layout *l) {
  return xio_chunk_encode_bound(&l->codecs, xio_shard_inner_bytes(l));
}

size_t xio_shard_inner_room(const xio_shard_layout *l) {
  return xio_shard_inner_bound(l) + INDEX_ENTRY;
}

size_t xio_shard_index_bytes(const xio_shard_layout *l) {
  return (size_t)xio_shard_chunks(l) * INDEX_ENTRY + CRC_BYTES;
}

size_t xio_shard_bound(const xio_shard_layout *l) {
  return (size_t)xio_shard_chunks(l) * xio_shard_inner_room(l) + CRC_BYTES;
}

void xio_shard_inner_origin(const xio_shard_layout *l, const int64_t *shard_origin, int64_t k,
                            int64_t *origin) {
  for (int i = l->ndims - 1; i >= 0; i--) { /* k in C order over the inner grid */
    const int64_t grid = l->shard[i] / l->inner[i];
    origin[i] = shard_origin[i] + k % grid * l->inner[i];
    k /= grid;
  }
}

/* Inner chunk k's values copied out of the shard's: runs of its last
 * axis, an odometer over the axes before. */
static void copy_inner(const xio_shard_layout *l, int64_t k, const unsigned char *shard,
                       unsigned char *chunk) {
  const int nd = l->ndims, last = nd - 1;
  const int64_t zero[XIO_MAX_DIMS] = {0};
  int64_t origin[XIO_MAX_DIMS], at[XIO_MAX_DIMS] = {0};
  xio_shard_inner_origin(l, zero, k, origin);
  const size_t run = (size_t)(nd ? l->inner[last] : 1) * l->type_size;
  for (size_t done = 0;; done += run) {
    int64_t src = 0;
    for (int i = 0; i < nd; i++) src = src * l->shard[i] + origin[i] + (i < last ? at[i] : 0);
    memcpy(chunk + done, shard + (size_t)src * l->type_size, run);
    int i = last - 1;
    while (i >= 0 && at[i] == l->inner[i] - 1) at[i--] = 0;
    if (i < 0) return;
    at[i]++;
  }
}

static void put_u64(unsigned char *at, uint64_t v) {
  for (int b = 0; b < 8; b++) at[b] = (unsigned char)(v >> 8 * b);
}

static uint64_t get_u64(const unsigned char *at) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; b--) v = v << 8 | at[b];
  return v;
}

/* The index's crc32c put after its entries. */
static void seal_index(unsigned char *index, size_t index_bytes) {
  const uint32_t crc = xio_crc32c(index, index_bytes - CRC_BYTES);
  for (int b = 0; b < CRC_BYTES; b++)
    index[index_bytes - CRC_BYTES + (size_t)b] = (unsigned char)(crc >> 8 * b);
}

size_t xio_shard_pack(const xio_shard_layout *l, unsigned char *slots, const size_t *sizes,
                      unsigned char *out) {
  const int64_t n = xio_shard_chunks(l);
  const size_t room = xio_shard_inner_room(l);
  size_t at = 0;
  for (int64_t k = 0; k < n; k++) { /* each moves down, never over one not yet moved */
    memmove(out + at, slots + (size_t)k * room, sizes[k]);
    at += sizes[k];
  }
  unsigned char *index = out + at; /* within the slots, every one moved by now */
  for (int64_t k = 0, offset = 0; k < n; offset += (int64_t)sizes[k++]) {
    put_u64(index + (size_t)k * INDEX_ENTRY, (uint64_t)offset);
    put_u64(index + (size_t)k * INDEX_ENTRY + 8, sizes[k]);
  }
  seal_index(index, xio_shard_index_bytes(l));
  return at + xio_shard_index_bytes(l);
}

int xio_shard_encode(const xio_shard_layout *l, const unsigned char *values, unsigned char *out,
                     size_t room, size_t *size, xio_codec_scratch *scratch) {
  const int64_t n = xio_shard_chunks(l);
  const size_t index_bytes = xio_shard_index_bytes(l), bytes = xio_shard_inner_bytes(l);
  const size_t inner_bound = xio_shard_inner_bound(l);
  if (room < index_bytes) return 1;
  unsigned char *index = malloc(index_bytes), *chunk = malloc(bytes);
  size_t at = 0;
  int rc = index && chunk ? 0 : -1;
  for (int64_t k = 0; k < n && rc == 0; k++) {
    size_t packed = 0;
    copy_inner(l, k, values, chunk);
    /* each within its bound (given more, Blosc fills it), and the room
     * left: none, not a wrapped size, once used up */
    const size_t left = at < room - index_bytes ? room - index_bytes - at : 0;
    rc = left ? xio_chunk_encode_from(&l->codecs, 0, chunk, bytes, out + at,
                                      left < inner_bound ? left : inner_bound, &packed, scratch)
              : 1;
    put_u64(index + (size_t)k * INDEX_ENTRY, at);
    put_u64(index + (size_t)k * INDEX_ENTRY + 8, packed);
    at += packed;
  }
  if (rc == 0) {
    seal_index(index, index_bytes);
    memcpy(out + at, index, index_bytes);
    *size = at + index_bytes;
  }
  free(index), free(chunk);
  return rc;
}

int64_t xio_shard_inner_number(const xio_shard_layout *l, const int64_t *origin) {
  int64_t k = 0;
  for (int i = 0; i < l->ndims; i++)
    k = k * (l->shard[i] / l->inner[i]) + origin[i] % l->shard[i] / l->inner[i];
  return k;
}

int xio_shard_entry(const xio_shard_layout *l, const unsigned char *index, uint64_t data_bytes,
                    int64_t k, uint64_t *at, uint64_t *length, char *why, size_t why_size) {
  const size_t index_bytes = xio_shard_index_bytes(l);
  if (!xio_crc32c_matches(index, index_bytes - CRC_BYTES)) {
    snprintf(why, why_size, "fails its crc32c checksum");
    return -1;
  }
  *at = get_u64(index + (size_t)k * INDEX_ENTRY),
  *length = get_u64(index + (size_t)k * INDEX_ENTRY + 8);
  if (*at == UINT64_MAX && *length == UINT64_MAX) return 1; /* never written: the fill value */
  if (*at <= data_bytes && *length <= data_bytes - *at) return 0;
  snprintf(why, why_size, "places inner chunk %lld outside the shard", (long long)k);
  return -1;
}
