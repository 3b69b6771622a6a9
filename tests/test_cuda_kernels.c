/* The GPU transpose kernel against the definition, on the GPU: element sizes
 * 1..24 bytes, shapes around every tile boundary, primes, aligned rows (16-
 * byte vector path) and misaligned ones (padded odd pitches, offset
 * pointers), with untouched padding checked; and the same into several
 * destinations at once (xpose_cuda_transpose_parts), with empty parts and
 * more parts than one launch takes.  Skips without a GPU. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda_kernels.h"
#include "cuda_test_util.h"
#include "test_util.h"

static long long cases;

/* ld_extra: padding elements per row; offset: bytes added to both pointers. */
static void check(size_t es, int64_t rows, int64_t cols, int64_t ld_extra, size_t offset) {
  const int64_t ld_src = cols + ld_extra, ld_dst = rows + ld_extra;
  const size_t src_bytes = (size_t)(rows * ld_src) * es, dst_bytes = (size_t)(cols * ld_dst) * es;
  char *src, *dst;
  CUDA_OK(cudaMalloc((void **)&src, src_bytes + offset + 16));
  CUDA_OK(cudaMalloc((void **)&dst, dst_bytes + offset + 16));
  CUDA_OK(xpose_test_fill(src + offset, ld_src, rows, ld_src, es, 7, 0));
  CUDA_OK(cudaMemset(dst, POISON, dst_bytes + offset + 16));
  CUDA_OK(xpose_cuda_transpose(src + offset, ld_src, dst + offset, ld_dst, rows, cols, es, 0));
  unsigned long long wrong = 0;
  CUDA_OK(xpose_test_count_wrong(src + offset, ld_src, dst + offset, ld_dst, rows, cols, es, &wrong,
                                 0));
  /* Padding columns of dst and the bytes around it must still be poison. */
  unsigned char *host = malloc(dst_bytes + offset + 16);
  CUDA_OK(cudaMemcpy(host, dst, dst_bytes + offset + 16, cudaMemcpyDeviceToHost));
  long long touched = 0;
  for (size_t b = 0; b < offset; b++) touched += host[b] != POISON;
  for (size_t b = offset + dst_bytes; b < dst_bytes + offset + 16; b++)
    touched += host[b] != POISON;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = rows; i < ld_dst; i++)
      for (size_t k = 0; k < es; k++)
        touched += host[offset + ((size_t)(j * ld_dst + i)) * es + k] != POISON;
  EXPECT(wrong == 0 && touched == 0,
         "es=%zu %lldx%lld ld+%lld offset %zu: %llu wrong, %lld bytes written outside", es,
         (long long)rows, (long long)cols, (long long)ld_extra, offset, wrong, touched);
  free(host);
  CUDA_OK(cudaFree(src));
  CUDA_OK(cudaFree(dst));
  cases++;
}

/* A source that ends with its last element, no padding after it: no read
 * may reach past it (compute-sanitizer's test).  Odd pitches. */
static void check_ends_at_last_element(size_t es, int64_t rows, int64_t cols) {
  const int64_t ld_src = cols + 3, ld_dst = rows + 3;
  const size_t src_bytes = (size_t)((rows - 1) * ld_src + cols) * es,
               dst_bytes = (size_t)(cols * ld_dst) * es;
  char *src, *dst;
  CUDA_OK(cudaMalloc((void **)&src, src_bytes));
  CUDA_OK(cudaMalloc((void **)&dst, dst_bytes));
  CUDA_OK(xpose_test_fill(src, ld_src, rows, cols, es, 5, 0));
  CUDA_OK(cudaMemset(dst, POISON, dst_bytes));
  CUDA_OK(xpose_cuda_transpose(src, ld_src, dst, ld_dst, rows, cols, es, 0));
  unsigned long long wrong = 0;
  CUDA_OK(xpose_test_count_wrong(src, ld_src, dst, ld_dst, rows, cols, es, &wrong, 0));
  EXPECT(wrong == 0, "es=%zu %lldx%lld ending at its last element: %llu wrong", es, (long long)rows,
         (long long)cols, wrong);
  CUDA_OK(cudaFree(src));
  CUDA_OK(cudaFree(dst));
  cases++;
}

/* cols split over nparts parts of about equal width, except that every
 * fourth part but the last is empty; each part's matrix padded by ld_extra elements and
 * offset by `offset` bytes. */
static void check_parts(size_t es, int64_t rows, int64_t cols, int nparts, int64_t ld_extra,
                        size_t offset) {
  const int64_t ld_src = cols + ld_extra, ld_dst = rows + ld_extra;
  char *src, **dst = calloc((size_t)nparts, sizeof *dst);
  xpose_part *parts = calloc((size_t)nparts, sizeof *parts);
  int64_t *width = calloc((size_t)nparts, sizeof *width);
  CUDA_OK(cudaMalloc((void **)&src, (size_t)(rows * ld_src) * es + offset));
  CUDA_OK(xpose_test_fill(src + offset, ld_src, rows, ld_src, es, 11, 0));
  int64_t first = 0;
  for (int i = 0; i < nparts; i++) {
    int64_t left = 0; /* parts still to come that are not empty */
    for (int k = i; k < nparts; k++) left += k % 4 != 3;
    width[i] = i % 4 == 3 ? 0 : (cols - first) / left;
    if (i == nparts - 1) width[i] = cols - first;
    parts[i].first = first;
    parts[i].ld_dst = ld_dst;
    CUDA_OK(cudaMalloc((void **)&dst[i], (size_t)(width[i] * ld_dst) * es + offset + 1));
    CUDA_OK(cudaMemset(dst[i], POISON, (size_t)(width[i] * ld_dst) * es + offset + 1));
    parts[i].dst = dst[i] + offset;
    first += width[i];
  }
  CUDA_OK(xpose_cuda_transpose_parts(src + offset, ld_src, rows, cols, parts, nparts, nparts / 2,
                                     es, 0));
  unsigned long long wrong = 0;
  for (int i = 0; i < nparts; i++) {
    unsigned long long part_wrong = 0;
    CUDA_OK(xpose_test_count_wrong(src + offset + (size_t)parts[i].first * es, ld_src, dst[i] + offset,
                                   ld_dst, rows, width[i], es, &part_wrong, 0));
    wrong += part_wrong;
    CUDA_OK(cudaFree(dst[i]));
  }
  EXPECT(wrong == 0, "parts: es=%zu %lldx%lld over %d parts, ld+%lld offset %zu: %llu wrong", es,
         (long long)rows, (long long)cols, nparts, (long long)ld_extra, offset, wrong);
  CUDA_OK(cudaFree(src));
  free(dst);
  free(parts);
  free(width);
  cases++;
}

int main(int argc, char **argv) {
  /* --quick: a few shapes of every size, for compute-sanitizer. */
  const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("skipped: no GPU\n");
    return XPOSE_TEST_SKIPPED;
  }
  const size_t sizes[] = {1, 2, 4, 8, 16, 3, 12, 24};
  const int64_t dims[] = {1,  2,  3,  7,   8,   15,  16,  17,  31,  32,
                          33, 64, 65, 127, 128, 129, 255, 256, 257, 513};
  const int64_t quick_dims[] = {1, 17, 33, 257};
  const int64_t *shape_dims = quick ? quick_dims : dims;
  const size_t ndims = quick ? 4 : sizeof dims / sizeof *dims;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    for (size_t a = 0; a < ndims; a++)
      for (size_t b = 0; b < ndims; b++) {
        check(sizes[s], shape_dims[a], shape_dims[b], 0, 0);
        if ((a + b) % 3 == 0)
          check(sizes[s], shape_dims[a], shape_dims[b], 3, sizes[s]); /* misaligned */
      }
    if (quick) continue;
    check(sizes[s], 97, 89, 0, 0);
    check(sizes[s], 1009, 997, 0, 0);
    check(sizes[s], 4099, 3001, 0, 0);
    check(sizes[s], 1024, 2048, 16, 0); /* aligned with padding */
    check(sizes[s], 257, 129, 1, 1);    /* elements off their natural alignment */
    /* Odd pitches whose last full tile ends at the matrix's last element,
     * one tile row and two (1- and 2-byte tile rows overlap). */
    check(sizes[s], 512, 128, 3, 0);
    check(sizes[s], 992, 256, 3, 0);
    check(sizes[s], 3000, 1, 0, 0);
    check(sizes[s], 1, 3000, 0, 0);
  }
  /* 1- and 2-byte tiles whose staged chunks would reach past the last row
   * in the column before the last. */
  check_ends_at_last_element(1, 512, 257);
  check_ends_at_last_element(2, 256, 129);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    check_parts(sizes[s], 257, 1031, 3, 0, 0);
    check_parts(sizes[s], 129, 4099, 5, 3, sizes[s]); /* misaligned */
    if (quick) continue;
    check_parts(sizes[s], 1024, 2048, 2, 0, 0);
    check_parts(sizes[s], 33, 2000, 40, 0, 0); /* more parts than one launch */
    check_parts(sizes[s], 513, 700, 7, 1, 0);
  }
  if (test_failures) return 1;
  printf("GPU kernels: %lld cases passed\n", cases);
  return 0;
}
