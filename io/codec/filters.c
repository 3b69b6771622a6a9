/* One chunk through a dataset's filters (filters.h). */
#include "filters.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "host_memory.h"

enum { CHECKSUM_BYTES = 4 }; /* Fletcher32's and crc32c's */

/* Filter i's codec (every filter of a pipeline that is `known` has one). */
static const xio_codec *codec_of(const xio_filters *f, int i) { return xio_codec_of(f->id[i]); }

static int is_checksum(const xio_filters *f, int i) {
  const xio_codec *c = codec_of(f, i);
  return c && c->role == XIO_CODEC_CHECKSUM;
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
    const xio_codec *c = xio_codec_of(f->id[i]);
    /* a level of 0-9, a value's bytes of 1 or more, where the codec takes one */
    const int known = xio_codec_runs(c) &&
                      (c->settings != XIO_SETTINGS_LEVEL || (count >= 1 && values[0] <= 9)) &&
                      (c->settings != XIO_SETTINGS_ELEMENT_SIZE || (count >= 1 && values[0] >= 1));
    if (!known && f->known)
      snprintf(f->unknown, sizeof f->unknown, "%s%s",
               c         ? c->name
               : name[0] ? name
                         : "an unnamed filter",
               c && c->role != XIO_CODEC_FOREIGN && !xio_codec_runs(c)
                   ? " (xpose was built without libdeflate)"
                   : "");
    f->known = f->known && known;
  }
  return 0;
}

struct xio_codec_scratch {
  void *state[XIO_CODEC_PLACES]; /* each codec's, made at its first use */
  unsigned char *work[2], *extra;
  size_t work_size[2], extra_bytes;
};

xio_codec_scratch *xio_codec_scratch_new(void) { return calloc(1, sizeof(xio_codec_scratch)); }

void xio_codec_scratch_free(xio_codec_scratch *s) {
  if (!s) return;
  for (int place = 0; place < XIO_CODEC_PLACES; place++)
    if (s->state[place]) xio_codec_at(place)->state_free(s->state[place]);
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

/* Local.  The codec's state on this thread, made at its first use:
 * NULL when out of memory (or where the codec keeps none). */
static void *state_of(xio_codec_scratch *s, const xio_codec *c) {
  void **state = &s->state[xio_codec_place(c)];
  if (!*state && c->state_new) *state = c->state_new();
  return *state;
}

/* The bytes going into filter i when a chunk of chunk_bytes is written
 * (sizes[count]: what is stored), where filters keep their sizes:
 * shuffle's and Fletcher32's are known, deflate's is what it gave (or
 * `deflated` unknown: 0). */
static void sizes_into(const xio_filters *f, unsigned mask, size_t chunk_bytes, size_t *sizes) {
  sizes[0] = chunk_bytes;
  for (int i = 0; i < f->count; i++) {
    const int skipped = mask >> i & 1u;
    const xio_codec_role role = codec_of(f, i)->role;
    sizes[i + 1] = skipped || role == XIO_CODEC_TRANSFORM ? sizes[i]
                   : role == XIO_CODEC_CHECKSUM           ? sizes[i] + CHECKSUM_BYTES
                                                          : 0;
  }
}

/* Local.  Filter i (a compressor) undone: now[0, have) into next, to
 * `want` bytes; -1 with why. */
static int expand(const xio_codec *c, xio_codec_scratch *s, const unsigned char *now, size_t have,
                  unsigned char *next, size_t capacity, size_t want, size_t *got, char *why,
                  size_t why_size) {
  void *state = state_of(s, c);
  if (!state && c->state_new) return snprintf(why, why_size, "out of memory"), -1;
  const xio_inflate_result r = c->decode(state, now, have, next, capacity, got);
  if (r == XIO_INFLATED && *got == want) return 0;
  if (r == XIO_INFLATE_BAD)
    snprintf(why, why_size, "do not %s", c->verb);
  else if (r == XIO_INFLATE_LONG)
    snprintf(why, why_size, "%s to more than %zu bytes, not %zu", c->verb, capacity, want);
  else
    snprintf(why, why_size, "%s to %zu bytes, not %zu", c->verb, *got, want);
  return -1;
}

int xio_chunk_decode(const xio_filters *f, unsigned mask, const unsigned char *stored, size_t size,
                     size_t chunk_bytes, xio_codec_scratch *s, const unsigned char **values,
                     char *why, size_t why_size) {
  size_t sizes[XIO_MAX_FILTERS + 1];
  sizes_into(f, mask, chunk_bytes, sizes);
  size_t most = chunk_bytes + CHECKSUM_BYTES * XIO_MAX_FILTERS;
  if (size > most) most = size;
  const unsigned char *now = stored;
  size_t have = size;
  for (int i = f->count - 1; i >= 0; i--) {
    if (mask >> i & 1u) continue;
    const xio_codec *c = codec_of(f, i);
    if (c->role == XIO_CODEC_CHECKSUM) {
      if (have < CHECKSUM_BYTES || !c->matches(now, have - CHECKSUM_BYTES)) {
        snprintf(why, why_size, "fail their %s checksum", c->verb);
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
    if (c->role == XIO_CODEC_TRANSFORM) {
      c->transform(now, next, have, f->value[i], 1);
    } else { /* to the size that went into it, where known */
      size_t got = 0;
      if (expand(c, s, now, have, next, s->work_size[next == s->work[1]],
                 sizes[i] ? sizes[i] : chunk_bytes, &got, why, why_size))
        return -1;
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
  for (int i = 0; i < f->count; i++) {
    const xio_codec *c = codec_of(f, i);
    bound = c->role == XIO_CODEC_COMPRESSOR ? c->bound(bound)
            : c->role == XIO_CODEC_CHECKSUM ? bound + CHECKSUM_BYTES
                                            : bound;
  }
  return bound;
}

/* Filters after i that are checksums, or -1 where another follows:
 * filter i then writes straight into the output, and they append there. */
static int checksums_after(const xio_filters *f, int i) {
  int n = 0;
  for (int j = i + 1; j < f->count; j++) {
    if (!is_checksum(f, j)) return -1;
    n++;
  }
  return n;
}

/* Compressing filter i run on in[0, bytes) into out (room bytes): the
 * bytes written, 0 where they do not fit or memory ran out. */
static size_t compress(xio_codec_scratch *s, const xio_filters *f, int i, const unsigned char *in,
                       size_t bytes, unsigned char *out, size_t room) {
  const xio_codec *c = codec_of(f, i);
  void *state = state_of(s, c);
  if (!state && c->state_new) return 0;
  return c->encode(state, f->value[i], f->option[i], in, bytes, out, room);
}

int xio_filters_shuffle_first(const xio_filters *f, size_t type_size) {
  return f->count > 0 && codec_of(f, 0) == &xio_codec_shuffle && f->value[0] == type_size;
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
    const xio_codec *c = codec_of(f, i);
    if (c->role == XIO_CODEC_CHECKSUM) {
      if (have + CHECKSUM_BYTES > capacity) return 1;
      const uint32_t sum = c->sum(now, have);
      if (now != next) memcpy(next, now, have);
      for (int b = 0; b < CHECKSUM_BYTES; b++)
        next[have + (size_t)b] = (unsigned char)(sum >> 8 * b);
      have += CHECKSUM_BYTES;
    } else if (c->role == XIO_CODEC_TRANSFORM) {
      if (have > capacity) return 1;
      c->transform(now, next, have, f->value[i], 0);
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
