// Tiled GPU transpose.
//
// Kernels depend only on the element size S (types are bytes).  In both
// tilings below a block stages a tile in shared memory, read from input
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
// Word tiles (8-byte elements, and 1, 2 and 4 bytes on rows that are not
// 16-byte aligned, such as odd leading dimensions): 4-byte words (8-byte for
// 8-byte elements) of E = W / S elements.  A warp reads one input row
// segment of 32 words; when it does not start on a word, each lane loads the
// aligned word, takes its neighbour's and cuts its own 4 bytes out.  Shared
// memory holds the input tile, swizzled so that neither the row writes nor
// the column gathers conflict.  On the way out each lane gathers the E
// elements of one aligned word of an output row, so every store is a whole
// aligned word except the two ends of each output segment, which the
// neighbouring tiles share and which go element by element.
//
// Elements off their natural alignment, and other element sizes, use a
// plain element-wise kernel.
//
// Both tilings also write into several destination matrices at once
// (xpose_cuda_transpose_parts): a table in the kernel's parameters says
// which output rows go where, and each thread finds its rows' part with a
// cursor that only moves forward.  The tile walk then interleaves the
// parts, so that the blocks running at any moment write to every part.
#include <cstdint>
#include <cstring>

#include "backend/cuda_kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 0x7fffffff;
constexpr int kMaxParts = 32;  // per launch: the table stays within 1 KiB of parameters

template <int S> struct Element;
template <> struct Element<1> { using type = uint8_t; };
template <> struct Element<2> { using type = uint16_t; };
template <> struct Element<4> { using type = uint32_t; };
template <> struct Element<8> { using type = uint2; };
template <> struct Element<16> { using type = uint4; };

// Tuning, settled by measurement (tests/bench/RESULTS.md).
//
// Vector tiles: blocks per SM the register budget must allow; per element
// size, the bytes of each input row a tile reads (128, 256 or 512), and how
// many tiles down consecutive blocks walk before moving across.
constexpr int kVectorMinBlocks = 2;
constexpr int input_segment(int S) { return S == 16 ? 512 : 128; }
constexpr int tile_group(int S) { return S == 16 ? 32 : 1; }

// Word tiles, per element size and, for 8 bytes (the one size that takes
// them on 16-byte aligned rows too), per alignment: words per lane along each
// output row (the tile is 32 E depth input rows tall), and how many tiles
// down consecutive blocks walk.  On odd pitches every output segment shares
// its end sectors with the tile below; walking down, the two run together
// and their halves meet in L2 instead of each costing DRAM a partial write.
// Then blocks per SM the register budget must allow (a 64-register cap) and
// input rows a warp loads before using any.
constexpr int word_tile_depth(int S, bool aligned) {
  return S == 4 ? 8 : S == 2 || (S == 8 && !aligned) ? 4 : 2;
}
constexpr int word_tile_group(int S, bool aligned) { return S == 4 ? 128 : S == 8 && !aligned ? 64 : 1; }
constexpr int kWordMinBlocks = 4;
constexpr int kWordBatch = 8;
// Tiles of either kind that write into other GPUs' outputs (several
// destinations) walk at least this many down, so that the tiles sharing the
// lines at an output segment's ends run together.  Walking across, 65568^2
// floats on 2 GPUs ran 24 times slower than 65536^2, with NVLink carrying
// twice as many protocol bytes as data.
constexpr int kPartsTileGroup = 32;
__host__ __device__ constexpr int walk_group(int group, bool parts) {
  return parts && group < kPartsTileGroup ? kPartsTileGroup : group;
}

__device__ __forceinline__ int64_t divide(int64_t a, int64_t b, bool small) {
  return small ? (int64_t)((uint32_t)a / (uint32_t)b) : a / b;
}

__device__ __forceinline__ int64_t clamp_count(int64_t n, int limit) {
  return n < 0 ? 0 : (n > limit ? limit : n);
}

// Where the output rows go: rows [first[i], first[i + 1]) to dst[i] + (row
// - first[i]) * pitch[i] (bytes).  A plain transpose has one part.  With
// several, the tile walk visits `segments` equal runs of tile columns
// (walk_across = segments x segment_tiles, the ones past the matrix
// skipped) in turn, starting at run `rotation`: tile v of a walk row is in
// run (v + rotation) % segments.  Parts of equal width, as the ranks' blocks
// are, each get one run.
struct Destination {
  int count, segments, rotation;
  int64_t segment_tiles, walk_across;
  int64_t first[kMaxParts + 1];  // first[count]: the matrix's columns
  char *dst[kMaxParts];
  int64_t pitch[kMaxParts];
};

// The address of output row r, for rows visited in increasing order.
template <bool kParts>
struct RowCursor {
  const Destination &d;
  int part = 0;
  __device__ __forceinline__ RowCursor(const Destination &dest, int64_t first_row) : d(dest) {
    if (kParts) advance(first_row);
  }
  __device__ __forceinline__ void advance(int64_t r) {
    while (part + 1 < d.count && r >= d.first[part + 1]) part++;
  }
  __device__ __forceinline__ char *row(int64_t r) {
    if (!kParts) return d.dst[0] + r * d.pitch[0];
    advance(r);
    return d.dst[part] + (r - d.first[part]) * d.pitch[part];
  }
};

// Tile `tile` of a walk over tiles_down x walk_across tiles, in bands of
// `group` tile rows walked down first: blocks that run together share input
// rows and output rows, so the DRAM pages they open and the sectors they
// half-fill on odd pitches are shared too.  False for walk positions past
// the matrix.  small: 32-bit arithmetic suffices (it is several times
// cheaper).
template <int group, bool kParts>
__device__ __forceinline__ bool tile_position(int64_t tile, const Destination &d, int64_t tiles_across,
                                              int64_t tiles_down, bool small, int64_t &tile_row,
                                              int64_t &tile_col) {
  const int64_t walk_across = kParts ? d.walk_across : tiles_across;
  int64_t walk_col;
  if (group == 1) {
    tile_row = divide(tile, walk_across, small);
    walk_col = tile - tile_row * walk_across;
  } else {
    const int64_t band_first = divide(tile, group * walk_across, small) * group;
    const int64_t in_band = tile - band_first * walk_across;
    const int64_t band_rows = tiles_down - band_first < group ? tiles_down - band_first : group;
    walk_col = divide(in_band, band_rows, small);
    tile_row = band_first + in_band - walk_col * band_rows;
  }
  if (!kParts) {
    tile_col = walk_col;
    return true;
  }
  const int64_t turn = divide(walk_col, d.segments, small);
  int run = (int)(walk_col - turn * d.segments) + d.rotation;
  if (run >= d.segments) run -= d.segments;
  tile_col = run * d.segment_tiles + turn;
  return tile_col < tiles_across;
}

// ---- Vector tiles

struct Chunk {
  uint32_t w[4];
};

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

template <int S, bool kParts>
__global__ void __launch_bounds__(kThreads, kVectorMinBlocks)
    transpose_vector_tiles(const char *__restrict__ src, int64_t src_pitch,
                           const __grid_constant__ Destination out, int64_t rows, int64_t cols,
                           int64_t tiles_across, int64_t tiles_down, int64_t tiles) {
  using G = Tile<S>;
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
  static constexpr int W = S > 4 ? S : 4;  // bytes per word
  static constexpr int E = W / S;  // elements per word
  static constexpr int depth = word_tile_depth(S, kAligned);  // words per lane of every output row
  static constexpr int group = word_tile_group(S, kAligned);
  static constexpr int cols = 32 * E;  // one word per lane of every input row
  static constexpr int rows = 32 * E * depth;
  static constexpr int smem_bytes = rows * 32 * W;
};

// Shared-memory word t, w: word w of input row t of the tile.  The XOR makes
// a warp's row writes (w = lane) and its column gathers (t = E lane + c)
// fall in 32 different banks.
template <int E>
__device__ __forceinline__ int swizzled(int t, int w) {
  return t * 32 + (w ^ ((t / E) & 31));
}

template <int S, bool kParts, bool kAligned>
__global__ void __launch_bounds__(kThreads, kWordMinBlocks)
    transpose_word_tiles(const char *__restrict__ src, int64_t src_pitch,
                         const __grid_constant__ Destination out, int64_t rows, int64_t cols,
                         int64_t tiles_across, int64_t tiles_down, int64_t tiles) {
  using G = WordTile<S, kAligned>;
  using T = typename Element<S>::type;
  using Word = typename Element<G::W>::type;
  constexpr int E = G::E, W = G::W, kRowsPerWarp = G::rows / 8, kColsPerWarp = G::cols / 8;
  constexpr int kBatch = kRowsPerWarp < kWordBatch ? kRowsPerWarp : kWordBatch;
  extern __shared__ uint4 smem_storage[];
  Word *smem = reinterpret_cast<Word *>(smem_storage);
  const char *smem_raw = reinterpret_cast<const char *>(smem_storage);
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
    // Word loads reach up to 3 bytes past a segment: never past the matrix's
    // last element, which lies in the last tile.
    const bool last = tile_row == tiles_down - 1 && tile_col == tiles_across - 1;

    // In: word `lane` of input rows warp + 8 i, in batches whose loads are
    // all issued before any is used.
#pragma unroll
    for (int first = 0; first < kRowsPerWarp; first += kBatch) {
      Word words[kBatch];
      if (full && !last) {
        uint32_t next[kBatch];  // E > 1: the word after the segment (lane 31)
#pragma unroll
        for (int i = 0; i < kBatch; i++) {
          const char *segment = src + (r0 + warp + 8 * (first + i)) * src_pitch + c0 * S;
          if constexpr (E == 1) {
            words[i] = reinterpret_cast<const Word *>(segment)[lane];
          } else {
            const int shift = (int)(reinterpret_cast<uintptr_t>(segment) & 3);
            const uint32_t *aligned = reinterpret_cast<const uint32_t *>(segment - shift);
            words[i] = aligned[lane];
            if (lane == 31 && shift) next[i] = aligned[32];
          }
        }
        if constexpr (E > 1) {
#pragma unroll
          for (int i = 0; i < kBatch; i++) {
            const char *segment = src + (r0 + warp + 8 * (first + i)) * src_pitch + c0 * S;
            const int shift = (int)(reinterpret_cast<uintptr_t>(segment) & 3);
            const uint32_t following = __shfl_down_sync(0xffffffffu, words[i], 1);
            words[i] = __funnelshift_r(words[i], lane == 31 ? next[i] : following, shift * 8);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < kBatch; i++) {
          const int64_t row = r0 + warp + 8 * (first + i);
          const T *segment = reinterpret_cast<const T *>(src + row * src_pitch + c0 * S);
          T e[E];
#pragma unroll
          for (int k = 0; k < E; k++)
            e[k] = row < rows && c0 + E * lane + k < cols ? segment[E * lane + k] : T{};
          memcpy(&words[i], e, W);
        }
      }
#pragma unroll
      for (int i = 0; i < kBatch; i++) smem[swizzled<E>(warp + 8 * (first + i), lane)] = words[i];
    }
    __syncthreads();

    // Out: output row oc of the tile (input column c0 + oc); lane gathers
    // aligned word lane + 32 j of it, and lane 0 one more word at the end.
    const int valid_rows = full ? G::rows : (int)clamp_count(rows - r0, G::rows);
    RowCursor<kParts> out_rows(out, c0);
#pragma unroll
    for (int i = 0; i < kColsPerWarp; i++) {
      const int oc = warp + 8 * i;
      const int64_t out_row = c0 + oc;
      if (!full && out_row >= cols) break;
      char *segment = out_rows.row(out_row) + r0 * S;
      const int lead = (int)(reinterpret_cast<uintptr_t>(segment) & (W - 1)) / S;  // elements before the first word
      Word *aligned = reinterpret_cast<Word *>(segment - lead * S);
#pragma unroll
      for (int j = 0; j <= G::depth; j++) {
        const int g = lane + 32 * j, t0 = E * g - lead;  // word g holds tile rows t0 .. t0 + E - 1
        if (t0 >= valid_rows) break;
        T e[E];
#pragma unroll
        for (int k = 0; k < E; k++) {
          const int t = t0 + k < 0 ? 0 : (t0 + k < G::rows ? t0 + k : G::rows - 1);  // in the tile
          e[k] = *reinterpret_cast<const T *>(smem_raw + W * swizzled<E>(t, oc / E) + (oc % E) * S);
        }
        if (t0 >= 0 && t0 + E <= valid_rows) {
          Word word;  // assembled in registers: a memcpy straight to memory may go byte by byte
          memcpy(&word, e, W);
          aligned[g] = word;
        } else {
#pragma unroll
          for (int k = 0; k < E; k++)
            if (t0 + k >= 0 && t0 + k < valid_rows) reinterpret_cast<T *>(&aligned[g])[k] = e[k];
        }
      }
    }
    __syncthreads();  // the next tile reuses shared memory
  }
}

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
  const int64_t tiles_down = (rows + G::rows - 1) / G::rows;
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
// 16-byte aligned rows; 8-byte ones are fastest in word tiles either way.
// aligned: the source and every destination have 16-byte aligned rows.
template <int S, bool kParts>
cudaError_t launch_sized(const char *src, int64_t src_pitch, Destination &out, int64_t rows, int64_t cols,
                         bool aligned, cudaStream_t stream) {
  if constexpr (S == 8) {
    if (aligned)
      return launch_tiles<WordTile<S, true>, kParts>(transpose_word_tiles<S, kParts, true>, src, src_pitch, out,
                                                     rows, cols, stream);
    return launch_tiles<WordTile<S, false>, kParts>(transpose_word_tiles<S, kParts, false>, src, src_pitch, out,
                                                    rows, cols, stream);
  } else {
    if (S == 16 || aligned)
      return launch_tiles<Tile<S>, kParts>(transpose_vector_tiles<S, kParts>, src, src_pitch, out, rows, cols,
                                           stream);
    if constexpr (S < 16)
      return launch_tiles<WordTile<S, false>, kParts>(transpose_word_tiles<S, kParts, false>, src, src_pitch,
                                                      out, rows, cols, stream);
    return cudaErrorInvalidValue;  // not reached: natural alignment makes 16-byte rows aligned
  }
}

template <int S>
cudaError_t launch_sized(const char *src, int64_t src_pitch, Destination &out, int64_t rows, int64_t cols,
                         bool aligned, cudaStream_t stream) {
  return out.count == 1 ? launch_sized<S, false>(src, src_pitch, out, rows, cols, aligned, stream)
                        : launch_sized<S, true>(src, src_pitch, out, rows, cols, aligned, stream);
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
  const bool aligned = ((pointers | pitches) & 15) == 0;
  // Elements off their natural alignment go the element-wise way.
  const bool natural = (pointers & (elem_size - 1)) == 0;
  switch (natural ? elem_size : 0) {
    case 1: return launch_sized<1>(s, ld_src * es, out, rows, cols, aligned, stream);
    case 2: return launch_sized<2>(s, ld_src * es, out, rows, cols, aligned, stream);
    case 4: return launch_sized<4>(s, ld_src * es, out, rows, cols, aligned, stream);
    case 8: return launch_sized<8>(s, ld_src * es, out, rows, cols, aligned, stream);
    case 16: return launch_sized<16>(s, ld_src * es, out, rows, cols, aligned, stream);
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
