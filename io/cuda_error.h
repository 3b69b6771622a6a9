/* The check of CUDA runtime calls in io/ and tool/, as the library's own:
 * the failed call and CUDA's reason in err, and the last error cleared so
 * that it does not resurface in the next check.  For
 * `if (XIO_CUDA(cudaMalloc(...), err)) ...`. */
#ifndef XIO_CUDA_ERROR_H
#define XIO_CUDA_ERROR_H

#include <cuda_runtime_api.h>

#include "h5_error.h"

static inline int xio_cuda_failed(cudaError_t code, const char *call, xio_error *err) {
  if (code == cudaSuccess) return 0;
  (void)cudaGetLastError();
  return xio_fail(err, "%s failed: %s", call, cudaGetErrorString(code));
}
#define XIO_CUDA(call, err) xio_cuda_failed((call), #call, (err))

#endif
