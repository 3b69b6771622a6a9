/* The host's checksums (io/checksums/checksum.c): every instruction set gives the
 * scalar loop's sums, on every element size, shape, key stepping and
 * alignment, and the sums are those earlier versions recorded (resume
 * records and `xpose verify` compare sums taken by other builds). */
#include <string.h>

#include "checksum.h"
#include "test_util.h"

static const char *const isa_names[] = {"scalar", "AVX2", "AVX-512"};

/* rows x cols elements of es bytes at offset `shift` of a buffer. */
static unsigned char *filled(size_t es, int64_t rows, int64_t cols, size_t shift,
                             unsigned char **base) {
  *base = malloc((size_t)(rows * cols) * es + shift + 1);
  unsigned char *b = *base + shift;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      for (size_t k = 0; k < es; k++) b[((size_t)(i * cols + j)) * es + k] = pattern_byte(i, j, k);
  return b;
}

static void check(size_t es, int64_t rows, int64_t cols, size_t shift, uint64_t first,
                  uint64_t row_step, uint64_t col_step) {
  unsigned char *base;
  const unsigned char *b = filled(es, rows, cols, shift, &base);
  const uint64_t scalar =
      xio_checksum_block_isa(XIO_CHECKSUM_SCALAR, b, rows, cols, es, first, row_step, col_step);
  for (int isa = XIO_CHECKSUM_AVX2; isa <= XIO_CHECKSUM_AVX512; isa++) {
    if (!xio_checksum_isa_available((xio_checksum_isa)isa)) continue;
    const uint64_t vec =
        xio_checksum_block_isa((xio_checksum_isa)isa, b, rows, cols, es, first, row_step, col_step);
    EXPECT(vec == scalar,
           "%s, es=%zu %lldx%lld +%zu keys %llu+%llu*i+%llu*j: %016llx, scalar %016llx",
           isa_names[isa], es, (long long)rows, (long long)cols, shift, (unsigned long long)first,
           (unsigned long long)row_step, (unsigned long long)col_step, (unsigned long long)vec,
           (unsigned long long)scalar);
  }
  EXPECT(xio_checksum_block(b, rows, cols, es, first, row_step, col_step) == scalar,
         "the default differs from the scalar loop: es=%zu %lldx%lld", es, (long long)rows,
         (long long)cols);
  free(base);
}

int main(void) {
  /* Sums of a 37 x 1001 block taken by the scalar code of 2026-11-24. */
  static const struct {
    size_t es;
    uint64_t input, wrapping;
  } known[] = {
      {1, 0xe2514a013f4dbcd8ull, 0x8e87b248580b1af2ull},
      {2, 0xfc93bcd7a07d40f7ull, 0xc2db71b52292f4f6ull},
      {3, 0xa2f61d4c24ee94a7ull, 0x4bf2fac4f9314b30ull},
      {4, 0x5fcc6354afdcb8d4ull, 0xaef01eff56e0caa7ull},
      {8, 0x7ee263093032c8c7ull, 0xc332088799d09d62ull},
      {12, 0xe21051e10fa1ee20ull, 0xa0d54837a2c0bfb5ull},
      {16, 0x5382d9a1feb28c65ull, 0xac03d4f342188b34ull},
  };
  for (size_t k = 0; k < sizeof known / sizeof *known; k++) {
    unsigned char *base;
    const unsigned char *b = filled(known[k].es, 37, 1001, 0, &base);
    const uint64_t input = xio_checksum_block(b, 37, 1001, known[k].es, 12345, 1010, 1),
                   wrapping = xio_checksum_block(b, 37, 1001, known[k].es, ~0ull - 5, ~0ull / 3,
                                                 ~0ull / 7);
    EXPECT(input == known[k].input && wrapping == known[k].wrapping,
           "es=%zu: sums %016llx %016llx, recorded %016llx %016llx", known[k].es,
           (unsigned long long)input, (unsigned long long)wrapping,
           (unsigned long long)known[k].input, (unsigned long long)known[k].wrapping);
    free(base);
  }
  const size_t sizes[] = {1, 2, 4, 8, 3, 16};
  const int64_t shapes[][2] = {{1, 1}, {3, 7}, {2, 8}, {5, 9}, {257, 33}, {64, 1023}, {3, 70001}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (size_t h = 0; h < sizeof shapes / sizeof *shapes; h++)
      for (size_t shift = 0; shift < 3; shift++) {
        const int64_t rows = shapes[h][0], cols = shapes[h][1];
        check(sizes[s], rows, cols, shift, 12345, (uint64_t)cols + 9, 1);    /* an input block */
        check(sizes[s], rows, cols, shift, 777, 1, (uint64_t)rows * 5 + 3);  /* an output block */
        check(sizes[s], rows, cols, shift, ~0ull - 5, ~0ull / 3, ~0ull / 7); /* keys that wrap */
      }
  check(4, 0, 5, 0, 1, 1, 1);
  for (int isa = XIO_CHECKSUM_AVX2; isa <= XIO_CHECKSUM_AVX512; isa++)
    if (!xio_checksum_isa_available((xio_checksum_isa)isa))
      printf("%s: not on this CPU, not tested\n", isa_names[isa]);
  printf("%s\n", test_failures ? "FAILED" : "every instruction set gives the recorded sums");
  return test_failures != 0;
}
