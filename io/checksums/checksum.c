#include "checksum.h"

#include <string.h>

#include "element_hash.h"

/* Element j of a row of 1-, 2-, 4- or 8-byte words, zero-extended. */
static inline uint64_t load_word(const unsigned char *row, int64_t j, size_t size) {
  switch (size) {
    case 1: return row[j];
    case 2: {
      uint16_t w;
      memcpy(&w, row + (size_t)j * 2, 2);
      return w;
    }
    case 4: {
      uint32_t w;
      memcpy(&w, row + (size_t)j * 4, 4);
      return w;
    }
    default: {
      uint64_t w;
      memcpy(&w, row + (size_t)j * 8, 8);
      return w;
    }
  }
}

/* Columns [from, ncols) of a row whose element j's key spreads to
 * spread + j * step. */
static inline uint64_t row_tail(const unsigned char *row, int64_t from, int64_t ncols, size_t size,
                                uint64_t spread, uint64_t step) {
  uint64_t sum = 0;
  spread += (uint64_t)from * step;
  for (int64_t j = from; j < ncols; j++, spread += step)
    sum += xio_word_hash(load_word(row, j, size), spread);
  return sum;
}

/* A row hashed by one of the instruction sets below. */
typedef uint64_t (*row_fn)(const unsigned char *row, int64_t ncols, uint64_t spread, uint64_t step);

#define SCALAR_ROW(SIZE)                                                                      \
  static uint64_t row_scalar_##SIZE(const unsigned char *row, int64_t ncols, uint64_t spread, \
                                    uint64_t step) {                                          \
    return row_tail(row, 0, ncols, SIZE, spread, step);                                       \
  }
SCALAR_ROW(1)
SCALAR_ROW(2)
SCALAR_ROW(4)
SCALAR_ROW(8)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define XIO_X86 1
#include <immintrin.h>

/* AVX-512: 8 elements at a time, zero-extended to 64-bit lanes; the lanes'
 * sums add up to the scalar loop's (addition mod 2^64 in any order). */
#define AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
#define AVX512_ROW(SIZE, LOAD)                                                                   \
  AVX512 static uint64_t row_avx512_##SIZE(const unsigned char *row, int64_t ncols,              \
                                           uint64_t spread, uint64_t step) {                     \
    const __m512i mix = _mm512_set1_epi64((long long)XIO_WORD_MIX);                              \
    const __m512i step8 = _mm512_set1_epi64((long long)(step * 8));                              \
    __m512i keys = _mm512_add_epi64(_mm512_set1_epi64((long long)spread),                        \
                                    _mm512_mullo_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), \
                                                       _mm512_set1_epi64((long long)step)));     \
    __m512i acc = _mm512_setzero_si512();                                                        \
    int64_t j = 0;                                                                               \
    for (; j + 8 <= ncols; j += 8) {                                                             \
      const unsigned char *p = row + (size_t)j * SIZE;                                           \
      const __m512i h = _mm512_mullo_epi64(_mm512_xor_si512(LOAD, keys), mix);                   \
      acc = _mm512_add_epi64(acc, _mm512_xor_si512(h, _mm512_srli_epi64(h, 32)));                \
      keys = _mm512_add_epi64(keys, step8);                                                      \
    }                                                                                            \
    return (uint64_t)_mm512_reduce_add_epi64(acc) + row_tail(row, j, ncols, SIZE, spread, step); \
  }
AVX512_ROW(1, _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)p)))
AVX512_ROW(2, _mm512_cvtepu16_epi64(_mm_loadu_si128((const __m128i *)(const void *)p)))
AVX512_ROW(4, _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)p)))
AVX512_ROW(8, _mm512_loadu_si512((const void *)p))

/* AVX2: 4 elements at a time; it has no 64-bit multiply, so the mix's is
 * built from three 32 x 32 -> 64-bit ones (the high halves' product falls
 * off the top). */
#define AVX2 __attribute__((target("avx2")))
AVX2 static inline __m256i mul_mix(__m256i a, __m256i mix_lo, __m256i mix_hi) {
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), mix_lo),
                                         _mm256_mul_epu32(a, mix_hi));
  return _mm256_add_epi64(_mm256_mul_epu32(a, mix_lo), _mm256_slli_epi64(cross, 32));
}

AVX2 static inline __m128i load_4_bytes(const unsigned char *p) {
  int32_t w;
  memcpy(&w, p, 4);
  return _mm_cvtsi32_si128(w);
}

#define AVX2_ROW(SIZE, LOAD)                                                                     \
  AVX2 static uint64_t row_avx2_##SIZE(const unsigned char *row, int64_t ncols, uint64_t spread, \
                                       uint64_t step) {                                          \
    const __m256i mix_lo = _mm256_set1_epi64x((long long)XIO_WORD_MIX),                          \
                  mix_hi = _mm256_set1_epi64x((long long)(XIO_WORD_MIX >> 32));                  \
    const __m256i step4 = _mm256_set1_epi64x((long long)(step * 4));                             \
    __m256i keys =                                                                               \
        _mm256_set_epi64x((long long)(spread + 3 * step), (long long)(spread + 2 * step),        \
                          (long long)(spread + step), (long long)spread);                        \
    __m256i acc = _mm256_setzero_si256();                                                        \
    int64_t j = 0;                                                                               \
    for (; j + 4 <= ncols; j += 4) {                                                             \
      const unsigned char *p = row + (size_t)j * SIZE;                                           \
      const __m256i h = mul_mix(_mm256_xor_si256(LOAD, keys), mix_lo, mix_hi);                   \
      acc = _mm256_add_epi64(acc, _mm256_xor_si256(h, _mm256_srli_epi64(h, 32)));                \
      keys = _mm256_add_epi64(keys, step4);                                                      \
    }                                                                                            \
    uint64_t lanes[4];                                                                           \
    _mm256_storeu_si256((__m256i *)(void *)lanes, acc);                                          \
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] +                                           \
           row_tail(row, j, ncols, SIZE, spread, step);                                          \
  }
AVX2_ROW(1, _mm256_cvtepu8_epi64(load_4_bytes(p)))
AVX2_ROW(2, _mm256_cvtepu16_epi64(_mm_loadl_epi64((const __m128i *)(const void *)p)))
AVX2_ROW(4, _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)p)))
AVX2_ROW(8, _mm256_loadu_si256((const __m256i *)(const void *)p))
#else
#define XIO_X86 0
#endif

int xio_checksum_isa_available(xio_checksum_isa isa) {
  switch (isa) {
    case XIO_CHECKSUM_SCALAR: return 1;
#if XIO_X86
    case XIO_CHECKSUM_AVX2: __builtin_cpu_init(); return __builtin_cpu_supports("avx2") != 0;
    case XIO_CHECKSUM_AVX512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    default: return 0;
#endif
  }
  return 0;
}

/* The row function for words of `size` bytes (1, 2, 4 or 8). */
static row_fn row_for(xio_checksum_isa isa, size_t size) {
  const int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  static const row_fn scalar[4] = {row_scalar_1, row_scalar_2, row_scalar_4, row_scalar_8};
#if XIO_X86
  static const row_fn avx2[4] = {row_avx2_1, row_avx2_2, row_avx2_4, row_avx2_8};
  static const row_fn avx512[4] = {row_avx512_1, row_avx512_2, row_avx512_4, row_avx512_8};
  if (isa == XIO_CHECKSUM_AVX512) return avx512[k];
  if (isa == XIO_CHECKSUM_AVX2) return avx2[k];
#endif
  (void)isa;
  return scalar[k];
}

/* Other sizes: the element's 8-byte words one after the other. */
static uint64_t sum_elements(const unsigned char *bytes, int64_t nrows, int64_t ncols, size_t size,
                             uint64_t first_key, uint64_t row_step, uint64_t col_step) {
  uint64_t sum = 0;
  for (int64_t i = 0; i < nrows; i++) {
    const unsigned char *row = bytes + (size_t)i * (size_t)ncols * size;
    uint64_t key = first_key + (uint64_t)i * row_step;
    for (int64_t j = 0; j < ncols; j++, key += col_step)
      sum += xio_element_hash(row + (size_t)j * size, size, key);
  }
  return sum;
}

uint64_t xio_checksum_block_isa(xio_checksum_isa isa, const void *block, int64_t nrows,
                                int64_t ncols, size_t elem_size, uint64_t first_key,
                                uint64_t row_step, uint64_t col_step) {
  const unsigned char *bytes = block;
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
    return sum_elements(bytes, nrows, ncols, elem_size, first_key, row_step, col_step);
  const row_fn row = row_for(isa, elem_size);
  const uint64_t step = col_step * XIO_KEY_SPREAD;
  uint64_t sum = 0;
  for (int64_t i = 0; i < nrows; i++)
    sum += row(bytes + (size_t)i * (size_t)ncols * elem_size, ncols,
               (first_key + (uint64_t)i * row_step + 1) * XIO_KEY_SPREAD, step);
  return sum;
}

uint64_t xio_checksum_block(const void *block, int64_t nrows, int64_t ncols, size_t elem_size,
                            uint64_t first_key, uint64_t row_step, uint64_t col_step) {
  const xio_checksum_isa best =
      xio_checksum_isa_available(XIO_CHECKSUM_AVX512) ? XIO_CHECKSUM_AVX512
      : xio_checksum_isa_available(XIO_CHECKSUM_AVX2) ? XIO_CHECKSUM_AVX2
                                                      : XIO_CHECKSUM_SCALAR;
  return xio_checksum_block_isa(best, block, nrows, ncols, elem_size, first_key, row_step,
                                col_step);
}
