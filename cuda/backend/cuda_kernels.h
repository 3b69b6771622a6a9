/* GPU transpose kernels, callable from C. */
#ifndef XPOSE_CUDA_KERNELS_H
#define XPOSE_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/parts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst (cols x rows, leading dimension ld_dst elements) = transpose of src
 * (rows x cols, leading dimension ld_src), both in device memory, enqueued
 * on `stream`.  Any shape and element size; 64-bit indexing.  Returns the
 * launch's error (cudaSuccess when enqueued). */
cudaError_t xpose_cuda_transpose(const void *src, int64_t ld_src, void *dst, int64_t ld_dst,
                                 int64_t rows, int64_t cols, size_t elem_size, cudaStream_t stream);

/* The same for a matrix whose output rows go to several matrices (parts.h),
 * in one launch where the parts allow.  Consecutive thread blocks take
 * tiles of different parts, starting at part `rotation`, so that every
 * destination is written at once rather than one after another (GPUs that
 * write into each other's memory then spread over every link). */
cudaError_t xpose_cuda_transpose_parts(const void *src, int64_t ld_src, int64_t rows, int64_t cols,
                                       const xpose_part *parts, int nparts, int rotation,
                                       size_t elem_size, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
