// Tiled GPU transpose.
//
// Kernels depend only on the element size S (types are bytes).  In each of
// the tilings below a block stages a tile in shared memory, read from input
// rows and written to output rows in coalesced runs.
//
// Vector tiles (1-, 2-, 4- and 16-byte elements, rows 16-byte aligned):
// with V = 16 / S elements per 16-byte chunk, each thread moves U V x V
// micro-blocks: it reads V chunks from V input rows, transposes them in
// registers (free renaming for 4 and 16 bytes, byte permutes for 1 and 2)
// and writes V chunks into shared memory, which holds the output tile.
// Warps then write whole 512-byte output-row segments.  A tile is 32 V input
// rows by 8 V U input columns (128 U bytes of each row).  Shared memory is
// padded in effect by an XOR swizzle of 16-byte chunks instead of extra
// bytes, which would break 16-byte alignment.
//
// Word tiles (8-byte elements, and 4 bytes on rows that are not 16-byte
// aligned, such as odd leading dimensions): 4-byte words (8-byte for 8-byte
// elements).  A warp reads one input row segment of 32 words; shared memory
// holds the input tile, swizzled so that neither the row writes nor the
// column gathers conflict.  On the way out each lane gathers one aligned
// word of an output row, so every store is a whole aligned word except the
// two ends of each output segment, which the neighbouring tiles share and
// which go element by element.
//
// Shifted tiles (1- and 2-byte elements on rows that are not 16-byte
// aligned; every size where tiles write into other GPUs' outputs on rows
// that are not 32-byte aligned): the vector tiles' micro-blocks, with each
// input row's 128 bytes staged in shared memory as the aligned 16-byte
// chunks that hold them (cp.async), and each thread cutting its chunk of a
// row out of two staged ones by the row's own offset.  Tile rows overlap
// by 32 bytes of output so that each tile writes whole 32-byte sectors of
// every output row, those that start in its rows, with aligned 16-byte
// stores: rows that start anywhere cost no partial sectors.
//
// Elements off their natural alignment, and other element sizes, use a
// plain element-wise kernel.
//
// Every tiling also writes into several destination matrices at once
// (xpose_cuda_transpose_parts): a table in the kernel's parameters says
// which output rows go where, and each thread finds its rows' part with a
// cursor that only moves forward.  The tile walk then interleaves the
// parts, so that the blocks running at any moment write to every part.
#include <cstdint>
#include <cstring>

#include "backend/cuda_kernels.h"
#include "backend/cuda_tiles.cuh"

namespace {

// ---- Vector tiles

struct Chunk {
  uint32_t w[4];
};

template <int S, bool kSectorRows>
struct Tile {
  static constexpr int V = 16 / S;  // elements per 16-byte chunk
  static constexpr int group = tile_group(S, kSectorRows);
  // U groups of 8 chunks of each input row, within 64 KiB of shared memory.
  static constexpr int U_wanted = input_segment(S) / 128, U_fits = 65536 / (8 * V * 512);
  static constexpr int U = U_wanted < U_fits ? U_wanted : U_fits;
  static constexpr int rows = 32 * V;  // 512 bytes of every output row
  static constexpr int stride = rows;  // input rows from one tile row to the next
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
  // Element k of a row is words 2 k and 2 k + 1.
#pragma unroll
  for (int k = 0; k < 2; k++) out[k] = {{in[0].w[2 * k], in[0].w[2 * k + 1], in[1].w[2 * k], in[1].w[2 * k + 1]}};
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
  const uint4 v = *reinterpret_cast<const uint4 *>(p);
  return {{v.x, v.y, v.z, v.w}};
}

__device__ __forceinline__ void store_vector(char *p, const Chunk &c) {
  *reinterpret_cast<uint4 *>(p) = make_uint4(c.w[0], c.w[1], c.w[2], c.w[3]);
}

// Shared memory seen as chunks, moved 16 bytes at a time.
__device__ __forceinline__ Chunk load_chunk(const uint4 *p) {
  const uint4 v = *p;
  return {{v.x, v.y, v.z, v.w}};
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

template <int S, bool kParts, bool kSectorRows>
__global__ void __launch_bounds__(kThreads, kVectorMinBlocks)
    transpose_vector_tiles(const char *__restrict__ src, int64_t src_pitch,
                           const __grid_constant__ Destination out, int64_t rows, int64_t cols,
                           int64_t tiles_across, int64_t tiles_down, int64_t tiles) {
  using G = Tile<S, kSectorRows>;
  constexpr int V = G::V, U = G::U;
  extern __shared__ uint4 smem_storage[];
  Chunk *smem = reinterpret_cast<Chunk *>(smem_storage);  // G::cols rows of 32 chunks
  const int t = threadIdx.x;
  const int mj = t & 7, mi = t >> 3;  // this thread's micro-blocks: chunk column mod 8, chunk row
  const int64_t walk_across = tiles / tiles_down;
  constexpr int kGroup = walk_group(G::group, kParts);
  const bool small = tiles <= UINT32_MAX && kGroup * walk_across <= UINT32_MAX;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int64_t tile_row, tile_col;
    if (!tile_position<kGroup, kParts>(tile, out, tiles_across, tiles_down, small, tile_row, tile_col))
      continue;
    const int64_t r0 = tile_row * G::rows, c0 = tile_col * G::cols;
    const bool full = r0 + G::rows <= rows && c0 + G::cols <= cols;

#pragma unroll
    for (int u = 0; u < U; u++) {
      const int64_t col = c0 + (mj + 8 * u) * V;
      const int valid_cols = full ? V : (int)clamp_count(cols - col, V);
      Chunk in[V], out[V];
#pragma unroll
      for (int k = 0; k < V; k++) {
        const int64_t row = r0 + mi * V + k;
        const char *p = src + row * src_pitch + col * S;
        in[k] = full ? load_vector(p) : load_elements<S>(p, row < rows ? valid_cols : 0);
      }
      transpose_block<S>(in, out);
      // The eight threads of a quarter-warp that store the same chunk
      // column to eight rows land in eight banks.
#pragma unroll
      for (int k = 0; k < V; k++) smem[((mj + 8 * u) * V + k) * 32 + (mi ^ mj)] = out[k];
    }
    __syncthreads();

    const int chunk = t & 31;
    const int64_t out_col = r0 + chunk * V;
    const int valid_out = full ? V : (int)clamp_count(rows - out_col, V);
    RowCursor<kParts> out_rows(out, c0);
#pragma unroll
    for (int j = 0; j < V * U; j++) {
      const int orow = (t >> 5) + 8 * j;
      const Chunk c = smem[orow * 32 + (chunk ^ ((orow / V) & 7))];
      const int64_t out_row = c0 + orow;
      char *p = out_rows.row(out_row) + out_col * S;
      if (full) store_vector(p, c);
      else if (out_row < cols) store_elements<S>(p, c, valid_out);
    }
    __syncthreads();  // the next tile reuses shared memory
  }
}

// ---- Word tiles

template <int S, bool kAligned>
struct WordTile {
  static_assert(S == 4 || S == 8, "word tiles move 4- and 8-byte elements");
  static constexpr int depth = word_tile_depth(S, kAligned);  // elements per lane of every output row
  static constexpr int group = word_tile_group(S, kAligned);
  static constexpr int cols = 32;  // one element per lane of every input row
  static constexpr int rows = 32 * depth;
  static constexpr int stride = rows;
  static constexpr int smem_bytes = rows * 32 * S;
};

// Shared-memory element t, w: element w of input row t of the tile.  The XOR
// makes a warp's row writes (w = lane) and its column gathers (t = lane + 32
// j) fall in 32 different banks.
__device__ __forceinline__ int swizzled(int t, int w) { return t * 32 + (w ^ (t & 31)); }

template <int S, bool kParts, bool kAligned>
__global__ void __launch_bounds__(kThreads, kWordMinBlocks)
    transpose_word_tiles(const char *__restrict__ src, int64_t src_pitch,
                         const __grid_constant__ Destination out, int64_t rows, int64_t cols,
                         int64_t tiles_across, int64_t tiles_down, int64_t tiles) {
  using G = WordTile<S, kAligned>;
  using T = typename Element<S>::type;
  constexpr int kRowsPerWarp = G::rows / 8, kColsPerWarp = G::cols / 8;
  constexpr int kBatch = kRowsPerWarp < kWordBatch ? kRowsPerWarp : kWordBatch;
  extern __shared__ uint4 smem_storage[];
  T *smem = reinterpret_cast<T *>(smem_storage);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t walk_across = tiles / tiles_down;
  constexpr int kGroup = walk_group(G::group, kParts);
  const bool small = tiles <= UINT32_MAX && kGroup * walk_across <= UINT32_MAX;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int64_t tile_row, tile_col;
    if (!tile_position<kGroup, kParts>(tile, out, tiles_across, tiles_down, small, tile_row, tile_col))
      continue;
    const int64_t r0 = tile_row * G::rows, c0 = tile_col * G::cols;
    const bool full = r0 + G::rows <= rows && c0 + G::cols <= cols;

    // In: element `lane` of input rows warp + 8 i, in batches whose loads are
    // all issued before any is used.
#pragma unroll
    for (int first = 0; first < kRowsPerWarp; first += kBatch) {
      T words[kBatch];
#pragma unroll
      for (int i = 0; i < kBatch; i++) {
        const int64_t row = r0 + warp + 8 * (first + i);
        const T *segment = reinterpret_cast<const T *>(src + row * src_pitch + c0 * S);
        words[i] = full || (row < rows && c0 + lane < cols) ? segment[lane] : T{};
      }
#pragma unroll
      for (int i = 0; i < kBatch; i++) smem[swizzled(warp + 8 * (first + i), lane)] = words[i];
    }
    __syncthreads();

    // Out: output row oc of the tile (input column c0 + oc); lane gathers
    // its elements lane + 32 j.
    const int valid_rows = full ? G::rows : (int)clamp_count(rows - r0, G::rows);
    RowCursor<kParts> out_rows(out, c0);
#pragma unroll
    for (int i = 0; i < kColsPerWarp; i++) {
      const int oc = warp + 8 * i;
      const int64_t out_row = c0 + oc;
      if (!full && out_row >= cols) break;
      T *segment = reinterpret_cast<T *>(out_rows.row(out_row) + r0 * S);
#pragma unroll
      for (int j = 0; j < G::depth; j++) {
        const int t = lane + 32 * j;
        if (t >= valid_rows) break;
        segment[t] = smem[swizzled(t, oc)];
      }
    }
    __syncthreads();  // the next tile reuses shared memory
  }
}

}  // namespace

#include "backend/cuda_shifted_tiles.cuh"

namespace {

// ---- Anything else: one element per thread, reads coalesced.

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

// ---- Launchers

// Lets `kernel` use `bytes` of dynamic shared memory, once per kernel.
template <typename Kernel>
cudaError_t allow_shared_memory(Kernel kernel, int bytes, bool &configured) {
  if (configured) return cudaSuccess;
  const cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  configured = err == cudaSuccess;  // racing threads set the same value
  return err;
}

// Whether tiling G's kernel (each tiling has one per kParts) may use its
// shared memory yet.  At namespace scope, unlike a static local, it needs no
// C++ runtime guard, so C programs link the library without libstdc++.
template <typename G, bool kParts>
bool shared_memory_configured = false;

// Tiling G with its kernel: one block per tile of the walk, capped.
template <typename G, bool kParts, typename Kernel>
cudaError_t launch_tiles(Kernel kernel, const char *src, int64_t src_pitch, Destination &out, int64_t rows,
                         int64_t cols, cudaStream_t stream) {
  const cudaError_t err = allow_shared_memory(kernel, G::smem_bytes, shared_memory_configured<G, kParts>);
  if (err != cudaSuccess) return err;
  const int64_t tiles_down = (rows + G::stride - 1) / G::stride;
  const int64_t tiles_across = (cols + G::cols - 1) / G::cols;
  out.segment_tiles = (tiles_across + out.segments - 1) / out.segments;
  out.walk_across = kParts ? out.segment_tiles * out.segments : tiles_across;
  const int64_t tiles = tiles_down * out.walk_across;
  const unsigned blocks = (unsigned)(tiles < kMaxBlocks ? tiles : kMaxBlocks);
  kernel<<<blocks, kThreads, G::smem_bytes, stream>>>(src, src_pitch, out, rows, cols, tiles_across,
                                                      tiles_down, tiles);
  return cudaGetLastError();
}

// Elements on their natural alignment.  16-byte elements always have
// 16-byte aligned rows; 8-byte ones are fastest in word tiles either way on
// one GPU.  Tiles that write into other GPUs' outputs take shifted tiles
// wherever a row may start off a 32-byte sector: only whole sectors then
// cross NVLink (on 2 H100s, odd 4-, 8- and 16-byte shapes went from
// 1.06-1.46x NCCL's exchange alone to 1.00-1.02x).  alignment: of the
// source's and every destination's rows, at most 32.
template <int S, bool kParts>
cudaError_t launch_sized(const char *src, int64_t src_pitch, Destination &out, int64_t rows, int64_t cols,
                         int alignment, cudaStream_t stream) {
  const bool aligned = alignment >= 16;
  if constexpr (S < 4 || kParts) {
    if (kParts ? alignment < 32 : !aligned)
      return launch_tiles<ShiftedTile<S>, kParts>(transpose_shifted_tiles<S, kParts>, src, src_pitch, out, rows,
                                                  cols, stream);
  }
  if constexpr (S == 16 && !kParts) {  // several outputs walk down anyway (walk_group)
    if (alignment >= 32)
      return launch_tiles<Tile<S, true>, kParts>(transpose_vector_tiles<S, kParts, true>, src, src_pitch, out,
                                                 rows, cols, stream);
  }
  if constexpr (S == 8) {
    if (aligned)
      return launch_tiles<WordTile<S, true>, kParts>(transpose_word_tiles<S, kParts, true>, src, src_pitch, out,
                                                     rows, cols, stream);
    return launch_tiles<WordTile<S, false>, kParts>(transpose_word_tiles<S, kParts, false>, src, src_pitch, out,
                                                    rows, cols, stream);
  } else {
    if (S == 16 || aligned)
      return launch_tiles<Tile<S, false>, kParts>(transpose_vector_tiles<S, kParts, false>, src, src_pitch, out,
                                                  rows, cols, stream);
    if constexpr (S == 4)
      return launch_tiles<WordTile<S, false>, kParts>(transpose_word_tiles<S, kParts, false>, src, src_pitch,
                                                      out, rows, cols, stream);
    return cudaErrorInvalidValue;  // not reached: 1 and 2 bytes are shifted, 16-byte rows aligned
  }
}

template <int S>
cudaError_t launch_sized(const char *src, int64_t src_pitch, Destination &out, int64_t rows, int64_t cols,
                         int alignment, cudaStream_t stream) {
  return out.count == 1 ? launch_sized<S, false>(src, src_pitch, out, rows, cols, alignment, stream)
                        : launch_sized<S, true>(src, src_pitch, out, rows, cols, alignment, stream);
}

cudaError_t launch_elements(const char *src, int64_t src_pitch, char *dst, int64_t dst_pitch, int64_t rows,
                            int64_t cols, int64_t elem_size, cudaStream_t stream) {
  const int64_t want = (rows * cols + kThreads - 1) / kThreads;
  const unsigned blocks = (unsigned)(want < 65535 * 64 ? want : 65535 * 64);
  transpose_elements<<<blocks, kThreads, 0, stream>>>(src, src_pitch, dst, dst_pitch, rows, cols, elem_size);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t xpose_cuda_transpose_parts(const void *src, int64_t ld_src, int64_t rows, int64_t cols,
                                                  const xpose_part *parts, int nparts, int rotation,
                                                  size_t elem_size, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (nparts < 1 || parts[0].first != 0) return cudaErrorInvalidValue;
  const int64_t es = (int64_t)elem_size;
  const char *s = static_cast<const char *>(src);
  // More parts than one launch's table: a launch per group of columns.
  if (nparts > kMaxParts) {
    for (int g = 0; g < nparts; g += kMaxParts) {
      const int n = nparts - g < kMaxParts ? nparts - g : kMaxParts;
      const int64_t first = parts[g].first, end = g + n < nparts ? parts[g + n].first : cols;
      xpose_part group[kMaxParts];
      for (int i = 0; i < n; i++) group[i] = {parts[g + i].first - first, parts[g + i].dst, parts[g + i].ld_dst};
      const cudaError_t err = xpose_cuda_transpose_parts(s + first * es, ld_src, rows, end - first, group, n,
                                                         rotation, elem_size, stream);
      if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
  }
  Destination out{};
  out.count = out.segments = nparts;
  out.rotation = (rotation % nparts + nparts) % nparts;
  uintptr_t pointers = reinterpret_cast<uintptr_t>(src), pitches = (uintptr_t)(ld_src * es);
  for (int i = 0; i < nparts; i++) {
    const int64_t end = i + 1 < nparts ? parts[i + 1].first : cols;
    if (end < parts[i].first || end > cols) return cudaErrorInvalidValue;
    out.first[i] = parts[i].first;
    out.dst[i] = static_cast<char *>(parts[i].dst);
    out.pitch[i] = parts[i].ld_dst * es;
    if (end == parts[i].first) continue;  // empty: its dst is never used
    pointers |= reinterpret_cast<uintptr_t>(parts[i].dst);
    pitches |= (uintptr_t)out.pitch[i];
  }
  out.first[nparts] = cols;
  const int alignment = ((pointers | pitches) & 31) == 0 ? 32 : ((pointers | pitches) & 15) == 0 ? 16 : 1;
  // Elements off their natural alignment go the element-wise way.
  const bool natural = (pointers & (elem_size - 1)) == 0;
  switch (natural ? elem_size : 0) {
    case 1: return launch_sized<1>(s, ld_src * es, out, rows, cols, alignment, stream);
    case 2: return launch_sized<2>(s, ld_src * es, out, rows, cols, alignment, stream);
    case 4: return launch_sized<4>(s, ld_src * es, out, rows, cols, alignment, stream);
    case 8: return launch_sized<8>(s, ld_src * es, out, rows, cols, alignment, stream);
    case 16: return launch_sized<16>(s, ld_src * es, out, rows, cols, alignment, stream);
    default: break;
  }
  for (int i = 0; i < nparts; i++) {
    const int64_t first = out.first[i], width = out.first[i + 1] - first;
    if (width == 0) continue;
    const cudaError_t err =
        launch_elements(s + first * es, ld_src * es, out.dst[i], out.pitch[i], rows, width, es, stream);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

extern "C" cudaError_t xpose_cuda_transpose(const void *src, int64_t ld_src, void *dst, int64_t ld_dst,
                                            int64_t rows, int64_t cols, size_t elem_size, cudaStream_t stream) {
  const xpose_part whole = {0, dst, ld_dst};
  return xpose_cuda_transpose_parts(src, ld_src, rows, cols, &whole, 1, 0, elem_size, stream);
}
