// Shifted tiles (cuda_kernels.cu says what they are for).  Private to
// cuda_kernels.cu, which includes it after the vector and word tiles whose
// chunks and register transposes it uses.
#pragma once

#include <cstdint>
#include <cstring>

namespace {

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

// A full tile's rows from `first` staged in shared memory as the aligned
// chunks that hold each row's 128 bytes, by thread t of the block.
template <int S>
__device__ __forceinline__ void stage_rows(uint4 *smem, const char *first, int64_t src_pitch, int t) {
  using G = ShiftedTile<S>;
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
    if (staged) stage_rows<S>(smem, first, src_pitch, t);

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

}  // namespace
