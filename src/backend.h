/* A backend owns a plan's memory and its local data movement: host memory
 * and CPU kernels here, device memory and CUDA kernels in the CUDA backend.
 * Work may be asynchronous; synchronize() waits for all of it. */
#ifndef XPOSE_BACKEND_H
#define XPOSE_BACKEND_H

#include "xpose.h"

typedef struct xpose_backend xpose_backend;

typedef struct {
  const char *name;
  xpose_status (*alloc)(xpose_backend *backend, size_t bytes, void **ptr);
  void (*release)(xpose_backend *backend, void *ptr);
  /* dst (cols x rows, leading dimension ld_dst) = transpose of src (rows x cols, ld_src);
   * leading dimensions in elements. */
  xpose_status (*transpose)(xpose_backend *backend, const void *src, int64_t ld_src, void *dst,
                            int64_t ld_dst, int64_t rows, int64_t cols, size_t elem_size);
  /* rows runs of row_bytes bytes between pitched buffers. */
  xpose_status (*copy_2d)(xpose_backend *backend, const void *src, size_t src_pitch, void *dst,
                          size_t dst_pitch, int64_t rows, size_t row_bytes);
  xpose_status (*synchronize)(xpose_backend *backend);
  /* Fails unless [ptr, ptr + bytes) is memory this backend can address. */
  xpose_status (*check_buffer)(xpose_backend *backend, const void *ptr, const char *what);
  /* The cudaStream_t work goes to (NULL on the host). */
  void *(*stream)(xpose_backend *backend);
  void (*destroy)(xpose_backend *backend);
} xpose_backend_ops;

struct xpose_backend {
  const xpose_backend_ops *ops;
  void *state;
};

xpose_status xpose_backend_host_create(xpose_backend **backend);

#ifdef XPOSE_HAVE_CUDA
/* On the current device, with a stream of its own. */
xpose_status xpose_backend_cuda_create(xpose_backend **backend);
/* NULL: back to the backend's own stream. */
void xpose_backend_cuda_set_stream(xpose_backend *backend, void *stream);
#endif

#endif
