/* A netCDF-3 variable's values read where they lie (netcdf3.h): its
 * blocks gathered into few preads, records split where they end, values
 * put in this machine's byte order. */
#define _POSIX_C_SOURCE 200809L /* posix_fadvise */
#include "netcdf3.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_at.h"

/* Reads are gathered into calls of at most this many bytes. */
#define PIECE_BYTES ((size_t)16 << 20)

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
  /* a variable of a dimension's name, not its coordinate: netCDF-4's dataset for it */
  const char *renamed = "_nc4_non_coord_";
  if (strncmp(bare, renamed, strlen(renamed)) == 0) bare += strlen(renamed);
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
                          v->slab_bytes,
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
