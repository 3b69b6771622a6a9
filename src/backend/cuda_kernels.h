/* GPU transpose kernels, callable from C. */
#ifndef XPOSE_CUDA_KERNELS_H
#define XPOSE_CUDA_KERNELS_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst (cols x rows, leading dimension ld_dst elements) = transpose of src
 * (rows x cols, leading dimension ld_src), both in device memory, enqueued
 * on `stream`.  Any shape and element size; 64-bit indexing.  Returns the
 * launch's error (cudaSuccess when enqueued). */
cudaError_t xpose_cuda_transpose(const void *src, int64_t ld_src, void *dst, int64_t ld_dst,
                                 int64_t rows, int64_t cols, size_t elem_size, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
