#include "checksum.h"

#include <string.h>

/* A 64-bit finalizer (xor-shift, multiply, xor-shift): every input bit
 * reaches every output bit, at a few cycles per element. */
static inline uint64_t mix(uint64_t h) {
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

static inline uint64_t element_hash(const unsigned char *p, size_t size, uint64_t key) {
  uint64_t h = (key + 1) * 0x9e3779b97f4a7c15ull; /* key 0 is not special */
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, 8);
    h = mix(h ^ word);
  }
  if (i < size) {
    uint64_t word = 0;
    memcpy(&word, p + i, size - i);
    h = mix(h ^ word ^ ((uint64_t)(size - i) << 59));
  }
  return h;
}

/* Elements of up to 8 bytes, the common case, in one multiply: the key is
 * spread by an odd multiplier (stepped by addition along a row), xored
 * with the element and mixed by a multiply and a shift.  For a fixed key
 * this is a bijection of the element, so any single changed element
 * changes the sum. */
#define KEY_SPREAD 0x9e3779b97f4a7c15ull
static inline uint64_t word_hash(uint64_t word, uint64_t spread_key) {
  const uint64_t h = (word ^ spread_key) * 0xd6e8feb86659fd93ull;
  return h ^ (h >> 32);
}

#define SUM_WORDS(TYPE)                                                                \
  for (int64_t i = 0; i < nrows; i++) {                                                \
    const unsigned char *row = bytes + (size_t)i * (size_t)ncols * sizeof(TYPE);       \
    uint64_t spread = (first_key + (uint64_t)i * row_step + 1) * KEY_SPREAD;           \
    const uint64_t step = col_step * KEY_SPREAD;                                       \
    for (int64_t j = 0; j < ncols; j++, spread += step) {                              \
      TYPE word;                                                                       \
      memcpy(&word, row + (size_t)j * sizeof(TYPE), sizeof(TYPE));                     \
      sum += word_hash((uint64_t)word, spread);                                        \
    }                                                                                  \
  }

/* Other sizes: the element's 8-byte words one after the other. */
#define SUM_ROWS(SIZE)                                                     \
  for (int64_t i = 0; i < nrows; i++) {                                    \
    const unsigned char *row = bytes + (size_t)i * (size_t)ncols * (SIZE); \
    uint64_t key = first_key + (uint64_t)i * row_step;                     \
    for (int64_t j = 0; j < ncols; j++, key += col_step)                   \
      sum += element_hash(row + (size_t)j * (SIZE), (SIZE), key);          \
  }

uint64_t xio_checksum_block(const void *block, int64_t nrows, int64_t ncols, size_t elem_size,
                            uint64_t first_key, uint64_t row_step, uint64_t col_step) {
  const unsigned char *bytes = block;
  uint64_t sum = 0;
  switch (elem_size) {
    case 1: SUM_WORDS(uint8_t); break;
    case 2: SUM_WORDS(uint16_t); break;
    case 4: SUM_WORDS(uint32_t); break;
    case 8: SUM_WORDS(uint64_t); break;
    case 16: SUM_ROWS(16); break;
    default: SUM_ROWS(elem_size); break;
  }
  return sum;
}
