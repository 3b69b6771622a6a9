/* Shared by the C tests: failure counting and a position-dependent pattern. */
#ifndef XPOSE_TEST_UTIL_H
#define XPOSE_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define EXPECT(cond, ...)                                                 \
  do {                                                                    \
    if (!(cond)) {                                                        \
      if (++test_failures <= 20) {                                        \
        fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__);                                     \
        fputc('\n', stderr);                                              \
      }                                                                   \
    }                                                                     \
  } while (0)

/* Byte k of element (i, j): depends on all three, never 0 and never the
 * 0xA5 used to poison outputs, so a missed or misplaced element shows. */
static inline unsigned char pattern_byte(int64_t i, int64_t j, size_t k) {
  uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Full ^
               (uint64_t)k * 0x165667B19E3779F9ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return (unsigned char)(1 + x % 0xA4);
}

enum { POISON = 0xA5 };

#endif
