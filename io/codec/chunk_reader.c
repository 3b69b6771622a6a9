#define _POSIX_C_SOURCE 200809L /* pread, posix_fadvise */
#include "chunk_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chunk_box.h"
#include "chunk_btree.h"
#include "chunk_file.h"
#include "chunk_index.h"
#include "filters.h"
#include "pool.h"
#include "shard.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int xio_codec_off(void) {
  const char *codec = getenv("XPOSE_CODEC");
  return codec && strcmp(codec, "hdf5") == 0;
}

xio_chunk_index *xio_chunk_index_new(void) {
  xio_chunk_index *ix = calloc(1, sizeof *ix);
  if (ix) ix->fd = -1;
  return ix;
}

xio_chunk_index *xio_chunk_index_of_files(const xio_chunk_files *files, int fill_missing) {
  xio_chunk_index *ix = xio_chunk_index_new();
  if (ix) ix->files = files, ix->fill_missing = fill_missing;
  if (ix) pthread_mutex_init(&ix->listing, NULL);
  return ix;
}

/* Local.  An index of files: its geometry from the files' chunks, or,
 * where they are shards, from their inner chunks, each read from its
 * shard alone (a shard of 16 chunks is not one thread's work). */
static int build_of_files(xio_chunk_index *ix, const xio_shape *shape, size_t type_size,
                          const char *shown) {
  const xio_shard_layout *shards = ix->files->shards;
  ix->built = ix->usable = 1;
  ix->type_size = type_size;
  ix->filters = ix->files->filters;
  for (int a = 0; a < shape->ndims; a++)
    ix->file_grid[a] = (shape->dims[a] + ix->files->chunk[a] - 1) / ix->files->chunk[a];
  ix->ndims = shape->ndims;
  ix->count = 1;
  ix->chunk_bytes = type_size;
  for (int a = 0; a < shape->ndims; a++) {
    ix->chunk[a] = shards ? shards->inner[a] : ix->files->chunk[a];
    ix->grid[a] = (shape->dims[a] + ix->chunk[a] - 1) / ix->chunk[a];
    ix->count *= ix->grid[a];
    ix->chunk_bytes *= (size_t)ix->chunk[a];
  }
  ix->file_most = xio_chunk_file_most(&ix->filters, ix->chunk_bytes);
  snprintf(ix->shown, sizeof ix->shown, "%s", shown);
  return 1;
}

void xio_chunk_index_free(xio_chunk_index *ix) {
  if (!ix) return;
  if (ix->fd >= 0) (void)close(ix->fd); /* read-only */
  free(ix->path);
  free(ix->addr);
  free(ix->size);
  free(ix->mask);
  free(atomic_load(&ix->present));
  if (ix->files) pthread_mutex_destroy(&ix->listing);
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

/* Local, but asked of HDF5 with the same questions in the same order on
 * every rank: where each chunk lies.  0 where every chunk is allocated. */
static int ask_hdf5(xio_chunk_index *ix, hid_t dset, uint64_t base, uint64_t eoa) {
  int missing = 0;
  for (int64_t k = 0; k < ix->count; k++) {
    int64_t origin[XIO_MAX_DIMS];
    hsize_t offset[XIO_MAX_DIMS];
    xio_chunk_origin(ix->ndims, ix->chunk, ix->grid, k, origin);
    for (int a = 0; a < ix->ndims; a++) offset[a] = (hsize_t)origin[a];
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info_by_coord(dset, offset, &ix->mask[k], &addr, &size) < 0 ||
        addr == HADDR_UNDEF || size == 0 || addr > eoa || size > eoa - addr)
      missing = 1; /* asked on: every rank makes the same calls; HDF5 reads nothing past eoa */
    ix->addr[k] = (uint64_t)addr + base;
    ix->size[k] = (uint64_t)size;
  }
  return missing ? -1 : 0;
}

/* Collective: the least of every rank's *v (MPI_COMM_NULL: this rank's
 * alone, as the tests read a file without MPI). */
static int least(int *v, MPI_Comm comm, xio_error *err) {
  if (comm == MPI_COMM_NULL) return 0;
  return XIO_MPICHECK(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MIN, comm), err) ? -1 : 0;
}

/* Collective.  Where each chunk lies: walked from the file where every
 * rank can (chunk_btree.h), else asked of HDF5.  1 where every chunk is
 * allocated, 0 where not, -1 with a message where the file is damaged or
 * MPI failed. */
static int locate_chunks(xio_chunk_index *ix, MPI_Comm comm, hid_t file, hid_t dset,
                         xio_error *err) {
  char why[300] = "";
  xio_chunk_places places = {ix->ndims,  ix->chunk, ix->grid, ix->count, 0,
                             UINT64_MAX, ix->addr,  ix->size, ix->mask};
  int walked = xio_chunk_btree_locate(ix->fd, file, dset, &places, why, sizeof why);
  const int based = places.base != UINT64_MAX;
  if (least(&walked, comm, err)) return -1;
  if (walked > 0) walked = xio_chunk_btree_agrees(dset, &places);
  if (walked >= 0 && least(&walked, comm, err)) return -1;
  if (walked < 0) /* every rank: the same file */
    return xio_fail(err, "%s: the file is damaged: %s", ix->shown,
                    why[0] ? why : "(found on another rank)");
  return walked || (based && ask_hdf5(ix, dset, places.base, places.eoa) == 0);
}

int xio_chunk_index_build(xio_chunk_index *ix, MPI_Comm comm, hid_t file, hid_t dset,
                          const xio_shape *shape, size_t type_size, const char *shown,
                          xio_error *err) {
  if (ix->built) return ix->usable;
  if (ix->files) return build_of_files(ix, shape, type_size, shown);
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
              (ix->fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 && (ix->path = strdup(path)) &&
              (ix->addr = malloc((size_t)ix->count * sizeof *ix->addr)) &&
              (ix->size = malloc((size_t)ix->count * sizeof *ix->size)) &&
              (ix->mask = malloc((size_t)ix->count * sizeof *ix->mask));
  if (least(&ready, comm, err)) return -1;
  const uint64_t locating = now_ns();
  if (ready && (ready = locate_chunks(ix, comm, file, dset, err)) < 0) return -1;
  ix->locate_seconds = (double)(now_ns() - locating) * 1e-9;
  if (least(&ready, comm, err)) return -1;
  if (ready) (void)posix_fadvise(ix->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return ix->usable = ready;
}

/* The first failure of a job says why: FILE:DATASET, the chunk, where it
 * lies, and what is wrong with it. */
static int chunk_failed(chunk_job *job, const int64_t *origin, int64_t index, const char *why) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&job->failed, &none, 1)) return -1;
  char at[256] = "";
  for (int i = 0, used = 0; i < job->ix->ndims && used < (int)sizeof at - 24; i++)
    used += snprintf(at + used, sizeof at - (size_t)used, "%s%lld", i ? ", " : "",
                     (long long)origin[i]);
  if (index < 0) /* a chunk that is a file */
    return xio_fail(&job->err, "%s: its chunk at (%s) %s", job->ix->shown, at, why);
  return xio_fail(&job->err,
                  "%s: the stored bytes of its chunk at (%s) (%llu at byte %llu of the file) %s",
                  job->ix->shown, at, (unsigned long long)job->ix->size[index],
                  (unsigned long long)job->ix->addr[index], why);
}

static int by_number(const void *x, const void *y) {
  const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return a < b ? -1 : a > b;
}

/* Whether the file of the chunk at origin may exist: none listed yet, or
 * listed. */
static int may_exist(const xio_chunk_index *ix, const int64_t *origin) {
  const int64_t *present = atomic_load_explicit(&ix->present, memory_order_acquire);
  if (!present) return 1;
  int64_t number = 0;
  for (int a = 0; a < ix->ndims; a++)
    number = number * ix->file_grid[a] + origin[a] / ix->files->chunk[a];
  return bsearch(&number, present, (size_t)ix->present_count, sizeof number, by_number) != NULL;
}

/* Once a file is found missing: those that exist, listed once, so that a
 * store declaring many chunks and holding few reads at the rate of those
 * it holds (300000 declared, 100 written: no 299900 failed opens). */
static void list_files(xio_chunk_index *ix) {
  if (!ix->files->list || atomic_load_explicit(&ix->present, memory_order_acquire)) return;
  pthread_mutex_lock(&ix->listing);
  if (!ix->listed) {
    int64_t *numbers = NULL, count = 0;
    ix->listed = 1;
    if (ix->files->list(ix->files->target, &numbers, &count) == 0 &&
        (numbers || (numbers = malloc(sizeof *numbers)))) {
      ix->present_count = count;
      atomic_store_explicit(&ix->present, numbers, memory_order_release);
    }
  }
  pthread_mutex_unlock(&ix->listing);
}

/* A chunk that is a file: read and decoded as decoded_chunk's chunks. */
static int decoded_file(chunk_job *job, const int64_t *origin, unsigned skip,
                        xio_codec_scratch *scratch, const unsigned char **values) {
  const xio_chunk_index *ix = job->ix;
  char path[4400], why[4500] = "", damaged[4800];
  const unsigned char *stored = NULL;
  size_t have = 0;
  if (!scratch || ix->files->path(ix->files->target, origin, path, sizeof path))
    return chunk_failed(job, origin, -1,
                        scratch ? "has too long a path" : "cannot be read: out of memory");
  const uint64_t t0 = now_ns();
  const int listed_missing = ix->fill_missing && !may_exist(ix, origin);
  const int got =
      listed_missing ? 1
      : ix->files->shards
          ? xio_chunk_file_read_inner(path, ix->files->shards, ix->file_most, origin, scratch,
                                      &stored, &have, why, sizeof why)
          : xio_chunk_file_read(path, ix->file_most, scratch, &stored, &have, why, sizeof why);
  const uint64_t t1 = now_ns();
  atomic_fetch_add_explicit(&job->ix->fetch_ns, t1 - t0, memory_order_relaxed);
  if (got > 0 && ix->fill_missing && !listed_missing) list_files(job->ix);
  if (got > 0 && ix->fill_missing)
    return (*values = xio_chunk_file_fill(ix->files->fill, ix->type_size, ix->chunk_bytes, scratch))
               ? 0
               : chunk_failed(job, origin, -1, "cannot be read: out of memory");
  if (got > 0)
    snprintf(why, sizeof why, "is missing: no file %s%s", path,
             ix->files->shards ? ", or no such chunk in its shard" : "");
  if (got != 0) return chunk_failed(job, origin, -1, why);
  const int decoded = xio_chunk_decode(&ix->filters, skip, stored, have, ix->chunk_bytes, scratch,
                                       values, why, sizeof why);
  atomic_fetch_add_explicit(&job->ix->decode_ns, now_ns() - t1, memory_order_relaxed);
  if (decoded == 0) return 0;
  snprintf(damaged, sizeof damaged, "(%s): its bytes %s: it is damaged", path, why);
  return chunk_failed(job, origin, -1, strcmp(why, "out of memory") ? damaged : why);
}

/* On pool thread `worker`: chunk `index` (its first value at origin) read
 * and decoded, but for the filters `skip` names (bit i: filter i), *values
 * in the worker's scratch.  0, or -1 (the job says why). */
int xio_decoded_chunk(chunk_job *job, int64_t index, const int64_t *origin, unsigned skip,
                      int worker, const unsigned char **values) {
  const xio_chunk_index *ix = job->ix;
  xio_codec_scratch *scratch = xio_codec_scratches_get(&job->ix->scratch, worker);
  if (ix->files) return decoded_file(job, origin, skip, scratch, values);
  const size_t have = (size_t)ix->size[index];
  unsigned char *stored = scratch ? xio_codec_scratch_buffer(scratch, have) : NULL;
  if (!stored) return chunk_failed(job, origin, index, "cannot be read: out of memory");
  const uint64_t t0 = now_ns();
  for (size_t done = 0; done < have;) {
    const ssize_t got = pread(ix->fd, stored + done, have - done, (off_t)(ix->addr[index] + done));
    if (got < 0 && errno == EINTR) continue;
    char why[300];
    snprintf(why, sizeof why, "cannot be read: %s",
             got < 0 ? strerror(errno) : "the file ends first");
    if (got <= 0) return chunk_failed(job, origin, index, why);
    done += (size_t)got;
  }
  const uint64_t t1 = now_ns();
  char why[200], damaged[260];
  const int decoded = xio_chunk_decode(&ix->filters, ix->mask[index] | skip, stored, have,
                                       ix->chunk_bytes, scratch, values, why, sizeof why);
  atomic_fetch_add_explicit(&job->ix->fetch_ns, t1 - t0, memory_order_relaxed);
  atomic_fetch_add_explicit(&job->ix->decode_ns, now_ns() - t1, memory_order_relaxed);
  if (decoded == 0) return 0;
  snprintf(damaged, sizeof damaged, "%s: the file is damaged", why);
  return chunk_failed(job, origin, index, strcmp(why, "out of memory") ? damaged : why);
}

/* One block's read: its chunks, each an item of a pool job. */
typedef struct {
  chunk_job job;
  xio_chunk_box box;
  unsigned char *buf;
} block_read;

/* Item k: chunk k of the block's box read, decoded and copied in. */
static int read_chunk(void *arg, int64_t k, int worker) {
  block_read *r = arg;
  int64_t origin[XIO_MAX_DIMS];
  const int64_t index = xio_chunk_box_chunk(&r->box, k, origin);
  const unsigned char *values = NULL;
  if (xio_decoded_chunk(&r->job, index, origin, 0, worker, &values)) return -1;
  xio_chunk_box_copy(&r->box, origin, (unsigned char *)values, r->buf, 1);
  return 0;
}

static int by_address(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The stored bytes of n chunks (those of a box, or from `first` on)
 * asked of the disk at once, in as few ranges as they lie in: the threads
 * then find them read, where each one's pread alone waited for the disk, a
 * chunk at a time (an hourly year of 70 KB records on 16 threads read at
 * about half the disk's rate). */
void xio_chunk_ask_ahead(const xio_chunk_index *ix, const xio_chunk_box *box, int64_t first,
                         int64_t n) {
  if (ix->files) return; /* each file read whole as it comes */
  uint64_t(*ranges)[2] = malloc(sizeof *ranges * (size_t)n);
  if (!ranges) return; /* read as they come */
  int64_t origin[XIO_MAX_DIMS];
  for (int64_t k = 0; k < n; k++) {
    const int64_t index = box ? xio_chunk_box_chunk(box, k, origin) : first + k;
    ranges[k][0] = ix->addr[index], ranges[k][1] = ix->addr[index] + ix->size[index];
  }
  qsort(ranges, (size_t)n, sizeof *ranges, by_address);
  const uint64_t gap = (uint64_t)1 << 20; /* read through, not around */
  for (int64_t k = 0, start = 0; k < n; k++) {
    const int last = k + 1 == n || ranges[k + 1][0] > ranges[k][1] + gap;
    if (!last) ranges[k + 1][1] = ranges[k + 1][1] > ranges[k][1] ? ranges[k + 1][1] : ranges[k][1];
    if (!last) continue;
    (void)posix_fadvise(ix->fd, (off_t)ranges[start][0], (off_t)(ranges[k][1] - ranges[start][0]),
                        POSIX_FADV_WILLNEED);
    start = k + 1;
  }
  free(ranges);
}

int xio_chunk_index_read(xio_chunk_index *ix, const xio_shape *shape, size_t elem_size, int64_t row,
                         int64_t nrows, int64_t col, int64_t ncols, void *buf, xio_error *err) {
  if (nrows <= 0 || ncols <= 0) return 0;
  if (!ix->files && ix->fd < 0 && (ix->fd = open(ix->path, O_RDONLY | O_CLOEXEC)) < 0)
    return xio_fail(err, "cannot open %s again: %s", ix->shown, strerror(errno));
  if (xio_codec_scratches_reserve(&ix->scratch, xio_pool_threads()))
    return xio_fail(err, "out of memory reading %s", ix->shown);
  block_read r = {.job = {.ix = ix}, .buf = buf};
  xio_chunk_box_of(&r.box, shape, ix->chunk, ix->type_size, elem_size, row, nrows, col, ncols);
  atomic_init(&r.job.failed, 0);
  xio_chunk_ask_ahead(ix, &r.box, 0, r.box.chunks);
  if (xio_pool_run(r.box.chunks, read_chunk, &r) == 0) return 0;
  *err = r.job.err;
  return -1;
}

int xio_chunk_index_ready(const xio_chunk_index *ix) { return ix->built && ix->usable; }

void xio_chunk_index_close_file(xio_chunk_index *ix) {
  if (ix->fd >= 0) (void)close(ix->fd); /* read-only */
  ix->fd = -1;
  xio_codec_scratches_free(&ix->scratch); /* a chunk's buffers for each thread */
}

void xio_chunk_index_ask_ahead(const xio_chunk_index *ix, const xio_shape *shape, size_t elem_size,
                               int64_t row, int64_t nrows, int64_t col, int64_t ncols) {
  if (!ix->usable || nrows <= 0 || ncols <= 0) return;
  xio_chunk_box box;
  xio_chunk_box_of(&box, shape, ix->chunk, ix->type_size, elem_size, row, nrows, col, ncols);
  xio_chunk_ask_ahead(ix, &box, 0, box.chunks);
}

int64_t xio_chunk_index_chunks(const xio_chunk_index *ix) { return ix->count; }

void xio_chunk_index_times(const xio_chunk_index *ix, xio_chunk_read_times *t) {
  *t = (xio_chunk_read_times){0};
  if (!ix || !ix->usable) return;
  *t = (xio_chunk_read_times){1, ix->locate_seconds, (double)atomic_load(&ix->fetch_ns) * 1e-9,
                              (double)atomic_load(&ix->decode_ns) * 1e-9};
}

int xio_chunk_index_whole_elements(const xio_chunk_index *ix, const xio_shape *shape) {
  for (int i = shape->trail; i < shape->ndims; i++)
    if (ix->chunk[i] != shape->dims[i]) return 0;
  return 1;
}
