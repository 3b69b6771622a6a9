/* CUDA backend: device scratch, the tiled GPU kernels and 2-D copies, all
 * on one stream (the backend's own, or one the caller sets). */
#include <stdlib.h>

#include "backend.h"
#include "cuda_check.h"
#include "transpose_kernels.h"

typedef struct {
  cudaStream_t own, current;
} cuda_state;

static cudaStream_t stream_of(xpose_backend *backend) {
  return ((cuda_state *)backend->state)->current;
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

static xpose_status cuda_transpose(xpose_backend *backend, const void *src, int64_t ld_src,
                                   void *dst, int64_t ld_dst, int64_t rows, int64_t cols,
                                   size_t elem_size) {
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(
      xpose_cuda_transpose(src, ld_src, dst, ld_dst, rows, cols, elem_size, stream_of(backend)),
      res, fail);
fail:
  return res;
}

static xpose_status cuda_copy_2d(xpose_backend *backend, const void *src, size_t src_pitch,
                                 void *dst, size_t dst_pitch, int64_t rows, size_t row_bytes) {
  xpose_status res = XPOSE_SUCCESS;
  if (rows <= 0 || row_bytes == 0) return XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, (size_t)rows,
                                        cudaMemcpyDeviceToDevice, stream_of(backend)),
                      res, fail);
fail:
  return res;
}

static xpose_status cuda_synchronize(xpose_backend *backend) {
  xpose_status res = XPOSE_SUCCESS;
  XPOSE_CUDACHECKGOTO(cudaStreamSynchronize(stream_of(backend)), res, fail);
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

static void *cuda_stream(xpose_backend *backend) { return stream_of(backend); }

static void cuda_destroy(xpose_backend *backend) {
  cuda_state *st = backend->state;
  if (st && st->own) cudaStreamDestroy(st->own);
  free(st);
  free(backend);
}

static const xpose_backend_ops cuda_ops = {
    "cuda",           cuda_alloc,        cuda_release, cuda_transpose, cuda_copy_2d,
    cuda_synchronize, cuda_check_buffer, cuda_stream,  cuda_destroy,
};

xpose_status xpose_backend_cuda_create(xpose_backend **backend) {
  xpose_status res = XPOSE_SUCCESS;
  cuda_state *st = calloc(1, sizeof *st);
  *backend = calloc(1, sizeof **backend);
  XPOSE_REQUIREGOTO(st && *backend, XPOSE_ERROR_OUT_OF_MEMORY, res, fail,
                    "cannot allocate the CUDA backend");
  /* A blocking stream: work the caller queued on the legacy default stream
   * (cudaMemcpy, cudaMemset included) completes before the plan's work. */
  XPOSE_CUDACHECKGOTO(cudaStreamCreateWithFlags(&st->own, cudaStreamDefault), res, fail);
  st->current = st->own;
  (*backend)->ops = &cuda_ops;
  (*backend)->state = st;
  return XPOSE_SUCCESS;
fail:
  free(st);
  free(*backend);
  *backend = NULL;
  return res;
}

void xpose_backend_cuda_set_stream(xpose_backend *backend, void *stream) {
  cuda_state *st = backend->state;
  st->current = stream ? (cudaStream_t)stream : st->own;
}
