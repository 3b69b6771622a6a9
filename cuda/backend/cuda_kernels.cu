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
// many tiles down consecutive blocks walk before moving across.  16-byte
// tiles walk down where output rows start inside a 32-byte sector (the
// tiles that share a row's end sectors then run together; across, 20011 x
// 30011 lost 10 points; 64 down gained 0.4-0.6 on 32, 16 lost 1) and across
// where every output row starts a sector (1-1.2 points gained on squares).
constexpr int kVectorMinBlocks = 2;
constexpr int input_segment(int S) { return S == 16 ? 256 : 128; }
constexpr int tile_group(int S, bool sector_rows) { return S == 16 && !sector_rows ? 64 : 1; }

// Word tiles (4 and 8 bytes), per element size and, for 8 bytes (the one
// size that takes them on 16-byte aligned rows too), per alignment: elements
// per lane along each output row (the tile is 32 depth input rows tall), and
// how many tiles down consecutive blocks walk.  On odd pitches every output
// segment shares its end sectors with the tile below; walking down, the two
// run together and their halves meet in L2 instead of each costing DRAM a
// partial write (8 bytes: 256 down gained 1-3.5 points on 64, and put every
// odd shape measured ahead of cuBLAS geam).  Then blocks per SM the register
// budget must allow (a 64-register cap) and input rows a warp loads before
// using any.
constexpr int word_tile_depth(int S, bool aligned) { return S == 4 ? 8 : aligned ? 2 : 4; }
constexpr int word_tile_group(int S, bool aligned) { return S == 4 ? 128 : aligned ? 1 : 256; }
constexpr int kWordMinBlocks = 4;
constexpr int kWordBatch = 8;

// Shifted tiles, per element size: blocks per SM the register budget must
// allow (two tiles of 1-byte elements fill shared memory; 2-byte tiles lost
// 2 points of 84 at two, and gained 0.3-1.2 at four, which spill only
// writing into several outputs: those keep three), and how many tiles down
// consecutive blocks walk (1 byte: 64 gained up to 2 points on 32, as did
// 128 and 256; 2 bytes: 2-16 lost 1-4 points on two shapes of three).  Two
// stages of staged rows (the next tile's loading while this one is written)
// gained nothing on 2 bytes.
constexpr int shifted_min_blocks(int S, bool parts) { return S == 1 ? 2 : S == 2 && !parts ? 4 : 3; }
constexpr int shifted_tile_group(int S) { return S == 1 ? 64 : 1; }
// Tiles of any kind that write into other GPUs' outputs (several
// destinations) walk at least this many down, so that the tiles sharing the
// lines at an output segment's ends run together.  Walking across, 65568^2
// floats on 2 GPUs ran 24 times slower than 65536^2, with NVLink carrying
// twice as many protocol bytes as data.  1024 is a whole tile column of a
// rank's slab on every shape measured, so the blocks running at once fill
// the same few output rows: on 2 H100s, 1- and 2-byte 65537^2 went from
// 1.25x and 1.22x NCCL's exchange alone to 1.03x, odd 4- and 16-byte shapes
// gained 6-11%, against 32 tiles (512 did as well but on 16 bytes).
constexpr int kPartsTileGroup = 1024;
__host__ __device__ constexpr int walk_group(int group, bool parts) {
  return parts && group < kPartsTileGroup ? kPartsTileGroup : group;
}
// Within such a band, the tiles walked down in one part before the walk
// moves on to the next part (0: the whole band), so that the blocks running
// at once write into every part.  Walking a whole band of 1024 tiles in one
// part, a wave of blocks wrote into one peer at a time, the ranks drifting
// into the same peers: on 4 H100s, 131072 x 65536 floats (8 GiB per GPU)
// took 1.31x NCCL's exchange alone, 92682^2 1.21x, 262144 x 131072 bytes
// 1.33x; 64 at a time, 1.00x, 1.03x and 1.03x, and no shape of the 2- or
// 4-GPU sweeps slower (32: the same; 128: 1.03-1.25x).  The tiles that
// share an output segment's end lines still run together: the walk comes
// back to a part after a few hundred tiles, within one wave of blocks.
#ifndef XPOSE_PARTS_INTERLEAVE
#define XPOSE_PARTS_INTERLEAVE 64
#endif
constexpr int kPartsInterleave = XPOSE_PARTS_INTERLEAVE;

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

// tile_position's walk where kPartsInterleave tiles of a band's column are
// walked down in one part, then as many in the next part, and so on: the
// blocks running at once write into every part, a few runs of tiles each.
// The same tiles as the band's walk, in another order.
__device__ __forceinline__ bool interleaved_position(int64_t tile, const Destination &d, int group,
                                                     int64_t tiles_across, int64_t tiles_down, bool small,
                                                     int64_t &tile_row, int64_t &tile_col) {
  const int64_t band_first = divide(tile, group * d.walk_across, small) * group;
  const int64_t in_band = tile - band_first * d.walk_across;
  const int64_t band_rows = tiles_down - band_first < group ? tiles_down - band_first : group;
  const int64_t per_turn = band_rows * d.segments;  // a tile column of every part
  const int64_t turn = divide(in_band, per_turn, small);
  int64_t r = in_band - turn * per_turn;
  const int64_t step = band_rows < kPartsInterleave ? band_rows : kPartsInterleave;
  const int64_t whole = divide(band_rows, step, small) * step;  // rows in whole steps
  int64_t first_row = 0, height = step;
  if (r < whole * d.segments) {
    const int64_t k = divide(r, step * d.segments, small);
    r -= k * step * d.segments;
    first_row = k * step;
  } else {  // the band's last, shorter step
    r -= whole * d.segments;
    first_row = whole;
    height = band_rows - whole;
  }
  const int64_t part = divide(r, height, small);
  tile_row = band_first + first_row + (r - part * height);
  int run = (int)part + d.rotation;
  if (run >= d.segments) run -= d.segments;
  tile_col = run * d.segment_tiles + turn;
  return tile_col < tiles_across;
}

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
  if (kParts && kPartsInterleave > 0 && group > 1)
    return interleaved_position(tile, d, group, tiles_across, tiles_down, small, tile_row, tile_col);
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

// ---- Shifted tiles

template <int S>
struct ShiftedTile {
  static constexpr int V = 16 / S;  // elements per 16-byte chunk
  static constexpr int group = shifted_tile_group(S);
  static constexpr int rows = 32 * V;  // input rows staged: 512 bytes of every output row
  // A tile writes the 15 sectors of each output row that start in its first
  // 480 bytes; the last 32 are the next tile row's first.
  static constexpr int owned_bytes = 480;
  static constexpr int stride = owned_bytes / S;  // input rows from one tile row to the next
  static constexpr int cols = 8 * V;  // 128 bytes of every input row
  static constexpr int window = 9;  // aligned 16-byte chunks that hold 128 bytes of a row
  // The staged rows; the output tile (cols rows of 32 chunks) then takes their place.
  static constexpr int smem_bytes = rows * window * 16;
};

// Words o .. o + 4 of w, shifted right by s bits: 16 bytes from byte 4 o + s / 8.
template <int o>
__device__ __forceinline__ Chunk shift_words(const uint32_t (&w)[8], int s) {
  return {{__funnelshift_r(w[o], w[o + 1], s), __funnelshift_r(w[o + 1], w[o + 2], s),
           __funnelshift_r(w[o + 2], w[o + 3], s), __funnelshift_r(w[o + 3], w[o + 4], s)}};
}

// Chunk `lo` from byte `bytes` on, continued by `hi`; `bytes` the same in
// every lane of the warp (a branch).
__device__ __forceinline__ Chunk shift_chunks(const Chunk &lo, const Chunk &hi, int bytes) {
  const uint32_t w[8] = {lo.w[0], lo.w[1], lo.w[2], lo.w[3], hi.w[0], hi.w[1], hi.w[2], hi.w[3]};
  const int s = 8 * (bytes & 3);
  switch (bytes >> 2) {
    case 0: return shift_words<0>(w, s);
    case 1: return shift_words<1>(w, s);
    case 2: return shift_words<2>(w, s);
    default: return shift_words<3>(w, s);
  }
}

// The same for a `bytes` that differs between lanes: selects, no branches.
__device__ __forceinline__ Chunk shift_chunks_any(const Chunk &lo, const Chunk &hi, int bytes) {
  const uint32_t w[8] = {lo.w[0], lo.w[1], lo.w[2], lo.w[3], hi.w[0], hi.w[1], hi.w[2], hi.w[3]};
  uint32_t y[6], x[8] = {};  // words bytes / 4 .. on; x[5..7] unused
#pragma unroll
  for (int k = 0; k < 6; k++) y[k] = bytes & 8 ? w[k + 2] : w[k];
#pragma unroll
  for (int k = 0; k < 5; k++) x[k] = bytes & 4 ? y[k + 1] : y[k];
  return shift_words<0>(x, 8 * (bytes & 3));
}

// Out[m] = word m of the E x E block of E = 4 / S element words whose rows
// are in[0..E-1]: element k of out[m] is element m of in[k].
template <int S>
__device__ __forceinline__ void transpose_word_block(const uint32_t (&in)[4 / S], uint32_t (&out)[4 / S]);

template <>
__device__ __forceinline__ void transpose_word_block<2>(const uint32_t (&in)[2], uint32_t (&out)[2]) {
  out[0] = __byte_perm(in[0], in[1], 0x5410);
  out[1] = __byte_perm(in[0], in[1], 0x7632);
}

template <>
__device__ __forceinline__ void transpose_word_block<1>(const uint32_t (&in)[4], uint32_t (&out)[4]) {
  const uint32_t b01 = __byte_perm(in[0], in[1], 0x5140), b23 = __byte_perm(in[0], in[1], 0x7362);
  const uint32_t c01 = __byte_perm(in[2], in[3], 0x5140), c23 = __byte_perm(in[2], in[3], 0x7362);
  out[0] = __byte_perm(b01, c01, 0x5410);
  out[1] = __byte_perm(b01, c01, 0x7632);
  out[2] = __byte_perm(b23, c23, 0x5410);
  out[3] = __byte_perm(b23, c23, 0x7632);
}

__device__ __forceinline__ void copy_chunk_async(uint4 *smem_chunk, const char *global_chunk) {
  const unsigned to = (unsigned)__cvta_generic_to_shared(smem_chunk);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(global_chunk) : "memory");
}

// Bytes byte(0) .. byte(n - 1) to `to` in the fewest stores, each on its
// natural alignment (at most 8 bytes): a partial sector at a tile's or a
// rank's edge then crosses NVLink as a few writes instead of one a byte
// (on 4 H200s, 2-byte 65537^2 went from 1.051x NCCL's exchange alone to
// 1.042x).
template <typename Byte>
__device__ __forceinline__ void store_bytes(char *to, int n, Byte byte) {
  for (int i = 0; i < n;) {
    const unsigned address = (unsigned)reinterpret_cast<uintptr_t>(to + i);
    int size = 8;
    while (size > 1 && ((address & (size - 1)) || size > n - i)) size >>= 1;
    uint64_t v = 0;
    for (int k = 0; k < size; k++) v |= (uint64_t)byte(i + k) << (8 * k);
    if (size == 8)
      *reinterpret_cast<uint64_t *>(to + i) = v;
    else if (size == 4)
      *reinterpret_cast<uint32_t *>(to + i) = (uint32_t)v;
    else if (size == 2)
      *reinterpret_cast<uint16_t *>(to + i) = (uint16_t)v;
    else
      to[i] = (char)v;
    i += size;
  }
}

template <int S, bool kParts>
__global__ void __launch_bounds__(kThreads, shifted_min_blocks(S, kParts))
    transpose_shifted_tiles(const char *__restrict__ src, int64_t src_pitch,
                            const __grid_constant__ Destination out, int64_t rows, int64_t cols,
                            int64_t tiles_across, int64_t tiles_down, int64_t tiles) {
  using G = ShiftedTile<S>;
  constexpr int V = G::V, E = 4 / S;
  extern __shared__ uint4 smem[];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int mj = t & 7, mi = t >> 3;  // this thread's micro-block: chunk column, chunk row
  const int64_t walk_across = tiles / tiles_down;
  constexpr int kGroup = walk_group(G::group, kParts);
  const bool small = tiles <= UINT32_MAX && kGroup * walk_across <= UINT32_MAX;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int64_t tile_row, tile_col;
    if (!tile_position<kGroup, kParts>(tile, out, tiles_across, tiles_down, small, tile_row, tile_col))
      continue;
    const int64_t r0 = tile_row * G::stride, c0 = tile_col * G::cols;
    const bool full = r0 + G::rows <= rows && c0 + G::cols <= cols;
    // Full tiles are staged as the aligned chunks that hold each row's 128
    // bytes (cp.async: no registers wait for them).  Those reach up to 15
    // bytes past the 128: on the matrix's last row, only where the row goes
    // on that far.
    const bool staged = full && (r0 + G::rows < rows || (c0 + G::cols) * S + 15 <= cols * S);
    const char *first = src + r0 * src_pitch + c0 * S;
    if (staged) {
      for (int i = t; i < G::rows * G::window; i += kThreads) {
        const int r = i / G::window, chunk = i - r * G::window;
        const char *row = first + r * src_pitch;
        const int shift = (int)(reinterpret_cast<uintptr_t>(row) & 15);
        if (chunk < 8 || shift) copy_chunk_async(smem + i, row - shift + 16 * chunk);
      }
      asm volatile("cp.async.commit_group;\n" ::: "memory");
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
      __syncthreads();
    }

    // In: chunk mj of rows mi V .. mi V + V - 1, cut from the two staged
    // chunks it spans.  4 and 8 bytes: all V rows, then their V x V block
    // transposed.  1 and 2 bytes: in groups of E rows (one word of elements
    // each), which holds fewer registers: word Q of a group transposed is
    // word P of output chunks E Q .. E Q + E - 1.
    constexpr int kGroupRows = S >= 4 ? V : E, kGroups = V / kGroupRows;
    const uint32_t first_bits = (uint32_t)reinterpret_cast<uintptr_t>(first), pitch_bits = (uint32_t)src_pitch;
    const int64_t col = c0 + mj * V;
    Chunk block[V];
#pragma unroll
    for (int P = 0; P < kGroups; P++) {
      Chunk in[kGroupRows];
      if (staged) {
#pragma unroll
        for (int k = 0; k < kGroupRows; k++) {
          const int r = mi * V + kGroupRows * P + k;
          const int shift = (int)((first_bits + (uint32_t)r * pitch_bits) & 15);
          in[k] = shift_chunks_any(load_chunk(&smem[r * G::window + mj]), load_chunk(&smem[r * G::window + mj + 1]),
                                   shift);
        }
      } else {
#pragma unroll
        for (int k = 0; k < kGroupRows; k++) {
          const int64_t row = r0 + mi * V + kGroupRows * P + k;
          in[k] = load_elements<S>(src + row * src_pitch + col * S,
                                   row < rows ? (int)clamp_count(cols - col, V) : 0);
        }
      }
      if constexpr (S >= 4) {
        transpose_block<S>(in, block);
      } else {
#pragma unroll
        for (int Q = 0; Q < 4; Q++) {
          uint32_t words[E], turned[E];
#pragma unroll
          for (int k = 0; k < E; k++) words[k] = in[k].w[Q];
          transpose_word_block<S>(words, turned);
#pragma unroll
          for (int m = 0; m < E; m++) block[E * Q + m].w[P] = turned[m];
        }
      }
    }
    __syncthreads();  // the output tile takes the staged rows' place
    // The eight threads of a quarter-warp that store the same chunk column
    // to eight rows land in eight banks.
#pragma unroll
    for (int k = 0; k < V; k++) {
      const Chunk &c = block[k];
      smem[(mj * V + k) * 32 + (mi ^ mj)] = make_uint4(c.w[0], c.w[1], c.w[2], c.w[3]);
    }
    __syncthreads();

    // Out: warp w writes output rows w + 8 j.  Lane l < 30 writes the
    // 16-byte chunk l of the row's sectors that start in the tile's first
    // 480 bytes, so that every sector has one writer and every store is
    // whole sectors (odd pitches otherwise half-fill a sector at each end).
    const int valid_bytes = S * (int)clamp_count(rows - r0, G::rows);
    RowCursor<kParts> out_rows(out, c0);
#pragma unroll 4
    for (int j = 0; j < V; j++) {
      const int orow = warp + 8 * j;
      const int64_t out_row = c0 + orow;
      if (!full && out_row >= cols) break;
      char *start = out_rows.row(out_row) + r0 * S;
      const int delta = (int)((0u - (uint32_t)reinterpret_cast<uintptr_t>(start)) & 31);  // to its first sector
      const int swizzle = (orow / V) & 7;
      if (lane < 30) {
        const int b = delta + 16 * lane, chunk = b >> 4;
        const Chunk c = shift_chunks(load_chunk(&smem[orow * 32 + (chunk ^ swizzle)]),
                                     load_chunk(&smem[orow * 32 + ((chunk + 1) ^ swizzle)]), b & 15);
        if (b + 16 <= valid_bytes) {
          store_vector(start + b, c);
        } else if (b < valid_bytes) {
          uint8_t bytes[16];
          memcpy(bytes, &c, 16);
          store_bytes(start + b, valid_bytes - b, [&](int i) { return bytes[i]; });
        }
      } else if (lane == 31 && r0 == 0) {  // no tile before: the bytes before the first sector too
        const uint8_t *row_bytes = reinterpret_cast<const uint8_t *>(smem + orow * 32);
        store_bytes(start, delta < valid_bytes ? delta : valid_bytes,
                    [&](int i) { return row_bytes[16 * ((i >> 4) ^ swizzle) + (i & 15)]; });
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
