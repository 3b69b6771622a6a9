#define _POSIX_C_SOURCE 200809L /* pread, posix_fadvise */
#include "chunk_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deflate.h"
#include "host_memory.h"

/* Indexes of more chunks than this are not built: HDF5 reads them. */
#define MAX_CHUNKS ((int64_t)1 << 22)
enum { MAX_FILTERS = 8 };

struct xio_chunk_index {
  int built, usable;
  int fd;
  int ndims;
  int64_t chunk[XIO_MAX_DIMS], grid[XIO_MAX_DIMS]; /* chunks along each axis */
  int64_t count;
  uint64_t *addr, *size;
  unsigned *mask; /* bit i: filter i skipped for the chunk */
  int filters;
  H5Z_filter_t filter[MAX_FILTERS];
  unsigned shuffle_size[MAX_FILTERS];
  size_t type_size, chunk_bytes, largest; /* largest: of the chunks as stored */
  char shown[700];
};

xio_chunk_index *xio_chunk_index_new(void) {
  xio_chunk_index *ix = calloc(1, sizeof *ix);
  if (ix) ix->fd = -1;
  return ix;
}

void xio_chunk_index_free(xio_chunk_index *ix) {
  if (!ix) return;
  if (ix->fd >= 0) (void)close(ix->fd); /* read-only */
  free(ix->addr);
  free(ix->size);
  free(ix->mask);
  free(ix);
}

/* Local.  Whether dset's filters are all ones this file decodes (their
 * list into ix), and its chunk shape. */
static int known_storage(xio_chunk_index *ix, hid_t dset, const xio_shape *shape) {
  const hid_t dcpl = H5Dget_create_plist(dset);
  hsize_t chunk[XIO_MAX_DIMS];
  int ok = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
           H5Pget_chunk(dcpl, XIO_MAX_DIMS, chunk) == shape->ndims;
  ix->filters = ok ? H5Pget_nfilters(dcpl) : -1;
  ok = ok && ix->filters > 0 && ix->filters <= MAX_FILTERS;
  for (int i = 0; ok && i < ix->filters; i++) {
    unsigned flags = 0, values[8] = {0}, config = 0;
    size_t count = 8;
    ix->filter[i] = H5Pget_filter2(dcpl, (unsigned)i, &flags, &count, values, 0, NULL, &config);
    ok = ix->filter[i] == H5Z_FILTER_DEFLATE ||
         (ix->filter[i] == H5Z_FILTER_SHUFFLE && count >= 1 && values[0] >= 1);
    ix->shuffle_size[i] = values[0];
  }
  if (dcpl >= 0) (void)H5Pclose(dcpl); /* only read */
  ix->ndims = shape->ndims;
  ix->count = 1;
  ix->chunk_bytes = ix->type_size;
  for (int a = 0; ok && a < shape->ndims; a++) {
    ix->chunk[a] = (int64_t)chunk[a];
    ix->grid[a] = ix->chunk[a] ? (shape->dims[a] + ix->chunk[a] - 1) / ix->chunk[a] : 0;
    ix->count *= ix->grid[a];
    ix->chunk_bytes *= (size_t)chunk[a];
    ok = ix->count <= MAX_CHUNKS;
  }
  return ok && ix->count > 0;
}

/* Collective.  Where each chunk lies: every rank asks HDF5 the same
 * questions in the same order.  0 where every chunk is allocated. */
static int locate_chunks(xio_chunk_index *ix, hid_t dset) {
  int missing = 0;
  for (int64_t k = 0; k < ix->count; k++) {
    hsize_t offset[XIO_MAX_DIMS];
    for (int64_t a = ix->ndims - 1, rest = k; a >= 0; a--) {
      offset[a] = (hsize_t)(rest % ix->grid[a] * ix->chunk[a]);
      rest /= ix->grid[a];
    }
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info_by_coord(dset, offset, &ix->mask[k], &addr, &size) < 0 ||
        addr == HADDR_UNDEF || size == 0)
      missing = 1; /* asked on: every rank makes the same calls */
    ix->addr[k] = (uint64_t)addr;
    ix->size[k] = (uint64_t)size;
    if (size > ix->largest) ix->largest = (size_t)size;
  }
  return missing ? -1 : 0;
}

int xio_chunk_index_build(xio_chunk_index *ix, MPI_Comm comm, hid_t file, hid_t dset,
                          const xio_shape *shape, size_t type_size, const char *shown,
                          xio_error *err) {
  if (ix->built) return ix->usable;
  ix->built = 1;
  ix->type_size = type_size;
  snprintf(ix->shown, sizeof ix->shown, "%s", shown);
  xio_inflater *probe = xio_inflater_new(); /* none without libdeflate */
  unsigned intent = 0;
  /* the same on every rank: the file, its dataset, this program */
  int usable = probe && H5Fget_intent(file, &intent) >= 0 && !(intent & H5F_ACC_RDWR) &&
               known_storage(ix, dset, shape);
  xio_inflater_free(probe);
  if (!usable) return 0;
  char path[4096];
  const ssize_t n = H5Fget_name(file, path, sizeof path);
  int ready = n > 0 && (size_t)n < sizeof path &&
              (ix->fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 &&
              (ix->addr = malloc((size_t)ix->count * sizeof *ix->addr)) &&
              (ix->size = malloc((size_t)ix->count * sizeof *ix->size)) &&
              (ix->mask = malloc((size_t)ix->count * sizeof *ix->mask));
  if (XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &ready, 1, MPI_INT, MPI_MIN, comm), err)) return -1;
  if (ready) ready = locate_chunks(ix, dset) == 0;
  if (XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, &ready, 1, MPI_INT, MPI_MIN, comm), err)) return -1;
  if (ready) (void)posix_fadvise(ix->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return ix->usable = ready;
}

/* HDF5's shuffle undone: byte j of value i was stored at j * values + i;
 * the bytes past the last whole value stay where they are. */
static void unshuffle(const unsigned char *in, unsigned char *out, size_t bytes, size_t size) {
  const size_t values = bytes / size;
  for (size_t j = 0; j < size; j++)
    for (size_t i = 0; i < values; i++) out[i * size + j] = in[j * values + i];
  memcpy(out + values * size, in + values * size, bytes - values * size);
}

/* Local.  Chunk k read and its filters undone, in the order opposite to
 * the one they were applied in: *chunk points at the values, in one of
 * the three buffers (packed: ix->largest bytes, a and b: a chunk's). */
static int decode_chunk(const xio_chunk_index *ix, xio_inflater *inflater, int64_t k,
                        unsigned char *packed, unsigned char *a, unsigned char *b,
                        const unsigned char **chunk, xio_error *err) {
  size_t have = (size_t)ix->size[k];
  for (size_t done = 0; done < have;) {
    const ssize_t got = pread(ix->fd, packed + done, have - done, (off_t)(ix->addr[k] + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return xio_fail(err, "%s: cannot read a chunk at byte %llu: %s", ix->shown,
                      (unsigned long long)ix->addr[k], got < 0 ? strerror(errno) : "end of file");
    done += (size_t)got;
  }
  unsigned char *now = packed;
  for (int i = ix->filters - 1; i >= 0; i--) {
    if (ix->mask[k] >> i & 1u) continue;
    unsigned char *next = now == a ? b : a;
    if (ix->filter[i] == H5Z_FILTER_DEFLATE) {
      if (xio_inflate(inflater, now, have, next, ix->chunk_bytes) != 0)
        return xio_fail(err, "%s: a chunk at byte %llu does not inflate: the file is damaged",
                        ix->shown, (unsigned long long)ix->addr[k]);
    } else { /* shuffle, of a chunk as large as the dataset's */
      if (have != ix->chunk_bytes) break;
      unshuffle(now, next, have, ix->shuffle_size[i]);
    }
    now = next;
    have = ix->chunk_bytes;
  }
  if (have != ix->chunk_bytes)
    return xio_fail(err, "%s: a chunk at byte %llu holds %zu bytes, not %zu: the file is damaged",
                    ix->shown, (unsigned long long)ix->addr[k], have, ix->chunk_bytes);
  *chunk = now;
  return 0;
}

/* The block in the dataset's axes: the box [lo, hi] (inclusive) around
 * it, and how its rows and columns flatten (h5_matrix.h's folds). */
typedef struct {
  const xio_shape *shape;
  int64_t lo[XIO_MAX_DIMS], hi[XIO_MAX_DIMS];
  int64_t step[XIO_MAX_DIMS];             /* of an axis in its group's flattened index */
  int64_t row, nrows, col, ncols, values; /* values: of one element */
} block_box;

/* The box around flattened positions first..last of axes [a, b). */
static void box_of_run(block_box *box, int a, int b, int64_t first, int64_t last) {
  const int64_t *dims = box->shape->dims;
  int64_t step = 1;
  for (int i = b - 1; i >= a; i--) box->step[i] = step, step *= dims[i];
  int split = 0; /* past the first axis where first and last differ: whole */
  for (int i = a; i < b; i++) {
    const int64_t f = first / box->step[i] % dims[i], l = last / box->step[i] % dims[i];
    box->lo[i] = split ? 0 : f;
    box->hi[i] = split ? dims[i] - 1 : l;
    split = split || f != l;
  }
}

/* Local.  Chunk k's values (at chunk, its first at origin) that the block
 * holds, into buf: runs along the last axis. */
static void place_chunk(const xio_chunk_index *ix, const block_box *box, const int64_t *origin,
                        const unsigned char *chunk, unsigned char *buf) {
  const xio_shape *s = box->shape;
  const int n = s->ndims, last = n - 1;
  int64_t from[XIO_MAX_DIMS], to[XIO_MAX_DIMS], at[XIO_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    const int64_t end = origin[i] + ix->chunk[i] - 1;
    from[i] = origin[i] > box->lo[i] ? origin[i] : box->lo[i];
    to[i] = end < box->hi[i] ? end : box->hi[i];
    if (from[i] > to[i]) return;
    at[i] = from[i];
  }
  const size_t ts = ix->type_size;
  for (;;) {
    int64_t r = 0, c = 0, e = 0, in_chunk = 0;
    for (int i = 0; i < n; i++) {
      const int64_t part = at[i] * box->step[i];
      r += i < s->split ? part : 0;
      c += i >= s->split && i < s->trail ? part : 0;
      e += i >= s->trail ? part : 0;
      in_chunk = in_chunk * ix->chunk[i] + (at[i] - origin[i]);
    }
    int64_t run = to[last] - from[last] + 1, skip = 0;
    if (last < s->trail) { /* the run is of columns: those in the block */
      if (c < box->col) skip = box->col - c;
      if (c + run > box->col + box->ncols) run = box->col + box->ncols - c;
    } else if (c < box->col || c >= box->col + box->ncols) {
      run = 0;
    }
    if (r >= box->row && r < box->row + box->nrows && run > skip) {
      const int64_t dest = ((r - box->row) * box->ncols + (c + skip - box->col)) * box->values + e;
      memcpy(buf + (size_t)dest * ts, chunk + (size_t)(in_chunk + skip) * ts,
             (size_t)(run - skip) * ts);
    }
    int i = last - 1; /* the next run: an odometer over the other axes */
    while (i >= 0 && at[i] == to[i]) at[i] = from[i], i--;
    if (i < 0) return;
    at[i]++;
  }
}

int xio_chunk_index_read(const xio_chunk_index *ix, const xio_shape *shape, size_t elem_size,
                         int64_t row, int64_t nrows, int64_t col, int64_t ncols, void *buf,
                         xio_error *err) {
  if (nrows <= 0 || ncols <= 0) return 0;
  block_box box = {.shape = shape, .row = row, .nrows = nrows, .col = col, .ncols = ncols};
  box.values = (int64_t)(elem_size / ix->type_size);
  box_of_run(&box, 0, shape->split, row, row + nrows - 1);
  box_of_run(&box, shape->split, shape->trail, col, col + ncols - 1);
  box_of_run(&box, shape->trail, shape->ndims, 0, box.values - 1);
  xio_inflater *inflater = xio_inflater_new();
  unsigned char *packed = xio_host_alloc(ix->largest), *a = xio_host_alloc(ix->chunk_bytes),
                *b = xio_host_alloc(ix->chunk_bytes);
  int rc = inflater && packed && a && b ? 0 : xio_fail(err, "out of memory reading %s", ix->shown);
  int64_t q[XIO_MAX_DIMS], first[XIO_MAX_DIMS], origin[XIO_MAX_DIMS];
  for (int i = 0; i < shape->ndims; i++) q[i] = first[i] = box.lo[i] / ix->chunk[i];
  while (rc == 0) {
    int64_t k = 0;
    for (int i = 0; i < shape->ndims; i++)
      k = k * ix->grid[i] + q[i], origin[i] = q[i] * ix->chunk[i];
    const unsigned char *chunk = NULL;
    if ((rc = decode_chunk(ix, inflater, k, packed, a, b, &chunk, err)) != 0) break;
    place_chunk(ix, &box, origin, chunk, buf);
    int i = shape->ndims - 1; /* the next chunk of the box */
    while (i >= 0 && q[i] == box.hi[i] / ix->chunk[i]) q[i] = first[i], i--;
    if (i < 0) break;
    q[i]++;
  }
  xio_inflater_free(inflater);
  free(packed);
  free(a);
  free(b);
  return rc;
}
