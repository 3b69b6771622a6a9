/* The GPU's checksums (cuda/io/checksum_cuda.cu) equal the host's
 * (io/checksums/checksum.c) for every element size and key stepping: resume and
 * `xpose verify` compare sums taken by either. */
#include <string.h>

#include "checksum.h"
#include "checksum_cuda.h"
#include "cuda_test_util.h"
#include "test_util.h"

static void check(size_t es, int64_t rows, int64_t cols, uint64_t first, uint64_t row_step,
                  uint64_t col_step) {
  const size_t bytes = (size_t)(rows * cols) * es;
  unsigned char *host = malloc(bytes + 1);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      for (size_t k = 0; k < es; k++)
        host[((size_t)(i * cols + j)) * es + k] = pattern_byte(i, j, k);
  void *dev = NULL, *scratch = NULL;
  CUDA_OK(cudaMalloc(&dev, bytes + 1));
  CUDA_OK(cudaMalloc(&scratch, 8));
  CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
  uint64_t gpu = 0;
  const int rc =
      xio_checksum_block_gpu(dev, rows, cols, es, first, row_step, col_step, scratch, &gpu);
  const uint64_t cpu = xio_checksum_block(host, rows, cols, es, first, row_step, col_step);
  EXPECT(rc == 0 && gpu == cpu,
         "es=%zu %lldx%lld keys %llu+%llu*i+%llu*j: GPU %016llx, host %016llx", es, (long long)rows,
         (long long)cols, (unsigned long long)first, (unsigned long long)row_step,
         (unsigned long long)col_step, (unsigned long long)gpu, (unsigned long long)cpu);
  CUDA_OK(cudaFree(dev));
  CUDA_OK(cudaFree(scratch));
  free(host);
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("skipped: no GPU\n");
    return XPOSE_TEST_SKIPPED;
  }
  const size_t sizes[] = {1, 2, 4, 8, 3, 12, 16, 24};
  const int64_t shapes[][2] = {{1, 1}, {3, 7}, {257, 33}, {1000, 1023}, {70001, 3}, {2, 70001}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t h = 0; h < sizeof shapes / sizeof *shapes; h++) {
      const int64_t rows = shapes[h][0], cols = shapes[h][1];
      check(sizes[s], rows, cols, 12345, (uint64_t)cols + 9, 1);    /* an input block */
      check(sizes[s], rows, cols, 777, 1, (uint64_t)rows * 5 + 3);  /* an output block */
      check(sizes[s], rows, cols, ~0ull - 5, ~0ull / 3, ~0ull / 7); /* keys that wrap */
    }
  check(4, 0, 5, 1, 1, 1);
  printf("%s\n", test_failures ? "FAILED" : "GPU checksums equal the host's");
  return test_failures != 0;
}
