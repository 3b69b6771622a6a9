#include "cuda_test_util.h"

namespace {

__device__ __forceinline__ unsigned char pattern(int64_t i, int64_t j, int64_t k, uint32_t seed) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Full ^
               (uint64_t)k * 0x165667B19E3779F9ull ^ seed;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return (unsigned char)(1 + x % 0xA4);
}

__global__ void fill(unsigned char *m, int64_t pitch, int64_t first_row, int64_t rows,
                     int64_t cols, int64_t es, uint32_t seed) {
  const int64_t total = rows * cols * es, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t k = idx % es, j = idx / es % cols, i = idx / es / cols;
    m[i * pitch + j * es + k] = pattern(first_row + i, j, k, seed);
  }
}

__global__ void count_wrong_slab(const unsigned char *out, int64_t first, int64_t out_rows,
                                 int64_t in_rows, int64_t es, uint32_t seed,
                                 unsigned long long *wrong) {
  const int64_t total = out_rows * in_rows, stride = (int64_t)gridDim.x * blockDim.x;
  unsigned long long mine = 0;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t c = idx % in_rows, r = idx / in_rows;  // out[r][c] = in[c][first + r]
    bool bad = false;
    for (int64_t k = 0; k < es; k++) bad |= out[idx * es + k] != pattern(c, first + r, k, seed);
    mine += bad;
  }
  if (mine) atomicAdd(wrong, mine);
}

__global__ void fill_floats(unsigned char *m, int64_t pitch, int64_t rows, int64_t cols, int64_t es) {
  const int64_t total = rows * cols, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t j = idx % cols, i = idx / cols;
    const double v = 1.0 + (double)(idx % 1000003) * 0.25;
    unsigned char *e = m + i * pitch + j * es;
    if (es == 4) *reinterpret_cast<float *>(e) = (float)v;
    else for (int64_t part = 0; part < es / 8; part++) reinterpret_cast<double *>(e)[part] = v + part * 0.5;
  }
}

__global__ void count_wrong(const unsigned char *src, int64_t src_pitch, const unsigned char *dst,
                            int64_t dst_pitch, int64_t rows, int64_t cols, int64_t es,
                            unsigned long long *wrong) {
  const int64_t total = rows * cols, stride = (int64_t)gridDim.x * blockDim.x;
  unsigned long long mine = 0;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t j = idx % rows, i = idx / rows;  // dst row i, column j: read dst coalesced
    bool bad = false;
    for (int64_t k = 0; k < es; k++)
      bad |= dst[i * dst_pitch + j * es + k] != src[j * src_pitch + i * es + k];
    mine += bad;
  }
  if (mine) atomicAdd(wrong, mine);
}

unsigned blocks_for(int64_t n) {
  const int64_t want = (n + 255) / 256;
  return (unsigned)(want < 132 * 64 ? (want > 0 ? want : 1) : 132 * 64);
}

// Runs a kernel that adds to a device counter (launch(counter)) and brings
// the count back to *count; synchronizes the stream.
template <typename Launch>
cudaError_t count_on_device(unsigned long long *count, cudaStream_t stream, Launch launch) {
  unsigned long long *counter = nullptr;
  cudaError_t err = cudaMallocAsync(&counter, sizeof *counter, stream);
  if (err != cudaSuccess) return err;
  cudaMemsetAsync(counter, 0, sizeof *counter, stream);
  launch(counter);
  err = cudaGetLastError();
  if (err == cudaSuccess)
    err = cudaMemcpyAsync(count, counter, sizeof *counter, cudaMemcpyDeviceToHost, stream);
  cudaFreeAsync(counter, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  return err != cudaSuccess ? err : sync;
}

}  // namespace

extern "C" cudaError_t xpose_test_fill(void *matrix, int64_t ld, int64_t rows, int64_t cols,
                                       size_t elem_size, uint32_t seed, cudaStream_t stream) {
  const int64_t es = (int64_t)elem_size;
  fill<<<blocks_for(rows * cols * es), 256, 0, stream>>>(static_cast<unsigned char *>(matrix),
                                                         ld * es, 0, rows, cols, es, seed);
  return cudaGetLastError();
}

extern "C" cudaError_t xpose_test_fill_rows(void *matrix, int64_t first_row, int64_t rows,
                                            int64_t cols, size_t elem_size, uint32_t seed,
                                            cudaStream_t stream) {
  const int64_t es = (int64_t)elem_size;
  fill<<<blocks_for(rows * cols * es), 256, 0, stream>>>(static_cast<unsigned char *>(matrix),
                                                         cols * es, first_row, rows, cols, es, seed);
  return cudaGetLastError();
}

extern "C" cudaError_t xpose_test_count_wrong_slab(const void *out, int64_t first_out_row,
                                                   int64_t out_rows, int64_t in_rows,
                                                   size_t elem_size, uint32_t seed,
                                                   unsigned long long *wrong, cudaStream_t stream) {
  return count_on_device(wrong, stream, [&](unsigned long long *counter) {
    count_wrong_slab<<<blocks_for(out_rows * in_rows), 256, 0, stream>>>(
        static_cast<const unsigned char *>(out), first_out_row, out_rows, in_rows,
        (int64_t)elem_size, seed, counter);
  });
}

extern "C" cudaError_t xpose_test_fill_floats(void *matrix, int64_t ld, int64_t rows, int64_t cols,
                                              size_t elem_size, cudaStream_t stream) {
  if (elem_size != 4 && elem_size != 8 && elem_size != 16) return cudaErrorInvalidValue;
  const int64_t es = (int64_t)elem_size;
  fill_floats<<<blocks_for(rows * cols), 256, 0, stream>>>(static_cast<unsigned char *>(matrix),
                                                           ld * es, rows, cols, es);
  return cudaGetLastError();
}

extern "C" cudaError_t xpose_test_count_wrong(const void *src, int64_t ld_src, const void *dst,
                                              int64_t ld_dst, int64_t rows, int64_t cols,
                                              size_t elem_size, unsigned long long *wrong,
                                              cudaStream_t stream) {
  const int64_t es = (int64_t)elem_size;
  return count_on_device(wrong, stream, [&](unsigned long long *counter) {
    count_wrong<<<blocks_for(rows * cols), 256, 0, stream>>>(
        static_cast<const unsigned char *>(src), ld_src * es,
        static_cast<const unsigned char *>(dst), ld_dst * es, rows, cols, es, counter);
  });
}
