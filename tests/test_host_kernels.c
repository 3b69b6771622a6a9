/* Host transpose kernels: every kernel variant, element sizes 1..1000 bytes,
 * every shape up to 70 x 70 (full blocks and every edge), padded leading
 * dimensions (padding must stay untouched), and outputs large enough for
 * streaming stores, aligned (several bands, partial blocks) and not (odd
 * pitches, misaligned addresses), and plain stores on pitches whose rows
 * do and do not spread over the L1's sets. */
#include <string.h>

#include "backend/host_kernels.h"
#include "test_util.h"

static void check_case(xpose_host_kernel kernel, size_t es, int64_t rows, int64_t cols,
                       int64_t ld_src, int64_t ld_dst, size_t misalign) {
  const size_t src_bytes = (size_t)rows * (size_t)ld_src * es;
  const size_t dst_bytes = ((size_t)cols * (size_t)ld_dst * es + misalign + 63) / 64 * 64;
  /* 64-byte aligned, so misalign = 0 exercises the aligned streaming path */
  unsigned char *src = malloc(src_bytes + 1), *dst_alloc = aligned_alloc(64, dst_bytes);
  if (!src || !dst_alloc) abort();
  unsigned char *dst = dst_alloc + misalign;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < ld_src; j++)
      for (size_t k = 0; k < es; k++)
        src[((size_t)i * ld_src + j) * es + k] = pattern_byte(i, j, k);
  memset(dst_alloc, POISON, dst_bytes);
  xpose_host_transpose_using(kernel, src, ld_src, dst, ld_dst, rows, cols, es);
  int64_t wrong = 0, touched = 0;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < ld_dst; i++)
      for (size_t k = 0; k < es; k++) {
        const unsigned char got = dst[((size_t)j * ld_dst + i) * es + k];
        if (i < rows)
          wrong += got != pattern_byte(i, j, k);
        else
          touched += got != POISON;
      }
  EXPECT(wrong == 0 && touched == 0,
         "%s es=%zu %lldx%lld ld %lld/%lld +%zu: %lld wrong bytes, %lld padding bytes written",
         xpose_host_kernel_name(kernel), es, (long long)rows, (long long)cols, (long long)ld_src,
         (long long)ld_dst, misalign, (long long)wrong, (long long)touched);
  free(src);
  free(dst_alloc);
}

int main(void) {
  xpose_host_kernel kernels[2] = {XPOSE_HOST_KERNEL_PORTABLE, XPOSE_HOST_KERNEL_AVX2};
  const size_t small_sizes[] = {1, 2, 4, 8, 16};
  const size_t odd_sizes[] = {3, 5, 12, 24, 100, 300, 1000};
  int variants = 0;
  for (int v = 0; v < 2; v++) {
    if (!xpose_host_kernel_available(kernels[v])) {
      printf("kernel %d not available on this CPU: not tested\n", (int)kernels[v]);
      continue;
    }
    variants++;
    for (size_t s = 0; s < sizeof small_sizes / sizeof *small_sizes; s++)
      for (int64_t r = 1; r <= 70; r++)
        for (int64_t c = 1; c <= 70; c++) check_case(kernels[v], small_sizes[s], r, c, c, r, 0);
    for (size_t s = 0; s < sizeof odd_sizes / sizeof *odd_sizes; s++)
      for (int64_t r = 1; r <= 20; r++)
        for (int64_t c = 1; c <= 20; c++) check_case(kernels[v], odd_sizes[s], r, c, c, r, 0);
    for (size_t s = 0; s < sizeof small_sizes / sizeof *small_sizes; s++) {
      check_case(kernels[v], small_sizes[s], 129, 67, 70, 131, 0); /* padded */
      check_case(kernels[v], small_sizes[s], 64, 64, 64, 64, 1);   /* misaligned output */
      /* >= 8 MiB of output: streaming stores, odd pitch and misaligned start. */
      check_case(kernels[v], small_sizes[s], 1031,
                 (int64_t)(9u << 20) / 1031 / (int64_t)small_sizes[s] + 1,
                 (int64_t)(9u << 20) / 1031 / (int64_t)small_sizes[s] + 1, 1033, 3);
    }
    /* >= 8 MiB of aligned output: streamed strips over several bands, with
     * partial blocks at both edges; the last band has an odd number of
     * blocks for 1 and 2 bytes, so a lone block follows the pairs. */
    for (size_t s = 0; s < sizeof small_sizes / sizeof *small_sizes; s++)
      check_case(kernels[v], small_sizes[s], 2176 - 3,
                 (int64_t)(9u << 20) / 2176 / (int64_t)small_sizes[s] + 5,
                 (int64_t)(9u << 20) / 2176 / (int64_t)small_sizes[s] + 5, 2176, 0);
    check_case(kernels[v], 12, 1000, 800, 801, 1001, 4);
    /* Floats on a destination pitch of 4100 bytes: the rows fall into one L1
     * set, so plain stores keep to the narrow strips. */
    check_case(kernels[v], 4, 1000, 100, 100, 1025, 0);
    /* Partial blocks on both edges, padded pitches. */
    check_case(kernels[v], 4, 2100, 1100, 1103, 2105, 0);
    check_case(kernels[v], 3, 1500, 2100, 2100, 1501, 1);
  }
  EXPECT(variants >= 1, "no kernel variant ran");
  if (test_failures) return 1;
  printf("host kernels: %d variant(s) passed (auto = %s)\n", variants,
         xpose_host_kernel_name(XPOSE_HOST_KERNEL_AUTO));
  return 0;
}
