// Position-keyed checksums (checksum.h) of a block in GPU memory: the same
// sums as xio_checksum_block, for passes whose blocks the GPU holds anyway,
// so that summing takes none of the host's time.
#include <cuda_runtime.h>
#include <stdint.h>

#include "checksum_cuda.h"
#include "element_hash.h"

namespace {

// The host's hash (element_hash.h), the key spread here rather than
// stepped along a row.
template <typename Word>
__device__ inline uint64_t hash_at(const unsigned char *row, int64_t j, size_t, uint64_t key) {
  const uint64_t word = reinterpret_cast<const Word *>(row)[j];
  return xio_word_hash(word, (key + 1) * XIO_KEY_SPREAD);
}

template <>
__device__ inline uint64_t hash_at<void>(const unsigned char *row, int64_t j, size_t size,
                                         uint64_t key) {
  return xio_element_hash(row + (size_t)j * size, size, key);
}

// Rows spread over blockIdx (grid-stride), columns over the threads.
template <typename Word>
__global__ void sum_kernel(const unsigned char *block, int64_t nrows, int64_t ncols, size_t size,
                           uint64_t first_key, uint64_t row_step, uint64_t col_step,
                           unsigned long long *total) {
  uint64_t sum = 0;
  for (int64_t i = blockIdx.x; i < nrows; i += gridDim.x) {
    const unsigned char *row = block + (size_t)i * (size_t)ncols * size;
    const uint64_t row_key = first_key + (uint64_t)i * row_step;
    for (int64_t j = threadIdx.x; j < ncols; j += blockDim.x)
      sum += hash_at<Word>(row, j, size, row_key + (uint64_t)j * col_step);
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(total, (unsigned long long)sum);
}

}  // namespace

extern "C" int xio_checksum_block_gpu(const void *block, int64_t nrows, int64_t ncols,
                                      size_t elem_size, uint64_t first_key, uint64_t row_step,
                                      uint64_t col_step, void *scratch, uint64_t *sum) {
  *sum = 0;
  if (nrows <= 0 || ncols <= 0) return cudaSuccess;
  unsigned long long *total = static_cast<unsigned long long *>(scratch);
  cudaError_t e = cudaMemset(total, 0, sizeof *total);
  if (e != cudaSuccess) return e;
  const unsigned threads = 256;
  const unsigned blocks = (unsigned)(nrows < 65536 ? nrows : 65536);
  const unsigned char *bytes = static_cast<const unsigned char *>(block);
  switch (elem_size) {
    case 1:
      sum_kernel<uint8_t>
          <<<blocks, threads>>>(bytes, nrows, ncols, 1, first_key, row_step, col_step, total);
      break;
    case 2:
      sum_kernel<uint16_t>
          <<<blocks, threads>>>(bytes, nrows, ncols, 2, first_key, row_step, col_step, total);
      break;
    case 4:
      sum_kernel<uint32_t>
          <<<blocks, threads>>>(bytes, nrows, ncols, 4, first_key, row_step, col_step, total);
      break;
    case 8:
      sum_kernel<uint64_t>
          <<<blocks, threads>>>(bytes, nrows, ncols, 8, first_key, row_step, col_step, total);
      break;
    default:
      sum_kernel<void><<<blocks, threads>>>(bytes, nrows, ncols, elem_size, first_key, row_step,
                                            col_step, total);
  }
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  unsigned long long host = 0;
  e = cudaMemcpy(&host, total, sizeof host, cudaMemcpyDeviceToHost);
  *sum = host;
  return e;
}
