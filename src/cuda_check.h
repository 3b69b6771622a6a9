/* Check macros for CUDA and NCCL calls, as check.h does for MPI. */
#ifndef XPOSE_CUDA_CHECK_H
#define XPOSE_CUDA_CHECK_H

#include <cuda_runtime_api.h>

#include "check.h"

#define XPOSE_CUDACHECKGOTO(call, res, label)                                 \
  do {                                                                        \
    cudaError_t check_cuda_ = (call);                                         \
    if (check_cuda_ != cudaSuccess) {                                         \
      xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "%s failed: %s", #call, \
                 cudaGetErrorString(check_cuda_));                            \
      (res) = XPOSE_ERROR_CUDA;                                               \
      goto label;                                                             \
    }                                                                         \
  } while (0)

#ifdef XPOSE_HAVE_NCCL
#include <nccl.h>
#define XPOSE_NCCLCHECKGOTO(call, res, label)                                 \
  do {                                                                        \
    ncclResult_t check_nccl_ = (call);                                        \
    if (check_nccl_ != ncclSuccess) {                                         \
      xpose_logf(XPOSE_LOG_ERROR, __FILE__, __LINE__, "%s failed: %s", #call, \
                 ncclGetErrorString(check_nccl_));                            \
      (res) = XPOSE_ERROR_NCCL;                                               \
      goto label;                                                             \
    }                                                                         \
  } while (0)
#endif

#endif
