/* Host transpose, one core.
 *
 * What limits one core is the memory system, and how addresses are walked
 * decides what it delivers (2-core Zen 4 VM, tests/bench/RESULTS.md):
 * streaming stores run at memcpy's speed only while a handful of destination
 * rows are open at once and each line is finished in one go; scattered
 * 64-128-byte runs over thousands of rows, as a row-of-tiles sweep writes
 * them, ran at a third of that, whatever the tile shape.
 *
 * So with AVX2 the matrix is cut into bands of source rows (512 bytes of
 * destination run each) and each band into strips 32 bytes wide, walked
 * down: a register block turns 32/size source rows of 32 bytes into 32/size
 * destination pieces of 32 bytes, stored straight from registers, so every
 * destination row of the strip grows front to back.  One shuffle network per
 * element size of 1-16 bytes.  Large outputs are streamed (non-temporal
 * stores skip reading the destination first, a third of the traffic) where
 * they are 32-byte aligned, plainly stored where not; plainly stored
 * elements of 4-16 bytes go down strips two blocks wide.
 *
 * Edges, other sizes and CPUs without AVX2 go through small tiles copied
 * element by element into a buffer that stays in L1 (fixed-size copies for
 * 1-16 bytes), then written out a buffer row at a time. */
#include "host_kernels.h"

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
  /* AVX2 blocks move pieces of this many bytes: 32/size rows by as many
   * columns. */
  STRIP_PIECE_BYTES = 32,
  /* AVX2 strips walk down bands of source rows whose destination runs are
   * this many bytes long. */
  STRIP_BAND_BYTES = 512,
  /* Wide strips (plain stores) walk down bands this long. */
  WIDE_BAND_BYTES = 1536,
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

/* A buffer row to its destination run, streamed (16-byte stores) or not. */
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

/* ---- AVX2: register blocks walked down column strips ---- */

#if XPOSE_X86
#define AVX2 __attribute__((target("avx2")))
#define AVX2_INLINE __attribute__((target("avx2"), always_inline)) static inline
#define LOAD256(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))

/* One 32-byte piece of a destination row; streamed pieces must be aligned. */
AVX2_INLINE void store_piece(char *d, __m256i v, int stream) {
  if (stream)
    _mm256_stream_si256((__m256i *)(void *)d, v);
  else
    _mm256_storeu_si256((__m256i *)(void *)d, v);
}

/* Each block transposes 32/size source rows of 32 bytes into 32/size
 * pieces of 32 bytes, piece r for destination row r. */

/* 16 rows x 32 bytes: four rounds of unpacks transpose each lane's 16 x 16;
 * lane 0 of out[r] is column r of the rows, lane 1 column r + 16. */
AVX2_INLINE void columns_of_16_rows(const char *s, size_t sp, __m256i out[16]) {
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
  for (int r = 0; r < 16; r++) out[r] = a[order[r]];
}

/* 32 x 32 bytes: two 16-row halves, paired lane by lane (the registers do
 * not hold both; the compiler parks one half in L1). */
AVX2_INLINE void block_1(const char *s, size_t sp, __m256i o[32]) {
  __m256i top[16], bottom[16];
  columns_of_16_rows(s, sp, top);
  columns_of_16_rows(s + 16 * sp, sp, bottom);
  for (int r = 0; r < 16; r++) {
    o[r] = _mm256_permute2x128_si256(top[r], bottom[r], 0x20);
    o[r + 16] = _mm256_permute2x128_si256(top[r], bottom[r], 0x31);
  }
}

/* 16 x 16 two-byte elements: three rounds of unpacks transpose each lane's
 * 8 x 8, then lanes are paired across the two 8-row halves. */
AVX2_INLINE void block_2(const char *s, size_t sp, __m256i o[16]) {
  __m256i a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = LOAD256(s + (size_t)i * sp);
  for (int i = 0; i < 8; i++) {
    b[2 * i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++)
    for (int k = 0; k < 2; k++) {
      a[4 * i + k] = _mm256_unpacklo_epi32(b[4 * i + k], b[4 * i + k + 2]);
      a[4 * i + k + 2] = _mm256_unpackhi_epi32(b[4 * i + k], b[4 * i + k + 2]);
    }
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 4; k++) {
      b[8 * i + k] = _mm256_unpacklo_epi64(a[8 * i + k], a[8 * i + k + 4]);
      b[8 * i + k + 4] = _mm256_unpackhi_epi64(a[8 * i + k], a[8 * i + k + 4]);
    }
  static const int order[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  for (int r = 0; r < 8; r++) {
    o[r] = _mm256_permute2x128_si256(b[order[r]], b[8 + order[r]], 0x20);
    o[r + 8] = _mm256_permute2x128_si256(b[order[r]], b[8 + order[r]], 0x31);
  }
}

/* 8 x 8 four-byte elements. */
AVX2_INLINE void block_4(const char *s, size_t sp, __m256i o[8]) {
  __m256i r[8], t[8];
  for (int i = 0; i < 8; i++) r[i] = LOAD256(s + (size_t)i * sp);
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; i++)
    for (int k = 0; k < 2; k++) {
      r[4 * i + k] = _mm256_unpacklo_epi64(t[4 * i + k], t[4 * i + k + 2]);
      r[4 * i + k + 2] = _mm256_unpackhi_epi64(t[4 * i + k], t[4 * i + k + 2]);
    }
  static const int order[4] = {0, 2, 1, 3};
  for (int k = 0; k < 4; k++) {
    o[k] = _mm256_permute2x128_si256(r[order[k]], r[4 + order[k]], 0x20);
    o[k + 4] = _mm256_permute2x128_si256(r[order[k]], r[4 + order[k]], 0x31);
  }
}

/* 4 x 4 eight-byte elements. */
AVX2_INLINE void block_8(const char *s, size_t sp, __m256i o[4]) {
  const __m256i a = LOAD256(s), b = LOAD256(s + sp), c = LOAD256(s + 2 * sp),
                e = LOAD256(s + 3 * sp);
  const __m256i t0 = _mm256_unpacklo_epi64(a, b), t1 = _mm256_unpackhi_epi64(a, b);
  const __m256i t2 = _mm256_unpacklo_epi64(c, e), t3 = _mm256_unpackhi_epi64(c, e);
  o[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
  o[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
  o[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
  o[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* 2 x 2 sixteen-byte elements. */
AVX2_INLINE void block_16(const char *s, size_t sp, __m256i o[2]) {
  const __m256i a = LOAD256(s), b = LOAD256(s + sp);
  o[0] = _mm256_permute2x128_si256(a, b, 0x20);
  o[1] = _mm256_permute2x128_si256(a, b, 0x31);
}

/* Full blocks only (rows and cols multiples of 32/size).  Bands of
 * STRIP_BAND_BYTES / size source rows; in each band, strips 32 bytes wide
 * are walked down one block at a time.  A strip writes its 32/size
 * destination rows front to back, so each output line is completed by two
 * blocks in a row, which is what streaming stores want; its source lines
 * are read half by this strip and half by the next one, while still in L1.
 * With `pairs`, streamed strips go two blocks at a time and store each
 * row's two pieces together, finishing every line at once: 1- and 2-byte
 * strips hold 32 and 16 rows open, too many to leave lines half written
 * (RESULTS.md); 2-8 rows of larger elements gain nothing from it. */
#define AVX2_STRIPS(size, pairs)                                                               \
  AVX2 static void strips_avx2_##size(const char *src, size_t sp, char *dst, size_t dp,        \
                                      int64_t rows, int64_t cols, int stream) {                \
    enum { BLOCK = STRIP_PIECE_BYTES / (size) };                                               \
    const int64_t band = STRIP_BAND_BYTES / (size);                                            \
    const int pair = (pairs) && stream;                                                        \
    for (int64_t ib = 0; ib < rows; ib += band) {                                              \
      const int64_t end = rows - ib < band ? rows : ib + band;                                 \
      for (int64_t jb = 0; jb < cols; jb += BLOCK) {                                           \
        const char *s = src + (size_t)jb * (size);                                             \
        char *d = dst + (size_t)jb * dp;                                                       \
        int64_t i = ib;                                                                        \
        for (; pair && i + 2 * BLOCK <= end; i += 2 * BLOCK) {                                 \
          __m256i a[BLOCK], b[BLOCK];                                                          \
          block_##size(s + (size_t)i * sp, sp, a);                                             \
          block_##size(s + (size_t)(i + BLOCK) * sp, sp, b);                                   \
          for (int r = 0; r < BLOCK; r++) {                                                    \
            store_piece(d + (size_t)r * dp + (size_t)i * (size), a[r], 1);                     \
            store_piece(d + (size_t)r * dp + (size_t)i * (size) + STRIP_PIECE_BYTES, b[r], 1); \
          }                                                                                    \
        }                                                                                      \
        for (; i < end; i += BLOCK) {                                                          \
          __m256i a[BLOCK];                                                                    \
          block_##size(s + (size_t)i * sp, sp, a);                                             \
          for (int r = 0; r < BLOCK; r++)                                                      \
            store_piece(d + (size_t)r * dp + (size_t)i * (size), a[r], stream);                \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
AVX2_STRIPS(1, 1)
AVX2_STRIPS(2, 1)
AVX2_STRIPS(4, 0)
AVX2_STRIPS(8, 0)
AVX2_STRIPS(16, 0)

/* Outputs written with plain stores (not streamed) allocate a line in L1
 * for every open destination row.  There strips two blocks wide, each source
 * line read whole, walked down longer bands, ran faster for 4-16 bytes
 * (10007 x 6007 floats: 44-47 -> 57-68% of memcpy, RESULTS.md), provided the 2 x
 * 32/size open rows' lines spread over the L1's sets (rows_spread_in_l1). */
#define AVX2_WIDE_STRIPS(size)                                                                   \
  AVX2 static void wide_strips_avx2_##size(const char *src, size_t sp, char *dst, size_t dp,     \
                                           int64_t rows, int64_t cols) {                         \
    enum { BLOCK = STRIP_PIECE_BYTES / (size) };                                                 \
    const int64_t band = WIDE_BAND_BYTES / (size);                                               \
    for (int64_t ib = 0; ib < rows; ib += band) {                                                \
      const int64_t end = rows - ib < band ? rows : ib + band;                                   \
      int64_t jb = 0;                                                                            \
      for (; jb + 2 * BLOCK <= cols; jb += 2 * BLOCK) {                                          \
        const char *s = src + (size_t)jb * (size);                                               \
        char *d = dst + (size_t)jb * dp;                                                         \
        for (int64_t i = ib; i < end; i += BLOCK) {                                              \
          __m256i a[BLOCK], b[BLOCK];                                                            \
          block_##size(s + (size_t)i * sp, sp, a);                                               \
          block_##size(s + (size_t)i * sp + STRIP_PIECE_BYTES, sp, b);                           \
          for (int r = 0; r < BLOCK; r++) {                                                      \
            store_piece(d + (size_t)r * dp + (size_t)i * (size), a[r], 0);                       \
            store_piece(d + (size_t)(r + BLOCK) * dp + (size_t)i * (size), b[r], 0);             \
          }                                                                                      \
        }                                                                                        \
      }                                                                                          \
      if (jb < cols) /* one block's width left */                                                \
        strips_avx2_##size(src + (size_t)ib * sp + (size_t)jb * (size), sp,                      \
                           dst + (size_t)jb * dp + (size_t)ib * (size), dp, end - ib, cols - jb, \
                           0);                                                                   \
    }                                                                                            \
  }
AVX2_WIDE_STRIPS(4)
AVX2_WIDE_STRIPS(8)
AVX2_WIDE_STRIPS(16)

/* Whether `rows` destination rows this far apart spread over an L1 of 64
 * sets (Zen 4's and most x86 cores') with at most 8 lines, its ways, in any
 * one.  Pitches close to a multiple of 4 KiB put them all in one or two. */
static int rows_spread_in_l1(size_t pitch, int64_t rows) {
  int lines_in_set[64] = {0};
  for (int64_t r = 0; r < rows; r++)
    if (++lines_in_set[((size_t)r * pitch >> 6) & 63] > 8) return 0;
  return 1;
}

typedef void (*strips_fn)(const char *, size_t, char *, size_t, int64_t, int64_t, int);
typedef void (*wide_strips_fn)(const char *, size_t, char *, size_t, int64_t, int64_t);
#endif /* XPOSE_X86 */

/* Buffered tiles: a cache line of source columns by a few dozen rows (on
 * Zen 4, 32 rows of 4-byte elements ran steadier than 64; 8 and 16 bytes
 * preferred 16). */
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

/* Interior through the AVX2 strips where the element size has them; edges,
 * other sizes and the portable kernel through buffered tiles. */
static void transpose_any(xpose_host_kernel kernel, const char *s, size_t src_pitch, char *d,
                          size_t dst_pitch, int64_t rows, int64_t cols, size_t elem_size,
                          int stream) {
  const tile_geometry g = geometry_for(elem_size);
#if XPOSE_X86
  strips_fn strips = NULL;
  wide_strips_fn wide = NULL;
  if (resolve(kernel) == XPOSE_HOST_KERNEL_AVX2) {
    switch (elem_size) {
      case 1: strips = strips_avx2_1; break;
      case 2: strips = strips_avx2_2; break;
      case 4: strips = strips_avx2_4, wide = wide_strips_avx2_4; break;
      case 8: strips = strips_avx2_8, wide = wide_strips_avx2_8; break;
      case 16: strips = strips_avx2_16, wide = wide_strips_avx2_16; break;
      default: break;
    }
  }
  if (strips) {
    const int64_t block = STRIP_PIECE_BYTES / (int64_t)elem_size;
    const int64_t full_rows = rows / block * block, full_cols = cols / block * block;
    /* Streamed pieces must be 32-byte aligned; otherwise plain stores, which
     * measured faster than staging the output to align it. */
    const int aligned = (((uintptr_t)d | dst_pitch) & 31) == 0;
    if (!(stream && aligned) && wide && rows_spread_in_l1(dst_pitch, 2 * block))
      wide(s, src_pitch, d, dst_pitch, full_rows, full_cols);
    else
      strips(s, src_pitch, d, dst_pitch, full_rows, full_cols, stream && aligned);
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
  transpose_any(kernel, src, src_pitch, dst, dst_pitch, rows, cols, elem_size, stream);
#if XPOSE_X86
  if (stream) _mm_sfence(); /* order the streamed stores before anyone reads dst */
#endif
}

void xpose_host_transpose(const void *src, int64_t ld_src, void *dst, int64_t ld_dst, int64_t rows,
                          int64_t cols, size_t elem_size) {
  xpose_host_transpose_using(XPOSE_HOST_KERNEL_AUTO, src, ld_src, dst, ld_dst, rows, cols,
                             elem_size);
}
