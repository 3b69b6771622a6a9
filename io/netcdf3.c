#define _POSIX_C_SOURCE 200809L /* posix_fadvise */
#include "netcdf3.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "raw_dataset.h"

enum { TAG_DIMENSION = 0x0A, TAG_VARIABLE = 0x0B, TAG_ATTRIBUTE = 0x0C };
/* Reads are gathered into calls of at most this many bytes. */
#define PIECE_BYTES ((size_t)16 << 20)

/* The header, read in order: big-endian integers of 4 bytes, or 8 where
 * the version says so; a failure sticks, and reads 0s after it. */
typedef struct {
  FILE *f;
  int version, failed;
} header;

static uint64_t get(header *h, int bytes) {
  unsigned char b[8] = {0};
  if (h->failed || fread(b, 1, (size_t)bytes, h->f) != (size_t)bytes) {
    h->failed = 1;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v = v << 8 | b[i];
  return v;
}

/* NON_NEG: lengths and counts. */
static uint64_t get_count(header *h) { return get(h, h->version == 5 ? 8 : 4); }

static void skip(header *h, uint64_t bytes) {
  const uint64_t padded = (bytes + 3) / 4 * 4;
  if (!h->failed && fseeko(h->f, (off_t)padded, SEEK_CUR) != 0) h->failed = 1;
}

static void get_name(header *h, char *name, size_t size) {
  const uint64_t length = get_count(h);
  name[0] = '\0';
  if (h->failed || length >= size) {
    h->failed = 1;
    return;
  }
  if (fread(name, 1, (size_t)length, h->f) != length) h->failed = 1;
  name[length] = '\0';
  if (!h->failed && fseeko(h->f, (off_t)((4 - length % 4) % 4), SEEK_CUR) != 0) h->failed = 1;
}

static size_t type_size(uint64_t nc_type) {
  static const size_t sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8}; /* NC_BYTE .. NC_UINT64 */
  return nc_type < sizeof sizes / sizeof *sizes ? sizes[nc_type] : 0;
}

/* A list's tag and count: 0 for ABSENT (two zeros). */
static uint64_t list_of(header *h, uint64_t tag) {
  const uint64_t found = get(h, 4), count = get_count(h);
  if (found != tag && !(found == 0 && count == 0)) h->failed = 1;
  return h->failed ? 0 : count;
}

static void skip_attributes(header *h) {
  char name[257];
  for (uint64_t n = list_of(h, TAG_ATTRIBUTE), i = 0; i < n && !h->failed; i++) {
    get_name(h, name, sizeof name);
    const size_t size = type_size(get(h, 4));
    const uint64_t values = get_count(h);
    if (size == 0 || values > UINT64_MAX / size) h->failed = 1;
    skip(h, values * size);
  }
}

/* The variables after the dimensions, with their sizes filled in. */
static int read_variables(header *h, const int64_t *dim_length, uint64_t ndims, xio_nc3_layout *l) {
  const uint64_t n = list_of(h, TAG_VARIABLE);
  if (h->failed || n > (uint64_t)1 << 24 || !(l->vars = calloc(n ? n : 1, sizeof *l->vars)))
    return -1;
  for (uint64_t i = 0; i < n && !h->failed; i++) {
    xio_nc3_var *v = &l->vars[l->nvars++];
    get_name(h, v->name, sizeof v->name);
    const uint64_t rank = get_count(h);
    if (rank > XIO_MAX_DIMS) return -1;
    v->ndims = (int)rank;
    for (int d = 0; d < v->ndims; d++) {
      const uint64_t id = get_count(h);
      if (id >= ndims) return -1;
      v->dims[d] = dim_length[id];
      if (dim_length[id] < 0 && d > 0) return -1; /* the record dimension comes first */
      v->record |= dim_length[id] < 0;
    }
    skip_attributes(h);
    v->type_size = type_size(get(h, 4));
    (void)get_count(h); /* vsize: not to be trusted past 4 GiB, computed below */
    v->begin = get(h, h->version == 1 ? 4 : 8);
    if (v->type_size == 0) return -1;
  }
  return h->failed ? -1 : 0;
}

/* Bytes of one record of v (of all of v where it has no records);
 * UINT64_MAX where that overflows (a damaged header). */
static uint64_t slab_bytes(const xio_nc3_var *v) {
  uint64_t bytes = v->type_size;
  for (int d = v->record; d < v->ndims; d++)
    if (__builtin_mul_overflow(bytes, (uint64_t)v->dims[d], &bytes)) return UINT64_MAX;
  return bytes;
}

/* The records' stride (the specification's recsize: each record
 * variable's slab padded to 4 bytes, but a lone one's not padded), the
 * record dimension's length set, and every variable checked to lie within
 * the file. */
static int place_records(xio_nc3_layout *l, uint64_t file_bytes, const char *path, xio_error *err) {
  int record_vars = 0;
  uint64_t stride = 0, lone = 0;
  for (int i = 0; i < l->nvars; i++)
    if (l->vars[i].record) {
      record_vars++;
      lone = slab_bytes(&l->vars[i]);
      stride += (lone + 3) / 4 * 4;
    }
  l->record_bytes = record_vars == 1 ? lone : stride;
  for (int i = 0; i < l->nvars; i++) {
    xio_nc3_var *v = &l->vars[i];
    if (v->record) v->dims[0] = l->records;
    uint64_t span = slab_bytes(v), before = 0; /* the records before the last */
    if (v->record && l->records == 0) span = 0;
    const int overflows =
        v->record && l->records > 0 &&
        (__builtin_mul_overflow((uint64_t)(l->records - 1), l->record_bytes, &before) ||
         __builtin_add_overflow(span, before, &span));
    if (overflows || (span > 0 && (v->begin > file_bytes || span > file_bytes - v->begin)))
      return xio_fail(err,
                      "%s: variable %s lies past the file's end (%llu bytes): the file is "
                      "truncated or still being written",
                      path, v->name, (unsigned long long)file_bytes);
  }
  return 0;
}

int xio_nc3_layout_read(const char *path, xio_nc3_layout *l, xio_error *err) {
  memset(l, 0, sizeof *l);
  header h = {fopen(path, "rb"), 0, 0};
  if (!h.f) return xio_fail(err, "%s: %s", path, strerror(errno));
  struct stat st;
  unsigned char magic[4] = {0};
  if (fstat(fileno(h.f), &st) != 0 || fread(magic, 1, 4, h.f) != 4 || memcmp(magic, "CDF", 3)) {
    fclose(h.f);
    return xio_fail(err, "%s is not a netCDF-3 file", path);
  }
  h.version = magic[3];
  const uint64_t numrecs = get_count(&h);
  const uint64_t streaming = h.version == 5 ? UINT64_MAX : 0xFFFFFFFFu;
  int64_t *dim_length = NULL;
  const uint64_t ndims = list_of(&h, TAG_DIMENSION);
  if (!h.failed && ndims < (uint64_t)1 << 24 &&
      (dim_length = calloc(ndims + 1, sizeof *dim_length)))
    for (uint64_t d = 0; d < ndims && !h.failed; d++) {
      char name[257];
      get_name(&h, name, sizeof name);
      const uint64_t length = get_count(&h);
      dim_length[d] = length == 0 ? -1 : length > INT64_MAX ? (h.failed = 1, 0) : (int64_t)length;
    }
  skip_attributes(&h);
  const int bad = !dim_length || h.failed || read_variables(&h, dim_length, ndims, l) != 0;
  free(dim_length);
  fclose(h.f);
  int rc = 0;
  if (bad)
    rc = xio_fail(err, "%s: its netCDF-3 header cannot be read (truncated or damaged)", path);
  else if (numrecs == streaming)
    rc = xio_fail(err,
                  "%s: its number of records is not set (a file being written in streaming "
                  "mode): close it in the program that writes it first",
                  path);
  else if (numrecs > INT64_MAX)
    rc = xio_fail(err, "%s: its header gives %llu records", path, (unsigned long long)numrecs);
  if (rc == 0) {
    l->version = h.version;
    l->records = (int64_t)numrecs;
    rc = place_records(l, (uint64_t)st.st_size, path, err);
  }
  if (rc) xio_nc3_layout_free(l);
  return rc;
}

void xio_nc3_layout_free(xio_nc3_layout *l) {
  free(l->vars);
  memset(l, 0, sizeof *l);
}

struct xio_nc3_source {
  int fd;
  uint64_t begin, stride, slab; /* records: slab bytes each, stride apart */
  size_t swap;                  /* bytes of the values to reverse (0: none) */
  char shown[600];
};

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

int xio_nc3_source_open(const char *path, const char *name, const xio_shape *shape,
                        const char *shown, xio_nc3_source **out, xio_error *err) {
  *out = NULL;
  xio_nc3_layout l;
  if (xio_nc3_layout_read(path, &l, err)) return -1;
  const char *bare = name[0] == '/' ? name + 1 : name;
  const xio_nc3_var *v = NULL;
  for (int i = 0; i < l.nvars && !v; i++)
    if (strcmp(l.vars[i].name, bare) == 0) v = &l.vars[i];
  int same = v && v->ndims == shape->ndims;
  for (int d = 0; same && d < v->ndims; d++) same = v->dims[d] == shape->dims[d];
  xio_nc3_source *s = same ? calloc(1, sizeof *s) : NULL;
  int rc = 0;
  if (!v)
    rc = xio_fail(err, "%s has no variable %s", shown, bare);
  else if (!same)
    rc = xio_fail(err, "%s:%s changed while xpose read it: its axes are not the ones read first",
                  shown, bare);
  else if (!s)
    rc = xio_fail(err, "out of memory");
  if (rc == 0) {
    *s = (xio_nc3_source){-1,
                          v->begin,
                          v->record ? l.record_bytes : 0,
                          slab_bytes(v),
                          host_is_little_endian() && v->type_size > 1 ? v->type_size : 0,
                          ""};
    snprintf(s->shown, sizeof s->shown, "%.400s:%.180s", shown, bare);
    if ((s->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
      rc = xio_fail(err, "%s: cannot open: %s", shown, strerror(errno));
    else
      (void)posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  xio_nc3_layout_free(&l);
  if (rc)
    xio_nc3_source_free(s);
  else
    *out = s;
  return rc;
}

void xio_nc3_source_free(xio_nc3_source *s) {
  if (!s) return;
  if (s->fd >= 0) (void)close(s->fd);
  free(s);
}

/* Each value of `width` bytes reversed in place; inlined with a constant
 * width, the compiler makes it byte swaps. */
static inline void reverse_values(unsigned char *buf, size_t bytes, size_t width) {
  for (size_t i = 0; i < bytes; i += width)
    for (size_t lo = i, hi = i + width - 1; lo < hi; lo++, hi--) {
      const unsigned char low = buf[lo];
      buf[lo] = buf[hi];
      buf[hi] = low;
    }
}

static void to_host_order(unsigned char *buf, size_t bytes, size_t swap) {
  switch (swap) {
  case 2: reverse_values(buf, bytes, 2); break;
  case 4: reverse_values(buf, bytes, 4); break;
  case 8: reverse_values(buf, bytes, 8); break;
  default: break; /* single bytes, or big-endian already */
  }
}

/* Each row's run split where records end, and runs that follow each
 * other in the file read together. */
int xio_nc3_source_read(const xio_nc3_source *s, int64_t cols, size_t elem_size, int64_t row,
                        int64_t nrows, int64_t col, int64_t ncols, void *buf, xio_error *err) {
  if (nrows <= 0 || ncols <= 0 || s->slab == 0) return 0;
  unsigned char *to = buf, *pending_to = buf;
  uint64_t pending_at = 0, pending = 0;
  const uint64_t run = (uint64_t)ncols * elem_size;
  for (int64_t i = 0; i < nrows; i++) {
    uint64_t at = ((uint64_t)(row + i) * (uint64_t)cols + (uint64_t)col) * elem_size;
    for (uint64_t left = run; left > 0;) {
      const uint64_t record = s->stride ? at / s->slab : 0, within = s->stride ? at % s->slab : at;
      const uint64_t len = s->stride && s->slab - within < left ? s->slab - within : left;
      const uint64_t offset = s->begin + record * s->stride + within;
      if (pending && (offset != pending_at + pending || pending + len > PIECE_BYTES)) {
        if (xio_read_at(s->fd, pending_to, pending, pending_at, s->shown, err)) return -1;
        pending_to += pending;
        pending = 0;
      }
      if (!pending) pending_at = offset;
      pending += len;
      at += len;
      left -= len;
    }
    to += run;
  }
  if (pending && xio_read_at(s->fd, pending_to, pending, pending_at, s->shown, err)) return -1;
  to_host_order(buf, (size_t)(to - (unsigned char *)buf), s->swap);
  return 0;
}
