/* CUDA backend: device scratch, the tiled GPU kernels and 2-D copies, on a
 * stream per lane.  Execution starts after the work queued on the caller's
 * stream (the legacy default stream unless one is set). */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "backend/cuda_kernels.h"
#include "check.h"

typedef struct {
  cudaStream_t lanes[XPOSE_LANES];
  cudaEvent_t events[XPOSE_EVENTS];
  cudaEvent_t start;
  cudaStream_t caller; /* NULL: the legacy default stream */
} cuda_state;

static cudaStream_t lane_stream(xpose_backend *backend, int lane) {
  return ((cuda_state *)backend->state)->lanes[lane];
}

static xpose_status cuda_alloc(xpose_backend *backend, size_t bytes, void **ptr) {
  (void)backend;
  xpose_status res = XPOSE_SUCCESS;
  *ptr = NULL;
  if (bytes == 0) return XPOSE_SUCCESS;
  const cudaError_t err = cudaMalloc(ptr, bytes);
  if (err != cudaSuccess) {
    *ptr = NULL;
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "cannot allocate %zu bytes of device scratch: %s", bytes, cudaGetErrorString(err));
    res = err == cudaErrorMemoryAllocation ? XPOSE_ERROR_OUT_OF_MEMORY : XPOSE_ERROR_CUDA;
  }
  return res;
}

static void cuda_release(xpose_backend *backend, void *ptr) {
  (void)backend;
  if (ptr) cudaFree(ptr);
}

static xpose_status cuda_transpose(xpose_backend *backend, int lane, const void *src,
                                   int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,
                                   int64_t cols, size_t elem_size) {
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(xpose_cuda_transpose(src, ld_src, dst, ld_dst, rows, cols, elem_size,
                                           lane_stream(backend, lane)),
                      res, fail);
fail:
  return res;
}

static xpose_status cuda_transpose_parts(xpose_backend *backend, int lane, const void *src,
                                         int64_t ld_src, int64_t rows, int64_t cols,
                                         const xpose_part *parts, int nparts, int rotation,
                                         size_t elem_size) {
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(xpose_cuda_transpose_parts(src, ld_src, rows, cols, parts, nparts, rotation,
                                                 elem_size, lane_stream(backend, lane)),
                      res, fail);
fail:
  return res;
}

static xpose_status cuda_copy_2d(xpose_backend *backend, int lane, const void *src,
                                 size_t src_pitch, void *dst, size_t dst_pitch, int64_t rows,
                                 size_t row_bytes) {
  xpose_status res = XPOSE_SUCCESS;
  if (rows <= 0 || row_bytes == 0) return XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, (size_t)rows,
                                        cudaMemcpyDeviceToDevice, lane_stream(backend, lane)),
                      res, fail);
fail:
  return res;
}

/* Lanes follow the caller's stream through an event at each start; with
 * none set that is the legacy default stream, so cudaMemcpy and cudaMemset
 * issued before execution come first too. */
static xpose_status cuda_begin(xpose_backend *backend) {
  cuda_state *st = backend->state;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaEventRecord(st->start, st->caller), res, fail);
  for (int lane = 0; lane < XPOSE_LANES; lane++)
    XPOSE_CUDACHECKGOTO(cudaStreamWaitEvent(st->lanes[lane], st->start, 0), res, fail);
fail:
  return res;
}

static xpose_status cuda_record(xpose_backend *backend, int lane, int event) {
  cuda_state *st = backend->state;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaEventRecord(st->events[event], st->lanes[lane]), res, fail);
fail:
  return res;
}

static xpose_status cuda_wait_event(xpose_backend *backend, int lane, int event) {
  cuda_state *st = backend->state;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaStreamWaitEvent(st->lanes[lane], st->events[event], 0), res, fail);
fail:
  return res;
}

static xpose_status cuda_sync_event(xpose_backend *backend, int event) {
  cuda_state *st = backend->state;
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaEventSynchronize(st->events[event]), res, fail);
fail:
  return res;
}

static xpose_status cuda_synchronize(xpose_backend *backend) {
  cuda_state *st = backend->state;
  xpose_status res = XPOSE_SUCCESS;
  for (int lane = 0; lane < XPOSE_LANES; lane++)
    XPOSE_CUDACHECKGOTO(cudaStreamSynchronize(st->lanes[lane]), res, fail);
fail:
  return res;
}

static xpose_status cuda_check_buffer(xpose_backend *backend, const void *ptr, const char *what) {
  (void)backend;
  struct cudaPointerAttributes attributes;
  if (!ptr) return XPOSE_SUCCESS; /* empty slabs may be NULL */
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess ||
      (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)) {
    cudaGetLastError(); /* clear the sticky-free error of a failed query */
    xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__,
               "%s is not device memory, but the plan uses the CUDA backend", what);
    return XPOSE_ERROR_INVALID_ARGUMENT;
  }
  return XPOSE_SUCCESS;
}

static void *cuda_stream(xpose_backend *backend, int lane) { return lane_stream(backend, lane); }

static void free_state(cuda_state *st) {
  if (!st) return;
  for (int i = 0; i < XPOSE_LANES; i++)
    if (st->lanes[i]) cudaStreamDestroy(st->lanes[i]);
  for (int i = 0; i < XPOSE_EVENTS; i++)
    if (st->events[i]) cudaEventDestroy(st->events[i]);
  if (st->start) cudaEventDestroy(st->start);
  free(st);
}

static void cuda_destroy(xpose_backend *backend) {
  free_state(backend->state);
  free(backend);
}

static xpose_status cuda_set_stream(xpose_backend *backend, void *stream) {
  ((cuda_state *)backend->state)->caller = (cudaStream_t)stream;
  return XPOSE_SUCCESS;
}

static const xpose_backend_ops cuda_ops = {
    .name = "cuda",
    .device_memory = 1,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .transpose = cuda_transpose,
    .transpose_parts = cuda_transpose_parts,
    .copy_2d = cuda_copy_2d,
    .set_stream = cuda_set_stream,
    .begin = cuda_begin,
    .record = cuda_record,
    .wait_event = cuda_wait_event,
    .sync_event = cuda_sync_event,
    .synchronize = cuda_synchronize,
    .check_buffer = cuda_check_buffer,
    .stream = cuda_stream,
    .destroy = cuda_destroy,
};

xpose_status xpose_backend_cuda_create(xpose_backend **backend) {
  xpose_status res = XPOSE_SUCCESS;
  cuda_state *st = calloc(1, sizeof *st);
  *backend = calloc(1, sizeof **backend);
  XPOSE_REQUIREGOTO(st && *backend, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the CUDA backend");
  /* Transfers first, the own block last (see execute.c). */
  int least = 0, greatest = 0;
  XPOSE_CUDACHECKGOTO(cudaDeviceGetStreamPriorityRange(&least, &greatest), res, fail);
  for (int i = 0; i < XPOSE_LANES; i++) {
    const int priority = i == XPOSE_LANE_COMM   ? greatest
                         : i == XPOSE_LANE_SELF ? least
                                                : (greatest < least ? greatest + 1 : greatest);
    XPOSE_CUDACHECKGOTO(
        cudaStreamCreateWithPriority(&st->lanes[i], cudaStreamNonBlocking, priority), res, fail);
  }
  for (int i = 0; i < XPOSE_EVENTS; i++)
    XPOSE_CUDACHECKGOTO(cudaEventCreateWithFlags(&st->events[i], cudaEventDisableTiming), res,
                        fail);
  XPOSE_CUDACHECKGOTO(cudaEventCreateWithFlags(&st->start, cudaEventDisableTiming), res, fail);
  (*backend)->ops = &cuda_ops;
  (*backend)->state = st;
  return XPOSE_SUCCESS;
fail:
  free_state(st);
  free(*backend);
  *backend = NULL;
  return res;
}
