// The tiles' common parts (cuda_kernels.cu): element types, the tilings'
// sizes, the destination table and the walk of tiles over it.  Private to
// cuda_kernels.cu, the one translation unit that includes it.
#pragma once

#include <cstdint>

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

}  // namespace
