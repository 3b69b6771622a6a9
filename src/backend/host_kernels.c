/* Cache-blocked host transpose.
 *
 * The matrix is cut into tiles of one cache line of source columns by a few
 * dozen source rows.  Each tile is transposed into a small buffer that stays
 * in L1, then every buffer row is written to its destination row in one
 * piece.  Large outputs are written with non-temporal stores: like memcpy,
 * that skips reading the destination lines before overwriting them, which is
 * a third of the memory traffic of a plain transpose.
 *
 * Tile shapes were measured on an AMD EPYC (Zen 4) core on 8192 x 8192: more
 * source rows per tile mean longer destination runs but more concurrent
 * source streams, and with power-of-two row strides all rows of a tile share
 * a cache set; 64 rows of 4-byte elements ran anywhere from 58% to 79% of
 * memcpy, 32 rows steadily 73-78%; 8- and 16-byte elements prefer 16 rows.
 *
 * With AVX2 the tile is transposed in registers; two 128-bit blocks ride in
 * the two lanes of each 256-bit register, so one shuffle network serves
 * 1-, 2-, 4- and 8-byte elements, and full tiles run in loops specialized
 * per size with nothing called per row (calls per 128-byte row cost 8-byte
 * elements a third of their speed).  Edges, other sizes and CPUs without
 * AVX2 copy element by element into the buffer (fixed-size copies for
 * 1-16 bytes). */
#include "host_kernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XPOSE_X86 1
#include <immintrin.h>
#else
#define XPOSE_X86 0
#endif

enum {
  TILE_BUFFER_BYTES = 4096,
  /* Outputs at least this large bypass the caches on the way out. */
  STREAM_THRESHOLD_BYTES = 8 << 20,
  /* Staged blocks (large outputs): destination runs of this many bytes,
   * blocks of at most this many. */
  STAGED_RUN_BYTES = 1024,
  STAGED_BLOCK_BYTES = 256 << 10,
  /* Elements larger than this are copied straight to their place. */
  LARGE_ELEMENT_BYTES = 256
};

typedef struct {
  int64_t tile_rows, tile_cols;
} tile_geometry;

/* ---- element-by-element tiles (portable path, partial tiles, odd sizes) ---- */

static inline void gather_fixed(const char *src, size_t src_pitch, char *buf, size_t buf_pitch,
                                int64_t rows, int64_t cols, size_t elem_size) {
  for (int64_t i = 0; i < rows; i++) {
    const char *row = src + (size_t)i * src_pitch;
    for (int64_t j = 0; j < cols; j++)
      memcpy(buf + (size_t)j * buf_pitch + (size_t)i * elem_size, row + (size_t)j * elem_size,
             elem_size);
  }
}

static void gather_tile(const char *src, size_t src_pitch, char *buf, size_t buf_pitch,
                        int64_t rows, int64_t cols, size_t elem_size) {
  /* Constant sizes let the compiler turn each memcpy into one move. */
  switch (elem_size) {
    case 1: gather_fixed(src, src_pitch, buf, buf_pitch, rows, cols, 1); break;
    case 2: gather_fixed(src, src_pitch, buf, buf_pitch, rows, cols, 2); break;
    case 4: gather_fixed(src, src_pitch, buf, buf_pitch, rows, cols, 4); break;
    case 8: gather_fixed(src, src_pitch, buf, buf_pitch, rows, cols, 8); break;
    case 16: gather_fixed(src, src_pitch, buf, buf_pitch, rows, cols, 16); break;
    default: gather_fixed(src, src_pitch, buf, buf_pitch, rows, cols, elem_size); break;
  }
}

/* ---- AVX2 tiles ---- */

#if XPOSE_X86
#define AVX2 __attribute__((target("avx2")))
#define LOAD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
/* 32 bytes of a tile buffer as the two 16-byte halves the blocks stored:
 * a 32-byte load spanning two recent 16-byte stores cannot be forwarded from
 * the store buffer and stalls (this doubled the in-cache speed). */
#define LOAD_STORED_HALVES(p)                                                     \
  _mm256_inserti128_si256(                                                        \
      _mm256_castsi128_si256(_mm_load_si128((const __m128i *)(const void *)(p))), \
      _mm_load_si128((const __m128i *)(const void *)((p) + 16)), 1)
#define STORE_LO(p, v) _mm_storeu_si128((__m128i *)(void *)(p), _mm256_castsi256_si128(v))
#define STORE_HI(p, v) _mm_storeu_si128((__m128i *)(void *)(p), _mm256_extracti128_si256(v, 1))

/* 16 rows x 32 one-byte columns -> 32 rows x 16.  Four rounds of unpacks
 * transpose the 16 x 16 block in each lane; `order` undoes their interleave. */
AVX2 static inline void block_1(const char *s, size_t sp, char *d, size_t dp) {
  __m256i a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = LOAD256(s + (size_t)i * sp);
  for (int i = 0; i < 8; i++) {
    b[2 * i] = _mm256_unpacklo_epi8(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm256_unpackhi_epi8(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 2; k++) {
      a[4 * i + k] = _mm256_unpacklo_epi16(b[4 * i + k], b[4 * i + k + 2]);
      a[4 * i + k + 2] = _mm256_unpackhi_epi16(b[4 * i + k], b[4 * i + k + 2]);
    }
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      b[8 * i + k] = _mm256_unpacklo_epi32(a[8 * i + k], a[8 * i + k + 4]);
      b[8 * i + k + 4] = _mm256_unpackhi_epi32(a[8 * i + k], a[8 * i + k + 4]);
    }
  for (int k = 0; k < 8; k++) {
    a[k] = _mm256_unpacklo_epi64(b[k], b[k + 8]);
    a[k + 8] = _mm256_unpackhi_epi64(b[k], b[k + 8]);
  }
  static const int order[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  for (int r = 0; r < 16; r++) {
    STORE_LO(d + (size_t)r * dp, a[order[r]]);
    STORE_HI(d + (size_t)(r + 16) * dp, a[order[r]]);
  }
}

/* 8 rows x 16 two-byte columns -> 16 rows x 8. */
AVX2 static inline void block_2(const char *s, size_t sp, char *d, size_t dp) {
  __m256i a[8], b[8];
  for (int i = 0; i < 8; i++) a[i] = LOAD256(s + (size_t)i * sp);
  for (int i = 0; i < 4; i++) {
    b[2 * i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++) {
      a[4 * i + k] = _mm256_unpacklo_epi32(b[4 * i + k], b[4 * i + k + 2]);
      a[4 * i + k + 2] = _mm256_unpackhi_epi32(b[4 * i + k], b[4 * i + k + 2]);
    }
  for (int k = 0; k < 4; k++) {
    b[k] = _mm256_unpacklo_epi64(a[k], a[k + 4]);
    b[k + 4] = _mm256_unpackhi_epi64(a[k], a[k + 4]);
  }
  static const int order[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  for (int r = 0; r < 8; r++) {
    STORE_LO(d + (size_t)r * dp, b[order[r]]);
    STORE_HI(d + (size_t)(r + 8) * dp, b[order[r]]);
  }
}

/* 4 rows x 8 four-byte columns -> 8 rows x 4. */
AVX2 static inline void block_4(const char *s, size_t sp, char *d, size_t dp) {
  __m256i a0 = LOAD256(s), a1 = LOAD256(s + sp), a2 = LOAD256(s + 2 * sp), a3 = LOAD256(s + 3 * sp);
  __m256i t0 = _mm256_unpacklo_epi32(a0, a1), t1 = _mm256_unpackhi_epi32(a0, a1);
  __m256i t2 = _mm256_unpacklo_epi32(a2, a3), t3 = _mm256_unpackhi_epi32(a2, a3);
  __m256i r0 = _mm256_unpacklo_epi64(t0, t2), r1 = _mm256_unpackhi_epi64(t0, t2);
  __m256i r2 = _mm256_unpacklo_epi64(t1, t3), r3 = _mm256_unpackhi_epi64(t1, t3);
  STORE_LO(d, r0);
  STORE_LO(d + dp, r1);
  STORE_LO(d + 2 * dp, r2);
  STORE_LO(d + 3 * dp, r3);
  STORE_HI(d + 4 * dp, r0);
  STORE_HI(d + 5 * dp, r1);
  STORE_HI(d + 6 * dp, r2);
  STORE_HI(d + 7 * dp, r3);
}

/* 2 rows x 4 eight-byte columns -> 4 rows x 2. */
AVX2 static inline void block_8(const char *s, size_t sp, char *d, size_t dp) {
  __m256i a = LOAD256(s), b = LOAD256(s + sp);
  __m256i lo = _mm256_unpacklo_epi64(a, b), hi = _mm256_unpackhi_epi64(a, b);
  STORE_LO(d, lo);
  STORE_LO(d + dp, hi);
  STORE_HI(d + 2 * dp, lo);
  STORE_HI(d + 3 * dp, hi);
}

#endif /* XPOSE_X86 */

/* ---- writing buffer rows out ---- */

static void write_run(char *dst, const char *src, size_t bytes, int stream) {
#if XPOSE_X86
  if (stream) {
    size_t head = (size_t)(-(uintptr_t)dst) & 15;
    if (head > bytes) head = bytes;
    memcpy(dst, src, head);
    dst += head, src += head, bytes -= head;
    for (; bytes >= 16; bytes -= 16, dst += 16, src += 16)
      _mm_stream_si128((__m128i *)(void *)dst, _mm_loadu_si128((const __m128i *)(const void *)src));
  }
#else
  (void)stream;
#endif
  memcpy(dst, src, bytes);
}

#if XPOSE_X86
/* A tile buffer row of constant length `bytes` (a multiple of 32) to dst:
 * 32-byte streaming stores when dst is aligned, which beat 16-byte ones by
 * about 12 points of memcpy for 8-byte elements on Zen 4. */
AVX2 static inline __attribute__((always_inline)) void write_row_avx2(char *dst, const char *src,
                                                                      size_t bytes, int stream) {
  if (!stream) {
    for (size_t k = 0; k < bytes; k += 32)
      _mm256_storeu_si256((__m256i *)(void *)(dst + k), LOAD_STORED_HALVES(src + k));
  } else if (((uintptr_t)dst & 31) == 0) {
    for (size_t k = 0; k < bytes; k += 32)
      _mm256_stream_si256((__m256i *)(void *)(dst + k), LOAD_STORED_HALVES(src + k));
  } else {
    write_run(dst, src, bytes, stream);
  }
}

/* Full tiles only (rows, cols multiples of the tile), every size fixed at
 * compile time so the block and row loops unroll and nothing is called. */
#define AVX2_FULL_TILES(size, tile_rows, tile_cols, block_rows, block_cols)                 \
  AVX2 static void full_tiles_avx2_##size(const char *src, size_t sp, char *dst, size_t dp, \
                                          int64_t rows, int64_t cols, int stream) {         \
    _Alignas(64) char buf[(tile_rows) * (tile_cols) * (size)];                              \
    const size_t bp = (tile_rows) * (size);                                                 \
    for (int64_t ib = 0; ib < rows; ib += (tile_rows))                                      \
      for (int64_t jb = 0; jb < cols; jb += (tile_cols)) {                                  \
        const char *s = src + (size_t)ib * sp + (size_t)jb * (size);                        \
        for (int i = 0; i < (tile_rows); i += (block_rows))                                 \
          for (int j = 0; j < (tile_cols); j += (block_cols))                               \
            block_##size(s + (size_t)i * sp + (size_t)j * (size), sp,                       \
                         buf + (size_t)j * bp + (size_t)i * (size), bp);                    \
        char *d = dst + (size_t)jb * dp + (size_t)ib * (size);                              \
        for (int j = 0; j < (tile_cols); j++)                                               \
          write_row_avx2(d + (size_t)j * dp, buf + (size_t)j * bp, bp, stream);             \
      }                                                                                     \
  }
AVX2_FULL_TILES(1, 64, 64, 16, 32)
AVX2_FULL_TILES(2, 32, 32, 8, 16)
AVX2_FULL_TILES(4, 32, 16, 4, 8)
AVX2_FULL_TILES(8, 16, 8, 2, 4)

typedef void (*full_tiles_fn)(const char *, size_t, char *, size_t, int64_t, int64_t, int);
#endif

/* Tile shapes, measured (see the top of this file). */
static tile_geometry geometry_for(size_t elem_size) {
  tile_geometry g = {0, 0};
  switch (elem_size) {
    case 1: g.tile_rows = 64, g.tile_cols = 64; break;
    case 2: g.tile_rows = 32, g.tile_cols = 32; break;
    case 4: g.tile_rows = 32, g.tile_cols = 16; break;
    case 8: g.tile_rows = 16, g.tile_cols = 8; break;
    case 16: g.tile_rows = 16, g.tile_cols = 4; break;
    default:
      g.tile_cols = elem_size < 64 ? (int64_t)(64 / elem_size) : 1;
      g.tile_rows = (int64_t)(TILE_BUFFER_BYTES / ((size_t)g.tile_cols * elem_size));
      if (g.tile_rows > 64) g.tile_rows = 64;
      break;
  }
  return g;
}

static void transpose_tiled(const tile_geometry *g, const char *src, size_t src_pitch, char *dst,
                            size_t dst_pitch, int64_t rows, int64_t cols, size_t elem_size,
                            int stream) {
  _Alignas(64) char buf[TILE_BUFFER_BYTES];
  for (int64_t ib = 0; ib < rows; ib += g->tile_rows) {
    const int64_t ti = rows - ib < g->tile_rows ? rows - ib : g->tile_rows;
    const size_t buf_pitch = (size_t)ti * elem_size;
    for (int64_t jb = 0; jb < cols; jb += g->tile_cols) {
      const int64_t tj = cols - jb < g->tile_cols ? cols - jb : g->tile_cols;
      const char *s = src + (size_t)ib * src_pitch + (size_t)jb * elem_size;
      gather_tile(s, src_pitch, buf, buf_pitch, ti, tj, elem_size);
      char *d = dst + (size_t)jb * dst_pitch + (size_t)ib * elem_size;
      for (int64_t j = 0; j < tj; j++)
        write_run(d + (size_t)j * dst_pitch, buf + (size_t)j * buf_pitch, buf_pitch, stream);
    }
  }
#if XPOSE_X86
  if (stream) _mm_sfence(); /* order the streamed stores before anyone reads dst */
#endif
}

/* Elements of several cache lines each: tiling buys nothing, copy in place. */
static void transpose_large_elements(const char *src, size_t src_pitch, char *dst, size_t dst_pitch,
                                     int64_t rows, int64_t cols, size_t elem_size) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      memcpy(dst + (size_t)j * dst_pitch + (size_t)i * elem_size,
             src + (size_t)i * src_pitch + (size_t)j * elem_size, elem_size);
}

int xpose_host_kernel_available(xpose_host_kernel kernel) {
  switch (kernel) {
    case XPOSE_HOST_KERNEL_AUTO:
    case XPOSE_HOST_KERNEL_PORTABLE: return 1;
    case XPOSE_HOST_KERNEL_AVX2:
#if XPOSE_X86
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") != 0;
#else
      return 0;
#endif
  }
  return 0;
}

static xpose_host_kernel resolve(xpose_host_kernel kernel) {
  static int has_avx2 = -1; /* a benign race: every thread computes the same value */
  if (kernel != XPOSE_HOST_KERNEL_AUTO) return kernel;
  if (has_avx2 < 0) has_avx2 = xpose_host_kernel_available(XPOSE_HOST_KERNEL_AVX2);
  return has_avx2 ? XPOSE_HOST_KERNEL_AVX2 : XPOSE_HOST_KERNEL_PORTABLE;
}

const char *xpose_host_kernel_name(xpose_host_kernel kernel) {
  return resolve(kernel) == XPOSE_HOST_KERNEL_AVX2 ? "avx2" : "portable";
}

/* The tiles written straight to dst, streamed or not. */
static void transpose_direct(xpose_host_kernel kernel, const char *s, size_t src_pitch, char *d,
                             size_t dst_pitch, int64_t rows, int64_t cols, size_t elem_size,
                             int stream) {
  const tile_geometry g = geometry_for(elem_size);
#if XPOSE_X86
  full_tiles_fn full_tiles = NULL;
  if (resolve(kernel) == XPOSE_HOST_KERNEL_AVX2) {
    switch (elem_size) {
      case 1: full_tiles = full_tiles_avx2_1; break;
      case 2: full_tiles = full_tiles_avx2_2; break;
      case 4: full_tiles = full_tiles_avx2_4; break;
      case 8: full_tiles = full_tiles_avx2_8; break;
      default: break; /* 16 bytes: one element per vector, gathering is as good */
    }
  }
  if (full_tiles) {
    /* The interior in full tiles; the right and bottom edges element-wise. */
    const int64_t full_rows = rows / g.tile_rows * g.tile_rows;
    const int64_t full_cols = cols / g.tile_cols * g.tile_cols;
    full_tiles(s, src_pitch, d, dst_pitch, full_rows, full_cols, stream);
    transpose_tiled(&g, s + (size_t)full_cols * elem_size, src_pitch,
                    d + (size_t)full_cols * dst_pitch, dst_pitch, full_rows, cols - full_cols,
                    elem_size, stream);
    transpose_tiled(&g, s + (size_t)full_rows * src_pitch, src_pitch,
                    d + (size_t)full_rows * elem_size, dst_pitch, rows - full_rows, cols, elem_size,
                    stream);
    return;
  }
#else
  (void)kernel;
#endif
  transpose_tiled(&g, s, src_pitch, d, dst_pitch, rows, cols, elem_size, stream);
}

/* Large outputs whose rows do not start on cache lines: blocks with
 * STAGED_RUN_BYTES-long destination runs are transposed into a buffer that
 * stays in L2, then streamed out a run at a time.  Streaming stores want
 * whole lines written together; a tile's own rows (128 bytes for 4-byte
 * elements) then straddle lines and leave partial ones at both ends:
 * 8191 x 8192 floats ran at 9% of memcpy written tile by tile, 33% staged
 * (2-core Zen 4 VM, tests/bench/RESULTS.md).  Where rows start on lines,
 * writing tiles directly was as fast or faster.  Returns 0 if the buffer
 * cannot be had. */
static int transpose_staged(xpose_host_kernel kernel, const char *src, size_t src_pitch,
                            char *dst, size_t dst_pitch, int64_t rows, int64_t cols,
                            size_t elem_size) {
  int64_t block_rows = STAGED_RUN_BYTES / (int64_t)elem_size;
  if (block_rows < 1) block_rows = 1;
  int64_t block_cols = STAGED_BLOCK_BYTES / (block_rows * (int64_t)elem_size);
  if (block_cols > block_rows) block_cols = block_rows;
  if (block_cols < 1) block_cols = 1;
  const size_t buffer_bytes = ((size_t)block_rows * (size_t)block_cols * elem_size + 63) / 64 * 64;
  char *buffer = aligned_alloc(64, buffer_bytes);
  if (!buffer) return 0;
  for (int64_t ib = 0; ib < rows; ib += block_rows) {
    const int64_t h = rows - ib < block_rows ? rows - ib : block_rows;
    const size_t run = (size_t)h * elem_size;
    for (int64_t jb = 0; jb < cols; jb += block_cols) {
      const int64_t w = cols - jb < block_cols ? cols - jb : block_cols;
      transpose_direct(kernel, src + (size_t)ib * src_pitch + (size_t)jb * elem_size, src_pitch,
                       buffer, run, h, w, elem_size, 0);
      char *d = dst + (size_t)jb * dst_pitch + (size_t)ib * elem_size;
      for (int64_t j = 0; j < w; j++) write_run(d + (size_t)j * dst_pitch, buffer + (size_t)j * run, run, 1);
    }
  }
#if XPOSE_X86
  _mm_sfence(); /* order the streamed stores before anyone reads dst */
#endif
  free(buffer);
  return 1;
}

void xpose_host_transpose_using(xpose_host_kernel kernel, const void *src, int64_t ld_src,
                                void *dst, int64_t ld_dst, int64_t rows, int64_t cols,
                                size_t elem_size) {
  if (rows <= 0 || cols <= 0 || elem_size == 0) return;
  const size_t src_pitch = (size_t)ld_src * elem_size, dst_pitch = (size_t)ld_dst * elem_size;
  if (elem_size > LARGE_ELEMENT_BYTES) {
    transpose_large_elements(src, src_pitch, dst, dst_pitch, rows, cols, elem_size);
    return;
  }
  const int stream = (uint64_t)rows * (uint64_t)cols * elem_size >= STREAM_THRESHOLD_BYTES;
  const int whole_lines = (((uintptr_t)dst | dst_pitch) & 63) == 0;
  if (stream && !whole_lines &&
      transpose_staged(kernel, src, src_pitch, dst, dst_pitch, rows, cols, elem_size))
    return;
  transpose_direct(kernel, src, src_pitch, dst, dst_pitch, rows, cols, elem_size, stream);
}

void xpose_host_transpose(const void *src, int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,
                          int64_t cols, size_t elem_size) {
  xpose_host_transpose_using(XPOSE_HOST_KERNEL_AUTO, src, ld_src, dst, ld_dst, rows, cols,
                             elem_size);
}
