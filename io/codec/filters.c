/* One chunk through a dataset's filters (filters.h). */
#include "filters.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deflate.h"
#include "host_memory.h"
#include "zarr_codecs.h"

enum { CHECKSUM_BYTES = 4 }; /* Fletcher32's and crc32c's */

static int is_checksum(H5Z_filter_t id) {
  return id == H5Z_FILTER_FLETCHER32 || id == XIO_CODEC_CRC32C;
}

int xio_filters_of(hid_t dcpl, xio_filters *f) {
  memset(f, 0, sizeof *f);
  f->known = 1;
  if (H5Pget_layout(dcpl) != H5D_CHUNKED) return 0;
  const int n = H5Pget_nfilters(dcpl);
  if (n < 0) return -1;
  if (n > XIO_MAX_FILTERS) {
    f->known = 0;
    snprintf(f->unknown, sizeof f->unknown, "more than %d filters", XIO_MAX_FILTERS);
    return 0;
  }
  f->count = n;
  for (int i = 0; i < n; i++) {
    unsigned flags = 0, values[8] = {0}, config = 0;
    size_t count = 8;
    char name[64] = "";
    f->id[i] =
        H5Pget_filter2(dcpl, (unsigned)i, &flags, &count, values, sizeof name, name, &config);
    if (f->id[i] < 0) return -1;
    f->value[i] = count ? values[0] : 0;
    const int known = f->id[i] == H5Z_FILTER_FLETCHER32 ||
                      (f->id[i] == H5Z_FILTER_SHUFFLE && count >= 1 && values[0] >= 1) ||
                      (f->id[i] == H5Z_FILTER_DEFLATE && count >= 1 && values[0] <= 9);
    if (!known && f->known)
      snprintf(f->unknown, sizeof f->unknown, "%s", name[0] ? name : "an unnamed filter");
    f->known = f->known && known;
  }
#if !defined(XIO_HAVE_LIBDEFLATE)
  for (int i = 0; i < n && f->known; i++)
    if (f->id[i] == H5Z_FILTER_DEFLATE) {
      f->known = 0;
      snprintf(f->unknown, sizeof f->unknown, "gzip (xpose was built without libdeflate)");
    }
#endif
  return 0;
}

struct xio_codec_scratch {
  xio_inflater *inflater;
  xio_deflater *deflater;
  int level; /* the deflater's */
  xio_zstd *zstd;
  unsigned char *work[2], *extra;
  size_t work_size[2], extra_bytes;
};

xio_codec_scratch *xio_codec_scratch_new(void) { return calloc(1, sizeof(xio_codec_scratch)); }

void xio_codec_scratch_free(xio_codec_scratch *s) {
  if (!s) return;
  xio_inflater_free(s->inflater);
  xio_deflater_free(s->deflater);
  xio_zstd_free(s->zstd);
  free(s->work[0]);
  free(s->work[1]);
  free(s->extra);
  free(s);
}

/* A kept buffer of at least `bytes` (*have of them now), grown where
 * smaller: NULL when out of memory. */
static unsigned char *kept_buffer(unsigned char **buffer, size_t *have, size_t bytes) {
  if (*have >= bytes) return *buffer;
  free(*buffer);
  *buffer = xio_host_alloc(bytes);
  *have = *buffer ? bytes : 0;
  return *buffer;
}

unsigned char *xio_codec_scratch_buffer(xio_codec_scratch *s, size_t bytes) {
  return kept_buffer(&s->extra, &s->extra_bytes, bytes);
}

int xio_codec_scratches_reserve(xio_codec_scratches *set, int threads) {
  if (set->count >= threads) return 0;
  xio_codec_scratch **each = realloc(set->each, sizeof *each * (size_t)threads);
  if (!each) return -1;
  for (int i = set->count; i < threads; i++) each[i] = NULL;
  set->each = each;
  set->count = threads;
  return 0;
}

xio_codec_scratch *xio_codec_scratches_get(xio_codec_scratches *set, int worker) {
  if (worker >= set->count) return NULL;
  if (!set->each[worker]) set->each[worker] = xio_codec_scratch_new();
  return set->each[worker];
}

void xio_codec_scratches_free(xio_codec_scratches *set) {
  for (int i = 0; i < set->count; i++) xio_codec_scratch_free(set->each[i]);
  free(set->each);
  set->each = NULL;
  set->count = 0;
}

/* Work buffer k (0 or 1) of at least `bytes`, kept for the next chunk:
 * NULL when out of memory. */
static unsigned char *work_buffer(xio_codec_scratch *s, int k, size_t bytes) {
  return kept_buffer(&s->work[k], &s->work_size[k], bytes);
}

/* Values of `size` bytes, a constant where inlined: the compiler then
 * vectorizes across the byte planes (float32 unshuffled at 14 times the
 * general loop's rate, one core of the 2-core VM). */
static inline void shuffle_sized(const unsigned char *restrict in, unsigned char *restrict out,
                                 size_t values, size_t size, int undo) {
  if (undo)
    for (size_t i = 0; i < values; i++)
      for (size_t j = 0; j < size; j++) out[i * size + j] = in[j * values + i];
  else
    for (size_t i = 0; i < values; i++)
      for (size_t j = 0; j < size; j++) out[j * values + i] = in[i * size + j];
}

/* HDF5's shuffle (H5Zshuffle.c): byte j of value i goes to j * values + i;
 * bytes past the last whole value stay where they are; one value, or
 * one-byte values, stay as they are. */
static void shuffle(const unsigned char *in, unsigned char *out, size_t bytes, size_t size,
                    int undo) {
  const size_t values = bytes / size;
  if (size <= 1 || values <= 1) {
    memcpy(out, in, bytes);
    return;
  }
  switch (size) {
    case 2: shuffle_sized(in, out, values, 2, undo); break;
    case 4: shuffle_sized(in, out, values, 4, undo); break;
    case 8: shuffle_sized(in, out, values, 8, undo); break;
    default: /* 64 values at a time, so that every byte plane's run stays in cache */
      for (size_t i0 = 0; i0 < values; i0 += 64) {
        const size_t i1 = i0 + 64 < values ? i0 + 64 : values;
        for (size_t j = 0; j < size; j++)
          if (undo)
            for (size_t i = i0; i < i1; i++) out[i * size + j] = in[j * values + i];
          else
            for (size_t i = i0; i < i1; i++) out[j * values + i] = in[i * size + j];
      }
  }
  memcpy(out + values * size, in + values * size, bytes - values * size);
}

/* HDF5's Fletcher32 (H5checksum.c): over 16-bit big-endian words, an odd
 * last byte as the high half of one. */
static uint32_t fletcher32(const unsigned char *data, size_t bytes) {
  uint32_t sum1 = 0, sum2 = 0;
  for (size_t words = bytes / 2; words;) {
    size_t run = words > 360 ? 360 : words; /* no overflow within a run */
    words -= run;
    do {
      sum1 += (uint32_t)(data[0] << 8 | data[1]);
      data += 2;
      sum2 += sum1;
    } while (--run);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (bytes % 2) {
    sum1 += (uint32_t)(*data << 8);
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

/* Stored little-endian after the data; HDF5 before 1.6.3 wrote it with
 * the bytes of each half swapped, which HDF5 still accepts. */
static int fletcher32_matches(const unsigned char *data, size_t bytes) {
  const unsigned char *c = data + bytes;
  const uint32_t stored = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
                          (uint32_t)c[3] << 24,
                 sum = fletcher32(data, bytes);
  const uint32_t swapped = (sum & 0x00ff00ffu) << 8 | (sum & 0xff00ff00u) >> 8;
  return stored == sum || stored == swapped;
}

/* The bytes going into filter i when a chunk of chunk_bytes is written
 * (sizes[count]: what is stored), where filters keep their sizes:
 * shuffle's and Fletcher32's are known, deflate's is what it gave (or
 * `deflated` unknown: 0). */
static void sizes_into(const xio_filters *f, unsigned mask, size_t chunk_bytes, size_t *sizes) {
  sizes[0] = chunk_bytes;
  for (int i = 0; i < f->count; i++) {
    const int skipped = mask >> i & 1u;
    sizes[i + 1] = skipped || f->id[i] == H5Z_FILTER_SHUFFLE ? sizes[i]
                   : is_checksum(f->id[i])                   ? sizes[i] + CHECKSUM_BYTES
                                                             : 0;
  }
}

static int checksum_matches(H5Z_filter_t id, const unsigned char *data, size_t bytes) {
  return id == H5Z_FILTER_FLETCHER32 ? fletcher32_matches(data, bytes)
                                     : xio_crc32c_matches(data, bytes);
}

/* One decompressing filter undone: deflate's, gzip's, zstd's or Blosc's
 * stream in[0, bytes) into out (room bytes). */
static xio_inflate_result expand(xio_codec_scratch *s, H5Z_filter_t id, const unsigned char *in,
                                 size_t bytes, unsigned char *out, size_t room, size_t *size) {
  if (id == H5Z_FILTER_DEFLATE) return xio_inflate(s->inflater, in, bytes, out, room, size);
  if (id == XIO_CODEC_GZIP) return xio_gunzip(s->inflater, in, bytes, out, room, size);
  int rc = -1;
  if (id == XIO_CODEC_ZSTD && (s->zstd || (s->zstd = xio_zstd_new())))
    rc = xio_zstd_decompress(s->zstd, in, bytes, out, room, size);
  else if (id == XIO_CODEC_BLOSC)
    rc = xio_blosc_decompress(in, bytes, out, room, size);
  return rc == 0 ? XIO_INFLATED : *size > room ? XIO_INFLATE_LONG : XIO_INFLATE_BAD;
}

int xio_chunk_decode(const xio_filters *f, unsigned mask, const unsigned char *stored, size_t size,
                     size_t chunk_bytes, xio_codec_scratch *s, const unsigned char **values,
                     char *why, size_t why_size) {
  size_t sizes[XIO_MAX_FILTERS + 1];
  sizes_into(f, mask, chunk_bytes, sizes);
  size_t most = chunk_bytes + CHECKSUM_BYTES * XIO_MAX_FILTERS;
  if (size > most) most = size;
  if (!s->inflater && !(s->inflater = xio_inflater_new())) {
    snprintf(why, why_size, "out of memory");
    return -1;
  }
  const unsigned char *now = stored;
  size_t have = size;
  for (int i = f->count - 1; i >= 0; i--) {
    if (mask >> i & 1u) continue;
    if (is_checksum(f->id[i])) {
      if (have < CHECKSUM_BYTES || !checksum_matches(f->id[i], now, have - CHECKSUM_BYTES)) {
        snprintf(why, why_size, "fail their %s checksum",
                 f->id[i] == H5Z_FILTER_FLETCHER32 ? "Fletcher32" : "crc32c");
        return -1;
      }
      have -= CHECKSUM_BYTES;
      continue; /* the data stays where it is */
    }
    /* only the work buffers used: a chunk left shuffled takes one */
    unsigned char *next = work_buffer(s, now == s->work[0], most);
    if (!next) {
      snprintf(why, why_size, "out of memory");
      return -1;
    }
    if (f->id[i] == H5Z_FILTER_SHUFFLE) {
      shuffle(now, next, have, f->value[i], 1);
    } else { /* to the size that went into it, where known */
      const size_t want = sizes[i] ? sizes[i] : chunk_bytes;
      size_t got = 0;
      const size_t capacity = s->work_size[next == s->work[1]];
      const xio_inflate_result r = expand(s, f->id[i], now, have, next, capacity, &got);
      if (r != XIO_INFLATED || got != want) {
        const char *verb = f->id[i] == XIO_CODEC_ZSTD    ? "decompress (zstd)"
                           : f->id[i] == XIO_CODEC_BLOSC ? "decompress (Blosc)"
                                                          : "inflate";
        if (r == XIO_INFLATE_BAD)
          snprintf(why, why_size, "do not %s", verb);
        else if (r == XIO_INFLATE_LONG)
          snprintf(why, why_size, "%s to more than %zu bytes, not %zu", verb, capacity, want);
        else
          snprintf(why, why_size, "%s to %zu bytes, not %zu", verb, got, want);
        return -1;
      }
      have = got;
    }
    now = next;
  }
  if (have != chunk_bytes) {
    snprintf(why, why_size, "hold %zu bytes, not %zu", have, chunk_bytes);
    return -1;
  }
  *values = now;
  return 0;
}

size_t xio_chunk_encode_bound(const xio_filters *f, size_t chunk_bytes) {
  size_t bound = chunk_bytes;
  for (int i = 0; i < f->count; i++)
    bound = f->id[i] == H5Z_FILTER_DEFLATE ? xio_deflate_bound(NULL, bound) /* any level's */
            : f->id[i] == XIO_CODEC_GZIP  ? xio_gzip_bound(bound)
            : f->id[i] == XIO_CODEC_ZSTD  ? xio_zstd_bound(bound)
            : f->id[i] == XIO_CODEC_BLOSC ? xio_blosc_bound(bound)
            : is_checksum(f->id[i])        ? bound + CHECKSUM_BYTES
                                           : bound;
  return bound;
}

/* The deflater of `level`, kept while the level stays. */
static xio_deflater *deflater_for(xio_codec_scratch *s, int level) {
  if (s->deflater && s->level == level) return s->deflater;
  xio_deflater_free(s->deflater);
  s->level = level;
  return s->deflater = xio_deflater_new(level);
}

/* Filters after i that are Fletcher32, or -1 where another follows:
 * filter i then writes straight into the output, and they append there. */
static int checksums_after(const xio_filters *f, int i) {
  int n = 0;
  for (int j = i + 1; j < f->count; j++) {
    if (!is_checksum(f->id[j])) return -1;
    n++;
  }
  return n;
}

/* Compressing filter i run on in[0, bytes) into out (room bytes): the
 * bytes written, 0 where they do not fit or memory ran out. */
static size_t compress(xio_codec_scratch *s, const xio_filters *f, int i, const unsigned char *in,
                       size_t bytes, unsigned char *out, size_t room) {
  const H5Z_filter_t id = f->id[i];
  if (id == XIO_CODEC_BLOSC)
    return xio_blosc_compress((int)f->value[i], f->option[i], in, bytes, out, room);
  if (id == XIO_CODEC_ZSTD)
    return s->zstd || (s->zstd = xio_zstd_new())
               ? xio_zstd_compress(s->zstd, (int)f->value[i], in, bytes, out, room)
               : 0;
  xio_deflater *d = deflater_for(s, (int)f->value[i]);
  if (!d) return 0;
  return id == XIO_CODEC_GZIP ? xio_gzip(d, in, bytes, out, room)
                               : xio_deflate(d, in, bytes, out, room);
}

int xio_filters_shuffle_first(const xio_filters *f, size_t type_size) {
  return f->count > 0 && f->id[0] == H5Z_FILTER_SHUFFLE && f->value[0] == type_size;
}

size_t xio_chunk_encode_work(const xio_filters *f, int first, size_t chunk_bytes) {
  int buffers = 0;
  for (int i = first; i < f->count && buffers < 2; i++) buffers += checksums_after(f, i) < 0;
  return (size_t)buffers * xio_chunk_encode_bound(f, chunk_bytes);
}

int xio_chunk_encode_from(const xio_filters *f, int first, const unsigned char *values,
                          size_t chunk_bytes, unsigned char *out, size_t room, size_t *size,
                          xio_codec_scratch *s) {
  const size_t bound = xio_chunk_encode_bound(f, chunk_bytes);
  const unsigned char *now = values;
  size_t have = chunk_bytes;
  for (int i = first; i < f->count; i++) {
    /* straight into out where only checksums follow: no chunk-sized work
     * buffer on the thread (a rechunk's whole-series chunks are megabytes) */
    const int after = checksums_after(f, i);
    unsigned char *next = after >= 0 ? out : work_buffer(s, now == s->work[0], bound);
    if (!next) return -1;
    /* what this filter may write: in out, the room less the checksums' */
    const size_t keep = after > 0 ? (size_t)after * CHECKSUM_BYTES : 0;
    const size_t capacity = next != out ? bound : room > keep ? room - keep : 0;
    if (is_checksum(f->id[i])) {
      if (have + CHECKSUM_BYTES > capacity) return 1;
      const uint32_t sum =
          f->id[i] == H5Z_FILTER_FLETCHER32 ? fletcher32(now, have) : xio_crc32c(now, have);
      if (now != next) memcpy(next, now, have);
      for (int b = 0; b < CHECKSUM_BYTES; b++)
        next[have + (size_t)b] = (unsigned char)(sum >> 8 * b);
      have += CHECKSUM_BYTES;
    } else if (f->id[i] == H5Z_FILTER_SHUFFLE) {
      if (have > capacity) return 1;
      shuffle(now, next, have, f->value[i], 0);
    } else {
      const size_t packed = compress(s, f, i, now, have, next, capacity);
      /* within the bound it always fits: a failed allocation */
      if (!packed) return next == out && capacity < bound ? 1 : -1;
      have = packed;
    }
    now = next;
  }
  if (now != out) { /* no filter ran */
    if (have > room) return 1;
    memcpy(out, now, have);
  }
  *size = have;
  return 0;
}

int xio_chunk_encode(const xio_filters *f, const unsigned char *values, size_t chunk_bytes,
                     unsigned char *out, size_t room, size_t *size, xio_codec_scratch *s) {
  return xio_chunk_encode_from(f, 0, values, chunk_bytes, out, room, size, s) ? -1 : 0;
}
