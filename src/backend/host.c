/* Host backend: malloc'd scratch and the cache-blocked CPU kernels, large
 * blocks split by their rows over threads. */
#define _GNU_SOURCE /* madvise */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "backend/backend.h"
#include "backend/host_kernels.h"
#include "check.h"

enum { HUGE_PAGE_BYTES = 2 << 20 };
/* Blocks from this size on are split over the threads: thread start-up
 * costs tens of microseconds, a block of this size milliseconds. */
enum { THREADED_BYTES = 8 << 20 };

typedef struct {
  int threads;
} host_state;

typedef struct {
  const char *src;
  char *dst;
  int64_t ld_src, ld_dst, rows, cols;
  size_t elem_size;
} rows_job;

static void *transpose_rows(void *arg) {
  const rows_job *j = arg;
  xpose_host_transpose(j->src, j->ld_src, j->dst, j->ld_dst, j->rows, j->cols, j->elem_size);
  return NULL;
}

/* dst = src^T, src's rows shared out among the backend's threads (this
 * one among them) where the block is large enough to gain: each writes its
 * own columns of dst.  A thread that cannot start leaves its rows to this
 * one. */
static void transpose_block(const xpose_backend *backend, const void *src, int64_t ld_src,
                            void *dst, int64_t ld_dst, int64_t rows, int64_t cols,
                            size_t elem_size) {
  const int threads = ((const host_state *)backend->state)->threads;
  const uint64_t bytes = (uint64_t)rows * (uint64_t)cols * elem_size;
  int n = bytes < THREADED_BYTES || threads < 1 ? 1 : threads;
  if (n > rows) n = rows > 0 ? (int)rows : 1;
  rows_job jobs[XPOSE_MAX_HOST_THREADS];
  pthread_t ids[XPOSE_MAX_HOST_THREADS];
  int started[XPOSE_MAX_HOST_THREADS] = {0};
  for (int k = 0; k < n; k++) {
    const int64_t first = rows * k / n, end = rows * (k + 1) / n;
    jobs[k] = (rows_job){(const char *)src + (size_t)first * (size_t)ld_src * elem_size,
                         (char *)dst + (size_t)first * elem_size,
                         ld_src,
                         ld_dst,
                         end - first,
                         cols,
                         elem_size};
  }
  for (int k = 1; k < n; k++)
    started[k] = pthread_create(&ids[k], NULL, transpose_rows, &jobs[k]) == 0;
  transpose_rows(&jobs[0]);
  for (int k = 1; k < n; k++)
    if (started[k])
      pthread_join(ids[k], NULL);
    else
      transpose_rows(&jobs[k]);
}

static xpose_status host_alloc(xpose_backend *backend, size_t bytes, void **ptr) {
  (void)backend;
  *ptr = NULL;
  if (bytes == 0) return XPOSE_SUCCESS;
  /* Large scratch goes on huge pages where the kernel allows it: the
   * transpose walks many rows at once and 4 KiB pages run out of TLB reach. */
  const size_t align = bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : 64;
  if (posix_memalign(ptr, align, bytes) != 0) {
    *ptr = NULL;
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "cannot allocate %zu bytes of host scratch",
               bytes);
    return XPOSE_ERROR_OUT_OF_MEMORY;
  }
#ifdef MADV_HUGEPAGE
  if (align == HUGE_PAGE_BYTES) (void)madvise(*ptr, bytes, MADV_HUGEPAGE); /* advisory only */
#endif
  /* Touched here, at plan creation, so that the first execution does not
   * pay the page faults that later ones do not. */
  memset(*ptr, 0, bytes);
  return XPOSE_SUCCESS;
}

static void host_release(xpose_backend *backend, void *ptr) {
  (void)backend;
  free(ptr);
}

static xpose_status host_transpose(xpose_backend *backend, int lane, const void *src,
                                   int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,
                                   int64_t cols, size_t elem_size) {
  (void)lane;
  transpose_block(backend, src, ld_src, dst, ld_dst, rows, cols, elem_size);
  return XPOSE_SUCCESS;
}

/* Part by part: one core gains nothing from interleaving them. */
static xpose_status host_transpose_parts(xpose_backend *backend, int lane, const void *src,
                                         int64_t ld_src, int64_t rows, int64_t cols,
                                         const xpose_part *parts, int nparts, int rotation,
                                         size_t elem_size) {
  (void)lane, (void)rotation;
  for (int i = 0; i < nparts; i++) {
    const int64_t end = i + 1 < nparts ? parts[i + 1].first : cols;
    transpose_block(backend, (const char *)src + (size_t)parts[i].first * elem_size, ld_src,
                    parts[i].dst, parts[i].ld_dst, rows, end - parts[i].first, elem_size);
  }
  return XPOSE_SUCCESS;
}

static xpose_status host_copy_2d(xpose_backend *backend, int lane, const void *src,
                                 size_t src_pitch, void *dst, size_t dst_pitch, int64_t rows,
                                 size_t row_bytes) {
  (void)backend, (void)lane;
  for (int64_t i = 0; i < rows; i++)
    memcpy((char *)dst + (size_t)i * dst_pitch, (const char *)src + (size_t)i * src_pitch,
           row_bytes);
  return XPOSE_SUCCESS;
}

/* Host work is done when its call returns: nothing to order or wait for. */
static xpose_status host_nothing(xpose_backend *backend) {
  (void)backend;
  return XPOSE_SUCCESS;
}

static xpose_status host_lane_event(xpose_backend *backend, int lane, int event) {
  (void)backend, (void)lane, (void)event;
  return XPOSE_SUCCESS;
}

static xpose_status host_sync_event(xpose_backend *backend, int event) {
  (void)backend, (void)event;
  return XPOSE_SUCCESS;
}

static xpose_status host_set_stream(xpose_backend *backend, void *stream) {
  (void)backend, (void)stream;
  xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "streams belong to plans of the CUDA backend");
  return XPOSE_ERROR_INVALID_ARGUMENT;
}

static xpose_status host_check_buffer(xpose_backend *backend, const void *ptr, const char *what) {
  (void)backend, (void)ptr, (void)what;
  return XPOSE_SUCCESS;
}

static void *host_stream(xpose_backend *backend, int lane) {
  (void)backend, (void)lane;
  return NULL;
}

static void host_destroy(xpose_backend *backend) {
  free(backend->state);
  free(backend);
}

static const xpose_backend_ops host_ops = {
    .name = "host",
    .device_memory = 0,
    .alloc = host_alloc,
    .release = host_release,
    .transpose = host_transpose,
    .transpose_parts = host_transpose_parts,
    .copy_2d = host_copy_2d,
    .set_stream = host_set_stream,
    .begin = host_nothing,
    .record = host_lane_event,
    .wait_event = host_lane_event,
    .sync_event = host_sync_event,
    .synchronize = host_nothing,
    .check_buffer = host_check_buffer,
    .stream = host_stream,
    .destroy = host_destroy,
};

xpose_status xpose_backend_host_create(int threads, xpose_backend **backend) {
  *backend = calloc(1, sizeof **backend);
  host_state *state = calloc(1, sizeof *state);
  if (!*backend || !state) {
    free(*backend), free(state);
    *backend = NULL;
    return XPOSE_ERROR_OUT_OF_MEMORY;
  }
  state->threads = threads;
  (*backend)->ops = &host_ops;
  (*backend)->state = state;
  return XPOSE_SUCCESS;
}
