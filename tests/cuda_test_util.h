/* Device-side helpers for the GPU tests and benchmarks. */
#ifndef XPOSE_CUDA_TEST_UTIL_H
#define XPOSE_CUDA_TEST_UTIL_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Tests and benchmarks only: a failed CUDA call ends the program. */
#define CUDA_OK(call)                                                                        \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

#ifdef __cplusplus
extern "C" {
#endif

/* 77 tells ctest the test was skipped (SKIP_RETURN_CODE). */
enum { XPOSE_TEST_SKIPPED = 77 };

/* Element (i, j), byte k of a rows x cols matrix (pitch ld elements):
 * position-dependent, never 0 and never 0xA5 (the poison). */
cudaError_t xpose_test_fill(void *matrix, int64_t ld, int64_t rows, int64_t cols, size_t elem_size,
                            uint32_t seed, cudaStream_t stream);

/* Finite, normal, position-dependent floating-point values (float32 for
 * 4-byte elements, float64 for 8, two float64 for 16), so that BLAS
 * routines computing 1 * x reproduce them bit for bit. */
cudaError_t xpose_test_fill_floats(void *matrix, int64_t ld, int64_t rows, int64_t cols,
                                   size_t elem_size, cudaStream_t stream);

/* Counts elements of dst (cols x rows, pitch ld_dst) that differ from the
 * transpose of src (rows x cols, pitch ld_src); synchronizes the stream. */
cudaError_t xpose_test_count_wrong(const void *src, int64_t ld_src, const void *dst, int64_t ld_dst,
                                   int64_t rows, int64_t cols, size_t elem_size,
                                   unsigned long long *wrong, cudaStream_t stream);

/* Rows [first_row, first_row + rows) of a matrix filled as by
 * xpose_test_fill (first_row = 0 there), for slabs of distributed matrices. */
cudaError_t xpose_test_fill_rows(void *matrix, int64_t first_row, int64_t rows, int64_t cols,
                                 size_t elem_size, uint32_t seed, cudaStream_t stream);

/* Counts elements of out_rows x in_rows slab `out` (output rows from
 * first_out_row) that are not the transpose of the matrix xpose_test_fill_rows
 * describes; synchronizes the stream. */
cudaError_t xpose_test_count_wrong_slab(const void *out, int64_t first_out_row, int64_t out_rows,
                                        int64_t in_rows, size_t elem_size, uint32_t seed,
                                        unsigned long long *wrong, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
