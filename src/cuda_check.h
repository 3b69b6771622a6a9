/* The check macro for CUDA runtime calls, as check.h has for MPI. */
#ifndef XPOSE_CUDA_CHECK_H
#define XPOSE_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "check.h"

/* Like NCCL's CUDACHECKGOTO, it clears the last error, so that a failure
 * that is not sticky does not resurface in the next unrelated check. */
#define XPOSE_CUDACHECKGOTO(call, res, label)                                 \
  do {                                                                        \
    cudaError_t check_cuda_ = (call);                                         \
    if (check_cuda_ != cudaSuccess) {                                         \
      (void)cudaGetLastError();                                               \
      xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "%s failed: %s", #call, \
                 cudaGetErrorString(check_cuda_));                            \
      (res) = XPOSE_ERROR_CUDA;                                               \
      goto label;                                                             \
    }                                                                         \
  } while (0)

#endif
