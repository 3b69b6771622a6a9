/* Zarr v3's shards (shard.h). */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_codecs.h"

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

size_t xio_shard_inner_room(const xio_shard_layout *l) {
  return xio_chunk_encode_bound(&l->codecs, xio_shard_inner_bytes(l)) + INDEX_ENTRY;
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

/* Inner chunk k's values copied out of (or, with `into`, back into) the
 * shard's: runs of its last axis, an odometer over the axes before. */
static void move_inner(const xio_shard_layout *l, int64_t k, unsigned char *shard,
                       unsigned char *chunk, int into) {
  const int nd = l->ndims, last = nd - 1;
  const int64_t zero[XIO_MAX_DIMS] = {0};
  int64_t origin[XIO_MAX_DIMS], at[XIO_MAX_DIMS] = {0};
  xio_shard_inner_origin(l, zero, k, origin);
  const size_t run = (size_t)(nd ? l->inner[last] : 1) * l->type_size;
  for (size_t done = 0;; done += run) {
    int64_t src = 0;
    for (int i = 0; i < nd; i++) src = src * l->shard[i] + origin[i] + (i < last ? at[i] : 0);
    unsigned char *in_shard = shard + (size_t)src * l->type_size;
    if (into)
      memcpy(in_shard, chunk + done, run);
    else
      memcpy(chunk + done, in_shard, run);
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
  const size_t index_bytes = (size_t)n * INDEX_ENTRY + CRC_BYTES;
  seal_index(index, index_bytes);
  return at + index_bytes;
}

int xio_shard_encode(const xio_shard_layout *l, const unsigned char *values, unsigned char *out,
                     size_t room, size_t *size, xio_codec_scratch *scratch) {
  const int64_t n = xio_shard_chunks(l);
  const size_t index_bytes = (size_t)n * INDEX_ENTRY + CRC_BYTES, bytes = xio_shard_inner_bytes(l);
  if (room < index_bytes) return 1;
  unsigned char *index = malloc(index_bytes), *chunk = malloc(bytes);
  size_t at = 0;
  int rc = index && chunk ? 0 : -1;
  for (int64_t k = 0; k < n && rc == 0; k++) {
    size_t packed = 0;
    move_inner(l, k, (unsigned char *)values, chunk, 0);
    rc = xio_chunk_encode_from(&l->codecs, 0, chunk, bytes, out + at, room - index_bytes - at,
                               &packed, scratch);
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

int xio_shard_decode(const xio_shard_layout *l, const unsigned char *stored, size_t size,
                     unsigned char *values, xio_codec_scratch *scratch, char *why,
                     size_t why_size) {
  const int64_t n = xio_shard_chunks(l);
  const size_t index_bytes = (size_t)n * INDEX_ENTRY + CRC_BYTES, bytes = xio_shard_inner_bytes(l);
  if (size < index_bytes) {
    snprintf(why, why_size, "hold %zu bytes, fewer than a shard's index", size);
    return -1;
  }
  const unsigned char *index = stored + size - index_bytes;
  if (!xio_crc32c_matches(index, index_bytes - CRC_BYTES)) {
    snprintf(why, why_size, "fail their shard index's crc32c checksum");
    return -1;
  }
  for (int64_t k = 0; k < n; k++) {
    const uint64_t at = get_u64(index + (size_t)k * INDEX_ENTRY),
                   length = get_u64(index + (size_t)k * INDEX_ENTRY + 8);
    const unsigned char *chunk = NULL;
    char inner_why[200] = "";
    if (at == UINT64_MAX && length == UINT64_MAX) {
      snprintf(why, why_size, "lack inner chunk %lld of the shard", (long long)k);
      return -1;
    }
    if (at > size - index_bytes || length > size - index_bytes - at ||
        xio_chunk_decode(&l->codecs, 0, stored + at, length, bytes, scratch, &chunk, inner_why,
                         sizeof inner_why)) {
      snprintf(why, why_size, "inner chunk %lld of the shard: %s", (long long)k,
               inner_why[0] ? inner_why : "lies outside it");
      return -1;
    }
    move_inner(l, k, values, (unsigned char *)chunk, 1);
  }
  return 0;
}
