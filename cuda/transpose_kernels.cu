// Tiled GPU transpose.
//
// Kernels depend only on the element size S (types are bytes).  With
// V = 16 / S elements per 16-byte chunk, each thread moves U V x V
// micro-blocks: it reads V chunks from V input rows, transposes them in
// registers (free renaming for 4, 8 and 16 bytes, byte permutes for 1 and 2)
// and writes V chunks into shared memory, which holds the output tile.
// Warps then write whole 512-byte output-row segments.  Global reads and
// writes are 16-byte vectors, coalesced into 128-byte and 512-byte runs.
//
// A tile is 32 V input rows by 8 V U input columns (128 U bytes of each
// row): 256 U micro-blocks, U per thread.  Shared memory is padded in effect by
// an XOR swizzle of 16-byte chunks instead of extra bytes, which would break
// 16-byte alignment: the eight threads of a quarter-warp that store the
// same chunk column to eight different rows land in eight different banks,
// and the eight that read consecutive chunks of one row do too.
//
// Rows that are not 16-byte aligned (odd leading dimensions, odd pointers)
// and partial tiles at the edges take the same path with element-wise
// accesses; other element sizes use a plain element-wise kernel.
#include <cstdint>
#include <cstring>

#include "transpose_kernels.h"

namespace {

constexpr int kThreads = 256;

struct Chunk {
  uint32_t w[4];
};

template <int S> struct Element;
template <> struct Element<1> { using type = uint8_t; };
template <> struct Element<2> { using type = uint16_t; };
template <> struct Element<4> { using type = uint32_t; };
template <> struct Element<8> { using type = uint2; };
template <> struct Element<16> { using type = uint4; };

// Tuning switches, measured with jobs/gpu-check.sh variants.
#ifndef XPOSE_STREAMING_HINTS
#define XPOSE_STREAMING_HINTS 0  // 1: evict-first (__ldcs/__stcs); slower on unaligned rows (H100)
#endif
#ifndef XPOSE_MIN_BLOCKS
#define XPOSE_MIN_BLOCKS 2  // blocks per SM the register budget must allow (2: 128 registers)
#endif
// Per element size unless set: the bytes of each input row a tile reads
// (128, 256 or 512), and how many tiles down consecutive blocks walk before
// moving across.  Measured on an H200 (tests/bench/RESULTS.md).
#ifdef XPOSE_INPUT_SEGMENT
constexpr int input_segment(int) { return XPOSE_INPUT_SEGMENT; }
#else
constexpr int input_segment(int S) { return S == 16 ? 512 : 128; }
#endif
#ifdef XPOSE_TILE_GROUP
constexpr int tile_group(int) { return XPOSE_TILE_GROUP; }
#else
constexpr int tile_group(int S) { return S == 16 ? 32 : 1; }
#endif

template <int S>
struct Tile {
  static constexpr int V = 16 / S;  // elements per 16-byte chunk
  static constexpr int group = tile_group(S);
  // U groups of 8 chunks of each input row, within 64 KiB of shared memory.
  static constexpr int U_wanted = input_segment(S) / 128, U_fits = 65536 / (8 * V * 512);
  static constexpr int U = U_wanted < U_fits ? U_wanted : U_fits;
  static constexpr int rows = 32 * V;  // 512 bytes of every output row
  static constexpr int cols = 8 * V * U;  // 128 U bytes of every input row
  static constexpr int smem_bytes = cols * 32 * 16;
};

// out[k] = column k of the V x V micro-block whose rows are in[0..V-1].
template <int S>
__device__ __forceinline__ void transpose_block(const Chunk (&in)[16 / S], Chunk (&out)[16 / S]);

template <>
__device__ __forceinline__ void transpose_block<16>(const Chunk (&in)[1], Chunk (&out)[1]) {
  out[0] = in[0];
}

template <>
__device__ __forceinline__ void transpose_block<8>(const Chunk (&in)[2], Chunk (&out)[2]) {
  out[0] = {{in[0].w[0], in[0].w[1], in[1].w[0], in[1].w[1]}};
  out[1] = {{in[0].w[2], in[0].w[3], in[1].w[2], in[1].w[3]}};
}

template <>
__device__ __forceinline__ void transpose_block<4>(const Chunk (&in)[4], Chunk (&out)[4]) {
#pragma unroll
  for (int k = 0; k < 4; k++) out[k] = {{in[0].w[k], in[1].w[k], in[2].w[k], in[3].w[k]}};
}

template <>
__device__ __forceinline__ void transpose_block<2>(const Chunk (&in)[8], Chunk (&out)[8]) {
  // Element k of a row is half k % 2 of word k / 2.
#pragma unroll
  for (int k = 0; k < 8; k++)
#pragma unroll
    for (int p = 0; p < 4; p++)
      out[k].w[p] = __byte_perm(in[2 * p].w[k / 2], in[2 * p + 1].w[k / 2],
                                (k & 1) ? 0x7632 : 0x5410);
}

template <>
__device__ __forceinline__ void transpose_block<1>(const Chunk (&in)[16], Chunk (&out)[16]) {
  // Element k of a row is byte k % 4 of word k / 4.
#pragma unroll
  for (int k = 0; k < 16; k++) {
    const unsigned b = k % 4, pick = b | ((b + 4) << 4);
#pragma unroll
    for (int p = 0; p < 4; p++) {
      const uint32_t lo = __byte_perm(in[4 * p].w[k / 4], in[4 * p + 1].w[k / 4], pick);
      const uint32_t hi = __byte_perm(in[4 * p + 2].w[k / 4], in[4 * p + 3].w[k / 4], pick);
      out[k].w[p] = __byte_perm(lo, hi, 0x5410);
    }
  }
}

__device__ __forceinline__ Chunk load_vector(const char *p) {
#if XPOSE_STREAMING_HINTS
  const uint4 v = __ldcs(reinterpret_cast<const uint4 *>(p));
#else
  const uint4 v = *reinterpret_cast<const uint4 *>(p);
#endif
  return {{v.x, v.y, v.z, v.w}};
}

__device__ __forceinline__ void store_vector(char *p, const Chunk &c) {
  const uint4 v = make_uint4(c.w[0], c.w[1], c.w[2], c.w[3]);
#if XPOSE_STREAMING_HINTS
  __stcs(reinterpret_cast<uint4 *>(p), v);
#else
  *reinterpret_cast<uint4 *>(p) = v;
#endif
}

// The first `valid` elements of a chunk, one element at a time; zeros after.
template <int S>
__device__ __forceinline__ Chunk load_elements(const char *p, int valid) {
  using T = typename Element<S>::type;
  T e[16 / S];
#pragma unroll
  for (int i = 0; i < 16 / S; i++) e[i] = i < valid ? *reinterpret_cast<const T *>(p + i * S) : T{};
  Chunk c;
  memcpy(&c, e, 16);
  return c;
}

template <int S>
__device__ __forceinline__ void store_elements(char *p, const Chunk &c, int valid) {
  using T = typename Element<S>::type;
  T e[16 / S];
  memcpy(e, &c, 16);
#pragma unroll
  for (int i = 0; i < 16 / S; i++)
    if (i < valid) *reinterpret_cast<T *>(p + i * S) = e[i];
}

// Bytes [shift, shift + 16) of the 32 bytes a, b (shift in 0..15, uniform
// across the lanes that share a row): word selects plus funnel shifts, no
// run-time register indexing.
__device__ __forceinline__ Chunk window(const Chunk &a, const Chunk &b, int shift) {
  const uint32_t x[8] = {a.w[0], a.w[1], a.w[2], a.w[3], b.w[0], b.w[1], b.w[2], b.w[3]};
  const int q = shift >> 2, bits = (shift & 3) * 8;
  Chunk out;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const uint32_t lo = q == 0 ? x[i] : q == 1 ? x[i + 1] : q == 2 ? x[i + 2] : x[i + 3];
    const uint32_t hi = q == 0 ? x[i + 1] : q == 1 ? x[i + 2] : q == 2 ? x[i + 3] : x[i + 4];
    out.w[i] = __funnelshift_r(lo, hi, bits);
  }
  return out;
}

__device__ __forceinline__ Chunk shuffle(const Chunk &c, int delta, bool up) {
  Chunk out;
#pragma unroll
  for (int i = 0; i < 4; i++)
    out.w[i] = up ? __shfl_up_sync(0xffffffffu, c.w[i], delta) : __shfl_down_sync(0xffffffffu, c.w[i], delta);
  return out;
}

// A row segment of 8 chunks read by 8 consecutive lanes (lane & 7 = chunk)
// starting at a byte address that need not be 16-byte aligned: every lane
// loads an aligned chunk, the last lane one more, and each takes its
// neighbour's to cut out its own 16 bytes.  All 32 lanes must call it.
__device__ __forceinline__ Chunk load_unaligned_segment(const char *segment, int chunk) {
  const int shift = (int)(reinterpret_cast<uintptr_t>(segment) & 15);
  const char *base = segment - shift + 16 * chunk;
  const Chunk mine = load_vector(base);
  Chunk next = shuffle(mine, 1, false);
  if (chunk == 7 && shift) next = load_vector(base + 16);
  return shift ? window(mine, next, shift) : mine;
}

__device__ __forceinline__ uint32_t word_at(const Chunk &c, int i) {
  return i == 0 ? c.w[0] : i == 1 ? c.w[1] : i == 2 ? c.w[2] : c.w[3];
}

// Bytes [from, 16) of c to the same bytes of the 16-byte aligned line, in
// at most four naturally aligned stores (from is a multiple of S).
template <int S>
__device__ __forceinline__ void store_line_head(char *line, const Chunk &c, int from) {
  int o = from;
  if (S == 1 && (o & 1)) line[o] = (uint8_t)(word_at(c, o >> 2) >> ((o & 3) * 8)), o += 1;
  if (S <= 2 && (o & 2))
    *reinterpret_cast<uint16_t *>(line + o) = (uint16_t)(word_at(c, o >> 2) >> ((o & 2) * 8)), o += 2;
  if (S <= 4 && (o & 4)) *reinterpret_cast<uint32_t *>(line + o) = word_at(c, o >> 2), o += 4;
  if (S <= 8 && (o & 8)) *reinterpret_cast<uint2 *>(line + 8) = make_uint2(c.w[2], c.w[3]);
}

// Bytes [0, to) of c to the same bytes of the 16-byte aligned line.
template <int S>
__device__ __forceinline__ void store_line_tail(char *line, const Chunk &c, int to) {
  int o = 0;
  if (S <= 8 && (to & 8)) *reinterpret_cast<uint2 *>(line) = make_uint2(c.w[0], c.w[1]), o = 8;
  if (S <= 4 && (to & 4)) *reinterpret_cast<uint32_t *>(line + o) = word_at(c, o >> 2), o += 4;
  if (S <= 2 && (to & 2))
    *reinterpret_cast<uint16_t *>(line + o) = (uint16_t)(word_at(c, o >> 2) >> ((o & 2) * 8)), o += 2;
  if (S == 1 && (to & 1)) line[o] = (uint8_t)(word_at(c, o >> 2) >> ((o & 3) * 8));
}

// A 512-byte output-row segment written by the 32 lanes of a warp (lane =
// chunk) at a byte address that need not be 16-byte aligned: each lane
// stores one aligned chunk made of the previous lane's tail and its own
// head; the segment's two ragged ends (lane 0's head, lane 31's tail) go in
// a few naturally aligned pieces, both lanes in the same instructions.
template <int S>
__device__ __forceinline__ void store_unaligned_segment(char *segment, const Chunk &c, int lane) {
  const int shift = (int)(reinterpret_cast<uintptr_t>(segment) & 15);
  if (shift == 0) {
    store_vector(segment + 16 * lane, c);
    return;
  }
  const Chunk previous = shuffle(c, 1, true);
  char *aligned = segment - shift + 16 * lane;  // covers previous tail + own head
  const Chunk merged = window(previous, c, 16 - shift);  // lane 0: own head at [shift, 16)
  if (lane > 0) store_vector(aligned, merged);
  const Chunk tail = window(c, c, 16 - shift);  // own tail at [0, shift)
  if (lane == 0) store_line_head<S>(aligned, merged, shift);
  else if (lane == 31) store_line_tail<S>(aligned + 16, tail, shift);
}

__device__ __forceinline__ int64_t divide(int64_t a, int64_t b, bool small) {
  return small ? (int64_t)((uint32_t)a / (uint32_t)b) : a / b;
}

__device__ __forceinline__ int64_t clamp_count(int64_t n, int limit) {
  return n < 0 ? 0 : (n > limit ? limit : n);
}

template <int S, bool kAligned>
__global__ void __launch_bounds__(kThreads, XPOSE_MIN_BLOCKS)
    transpose_tiles(const char *__restrict__ src, int64_t src_pitch, char *__restrict__ dst,
                    int64_t dst_pitch, int64_t rows, int64_t cols, int64_t tiles_across,
                    int64_t tiles_down, int64_t tiles) {
  using G = Tile<S>;
  constexpr int V = G::V, U = G::U;
  extern __shared__ uint4 smem_storage[];
  Chunk *smem = reinterpret_cast<Chunk *>(smem_storage);  // G::cols rows of 32 chunks
  const int t = threadIdx.x;
  const int mj = t & 7, mi = t >> 3;  // this thread's micro-blocks: chunk column mod 8, chunk row
  // 32-bit tile arithmetic is several times cheaper.
  const bool small = tiles <= UINT32_MAX && G::group * tiles_across <= UINT32_MAX;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    // Bands of G::group tile rows, walked down first: blocks that run
    // together share input rows and output rows, so the DRAM pages they open
    // and the sectors they half-fill on odd pitches are shared too.
    int64_t tile_row, tile_col;
    if (G::group == 1) {
      tile_row = divide(tile, tiles_across, small);
      tile_col = tile - tile_row * tiles_across;
    } else {
      const int64_t band_first = divide(tile, G::group * tiles_across, small) * G::group;
      const int64_t in_band = tile - band_first * tiles_across;
      const int64_t band_rows = tiles_down - band_first < G::group ? tiles_down - band_first : G::group;
      tile_col = divide(in_band, band_rows, small);
      tile_row = band_first + in_band - tile_col * band_rows;
    }
    const int64_t r0 = tile_row * G::rows, c0 = tile_col * G::cols;
    const bool full = r0 + G::rows <= rows && c0 + G::cols <= cols;
    // The unaligned path reads up to 15 bytes past a segment: never past the
    // matrix's last element, which lies in the last tile.
    const bool last = tile_row == tiles_down - 1 && tile_col == tiles_across - 1;

#pragma unroll
    for (int u = 0; u < U; u++) {
      const int64_t col = c0 + (mj + 8 * u) * V;
      const int valid_cols = full ? V : (int)clamp_count(cols - col, V);
      Chunk in[V], out[V];
#pragma unroll
      for (int k = 0; k < V; k++) {
        const int64_t row = r0 + mi * V + k;
        const char *p = src + row * src_pitch + col * S;
        if (kAligned && full) in[k] = load_vector(p);
        else if (full && !last) in[k] = load_unaligned_segment(p - mj * 16, mj);
        else in[k] = load_elements<S>(p, row < rows ? valid_cols : 0);
      }
      transpose_block<S>(in, out);
#pragma unroll
      for (int k = 0; k < V; k++) smem[((mj + 8 * u) * V + k) * 32 + (mi ^ mj)] = out[k];
    }
    __syncthreads();

    const int chunk = t & 31;
    const int64_t out_col = r0 + chunk * V;
    const int valid_out = full ? V : (int)clamp_count(rows - out_col, V);
#pragma unroll
    for (int j = 0; j < V * U; j++) {
      const int orow = (t >> 5) + 8 * j;
      const Chunk c = smem[orow * 32 + (chunk ^ ((orow / V) & 7))];
      const int64_t out_row = c0 + orow;
      char *p = dst + out_row * dst_pitch + out_col * S;
      if (kAligned && full) store_vector(p, c);
      else if (full) store_unaligned_segment<S>(p - chunk * 16, c, chunk);
      else if (out_row < cols) store_elements<S>(p, c, valid_out);
    }
    __syncthreads();  // the next tile reuses shared memory
  }
}

// Any other element size: one element per thread, reads coalesced.
__global__ void transpose_elements(const char *__restrict__ src, int64_t src_pitch,
                                   char *__restrict__ dst, int64_t dst_pitch, int64_t rows,
                                   int64_t cols, int64_t elem_size) {
  const int64_t total = rows * cols, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const int64_t i = idx / cols, j = idx % cols;
    const char *s = src + i * src_pitch + j * elem_size;
    char *d = dst + j * dst_pitch + i * elem_size;
    for (int64_t b = 0; b < elem_size; b++) d[b] = s[b];
  }
}

constexpr int64_t kMaxBlocks = 0x7fffffff;

template <int S, bool kAligned>
cudaError_t launch_tiles(const char *src, int64_t src_pitch, char *dst, int64_t dst_pitch,
                         int64_t rows, int64_t cols, cudaStream_t stream) {
  using G = Tile<S>;
  static bool configured = false;  // per instantiation; racing threads set the same value
  if (!configured) {
    const cudaError_t err = cudaFuncSetAttribute(transpose_tiles<S, kAligned>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 G::smem_bytes);
    if (err != cudaSuccess) return err;
    configured = true;
  }
  const int64_t tiles_down = (rows + G::rows - 1) / G::rows;
  const int64_t tiles_across = (cols + G::cols - 1) / G::cols;
  const int64_t tiles = tiles_down * tiles_across;
  const unsigned blocks = (unsigned)(tiles < kMaxBlocks ? tiles : kMaxBlocks);
  transpose_tiles<S, kAligned><<<blocks, kThreads, G::smem_bytes, stream>>>(
      src, src_pitch, dst, dst_pitch, rows, cols, tiles_across, tiles_down, tiles);
  return cudaGetLastError();
}

template <int S>
cudaError_t launch_sized(const char *src, int64_t ld_src, char *dst, int64_t ld_dst, int64_t rows,
                         int64_t cols, cudaStream_t stream) {
  const bool aligned = ((reinterpret_cast<uintptr_t>(src) | reinterpret_cast<uintptr_t>(dst)) & 15) == 0 &&
                       (ld_src * S) % 16 == 0 && (ld_dst * S) % 16 == 0;
  return aligned ? launch_tiles<S, true>(src, ld_src * S, dst, ld_dst * S, rows, cols, stream)
                 : launch_tiles<S, false>(src, ld_src * S, dst, ld_dst * S, rows, cols, stream);
}

}  // namespace

extern "C" cudaError_t xpose_cuda_transpose(const void *src, int64_t ld_src, void *dst,
                                            int64_t ld_dst, int64_t rows, int64_t cols,
                                            size_t elem_size, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  const char *s = static_cast<const char *>(src);
  char *d = static_cast<char *>(dst);
  switch (elem_size) {
    case 1: return launch_sized<1>(s, ld_src, d, ld_dst, rows, cols, stream);
    case 2: return launch_sized<2>(s, ld_src, d, ld_dst, rows, cols, stream);
    case 4: return launch_sized<4>(s, ld_src, d, ld_dst, rows, cols, stream);
    case 8: return launch_sized<8>(s, ld_src, d, ld_dst, rows, cols, stream);
    case 16: return launch_sized<16>(s, ld_src, d, ld_dst, rows, cols, stream);
    default: break;
  }
  const int64_t es = (int64_t)elem_size, total = rows * cols;
  const int64_t want = (total + kThreads - 1) / kThreads;
  const unsigned blocks = (unsigned)(want < 65535 * 64 ? want : 65535 * 64);
  transpose_elements<<<blocks, kThreads, 0, stream>>>(s, ld_src * es, d, ld_dst * es, rows, cols, es);
  return cudaGetLastError();
}
