#define _POSIX_C_SOURCE 200809L /* pread, posix_fadvise */
#include "chunk_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chunk_box.h"
#include "filters.h"
#include "pool.h"

/* Indexes of more chunks than this are not built: HDF5 reads them. */
#define MAX_CHUNKS ((int64_t)1 << 22)

struct xio_chunk_index {
  int built, usable;
  int fd;
  int ndims;
  int64_t chunk[XIO_MAX_DIMS], grid[XIO_MAX_DIMS]; /* chunks along each axis */
  int64_t count;
  uint64_t *addr, *size;
  unsigned *mask; /* bit i: filter i skipped for the chunk */
  xio_filters filters;
  size_t type_size, chunk_bytes;
  xio_codec_scratches scratch; /* one for each thread of the pool */
  char shown[700];
};

int xio_codec_off(void) {
  const char *codec = getenv("XPOSE_CODEC");
  return codec && strcmp(codec, "hdf5") == 0;
}

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
  xio_codec_scratches_free(&ix->scratch);
  free(ix);
}

/* Local.  Whether dset's filters are all ones the codec runs (into ix),
 * and its chunk shape. */
static int known_storage(xio_chunk_index *ix, hid_t dset, const xio_shape *shape) {
  const hid_t dcpl = H5Dget_create_plist(dset);
  hsize_t chunk[XIO_MAX_DIMS];
  int ok = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
           H5Pget_chunk(dcpl, XIO_MAX_DIMS, chunk) == shape->ndims &&
           xio_filters_of(dcpl, &ix->filters) == 0 && ix->filters.known && ix->filters.count > 0;
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
  }
  return missing ? -1 : 0;
}

int xio_chunk_index_build(xio_chunk_index *ix, MPI_Comm comm, hid_t file, hid_t dset,
                          const xio_shape *shape, size_t type_size, const char *shown,
                          xio_error *err) {
  if (ix->built) return ix->usable;
  ix->built = 1;
  ix->type_size = type_size;
  unsigned intent = 0;
  /* the same on every rank: the file, its dataset, this program */
  const int usable = !xio_codec_off() && H5Fget_intent(file, &intent) >= 0 &&
                     !(intent & H5F_ACC_RDWR) && known_storage(ix, dset, shape);
  if (!usable) return 0;
  char path[4096];
  const ssize_t n = H5Fget_name(file, path, sizeof path);
  snprintf(ix->shown, sizeof ix->shown, "%.400s:%.290s", n > 0 ? path : "?", shown);
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

/* One block's read: its chunks, each an item of a pool job. */
typedef struct {
  xio_chunk_index *ix;
  xio_chunk_box box;
  unsigned char *buf;
  atomic_int failed;
  xio_error err; /* the first failure's */
} block_read;

/* The first failure of a job says why: FILE:DATASET, the chunk, where it
 * lies, and what is wrong with it. */
static int chunk_failed(block_read *r, const int64_t *origin, uint64_t index, const char *why) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&r->failed, &none, 1)) return -1;
  char at[256] = "";
  for (int i = 0, used = 0; i < r->ix->ndims && used < (int)sizeof at - 24; i++)
    used += snprintf(at + used, sizeof at - (size_t)used, "%s%lld", i ? ", " : "",
                     (long long)origin[i]);
  return xio_fail(&r->err,
                  "%s: the stored bytes of its chunk at (%s) (%llu at byte %llu of the file) %s",
                  r->ix->shown, at, (unsigned long long)r->ix->size[index],
                  (unsigned long long)r->ix->addr[index], why);
}

/* Item k: chunk k of the block's box read, decoded and copied in. */
static int read_chunk(void *arg, int64_t k, int worker) {
  block_read *r = arg;
  const xio_chunk_index *ix = r->ix;
  int64_t origin[XIO_MAX_DIMS];
  const int64_t index = xio_chunk_box_chunk(&r->box, k, origin);
  xio_codec_scratch *scratch = xio_codec_scratches_get(&r->ix->scratch, worker);
  const size_t have = (size_t)ix->size[index];
  unsigned char *stored = scratch ? xio_codec_scratch_buffer(scratch, have) : NULL;
  if (!stored) return chunk_failed(r, origin, (uint64_t)index, "cannot be read: out of memory");
  for (size_t done = 0; done < have;) {
    const ssize_t got = pread(ix->fd, stored + done, have - done, (off_t)(ix->addr[index] + done));
    if (got < 0 && errno == EINTR) continue;
    char why[300];
    snprintf(why, sizeof why, "cannot be read: %s",
             got < 0 ? strerror(errno) : "the file ends first");
    if (got <= 0) return chunk_failed(r, origin, (uint64_t)index, why);
    done += (size_t)got;
  }
  const unsigned char *values = NULL;
  char why[200], damaged[260];
  if (xio_chunk_decode(&ix->filters, ix->mask[index], stored, have, ix->chunk_bytes, scratch,
                       &values, why, sizeof why)) {
    snprintf(damaged, sizeof damaged, "%s: the file is damaged", why);
    return chunk_failed(r, origin, (uint64_t)index, strcmp(why, "out of memory") ? damaged : why);
  }
  xio_chunk_box_copy(&r->box, origin, (unsigned char *)values, r->buf, 1);
  return 0;
}

int xio_chunk_index_read(xio_chunk_index *ix, const xio_shape *shape, size_t elem_size, int64_t row,
                         int64_t nrows, int64_t col, int64_t ncols, void *buf, xio_error *err) {
  if (nrows <= 0 || ncols <= 0) return 0;
  if (xio_codec_scratches_reserve(&ix->scratch, xio_pool_threads()))
    return xio_fail(err, "out of memory reading %s", ix->shown);
  block_read r = {.ix = ix, .buf = buf};
  xio_chunk_box_of(&r.box, shape, ix->chunk, ix->type_size, elem_size, row, nrows, col, ncols);
  atomic_init(&r.failed, 0);
  if (xio_pool_run(r.box.chunks, read_chunk, &r) == 0) return 0;
  *err = r.err;
  return -1;
}
